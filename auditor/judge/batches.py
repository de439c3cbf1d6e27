"""The LLM judge's batch mode in the daemon: submit deferred pairs, collect verdicts later.

With ``MEMAUDIT_JUDGE_BATCH=1`` scans never wait for the model: a pair the judge has no
verdict for is deferred (:meth:`auditor.judge.llm.Judge.judge_pair`). After each scan (or
shard) :func:`submit_deferred` sends the deferred pairs as one Anthropic Message Batch and
records its handle (memory ids and cache keys only, no text) in ``source_watermarks`` under
``judge_batch:<batch id>``. The daemon's ``judge_batches`` job calls :func:`collect`: each
ended batch's verdicts enter the judge's cache, its row is removed, and the subjects of the
judged memories are rescanned at once so the verdicts become findings (or resolve them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import structlog
from sqlalchemy import delete, select

from auditor.judge.llm import BatchHandle, JudgeUnavailable
from auditor.store.db import Database
from auditor.store.models import Memory, SourceWatermark
from auditor.store.types import utcnow

__all__ = ["PREFIX", "collect", "submit_deferred"]

log = structlog.get_logger(__name__)

PREFIX = "judge_batch:"


def submit_deferred(db: Database, judge: Any) -> str | None:
    """Submit the judge's deferred pairs as one batch and record its handle.

    Returns:
        The batch id, or None (no judge in batch mode, nothing deferred, or the API
        refused: the pairs are deferred again by the next scan that meets them).
    """
    if judge is None or not getattr(judge, "deferring", False):
        return None
    pairs = judge.take_deferred()
    if not pairs:
        return None
    try:
        handle: BatchHandle | None = judge.submit_batch(pairs)
    except JudgeUnavailable as exc:
        log.warning("judge_batch_not_submitted", pairs=len(pairs), error=str(exc))
        return None
    if handle is None:
        return None
    with db.write() as session:
        session.add(
            SourceWatermark(
                name=f"{PREFIX}{handle.batch_id}",
                position=handle.to_json(),
                updated_at=utcnow(),
                details={"status": handle.status, "requests": len(handle.requests)},
            )
        )
    return handle.batch_id


def collect(db: Database, judge: Any, rescan: Callable[[Sequence[str]], Any]) -> dict[str, int]:
    """Collect every recorded batch that has ended; rescan the subjects it judged.

    Args:
        db: the store.
        judge: the daemon's judge (its cache receives the verdicts).
        rescan: called once with the subjects to rescan (sorted, distinct).

    Returns:
        Counts: batches still pending, batches collected, verdicts, subjects rescanned.
    """
    with db.session() as session:
        rows = list(
            session.scalars(
                select(SourceWatermark).where(
                    SourceWatermark.name.startswith(PREFIX, autoescape=True)
                )
            )
        )
    pending = collected = verdicts = 0
    memory_ids: set[str] = set()
    for row in rows:
        handle = BatchHandle.from_json(str(row.position))
        try:
            outcome = judge.collect_batch(handle)
        except JudgeUnavailable as exc:
            log.warning("judge_batch_not_collected", batch_id=handle.batch_id, error=str(exc))
            pending += 1
            continue
        if outcome.status != "ended":
            pending += 1
            continue
        for a, b, _result in outcome.results.values():
            memory_ids.update((a, b))
        verdicts += len(outcome.results)
        collected += 1
        with db.write() as session:
            session.execute(delete(SourceWatermark).where(SourceWatermark.name == row.name))
    subjects: list[str] = []
    if memory_ids:
        ids = sorted(memory_ids)
        with db.session() as session:
            found: set[str] = set()
            for start in range(0, len(ids), 500):
                found.update(
                    session.scalars(
                        select(Memory.subject).where(Memory.memory_id.in_(ids[start : start + 500]))
                    )
                )
        subjects = sorted(found)
        if subjects:
            rescan(subjects)
    return {
        "batches_pending": pending,
        "batches_collected": collected,
        "verdicts": verdicts,
        "subjects_rescanned": len(subjects),
    }
