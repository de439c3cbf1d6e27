"""Findings: fingerprints, redacted evidence, listing and reviewer actions.

A finding is one rule firing on one memory (or a pair, a chain). Its fingerprint is a hash
of the rule id, the memory ids and their content hashes: re-scanning never duplicates a
finding, and a changed memory yields a new one. Evidence never becomes a second copy of
sensitive data (:mod:`auditor.scan.evidence` builds it: every personal-data and secret span in
the shown window is masked, the rest scrubbed and cut short).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from auditor import limits
from auditor.config import Settings
from auditor.errors import InputError, InvalidTransitionError, NotFoundError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.logging import scrub
from auditor.scan.evidence import evidence_for
from auditor.store.db import Database
from auditor.store.models import Finding, FindingMemory, FindingStatus, Memory
from auditor.store.types import utcnow

__all__ = [
    "FINDING_FIELDS",
    "FindingFilter",
    "apply_review",
    "count_findings",
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
STATUSES = tuple(s.value for s in FindingStatus)


def fingerprint(rule_id: str, memory_ids: Sequence[str], content_hashes: Sequence[str]) -> str:
    """sha256 of the rule id, the memory ids and their content hashes, in order."""
    payload = "\x1f".join([rule_id, *memory_ids, "\x1e", *content_hashes])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


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


def _filtered(q: Any, flt: FindingFilter) -> Any:
    """``q`` restricted to the findings ``flt`` selects (bound parameters only)."""
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
    return q


def count_findings(db: Database, flt: FindingFilter) -> int:
    """How many findings ``flt`` selects (a listing's "showing N of M")."""
    from sqlalchemy import func

    with db.session() as session:
        return int(session.scalar(_filtered(select(func.count(Finding.finding_id)), flt)) or 0)


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
            q = _filtered(select(Finding).options(selectinload(Finding.memories)), flt)
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

#: Memory statuses in which a memory action has nothing left to do (idempotent reviews).
_ALREADY: dict[str, frozenset[str]] = {
    "quarantine": frozenset({"quarantined"}),
    "delete": frozenset({"deleted"}),
    "restore": frozenset({"active", "superseded"}),
}
#: The finding status each status-only review action leads to.
_TARGET: dict[str, str] = {
    "acknowledge": FindingStatus.ACKNOWLEDGED.value,
    "resolve": FindingStatus.RESOLVED.value,
    "dismiss": FindingStatus.DISMISSED.value,
    "suppress": FindingStatus.SUPPRESSED.value,
    "reopen": FindingStatus.OPEN.value,
}


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

    Every action is idempotent: asking for the state a finding or memory is already in
    succeeds. A memory already quarantined (deleted; active for ``restore``) is left alone
    and listed in ``already``; a status action on a finding already in that status changes
    nothing and records nothing (``unchanged``).

    Returns:
        The finding as :func:`finding_to_dict` gives it, after the decision, with
        ``already`` (memory ids already in the asked state) and ``unchanged`` (nothing
        changed at all).

    Raises:
        NotFoundError: no such finding.
        InputError: unknown action, or no actor.
        LifecycleError: a memory action is not allowed from the memory's status.
    """
    limits.check_note(note, settings, what="the note", where=f"finding {finding_id[:64]}")
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
    already: list[str] = []  # memories already in the state asked for (idempotent actions)
    if action in ("quarantine", "delete", "restore"):
        already = _act_on_memories(session, settings, action, memory_ids, finding_id, actor)
        finding.status = FindingStatus.RESOLVED.value
    elif action != "assign" and finding.status == _TARGET[action]:
        # Asking for the status a finding already has succeeds and says so; nothing changes.
        out = finding_to_dict(finding)
        out["already"] = memory_ids
        out["unchanged"] = True
        return out
    elif action == "assign":
        if not assignee:
            raise InputError("assign needs --assignee")
        finding.assignee = assignee
    else:
        finding.status = _TARGET[action]
    _stamp_decision(finding, action, actor, now, note)
    details: dict[str, Any] = {"action": action, "from": previous, "to": finding.status}
    if note:
        details["note"] = scrub(note, limit=500)
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
    out = finding_to_dict(finding)
    out["already"] = already
    out["unchanged"] = previous == finding.status and len(already) == len(memory_ids) > 0
    return out


def _act_on_memories(
    session: Session,
    settings: Settings,
    action: str,
    memory_ids: list[str],
    finding_id: str,
    actor: str,
) -> list[str]:
    """Quarantine, delete or restore a finding's memories; the ids already in that state."""
    fn = {
        "quarantine": lifecycle.quarantine,
        "delete": lifecycle.soft_delete,
        "restore": lifecycle.restore,
    }[action]
    done_states = _ALREADY[action]
    already: list[str] = []
    for mid in memory_ids:
        memory = session.get(Memory, mid)
        if memory is not None and memory.status in done_states:
            already.append(mid)
            continue
        try:
            fn(session, settings, mid, actor=actor, reason=f"review of {finding_id}")
        except InvalidTransitionError:
            if action != "restore":
                raise
    return already


def _stamp_decision(
    finding: Finding, action: str, actor: str, now: datetime, note: str | None
) -> None:
    """Who closed the finding, when and why; a reopen clears them (assign leaves them)."""
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
