"""What an officer does to findings: :func:`act_on_findings`, one action on one or many.

The actions are the vocabulary of :mod:`auditor.scan.review` (:data:`ACTIONS`, shared with
the CLI's ``memaudit review``): status changes (acknowledge, resolve, reopen, dismiss,
suppress), the lifecycle's quarantine, restore and supersede of the findings' memories,
escalation to an admin. Each finding goes through :func:`auditor.scan.review.apply_one` in
its own savepoint, so history is never rewritten silently (the lifecycle and finding
events); one that fails is reported in its :class:`ActionOutcome` and recorded as
``finding.action_failed``, and the others still apply.

Like every officer service it takes the signed-in
:class:`~auditor.access.accounts.Actor` first and passes the one policy of
:mod:`auditor.access.guard` before anything else (see :mod:`auditor.access.officer`, whose
docstring tells what every officer service checks and records). What an officer reads of
findings (the review queue, a finding's detail) is in :mod:`auditor.access.officer_findings`;
previews of an action in :mod:`auditor.access.review`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from auditor import limits
from auditor.access import accounts
from auditor.access.accounts import Actor
from auditor.access.guard import MAX_BULK, OFFICER_ROLES, guard, require_role
from auditor.errors import InputError, MemauditError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.scan import review as review_actions
from auditor.store.db import Database
from auditor.store.models import Principal

__all__ = ["ACTIONS", "ACTION_HELP", "ADMIN_QUEUE", "ActionOutcome", "act_on_findings"]

#: What an officer can do to findings (see :func:`act_on_findings`): the vocabulary of
#: :mod:`auditor.scan.review`, shared with the CLI.
ACTIONS: tuple[str, ...] = review_actions.ACTIONS
#: What each action does, in a sentence (the dashboard's help texts).
ACTION_HELP: dict[str, str] = review_actions.ACTION_HELP
#: Assignee of an escalation that names no admin: the admins' shared queue.
ADMIN_QUEUE = review_actions.ADMIN_QUEUE


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
