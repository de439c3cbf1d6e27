"""The exception tree of memaudit.

Every error that memaudit raises on purpose derives from :class:`MemauditError`;
third-party errors (SQLAlchemy, psycopg, zipfile, ...) are wrapped at the boundary
so callers need to know only this tree::

    MemauditError
    ├── ConfigError                  bad settings or config file
    ├── InputError (ValueError)      bad user input: a record, an argument, a file
    │   └── RecordError              one bad record, with its location (file:line / entry)
    ├── NotFoundError (LookupError)  a memory, finding or subject that does not exist
    ├── LifecycleError               a transition that would break an invariant
    │   ├── InvalidTransitionError   e.g. restoring an active memory
    │   ├── DanglingLinkError        a supersede link to a memory that does not exist
    │   ├── SupersedeCycleError      a supersede link that would close a cycle
    │   ├── ChainForkError           a second active head in one chain
    │   └── TrustTierError           a lower tier superseding a higher one without approval
    ├── ConcurrencyError             another writer changed the memory first (optimistic lock)
    ├── StoreError                   the database failed or is at the wrong schema version
    ├── AuditChainError              the audit log's hash chain is broken
    ├── AuthError                    a sign-in was refused (the message never says which part
    │   │                            was wrong, unless the password was right)
    │   ├── AccountDisabledError     the account is disabled
    │   └── AccountLockedError       too many failed sign-ins: locked for a while
    └── AccessDenied                 the actor's role may not do this, or the object belongs
                                     to another subject (recorded as ``access.denied``)

The CLI maps these to exit codes in exactly one place: :func:`auditor.exitcodes.exit_code_for`.
"""

from __future__ import annotations

__all__ = [
    "AccessDenied",
    "AccountDisabledError",
    "AccountLockedError",
    "AuditChainError",
    "AuthError",
    "ChainForkError",
    "ConcurrencyError",
    "ConfigError",
    "DanglingLinkError",
    "InputError",
    "InvalidTransitionError",
    "LifecycleError",
    "MemauditError",
    "NotFoundError",
    "RecordError",
    "StoreError",
    "SupersedeCycleError",
    "TrustTierError",
]


class MemauditError(Exception):
    """Base class of every error memaudit raises on purpose."""


class ConfigError(MemauditError):
    """Settings or a config file are invalid."""


class InputError(MemauditError, ValueError):
    """User input (a record, an argument, a file) is invalid."""


class RecordError(InputError):
    """One record of an import is invalid.

    Args:
        location: where the record is, e.g. ``"line 17"`` or ``"entry notes/a.md"``.
        reason: what is wrong, never the record's text (it may be personal data).
    """

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(f"{location}: {reason}")
        self.location = location
        self.reason = reason


class NotFoundError(MemauditError, LookupError):
    """The named object does not exist."""


class LifecycleError(MemauditError):
    """A lifecycle transition would break one of the store's invariants."""


class InvalidTransitionError(LifecycleError):
    """The transition is not allowed from the memory's current status."""


class DanglingLinkError(LifecycleError):
    """A supersede link points at a memory that does not exist."""


class SupersedeCycleError(LifecycleError):
    """A supersede link would close a cycle in the chain."""


class ChainForkError(LifecycleError):
    """The chain would get a second active head (or the target is not the head)."""


class TrustTierError(LifecycleError):
    """A lower trust tier may not supersede a higher one without a reviewer's approval."""


class ConcurrencyError(MemauditError):
    """Another writer changed the memory since it was read (optimistic concurrency)."""


class StoreError(MemauditError):
    """The database failed, is unreachable, or is not at the expected schema version."""


class AuditChainError(MemauditError):
    """The audit log's hash chain does not verify."""


class AuthError(MemauditError):
    """A sign-in was refused: unknown user or wrong password (deliberately not told apart)."""


class AccountDisabledError(AuthError):
    """The account exists and the password was right, but the account is disabled."""


class AccountLockedError(AuthError):
    """The account is locked for a while after too many failed sign-ins."""


class AccessDenied(MemauditError):
    """The actor may not do this: wrong role, another subject's data, or a stale session.

    The message names only what the caller asked for (e.g. the id they gave); the service
    layer records the refusal as an ``access.denied`` audit event.
    """
