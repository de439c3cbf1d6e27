"""Access-checked services for officers and admins: what the dashboard's staff pages call.

Every function takes the signed-in :class:`~auditor.access.accounts.Actor` first and enforces
authorisation itself, whatever ids the caller passes: the overview, the review queue
(server-side filters, sorting and paging), a finding's detail, actions on findings (one by
one or in bulk, each through :func:`auditor.scan.findings.apply_review` or the lifecycle, so
history is never rewritten silently), memory search, the audit log and its verification,
rule statistics. The same package holds the rest: account management in
:mod:`auditor.access.admin`, a user's own data in :mod:`auditor.access.user`, previews and a
memory's findings in :mod:`auditor.access.review`, erasure in :mod:`auditor.access.erasure`,
all through the one policy of :mod:`auditor.access.guard`.

Before anything else each call re-reads the actor's account: an actor whose account is
gone, disabled, or no longer has that role or subject is refused, so a stale dashboard
session (or an ``Actor`` built by hand) gets nothing. Every refusal raises
:class:`~auditor.errors.AccessDenied` and appends an ``access.denied`` audit event; the
message names only what the caller asked for. A user asking for a memory of another
subject, or for one that does not exist, gets the same refusal (no existence oracle); the
audit event tells the two apart.

Audit events: every change (lifecycle and finding events, ``finding.escalated``,
``finding.action_failed``), every export (``subject.exported``), every search that shows
memory text to an officer (``memory.searched``, with the ids shown and never the query),
every opening of a finding's evidence (``finding.viewed``), every queue page that shows
redacted snippets (``finding.listed``, the finding ids shown), every account change and
every refusal. Aggregate reads (overview, rule statistics, the audit log itself) and a
user reading their own memories are not recorded.

A dashboard session passes its :class:`ViewLog` to :func:`review_queue` and
:func:`finding_detail`: a script rerun that shows the same thing again (a key press that
only moves the cursor, a typed note, a preview) is then not recorded again; what the
session is shown next, when it differs, is. The access check runs on every call either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session, selectinload

from auditor import limits
from auditor.access import accounts
from auditor.access.accounts import Actor
from auditor.access.guard import (
    ADMIN_ROLES,
    MAX_BULK,
    MAX_PAGE_SIZE,
    OFFICER_ROLES,
    USER_ROLES,
    Denied,
    Page,
    digest,
    guard,
    pack_or_default,
    paging,
    require_role,
    rules_by_id,
)
from auditor.access.readers import (
    memory_detail,
    memory_to_dict,
)
from auditor.config import TIERS
from auditor.erasure.subjects import check_subject_form
from auditor.errors import InputError, MemauditError, NotFoundError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.records import STATUSES as MEMORY_STATUSES
from auditor.rulepack.pack import (
    CATEGORIES,
    SEVERITIES,
    SEVERITY_RANK,
    Rule,
    RulePack,
    load_pack,
)
from auditor.scan import review as review_actions
from auditor.scan.findings import STATUSES as FINDING_STATUSES
from auditor.scan.findings import finding_to_dict
from auditor.sources.writeback import display_status
from auditor.store.db import Database
from auditor.store.models import (
    AuditEvent,
    Finding,
    FindingMemory,
    FindingStatus,
    Memory,
    Principal,
    ScanRun,
)
from auditor.store.types import iso_utc, utcnow
from auditor.vocab import SCAN_ACTOR

__all__ = [
    "ACTIONS",
    "ACTION_HELP",
    "ADMIN_ROLES",
    "Denied",
    "MAX_BULK",
    "MAX_PAGE_SIZE",
    "OFFICER_ROLES",
    "QUEUE_SORTS",
    "USER_ROLES",
    "ActionOutcome",
    "Page",
    "QueueFilter",
    "ViewLog",
    "act_on_findings",
    "audit_log_page",
    "display_status",
    "finding_detail",
    "memory_search",
    "overview",
    "review_queue",
    "rule_stats",
    "related_findings",
    "verify_audit_log",
    "guard",
    "require_role",
]

#: What an officer can do to findings (see :func:`act_on_findings`): the vocabulary of
#: :mod:`auditor.scan.review`, shared with the CLI.
ACTIONS: tuple[str, ...] = review_actions.ACTIONS
#: What each action does, in a sentence (the dashboard's help texts).
ACTION_HELP: dict[str, str] = review_actions.ACTION_HELP
#: Sort keys of the review queue; a leading ``-`` sorts descending.
QUEUE_SORTS: tuple[str, ...] = (
    "first_seen",
    "last_seen",
    "severity",
    "rule_id",
    "category",
    "status",
)
#: Assignee of an escalation that names no admin: the admins' shared queue.
ADMIN_QUEUE = review_actions.ADMIN_QUEUE
_CLOSED = (
    FindingStatus.RESOLVED.value,
    FindingStatus.DISMISSED.value,
    FindingStatus.SUPPRESSED.value,
)


# -- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActionOutcome:
    """What an action did to one finding: ``ok`` and its new status, or the error."""

    finding_id: str
    ok: bool
    status: str | None = None
    error: str | None = None
    #: what was done, in words ("already quarantined; finding resolved")
    message: str | None = None
    #: the finding or its memories were already in the asked state (nothing to do there)
    already: bool = False


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


def _day(column: Any, dialect: str) -> Any:
    """A column's UTC calendar day as ``YYYY-MM-DD`` text (SQLite stores UTC wall time)."""
    if dialect == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD")
    return func.strftime("%Y-%m-%d", column)


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


