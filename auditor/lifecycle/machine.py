"""The memory state machine: add, supersede, soft-delete, quarantine, expire, restore.

Every transition checks the store's invariants at write time, writes the memory with an
optimistic version check, and appends an audit event in the same transaction:

* a supersede link never dangles and never closes a cycle;
* a chain has at most one active head, and superseded memories are never active;
* a lower trust tier never supersedes a higher one without a reviewer's approval;
* two writers racing on one memory never lose an update silently: the loser gets
  :class:`~auditor.errors.ConcurrencyError` and nothing of its transaction is kept.

Allowed status transitions (``restore`` returns to the status before the transition)::

    active      -> superseded (supersede) | deleted | quarantined | expired
    superseded  -> deleted | quarantined
    expired     -> deleted | quarantined | restore
    quarantined -> deleted | restore
    deleted     -> restore  (until retention or erasure purges it)

Functions take a write :class:`~sqlalchemy.orm.Session` so that the scan engine can batch
them; :class:`Lifecycle` wraps each call in its own transaction. Quarantining (or restoring
from quarantine) a memory of a live source with write-back also adds a row to the
write-back outbox in that transaction (:mod:`auditor.sources.outbox`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from auditor import limits
from auditor.config import Settings, tier_rank
from auditor.errors import (
    ChainForkError,
    ConcurrencyError,
    DanglingLinkError,
    InputError,
    InvalidTransitionError,
    NotFoundError,
    SupersedeCycleError,
    TrustTierError,
)
from auditor.lifecycle import audit_log, hooks
from auditor.lifecycle.audit_key import audit_key
from auditor.records import MemoryRecord, parse_record
from auditor.store.db import Database
from auditor.store.models import Memory, MemoryStatus, Tombstone
from auditor.store.types import utcnow

__all__ = [
    "Chain",
    "Lifecycle",
    "add",
    "audit_key",
    "chain_of",
    "check_transition",
    "expire",
    "get",
    "quarantine",
    "record_access",
    "restore",
    "soft_delete",
    "supersede",
    "transition_many",
]

ACTIVE = MemoryStatus.ACTIVE.value
SUPERSEDED = MemoryStatus.SUPERSEDED.value
EXPIRED = MemoryStatus.EXPIRED.value
QUARANTINED = MemoryStatus.QUARANTINED.value
DELETED = MemoryStatus.DELETED.value

_FROM: dict[str, frozenset[str]] = {
    DELETED: frozenset({ACTIVE, SUPERSEDED, EXPIRED, QUARANTINED}),
    QUARANTINED: frozenset({ACTIVE, SUPERSEDED, EXPIRED}),
    EXPIRED: frozenset({ACTIVE}),
}
_RESTORABLE = frozenset({DELETED, QUARANTINED, EXPIRED})
_MAX_CHAIN = 100_000

T = TypeVar("T")


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def get(session: Session, memory_id: str) -> Memory:
    """Load one memory.

    Raises:
        NotFoundError: there is no memory with that id.
    """
    memory = session.get(Memory, memory_id)
    if memory is None:
        raise NotFoundError(f"no memory with id {memory_id!r}")
    return memory


def _check_version(memory: Memory, expected_version: int | None) -> None:
    if expected_version is not None and memory.version != expected_version:
        raise ConcurrencyError(
            f"memory {memory.memory_id} changed since it was read (version "
            f"{expected_version} read, now {memory.version}); reload and retry"
        )


def _flush(session: Session, memory_id: str) -> None:
    try:
        session.flush()
    except StaleDataError:
        raise ConcurrencyError(
            f"memory {memory_id} was changed by another writer; reload and retry"
        ) from None


def _audit(
    session: Session,
    settings: Settings,
    actor: str,
    action: str,
    ids: list[str],
    details: dict[str, Any],
) -> None:
    audit_log.append(
        session,
        actor=actor,
        action=action,
        target_type="memory",
        target_ids=ids,
        details=details,
        key=audit_key(settings),
    )


def _require_actor(actor: str) -> str:
    if not actor or not actor.strip():
        raise InputError("an actor is required (--by WHO): every transition is attributed")
    return actor.strip()


def _successors(session: Session, memory_id: str) -> list[Memory]:
    return list(
        session.execute(select(Memory).where(Memory.supersedes == memory_id)).scalars().all()
    )


def _ancestor_ids(session: Session, memory: Memory) -> Iterator[str]:
    """Ids reached by following ``supersedes`` links back from ``memory`` (stops at a cycle)."""
    seen = {memory.memory_id}
    link = memory.supersedes
    while link is not None and link not in seen and len(seen) < _MAX_CHAIN:
        seen.add(link)
        yield link
        older = session.get(Memory, link)
        link = older.supersedes if older is not None else None


def _as_record(record: MemoryRecord | Mapping[str, Any], settings: Settings) -> MemoryRecord:
    if isinstance(record, MemoryRecord):
        return record
    return parse_record(dict(record), "record", settings)


def _insert(
    session: Session, settings: Settings, record: MemoryRecord, supersedes: str | None
) -> Memory:
    if record.status not in (None, ACTIVE):
        raise InputError(
            f"a new memory starts active; got status {record.status!r} "
            "(use the lifecycle actions to change it)"
        )
    if session.get(Memory, record.memory_id) is not None:
        raise InputError(f"memory {record.memory_id!r} already exists")
    tomb = session.execute(
        select(Tombstone.id).where(Tombstone.memory_id == record.memory_id).limit(1)
    ).first()
    if tomb is not None:
        raise InputError(f"memory {record.memory_id!r} was erased and cannot be re-created")
    row = record.to_row(settings, utcnow())
    row.update(status=ACTIVE, status_source="memaudit", supersedes=supersedes, origin="memaudit")
    memory = Memory(**row)
    session.add(memory)
    return memory


def add(
    session: Session,
    settings: Settings,
    record: MemoryRecord | Mapping[str, Any],
    *,
    actor: str,
    approved_by: str | None = None,
) -> Memory:
    """Store a new active memory; a record with ``supersedes`` goes through :func:`supersede`.

    Raises:
        RecordError: the record is invalid.
        InputError: the id exists already, or was erased.
        LifecycleError: the supersede link would break an invariant.
    """
    actor = _require_actor(actor)
    rec = _as_record(record, settings)
    if rec.supersedes is not None:
        return supersede(
            session, settings, rec.supersedes, rec, actor=actor, approved_by=approved_by
        )
    memory = _insert(session, settings, rec, None)
    _flush(session, memory.memory_id)
    _audit(
        session,
        settings,
        actor,
        "memory.added",
        [memory.memory_id],
        {"trust_tier": memory.trust_tier, "category": memory.category, "kind": memory.kind},
    )
    return memory


def supersede(
    session: Session,
    settings: Settings,
    old_id: str,
    new: MemoryRecord | Mapping[str, Any] | str,
    *,
    actor: str,
    approved_by: str | None = None,
    expected_version: int | None = None,
) -> Memory:
    """Replace ``old_id`` by a new record, or by an existing memory (given by id).

    Args:
        old_id: the memory being replaced; it must be the active head of its chain.
        new: a new record, or the id of an existing active memory to link as the successor.
        actor: who does it.
        approved_by: a reviewer who approves a lower tier superseding a higher one.
        expected_version: the version of ``old_id`` the caller read (optimistic lock).

    Returns:
        The new head of the chain.

    Raises:
        DanglingLinkError: ``old_id`` does not exist.
        ChainForkError: ``old_id`` is not the active head of its chain.
        SupersedeCycleError: linking would close a cycle.
        TrustTierError: the new memory's tier is lower and nobody approved.
        ConcurrencyError: another writer changed ``old_id`` first.
    """
    actor = _require_actor(actor)
    old = session.get(Memory, old_id)
    if old is None:
        raise DanglingLinkError(f"cannot supersede {old_id!r}: no such memory")
    _check_version(old, expected_version)
    if old.status != ACTIVE:
        heads = [m.memory_id for m in _successors(session, old_id) if m.status == ACTIVE]
        hint = f"; its active successor is {heads[0]}" if heads else ""
        raise ChainForkError(
            f"memory {old_id} is {old.status}, not the active head of its chain{hint}"
        )
    others = [m.memory_id for m in _successors(session, old_id)]
    successor: Memory | None = None
    rec: MemoryRecord | None = None
    if isinstance(new, str):
        successor = _linkable_successor(session, old, new)
        others = [o for o in others if o != successor.memory_id]
        new_tier = successor.trust_tier
    else:
        rec = _successor_record(old, new, settings)
        new_tier = settings.tier_for(rec.source.type if rec.source else None)
    if others:
        raise ChainForkError(
            f"memory {old_id} already has a successor ({', '.join(sorted(others))}); "
            "a chain may have only one head"
        )
    inverted = tier_rank(new_tier) < tier_rank(old.trust_tier)
    if inverted and not (approved_by and approved_by.strip()):
        raise TrustTierError(
            f"{_article(new_tier)} {new_tier}-tier memory cannot supersede {old_id} "
            f"({old.trust_tier} tier) "
            "without a reviewer's approval (--approved-by)"
        )
    if successor is None:
        assert rec is not None
        successor = _insert(session, settings, rec, old_id)  # inserted with its link
    else:
        successor.supersedes = old_id
        successor.updated_at = utcnow()
    if inverted:  # detectors see the approval on the memory itself, not only in the audit log
        successor.extra = {**(successor.extra or {}), "supersede_approved_by": approved_by}
    old.status = SUPERSEDED
    old.status_source = "memaudit"
    old.prior_status = ACTIVE
    old.updated_at = utcnow()
    _flush(session, old_id)
    details: dict[str, Any] = {"new_head": successor.memory_id, "tier_override": inverted}
    if inverted:
        details["approved_by"] = approved_by
    _audit(session, settings, actor, "memory.superseded", [old_id, successor.memory_id], details)
    return successor


def _linkable_successor(session: Session, old: Memory, new_id: str) -> Memory:
    """The existing memory ``new_id``, checked: it may become ``old``'s successor."""
    old_id = old.memory_id
    successor = get(session, new_id)
    if successor.memory_id == old_id:
        raise SupersedeCycleError(f"memory {old_id} cannot supersede itself")
    if successor.status != ACTIVE:
        raise InvalidTransitionError(
            f"memory {successor.memory_id} is {successor.status}; only an active memory "
            "can supersede another"
        )
    if successor.supersedes is not None:
        raise InvalidTransitionError(
            f"memory {successor.memory_id} already supersedes {successor.supersedes}"
        )
    if successor.memory_id in set(_ancestor_ids(session, old)):
        raise SupersedeCycleError(
            f"memory {successor.memory_id} is an ancestor of {old_id}: linking would close a cycle"
        )
    return successor


