"""Reviewer actions on findings: one vocabulary, one validation, one way to apply them.

The dashboard (:func:`auditor.access.officer_actions.act_on_findings`) and the CLI
(``memaudit review``) both use this module, so an officer meets the same actions, the same
rules and the same messages wherever they work:

* :data:`ACTIONS` and :data:`ACTION_HELP`: what a reviewer can do to a finding, in plain
  words. ``suppress`` is ``dismiss`` with the fingerprint suppressed; ``delete``
  soft-deletes the finding's memories (the CLI offers it; the dashboard does not).
* :func:`check_action_args`: the same validation everywhere. ``dismiss`` (and
  ``suppress``) need a note; arguments that belong to another action are refused.
* :func:`apply_one`: applies one action to one finding inside the caller's write session.
  Every action is idempotent: a memory already in the asked state is left alone and the
  outcome says so ("already quarantined"), instead of failing.
* :func:`preview`: what an action on a set of findings would do, counted, before it runs
  ("quarantines 12 memories in 2 sources; 3 are already quarantined").
* :func:`describe`: the one-line message an outcome is reported with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from auditor.config import Settings
from auditor.errors import InputError, NotFoundError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.lifecycle.audit_key import audit_key
from auditor.logging import scrub
from auditor.rulepack.pack import SEVERITIES, SEVERITY_RANK
from auditor.scan.findings import apply_review, finding_to_dict
from auditor.store.models import Finding, FindingStatus, Memory
from auditor.vocab import REVIEW_ACTIONS

__all__ = [
    "ACTIONS",
    "ACTION_HELP",
    "ADMIN_QUEUE",
    "MEMORY_ACTIONS",
    "Preview",
    "apply_one",
    "check_action_args",
    "describe",
    "preview",
]

#: What a reviewer can do to findings, in the order the dashboard offers them (the one list
#: lives in :mod:`auditor.vocab`).
ACTIONS: tuple[str, ...] = REVIEW_ACTIONS
#: Each action in plain words (dashboard labels, CLI help).
ACTION_HELP: dict[str, str] = {
    "acknowledge": "seen, being worked on",
    "resolve": "the problem is fixed",
    "dismiss": "a false positive: needs a reason",
    "suppress": "allowed: dismiss and keep quiet about this fingerprint; needs a reason",
    "quarantine": "hold every memory of the finding out of retrieval, then resolve it",
    "delete": "soft-delete every memory of the finding, then resolve it",
    "restore": "restore every memory of the finding, then resolve it",
    "supersede": "another memory of the same subject replaces the finding's memory",
    "escalate": "severity one step up, assigned to an admin (or the admins' queue)",
    "reopen": "open a closed finding again",
}
#: Actions that change memories (previewed and confirmed before they run).
MEMORY_ACTIONS: tuple[str, ...] = ("quarantine", "delete", "restore")
#: The memory state each memory action leads to, for messages and previews.
_STATE_WORD = {"quarantine": "quarantined", "delete": "deleted", "restore": "restored"}
_ALREADY_STATES = {
    "quarantine": frozenset({"quarantined"}),
    "delete": frozenset({"deleted"}),
    "restore": frozenset({"active", "superseded"}),
}
#: Assignee of an escalation that names no admin: the admins' shared queue.
ADMIN_QUEUE = "role:admin"
_CLOSED = (
    FindingStatus.RESOLVED.value,
    FindingStatus.DISMISSED.value,
    FindingStatus.SUPPRESSED.value,
)
_STATUS_OF = {
    "acknowledge": FindingStatus.ACKNOWLEDGED.value,
    "resolve": FindingStatus.RESOLVED.value,
    "dismiss": FindingStatus.DISMISSED.value,
    "suppress": FindingStatus.SUPPRESSED.value,
    "reopen": FindingStatus.OPEN.value,
}


def check_action_args(
    action: str,
    reason: str | None,
    suppress: bool = False,
    superseding_memory_id: str | None = None,
    assignee: str | None = None,
) -> None:
    """Refuse an unknown action or arguments that do not go with it.

    Raises:
        InputError: naming what is wrong and what is expected.
    """
    if action not in ACTIONS:
        raise InputError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    if action in ("dismiss", "suppress") and not (reason and reason.strip()):
        raise InputError(
            f"{action} (a false positive) needs a reason: say why it is not a problem "
            "(the rule's known false positives are good reasons)"
        )
    if suppress and action != "dismiss":
        raise InputError("suppress goes with dismiss only")
    if (action == "supersede") != (superseding_memory_id is not None):
        raise InputError(
            "supersede needs the superseding memory id (superseding_memory_id; in the CLI "
            "--supersede-by) and only supersede takes it"
        )
    if assignee is not None and action != "escalate":
        raise InputError("an assignee goes with escalate only")


def _supersede_one(
    session: Session,
    settings: Settings,
    actor: str,
    finding_id: str,
    new_id: str,
    reason: str | None,
    approve_tier_override: bool,
) -> dict[str, Any]:
    finding = session.get(Finding, finding_id)
    if finding is None:
        raise NotFoundError(f"no finding with id {finding_id!r}")
    ids = [link.memory_id for link in sorted(finding.memories, key=lambda x: x.position)]
    others = [m for m in ids if m != new_id]
    if len(others) != 1:
        raise InputError(
            f"finding {finding_id} is about {len(ids)} memories: supersede needs exactly one "
            f"memory other than {new_id} (name one of the finding's memories, or use a "
            "finding about one memory)"
        )
    old = lifecycle.get(session, others[0])
    new = lifecycle.get(session, new_id)
    if new.subject != old.subject:
        raise InputError(
            f"memory {new_id} is about another subject than {old.memory_id}: a memory can only "
            "supersede a memory of the same subject"
        )
    if old.status == "superseded" and new.supersedes == old.memory_id:
        # Already done (by this reviewer a moment ago, or by the agent): say so.
        out = apply_review(session, settings, finding_id, "resolve", actor=actor, note=reason)
        out["already"] = [old.memory_id]
        return out
    lifecycle.supersede(
        session,
        settings,
        old.memory_id,
        new_id,
        actor=actor,
        approved_by=actor if approve_tier_override else None,
    )
    note = f"superseded {old.memory_id} by {new_id}" + (f": {reason}" if reason else "")
    return apply_review(session, settings, finding_id, "resolve", actor=actor, note=note)


def _escalate_one(
    session: Session,
    settings: Settings,
    actor: str,
    finding_id: str,
    assignee: str,
    reason: str | None,
) -> dict[str, Any]:
    finding = session.get(Finding, finding_id)
    if finding is None:
        raise NotFoundError(f"no finding with id {finding_id!r}")
    if finding.status in _CLOSED:
        raise InputError(f"finding {finding_id} is {finding.status}: reopen it before escalating")
    before = finding.severity
    rank = SEVERITY_RANK.get(before, 0)
    finding.severity = SEVERITIES[min(rank + 1, len(SEVERITIES) - 1)]
    finding.assignee = assignee
    details: dict[str, Any] = {
        "from_severity": before,
        "to_severity": finding.severity,
        "assignee": assignee,
        "status": finding.status,
    }
    if reason:
        details["note"] = scrub(reason, limit=500)
    audit_log.append(
        session,
        actor=actor,
        action="finding.escalated",
        target_type="finding",
        target_ids=[finding_id],
        details=details,
        key=audit_key(settings),
    )
    session.flush()
    out = finding_to_dict(finding)
    out["already"] = []
    out["unchanged"] = before == finding.severity and finding.assignee == assignee
    return out


def apply_one(
    session: Session,
    settings: Settings,
    finding_id: str,
    action: str,
    *,
    actor: str,
    reason: str | None = None,
    suppress: bool = False,
    superseding_memory_id: str | None = None,
    assignee: str = ADMIN_QUEUE,
    approve_tier_override: bool = False,
) -> dict[str, Any]:
    """Apply one checked action (see :func:`check_action_args`) to one finding.

    Returns:
        The finding after the action (:func:`auditor.scan.findings.finding_to_dict`), with
        ``already`` (memory ids that were already in the asked state) and ``unchanged``.

    Raises:
        NotFoundError: no such finding or memory.
        LifecycleError: a transition the lifecycle refuses (a deleted memory quarantined).
        InputError: a supersede or escalation that cannot apply to this finding.
    """
    if action == "supersede":
        if superseding_memory_id is None:
            raise InputError("supersede needs the superseding memory id")
        return _supersede_one(
            session,
            settings,
            actor,
            finding_id,
            superseding_memory_id,
            reason,
            approve_tier_override,
        )
    if action == "escalate":
        return _escalate_one(session, settings, actor, finding_id, assignee, reason)
    review_action = "suppress" if action == "dismiss" and suppress else action
    return apply_review(session, settings, finding_id, review_action, actor=actor, note=reason)


def describe(action: str, result: dict[str, Any]) -> str:
    """One line for an outcome: ``dismissed``, ``already quarantined; finding resolved``..."""
    already = result.get("already") or []
    status = result.get("status")
    if action in MEMORY_ACTIONS:
        word = _STATE_WORD[action]
        n = len(already)
        if result.get("unchanged") or (n and n == len(result.get("memory_ids") or [])):
            return f"already {word}; finding {status}"
        if n:
            return f"{word} ({n} already {word}); finding {status}"
        return f"{word}; finding {status}"
    if result.get("unchanged") and action in _STATUS_OF:
        return f"already {status}; nothing changed"
    if action == "escalate":
        return f"escalated to {result.get('severity')}, assigned to {result.get('assignee')}"
    return f"finding {status}"


@dataclass(frozen=True)
class Preview:
    """What an action on a set of findings would do, before it runs."""

    action: str
    findings: int
    missing: tuple[str, ...]
    memories: int
    sources: int
    already: int
    closed: int

    def sentence(self) -> str:
        """The preview in words: ``quarantines 12 memories in 2 sources; 3 are already
        quarantined`` (memory actions) or ``dismisses 5 findings; 1 is already closed``."""
        missing = f"; {len(self.missing)} not found" if self.missing else ""
        if self.action in MEMORY_ACTIONS:
            verb = {"quarantine": "quarantines", "delete": "deletes", "restore": "restores"}[
                self.action
            ]
            word = _STATE_WORD[self.action]
            return (
                f"{verb} {_n(self.memories, 'memory', 'memories')} in "
                f"{_n(self.sources, 'source', 'sources')} and resolves "
                f"{_n(self.findings, 'finding', 'findings')}; "
                f"{self.already} {'is' if self.already == 1 else 'are'} already {word}{missing}"
            )
        verb = {
            "acknowledge": "acknowledges",
            "resolve": "resolves",
            "dismiss": "dismisses",
            "suppress": "suppresses",
            "supersede": "supersedes the memory of",
            "escalate": "escalates",
            "reopen": "reopens",
        }[self.action]
        closed = (
            f"; {self.closed} {'is' if self.closed == 1 else 'are'} already closed"
            if self.closed
            else ""
        )
        return f"{verb} {_n(self.findings, 'finding', 'findings')}{closed}{missing}"


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def preview(session: Session, finding_ids: Sequence[str], action: str) -> Preview:
    """Count what ``action`` on ``finding_ids`` would touch, without changing anything.

    Sources are the memories' namespaces (the store or agent each memory came from).
    """
    if action not in ACTIONS:
        raise InputError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    ids = list(dict.fromkeys(str(i) for i in finding_ids))
    found = session.scalars(
        select(Finding).options(selectinload(Finding.memories)).where(Finding.finding_id.in_(ids))
    ).all()
    by_id = {f.finding_id: f for f in found}
    missing = tuple(i for i in ids if i not in by_id)
    memory_ids = {link.memory_id for f in found for link in f.memories}
    rows = (
        session.execute(
            select(Memory.memory_id, Memory.namespace, Memory.status).where(
                Memory.memory_id.in_(memory_ids)
            )
        ).all()
        if memory_ids
        else []
    )
    states = _ALREADY_STATES.get(action, frozenset())
    return Preview(
        action=action,
        findings=len(found),
        missing=missing,
        memories=len(rows),
        sources=len({r.namespace for r in rows}),
        already=sum(1 for r in rows if r.status in states),
        closed=sum(1 for f in found if f.status in _CLOSED),
    )