# -- officer: overview, queue, detail -----------------------------------------------------


def overview(db: Database, actor: Actor, *, days: int = 30, scans: int = 20) -> dict[str, Any]:
    """The officers' front page.

    Args:
        db: the store.
        actor: an officer or admin.
        days: how many days back ``by_day`` goes (1-366).
        scans: how many recent scans ``scans`` lists (1-200).

    Returns:
        ``by_day`` (findings first seen per UTC day, category and severity), ``open``
        (open + acknowledged findings in all, by severity and category), ``by_status``
        (every finding by status), ``scans`` (newest first: id, mode, status, start, end,
        duration, memories scanned, new findings, errors) and ``oldest_untriaged`` (the
        oldest open finding, or None).

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: ``days`` or ``scans`` out of range.
    """
    if not 1 <= days <= 366:
        raise InputError("days must be between 1 and 366")
    if not 1 <= scans <= 200:
        raise InputError("scans must be between 1 and 200")
    now = utcnow()
    with guard(db, actor, "overview"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "overview")
        day = _day(Finding.first_seen, db.dialect)
        since = (now - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
        by_day = [
            {"day": str(d), "category": c, "severity": s, "count": int(n)}
            for d, c, s, n in session.execute(
                select(day, Finding.category, Finding.severity, func.count())
                .where(Finding.first_seen >= since)
                .group_by(day, Finding.category, Finding.severity)
                .order_by(day, Finding.category, Finding.severity)
            )
        ]
        open_statuses = (FindingStatus.OPEN.value, FindingStatus.ACKNOWLEDGED.value)
        open_rows = session.execute(
            select(Finding.severity, Finding.category, func.count())
            .where(Finding.status.in_(open_statuses))
            .group_by(Finding.severity, Finding.category)
        ).all()
        by_severity: dict[str, int] = {}
        by_category: dict[str, int] = {}
        for severity, category, n in open_rows:
            by_severity[severity] = by_severity.get(severity, 0) + int(n)
            by_category[category] = by_category.get(category, 0) + int(n)
        by_status = {
            str(s): int(n)
            for s, n in session.execute(
                select(Finding.status, func.count()).group_by(Finding.status)
            )
        }
        runs = session.scalars(
            select(ScanRun).order_by(ScanRun.started_at.desc(), ScanRun.id.desc()).limit(scans)
        ).all()
        oldest = session.scalars(
            select(Finding)
            .where(Finding.status == FindingStatus.OPEN.value)
            .order_by(Finding.first_seen, Finding.finding_id)
            .limit(1)
        ).first()
        return {
            "generated_at": iso_utc(now),
            "window_days": days,
            "by_day": by_day,
            "open": {
                "total": sum(by_severity.values()),
                "by_severity": dict(
                    sorted(by_severity.items(), key=lambda kv: -SEVERITY_RANK.get(kv[0], -1))
                ),
                "by_category": dict(sorted(by_category.items())),
            },
            "by_status": dict(sorted(by_status.items())),
            "scans": [
                {
                    "id": r.id,
                    "mode": r.mode,
                    "status": r.status,
                    "started_at": iso_utc(r.started_at),
                    "finished_at": iso_utc(r.finished_at),
                    "duration_s": r.duration_s,
                    "memories_scanned": (r.counts or {}).get("memories_scanned"),
                    "findings_new": (r.counts or {}).get("findings_new"),
                    "error_count": (r.counts or {}).get("error_count"),
                }
                for r in runs
            ],
            "oldest_untriaged": None
            if oldest is None
            else {
                "finding_id": oldest.finding_id,
                "rule_id": oldest.rule_id,
                "category": oldest.category,
                "severity": oldest.severity,
                "first_seen": iso_utc(oldest.first_seen),
                "age_days": (now - oldest.first_seen).days,
            },
        }


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
        finding = session.scalar(
            select(Finding)
            .options(selectinload(Finding.memories))
            .where(Finding.finding_id == finding_id)
        )
        if finding is None:
            raise NotFoundError(f"no finding with id {finding_id!r}")
        data = finding_to_dict(finding)
    rule = rules_by_id(pack_or_default(db, pack)).get(data["rule_id"])
    memories = []
    for mid in data["memory_ids"]:
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
        memories.append(
            {
                "memory": memory,
                "provenance": detail["provenance"],
                "chain": ordered,
                "chain_dangling_link": chain["dangling_link"],
                "chain_cycle": chain["cycle"],
            }
        )
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


# -- officer: actions ---------------------------------------------------------------------


def act_on_findings(
    db: Database,
    actor: Actor,
    finding_ids: Sequence[str],
    action: str,
    *,
    reason: str | None = None,
    suppress: bool = False,
    superseding_memory_id: str | None = None,
    assignee: str | None = None,
    approve_tier_override: bool = False,
) -> list[ActionOutcome]:
    """Apply one action to one or many findings; each in its own savepoint.

    One finding failing (no such id, a transition the lifecycle refuses) is reported in its
    outcome and recorded as ``finding.action_failed``; the others still apply. Actions:

    * ``acknowledge``, ``resolve``, ``reopen``: the finding's status (reason optional).
    * ``dismiss``: a false positive; ``reason`` is required. The scan never reopens a
      dismissed finding while its memories are unchanged (same fingerprint). With
      ``suppress=True`` the finding becomes ``suppressed`` instead ("allowed, keep quiet"),
      which the scan also leaves alone; either way a changed memory is a new fingerprint
      and may raise a new finding.
    * ``quarantine``, ``restore``: every memory of the finding through the lifecycle, then
      the finding is resolved.
    * ``supersede``: ``superseding_memory_id`` (an existing memory of the same subject)
      supersedes the finding's other memory, then the finding is resolved. A lower tier
      superseding a higher one needs ``approve_tier_override=True`` (recorded as the
      officer's approval).
    * ``escalate``: severity one step up (critical stays critical) and assigned to
      ``assignee`` (an enabled admin's user name) or to the admins' queue ``role:admin``;
      the status is kept. Closed findings must be reopened first.

    Args:
        db: the store.
        actor: an officer or admin (recorded as the reviewer).
        finding_ids: the findings (duplicates are acted on once).
        action: one of :data:`ACTIONS`.
        reason: the reviewer's reason (scrubbed in the audit log).
        suppress: with ``dismiss``: suppress instead.
        superseding_memory_id: with ``supersede``: the memory that replaces the other.
        assignee: with ``escalate``: the admin to assign.
        approve_tier_override: with ``supersede``: approve a lower tier replacing a higher.

    Returns:
        One :class:`ActionOutcome` per distinct id, in the order given.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: a bad action or argument combination, no ids, too many ids, or an
            assignee who is not an enabled admin.
    """
    limits.check_note(reason, db.settings, what="the reason", where="review")
    review_actions.check_action_args(action, reason, suppress, superseding_memory_id, assignee)
    ids = list(dict.fromkeys(str(i) for i in finding_ids))
    if not ids:
        raise InputError("no findings given")
    if len(ids) > MAX_BULK:
        raise InputError(f"at most {MAX_BULK} findings per action; got {len(ids)}")
    outcomes: list[ActionOutcome] = []
    with guard(db, actor, f"act_on_findings:{action}"), db.write() as session:
        require_role(session, actor, OFFICER_ROLES, "act_on_findings")
        target = ADMIN_QUEUE
        if action == "escalate" and assignee is not None:
            admin = session.scalar(
                select(Principal).where(Principal.username == accounts.normalise_username(assignee))
            )
            if admin is None or admin.role != "admin" or admin.disabled:
                raise InputError(f"{assignee!r} is not an enabled admin account")
            target = admin.username
        failed: list[tuple[str, str]] = []
        for fid in ids:
            try:
                with session.begin_nested():
                    result = review_actions.apply_one(
                        session,
                        db.settings,
                        fid,
                        action,
                        actor=actor.username,
                        reason=reason,
                        suppress=suppress,
                        superseding_memory_id=superseding_memory_id,
                        assignee=target,
                        approve_tier_override=approve_tier_override,
                    )
                outcomes.append(
                    ActionOutcome(
                        fid,
                        True,
                        status=result["status"],
                        message=review_actions.describe(action, result),
                        already=bool(result.get("already")),
                    )
                )
            except MemauditError as exc:
                outcomes.append(ActionOutcome(fid, False, error=str(exc)))
                failed.append((fid[:128], type(exc).__name__))
        if failed:  # ids are what the caller typed: a list, never keys of the details
            audit_log.append(
                session,
                actor=actor.username,
                action="finding.action_failed",
                target_type="finding",
                target_ids=[fid for fid, _ in failed],
                details={"attempted": action, "error_types": [err for _, err in failed]},
                key=lifecycle.audit_key(db.settings),
            )
    return outcomes


# -- officer: search, audit log, rules ----------------------------------------------------


def memory_search(
    db: Database,
    actor: Actor,
    *,
    subject: str | None = None,
    text: str | None = None,
    category: str | None = None,
    status: str | None = None,
    namespace: str | None = None,
    page: int = 1,
    page_size: int = 50,
    memory_id: str | None = None,
) -> Page:
    """Find memories (with their text), newest change first; recorded in the audit log.

    ``text`` matches anywhere in the fact, case-insensitively, as a bound LIKE parameter
    with ``%`` and ``_`` escaped (they match themselves). The ``memory.searched`` event
    lists the ids shown and a digest of the subject, never the query text.

    Args:
        db: the store.
        actor: an officer or admin.
        subject: only this subject.
        text: only facts containing it.
        category: only this category.
        status: only this status (None: every status).
        namespace: only this namespace.
        page: the page number, from 1.
        page_size: rows per page (capped at :data:`MAX_PAGE_SIZE`).
        memory_id: only this memory (a link ``?memory=ID`` from a finding).

    Returns:
        A :class:`Page` of memories with the canonical fields.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: an unknown status, a bad page.
    """
    if status is not None and status not in MEMORY_STATUSES:
        raise InputError(f"unknown status {status!r}; expected one of {', '.join(MEMORY_STATUSES)}")
    page, size, offset = paging(page, page_size)
    conds: list[ColumnElement[bool]] = []
    if subject is not None:
        conds.append(Memory.subject == subject)
    in_python = bool(text) and db.cipher is not None  # encrypted facts: SQL cannot LIKE them
    if text and not in_python:
        conds.append(Memory.fact.icontains(text, autoescape=True))
    if category is not None:
        conds.append(Memory.category == category)
    if status is not None:
        conds.append(Memory.status == status)
    if namespace is not None:
        conds.append(Memory.namespace == namespace)
    if memory_id is not None:
        conds.append(Memory.memory_id == str(memory_id)[:128])
    with guard(db, actor, "memory_search"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "memory_search")
        if in_python:
            from auditor.store.crypto_search import search_fact_ids

            order = (Memory.changed_at.desc(), Memory.memory_id.desc())
            ids = search_fact_ids(session, str(text), conds, order)
            total, shown = len(ids), ids[offset : offset + size]
            loaded = session.scalars(select(Memory).where(Memory.memory_id.in_(shown)))
            by_id = {m.memory_id: m for m in loaded}
            found = [by_id[i] for i in shown if i in by_id]
        else:
            total = int(session.scalar(select(func.count()).select_from(Memory).where(*conds)) or 0)
            found = list(
                session.scalars(
                    select(Memory)
                    .where(*conds)
                    .order_by(Memory.changed_at.desc(), Memory.memory_id.desc())
                    .limit(size)
                    .offset(offset)
                ).all()
            )
        rows = [memory_to_dict(m) for m in found]
    with db.write() as session:  # the record of who read what, in a short write
        audit_log.append(
            session,
            actor=actor.username,
            action="memory.searched",
            target_type="memory",
            target_ids=[r["memory_id"] for r in rows],
            details={
                "subject_digest": digest(db, subject) if subject is not None else None,
                "has_text_query": bool(text),
                "category": category,
                "status": status,
                "namespace_given": namespace is not None,
                "page": page,
                "shown": len(rows),
                "total": total,
            },
            key=lifecycle.audit_key(db.settings),
        )
    return Page(rows, total, page, size)


def audit_log_page(
    db: Database,
    actor: Actor,
    *,
    page: int = 1,
    page_size: int = 50,
    action: str | None = None,
    by: str | None = None,
) -> Page:
    """One page of the audit log, newest first.

    Args:
        db: the store.
        actor: an officer or admin.
        page: the page number, from 1.
        page_size: rows per page (capped at :data:`MAX_PAGE_SIZE`).
        action: only actions starting with this (``auth.``, ``memory.quarantined``); the
            text is matched literally.
        by: only events of this actor.

    Returns:
        A :class:`Page` of events: seq, event id, time, actor, action, target type and
        ids, details, hash.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: a bad page.
    """
    page, size, offset = paging(page, page_size)
    conds: list[ColumnElement[bool]] = []
    if action:
        conds.append(AuditEvent.action.startswith(action, autoescape=True))
    if by:
        conds.append(AuditEvent.actor == by)
    with guard(db, actor, "audit_log_page"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "audit_log_page")
        total = int(session.scalar(select(func.count()).select_from(AuditEvent).where(*conds)) or 0)
        events = session.scalars(
            select(AuditEvent)
            .where(*conds)
            .order_by(AuditEvent.seq.desc())
            .limit(size)
            .offset(offset)
        ).all()
        rows = [
            {
                "seq": e.seq,
                "event_id": e.event_id,
                "ts": iso_utc(e.ts),
                "actor": e.actor,
                "action": e.action,
                "target_type": e.target_type,
                "target_ids": list(e.target_ids),
                "details": dict(e.details),
                "hash": e.hash,
            }
            for e in events
        ]
    return Page(rows, total, page, size)


def verify_audit_log(db: Database, actor: Actor) -> dict[str, Any]:
    """Check the audit log's hash chain.

    Returns:
        ``ok``, ``checked`` (events verified), and for a broken chain ``first_bad_seq``,
        ``first_bad_event_id`` and ``reason``.

    Raises:
        AccessDenied: the actor is not an officer or admin.
    """
    with guard(db, actor, "verify_audit_log"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "verify_audit_log")
        result = audit_log.verify(session, key=lifecycle.audit_key(db.settings))
    return {
        "ok": result.ok,
        "checked": result.checked,
        "first_bad_seq": result.first_bad_seq,
        "first_bad_event_id": result.first_bad_event_id,
        "reason": result.reason,
    }


def rule_stats(db: Database, actor: Actor, pack: RulePack | None = None) -> list[dict[str, Any]]:
    """For every rule of the pack: its status and severity, hits, and false-positive rate.

    ``reviewed`` counts findings a person decided (resolved, dismissed or suppressed by
    someone other than the scanner; the scanner's own resolutions and consent-allowed
    suppressions are not reviews). ``false_positives`` counts the dismissed and the
    person-suppressed ones; ``false_positive_rate`` is ``false_positives / reviewed`` (None
    before any review).

    Args:
        db: the store.
        actor: an officer or admin.
        pack: the rule pack (default: the configured pack).

    Returns:
        One row per rule, in pack order: id, title, status, severity, category, action,
        ``hits`` (every finding), ``open`` (open + acknowledged), ``by_status``,
        ``reviewed``, ``false_positives``, ``false_positive_rate``.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        RuleError: the configured pack does not load (when no pack is given).
    """
    with guard(db, actor, "rule_stats"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "rule_stats")
        by_scanner = case((Finding.resolved_by == SCAN_ACTOR, 1), else_=0)
        rows = session.execute(
            select(Finding.rule_id, Finding.status, by_scanner, func.count()).group_by(
                Finding.rule_id, Finding.status, by_scanner
            )
        ).all()
    rules = (pack or load_pack(db.settings.rules_dir, lint=False)).rules
    stats: dict[str, dict[str, Any]] = {}
    for rule_id, status, scanner, n in rows:
        s = stats.setdefault(rule_id, {"by_status": {}, "reviewed": 0, "false_positives": 0})
        s["by_status"][status] = s["by_status"].get(status, 0) + int(n)
        if status in _CLOSED and not scanner:
            s["reviewed"] += int(n)
            if status != FindingStatus.RESOLVED.value:
                s["false_positives"] += int(n)
    out = []
    for rule in rules:
        s = stats.get(rule.id, {"by_status": {}, "reviewed": 0, "false_positives": 0})
        by_status = dict(sorted(s["by_status"].items()))
        reviewed = s["reviewed"]
        out.append(
            {
                "id": rule.id,
                "title": rule.title,
                "status": rule.status,
                "severity": rule.severity,
                "category": rule.category,
                "action": rule.action,
                "hits": sum(by_status.values()),
                "open": by_status.get("open", 0) + by_status.get("acknowledged", 0),
                "by_status": by_status,
                "reviewed": reviewed,
                "false_positives": s["false_positives"],
                "false_positive_rate": round(s["false_positives"] / reviewed, 4)
                if reviewed
                else None,
            }
        )
    return out
