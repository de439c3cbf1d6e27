"""What an officer reads of findings: the review queue and a finding's detail.

* :func:`review_queue`: one page of findings, filtered (:class:`QueueFilter`), sorted
  (:data:`QUEUE_SORTS`) and paged in the database, each with its memories, the detector's
  one-line reason and the first redacted snippet of its evidence.
* :func:`finding_detail`: one finding explained: its rule, its redacted evidence, each
  memory's provenance and supersede chain, and the other open findings of the same
  memories (:func:`related_findings`, which :mod:`auditor.access.review` also uses; it takes
  no actor: its callers have passed the guard first).
* :class:`ViewLog`: what a dashboard session was last shown by these two reads.

Both are audited reads: a queue page that shows redacted snippets records
``finding.listed`` (the finding ids shown), opening a finding records ``finding.viewed``
(the finding and its memories, never the evidence). A dashboard session passes its
:class:`ViewLog` to :func:`review_queue` and :func:`finding_detail`: a script rerun that
shows the same thing again (a key press that only moves the cursor, a typed note, a
preview) is then not recorded again; what the session is shown next, when it differs, is.
The access check runs on every call either way.

The officer's other services are in its sibling modules, all through the one policy of
:mod:`auditor.access.guard`: the overview, memory search, the audit log and rule statistics
in :mod:`auditor.access.officer` (whose docstring tells what every officer service checks
and records), actions on findings in :mod:`auditor.access.officer_actions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session, selectinload

from auditor.access.accounts import Actor
from auditor.access.guard import (
    OFFICER_ROLES,
    Page,
    guard,
    pack_or_default,
    paging,
    require_role,
    rules_by_id,
)
from auditor.access.readers import memory_detail
from auditor.config import TIERS
from auditor.erasure.subjects import check_subject_form
from auditor.errors import InputError, NotFoundError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.rulepack.pack import CATEGORIES, SEVERITIES, SEVERITY_RANK, Rule, RulePack
from auditor.scan.findings import STATUSES as FINDING_STATUSES
from auditor.scan.findings import finding_to_dict
from auditor.store.db import Database
from auditor.store.models import Finding, FindingMemory, FindingStatus, Memory
from auditor.store.types import iso_utc, utcnow

__all__ = [
    "QUEUE_SORTS",
    "QueueFilter",
    "ViewLog",
    "finding_detail",
    "related_findings",
    "review_queue",
]

#: Sort keys of the review queue; a leading ``-`` sorts descending.
QUEUE_SORTS: tuple[str, ...] = (
    "first_seen",
    "last_seen",
    "severity",
    "rule_id",
    "category",
    "status",
)


# -- filters and views --------------------------------------------------------------------


@dataclass(frozen=True)
class QueueFilter:
    """Which findings the review queue shows (None: no condition; ``status`` None: all).

    Memory conditions (``subject``, ``namespace``, ``trust_tier``) hold when one memory of
    the finding meets all of them. ``older_than_days`` keeps findings first seen more than
    that many days ago.

    Raises:
        InputError: an unknown status, category, severity or tier, or a negative age.
    """

    status: str | None = FindingStatus.OPEN.value
    rule_id: str | None = None
    category: str | None = None
    severity: str | None = None
    subject: str | None = None
    namespace: str | None = None
    trust_tier: str | None = None
    older_than_days: int | None = None
    assignee: str | None = None

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("status", self.status, FINDING_STATUSES),
            ("category", self.category, CATEGORIES),
            ("severity", self.severity, SEVERITIES),
            ("trust tier", self.trust_tier, TIERS),
        ):
            if value is not None and value not in allowed:
                raise InputError(f"unknown {name} {value!r}; expected one of {', '.join(allowed)}")
        if self.older_than_days is not None and self.older_than_days < 0:
            raise InputError("older_than_days must be 0 or more")
        if self.subject is not None:
            check_subject_form(self.subject, what="the subject filter")

    def conditions(self, now: datetime) -> list[ColumnElement[bool]]:
        """The WHERE conditions over :class:`Finding` (all bound parameters)."""
        out: list[ColumnElement[bool]] = []
        if self.status is not None:
            out.append(Finding.status == self.status)
        if self.rule_id is not None:
            out.append(Finding.rule_id == self.rule_id)
        if self.category is not None:
            out.append(Finding.category == self.category)
        if self.severity is not None:
            out.append(Finding.severity == self.severity)
        if self.assignee is not None:
            out.append(Finding.assignee == self.assignee)
        if self.older_than_days is not None:
            out.append(Finding.first_seen < now - timedelta(days=self.older_than_days))
        memory_conds: list[ColumnElement[bool]] = []
        if self.subject is not None:
            memory_conds.append(Memory.subject == self.subject)
        if self.namespace is not None:
            memory_conds.append(Memory.namespace == self.namespace)
        if self.trust_tier is not None:
            memory_conds.append(Memory.trust_tier == self.trust_tier)
        if memory_conds:
            out.append(
                select(FindingMemory.finding_id)
                .join(Memory, Memory.memory_id == FindingMemory.memory_id)
                .where(FindingMemory.finding_id == Finding.finding_id, *memory_conds)
                .exists()
            )
        return out


class ViewLog:
    """What one dashboard session was last shown of each audited read, per actor.

    :func:`review_queue` records ``finding.listed`` and :func:`finding_detail` records
    ``finding.viewed`` only when the ids they show differ from the ids this log says the
    same actor was last shown by the same read: a rerun of an unchanged page is not a new
    view, and is not written to the audit log again (it would grow the log with every key
    press). Going back to an earlier view after another one is recorded again. Without a
    log every call is recorded.

    One log per dashboard session (never shared between sessions); it holds finding ids
    only.
    """

    def __init__(self) -> None:
        self._last: dict[tuple[str, str, str], tuple[str, ...]] = {}

    @staticmethod
    def _key(actor: Actor, read: str) -> tuple[str, str, str]:
        return (actor.username, actor.role, read)

    def is_new(self, actor: Actor, read: str, ids: Sequence[str]) -> bool:
        """Whether showing ``ids`` through ``read`` is a new view for ``actor``."""
        return self._last.get(self._key(actor, read)) != tuple(ids)

    def mark(self, actor: Actor, read: str, ids: Sequence[str]) -> None:
        """Remember that showing ``ids`` through ``read`` was recorded."""
        self._last[self._key(actor, read)] = tuple(ids)


def _record_view(
    db: Database,
    actor: Actor,
    views: ViewLog | None,
    read: str,
    action: str,
    target_ids: list[str],
    details: dict[str, Any],
) -> None:
    """Append the audit event of a read, unless ``views`` says it repeats the last one."""
    if views is not None and not views.is_new(actor, read, target_ids):
        return
    with db.write() as session:
        audit_log.append(
            session,
            actor=actor.username,
            action=action,
            target_type="finding",
            target_ids=target_ids,
            details=details,
            key=lifecycle.audit_key(db.settings),
        )
    if views is not None:
        views.mark(actor, read, target_ids)


def _memories_of(session: Session, finding_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {fid: [] for fid in finding_ids}
    if not finding_ids:
        return out
    rows = session.execute(
        select(
            FindingMemory.finding_id,
            Memory.memory_id,
            Memory.subject,
            Memory.namespace,
            Memory.trust_tier,
            Memory.status,
        )
        .join(Memory, Memory.memory_id == FindingMemory.memory_id)
        .where(FindingMemory.finding_id.in_(finding_ids))
        .order_by(FindingMemory.finding_id, FindingMemory.position)
    ).all()
    for fid, mid, subject, namespace, tier, status in rows:
        out[fid].append(
            {
                "memory_id": mid,
                "subject": subject,
                "namespace": namespace,
                "trust_tier": tier,
                "status": status,
            }
        )
    return out


# -- officer: queue, detail ---------------------------------------------------------------


def _queue_order(sort: str) -> tuple[Any, bool]:
    key = sort.removeprefix("-")
    if key not in QUEUE_SORTS:
        raise InputError(
            f"unknown sort {sort!r}; expected one of {', '.join(QUEUE_SORTS)} "
            "(a leading - sorts descending)"
        )
    column: Any = {
        "first_seen": Finding.first_seen,
        "last_seen": Finding.last_seen,
        "severity": case(
            {s: SEVERITY_RANK[s] for s in SEVERITIES}, value=Finding.severity, else_=-1
        ),
        "rule_id": Finding.rule_id,
        "category": Finding.category,
        "status": Finding.status,
    }[key]
    return column, sort.startswith("-")


def review_queue(
    db: Database,
    actor: Actor,
    filters: QueueFilter | None = None,
    page: int = 1,
    page_size: int = 50,
    sort: str = "-first_seen",
    views: ViewLog | None = None,
) -> Page:
    """One page of the review queue, filtered, sorted and paged in the database.

    Args:
        db: the store.
        actor: an officer or admin.
        filters: which findings (default: open ones).
        page: the page number, from 1.
        page_size: rows per page (capped at :data:`MAX_PAGE_SIZE`).
        sort: one of :data:`QUEUE_SORTS`; a leading ``-`` sorts descending (severity sorts
            by rank: critical is highest). Ties are broken by finding id.
        views: the caller's session :class:`ViewLog`: ``finding.listed`` is then written
            only when the ids shown with a snippet differ from the last page it recorded.

    Returns:
        A :class:`Page` of findings: id, rule, category, severity, status, assignee, first
        and last seen, age in days, the memories (id, subject, namespace, tier, status) in
        the finding's order, the detector's one-line ``reason`` and the first redacted
        ``snippet`` of the evidence (cut to 120 characters).

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: a bad page, page size or sort key.
    """
    flt = filters or QueueFilter()
    page, size, offset = paging(page, page_size)
    column, descending = _queue_order(sort)
    now = utcnow()
    with guard(db, actor, "review_queue"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "review_queue")
        conds = flt.conditions(now)
        total = int(session.scalar(select(func.count()).select_from(Finding).where(*conds)) or 0)
        order = (
            (column.desc(), Finding.finding_id.desc())
            if descending
            else (column.asc(), Finding.finding_id.asc())
        )
        found = session.scalars(
            select(Finding).where(*conds).order_by(*order).limit(size).offset(offset)
        ).all()
        memories = _memories_of(session, [f.finding_id for f in found])
        rows = [
            {
                "finding_id": f.finding_id,
                "rule_id": f.rule_id,
                "category": f.category,
                "severity": f.severity,
                "status": f.status,
                "assignee": f.assignee,
                "first_seen": iso_utc(f.first_seen),
                "last_seen": iso_utc(f.last_seen),
                "age_days": (now - f.first_seen).days,
                "memories": memories[f.finding_id],
                "reason": _one_line((f.evidence or {}).get("reason")),
                "snippet": _first_snippet(f.evidence),
            }
            for f in found
        ]
    shown = [str(r["finding_id"]) for r in rows if r["snippet"]]
    if shown:  # redacted evidence was read: the same record as a memory search
        _record_view(
            db,
            actor,
            views,
            "review_queue",
            "finding.listed",
            shown,
            {"page": page, "shown": len(rows), "with_snippet": len(shown)},
        )
    return Page(rows, total, page, size)


def _one_line(value: object, limit: int = 160) -> str:
    """A reason or snippet on one line, cut to ``limit`` characters."""
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_snippet(evidence: dict[str, Any] | None) -> str:
    """The first redacted snippet of a finding's evidence, on one line."""
    snippets = (evidence or {}).get("snippets") or {}
    if not isinstance(snippets, dict) or not snippets:
        return ""
    return _one_line(next(iter(snippets.values())), 120)