def _successor_record(
    old: Memory, new: MemoryRecord | Mapping[str, Any], settings: Settings
) -> MemoryRecord:
    """The new record, checked: it may become ``old``'s successor."""
    old_id = old.memory_id
    rec = _as_record(new, settings)
    if rec.memory_id == old_id:
        raise SupersedeCycleError(f"memory {old_id} cannot supersede itself")
    if rec.supersedes not in (None, old_id):
        raise InputError(f"record says it supersedes {rec.supersedes!r}, but {old_id!r} was named")
    if rec.subject != old.subject:
        raise InputError(
            "a memory can only supersede a memory of the same subject "
            f"({old_id} is about another subject)"
        )
    return rec


def _transition(
    session: Session,
    settings: Settings,
    memory_id: str,
    to_status: str,
    *,
    actor: str,
    reason: str | None,
    expected_version: int | None,
) -> Memory:
    actor = _require_actor(actor)
    memory = _take(session, settings, memory_id, to_status, reason, expected_version)
    _flush(session, memory_id)
    audit_log.append_many(
        session, [_event(actor, memory, to_status, reason)], key=audit_key(settings)
    )
    _hooks(session, settings, memory, to_status)
    return memory


def transition_many(
    session: Session,
    settings: Settings,
    items: Sequence[tuple[str, str, str | None]],
    *,
    actor: str,
) -> list[Memory]:
    """Quarantine or expire several memories, as one call each would, in one write.

    ``items``: ``(memory_id, to_status, reason)`` in order, ``to_status`` ``quarantined``
    or ``expired``. Each is checked as its own call checks it, seeing the ones before it;
    then the memories are written in one flush and their events (one per memory, as
    before) appended in one go. All or nothing: the first that cannot be applied raises
    and the caller rolls back (a scan runs this in a savepoint and, on an error, applies
    them one by one to say which failed).

    Raises:
        LifecycleError: one of them cannot be applied (the message names it).
    """
    actor = _require_actor(actor)
    changed: list[Memory] = []
    events: list[audit_log.Pending] = []
    for memory_id, to_status, reason in items:
        if to_status not in (QUARANTINED, EXPIRED):
            raise InputError(f"transition_many: {to_status!r} is not quarantined or expired")
        memory = _take(session, settings, memory_id, to_status, reason, None)
        events.append(_event(actor, memory, to_status, reason))
        changed.append(memory)
    if changed:
        _flush(session, changed[0].memory_id)
        audit_log.append_many(session, events, key=audit_key(settings))
        for memory, (_mid, to_status, _reason) in zip(changed, items, strict=True):
            _hooks(session, settings, memory, to_status)
    return changed


