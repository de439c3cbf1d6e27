"""Dashboard accounts: roles, the signed-in actor, local passwords (argon2), management.

Three roles:

* ``user``: an end user, bound to exactly one subject (``user:<id>``); sees and changes only
  that subject's memories (see :mod:`auditor.access.officer`);
* ``officer``: a compliance officer who works the review queue;
* ``admin``: an officer who also manages accounts.

Accounts are rows of ``principals``. Local passwords are hashed with Argon2id
(``argon2-cffi``, its RFC 9106 defaults). Every argon2 hash and verification holds a slot of
:mod:`auditor.access.signin_limits` (at most ``sign_in_max_concurrent`` at once), which
refuses with :class:`~auditor.access.signin_limits.SignInBusyError`.

Signing in is in :mod:`auditor.access.signin`: :func:`~auditor.access.signin.authenticate`
(a user name and a local password), :func:`~auditor.access.signin.check_current_password`
(changing one's own password) and :func:`~auditor.access.signin.actor_from_oidc` (an OIDC
identity). They return the :class:`Actor` defined here and check passwords with this
module's hasher (``_HASHER``, looked up here at every call).

Every account change (``account.*``) is an audit event. Events carry user names (the
account ids) and digests, never passwords or e-mail addresses.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import threading
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast, get_args

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from auditor import limits
from auditor.access import signin_limits
from auditor.config import Settings
from auditor.errors import InputError, NotFoundError
from auditor.hashing import subject_digest
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.store.db import Database
from auditor.store.models import Principal
from auditor.store.types import iso_utc, utcnow
from auditor.vocab import ROLES, Role

__all__ = [
    "AUTH_METHODS",
    "MAX_PASSWORD_CHARS",
    "ROLES",
    "Account",
    "Actor",
    "AuthMethod",
    "Role",
    "add_user",
    "check_password_policy",
    "delete_user",
    "disable_user",
    "enable_user",
    "get_user",
    "list_users",
    "normalise_username",
    "set_password",
    "set_role",
    "username_digest",
    "verify_password",
]

AuthMethod = Literal["password", "oidc"]
AUTH_METHODS: tuple[str, ...] = get_args(AuthMethod)
#: Longest password accepted: argon2 takes any length, this only bounds the work per try.
MAX_PASSWORD_CHARS = 1024

_USERNAME = re.compile(r"^[a-z0-9][a-z0-9_.@+-]{0,199}$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}$")
#: The subject form of :class:`auditor.records.MemoryRecord` (a kind, a colon, an id).
_SUBJECT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,31}:\S+$")
_HASHER = PasswordHasher()


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is signed in: the identity every access-checked service takes first.

    An ``Actor`` is what :func:`~auditor.access.signin.authenticate` or
    :func:`~auditor.access.signin.actor_from_oidc` returns; the services of
    :mod:`auditor.access.officer` check it against the stored account on every call, so an
    actor built by hand, or one whose account was disabled or changed since it signed in,
    is refused.

    Attributes:
        username: the account's user name.
        role: ``user``, ``officer`` or ``admin``.
        subject: the one subject a ``user`` is bound to (None for officers and admins).
        auth_method: how the actor signed in: ``password`` or ``oidc``.

    Raises:
        ValueError: an unknown role or method, or a subject that does not fit the role.
    """

    username: str
    role: Role
    subject: str | None
    auth_method: AuthMethod

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}; expected one of {', '.join(ROLES)}")
        if self.auth_method not in AUTH_METHODS:
            raise ValueError(f"unknown sign-in method {self.auth_method!r}")
        if (self.role == "user") != (self.subject is not None):
            raise ValueError("a user actor has exactly one subject; officers and admins none")

    @property
    def is_officer(self) -> bool:
        """Whether the actor may work the review queue (officers and admins)."""
        return self.role in ("officer", "admin")


