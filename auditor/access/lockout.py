"""The sign-in lockout: counting failed password checks, locking, and reporting locks.

:mod:`auditor.access.accounts` calls :func:`register_failure` for every failed (or locked-out)
password check, at sign-in and when a person changes their own password. After
``Settings.sign_in_max_failures`` failures in a row the account is locked for
``Settings.sign_in_lockout_seconds`` (``account.locked``); every attempt during a lock,
right or wrong, is counted and pushes the end of the lock out again, and the caller answers
it exactly like a wrong password. A lock that ran out is cleared at the next attempt.
:func:`lockout_stats` gives the daemon's ``/metrics`` its figures from the store.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from auditor.config import Settings
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Principal
from auditor.store.types import utcnow

__all__ = ["is_locked", "lockout_stats", "register_failure"]


def register_failure(
    session: Session, settings: Settings, p: Principal, *, actor: str, via: str
) -> tuple[bool, bool]:
    """Count one failed (or locked-out) password check on ``p``; lock or extend the lock.

    A lock that ran out is cleared first (counting starts afresh). During a lock every
    attempt counts and the lock is pushed out to ``sign_in_lockout_seconds`` from now.

    Returns:
        ``(was_locked, locked_now)``: whether the account was locked before this attempt,
        and whether this attempt started a new lock (``account.locked`` recorded).
    """
    now = utcnow()
    if p.locked_until is not None and p.locked_until <= now:
        p.locked_until = None  # the lock ran out: count afresh
        p.failed_sign_ins = 0
    was_locked = p.locked_until is not None
    p.failed_sign_ins += 1
    lockout = timedelta(seconds=settings.sign_in_lockout_seconds)
    if was_locked:
        p.locked_until = now + lockout
        return True, False
    if settings.sign_in_max_failures > 0 and p.failed_sign_ins >= settings.sign_in_max_failures:
        p.locked_until = now + lockout
        audit_log.append(
            session,
            actor=actor,
            action="account.locked",
            target_type="principal",
            target_ids=[p.username],
            key=audit_key(settings),
            details={
                "via": via,
                "failures": p.failed_sign_ins,
                "until": p.locked_until.isoformat().replace("+00:00", "Z"),
            },
        )
        return False, True
    return False, False


def is_locked(p: Principal) -> bool:
    """Whether ``p`` is locked now (a lock that ran out does not count)."""
    return p.locked_until is not None and p.locked_until > utcnow()


def lockout_stats(db: Database) -> dict[str, int]:
    """How many accounts are locked now, and how many lockouts the audit log holds.

    For the daemon's ``/metrics`` (``memaudit_accounts_locked``,
    ``memaudit_account_lockouts_total``): the dashboard that locks an account runs in
    another process, so the figures come from the store.
    """
    with db.session() as session:
        locked = session.scalar(
            select(func.count()).select_from(Principal).where(Principal.locked_until > utcnow())
        )
        total = session.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.action == "account.locked")
        )
    return {"locked_now": int(locked or 0), "lockouts_total": int(total or 0)}