def _rule_info(rule: Rule | None) -> dict[str, Any] | None:
    if rule is None:
        return None
    return {
        "id": rule.id,
        "title": rule.title,
        "description": rule.description,
        "status": rule.status,
        "category": rule.category,
        "severity": rule.severity,
        "action": rule.action,
        "references": list(rule.references),
        "false_positives": list(rule.false_positives),
    }


def finding_detail(
    db: Database,
    actor: Actor,
    finding_id: str,
    pack: RulePack | None = None,
    views: ViewLog | None = None,
) -> dict[str, Any]:
    """One finding, explained: its rule, redacted evidence, and each memory's history.

    Memory text is not included (the evidence holds redacted snippets); use
    :func:`memory_search` to read a memory, which is recorded. Opening a finding is
    recorded too (``finding.viewed``: the finding and its memories, never the evidence).

    Args:
        db: the store.
        actor: an officer or admin.
        finding_id: the finding.
        pack: the rule pack to explain it with (default: the configured pack).
        views: the caller's session :class:`ViewLog`: ``finding.viewed`` is then written
            only when this is not the finding it recorded last.

    Returns:
        ``finding`` (the finding's fields, evidence redacted at detection), ``rule`` (id,
        title, description, status, severity, action, references, known false positives;
        None when the rule is not in the pack), ``memories``: per memory its fields
        without the text, its ``provenance`` and its supersede ``chain`` as an ordered
        list, oldest first, with ``current`` marking this memory; and ``related``: the
        other open findings of the same memories (id, rule, severity, status, reason).

    Raises:
        AccessDenied: the actor is not an officer or admin.
        NotFoundError: no such finding.
    """
    with guard(db, actor, "finding_detail"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "finding_detail")
        data = _finding_data(session, finding_id)
    rule = rules_by_id(pack_or_default(db, pack)).get(data["rule_id"])
    memories = [_memory_history(db, mid) for mid in data["memory_ids"]]
    related = related_findings(db, finding_id, data["memory_ids"])
    _record_view(  # opening evidence is an audited read, like memory_search
        db,
        actor,
        views,
        "finding_detail",
        "finding.viewed",
        [finding_id, *data["memory_ids"]],
        {"rule": data["rule_id"], "category": data["category"]},
    )
    return {
        "finding": data,
        "rule": _rule_info(rule),
        "memories": memories,
        "related": related,
    }


