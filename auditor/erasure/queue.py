"""Resuming interrupted erasures and running the queue (the daemon's ``erasure_queue``).

An erasure killed in flight (``deleting``, ``deleted``, ``verifying``) holds a provisional
receipt with a *lease* (:data:`auditor.erasure.states.LEASE` from its last state change).
:func:`run_queue` resumes every in-flight request whose lease expired (its process is
presumed dead) before it executes approved requests; :func:`resume` does one by hand
(``memaudit erasure resume ID [--force]``). The states and what a resumed run can still
prove are described in :mod:`auditor.erasure.states`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy import Row, func, select

from auditor.erasure.common import APPROVED, DELETING, EXECUTED, IN_FLIGHT, Receipt
from auditor.erasure.states import Progress, _drive, _prepare, _provisional, _Run
from auditor.errors import InputError, NotFoundError
from auditor.store.db import Database
from auditor.store.models import ErasureRequest
from auditor.store.types import utcnow

if TYPE_CHECKING:
    from auditor.judge.llm import Judge

__all__ = ["resume", "run_queue"]

log = structlog.get_logger(__name__)


def resume(
    db: Database,
    request_id: int,
    *,
    executed_by: str,
    judge: Judge | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> Receipt:
    """Resume an interrupted request from the state it was left in.

    Args:
        db: the store.
        request_id: a request in ``deleting``, ``deleted`` or ``verifying``.
        executed_by: the process resuming it.
        judge: this process's LLM judge.
        progress: called with a line per step.
        force: resume even if its lease has not expired (the operator knows the process
            that held it is gone).

    Returns:
        The final receipt.

    Raises:
        NotFoundError: no such request.
        InputError: the request is not in flight, or another process still holds it.
    """
    with db.write() as session:
        req = session.execute(
            select(ErasureRequest).where(ErasureRequest.id == request_id).with_for_update()
        ).scalar_one_or_none()
        if req is None:
            raise NotFoundError(f"no erasure request with id {request_id}")
        state = req.status
        if state not in IN_FLIGHT:
            raise InputError(f"erasure request {request_id} is {state}; nothing to resume")
        old = dict(req.receipt or {})
        if not force and not _lease_expired(old):
            raise InputError(
                f"erasure request {request_id} is {state} and held by a running process until "
                f"{old.get('lease_until')}; resume it after that (or with --force)"
            )
        run = _Run(
            request_id,
            req.subject,
            req.subject_digest,
            req.decided_by or executed_by,
            executed_by,
            _parse(old.get("started_at")) or utcnow(),
            progress=progress,
        )
        run.resumed_from = state
        run.counts = dict(old.get("progress") or {})
        run.held_before = dict(old.get("held_before") or {})
        run.data_key = old.get("data_key")
        run.ledger = str(old.get("ledger") or "not configured")
        req.receipt = _provisional(run, state)  # take the lease
    log.warning("erasure_resumed", request_id=request_id, state=state)
    run.say(f"resuming from state {state}")
    with db.session() as session:
        req = session.get(ErasureRequest, request_id)
        assert req is not None
        _prepare(db, run, req, values=state == DELETING)
    return _drive(db, run, state, log_paths=(), judge=judge)


def _parse(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _lease_expired(receipt: dict[str, Any]) -> bool:
    until = _parse(receipt.get("lease_until"))
    return until is None or until <= utcnow()


def run_queue(
    db: Database,
    *,
    actor: str,
    judge: Judge | None = None,
    should_stop: Callable[[], bool] | None = None,
    limit: int = 50,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Resume interrupted requests, then execute approved ones (``erasure_queue``).

    In-flight requests (``deleting``, ``deleted``, ``verifying``) whose lease expired are
    resumed first: their process died. Also empties ``judge``'s verdict cache when any
    erasure ran since it was last emptied (other processes' erasures included).

    Args:
        db: the store.
        actor: who executes (recorded as ``executed_by``; the approver stays the actor).
        judge: the process's LLM judge, if any.
        should_stop: polled between requests.
        limit: most requests per run.
        progress: called with a line per step.

    Returns:
        Counts: resumed, executed, verification failures, verdicts dropped.
    """
    stuck, waiting = _queued(db, limit)
    executed = failed = resumed = 0
    for request_id in stuck:
        if should_stop is not None and should_stop():
            break
        try:
            receipt = resume(db, request_id, executed_by=actor, judge=judge, progress=progress)
        except InputError as exc:  # taken by another process meanwhile
            log.info("erasure_resume_skipped", request_id=request_id, reason=str(exc)[:200])
            continue
        resumed += 1
        failed += 0 if receipt.ok or receipt.nothing_held else 1
    from auditor.erasure.requests import erase_subject

    for request_id, subject, decided_by in waiting:
        if should_stop is not None and should_stop():
            break
        receipt = erase_subject(
            db,
            str(subject),
            actor=decided_by or actor,
            request_id=int(request_id),
            judge=judge,
            executed_by=actor,
            progress=progress,
        )
        executed += 1
        failed += 0 if receipt.ok or receipt.nothing_held else 1
    dropped = _clear_judge_after_erasures(db, judge) if judge is not None else 0
    return {
        "waiting": len(waiting),
        "resumed": resumed,
        "executed": executed,
        "verification_failed": failed,
        "judge_verdicts_dropped": dropped,
    }


def _queued(db: Database, limit: int) -> tuple[list[int], list[Row[int, str | None, str | None]]]:
    """The in-flight requests whose lease expired (to resume) and the approved ones waiting
    (id, subject, approver), oldest first, at most ``limit`` of each."""
    with db.session() as session:
        stuck = [
            int(rid)
            for rid, receipt in session.execute(
                select(ErasureRequest.id, ErasureRequest.receipt)
                .where(ErasureRequest.status.in_(IN_FLIGHT))
                .order_by(ErasureRequest.id)
            )
            if _lease_expired(dict(receipt or {}))
        ][:limit]
        waiting = session.execute(
            select(ErasureRequest.id, ErasureRequest.subject, ErasureRequest.decided_by)
            .where(ErasureRequest.status == APPROVED, ErasureRequest.subject.is_not(None))
            .order_by(ErasureRequest.id)
            .limit(limit)
        ).all()
    return stuck, list(waiting)


def _clear_judge_after_erasures(db: Database, judge: Judge) -> int:
    """Empty the judge's verdict cache if any erasure ran since it was last emptied (other
    processes' included); the verdicts dropped."""
    with db.session() as session:
        latest = session.scalar(
            select(func.max(ErasureRequest.executed_at)).where(ErasureRequest.status == EXECUTED)
        )
    if latest is None or latest <= judge.cache_cleared_at:
        return 0
    dropped = judge.clear_cache()
    take = getattr(judge, "take_deferred", None)
    if callable(take):
        take()
    return dropped
