"""Findings: fingerprints, redacted evidence, listing and reviewer actions.

A finding is one rule firing on one memory (or a pair, a chain). Its fingerprint is a hash
of the rule id, the memory ids and their content hashes: re-scanning never duplicates a
finding, and a changed memory yields a new one. Evidence never becomes a second copy of
sensitive data: every span is masked and the rest of the snippet is scrubbed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from auditor import audit_log, lifecycle
from auditor.config import Settings
from auditor.detectors.base import Detection, MemoryView
from auditor.errors import InputError, InvalidTransitionError, NotFoundError
from auditor.logging import scrub
from auditor.store.db import Database
from auditor.store.models import Finding, FindingMemory, FindingStatus, Memory
from auditor.store.types import utcnow

__all__ = [
    "FINDING_FIELDS",
    "FindingFilter",
    "apply_review",
    "evidence_for",
    "fingerprint",
    "finding_to_dict",
    "iter_findings",
    "review",
]

FINDING_FIELDS = (
    "finding_id",
    "rule_id",
    "category",
    "severity",
    "status",
    "memory_ids",
    "evidence",
    "first_seen",
    "last_seen",
    "scan_run_id",
    "assignee",
    "resolution",
    "resolved_by",
    "resolved_at",
)
_SNIPPET = 160
#: characters masked and scrubbed beyond each edge of the shown window (then cut away)
_MARGIN = 96
STATUSES = tuple(s.value for s in FindingStatus)


def fingerprint(rule_id: str, memory_ids: Sequence[str], content_hashes: Sequence[str]) -> str:
    """sha256 of the rule id, the memory ids and their content hashes, in order."""
    payload = "\x1f".join([rule_id, *memory_ids, "\x1e", *content_hashes])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _redacted_snippet(fact: str, spans: list[tuple[int, int, str]]) -> str:
    """The fact around the first span, every span masked as [LABEL], the rest scrubbed.

    Only a window of the fact around the first span is masked and scrubbed (the part shown,
    plus a margin so that a value crossing the shown edge is scrubbed whole), so the cost
    does not grow with the length of the fact.
    """
    anchor = min(s for s, _, _ in spans) if spans else 0
    anchor = min(max(anchor, 0), len(fact))
    lo = max(0, anchor - _SNIPPET // 3 - _MARGIN)
    hi = min(len(fact), anchor + _SNIPPET + _MARGIN)
    pieces: list[str] = []
    cursor = lo
    for start, end, label in sorted(spans):
        if end <= lo or start >= hi:
            continue
        start, end = max(start, cursor), max(min(end, hi), cursor)
        pieces.append(scrub(fact[cursor:start]))
        if end > start:
            pieces.append(f"[{label.upper()}]")
        cursor = max(cursor, end)
    pieces.append(scrub(fact[cursor:hi]))
    masked = "".join(pieces)
    first = masked.find("[") if spans else 0
    begin = max(0, first - _SNIPPET // 3)
    snippet = masked[begin : begin + _SNIPPET]
    before = lo > 0 or begin > 0
    after = begin + _SNIPPET < len(masked) or hi < len(fact)
    return ("…" if before else "") + snippet + ("…" if after else "")


def evidence_for(
    detections: Sequence[Detection], views: dict[str, MemoryView], mask_spans: bool
) -> dict[str, Any]:
    """Evidence of one finding from its detections: what fired, where, a redacted snippet.

    Args:
        detections: the detections merged into this finding (same rule, same memories).
        views: the memories involved, by id.
        mask_spans: mask the detected spans (sensitive data, secrets); otherwise the span
            text may stay (an injected directive), still scrubbed of personal data.
    """
    first = detections[0]
    per_memory: dict[str, list[tuple[int, int, str]]] = {}
    for d in detections:
        for sp in d.spans:
            mid = sp.memory_id or d.memory_ids[0]
            per_memory.setdefault(mid, []).append((sp.start, sp.end, sp.label))
    snippets = {}
    for mid in first.memory_ids:
        view = views.get(mid)
        if view is None:
            continue
        spans = per_memory.get(mid, []) if mask_spans else []
        snippets[mid] = _redacted_snippet(view.fact, spans)
    details = {k: v for k, v in first.details.items() if k not in ("value", "text", "match")}
    return {
        "detector": first.detector,
        "entities": sorted({d.entity for d in detections}),
        "score": round(max(d.score for d in detections), 4),
        "reason": scrub(first.reason),
        "spans": [
            {"memory_id": mid, "start": s, "end": e, "label": label}
            for mid, spans in per_memory.items()
            for s, e, label in sorted(spans)
        ],
        "snippets": snippets,
        "details": details,
        "content_hashes": {
            mid: views[mid].content_hash for mid in first.memory_ids if mid in views
        },
    }


def finding_to_dict(f: Finding) -> dict[str, Any]:
    """A finding as a JSON-ready dict (the fields of DESIGN.md)."""
    return {
        "finding_id": f.finding_id,
        "rule_id": f.rule_id,
        "category": f.category,
        "severity": f.severity,
        "status": f.status,
        "memory_ids": [link.memory_id for link in sorted(f.memories, key=lambda x: x.position)],
        "evidence": f.evidence,
        "first_seen": f.first_seen.isoformat().replace("+00:00", "Z"),
        "last_seen": f.last_seen.isoformat().replace("+00:00", "Z"),
        "scan_run_id": f.scan_run_id,
        "assignee": f.assignee,
        "resolution": f.resolution,
        "resolved_by": f.resolved_by,
        "resolved_at": f.resolved_at.isoformat().replace("+00:00", "Z") if f.resolved_at else None,
    }


@dataclass(frozen=True)
class FindingFilter:
    """Which findings a listing shows (``status=None``: every status)."""

    status: str | None = "open"
    category: str | None = None
    rule_id: str | None = None
    subject: str | None = None
    severity: str | None = None

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise InputError(
                f"unknown finding status {self.status!r}; expected one of "
                f"{', '.join(STATUSES)} or all"
            )


def iter_findings(
    db: Database, flt: FindingFilter, limit: int | None = None, page: int = 1000
) -> Iterator[dict[str, Any]]:
    """Findings newest first, streamed page by page."""
    from sqlalchemy.orm import selectinload

    after: tuple[Any, str] | None = None
    left = limit
    while left is None or left > 0:
        size = page if left is None else min(page, left)
        with db.session() as session:
            q = select(Finding).options(selectinload(Finding.memories))
            if flt.status is not None:
                q = q.where(Finding.status == flt.status)
            if flt.category is not None:
                q = q.where(Finding.category == flt.category)
            if flt.rule_id is not None:
                q = q.where(Finding.rule_id == flt.rule_id)
            if flt.severity is not None:
                q = q.where(Finding.severity == flt.severity)
            if flt.subject is not None:
                q = q.where(
                    Finding.finding_id.in_(
                        select(FindingMemory.finding_id)
                        .join(Memory, Memory.memory_id == FindingMemory.memory_id)
                        .where(Memory.subject == flt.subject)
                    )
                )
            if after is not None:
                q = q.where(
                    (Finding.first_seen < after[0])
                    | ((Finding.first_seen == after[0]) & (Finding.finding_id < after[1]))
                )
            q = q.order_by(Finding.first_seen.desc(), Finding.finding_id.desc()).limit(size)
            rows = list(session.scalars(q))
            out = [finding_to_dict(f) for f in rows]
        if not rows:
            return
        yield from out
        after = (rows[-1].first_seen, rows[-1].finding_id)
        if left is not None:
            left -= len(rows)
        if len(rows) < size:
            return


REVIEW_ACTIONS = (
    "acknowledge",
    "resolve",
    "dismiss",
    "suppress",
    "reopen",
    "quarantine",
    "delete",
    "restore",
    "assign",
)


def review(
    db: Database,
    finding_id: str,
    action: str,
    *,
    actor: str,
    note: str | None = None,
    assignee: str | None = None,
) -> dict[str, Any]:
    """Apply a reviewer's decision to a finding (and, for memory actions, its memories).

    ``quarantine``, ``delete`` and ``restore`` act on every memory of the finding through
    the lifecycle, then resolve the finding. Every call appends audit events. The whole
    decision is one transaction (see :func:`apply_review` for the session-level form).

    Raises:
        NotFoundError: no such finding.
        InputError: unknown action, or no actor.
        LifecycleError: a memory action is not allowed from the memory's status.
    """
    with db.write() as session:
        return apply_review(
            session, db.settings, finding_id, action, actor=actor, note=note, assignee=assignee
        )


def apply_review(
    session: Session,
    settings: Settings,
    finding_id: str,
    action: str,
    *,
    actor: str,
    note: str | None = None,
    assignee: str | None = None,
) -> dict[str, Any]:
    """:func:`review` inside the caller's write session (a bulk action's savepoint).

    Args:
        session: a write session; the decision commits or rolls back with it.
        settings: memaudit settings (the lifecycle policy and the audit key).
        finding_id: the finding decided on.
        action: one of ``REVIEW_ACTIONS``.
        actor: who decides (recorded in the finding and the audit log).
        note: the reviewer's reason (scrubbed and cut to 500 characters in the audit log).
        assignee: for ``assign``.

    Returns:
        The finding as :func:`finding_to_dict` gives it, after the decision.

    Raises:
        NotFoundError: no such finding.
        InputError: unknown action, or no actor.
        LifecycleError: a memory action is not allowed from the memory's status.
    """
    if action not in REVIEW_ACTIONS:
        raise InputError(
            f"unknown review action {action!r}; expected one of {', '.join(REVIEW_ACTIONS)}"
        )
    if not actor or not actor.strip():
        raise InputError("a reviewer is required (--by WHO)")
    finding = session.get(Finding, finding_id)
    if finding is None:
        raise NotFoundError(f"no finding with id {finding_id!r}")
    previous = finding.status
    memory_ids = [link.memory_id for link in sorted(finding.memories, key=lambda x: x.position)]
    now = utcnow()
    if action in ("quarantine", "delete", "restore"):
        fn = {
            "quarantine": lifecycle.quarantine,
            "delete": lifecycle.soft_delete,
            "restore": lifecycle.restore,
        }[action]
        for mid in memory_ids:
            try:
                fn(session, settings, mid, actor=actor, reason=f"review of {finding_id}")
            except InvalidTransitionError:
                if action != "restore":
                    raise
        finding.status = FindingStatus.RESOLVED.value
    elif action == "assign":
        if not assignee:
            raise InputError("assign needs --assignee")
        finding.assignee = assignee
    else:
        finding.status = {
            "acknowledge": FindingStatus.ACKNOWLEDGED.value,
            "resolve": FindingStatus.RESOLVED.value,
            "dismiss": FindingStatus.DISMISSED.value,
            "suppress": FindingStatus.SUPPRESSED.value,
            "reopen": FindingStatus.OPEN.value,
        }[action]
    if (
        finding.status
        in (
            FindingStatus.RESOLVED.value,
            FindingStatus.DISMISSED.value,
            FindingStatus.SUPPRESSED.value,
        )
        and action != "assign"
    ):
        finding.resolved_by = actor
        finding.resolved_at = now
        finding.resolution = note or action
    elif action == "reopen":
        finding.resolved_by = finding.resolved_at = finding.resolution = None
    details: dict[str, Any] = {"action": action, "from": previous, "to": finding.status}
    if note:
        details["note"] = scrub(note)[:500]
    audit_log.append(
        session,
        actor=actor,
        action=f"finding.{action}",
        target_type="finding",
        target_ids=[finding_id, *memory_ids],
        details=details,
        key=lifecycle.audit_key(settings),
    )
    session.flush()
    return finding_to_dict(finding)