def _finding_data(session: Session, finding_id: str) -> dict[str, Any]:
    """A finding's fields (:func:`finding_to_dict`).

    Raises:
        NotFoundError: no such finding.
    """
    finding = session.scalar(
        select(Finding)
        .options(selectinload(Finding.memories))
        .where(Finding.finding_id == finding_id)
    )
    if finding is None:
        raise NotFoundError(f"no finding with id {finding_id!r}")
    return finding_to_dict(finding)


def _memory_history(db: Database, mid: str) -> dict[str, Any]:
    """A memory of a finding: its fields without the text, its provenance, its chain.

    The supersede chain is an ordered list, oldest first, with ``current`` marking this
    memory.
    """
    detail = memory_detail(db, mid)
    memory = {k: v for k, v in detail["memory"].items() if k != "fact"}
    chain = detail["chain"]
    ordered = [
        *reversed(chain["older"]),
        {
            "memory_id": mid,
            "status": memory["status"],
            "trust_tier": memory["trust_tier"],
            "created_at": memory["created_at"],
            "supersedes": memory["supersedes"],
        },
        *chain["newer"],
    ]
    for link in ordered:
        link["current"] = link["memory_id"] == mid
    return {
        "memory": memory,
        "provenance": detail["provenance"],
        "chain": ordered,
        "chain_dangling_link": chain["dangling_link"],
        "chain_cycle": chain["cycle"],
    }


def related_findings(db: Database, finding_id: str, memory_ids: list[str]) -> list[dict[str, Any]]:
    """The other open (or acknowledged) findings of the same memories, most severe first."""
    if not memory_ids:
        return []
    with db.session() as session:
        found = session.scalars(
            select(Finding)
            .where(
                Finding.finding_id != finding_id,
                Finding.status.in_(("open", "acknowledged")),
                Finding.finding_id.in_(
                    select(FindingMemory.finding_id).where(FindingMemory.memory_id.in_(memory_ids))
                ),
            )
            .order_by(Finding.first_seen.desc())
            .limit(50)
        ).all()
        rows = [
            {
                "finding_id": f.finding_id,
                "rule_id": f.rule_id,
                "severity": f.severity,
                "category": f.category,
                "status": f.status,
                "reason": _one_line((f.evidence or {}).get("reason")),
            }
            for f in found
        ]
    return sorted(rows, key=lambda r: -SEVERITY_RANK.get(r["severity"], -1))