def _take(
    session: Session,
    settings: Settings,
    memory_id: str,
    to_status: str,
    reason: str | None,
    expected_version: int | None,
) -> Memory:
    """Check one transition and apply it to the loaded memory (not flushed)."""
    where = f"memory {memory_id[: limits.MAX_MEMORY_ID_CHARS]}"
    limits.check_note(reason, settings, what="the reason", where=where)
    memory = get(session, memory_id)
    _check_version(memory, expected_version)  # a stale writer hears "changed", first
    _check_status(memory, to_status)
    now = utcnow()
    memory.prior_status = memory.status
    memory.status = to_status
    memory.status_source = "memaudit"
    memory.updated_at = now
    if to_status == DELETED:
        memory.deleted_at = now
    return memory


def _event(actor: str, memory: Memory, to_status: str, reason: str | None) -> audit_log.Pending:
    previous = memory.prior_status
    details = {"from": previous, "reason": reason} if reason else {"from": previous}
    return audit_log.Pending(actor, f"memory.{to_status}", "memory", (memory.memory_id,), details)


def _hooks(session: Session, settings: Settings, memory: Memory, to_status: str) -> None:
    if to_status == QUARANTINED:  # a live source's item is taken out there too (outbox)
        hooks.notify(session, settings, memory, "quarantine")


