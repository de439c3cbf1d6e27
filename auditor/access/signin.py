"""Sign-in: a user name and a local password, the current-password check, an OIDC identity.

:func:`authenticate` spends the same argon2 work on an unknown user as on a known one (it
verifies against a dummy hash) and gives the same message for an unknown user, a wrong
password and a locked account (whatever the password: a lock is no oracle); it reveals
that an account is disabled only to a caller who gave its right password. It re-hashes a
password on sign-in when the argon2 parameters change. ``sign_in_max_failures`` failures in
a row lock the account for ``sign_in_lockout_seconds`` (``account.locked``, see
:mod:`auditor.access.lockout`); every attempt during the lock, right or wrong, is counted
and pushes the end of the lock out again. :func:`check_current_password` (changing one's
own password) counts failures and locks the same way.

Every sign-in attempt passes the per-name and global rate limits of
:mod:`auditor.access.signin_limits` first, and every argon2 verification holds one of its
hashing slots; both refuse with :class:`~auditor.access.signin_limits.SignInBusyError`.

:func:`actor_from_oidc` maps an OIDC identity (its claims, as the dashboard's OIDC client
hands them over) to a pre-registered account: first by the bound ``(iss, sub)``, then, the
first time, by a *verified* e-mail address, which binds the account to that identity. An
unknown identity is refused unless ``oidc_auto_provision`` is on, which creates a ``user``
account only, never an officer or admin.

The accounts themselves (the :class:`~auditor.access.accounts.Actor` these return, user
names, the password hasher, account management) are :mod:`auditor.access.accounts`; the
hasher is read there at every call (``accounts._HASHER``), so there is one.

Every sign-in (``auth.signed_in``, ``auth.sign_in_failed``) is an audit event, like every
account change (``account.oidc_linked``, ``account.provisioned``,
``account.password_change_failed``). Events carry user names (the account ids) and
digests, never passwords or e-mail addresses; a failed sign-in for a user name that has no
account records a digest of the name, not the name (it is often a mistyped password).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from auditor.access import accounts, lockout, signin_limits
from auditor.access.accounts import (
    Actor,
    AuthMethod,
    _audit,
    _check_role,
    _load,
    _normalise_email,
    _subject_details,
    _verify_unbounded,
    normalise_username,
    username_digest,
    verify_password,
)
from auditor.config import Settings
from auditor.errors import AccountDisabledError, AuthError, InputError
from auditor.store.db import Database
from auditor.store.models import Principal
from auditor.store.types import utcnow
from auditor.vocab import Role

__all__ = ["actor_from_oidc", "authenticate", "check_current_password"]

_GENERIC_FAILURE = "sign-in failed: unknown user name or wrong password"
_WRONG_CURRENT = "the current password is wrong"
_ANONYMOUS = "anonymous"


# -- sign-in ------------------------------------------------------------------------------


def _failed(
    session: Session,
    settings: Settings,
    *,
    method: AuthMethod,
    reason: str,
    targets: list[str],
    extra: dict[str, Any] | None = None,
) -> None:
    _audit(
        session,
        settings,
        actor=_ANONYMOUS,
        action="auth.sign_in_failed",
        targets=targets,
        details={"method": method, "reason": reason, **(extra or {})},
    )


def _signed_in(session: Session, settings: Settings, p: Principal, method: AuthMethod) -> Actor:
    p.last_sign_in_at = utcnow()
    _audit(
        session,
        settings,
        actor=p.username,
        action="auth.signed_in",
        targets=[p.username],
        details={"method": method, "role": p.role},
    )
    return Actor(p.username, cast(Role, p.role), p.subject, method)


def authenticate(db: Database, username: str, password: str) -> Actor:
    """Sign in with a user name and a local password.

    The attempt first passes the sign-in rate limits; the argon2 check then runs outside
    the write transaction, holding a hashing slot (it takes tens of milliseconds and
    64 MiB, and SQLite has one writer); the outcome is recorded with the account row
    locked. A locked account gets the generic failure whatever the password, and the
    attempt extends the lock; the audit event says whether the password matched, so an
    officer knows a password is known to whoever keeps trying.

    Args:
        db: the store.
        username: what the person typed as their user name.
        password: what they typed as their password.

    Returns:
        The signed-in actor.

    Raises:
        SignInBusyError: over a rate limit, or no hashing slot came free in time (the
            same message for every account; no failure is counted).
        AuthError: unknown user name, wrong password, an account without a password, or a
            locked account (one message for all four).
        AccountDisabledError: the password was right but the account is disabled.
    """
    settings = db.settings
    signin_limits.check_rate(settings, username if isinstance(username, str) else "")
    try:
        name: str | None = normalise_username(username)
    except InputError:
        name = None
    exists, stored_hash = _stored_hash(db, name)
    password_ok, new_hash = _verify_and_rehash(settings, stored_hash, password)
    with db.write() as session:
        p = (
            session.scalar(select(Principal).where(Principal.username == name).with_for_update())
            if exists
            else None
        )
        actor, error = _password_outcome(
            session,
            settings,
            p,
            username=username,
            password_ok=password_ok,
            stored_hash=stored_hash,
            new_hash=new_hash,
        )
    if error is not None:
        raise error
    assert actor is not None  # every branch sets one of the two
    return actor


def _stored_hash(db: Database, name: str | None) -> tuple[bool, str | None]:
    """Whether an account has this (normalised) user name, and its password hash."""
    with db.session() as session:
        found = (
            session.scalar(select(Principal).where(Principal.username == name))
            if name is not None
            else None
        )
        stored_hash = found.password_hash if found is not None else None
    return found is not None, stored_hash


def _verify_and_rehash(
    settings: Settings, stored_hash: str | None, password: str
) -> tuple[bool, str | None]:
    """Check the password (against a dummy hash when there is none), holding a hashing slot.

    Returns whether it matched and, when the hasher's parameters changed since the stored
    hash was made, a new hash of it (else None). The hasher is ``accounts._HASHER``, read
    here at every call.
    """
    new_hash: str | None = None
    with signin_limits.hashing_slot(settings):
        password_ok = _verify_unbounded(stored_hash, password)
        if (
            password_ok
            and stored_hash is not None
            and accounts._HASHER.check_needs_rehash(stored_hash)
        ):
            new_hash = accounts._HASHER.hash(password)
    return password_ok, new_hash


def _password_outcome(
    session: Session,
    settings: Settings,
    p: Principal | None,
    *,
    username: str,
    password_ok: bool,
    stored_hash: str | None,
    new_hash: str | None,
) -> tuple[Actor | None, AuthError | None]:
    """Record a password sign-in's outcome on the locked account row ``p`` (None: none).

    Returns the signed-in actor, or the error to raise once the transaction is committed.
    """
    if p is None or p.password_hash is None:
        reason = "unknown_user" if p is None else "no_password"
        extra = {"username_digest": username_digest(username, settings)} if p is None else {}
        _failed(
            session,
            settings,
            method="password",
            reason=reason,
            targets=[p.username] if p is not None else [],
            extra=extra,
        )
        return None, AuthError(_GENERIC_FAILURE)
    matched = password_ok and p.password_hash == stored_hash
    if lockout.is_locked(p) or not matched:
        _locked_or_bad_password(session, settings, p, matched)
        return None, AuthError(_GENERIC_FAILURE)
    if p.disabled:
        _failed(session, settings, method="password", reason="disabled", targets=[p.username])
        return None, AccountDisabledError(f"account {p.username} is disabled; ask an admin")
    p.failed_sign_ins = 0
    p.locked_until = None
    if new_hash is not None:
        p.password_hash = new_hash
    return _signed_in(session, settings, p, "password"), None


def _locked_or_bad_password(
    session: Session, settings: Settings, p: Principal, matched: bool
) -> None:
    """Count a failed attempt (a wrong password, or any attempt during a lock) and record it."""
    was_locked, lock_now = lockout.register_failure(
        session, settings, p, actor=_ANONYMOUS, via="sign_in"
    )
    extra_: dict[str, Any] = {"failures": p.failed_sign_ins, "locked": lock_now}
    if was_locked:
        extra_ = {"failures": p.failed_sign_ins, "password_matched": matched}
    _failed(
        session,
        settings,
        method="password",
        reason="locked" if was_locked else "bad_password",
        targets=[p.username],
        extra=extra_,
    )


def check_current_password(db: Database, username: str, password: str) -> None:
    """Check a signed-in person's current password before they change it.

    Counts like a sign-in: a wrong password is a failure (``account.password_change_failed``)
    and ``sign_in_max_failures`` of them lock the account (``account.locked``); while the
    account is locked every attempt fails with the same message and extends the lock. A
    right password outside a lock clears the failure count.

    Raises:
        SignInBusyError: over a rate limit, or no hashing slot came free in time.
        AuthError: the current password is wrong, or the account is locked (one message).
        NotFoundError: no such account.
    """
    settings = db.settings
    signin_limits.check_rate(settings, username)
    with db.session() as session:
        stored_hash = _load(session, username).password_hash
    password_ok = verify_password(stored_hash, password, settings)
    failed = False
    with db.write() as session:
        p = _load(session, username, lock=True)
        matched = password_ok and p.password_hash == stored_hash
        if lockout.is_locked(p) or not matched:
            was_locked, _lock_now = lockout.register_failure(
                session, settings, p, actor=p.username, via="password_change"
            )
            _audit(
                session,
                settings,
                actor=p.username,
                action="account.password_change_failed",
                targets=[p.username],
                details={
                    "reason": "locked" if was_locked else "wrong_current_password",
                    "failures": p.failed_sign_ins,
                },
            )
            failed = True
        else:
            p.failed_sign_ins = 0
    if failed:
        raise AuthError(_WRONG_CURRENT)


def _claim_text(claims: Mapping[str, Any], name: str) -> str | None:
    value = claims.get(name)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def _digest(value: str) -> str:
    return hashlib.sha256(b"memaudit-oidc:" + value.encode("utf-8")).hexdigest()


def actor_from_oidc(
    db: Database, claims: Mapping[str, Any], settings: Settings | None = None
) -> Actor:
    """Map an OIDC identity to a pre-registered account and sign it in.

    The dashboard's OIDC client has already validated the ID token; this takes its
    claims. The account is found by the bound ``(iss, sub)``; failing that, by a
    verified ``email`` (``email_verified`` true) of an account not yet bound to another
    identity, which is then bound (``account.oidc_linked``). With ``oidc_auto_provision``
    on, an unknown identity with a verified e-mail gets a new ``user`` account bound to
    subject ``user:<the oidc_subject_claim value>`` (``account.provisioned``).

    Args:
        db: the store.
        claims: the ID token's claims (``iss``, ``sub``, ``email``, ``email_verified``).
        settings: settings to use (default: the store's).

    Returns:
        The signed-in actor (``auth_method="oidc"``).

    Raises:
        AuthError: missing claims, an issuer that is not allowed, or no account for the
            identity.
        AccountDisabledError: the account is disabled.
    """
    settings = settings or db.settings
    iss = _claim_text(claims, "iss")
    sub = _claim_text(claims, "sub")
    email = _verified_email(claims)
    error: AuthError | None = None
    actor: Actor | None = None
    with db.write() as session:
        extra = {"sub_digest": _digest(sub)} if sub else {}
        if iss is None or sub is None:
            _failed(session, settings, method="oidc", reason="missing_claims", targets=[])
            error = AuthError("sign-in failed: the identity provider sent no issuer or subject")
        elif settings.oidc_issuer is not None and iss != settings.oidc_issuer:
            _failed(
                session,
                settings,
                method="oidc",
                reason="issuer_not_allowed",
                targets=[],
                extra=extra,
            )
            error = AuthError("sign-in failed: this identity provider is not accepted here")
        else:
            p, error = _oidc_account(session, settings, claims, iss, sub, email, extra)
            if p is not None and error is None:
                actor, error = _oidc_signed_in(session, settings, p, extra)
    if error is not None:
        raise error
    assert actor is not None  # every branch sets one of the two
    return actor


def _verified_email(claims: Mapping[str, Any]) -> str | None:
    """The normalised ``email`` claim when ``email_verified`` is true (else, or bad: None)."""
    email_claim = _claim_text(claims, "email")
    verified = claims.get("email_verified") in (True, "true", "True")
    try:
        email = _normalise_email(email_claim) if verified else None
    except InputError:
        email = None
    return email


def _oidc_account(
    session: Session,
    settings: Settings,
    claims: Mapping[str, Any],
    iss: str,
    sub: str,
    email: str | None,
    extra: dict[str, Any],
) -> tuple[Principal | None, AuthError | None]:
    """The account of an OIDC identity, row locked, or the error to raise.

    First the account bound to ``(iss, sub)``; failing that, the one with the verified
    e-mail address, bound now; failing that, a provisioned one (when the settings allow).
    """
    p = session.scalar(
        select(Principal)
        .where(Principal.oidc_issuer == iss, Principal.oidc_subject == sub)
        .with_for_update()
    )
    error: AuthError | None = None
    if p is None and email is not None:
        p, error = _link_by_email(session, settings, iss, sub, email, extra)
    if p is None and error is None:
        p, error = _provision(session, settings, claims, iss, sub, email, extra)
    return p, error


def _link_by_email(
    session: Session,
    settings: Settings,
    iss: str,
    sub: str,
    email: str,
    extra: dict[str, Any],
) -> tuple[Principal | None, AuthError | None]:
    """Bind the account with this verified e-mail address to the identity, if it is unbound.

    Returns the account now bound; or the error when it is bound to another identity; or
    neither when no account has the address.
    """
    candidate = session.scalar(select(Principal).where(Principal.email == email).with_for_update())
    if candidate is not None and candidate.oidc_subject is None:
        candidate.oidc_issuer, candidate.oidc_subject = iss, sub
        _audit(
            session,
            settings,
            actor=candidate.username,
            action="account.oidc_linked",
            targets=[candidate.username],
            details={"issuer": iss, **extra},
        )
        return candidate, None
    if candidate is not None:
        _failed(
            session,
            settings,
            method="oidc",
            reason="email_bound_to_another_identity",
            targets=[candidate.username],
            extra=extra,
        )
        return None, AuthError(
            "sign-in failed: the account with this e-mail address is bound to "
            "another identity; ask an admin"
        )
    return None, None


def _oidc_signed_in(
    session: Session, settings: Settings, p: Principal, extra: dict[str, Any]
) -> tuple[Actor | None, AuthError | None]:
    """Sign the account in, unless it is disabled (then the error to raise)."""
    if p.disabled:
        _failed(
            session,
            settings,
            method="oidc",
            reason="disabled",
            targets=[p.username],
            extra=extra,
        )
        return None, AccountDisabledError(f"account {p.username} is disabled; ask an admin")
    return _signed_in(session, settings, p, "oidc"), None


def _provision(
    session: Session,
    settings: Settings,
    claims: Mapping[str, Any],
    iss: str,
    sub: str,
    email: str | None,
    extra: dict[str, Any],
) -> tuple[Principal | None, AuthError | None]:
    """Create a ``user`` account for an unknown OIDC identity, when the settings allow."""
    refused = AuthError(
        "sign-in failed: there is no memaudit account for this identity; ask an admin to "
        "register it"
    )
    if not settings.oidc_auto_provision or email is None:
        reason = "not_registered" if not settings.oidc_auto_provision else "email_not_verified"
        _failed(session, settings, method="oidc", reason=reason, targets=[], extra=extra)
        return None, refused
    claim = _claim_text(claims, settings.oidc_subject_claim)
    subject = f"user:{claim}" if claim else None
    try:
        name = normalise_username(email)
        _check_role("user", subject)
    except InputError:
        _failed(
            session, settings, method="oidc", reason="cannot_provision", targets=[], extra=extra
        )
        return None, refused
    taken = session.scalar(
        select(Principal.id).where((Principal.username == name) | (Principal.email == email))
    )
    if taken is not None:
        _failed(session, settings, method="oidc", reason="username_taken", targets=[], extra=extra)
        return None, refused
    p = Principal(
        username=name,
        role="user",
        subject=subject,
        email=email,
        oidc_issuer=iss,
        oidc_subject=sub,
        created_at=utcnow(),
        disabled=False,
        failed_sign_ins=0,
    )
    session.add(p)
    session.flush()
    _audit(
        session,
        settings,
        actor="oidc",
        action="account.provisioned",
        targets=[name],
        details={"role": "user", "issuer": iss, **extra, **_subject_details(subject, settings)},
    )
    return p, None
