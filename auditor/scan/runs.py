"""A scan run's bookkeeping: run and shard states, dispatch modes, closing a run.

A run is split into shards; each shard's counts are committed with the batch they describe
(``scan_shards``), and :func:`close_run` sums them into the run's row, writes the
watermark of a completed full or incremental run, appends ``scan.finished`` to the audit
log and logs the one canonical line per scan. Used by the scanner, by the recovery of
runs whose process died (:mod:`auditor.scan.stale`) and by the replicas' queue.
"""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from auditor.config import Settings
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.rulepack.pack import SEVERITY_RANK
from auditor.store.models import Finding, FindingStatus, ScanRun, ScanShard, SourceWatermark
from auditor.store.types import utcnow
from auditor.vocab import SCAN_ACTOR

__all__ = [
    "ACTOR",
    "DISPATCH_DAEMON",
    "DISPATCH_INLINE",
    "DISPATCH_QUEUE",
    "MAX_ERRORS_KEPT",
    "SHARD_DONE",
    "SHARD_FAILED",
    "SHARD_PENDING",
    "SHARD_RUNNING",
    "SUMMED",
    "WATERMARK",
    "close_run",
    "merge_counts",
]

log = structlog.get_logger(__name__)

#: The watermark a completed full or incremental run moves (``source_watermarks``).
WATERMARK = "scan"
ACTOR = SCAN_ACTOR
#: Errors kept per run (the count goes on).
MAX_ERRORS_KEPT = 200
_OPEN = (FindingStatus.OPEN.value, FindingStatus.ACKNOWLEDGED.value)

#: Shard and run states.
SHARD_PENDING, SHARD_RUNNING, SHARD_DONE, SHARD_FAILED = "pending", "running", "done", "failed"
#: Who runs a run's shards: this process (CLI, library), the daemon in-process, or the queue.
DISPATCH_INLINE, DISPATCH_DAEMON, DISPATCH_QUEUE = "inline", "daemon", "queue"
#: Summary fields that are summed over batches and shards.
SUMMED = (
    "memories_scanned",
    "subjects_scanned",
    "findings_new",
    "findings_seen",
    "findings_reopened",
    "findings_resolved",
    "findings_allowed_by_consent",
    "action_errors",
    "error_count",
)


def merge_counts(into: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """Add ``more`` to ``into``: numbers summed, dicts merged the same way, lists joined."""
    out = dict(into)
    for key, value in more.items():
        have = out.get(key)
        if isinstance(value, bool) or value is None:
            out[key] = value
        elif isinstance(value, int | float):
            out[key] = (have if isinstance(have, int | float) else 0) + value
        elif isinstance(value, dict):
            out[key] = merge_counts(have if isinstance(have, dict) else {}, value)
        elif isinstance(value, list):
            out[key] = ((have if isinstance(have, list) else []) + value)[:MAX_ERRORS_KEPT]
        else:
            out[key] = value
    return out


def close_run(session: Session, settings: Settings, run: ScanRun, status: str) -> None:
    """In ``session``: write a run's totals (summed over its shards), end and watermark."""
    shards = list(session.scalars(select(ScanShard).where(ScanShard.run_id == run.id)))
    totals: dict[str, Any] = {}
    packs: set[str] = set()
    for row in shards:
        counts = dict(row.counts or {})
        packs.add(str(counts.pop("rule_pack_hash", run.rule_pack_hash)))
        counts.pop("failure", None)
        totals = merge_counts(totals, counts)
    rows = session.execute(
        select(Finding.severity, func.count())
        .where(Finding.status.in_(_OPEN))
        .group_by(Finding.severity)
    ).all()
    errors = list(totals.pop("errors", []))
    finished = utcnow()
    run.status = status
    run.finished_at = finished
    run.duration_s = max(0.0, (finished - run.started_at).total_seconds())
    run.counts = {
        **{k: totals.get(k, 0) for k in SUMMED},
        "actions": totals.get("actions", {}),
        "by_rule": totals.get("by_rule", {}),
        "open_by_severity": {
            s: int(n) for s, n in sorted(rows, key=lambda r: -SEVERITY_RANK.get(r[0], 0))
        },
        "shards": {
            "total": len(shards),
            "done": sum(1 for r in shards if r.status == SHARD_DONE),
            "failed": sorted(r.shard for r in shards if r.status == SHARD_FAILED),
        },
    }
    run.errors = {"first": errors[:50], "total": int(totals.get("error_count", 0))}
    if status == "completed" and run.mode in ("full", "incremental"):
        mark = session.get(SourceWatermark, WATERMARK)
        if mark is None:
            mark = SourceWatermark(name=WATERMARK)
            session.add(mark)
        mark.position = run.started_at.isoformat()
        mark.updated_at = finished
        # a run that saw two rule packs (rules changed mid-run) forces a full scan next
        mark.details = {
            "rule_pack_hash": run.rule_pack_hash if packs <= {run.rule_pack_hash} else "mixed",
            "scan_run": run.id,
        }
    audit_log.append(
        session,
        actor=ACTOR,
        action="scan.finished",
        target_type="scan",
        target_ids=[str(run.id)],
        details={
            "mode": run.mode,
            "status": status,
            "new": int(totals.get("findings_new", 0)),
            "resolved": int(totals.get("findings_resolved", 0)),
            "rule_pack_hash": run.rule_pack_hash,
            "shards": len(shards),
        },
        key=audit_key(settings),
    )
    log.info(  # the one canonical line per scan
        "scan_finished",
        run_id=run.id,
        mode=run.mode,
        status=status,
        shards=len(shards),
        memories=int(totals.get("memories_scanned", 0)),
        new=int(totals.get("findings_new", 0)),
        resolved=int(totals.get("findings_resolved", 0)),
        errors=int(totals.get("error_count", 0)),
        duration_s=round(run.duration_s, 3),
    )
