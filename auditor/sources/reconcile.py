"""After every sync: does the source hold what memaudit decided? (issue 11, item 3)

A write-back (:mod:`auditor.sources.outbox`) can fail (the application holds mem0's local
qdrant path, the database is down) or be undone at the source (the application writes the
item again). memaudit never assumes: each completed sync compares, for every memory of the
source that memaudit governs, the decision with what the pull just read
(``extra.source_status``, which every connector sets):

* a memory memaudit **quarantined** that the source still serves (``live`` / ``expired``)
  is **drift**: the write-back is queued again (unless one waits already), the memory is
  flagged ``extra.write_back`` (:mod:`auditor.sources.writeback`: "held in memaudit, still live
  in the source"), and a finding ``MA-SRC-005`` (high) is opened for the officer;
* a memory memaudit **restored** whose source still withholds it (``quarantined``) is drift
  the same way (the restore is queued again);
* once the source holds the decision, the flag is dropped and the finding is resolved by
  ``memaudit-sync`` ("converged");
* items of **erased** subjects that the source still yields (the importer refuses them) are
  counted as ``erased_still_in_source``: an erasure row for the source is failed or was
  cancelled; the count is in the sync report, the metric and the audit event;
* text the source holds that no owner can be found for (``extra.unattributed``, e.g. mem0
  history of memories deleted before memaudit's first sync) gets a finding ``MA-SRC-006``
  (medium) so an officer attributes or erases it.

These findings are raised by the sync, not by a rule of the pack (a rule sees one memory,
not the outbox): scans leave them alone; the sync resolves them. Their evidence holds no
text: the reason, the source, the action and counts only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session
from ulid import ULID

from auditor.lifecycle import audit_log
from auditor.scan.findings import fingerprint
from auditor.sources.outbox import CANCELLED, FAILED, PENDING, write_back_sources
from auditor.sources.writeback import KEY, LABELS, clear_write_back, mark_write_back
from auditor.store.db import Database
from auditor.store.models import Finding, FindingMemory, FindingStatus, Memory, SourceAction
from auditor.store.types import utcnow

__all__ = [
    "DRIFT_RULE",
    "UNATTRIBUTED_RULE",
    "Reconciliation",
    "count_erased_refusals",
    "reconcile",
]

log = structlog.get_logger(__name__)

ACTOR = "memaudit-sync"
DRIFT_RULE = "MA-SRC-005"
UNATTRIBUTED_RULE = "MA-SRC-006"
_SERVED = ("live", "expired")
_CHUNK = 500
_OPEN = (FindingStatus.OPEN.value, FindingStatus.ACKNOWLEDGED.value)
_ERASED_MARKS = ("was erased; it is not re-imported", "is about an erased subject")


@dataclass
class Reconciliation:
    """What one reconciliation found (counts only)."""

    checked: int = 0
    drift: dict[str, int] = field(default_factory=dict)
    requeued: int = 0
    converged: int = 0
    unattributed: int = 0
    findings_opened: int = 0
    findings_resolved: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


def count_erased_refusals(errors: Sequence[str]) -> int:
    """Items of erased subjects (or erased memories) the source still yielded."""
    return sum(1 for e in errors if any(mark in e for mark in _ERASED_MARKS))


def _prefix(name: str) -> str:
    return f"src_{name[:40]}_"  # auditor.sources.live.base.memory_id_for


def reconcile(
    db: Database, name: str, *, errors: Sequence[str] = (), full: bool = True
) -> Reconciliation:
    """Compare the source's state (as just pulled) with memaudit's decisions; act on drift.

    Args:
        db: the store.
        name: the source (its pull completed).
        errors: the sync's error messages (erased items the source still holds).
        full: the pull read every item (unattributed findings are resolved only then).
    """
    out = Reconciliation()
    erased = count_erased_refusals(errors)
    if erased:
        out.drift["erased_still_in_source"] = erased
    with db.session() as session:
        takes_write_back = name in write_back_sources(session, db.settings)
    ids: list[str] = []
    with db.session() as session:
        rows = session.execute(
            select(Memory.memory_id, Memory.status, Memory.status_source, Memory.extra).where(
                Memory.memory_id.startswith(_prefix(name), autoescape=True)
            )
        ).all()
    for mid, status, status_source, extra in rows:
        extra = extra or {}
        if extra.get("source_name") != name:
            continue
        if (
            (status == "quarantined" and status_source == "memaudit")
            or KEY in extra
            or extra.get("unattributed") is True
        ):
            ids.append(mid)
    for start in range(0, len(ids), _CHUNK):
        with db.write() as session:
            memories = session.scalars(
                select(Memory).where(Memory.memory_id.in_(ids[start : start + _CHUNK]))
            ).all()
            for memory in memories:
                _check(session, db, name, memory, takes_write_back, full, out)
    if full:
        _resolve_attributed(db, name, out)
    if out.drift or out.converged or out.findings_opened or out.findings_resolved:
        with db.write() as session:
            audit_log.append(
                session,
                actor=ACTOR,
                action="source.reconciled",
                target_type="source",
                target_ids=[name],
                details=out.as_dict(),
                key=_key(db),
            )
        log.info("source_reconciled", source=name, **out.as_dict())
    return out


def _resolve_attributed(db: Database, name: str, out: Reconciliation) -> None:
    """Resolve MA-SRC-006 of memories that found an owner, or that the source let go."""
    with db.write() as session:
        found = session.execute(
            select(Finding, Memory)
            .join(FindingMemory, FindingMemory.finding_id == Finding.finding_id)
            .join(Memory, Memory.memory_id == FindingMemory.memory_id)
            .where(
                Finding.rule_id == UNATTRIBUTED_RULE,
                Finding.status.in_(_OPEN),
                Memory.memory_id.startswith(_prefix(name), autoescape=True),
            )
        ).all()
        for finding, memory in found:
            extra = memory.extra or {}
            if extra.get("unattributed") is True and extra.get("source_status") != "gone":
                continue
            finding.status = FindingStatus.RESOLVED.value
            finding.resolved_by, finding.resolved_at = ACTOR, utcnow()
            finding.resolution = "the source text has an owner now, or the source let it go"
            out.findings_resolved += 1


def _key(db: Database) -> bytes | None:
    key = db.settings.audit_hmac_key
    return None if key is None else key.get_secret_value().encode("utf-8")


def _check(
    session: Session,
    db: Database,
    name: str,
    memory: Memory,
    takes_write_back: bool,
    full: bool,
    out: Reconciliation,
) -> None:
    extra = dict(memory.extra or {})
    held = extra.get("source_status")
    flag = extra.get(KEY) if isinstance(extra.get(KEY), dict) else None
    if extra.get("unattributed") is True and held != "gone":
        out.unattributed += 1
        _open_finding(session, db, UNATTRIBUTED_RULE, memory, _unattributed_evidence(name), out)
    wanted: str | None = None
    if memory.status == "quarantined" and memory.status_source == "memaudit":
        wanted = "quarantine"
    elif flag is not None and flag.get("action") == "restore":
        wanted = "restore" if memory.status != "quarantined" else None
    if wanted is None:
        if flag is not None:
            clear_write_back(memory)  # the decision changed: nothing to carry any more
        return
    out.checked += 1
    drift = held in _SERVED if wanted == "quarantine" else held == "quarantined"
    if not drift or held == "gone":
        if flag is not None or _has_open(session, DRIFT_RULE, memory):
            clear_write_back(memory)
            out.converged += 1
            _resolve(
                session, db, DRIFT_RULE, memory, "converged: the source holds the decision", out
            )
        return
    out.drift[wanted] = out.drift.get(wanted, 0) + 1
    if not takes_write_back:
        mark_write_back(memory, wanted, "drift")
        _open_finding(session, db, DRIFT_RULE, memory, _drift_evidence(name, wanted, 0), out)
        return
    waiting = session.scalars(
        select(SourceAction)
        .where(
            SourceAction.memory_id == memory.memory_id,
            SourceAction.source == name,
            SourceAction.action.in_(tuple(LABELS)),
            SourceAction.status.in_((PENDING, FAILED)),
        )
        .order_by(SourceAction.id)
    ).all()
    if any(r.status == PENDING and r.action == wanted for r in waiting):
        attempts = max(r.attempts for r in waiting if r.status == PENDING and r.action == wanted)
        mark_write_back(memory, wanted, PENDING, attempts=attempts)
        if attempts:
            _open_finding(
                session, db, DRIFT_RULE, memory, _drift_evidence(name, wanted, attempts), out
            )
        return
    external = memory.external_id or extra.get("external_id")
    if not isinstance(external, str) or not external:
        mark_write_back(memory, wanted, "drift")
        _open_finding(session, db, DRIFT_RULE, memory, _drift_evidence(name, wanted, 0), out)
        return
    attempts = sum(r.attempts for r in waiting)
    for r in waiting:
        r.status, r.external_id, r.done_at = CANCELLED, None, utcnow()
        r.error = "superseded: queued again after the source was seen out of step"
    session.add(
        SourceAction(
            source=name,
            action=wanted,
            memory_id=memory.memory_id,
            external_id=external,
            status=PENDING,
            attempts=0,
            result={"requeued_after_drift": True},
        )
    )
    out.requeued += 1
    mark_write_back(memory, wanted, "drift", attempts=attempts)
    _open_finding(session, db, DRIFT_RULE, memory, _drift_evidence(name, wanted, attempts), out)


def _drift_evidence(name: str, action: str, attempts: int) -> dict[str, Any]:
    return {
        "detector": "source_sync",
        "entities": ["write_back_drift"],
        "score": 1.0,
        "reason": f"{action} decided in memaudit has not reached source {name}: {LABELS[action]}",
        "spans": [],
        "snippets": {},
        "details": {"source": name, "action": action, "attempts": attempts},
    }


def _unattributed_evidence(name: str) -> dict[str, Any]:
    return {
        "detector": "source_sync",
        "entities": ["unattributed_source_text"],
        "score": 1.0,
        "reason": f"source {name} keeps this text but no owner could be found for it: an "
        "erasure of its person cannot find it; attribute it or erase the unattributed subject",
        "spans": [],
        "snippets": {},
        "details": {"source": name},
    }


_SEVERITY = {DRIFT_RULE: "high", UNATTRIBUTED_RULE: "medium"}


def _has_open(session: Session, rule: str, memory: Memory) -> bool:
    fp = fingerprint(rule, [memory.memory_id], [memory.content_hash])
    found = session.scalar(select(Finding).where(Finding.fingerprint == fp))
    return found is not None and found.status in _OPEN


def _open_finding(
    session: Session,
    db: Database,
    rule: str,
    memory: Memory,
    evidence: dict[str, Any],
    out: Reconciliation,
) -> None:
    now = utcnow()
    fp = fingerprint(rule, [memory.memory_id], [memory.content_hash])
    evidence = {**evidence, "content_hashes": {memory.memory_id: memory.content_hash}}
    found = session.scalar(select(Finding).where(Finding.fingerprint == fp))
    if found is not None:
        found.last_seen = now
        found.evidence = evidence
        if found.status == FindingStatus.RESOLVED.value and found.resolved_by == ACTOR:
            found.status = FindingStatus.OPEN.value
            found.resolved_by = found.resolved_at = found.resolution = None
            out.findings_opened += 1
        return
    finding = Finding(
        finding_id=f"fnd_{ULID()}",
        fingerprint=fp,
        rule_id=rule,
        category="lifecycle",
        severity=_SEVERITY[rule],
        status=FindingStatus.OPEN.value,
        evidence=evidence,
        first_seen=now,
        last_seen=now,
        scan_run_id=None,
    )
    session.add(finding)
    session.add(FindingMemory(finding_id=finding.finding_id, memory_id=memory.memory_id))
    out.findings_opened += 1
    audit_log.append(
        session,
        actor=ACTOR,
        action="finding.opened",
        target_type="finding",
        target_ids=[finding.finding_id],
        details={"rule_id": rule, "memories": 1},
        key=_key(db),
    )


def _resolve(
    session: Session, db: Database, rule: str, memory: Memory, why: str, out: Reconciliation
) -> None:
    fp = fingerprint(rule, [memory.memory_id], [memory.content_hash])
    found = session.scalar(select(Finding).where(Finding.fingerprint == fp))
    if found is None or found.status not in _OPEN:
        return
    found.status = FindingStatus.RESOLVED.value
    found.resolved_by, found.resolved_at, found.resolution = ACTOR, utcnow(), why
    out.findings_resolved += 1
    audit_log.append(
        session,
        actor=ACTOR,
        action="finding.auto_resolved",
        target_type="finding",
        target_ids=[found.finding_id],
        details={"rule_id": rule, "reason": why},
        key=_key(db),
    )