def check_transition(
    session: Session, memory_id: str, to_status: str, *, status: str | None = None
) -> Memory:
    """The memory, if it may move to ``to_status`` now (what a transition checks first).

    Reads only: a caller that applies many transitions in one transaction can ask first
    and skip a doomed one without opening (and rolling back) a savepoint for it.
    ``status``: the status the memory will have by then (a caller that plans several
    transitions before writing them), instead of the stored one.

    Raises:
        NotFoundError: there is no such memory.
        InvalidTransitionError: its status cannot become ``to_status``.
    """
    memory = get(session, memory_id)
    _check_status(memory, to_status, status)
    return memory


def _check_status(memory: Memory, to_status: str, status: str | None = None) -> None:
    status = memory.status if status is None else status
    if status not in _FROM[to_status]:
        raise InvalidTransitionError(
            f"memory {memory.memory_id} is {status}; it cannot become {to_status} "
            f"(allowed from: {', '.join(sorted(_FROM[to_status]))})"
        )


def soft_delete(
    session: Session,
    settings: Settings,
    memory_id: str,
    *,
    actor: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Memory:
    """Soft-delete: invisible to retrieval, kept until retention or erasure purges it."""
    return _transition(
        session,
        settings,
        memory_id,
        DELETED,
        actor=actor,
        reason=reason,
        expected_version=expected_version,
    )


def quarantine(
    session: Session,
    settings: Settings,
    memory_id: str,
    *,
    actor: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Memory:
    """Quarantine: held out of retrieval until a reviewer restores or deletes it."""
    return _transition(
        session,
        settings,
        memory_id,
        QUARANTINED,
        actor=actor,
        reason=reason,
        expected_version=expected_version,
    )


def expire(
    session: Session,
    settings: Settings,
    memory_id: str,
    *,
    actor: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Memory:
    """Expire an active memory (its ``expires_at`` passed, or a TTL policy says so)."""
    return _transition(
        session,
        settings,
        memory_id,
        EXPIRED,
        actor=actor,
        reason=reason,
        expected_version=expected_version,
    )


def restore(
    session: Session,
    settings: Settings,
    memory_id: str,
    *,
    actor: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Memory:
    """Undo a soft delete, quarantine or expiry.

    The memory returns to its status before that transition. It returns as ``superseded``
    when an active successor exists (a chain keeps one head), and ``expires_at`` is cleared
    when an expired memory is restored (otherwise the next sweep would expire it again).
    """
    actor = _require_actor(actor)
    memory = get(session, memory_id)
    _check_version(memory, expected_version)
    if memory.status not in _RESTORABLE:
        raise InvalidTransitionError(
            f"memory {memory_id} is {memory.status}; only deleted, quarantined or expired "
            "memories can be restored"
        )
    previous = memory.status
    target = memory.prior_status if memory.prior_status in (ACTIVE, SUPERSEDED) else ACTIVE
    if target == ACTIVE and any(s.status == ACTIVE for s in _successors(session, memory_id)):
        target = SUPERSEDED
    if target == ACTIVE and memory.supersedes is not None:
        older = session.get(Memory, memory.supersedes)
        if older is not None and older.status == ACTIVE:
            raise ChainForkError(
                f"cannot restore {memory_id}: the memory it supersedes "
                f"({memory.supersedes}) is active again; supersede that one instead"
            )
    details: dict[str, Any] = {"from": previous, "to": target}
    if reason:
        details["reason"] = reason
    if previous == EXPIRED and memory.expires_at is not None:
        memory.expires_at = None
        details["expires_at_cleared"] = True
    memory.status = target
    memory.status_source = "memaudit"
    memory.prior_status = previous
    memory.deleted_at = None
    memory.updated_at = utcnow()
    _flush(session, memory_id)
    _audit(session, settings, actor, "memory.restored", [memory_id], details)
    if previous == QUARANTINED:
        hooks.notify(session, settings, memory, "restore")
    return memory


def record_access(session: Session, memory_id: str) -> int:
    """Count one retrieval of a memory (atomic; no audit event, no version bump).

    Returns:
        The new access count.
    """
    result = session.execute(
        update(Memory)
        .where(Memory.memory_id == memory_id)
        .values(
            access_count=Memory.access_count + 1,
            last_accessed_at=utcnow(),
            changed_at=Memory.changed_at,  # an access is not a change worth re-scanning
        )
        .returning(Memory.access_count)
        .execution_options(synchronize_session=False)
    ).first()
    if result is None:
        raise NotFoundError(f"no memory with id {memory_id!r}")
    return int(result[0])


@dataclass
class Chain:
    """A memory's supersede chain: older memories it replaced and newer ones replacing it."""

    memory: Memory
    older: list[Memory] = field(default_factory=list)
    newer: list[Memory] = field(default_factory=list)
    dangling: str | None = None
    cycle: bool = False


def chain_of(session: Session, memory_id: str) -> Chain:
    """Walk the chain both ways (tolerates imported cycles, forks and dangling links)."""
    memory = get(session, memory_id)
    chain = Chain(memory)
    seen = {memory_id}
    link = memory.supersedes
    while link is not None and len(seen) < _MAX_CHAIN:
        if link in seen:
            chain.cycle = True
            break
        older = session.get(Memory, link)
        if older is None:
            chain.dangling = link
            break
        seen.add(link)
        chain.older.append(older)
        link = older.supersedes
    frontier = [memory_id]
    while frontier and len(seen) < _MAX_CHAIN:
        nxt: list[str] = []
        for mid in frontier:
            for succ in _successors(session, mid):
                if succ.memory_id in seen:
                    chain.cycle = True
                    continue
                seen.add(succ.memory_id)
                chain.newer.append(succ)
                nxt.append(succ.memory_id)
        frontier = nxt
    return chain


class Lifecycle:
    """Each lifecycle function in its own write transaction.

    Args:
        db: the store.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self.settings = db.settings

    def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            with self.db.write() as session:
                return fn(session, self.settings, *args, **kwargs)
        except StaleDataError:
            raise ConcurrencyError("a memory was changed by another writer; retry") from None

    def add(
        self,
        record: MemoryRecord | Mapping[str, Any],
        *,
        actor: str,
        approved_by: str | None = None,
    ) -> Memory:
        """See :func:`add`."""
        return self._run(add, record, actor=actor, approved_by=approved_by)

    def supersede(
        self,
        old_id: str,
        new: MemoryRecord | Mapping[str, Any] | str,
        *,
        actor: str,
        approved_by: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """See :func:`supersede`."""
        return self._run(
            supersede,
            old_id,
            new,
            actor=actor,
            approved_by=approved_by,
            expected_version=expected_version,
        )

    def soft_delete(
        self,
        memory_id: str,
        *,
        actor: str,
        reason: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """See :func:`soft_delete`."""
        return self._run(
            soft_delete, memory_id, actor=actor, reason=reason, expected_version=expected_version
        )

    def quarantine(
        self,
        memory_id: str,
        *,
        actor: str,
        reason: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """See :func:`quarantine`."""
        return self._run(
            quarantine, memory_id, actor=actor, reason=reason, expected_version=expected_version
        )

    def expire(
        self,
        memory_id: str,
        *,
        actor: str,
        reason: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """See :func:`expire`."""
        return self._run(
            expire, memory_id, actor=actor, reason=reason, expected_version=expected_version
        )

    def restore(
        self,
        memory_id: str,
        *,
        actor: str,
        reason: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """See :func:`restore`."""
        return self._run(
            restore, memory_id, actor=actor, reason=reason, expected_version=expected_version
        )

    def record_access(self, memory_id: str) -> int:
        """See :func:`record_access`."""
        with self.db.write() as session:
            return record_access(session, memory_id)

    def get(self, memory_id: str) -> Memory:
        """Load one memory (detached)."""
        with self.db.session() as session:
            return get(session, memory_id)

    def chain(self, memory_id: str) -> Chain:
        """See :func:`chain_of`."""
        with self.db.session() as session:
            return chain_of(session, memory_id)
