"""A scan run's bookkeeping: run and shard states, dispatch modes, closing a run.

A run is split into shards; each shard's counts are committed with the batch they describe
(``scan_shards``), and :func:`close_run` sums them into the run's row, writes the
watermark of a completed full or incremental run, appends ``scan.finished`` to the audit
log and logs the one canonical line per scan. Used by the scanner, by the recovery of
runs whose process died (:mod:`auditor.scan.stale`) and by the replicas' queue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    "OPEN_STATUSES",
    "ScanSummary",
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
#: Finding statuses that a re-scan can still resolve.
OPEN_STATUSES = (FindingStatus.OPEN.value, FindingStatus.ACKNOWLEDGED.value)

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


@dataclass
class ScanSummary:
    """What one scan did (for a sharded run: the totals over its shards)."""

    run_id: int
    mode: str
    rule_pack_hash: str
    memories_scanned: int = 0
    subjects_scanned: int = 0
    findings_new: int = 0
    findings_seen: int = 0
    findings_reopened: int = 0
    findings_resolved: int = 0
    findings_allowed: int = 0
    actions: dict[str, int] = field(default_factory=dict)
    action_errors: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    error_count: int = 0
    by_rule: dict[str, dict[str, int]] = field(default_factory=dict)
    open_by_severity: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    complete: bool = False
    status: str = "running"
    shards_total: int = 1
    shards_done: int = 0
    shards_failed: list[int] = field(default_factory=list)

    def count(self, rule_id: str, what: str) -> None:
        """Count one event of ``what`` (new, seen, resolved) for a rule."""
        per = self.by_rule.setdefault(rule_id, {})
        per[what] = per.get(what, 0) + 1

    def counts(self) -> dict[str, Any]:
        """The additive part of the summary (what a batch adds to its shard's counts)."""
        data = self.as_dict()
        return {k: data[k] for k in (*SUMMED, "actions", "by_rule", "errors")}

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "run_id": self.run_id,
            "mode": self.mode,
            "status": self.status,
            "complete": self.complete,
            "shards": {
                "total": self.shards_total,
                "done": self.shards_done,
                "failed": list(self.shards_failed),
            },
            "rule_pack_hash": self.rule_pack_hash,
            "memories_scanned": self.memories_scanned,
            "subjects_scanned": self.subjects_scanned,
            "findings_new": self.findings_new,
            "findings_seen": self.findings_seen,
            "findings_reopened": self.findings_reopened,
            "findings_resolved": self.findings_resolved,
            "findings_allowed_by_consent": self.findings_allowed,
            "actions": self.actions,
            "action_errors": self.action_errors,
            "errors": self.errors,
            "error_count": self.error_count,
            "by_rule": self.by_rule,
            "open_by_severity": self.open_by_severity,
            "duration_s": round(self.duration_s, 3),
        }

    @classmethod
    def from_run(cls, run: ScanRun) -> ScanSummary:
        """The summary recorded for a run (its totals over the shards committed so far)."""
        counts = run.counts or {}
        shards = counts.get("shards") or {}
        summary = cls(run.id, run.mode, run.rule_pack_hash or "")
        for name in SUMMED:
            attr = "findings_allowed" if name == "findings_allowed_by_consent" else name
            setattr(summary, attr, int(counts.get(name) or 0))
        summary.actions = dict(counts.get("actions") or {})
        summary.by_rule = dict(counts.get("by_rule") or {})
        summary.open_by_severity = dict(counts.get("open_by_severity") or {})
        summary.errors = list((run.errors or {}).get("first") or [])
        summary.duration_s = float(run.duration_s or 0.0)
        summary.status = run.status
        summary.complete = run.status == "completed"
        summary.shards_total = int(shards.get("total") or run.shard_count or 1)
        summary.shards_done = int(shards.get("done") or 0)
        summary.shards_failed = list(shards.get("failed") or [])
        return summary


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
        .where(Finding.status.in_(OPEN_STATUSES))
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
