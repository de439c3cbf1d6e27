"""The write-back outbox: quarantine, restore and erasure carried into live sources.

Rows of ``source_actions`` are written in the transaction of the memaudit-side action, so
an action is never lost nor carried back without having happened here:

* :func:`queue_transition` (called by :mod:`auditor.lifecycle.machine`): a memory of a write-back
  source was quarantined, or restored from quarantine, by a reviewer or a rule action.
  The last decision wins: an earlier pending or failed action on the same memory is
  cancelled (superseded) and the new one is queued (connectors' actions are idempotent).
* :func:`queue_erasure` (called by :func:`auditor.erasure.requests.erase_subject`): one ``erase``
  row per write-back source. Pending quarantine and restore rows of the erased memories
  are cancelled.

:func:`run_outbox` (the daemon's ``source_sync`` job, ``memaudit sources sync``) carries
pending rows into their sources, grouped by source and action, retrying a failed one up to
``source_action_max_attempts`` times. :func:`execute_erasures` runs an erasure's rows at
once, inside :func:`~auditor.erasure.requests.erase_subject`, so the receipt records each source's
counts and verification.

Privacy: a row holds the external id (quarantine, restore) or the subject (erase) only
while it waits; done and cancelled rows keep counts and the memaudit memory id. A failed
erase keeps its subject until an operator retries or cancels it (the erasure's own
verification reports the table meanwhile). Errors are stored scrubbed and cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from auditor.config import Settings
from auditor.errors import ConfigError, InputError, MemauditError, NotFoundError
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.logging import scrub
from auditor.sources.live.base import ErasureResult, NotSupported
from auditor.sources.writeback import clear_write_back, mark_write_back, source_state_after
from auditor.store.db import Database
from auditor.store.models import Memory, SourceAction, SourceRow
from auditor.store.types import utcnow

__all__ = [
    "ACTIONS",
    "ActionInfo",
    "cancel_action",
    "cancel_for_memories",
    "execute_erasures",
    "list_actions",
    "queue_erasure",
    "queue_transition",
    "retry_action",
    "run_outbox",
    "write_back_sources",
]

log = structlog.get_logger(__name__)

ACTIONS = ("quarantine", "restore", "erase")
PENDING, DONE, FAILED, CANCELLED = "pending", "done", "failed", "cancelled"
ACTOR = "memaudit-sync"
_OPPOSITE = {"quarantine": "restore", "restore": "quarantine"}
_CHUNK = 500
_ERROR_CHARS = 500
_ERASED_IDS = "erased_memory_ids"


def _prefix(name: str) -> str:
    return f"src_{name[:40]}_"  # auditor.sources.live.base.memory_id_for


def _key(settings: Settings) -> bytes | None:
    return audit_key(settings)


def _error_text(exc: BaseException) -> str:
    return scrub(f"{type(exc).__name__}: {exc}", limit=_ERROR_CHARS)


def _declared(settings: Settings) -> dict[str, Any]:
    """Sources of the config file; an invalid declaration is logged, not raised: it must
    not fail the quarantine or erasure transaction that asks (its syncs fail loudly)."""
    from auditor.sources.registry import config_sources

    if not settings.sources:
        return {}
    try:
        return dict(config_sources(settings))
    except ConfigError as exc:
        log.error("source_config_invalid", error=str(exc))
        return {}


def write_back_sources(session: Session, settings: Settings) -> dict[str, str]:
    """Name -> kind of every enabled source configured with ``write_back``."""

    found = {
        name: kind
        for name, kind in session.execute(
            select(SourceRow.name, SourceRow.kind).where(
                SourceRow.write_back.is_(True), SourceRow.enabled.is_(True)
            )
        )
    }
    for name, info in _declared(settings).items():
        found.pop(name, None)
        if info.config.write_back and info.enabled:
            found[name] = info.config.kind
    return found


def _write_back_source(session: Session, settings: Settings, name: str) -> bool:
    declared = _declared(settings).get(name)
    if declared is not None:
        return bool(declared.config.write_back and declared.enabled)
    row = session.get(SourceRow, name)
    return row is not None and bool(row.write_back) and bool(row.enabled)


# -- queueing (inside the caller's transaction) ---------------------------------------------


def queue_transition(session: Session, settings: Settings, memory: Memory, action: str) -> bool:
    """Queue ``quarantine`` or ``restore`` of a memory into its source, if it has one that
    takes write-back. Called by the lifecycle in the transition's transaction.

    Returns:
        Whether a row was added (False: not a write-back source's memory, or the same
        action already waits). An earlier pending or failed opposite (or failed same)
        action of the memory is cancelled as superseded: the last decision is carried.
    """
    extra = memory.extra or {}
    source = extra.get("source_name")
    external_id = memory.external_id or extra.get("external_id")
    if not isinstance(source, str) or not isinstance(external_id, str) or not external_id:
        return False
    if action not in _OPPOSITE:
        raise InputError(f"unknown write-back action {action!r}")
    if not _write_back_source(session, settings, source):
        return False
    earlier = session.scalars(
        select(SourceAction).where(
            SourceAction.memory_id == memory.memory_id,
            SourceAction.source == source,
            SourceAction.status.in_((PENDING, FAILED)),
            SourceAction.action.in_(tuple(_OPPOSITE)),
        )
    ).all()
    if any(row.action == action and row.status == PENDING for row in earlier):
        return False  # already on its way
    # The last decision wins. An earlier action that waits or failed is superseded: the
    # source's state is not known here (a failed quarantine left the item live), so the
    # new action is always carried (connectors' quarantine and restore are idempotent).
    for row in earlier:
        row.status, row.external_id, row.done_at = CANCELLED, None, utcnow()
        row.error = f"superseded by a later {action}"
    session.add(
        SourceAction(
            source=source,
            action=action,
            memory_id=memory.memory_id,
            external_id=external_id,
            status=PENDING,
            attempts=0,
            result={},
        )
    )
    mark_write_back(memory, action, PENDING)
    return True


def queue_erasure(
    session: Session,
    settings: Settings,
    subject: str,
    *,
    digest: str,
    request_id: int | None,
    memory_ids: Sequence[str] = (),
) -> list[int]:
    """Queue the erasure of a subject in every write-back source (erasure's transaction).

    Also cancels pending quarantine and restore rows of ``memory_ids`` (the erased
    memories: their external ids must not outlive them).

    Returns:
        The ids of the rows added.
    """
    cancel_for_memories(session, memory_ids, reason="memory erased")
    rows = [
        SourceAction(
            source=name,
            action="erase",
            subject=subject,
            subject_digest=digest,
            erasure_request_id=request_id,
            status=PENDING,
            attempts=0,
            # the erased memaudit ids of this source's items (hashes, no personal data):
            # the connector recognises the subject's rows by them whatever it forgot
            result={_ERASED_IDS: sorted(m for m in memory_ids if m.startswith(_prefix(name)))},
        )
        for name in sorted(write_back_sources(session, settings))
    ]
    session.add_all(rows)
    session.flush()
    return [row.id for row in rows]


def cancel_for_memories(session: Session, memory_ids: Sequence[str], *, reason: str) -> int:
    """Cancel pending quarantine / restore rows of these memories; returns how many."""
    total = 0
    ids = list(memory_ids)
    for start in range(0, len(ids), _CHUNK):
        result = session.execute(
            update(SourceAction)
            .where(
                SourceAction.memory_id.in_(ids[start : start + _CHUNK]),
                SourceAction.status.in_((PENDING, FAILED)),
                SourceAction.action.in_(tuple(_OPPOSITE)),
            )
            .values(status=CANCELLED, external_id=None, error=reason, done_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        total += int(getattr(result, "rowcount", 0) or 0)
    return total


# -- execution ------------------------------------------------------------------------------


def _finish(
    db: Database,
    ids: Sequence[int],
    *,
    ok: bool,
    result: dict[str, Any],
    error: str | None = None,
    final: bool = False,
) -> str:
    """Record the outcome of one attempt on rows ``ids``; returns their new status."""
    max_attempts = db.settings.source_action_max_attempts
    status = DONE
    with db.write() as session:
        rows = session.scalars(select(SourceAction).where(SourceAction.id.in_(list(ids)))).all()
        for row in rows:
            row.attempts += 1
            kept = (row.result or {}).get(_ERASED_IDS)
            row.result = result
            if not ok and kept:
                row.result = {**result, _ERASED_IDS: kept}  # for the retry
            if ok:
                row.status, row.error, row.done_at = DONE, None, utcnow()
                row.external_id, row.subject = None, None
            else:
                row.error = error
                if final or row.attempts >= max_attempts:
                    row.status = FAILED
                    if row.action != "erase":
                        # no external id waits in a failed row: a retry takes it from
                        # the memory again (retry_action)
                        row.external_id = None
            status = row.status
        _flag_memories(session, [r for r in rows if r.action in _OPPOSITE], ok=ok)
        if rows:
            first = rows[0]
            audit_log.append(
                session,
                actor=ACTOR,
                action="source.action_done" if ok else "source.action_failed",
                target_type="source",
                target_ids=[first.source],
                details={
                    "action": first.action,
                    "rows": [r.id for r in rows],
                    "memories": len([r for r in rows if r.memory_id]),
                    "erasure_request": first.erasure_request_id,
                    "subject_digest": first.subject_digest,
                    "status": status,
                    "verified": result.get("verified"),
                },
                key=_key(db.settings),
            )
    return status


def _flag_memories(session: Session, rows: Sequence[SourceAction], *, ok: bool) -> None:
    """Show on each memory whether its source holds memaudit's decision (source_state)."""
    by_memory = {r.memory_id: r for r in rows if r.memory_id}
    if not by_memory:
        return
    for memory in session.scalars(select(Memory).where(Memory.memory_id.in_(list(by_memory)))):
        row = by_memory[memory.memory_id]
        if ok:
            clear_write_back(memory, source_status=source_state_after(row.action))
        else:
            mark_write_back(memory, row.action, row.status, attempts=row.attempts)


def _erasure_result(result: ErasureResult) -> dict[str, Any]:
    return result.as_dict()


def _run_erase(db: Database, row_id: int, values: Sequence[str]) -> dict[str, Any]:
    from auditor.sources.registry import connect

    with db.session() as session:
        row = session.get(SourceAction, row_id)
        if row is None or row.status != PENDING or row.subject is None:
            return {"status": "skipped"}
        source, subject = row.source, row.subject
        erased_ids = frozenset((row.result or {}).get(_ERASED_IDS) or ())
    try:
        with connect(db, source) as connector:
            connector.subject_memory_ids = erased_ids
            outcome = connector.erase_subject(subject, values)
    except NotSupported as exc:
        status = _finish(db, [row_id], ok=False, result={}, error=str(exc), final=True)
        return {"status": status, "error": str(exc), "verified": False}
    except NotFoundError as exc:
        status = _finish(db, [row_id], ok=False, result={}, error=str(exc), final=True)
        return {"status": status, "error": str(exc), "verified": False}
    except Exception as exc:  # noqa: BLE001 - recorded, retried by the outbox
        error = _error_text(exc)
        log.warning("source_erase_failed", source=source, row=row_id, error_type=type(exc).__name__)
        status = _finish(db, [row_id], ok=False, result={}, error=error)
        return {"status": status, "error": error, "verified": False}
    data = _erasure_result(outcome)
    if outcome.verified:
        status = _finish(db, [row_id], ok=True, result=data)
    else:
        problems = list(outcome.remaining) + [
            f"{m.get('place')} may hold it ({m.get('count')}: {m.get('reason')})"
            for m in outcome.may_hold
        ]
        status = _finish(
            db,
            [row_id],
            ok=False,
            result=data,
            error=scrub(
                "the erasure could not be verified: " + "; ".join(problems), limit=_ERROR_CHARS
            ),
            # what may hold the subject without a trace of it stays so until an officer
            # acts (attributes or erases it): retrying alone cannot change that
            final=not outcome.remaining,
        )
    log.info("source_erase_finished", source=source, row=row_id, verified=outcome.verified)
    return {"status": status, **data}


def execute_erasures(
    db: Database, row_ids: Sequence[int], values: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """Carry an erasure into its sources now (called by ``erase_subject``).

    Args:
        db: the store.
        row_ids: the rows :func:`queue_erasure` added.
        values: the identifying values of the subject (memory only; never stored).

    Returns:
        Source name -> status, counts, remaining places, notes and ``verified``.
    """
    out: dict[str, dict[str, Any]] = {}
    for row_id in row_ids:
        with db.session() as session:
            row = session.get(SourceAction, row_id)
            name = row.source if row is not None else str(row_id)
        out[name] = _run_erase(db, row_id, values)
    return out


def _run_status_actions(
    db: Database, source: str, action: str, rows: list[tuple[int, str]]
) -> dict[str, int]:
    from auditor.sources.registry import connect

    counts = {"done": 0, "failed": 0, "retrying": 0}
    try:
        with connect(db, source) as connector:
            fn: Callable[[Sequence[str]], None] = (
                connector.quarantine if action == "quarantine" else connector.restore
            )
            for start in range(0, len(rows), _CHUNK):
                chunk = rows[start : start + _CHUNK]
                ids = [rid for rid, _ext in chunk]
                try:
                    fn([ext for _rid, ext in chunk])
                except NotSupported as exc:
                    _finish(db, ids, ok=False, result={}, error=str(exc), final=True)
                    counts["failed"] += len(ids)
                    continue
                except Exception as exc:  # noqa: BLE001 - recorded, retried
                    log.warning(
                        "source_action_failed",
                        source=source,
                        action=action,
                        error_type=type(exc).__name__,
                    )
                    status = _finish(db, ids, ok=False, result={}, error=_error_text(exc))
                    counts["failed" if status == FAILED else "retrying"] += len(ids)
                    continue
                _finish(db, ids, ok=True, result={"count": len(ids)})
                counts["done"] += len(ids)
    except MemauditError as exc:  # the source cannot be opened (config, secret, kind)
        ids = [rid for rid, _ext in rows]
        status = _finish(db, ids, ok=False, result={}, error=str(exc))
        counts["failed" if status == FAILED else "retrying"] += len(ids)
    except Exception as exc:  # noqa: BLE001 - e.g. the source is unreachable
        ids = [rid for rid, _ext in rows]
        status = _finish(db, ids, ok=False, result={}, error=_error_text(exc))
        counts["failed" if status == FAILED else "retrying"] += len(ids)
    return counts


def run_outbox(
    db: Database,
    *,
    source: str | None = None,
    should_stop: Callable[[], bool] | None = None,
    limit: int = 5000,
) -> dict[str, Any]:
    """Carry pending write-back actions into their sources.

    Rows of a source that was removed, disabled or lost its write-back are cancelled.
    Connectors' write-back methods must be idempotent: a row whose outcome could not be
    recorded (a crash right after the call) is carried again.

    Args:
        db: the store.
        source: only this source's rows.
        should_stop: polled between groups.
        limit: most rows per run.

    Returns:
        Counts (no personal data): done, failed, retrying, cancelled, and erase results.
    """
    totals: dict[str, Any] = {"done": 0, "failed": 0, "retrying": 0, "cancelled": 0}
    with db.write() as session:
        query = select(SourceAction).where(SourceAction.status == PENDING)
        if source is not None:
            query = query.where(SourceAction.source == source)
        pending = session.scalars(query.order_by(SourceAction.id).limit(limit)).all()
        allowed = write_back_sources(session, db.settings)
        work: dict[tuple[str, str], list[tuple[int, str]]] = {}
        erases: list[int] = []
        for row in pending:
            if row.source not in allowed:
                row.status, row.done_at = CANCELLED, utcnow()
                row.error = "the source is gone, disabled, or no longer takes write-back"
                row.external_id = None
                if row.action == "erase":
                    # keep the subject: an erasure must not silently vanish; an operator
                    # re-enables the source or cancels the row (memaudit sources actions)
                    row.status = FAILED
                totals["cancelled" if row.status == CANCELLED else "failed"] += 1
                continue
            if row.action == "erase":
                erases.append(row.id)
            elif row.external_id:
                work.setdefault((row.source, row.action), []).append((row.id, row.external_id))
    for (name, action), rows in sorted(work.items()):
        if should_stop is not None and should_stop():
            break
        for k, v in _run_status_actions(db, name, action, rows).items():
            totals[k] += v
    erased: dict[str, Any] = {}
    for row_id in erases:
        if should_stop is not None and should_stop():
            break
        result = execute_erasures(db, [row_id])
        for name, data in result.items():
            erased[f"{name}#{row_id}"] = {
                k: data.get(k) for k in ("status", "verified", "counts", "remaining")
            }
            status = data.get("status")
            totals["done" if status == DONE else "failed" if status == FAILED else "retrying"] += 1
    if erased:
        totals["erasures"] = erased
    return totals


# -- operators ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActionInfo:
    """One outbox row as listed (never the subject or the external id)."""

    id: int
    source: str
    action: str
    status: str
    attempts: int
    memory_id: str | None
    subject_digest: str | None
    erasure_request_id: int | None
    error: str | None
    result: dict[str, Any]
    created_at: str
    done_at: str | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


def list_actions(
    db: Database, *, status: str | None = None, source: str | None = None, limit: int = 100
) -> list[ActionInfo]:
    """Outbox rows, newest first."""
    query = select(SourceAction).order_by(SourceAction.id.desc()).limit(limit)
    if status is not None:
        query = query.where(SourceAction.status == status)
    if source is not None:
        query = query.where(SourceAction.source == source)
    with db.session() as session:
        return [
            ActionInfo(
                id=r.id,
                source=r.source,
                action=r.action,
                status=r.status,
                attempts=r.attempts,
                memory_id=r.memory_id,
                subject_digest=r.subject_digest,
                erasure_request_id=r.erasure_request_id,
                error=r.error,
                result=dict(r.result or {}),
                created_at=r.created_at.isoformat(),
                done_at=r.done_at.isoformat() if r.done_at else None,
            )
            for r in session.scalars(query)
        ]


def _operator_change(db: Database, action_id: int, actor: str, *, retry: bool) -> None:
    with db.write() as session:
        row = session.get(SourceAction, action_id)
        if row is None:
            raise NotFoundError(f"no source action {action_id}")
        if row.status != FAILED and not (not retry and row.status == PENDING):
            raise InputError(
                f"source action {action_id} is {row.status}; only a failed action can be "
                "retried, and only a failed or pending one cancelled"
            )
        if retry:
            if row.action == "erase" and row.subject is None:
                raise InputError(f"source action {action_id} no longer holds its subject")
            if row.action != "erase" and not row.external_id:
                row.external_id = _external_id_again(session, row)
            row.status, row.attempts, row.error = PENDING, 0, None
            if row.action in _OPPOSITE:
                _flag_memories(session, [row], ok=False)
        else:
            row.status, row.done_at = CANCELLED, utcnow()
            row.subject, row.external_id = None, None
        audit_log.append(
            session,
            actor=actor,
            action="source.action_retried" if retry else "source.action_cancelled",
            target_type="source",
            target_ids=[row.source],
            details={"row": action_id, "action": row.action},
            key=_key(db.settings),
        )


def _external_id_again(session: Session, row: SourceAction) -> str:
    """The item of a failed quarantine / restore, from its memory (a failed row keeps none).

    Raises:
        InputError: the memory is gone (erased), or memaudit's decision changed since
            (the later decision has its own row): naming the row and what to do.
    """
    memory = session.get(Memory, row.memory_id) if row.memory_id else None
    extra = (memory.extra or {}) if memory is not None else {}
    external = (memory.external_id or extra.get("external_id")) if memory is not None else None
    if memory is None or not isinstance(external, str) or not external:
        raise InputError(
            f"source action {row.id}: its memory is gone from memaudit (erased "
            "or purged); nothing to carry"
        )
    wanted = "quarantined" if row.action == "quarantine" else None
    if (wanted is not None and memory.status != wanted) or (
        wanted is None and memory.status == "quarantined"
    ):
        raise InputError(
            f"source action {row.id}: the memory is {memory.status} in memaudit "
            f"now, so a {row.action} would undo the later decision; quarantine or restore "
            "the memory again instead"
        )
    return external


def retry_action(db: Database, action_id: int, *, actor: str) -> None:
    """Put a failed action back in the queue (attempts reset).

    A failed quarantine or restore takes its item from the memory again (failed rows keep
    no external id), unless memaudit's decision changed since.

    Raises:
        NotFoundError: no such row.
        InputError: it is not failed, its memory is gone, or a later decision replaced it.
    """
    _operator_change(db, action_id, actor, retry=True)


def cancel_action(db: Database, action_id: int, *, actor: str) -> None:
    """Give up a failed or pending action; its subject or external id is cleared.

    Raises:
        NotFoundError: no such row.
        InputError: it is done or cancelled already.
    """
    _operator_change(db, action_id, actor, retry=False)
