"""Access-checked services for users: their own memories, corrections, deletes, export.

A user (role ``user``, bound to one subject) sees everything remembered about their subject
and nothing else (:func:`auditor.access.guard.own_memory` gives the same refusal for "not
yours" and "does not exist"). The services, through :mod:`auditor.access.guard`:

* :func:`my_memories`, :func:`my_memory`: every memory of the subject in every status, with
  provenance, what superseded it, and why it was flagged (rule title, redacted reason);
* :func:`correct_my_memory`: a user-tier memory supersedes the old one. When a sensitive-data
  or secret finding flagged the old memory (a sensitive inference), the correction also
  removes it: the old memory is soft-deleted, its text replaced by a marker
  (``memory.redacted``), and its open findings resolved; other corrections keep the old
  memory as superseded history;
* :func:`delete_my_memory`: a soft delete marked as the subject's request;
* :func:`export_my_data`: everything held about the subject (``subject.exported``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from ulid import ULID

from auditor import limits
from auditor.access.accounts import Actor
from auditor.access.guard import (
    USER_ROLES,
    digest,
    guard,
    own_memory,
    pack_or_default,
    require_role,
    rules_by_id,
)
from auditor.access.readers import MemoryFilter, export_subject, iter_memories
from auditor.errors import InputError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.lifecycle.audit_key import audit_key
from auditor.rulepack.pack import Rule, RulePack
from auditor.scan.findings import apply_review
from auditor.store.db import Database
from auditor.store.models import Finding, FindingMemory, Memory
from auditor.store.types import iso_utc

__all__ = [
    "correct_my_memory",
    "delete_my_memory",
    "export_my_data",
    "my_memories",
    "my_memory",
]

_USER_DELETE_REASON = "requested by the subject (dashboard)"
_CORRECTED_REASON = "corrected by the subject: the sensitive inference is removed"
#: What stays of a removed sensitive inference's text.
_REMOVED_TEXT = "[removed: the subject corrected this sensitive inference]"
#: Finding categories whose correction removes the old text.
_SENSITIVE_CATEGORIES = ("sensitive", "secret")


def _flags(
    session: Session, memory_ids: list[str], rules: dict[str, Rule]
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(memory_ids), 500):
        rows = session.execute(
            select(Finding, FindingMemory.memory_id)
            .join(FindingMemory, FindingMemory.finding_id == Finding.finding_id)
            .where(FindingMemory.memory_id.in_(memory_ids[start : start + 500]))
            .order_by(Finding.first_seen)
        ).all()
        for f, mid in rows:
            rule = rules.get(f.rule_id)
            out.setdefault(mid, []).append(
                {
                    "finding_id": f.finding_id,
                    "rule_id": f.rule_id,
                    "title": rule.title if rule is not None else f.rule_id,
                    "category": f.category,
                    "severity": f.severity,
                    "status": f.status,
                    "reason": (f.evidence or {}).get("reason"),
                    "first_seen": iso_utc(f.first_seen),
                }
            )
    return out


def _user_memory(
    m: Memory, flags: list[dict[str, Any]], superseded_by: str | None
) -> dict[str, Any]:
    return {
        "memory_id": m.memory_id,
        "fact": m.fact,
        "kind": m.kind,
        "category": m.category,
        "namespace": m.namespace,
        "status": m.status,
        "trust_tier": m.trust_tier,
        "source": {
            "type": m.source_type,
            "session_id": m.source_session_id,
            "turn": m.source_turn,
            "uri": m.source_uri,
        },
        "origin": m.origin,
        "created_at": iso_utc(m.created_at),
        "updated_at": iso_utc(m.updated_at),
        "expires_at": iso_utc(m.expires_at),
        "deleted_at": iso_utc(m.deleted_at),
        "supersedes": m.supersedes,
        "superseded_by": superseded_by,
        "flags": flags,
    }


def my_memories(db: Database, actor: Actor, pack: RulePack | None = None) -> dict[str, Any]:
    """Everything remembered about the actor's subject, grouped by category and namespace.

    Every status is included (superseded, quarantined and soft-deleted memories are still
    held). Each memory carries its text, provenance, times, status, what it supersedes and
    what superseded it, and ``flags``: the findings on it with the rule's title and the
    detector's redacted reason.

    Args:
        db: the store.
        actor: a user.
        pack: the rule pack for titles (default: the configured one; rule ids if it does
            not load).

    Returns:
        ``counts`` (memories in all and by status) and ``groups``: a list of
        ``{category, namespace, memories}``, sorted.

    Raises:
        AccessDenied: the actor is not a user, or the session is stale.
    """
    with guard(db, actor, "my_memories"), db.session() as session:
        require_role(session, actor, USER_ROLES, "my_memories")
    assert actor.subject is not None  # a user actor always has one
    rules = rules_by_id(pack_or_default(db, pack))
    memories = list(iter_memories(db, MemoryFilter(subject=actor.subject, status=None)))
    successor = {m.supersedes: m.memory_id for m in memories if m.supersedes is not None}
    with db.session() as session:
        flags = _flags(session, [m.memory_id for m in memories], rules)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    by_status: dict[str, int] = {}
    for m in memories:
        groups.setdefault((m.category, m.namespace), []).append(
            _user_memory(m, flags.get(m.memory_id, []), successor.get(m.memory_id))
        )
        by_status[m.status] = by_status.get(m.status, 0) + 1
    return {
        "counts": {"memories": len(memories), "by_status": dict(sorted(by_status.items()))},
        "groups": [
            {"category": c, "namespace": ns, "memories": rows}
            for (c, ns), rows in sorted(groups.items())
        ],
    }


def my_memory(
    db: Database, actor: Actor, memory_id: str, pack: RulePack | None = None
) -> dict[str, Any]:
    """One of the actor's memories, with why it was flagged and its supersede chain.

    Links of the chain that belong to another subject (an imported store can hold such
    links) are shown as ``{"memory_id": None, "hidden": True}``.

    Args:
        db: the store.
        actor: a user.
        memory_id: the memory.
        pack: the rule pack for titles.

    Returns:
        The memory as :func:`my_memories` shows it, plus ``chain`` (oldest first).

    Raises:
        AccessDenied: the actor is not a user, or the memory is not theirs (or does not
            exist).
    """
    rules = rules_by_id(pack_or_default(db, pack))
    with guard(db, actor, "my_memory"), db.session() as session:
        require_role(session, actor, USER_ROLES, "my_memory")
        memory = own_memory(session, actor, memory_id)
        chain = lifecycle.chain_of(session, memory.memory_id)
        ordered = [*reversed(chain.older), memory, *chain.newer]
        links = [
            {
                "memory_id": m.memory_id,
                "status": m.status,
                "trust_tier": m.trust_tier,
                "created_at": iso_utc(m.created_at),
                "current": m.memory_id == memory.memory_id,
            }
            if m.subject == actor.subject
            else {"memory_id": None, "hidden": True}
            for m in ordered
        ]
        newer = [m.memory_id for m in chain.newer if m.subject == actor.subject]
        flags = _flags(session, [memory.memory_id], rules)
        out = _user_memory(memory, flags.get(memory.memory_id, []), newer[0] if newer else None)
    out["chain"] = links
    return out


def correct_my_memory(db: Database, actor: Actor, memory_id: str, new_fact: str) -> dict[str, Any]:
    """Correct one of the actor's memories: a new user-tier memory supersedes it.

    The correction keeps the memory's namespace, kind and category; its source is an
    ``explicit_statement`` from the dashboard (the user tier under the default policy) and
    ``extra`` says it is the subject's correction. The lifecycle checks the chain (the
    memory must be the active head) and the tier policy, and records ``memory.superseded``.

    Args:
        db: the store.
        actor: a user.
        memory_id: the memory to correct.
        new_fact: what is true instead.

    Returns:
        The new memory as :func:`my_memories` shows it.

    Raises:
        AccessDenied: the actor is not a user, or the memory is not theirs.
        InputError: the correction is empty or too long.
        LifecycleError: the memory is not the active head of its chain, or has a higher
            tier than the user's (an officer must approve that).
    """
    if not isinstance(new_fact, str) or not new_fact.strip():
        raise InputError("the correction is empty")
    limits.check_correction(new_fact, db.settings, where="correct my memory")
    with guard(db, actor, "correct_my_memory"), db.write() as session:
        require_role(session, actor, USER_ROLES, "correct_my_memory")
        old = own_memory(session, actor, memory_id, lock=True)
        record = {
            "memory_id": f"mem_{ULID()}",
            "subject": old.subject,
            "namespace": old.namespace,
            "kind": old.kind,
            "category": old.category,
            "fact": new_fact,
            "confidence": 1.0,
            "source": {"type": "explicit_statement", "uri": "memaudit:dashboard"},
            "supersedes": old.memory_id,
            "correction_of": old.memory_id,
            "corrected_by": "subject",
        }
        new = lifecycle.supersede(session, db.settings, old.memory_id, record, actor=actor.username)
        removed = _remove_sensitive_inference(session, db, actor, old)
        out = _user_memory(new, [], None)
        out["removed_old_text"] = removed
        return out


def _remove_sensitive_inference(session: Session, db: Database, actor: Actor, old: Memory) -> bool:
    """After a correction: a corrected memory that a sensitive-data or secret finding flagged
    does not stay readable on file.

    The superseded memory is soft-deleted and its text replaced by a marker (the content
    hash stays, so fingerprints and the chain still hold; no text is left to read), its
    open findings are resolved ("corrected by the subject"), and ``memory.redacted`` is
    recorded. Other corrections keep the old memory as history (superseded), as the
    lifecycle does for every supersede.

    Returns:
        Whether the old text was removed.
    """
    flagged = session.scalars(
        select(Finding)
        .join(FindingMemory, FindingMemory.finding_id == Finding.finding_id)
        .where(
            FindingMemory.memory_id == old.memory_id,
            Finding.category.in_(_SENSITIVE_CATEGORIES),
        )
    ).all()
    if not flagged:
        return False
    lifecycle.soft_delete(
        session, db.settings, old.memory_id, actor=actor.username, reason=_CORRECTED_REASON
    )
    old.fact = _REMOVED_TEXT
    audit_log.append(
        session,
        actor=actor.username,
        action="memory.redacted",
        target_type="memory",
        target_ids=[old.memory_id],
        details={"reason": _CORRECTED_REASON, "by_subject": True},
        key=audit_key(db.settings),
    )
    for finding in flagged:
        if finding.status in ("open", "acknowledged"):
            apply_review(
                session,
                db.settings,
                finding.finding_id,
                "resolve",
                actor=actor.username,
                note=_CORRECTED_REASON,
            )
    session.flush()
    return True


def delete_my_memory(db: Database, actor: Actor, memory_id: str) -> dict[str, Any]:
    """Soft-delete one of the actor's memories at their request.

    The memory is held until retention or erasure purges it; the ``memory.deleted`` event
    names the user as actor and gives the reason "requested by the subject (dashboard)".

    Returns:
        ``memory_id`` and its new ``status``.

    Raises:
        AccessDenied: the actor is not a user, or the memory is not theirs.
        LifecycleError: the memory is already deleted.
    """
    with guard(db, actor, "delete_my_memory"), db.write() as session:
        require_role(session, actor, USER_ROLES, "delete_my_memory")
        memory = own_memory(session, actor, memory_id, lock=True)
        lifecycle.soft_delete(
            session, db.settings, memory.memory_id, actor=actor.username, reason=_USER_DELETE_REASON
        )
        return {"memory_id": memory.memory_id, "status": memory.status}


def export_my_data(db: Database, actor: Actor) -> dict[str, Any]:
    """Everything held about the actor's own subject (the right of access), as JSON.

    The same document as ``memaudit export`` (:func:`auditor.access.readers.export_subject`),
    only ever for the actor's own subject; recorded as ``subject.exported``.

    Raises:
        AccessDenied: the actor is not a user, or the session is stale.
    """
    with guard(db, actor, "export_my_data"), db.session() as session:
        require_role(session, actor, USER_ROLES, "export_my_data")
    assert actor.subject is not None  # a user actor always has one
    data = export_subject(db, actor.subject)
    with db.write() as session:
        audit_log.append(
            session,
            actor=actor.username,
            action="subject.exported",
            target_type="subject",
            target_ids=[digest(db, actor.subject)],
            details={
                "by_subject": True,
                "memories": data["counts"]["memories"],
                "findings": data["counts"]["findings"],
            },
            key=audit_key(db.settings),
        )
    return data
