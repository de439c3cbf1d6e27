"""Import runs left ``running`` by a process that is gone: found and closed as interrupted.

An import killed with ``kill -9`` cannot close its run, which would then stay ``running`` in
every listing. :class:`auditor.sources.importer.Importer` writes its owner into the run when it
starts (``counts["owner"]``: host, pid and process start time, as scan runs do, see
:mod:`auditor.scan.stale`) and a ``counts["heartbeat"]`` with every batch it commits. At the
start of every import and when the daemon starts, :func:`reap_stale_imports` closes the
runs still ``running`` whose owner is gone:

* owner on this host: no process with that pid and start time exists;
* owner on another host, or no owner recorded (runs of older versions): no heartbeat (or
  start) for ``stale_after`` seconds (default :data:`DEFAULT_STALE_AFTER`).

A closed run gets status ``interrupted`` and a ``finished_at``; what its batches committed
stays (each batch commits whole, and the import is idempotent: running it again completes
it). One ``import.interrupted`` audit event names the runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

import structlog
from sqlalchemy import select

from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.scan.stale import owner_gone
from auditor.store.models import ImportRun
from auditor.store.types import utcnow

if TYPE_CHECKING:
    from auditor.store.db import Database

__all__ = ["DEFAULT_STALE_AFTER", "INTERRUPTED", "reap_stale_imports"]

log = structlog.get_logger(__name__)

INTERRUPTED = "interrupted"
#: Seconds without a heartbeat after which a run of another host is taken for dead.
DEFAULT_STALE_AFTER = 3600.0


def _heartbeat(run: ImportRun) -> datetime | None:
    value = (run.counts or {}).get("heartbeat")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def reap_stale_imports(
    db: Database, *, stale_after: float = DEFAULT_STALE_AFTER, actor: str = "memaudit"
) -> list[int]:
    """Close the ``running`` import runs whose process is gone; returns their ids.

    Args:
        db: the store.
        stale_after: seconds without a heartbeat for owners that cannot be checked directly.
        actor: recorded as the actor of the ``import.interrupted`` event.
    """
    now = utcnow()
    reaped: list[int] = []
    with db.write() as session:
        runs = list(session.scalars(select(ImportRun).where(ImportRun.status == "running")))
        for run in runs:
            if not owner_gone(cast(Any, run), _heartbeat(run), now, stale_after):
                continue
            run.status = INTERRUPTED
            run.finished_at = now
            run.errors = {"first": ["interrupted: the importing process is gone"], "total": 0}
            reaped.append(run.id)
        if reaped:
            audit_log.append(
                session,
                actor=actor,
                action="import.interrupted",
                target_type="import",
                target_ids=[str(i) for i in reaped],
                details={"count": len(reaped), "why": "the importing process is gone"},
                key=audit_key(db.settings),
            )
    for run_id in reaped:
        log.warning("import_run_interrupted", run_id=run_id, why="owner_gone")
    return reaped
