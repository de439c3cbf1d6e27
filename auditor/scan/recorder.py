"""Recording what a batch's hits mean: findings deduplicated by fingerprint, redacted
evidence, automatic actions, and the findings a re-scan no longer sees resolved.

A :class:`FindingRecorder` belongs to one :class:`~auditor.scan.scanner.Scanner` and is
called once per batch, inside the batch's write transaction (the caller's ``commit``
hook runs there too, so the shard's cursor and counts commit with the findings they
describe). Evidence is built before the write transaction opens; it is a redaction of the
memory, never a copy of it (:mod:`auditor.scan.evidence`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session, selectinload
from ulid import ULID

from auditor.detectors.base import Detection, MemoryView
from auditor.errors import LifecycleError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.rulepack.engine import Engine, Hit
from auditor.rulepack.pack import Rule
from auditor.scan.evidence import EvidenceMasker, evidence_for
from auditor.scan.findings import fingerprint
from auditor.scan.runs import (
    ACTOR,
    OPEN_STATUSES,
    ScanSummary,
)
from auditor.store.db import Database
from auditor.store.models import (
    Finding,
    FindingMemory,
    FindingStatus,
    Memory,
    MemoryStatus,
)

__all__ = ["FindingRecorder"]

#: Categories whose own spans are masked in the evidence (the value is the finding).
_MASKED_CATEGORIES = frozenset({"sensitive", "secret"})

log = structlog.get_logger(__name__)


class FindingRecorder:
    """Writes one scanner's findings and actions (see the module docstring).

    Args:
        db: the store.
        engine: the scanner's rule engine (its kept detections feed the evidence masker).
        masker: the evidence masker.
        rules_by_id: the active rules by id.
        subject_rule_ids: the ids of the rules that compare memories of one subject.
    """

    def __init__(
        self,
        db: Database,
        engine: Engine,
        masker: EvidenceMasker,
        rules_by_id: dict[str, Rule],
        subject_rule_ids: frozenset[str],
    ) -> None:
        self.db = db
        self.settings = db.settings
        self.engine = engine
        self.masker = masker
        self.rules_by_id = rules_by_id
        self.subject_rule_ids = subject_rule_ids

    def record(
        self,
        run_id: int,
        hits: Sequence[Hit],
        views: dict[str, MemoryView],
        evaluated_single: set[str],
        focus: frozenset[str] | None,
        now: datetime,
        summary: ScanSummary,
        commit: Callable[[Session], None] | None = None,
    ) -> None:
        merged = _merge(hits, views)
        key = lifecycle.audit_key(self.settings)
        evidence = self._new_evidence(merged, views)  # before the write: no lock held
        with self.db.write() as session:
            existing = (
                {f.fingerprint: f for f in _chunked_select(session, list(merged))} if merged else {}
            )
            opened: list[_NewFinding] = []
            acts: list[tuple[Rule, Detection, _NewFinding]] = []
            for fp, (rule, detections) in merged.items():
                found = existing.get(fp)
                if found is not None:
                    _seen_again(session, found, rule, run_id, now, summary, key)
                    continue
                new = self._new_finding(run_id, fp, rule, detections, views, now, evidence.get(fp))
                opened.append(new)
                if new.row["status"] == FindingStatus.SUPPRESSED.value:
                    summary.findings_allowed += 1
                    summary.count(rule.id, "allowed")
                else:
                    summary.findings_new += 1
                    summary.count(rule.id, "new")
                    acts.append((rule, detections[0], new))
            # The actions first (they name the findings by id, and their outcome goes into
            # the evidence), then the batch's new findings in one bulk insert.
            touched = self._act_all(session, acts, summary)
            _insert_new(session, opened)
            _stamp_changed(session, touched, now)
            audit_log.append_chunked(
                session,
                actor=ACTOR,
                action="finding.opened",
                target_type="finding",
                target_ids=[new.finding_id for new in opened],
                details={"scan_run": run_id},
                key=key,
            )
            self._auto_resolve(
                session,
                run_id,
                set(merged),
                views,
                evaluated_single,
                focus,
                now,
                summary,
            )
            if commit is not None:
                commit(session)  # e.g. the shard's cursor: all of it commits, or none

    def _evidence(
        self, rule: Rule, detections: list[Detection], views: dict[str, MemoryView]
    ) -> dict[str, Any]:
        masked = rule.category in _MASKED_CATEGORIES or rule.detector == "source_hygiene"
        return evidence_for(
            detections, views, mask_spans=masked, masker=self.masker, known=self.engine.kept
        )

    def _new_evidence(
        self, merged: dict[str, tuple[Rule, list[Detection]]], views: dict[str, MemoryView]
    ) -> dict[str, dict[str, Any]]:
        """Evidence of the findings not yet stored, built outside the write transaction
        (masking runs detectors over each snippet's window: no lock is held meanwhile)."""
        if not merged:
            return {}
        fps = list(merged)
        known: set[str] = set()
        with self.db.session() as session:
            for start in range(0, len(fps), 500):
                chunk = fps[start : start + 500]
                known.update(
                    session.scalars(
                        select(Finding.fingerprint).where(Finding.fingerprint.in_(chunk))
                    )
                )
        return {
            fp: self._evidence(rule, detections, views)
            for fp, (rule, detections) in merged.items()
            if fp not in known
        }

    def _new_finding(
        self,
        run_id: int,
        fp: str,
        rule: Rule,
        detections: list[Detection],
        views: dict[str, MemoryView],
        now: datetime,
        evidence: dict[str, Any] | None = None,
    ) -> _NewFinding:
        """A new finding's row and memory links, inserted with the batch (:func:`_insert_new`)."""
        allowed = any(d.details.get("allowed_by_consent") for d in detections)
        if evidence is None:  # a finding that was not new when evidence was built: rare
            evidence = self._evidence(rule, detections, views)
        finding_id = f"fnd_{ULID()}"
        row: dict[str, Any] = {
            "finding_id": finding_id,
            "fingerprint": fp,
            "rule_id": rule.id,
            "category": rule.category,
            "severity": rule.severity,
            "status": FindingStatus.SUPPRESSED.value if allowed else FindingStatus.OPEN.value,
            "first_seen": now,
            "last_seen": now,
            "scan_run_id": run_id,
            "resolution": (
                "allowed: the subject gave explicit consent for this category" if allowed else None
            ),
            "resolved_by": ACTOR if allowed else None,
            "resolved_at": now if allowed else None,
        }
        links: list[dict[str, Any]] = []
        seen: set[str] = set()
        for pos, mid in enumerate(detections[0].memory_ids):
            if mid in seen or mid not in views:
                continue
            seen.add(mid)
            links.append({"finding_id": finding_id, "memory_id": mid, "position": pos})
        return _NewFinding(finding_id, row, links, evidence)

    def _act_all(
        self,
        session: Session,
        acts: Sequence[tuple[Rule, Detection, _NewFinding]],
        summary: ScanSummary,
    ) -> list[str]:
        """Apply the new findings' automatic actions in order; the memories they changed.

        Quarantines and expiries are checked one after another, each seeing those before
        it (a memory an earlier finding takes out is not taken out twice: that finding's
        action is "not applied", as it always was), and written together
        (:func:`auditor.lifecycle.machine.transition_many`: one flush and one audit append
        for the batch instead of a savepoint, a flush and an append each). A supersede
        writes what was planned before it first. Should the joint write fail, the planned
        actions are applied one by one in savepoints, which says which one failed.
        """
        held = _load_acted_on(session, acts)  # kept referenced: the map is weak
        touched: list[str] = []
        planned: dict[str, str] = {}  # memory id -> the status the batch gives it
        batch: list[_TakeOut] = []
        for rule, detection, finding in acts:
            if rule.action == "flag":
                continue
            if rule.action not in _TAKE_OUT:
                touched += self._write_take_outs(session, batch, summary)
                batch, planned = [], {}
                touched += self._supersede(session, rule, detection, finding, summary)
                continue
            plan = _TakeOut(rule, finding, list(dict.fromkeys(detection.memory_ids)))
            try:
                for mid in plan.memory_ids:
                    lifecycle.check_transition(
                        session, mid, plan.to_status, status=planned.get(mid)
                    )
            except LifecycleError as exc:
                _not_applied(rule, finding, exc, summary)
                continue
            planned.update(dict.fromkeys(plan.memory_ids, plan.to_status))
            batch.append(plan)
        touched += self._write_take_outs(session, batch, summary)
        del held
        return touched

    def _write_take_outs(
        self, session: Session, batch: list[_TakeOut], summary: ScanSummary
    ) -> list[str]:
        if not batch:
            return []
        items = [(mid, p.to_status, p.reason) for p in batch for mid in p.memory_ids]
        try:
            with session.begin_nested():
                lifecycle.transition_many(session, self.settings, items, actor=ACTOR)
        except LifecycleError:
            # not expected (each was checked): one by one, so that the one that fails is named
            touched: list[str] = []
            for plan in batch:
                touched += self._take_out(session, plan, summary)
            return touched
        for plan in batch:
            _applied(plan.rule, plan.finding, summary)
        return [mid for plan in batch for mid in plan.memory_ids]

    def _take_out(self, session: Session, plan: _TakeOut, summary: ScanSummary) -> list[str]:
        """One finding's quarantine or expiry in a savepoint of its own (the slow path)."""
        fn = lifecycle.quarantine if plan.rule.action == "quarantine" else lifecycle.expire
        try:
            for mid in plan.memory_ids:
                lifecycle.check_transition(session, mid, plan.to_status)
            with session.begin_nested():
                for mid in plan.memory_ids:
                    fn(session, self.settings, mid, actor=ACTOR, reason=plan.reason)
        except LifecycleError as exc:
            _not_applied(plan.rule, plan.finding, exc, summary)
            return []
        _applied(plan.rule, plan.finding, summary)
        return list(plan.memory_ids)

    def _supersede(
        self,
        session: Session,
        rule: Rule,
        detection: Detection,
        finding: _NewFinding,
        summary: ScanSummary,
    ) -> list[str]:
        """A new finding's ``supersede`` action; the memories it changed (none: failed)."""
        # {"action": "supersede", "supersede": newer id, "superseded": older id}
        plan = detection.details.get("suggested_resolution") or {}
        old, new = plan.get("superseded"), plan.get("supersede")
        try:
            if plan.get("action") != "supersede" or not (old and new):
                raise LifecycleError(
                    "left for a reviewer: " + str(plan.get("why") or "no safe resolution")
                )
            with session.begin_nested():
                lifecycle.supersede(session, self.settings, str(old), str(new), actor=ACTOR)
        except LifecycleError as exc:
            _not_applied(rule, finding, exc, summary)
            return []
        _applied(rule, finding, summary)
        return [str(old), str(new)]

    def _auto_resolve(
        self,
        session: Session,
        run_id: int,
        seen: set[str],
        views: dict[str, MemoryView],
        evaluated_single: set[str],
        focus: frozenset[str] | None,
        now: datetime,
        summary: ScanSummary,
    ) -> None:
        """Resolve open findings that this scan re-evaluated and did not find again.

        A per-memory rule's finding was re-evaluated when its memory was scanned. A subject
        rule's finding was re-evaluated when its memories were loaded and, in an incremental
        scan, one of them changed (pairs of unchanged memories wait for the next full scan).
        """
        ids = list(views) if focus is None else list(focus)
        if not ids:
            return
        candidates = _open_unseen(session, ids, seen)
        key = lifecycle.audit_key(self.settings)
        resolved: list[str] = []
        for f in candidates.values():
            if f.fingerprint in seen:
                continue
            resolution = self._resolution(f, views, evaluated_single, focus)
            if resolution is None:
                continue
            f.status = FindingStatus.RESOLVED.value
            f.resolved_by = ACTOR
            f.resolved_at = now
            f.resolution = resolution
            resolved.append(f.finding_id)
            summary.findings_resolved += 1
            summary.count(f.rule_id, "resolved")
        audit_log.append_chunked(
            session,
            actor=ACTOR,
            action="finding.auto_resolved",
            target_type="finding",
            target_ids=resolved,
            details={"scan_run": run_id},
            key=key,
        )

    def _resolution(
        self,
        f: Finding,
        views: dict[str, MemoryView],
        evaluated_single: set[str],
        focus: frozenset[str] | None,
    ) -> str | None:
        """Why an open finding this batch did not see again is resolved, or None to keep it."""
        rule = self.rules_by_id.get(f.rule_id)
        if rule is None:
            return None  # rule removed or deprecated: leave the finding for a reviewer
        mids = [link.memory_id for link in f.memories]
        if rule.id in self.subject_rule_ids:
            evaluated = all(m in views for m in mids) and (
                focus is None or not focus.isdisjoint(mids)
            )
        else:
            evaluated = all(m in evaluated_single for m in mids)
        if not evaluated:
            return None
        hashes = (f.evidence or {}).get("content_hashes", {})
        changed = any(views[m].content_hash != hashes.get(m) for m in mids if m in views)
        in_scope = all(
            rule.applies(views[m].trust_tier, views[m].category, views[m].kind, views[m].status)
            for m in mids
            if m in views
        )
        if not (changed or in_scope):
            return None  # e.g. quarantined by an action: stays open for a reviewer
        if changed:
            return "memory changed; the rule no longer fires"
        return "the rule no longer fires on this memory"


def _open_unseen(session: Session, ids: Sequence[str], seen: set[str]) -> dict[str, Finding]:
    """The open findings on memories ``ids`` whose fingerprint is not in ``seen``.

    First the ids of open findings on these memories that this batch did not see again (a
    light query), then the few full findings among them.
    """
    unseen: set[str] = set()
    for start in range(0, len(ids), 500):
        # status is filtered here, not in SQL: with it in the WHERE clause, SQLite (no
        # statistics) drives the join from the status index and tests the id list per row
        for finding_id, fp, status in session.execute(
            select(Finding.finding_id, Finding.fingerprint, Finding.status)
            .join(FindingMemory, FindingMemory.finding_id == Finding.finding_id)
            .where(FindingMemory.memory_id.in_(ids[start : start + 500]))
        ):
            if status in OPEN_STATUSES and fp not in seen:
                unseen.add(finding_id)
    candidates: dict[str, Finding] = {}
    pending = sorted(unseen)
    for start in range(0, len(pending), 500):
        for f in session.scalars(
            select(Finding)
            .options(selectinload(Finding.memories))
            .where(Finding.finding_id.in_(pending[start : start + 500]))
        ):
            candidates[f.finding_id] = f
    return candidates


#: Ids per ``IN (...)`` list (SQLite allows 32,766 bound parameters; stay far below).
_IN_CHUNK = 500


#: The automatic actions that take a memory out of retrieval (written together per batch).
_TAKE_OUT = {"quarantine": MemoryStatus.QUARANTINED.value, "expire": MemoryStatus.EXPIRED.value}


@dataclass
class _NewFinding:
    """A finding not stored yet: its row (without the evidence), its memory links and its
    evidence, which the outcome of its automatic action is added to before the insert."""

    finding_id: str
    row: dict[str, Any]
    links: list[dict[str, Any]]
    evidence: dict[str, Any]


def _insert_new(session: Session, new: Sequence[_NewFinding]) -> None:
    """The batch's new findings, then their memory links: two bulk inserts."""
    if not new:
        return
    session.execute(insert(Finding), [{**n.row, "evidence": n.evidence} for n in new])
    links = [link for n in new for link in n.links]
    if links:
        session.execute(insert(FindingMemory), links)


@dataclass(frozen=True)
class _TakeOut:
    """A new finding's planned quarantine or expiry of its memories."""

    rule: Rule
    finding: _NewFinding
    memory_ids: list[str]

    @property
    def to_status(self) -> str:
        return _TAKE_OUT[self.rule.action]

    @property
    def reason(self) -> str:
        return f"rule {self.rule.id}, finding {self.finding.finding_id}"


def _applied(rule: Rule, finding: _NewFinding, summary: ScanSummary) -> None:
    summary.actions[rule.action] = summary.actions.get(rule.action, 0) + 1
    finding.evidence = {**finding.evidence, "action": {"wanted": rule.action, "applied": True}}


def _not_applied(
    rule: Rule, finding: _NewFinding, exc: LifecycleError, summary: ScanSummary
) -> None:
    summary.action_errors += 1
    finding.evidence = {
        **finding.evidence,
        "action": {"wanted": rule.action, "applied": False, "why": str(exc)[:300]},
    }


def _load_acted_on(
    session: Session, acts: Sequence[tuple[Rule, Detection, _NewFinding]]
) -> list[Memory]:
    """Load, in a few queries, every memory the batch's automatic actions will change.

    The lifecycle reads each memory it changes by primary key; loaded here (and kept
    referenced by the caller: the session's identity map holds objects weakly), each of
    those reads is answered from the session instead of one query a memory.
    """
    ids = list(
        dict.fromkeys(
            mid
            for rule, detection, _ in acts
            if rule.action in ("quarantine", "expire", "supersede")
            for mid in detection.memory_ids
        )
    )
    loaded: list[Memory] = []
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = ids[start : start + _IN_CHUNK]
        loaded += session.scalars(select(Memory).where(Memory.memory_id.in_(chunk)))
    return loaded


def _chunked_select(session: Session, fingerprints: list[str]) -> Iterator[Finding]:
    for start in range(0, len(fingerprints), _IN_CHUNK):
        yield from session.scalars(
            select(Finding).where(Finding.fingerprint.in_(fingerprints[start : start + _IN_CHUNK]))
        )


def _merge(
    hits: Sequence[Hit], views: dict[str, MemoryView]
) -> dict[str, tuple[Rule, list[Detection]]]:
    """A batch's hits by finding fingerprint (rule, memories and their content), in order."""
    merged: dict[str, tuple[Rule, list[Detection]]] = {}
    for h in hits:
        ids = h.detection.memory_ids
        fp = fingerprint(h.rule.id, ids, [views[i].content_hash if i in views else "" for i in ids])
        if fp in merged:
            merged[fp][1].append(h.detection)
        else:
            merged[fp] = (h.rule, [h.detection])
    return merged


def _seen_again(
    session: Session,
    found: Finding,
    rule: Rule,
    run_id: int,
    now: datetime,
    summary: ScanSummary,
    key: bytes | None,
) -> None:
    """A finding this scan met again: seen now; reopened if the scan itself resolved it."""
    found.last_seen = now
    found.scan_run_id = run_id
    if found.status == FindingStatus.RESOLVED.value and found.resolved_by == ACTOR:
        found.status = FindingStatus.OPEN.value
        found.resolved_by = found.resolved_at = found.resolution = None
        summary.findings_reopened += 1
        audit_log.append(
            session,
            actor=ACTOR,
            action="finding.reopened",
            target_type="finding",
            target_ids=[found.finding_id],
            details={"rule": rule.id, "scan_run": run_id},
            key=key,
        )
    summary.findings_seen += 1
    summary.count(rule.id, "seen")


def _stamp_changed(session: Session, touched: Sequence[str], now: datetime) -> None:
    """The scan's own actions are not new content: stamp them with the scan's time so the
    next incremental scan (watermark = this scan's time) skips them."""
    for start in range(0, len(touched), _IN_CHUNK):
        session.execute(
            update(Memory)
            .where(Memory.memory_id.in_(touched[start : start + _IN_CHUNK]))
            .values(changed_at=now)
            .execution_options(synchronize_session=False)
        )
