"""Scan runs left ``running`` by a process that is gone: found and closed honestly.

A ``memaudit scan`` killed with ``kill -9`` (or a machine that lost power) cannot close its
run; without this module the run would stay ``running`` forever in every listing. A run
records who coordinates it when it starts (``counts["owner"]``: host, pid, and the
process's start time, so a reused pid is not taken for the owner). At the start of every
scan run here and when the daemon takes the lead, in-process runs (``dispatch = inline``)
still ``running`` are checked:

* owner on this host: stale when no process with that pid and start time exists;
* owner on another host, or no owner recorded (runs of older versions): stale when nothing
  of it has shown life (the run's start, any shard's heartbeat, written with every batch)
  for ``stale_after`` seconds (default: the larger of 600 s and 10 x
  ``worker_stall_seconds``; a batch of very large subjects can take minutes).

A stale run is closed as ``interrupted`` with the totals of what its shards committed
(batches commit whole, so the totals are true), its unfinished shards go back to ``pending``
without an owner, and an audit event ``scan.interrupted`` names it. The watermark does not
move: the next incremental scan covers what the interrupted run did not finish.

Runs of the daemon (``daemon`` / ``queue`` dispatch) are not touched here: the next leader
resumes them from their shards' cursors (:mod:`auditor.daemon.runner`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import structlog
from sqlalchemy import func, select

from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.processes import alive_here, host_name
from auditor.scan.runs import DISPATCH_INLINE, SHARD_DONE, SHARD_FAILED, SHARD_PENDING, close_run
from auditor.store.models import ScanRun, ScanShard
from auditor.store.types import utcnow

if TYPE_CHECKING:
    from auditor.config import Settings
    from auditor.store.db import Database

__all__ = ["owner_gone", "reap_stale_runs"]

log = structlog.get_logger(__name__)

INTERRUPTED = "interrupted"


def _as_aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=utcnow().tzinfo)


def owner_gone(run: ScanRun, last_sign: datetime | None, now: datetime, stale_after: float) -> bool:
    """Whether the process that coordinates ``run`` is gone (see the module docstring)."""
    owner = (run.counts or {}).get("owner")
    if isinstance(owner, dict) and owner.get("host") == host_name():
        try:
            pid = int(owner.get("pid") or 0)
        except (TypeError, ValueError):
            pid = 0
        if pid > 0:
            return not alive_here(pid, str(owner.get("started") or ""))
    latest = _as_aware(last_sign or run.started_at)
    return now - latest > timedelta(seconds=stale_after)


def default_stale_after(worker_stall_seconds: float) -> float:
    """Seconds without a sign of life after which a run of another host is stale."""
    return max(600.0, 10.0 * worker_stall_seconds)


def reap_stale_runs(
    db: Database,
    settings: Settings,
    *,
    stale_after: float | None = None,
    without_owner: bool = True,
) -> list[tuple[int, str]]:
    """Close the in-process runs whose coordinating process is gone; returns (id, mode)s.

    Args:
        db: the store.
        settings: the settings (``worker_stall_seconds``, the audit key).
        stale_after: seconds without a sign of life for owners that cannot be checked
            directly (default: :func:`default_stale_after`).
        without_owner: also runs that recorded no owner (older versions); the daemon
            leaves those to its own recovery (it marks them ``abandoned``).
    """
    limit = (
        default_stale_after(settings.worker_stall_seconds) if stale_after is None else stale_after
    )
    now = utcnow()
    reaped: list[tuple[int, str]] = []
    with db.write() as session:
        runs = list(
            session.scalars(
                select(ScanRun).where(
                    ScanRun.status == "running", ScanRun.dispatch == DISPATCH_INLINE
                )
            )
        )
        for run in runs:
            if not without_owner and "owner" not in (run.counts or {}):
                continue
            last = session.scalar(
                select(func.max(ScanShard.heartbeat_at)).where(ScanShard.run_id == run.id)
            )
            if not owner_gone(run, last, now, limit):
                continue
            for row in session.scalars(select(ScanShard).where(ScanShard.run_id == run.id)):
                if row.status not in (SHARD_DONE, SHARD_FAILED):
                    row.status = SHARD_PENDING
                    row.owner = None
            session.flush()
            close_run(session, settings, run, INTERRUPTED)
            reaped.append((run.id, run.mode))
        if reaped:
            audit_log.append(
                session,
                actor="memaudit-scan",
                action="scan.interrupted",
                target_type="scan",
                target_ids=[str(i) for i, _ in reaped],
                details={"count": len(reaped), "why": "the scanning process is gone"},
                key=lifecycle.audit_key(settings),
            )
    for run_id, mode in reaped:
        log.warning("scan_run_interrupted", run_id=run_id, mode=mode, why="owner_gone")
    return reaped
