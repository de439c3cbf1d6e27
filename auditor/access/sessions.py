"""Dashboard sessions: is a signed-in actor still valid, and recording a sign-out.

The dashboard keeps the :class:`~auditor.access.accounts.Actor` that sign-in returned in its
server-side session. Every access-checked service re-reads the account anyway; the
dashboard also calls :func:`session_valid` at the start of every page run, so a session
whose account was disabled, deleted (an erasure deletes the accounts bound to the subject)
or changed (another role or subject) ends at once instead of page by page.

:func:`record_sign_out` appends ``auth.signed_out``, but only while the account exists:
after an erasure the user's name must not come back into the audit log.

**Sessions that survive a reload.** Streamlit forgets its server-side session when the
browser reloads. :func:`issue_token` makes a signed, expiring session token that the
dashboard keeps in a cookie (``SameSite=Strict``, ``Max-Age``; see docs/dashboard.md for
why it cannot be ``HttpOnly``), and :func:`actor_from_token` turns it back into an actor on
the next connection. The token holds no personal data beyond the user name:
``v1.<payload>.<mac>``, the payload being base64url JSON (user name, role, sign-in
method, a random session id, issued and expiry times in milliseconds), the MAC an
HMAC-SHA256 with the session key (:func:`session_key`). A token is refused when its MAC,
form or expiry is wrong, when the account no longer matches (disabled, deleted, other
role), when the password changed after it was issued, or when its session was signed out
(``auth.signed_out`` with the session id's digest: sign-out revokes the token for good,
across restarts and replicas).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import select

from auditor.access import accounts
from auditor.access.accounts import Actor
from auditor.config import Settings
from auditor.errors import ConfigError, InputError, NotFoundError
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Principal
from auditor.store.types import utcnow

__all__ = [
    "SESSION_COOKIE",
    "SESSION_TTL",
    "SignOutReason",
    "actor_from_token",
    "issue_token",
    "record_sign_out",
    "session_id_of",
    "session_key",
    "session_valid",
]

#: Name of the dashboard's session cookie.
SESSION_COOKIE = "memaudit_session"
#: How long a session token is valid after sign-in (a working day).
SESSION_TTL = timedelta(hours=10)
_KEY_ENV = "MEMAUDIT_SESSION_KEY"
_KEY_FILE_ENV = "MEMAUDIT_SESSION_KEY_FILE"
_MAX_TOKEN = 1024

#: Why a dashboard session ended: the person signed out, or the account changed under it.
SignOutReason = Literal["signed_out", "session_ended"]


def session_valid(db: Database, actor: Actor) -> bool:
    """Whether ``actor`` still matches its stored account (exists, enabled, same role).

    Args:
        db: the store.
        actor: the actor a dashboard session holds.

    Returns:
        False when the account is gone, disabled, or has another role or subject.
    """
    if not isinstance(actor, Actor):
        return False
    try:
        account = accounts.get_user(db, actor.username)
    except (NotFoundError, InputError):
        return False
    return not account.disabled and account.role == actor.role and account.subject == actor.subject


def record_sign_out(
    db: Database,
    actor: Actor,
    reason: SignOutReason = "signed_out",
    session_id: str | None = None,
) -> bool:
    """Record the end of a dashboard session as ``auth.signed_out``.

    Args:
        db: the store.
        actor: who signed out.
        reason: ``signed_out`` (they chose to) or ``session_ended`` (the account changed).
        session_id: the session token's id: recorded as a digest, which revokes the token.

    Returns:
        Whether an event was written (not when the account no longer exists).
    """
    if not isinstance(actor, Actor):
        return False
    with db.write() as session:
        exists = session.scalar(select(Principal.id).where(Principal.username == actor.username))
        if exists is None:
            return False
        audit_log.append(
            session,
            actor=actor.username,
            action="auth.signed_out",
            target_type="principal",
            target_ids=[actor.username],
            details={
                "method": actor.auth_method,
                "reason": reason,
                "role": actor.role,
                **({"session": _sid_digest(session_id)} if session_id else {}),
            },
            key=audit_key(db.settings),
        )
    return True


# -- signed session tokens (the dashboard's cookie) ------------------------------------------


def session_key(settings: Settings) -> bytes | None:
    """The HMAC key of session tokens, or None when none is configured.

    In order: ``MEMAUDIT_SESSION_KEY`` (env), the file named by
    ``MEMAUDIT_SESSION_KEY_FILE``, or a key derived from the audit key (the one ``memaudit
    init`` creates 0600 beside a SQLite store, or the configured secret): a different key
    for a different job. None: sessions are not kept across reloads.

    Raises:
        ConfigError: a key file that cannot be read or is empty.
    """
    value = os.environ.get(_KEY_ENV)
    if value:
        return value.encode("utf-8")
    named = os.environ.get(_KEY_FILE_ENV)
    if named:
        try:
            data = Path(named).read_bytes().strip()
        except OSError as exc:
            raise ConfigError(f"{_KEY_FILE_ENV}={named}: cannot read ({exc.strerror})") from None
        if not data:
            raise ConfigError(f"{_KEY_FILE_ENV}={named}: the file is empty")
        return data
    audit = settings.audit_key()
    if audit:
        return hmac.new(audit, b"memaudit dashboard session key v1", hashlib.sha256).digest()
    return None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, payload: str) -> str:
    return _b64(hmac.new(key, f"v1.{payload}".encode("ascii"), hashlib.sha256).digest())


def _sid_digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]


def issue_token(
    db: Database, actor: Actor, now: datetime | None = None
) -> tuple[str, datetime] | None:
    """A signed session token for ``actor`` and when it expires.

    Returns:
        ``(token, expires_at)`` (the token is ASCII and cookie-safe), or None when no
        session key is configured (:func:`session_key`).
    """
    key = session_key(db.settings)
    if key is None:
        return None
    issued = now or utcnow()
    expires = issued + SESSION_TTL
    body = {
        "u": actor.username,
        "r": actor.role,
        "m": actor.auth_method,
        "sid": secrets.token_urlsafe(18),
        "iat": int(issued.timestamp() * 1000),
        "exp": int(expires.timestamp() * 1000),
    }
    payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode("utf-8"))
    return f"v1.{payload}.{_mac(key, payload)}", expires


def _claims(db: Database, token: object, now: datetime) -> dict[str, Any] | None:
    if not isinstance(token, str) or len(token) > _MAX_TOKEN or token.count(".") != 2:
        return None
    version, payload, mac = token.split(".")
    if version != "v1" or not payload.isascii() or not mac.isascii():
        return None
    key = session_key(db.settings)
    if key is None or not hmac.compare_digest(mac, _mac(key, payload)):
        return None
    try:
        claims = json.loads(_unb64(payload))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(claims, dict):
        return None
    if not all(isinstance(claims.get(k), int) for k in ("iat", "exp")):
        return None
    if not all(isinstance(claims.get(k), str) for k in ("u", "r", "m", "sid")):
        return None
    if not claims["iat"] - 60_000 <= int(now.timestamp() * 1000) < claims["exp"]:
        return None
    return claims


def session_id_of(db: Database, token: object) -> str | None:
    """The session id of a valid token (for the sign-out that revokes it), else None."""
    claims = _claims(db, token, utcnow())
    return None if claims is None else str(claims["sid"])


def actor_from_token(db: Database, token: object, now: datetime | None = None) -> Actor | None:
    """The actor a session token stands for, or None when it is not (or no longer) valid.

    Never raises for a bad token: forged, expired, revoked or stale tokens give None.
    """
    at = now or utcnow()
    claims = _claims(db, token, at)
    if claims is None:
        return None
    issued = datetime.fromtimestamp(claims["iat"] / 1000, tz=at.tzinfo)
    with db.session() as session:
        p = session.scalar(select(Principal).where(Principal.username == claims["u"]))
        if p is None or p.disabled or p.role != claims["r"]:
            return None
        changed = p.password_changed_at
        if changed is not None:
            if changed.tzinfo is None:
                changed = changed.replace(tzinfo=at.tzinfo)
            if changed > issued:
                return None
        digest = _sid_digest(claims["sid"])
        ended = session.scalars(
            select(AuditEvent.details).where(
                AuditEvent.action == "auth.signed_out",
                AuditEvent.actor == p.username,
                AuditEvent.ts >= issued - timedelta(seconds=1),
            )
        ).all()
        if any(isinstance(d, dict) and d.get("session") == digest for d in ended):
            return None
        try:
            return Actor(p.username, p.role, p.subject, claims["m"])  # type: ignore[arg-type]
        except ValueError:
            return None
