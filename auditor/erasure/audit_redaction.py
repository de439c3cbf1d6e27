"""Redacting an erased subject from the audit log without touching anyone else's trail.

The audit log is the staff's record of who did what. An erasure redacts only what is the
subject's (issue 11, item 7):

* **the subject's own events**: events whose actor is the subject or one of the subject's
  dashboard accounts (matched exactly, never by substring), and events that target the
  subject, its digest, one of its memories or one of its accounts. In those, the actor
  becomes the subject's label (``subject#...``), and targets and details holding the
  subject id or one of the subject's identifying values (found in the subject's own rows)
  are redacted;
* **everyone else's events** lose only the **subject id** where free text holds it (a
  reviewer's note "user:42 called"), matched as that exact id: ``user:ines.duarte`` is not
  found in ``user:ines.duarte-2``. Their actor, action and targets stay as they are, so who
  did what stays visible. The subject's *values* in other people's events are not
  rewritten: verification reports them (a person decides, as for another subject's memory
  that mentions the erased person).

A staff account (any role but ``user``) never loses its name as actor. The rewrite goes
through :func:`auditor.lifecycle.audit_log.redact`, so the hash chain still verifies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from auditor.errors import AuditChainError
from auditor.lifecycle import audit_log
from auditor.store.models import AuditEvent, Principal
from auditor.store.residue import REDACTED, Matcher, matching_rows, redact_json

__all__ = ["AuditScope", "redact_subject_events"]

_CHUNK = 500


@dataclass(frozen=True)
class AuditScope:
    """What identifies the subject's events and data in the log.

    Attributes:
        subject: the subject id.
        digest: its digest.
        label: how the subject is named instead (``subject#...``).
        usernames: user names of the subject's own dashboard accounts (read before the
            accounts are deleted).
        memory_ids: the subject's memory ids (erased now and erased before).
        id_matcher: the subject id, exact (other people's longer ids excluded).
        matcher: the subject id and its identifying values.
    """

    subject: str
    digest: str
    label: str
    usernames: frozenset[str]
    memory_ids: frozenset[str]
    id_matcher: Matcher
    matcher: Matcher


def _staff(session: Session) -> set[str]:
    return set(session.scalars(select(Principal.username).where(Principal.role != "user")))


def _candidates(session: Session, scope: AuditScope) -> set[int]:
    seqs: set[int] = set()
    own_actors = sorted({scope.subject, *scope.usernames})
    seqs.update(session.scalars(select(AuditEvent.seq).where(AuditEvent.actor.in_(own_actors))))
    own_ids = {scope.subject, scope.digest, *scope.memory_ids, *scope.usernames}
    targets = Matcher(sorted(own_ids))  # one pass over the column for many memory ids
    seq = [AuditEvent.seq]
    seqs.update(int(k[0]) for k, _v in matching_rows(session, seq, AuditEvent.target_ids, targets))
    for col in (AuditEvent.actor, AuditEvent.target_ids, AuditEvent.details):
        seqs.update(int(k[0]) for k, _v in matching_rows(session, seq, col, scope.id_matcher))
    return seqs


def _is_own(actor: str, targets: Iterable[str], scope: AuditScope, staff: set[str]) -> bool:
    if actor not in staff and (actor == scope.subject or actor in scope.usernames):
        return True
    return any(
        t in (scope.subject, scope.digest) or t in scope.memory_ids or t in scope.usernames
        for t in targets
    )


def _new_targets(targets: list[str], matcher: Matcher, scope: AuditScope) -> list[str] | None:
    if not any(matcher.search(t) for t in targets):
        return None
    return [
        (scope.label if scope.id_matcher.search(t) else REDACTED) if matcher.search(t) else t
        for t in targets
    ]


def redact_subject_events(
    session: Session,
    scope: AuditScope,
    *,
    actor: str,
    details: dict[str, Any],
    key: bytes | None,
) -> tuple[int, list[str]]:
    """Redact the subject from the audit log (see the module docstring).

    Args:
        session: the erasure's write session.
        scope: the subject's identifiers.
        actor: who erases (recorded on the ``audit.redacted`` event).
        details: ids and counts for the ``audit.redacted`` event.
        key: the audit HMAC key.

    Returns:
        (events redacted, notes: a chain that does not verify is not redacted).
    """
    staff = _staff(session)
    redactions: dict[int, audit_log.Redaction] = {}
    for seq in sorted(_candidates(session, scope)):
        ev_actor, raw_targets, ev_details = session.execute(
            select(AuditEvent.actor, AuditEvent.target_ids, AuditEvent.details).where(
                AuditEvent.seq == seq
            )
        ).one()
        targets = [str(t) for t in raw_targets or []]
        own = _is_own(ev_actor, targets, scope, staff)
        matcher = scope.matcher if own else scope.id_matcher
        new_actor = (
            scope.label
            if ev_actor not in staff and (ev_actor == scope.subject or ev_actor in scope.usernames)
            else None
        )
        new_targets = _new_targets(targets, matcher, scope)
        new_details, changed = redact_json(dict(ev_details or {}), matcher)
        if new_actor is None and new_targets is None and not changed:
            continue
        redactions[seq] = audit_log.Redaction(
            actor=new_actor, target_ids=new_targets, details=new_details if changed else None
        )
    try:
        audit_log.redact(session, redactions, actor=actor, details=details, key=key)
    except AuditChainError as exc:
        return 0, [f"audit events not redacted: {exc}"]
    return len(redactions), []
