"""Access-checked services of the review queue beyond listing and acting.

What the dashboard's review queue and memory explorer need to work findings quickly, with
the same guard as every service (:mod:`auditor.access.guard`: officers and admins only;
every refusal recorded as ``access.denied``):

* :func:`preview_action`: what an action on a set of findings would do, counted, before it
  runs ("quarantines 12 memories in 2 sources; 3 are already quarantined");
* :func:`memory_findings`: the open findings of one memory, so the memory explorer links
  back to the review queue.

Both read only: nothing is changed and nothing of a memory's text is returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from auditor.access.accounts import Actor
from auditor.access.guard import MAX_BULK, OFFICER_ROLES, guard, require_role
from auditor.access.officer_findings import related_findings
from auditor.errors import InputError
from auditor.scan import review as review_actions
from auditor.store.db import Database

__all__ = ["memory_findings", "preview_action"]


def preview_action(
    db: Database, actor: Actor, finding_ids: Sequence[str], action: str
) -> review_actions.Preview:
    """What ``action`` on ``finding_ids`` would do, counted, without doing it.

    The dashboard shows it before a bulk or destructive action runs and asks for a
    confirmation.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: an unknown action, no ids or too many ids.
    """
    ids = list(dict.fromkeys(str(i) for i in finding_ids))
    if not ids:
        raise InputError("no findings given")
    if len(ids) > MAX_BULK:
        raise InputError(f"at most {MAX_BULK} findings per action; got {len(ids)}")
    with guard(db, actor, "preview_action"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "preview_action")
        return review_actions.preview(session, ids, action)


def memory_findings(db: Database, actor: Actor, memory_id: str) -> list[dict[str, Any]]:
    """The open (and acknowledged) findings of one memory, most severe first.

    Returns:
        Per finding its id, rule, severity, category, status and one-line reason.

    Raises:
        AccessDenied: the actor is not an officer or admin.
    """
    with guard(db, actor, "memory_findings"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "memory_findings")
    return related_findings(db, "", [str(memory_id)[:128]])
