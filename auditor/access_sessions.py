"""Dashboard sessions: is a signed-in actor still valid, and recording a sign-out.

The dashboard keeps the :class:`~auditor.accounts.Actor` that sign-in returned in its
server-side session. Every access-checked service re-reads the account anyway; the
dashboard also calls :func:`session_valid` at the start of every page run, so a session
whose account was disabled, deleted (an erasure deletes the accounts bound to the subject)
or changed (another role or subject) ends at once instead of page by page.

:func:`record_sign_out` appends ``auth.signed_out``, but only while the account exists:
after an erasure the user's name must not come back into the audit log.
"""

from __future__ import annotations

from typing import Literal

from sqlalchemy import select

from auditor import accounts, audit_log
from auditor.accounts import Actor
from auditor.errors import InputError, NotFoundError
from auditor.lifecycle import audit_key
from auditor.store.db import Database
from auditor.store.models import Principal

__all__ = ["SignOutReason", "record_sign_out", "session_valid"]

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


def record_sign_out(db: Database, actor: Actor, reason: SignOutReason = "signed_out") -> bool:
    """Record the end of a dashboard session as ``auth.signed_out``.

    Args:
        db: the store.
        actor: who signed out.
        reason: ``signed_out`` (they chose to) or ``session_ended`` (the account changed).

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
            details={"method": actor.auth_method, "reason": reason, "role": actor.role},
            key=audit_key(db.settings),
        )
    return True