@dataclass(frozen=True, slots=True)
class Account:
    """An account as listings show it: never the password hash, never the OIDC subject."""

    username: str
    role: str
    subject: str | None
    display_name: str | None
    email: str | None
    disabled: bool
    created_at: datetime
    last_sign_in_at: datetime | None
    password_set: bool
    oidc_bound: bool
    locked_until: datetime | None

    @classmethod
    def from_principal(cls, p: Principal) -> Account:
        """The listing view of a stored principal."""
        return cls(
            username=p.username,
            role=p.role,
            subject=p.subject,
            display_name=p.display_name,
            email=p.email,
            disabled=p.disabled,
            created_at=p.created_at,
            last_sign_in_at=p.last_sign_in_at,
            password_set=p.password_hash is not None,
            oidc_bound=p.oidc_subject is not None,
            locked_until=p.locked_until,
        )

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO 8601 UTC)."""

        return {
            "username": self.username,
            "role": self.role,
            "subject": self.subject,
            "display_name": self.display_name,
            "email": self.email,
            "disabled": self.disabled,
            "created_at": iso_utc(self.created_at),
            "last_sign_in_at": iso_utc(self.last_sign_in_at),
            "password_set": self.password_set,
            "oidc_bound": self.oidc_bound,
            "locked_until": iso_utc(self.locked_until),
        }


# -- validation ---------------------------------------------------------------------------


def normalise_username(username: str) -> str:
    """The stored form of a user name: NFKC, trimmed, lower case.

    Raises:
        InputError: empty, too long, or characters other than letters, digits and
            ``_ . @ + -`` (so an e-mail address works as a user name).
    """
    name = unicodedata.normalize("NFKC", username or "").strip().lower()
    if not _USERNAME.match(name):
        raise InputError(
            "a user name is 1-200 characters: letters, digits and _ . @ + -, "
            "starting with a letter or digit"
        )
    return name


def _normalise_email(email: str | None) -> str | None:
    if email is None:
        return None
    value = unicodedata.normalize("NFKC", email).strip().lower()
    if not value:
        return None
    if len(value) > 320 or not _EMAIL.match(value):
        raise InputError("the e-mail address is not valid (expected name@domain)")
    return value


def _check_role(role: str, subject: str | None) -> tuple[Role, str | None]:
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    if role == "user":
        if not subject:
            raise InputError("a user account must be bound to one subject (e.g. user:42)")
        if len(subject) > 256 or not _SUBJECT.match(subject):
            raise InputError("the subject must look like 'user:<id>' (a kind, a colon, an id)")
        return "user", subject
    if subject:
        raise InputError(f"an {role} account is not bound to a subject; leave the subject out")
    return cast(Role, role), None


def check_password_policy(password: str, settings: Settings, username: str | None = None) -> None:
    """Refuse a password that breaks the policy (never echoing it).

    Args:
        password: the candidate password.
        settings: gives ``password_min_length``.
        username: the account's user name; a password equal to it is refused.

    Raises:
        InputError: too short, too long, only white space, or the user name itself.
    """
    if not isinstance(password, str) or not password.strip():
        raise InputError("the password is empty")
    if len(password) < settings.password_min_length:
        raise InputError(
            f"the password is too short: at least {settings.password_min_length} characters"
        )
    if len(password) > MAX_PASSWORD_CHARS:
        raise InputError(f"the password is too long: at most {MAX_PASSWORD_CHARS} characters")
    if username is not None and password.strip().lower() == username.lower():
        raise InputError("the password must not be the user name")


_DUMMY_LOCK = threading.Lock()


@functools.cache
def _dummy_hash_unbounded() -> str:
    return _HASHER.hash("memaudit: no such account, spend the same time anyway")


def _dummy_hash() -> str:
    with _DUMMY_LOCK:  # computed once, by the first caller (which holds a hashing slot)
        return _dummy_hash_unbounded()


def _hash(password: str, settings: Settings | None) -> str:
    """Argon2id hash of ``password``, holding a hashing slot (see :mod:`signin_limits`)."""
    with signin_limits.hashing_slot(settings):
        return _HASHER.hash(password)


def _verify_unbounded(stored_hash: str | None, password: str) -> bool:
    if not isinstance(password, str) or len(password) > MAX_PASSWORD_CHARS:
        password = ""
    try:
        ok = _HASHER.verify(stored_hash or _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return False
    return bool(ok) and stored_hash is not None


def verify_password(
    stored_hash: str | None, password: str, settings: Settings | None = None
) -> bool:
    """Check a password against an argon2 hash; a missing hash costs the same work.

    The check holds one of the process's hashing slots (:mod:`auditor.access.signin_limits`).

    Args:
        stored_hash: the account's hash (None: the account has no password).
        password: what the person typed.
        settings: gives the slot count and wait (None: the defaults).

    Returns:
        True only when the hash exists and the password matches it.

    Raises:
        SignInBusyError: no hashing slot came free in time.
    """
    with signin_limits.hashing_slot(settings):
        return _verify_unbounded(stored_hash, password)


def username_digest(username: str, settings: Settings) -> str:
    """A digest of a user name that stands in the audit log instead of an unknown name.

    Keyed with the audit HMAC key when one is set (so it cannot be reversed by guessing).
    """
    data = unicodedata.normalize("NFKC", username or "").strip().lower().encode("utf-8")
    key = audit_key(settings)
    if key:
        return hmac.new(key, b"username:" + data, hashlib.sha256).hexdigest()
    return hashlib.sha256(b"memaudit-username:" + data).hexdigest()


# -- helpers ------------------------------------------------------------------------------


def _audit(
    session: Session,
    settings: Settings,
    *,
    actor: str,
    action: str,
    targets: list[str],
    details: dict[str, Any],
) -> None:
    audit_log.append(
        session,
        actor=actor,
        action=action,
        target_type="principal",
        target_ids=targets,
        details=details,
        key=audit_key(settings),
    )


def _require_by(by: str) -> str:
    if not by or not by.strip():
        raise InputError("an actor is required (--by WHO): every account change is attributed")
    return by.strip()


def _load(session: Session, username: str, *, lock: bool = False) -> Principal:
    name = normalise_username(username)
    query = select(Principal).where(Principal.username == name)
    if lock:
        query = query.with_for_update()
    principal = session.scalar(query)
    if principal is None:
        raise NotFoundError(f"no account {name!r}")
    return principal


def _enabled_admins(session: Session) -> int:
    return int(
        session.scalar(
            select(func.count())
            .select_from(Principal)
            .where(Principal.role == "admin", Principal.disabled.is_(False))
        )
        or 0
    )


def _guard_last_admin(session: Session, p: Principal, what: str) -> None:
    if p.role == "admin" and not p.disabled and _enabled_admins(session) <= 1:
        raise InputError(
            f"cannot {what} {p.username}: it is the last enabled admin (add another admin first)"
        )


def _subject_details(subject: str | None, settings: Settings) -> dict[str, Any]:
    if subject is None:
        return {}
    return {"subject_digest": subject_digest(subject, audit_key(settings))}


# -- account management -------------------------------------------------------------------


def add_user(
    db: Database,
    username: str,
    *,
    role: str,
    by: str,
    subject: str | None = None,
    password: str | None = None,
    display_name: str | None = None,
    email: str | None = None,
) -> Account:
    """Create an account.

    Args:
        db: the store.
        username: the user name (stored lower case).
        role: ``user``, ``officer`` or ``admin``.
        by: who creates it (audit log).
        subject: the subject a ``user`` is bound to (required for users, refused otherwise).
        password: a local password (None: the account signs in through OIDC only).
        display_name: a name to show.
        email: the address an OIDC sign-in is matched by (stored lower case, unique).

    Returns:
        The new account.

    Raises:
        InputError: a bad name, role, subject, e-mail or password; the name or e-mail is
            taken.
    """
    by = _require_by(by)
    name = normalise_username(username)
    role_, subject_ = _check_role(role, subject)
    mail = _normalise_email(email)
    if password is not None:
        check_password_policy(password, db.settings, name)
    if display_name is not None and len(display_name) > limits.MAX_DISPLAY_NAME_CHARS:
        raise InputError(
            f"the display name is longer than {limits.MAX_DISPLAY_NAME_CHARS} characters"
        )
    hashed = _hash(password, db.settings) if password is not None else None
    settings = db.settings
    with db.write() as session:
        if session.scalar(select(Principal.id).where(Principal.username == name)) is not None:
            raise InputError(f"account {name!r} exists already")
        if (
            mail is not None
            and session.scalar(select(Principal.id).where(Principal.email == mail)) is not None
        ):
            raise InputError("another account has this e-mail address")
        now = utcnow()
        principal = Principal(
            username=name,
            display_name=display_name,
            role=role_,
            subject=subject_,
            password_hash=hashed,
            password_changed_at=now if hashed else None,
            created_at=now,
            disabled=False,
            email=mail,
            failed_sign_ins=0,
        )
        session.add(principal)
        session.flush()
        _audit(
            session,
            settings,
            actor=by,
            action="account.added",
            targets=[name],
            details={
                "role": role_,
                "password_set": hashed is not None,
                "email_set": mail is not None,
                **_subject_details(subject_, settings),
            },
        )
        return Account.from_principal(principal)


def get_user(db: Database, username: str) -> Account:
    """One account.

    Raises:
        NotFoundError: no such account.
        InputError: the user name is malformed.
    """
    with db.session() as session:
        return Account.from_principal(_load(session, username))


def list_users(db: Database, role: str | None = None) -> list[Account]:
    """Every account (or every account of one role), by user name.

    Raises:
        InputError: an unknown role.
    """
    if role is not None and role not in ROLES:
        raise InputError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    with db.session() as session:
        query = select(Principal).order_by(Principal.username)
        if role is not None:
            query = query.where(Principal.role == role)
        return [Account.from_principal(p) for p in session.scalars(query)]


def set_password(db: Database, username: str, password: str, *, by: str) -> None:
    """Set (or replace) an account's local password; clears a lockout.

    Raises:
        NotFoundError: no such account.
        InputError: the password breaks the policy.
    """
    by = _require_by(by)
    name = normalise_username(username)
    check_password_policy(password, db.settings, name)
    hashed = _hash(password, db.settings)
    with db.write() as session:
        p = _load(session, name, lock=True)
        had = p.password_hash is not None
        p.password_hash = hashed
        p.password_changed_at = utcnow()
        p.failed_sign_ins = 0
        p.locked_until = None
        _audit(
            session,
            db.settings,
            actor=by,
            action="account.password_set",
            targets=[name],
            details={"replaced": had},
        )


def set_role(
    db: Database, username: str, role: str, *, by: str, subject: str | None = None
) -> Account:
    """Change an account's role and subject binding (a user needs a subject).

    Also how a user is re-bound to another subject: ``set_role(db, name, "user",
    subject="user:43", by=...)``.

    Raises:
        NotFoundError: no such account.
        InputError: a bad role or subject, or it would demote the last enabled admin.
    """
    by = _require_by(by)
    role_, subject_ = _check_role(role, subject)
    settings = db.settings
    with db.write() as session:
        p = _load(session, username, lock=True)
        if p.role == "admin" and role_ != "admin":
            _guard_last_admin(session, p, "demote")
        before_role, before_subject = p.role, p.subject
        p.role, p.subject = role_, subject_
        details: dict[str, Any] = {"from": before_role, "to": role_}
        if before_subject != subject_:
            details["subject_changed"] = True
        details.update(_subject_details(subject_, settings))
        _audit(
            session,
            settings,
            actor=by,
            action="account.role_set",
            targets=[p.username],
            details=details,
        )
        return Account.from_principal(p)


def disable_user(db: Database, username: str, *, by: str) -> Account:
    """Disable an account: it can no longer sign in, and its open sessions are refused.

    Raises:
        NotFoundError: no such account.
        InputError: it is the last enabled admin.
    """
    by = _require_by(by)
    with db.write() as session:
        p = _load(session, username, lock=True)
        _guard_last_admin(session, p, "disable")
        was = p.disabled
        p.disabled = True
        _audit(
            session,
            db.settings,
            actor=by,
            action="account.disabled",
            targets=[p.username],
            details={"already": was},
        )
        return Account.from_principal(p)


def enable_user(db: Database, username: str, *, by: str) -> Account:
    """Enable an account again, and lift a sign-in lockout.

    Raises:
        NotFoundError: no such account.
    """
    by = _require_by(by)
    with db.write() as session:
        p = _load(session, username, lock=True)
        details = {"was_disabled": p.disabled, "was_locked": p.locked_until is not None}
        p.disabled = False
        p.failed_sign_ins = 0
        p.locked_until = None
        _audit(
            session,
            db.settings,
            actor=by,
            action="account.enabled",
            targets=[p.username],
            details=details,
        )
        return Account.from_principal(p)


def delete_user(db: Database, username: str, *, by: str) -> None:
    """Delete an account (its audit events stay: they name it by user name).

    Raises:
        NotFoundError: no such account.
        InputError: it is the last enabled admin.
    """
    by = _require_by(by)
    with db.write() as session:
        p = _load(session, username, lock=True)
        _guard_last_admin(session, p, "delete")
        name, role = p.username, p.role
        session.delete(p)
        session.flush()
        _audit(
            session,
            db.settings,
            actor=by,
            action="account.deleted",
            targets=[name],
            details={"role": role},
        )
