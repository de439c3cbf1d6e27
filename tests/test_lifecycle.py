"""Lifecycle transitions and their invariants, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from auditor.errors import (
    ChainForkError,
    ConcurrencyError,
    DanglingLinkError,
    InputError,
    InvalidTransitionError,
    NotFoundError,
    RecordError,
    SupersedeCycleError,
    TrustTierError,
)
from auditor.lifecycle import audit_log
from auditor.lifecycle.machine import Lifecycle
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Memory, Tombstone
from auditor.testing import make_record


@pytest.fixture
def lc(db: Database) -> Lifecycle:
    return Lifecycle(db)


def events(db: Database) -> list[AuditEvent]:
    with db.session() as s:
        return list(s.scalars(select(AuditEvent).order_by(AuditEvent.seq)))


def test_add_derives_tier_hash_and_audits(lc: Lifecycle, db: Database) -> None:
    m = lc.add(make_record(memory_id="a", source={"type": "tool_output"}), actor="alice")
    assert (m.status, m.trust_tier, m.version) == ("active", "external", 1)
    assert len(m.content_hash) == 64
    ev = events(db)
    assert [(e.action, e.actor, e.target_ids) for e in ev] == [("memory.added", "alice", ["a"])]
    assert "fact" not in ev[0].details


def test_add_refuses_existing_id_bad_record_and_missing_actor(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    with pytest.raises(InputError, match="already exists"):
        lc.add(make_record(memory_id="a"), actor="t")
    with pytest.raises(RecordError, match="missing required field 'fact'"):
        lc.add({"memory_id": "b", "subject": "user:x"}, actor="t")
    with pytest.raises(InputError, match="actor is required"):
        lc.add(make_record(memory_id="c"), actor="  ")
    with pytest.raises(InputError, match="starts active"):
        lc.add(make_record(memory_id="d", status="deleted"), actor="t")


def test_add_refuses_erased_id(lc: Lifecycle, db: Database) -> None:
    with db.write() as s:
        s.add(Tombstone(memory_id="gone", subject_digest="0" * 64))
    with pytest.raises(InputError, match="erased"):
        lc.add(make_record(memory_id="gone"), actor="t")


def test_supersede_moves_the_head(lc: Lifecycle, db: Database) -> None:
    lc.add(make_record(memory_id="a", fact="uses pnpm"), actor="t")
    head = lc.supersede("a", make_record(memory_id="b", fact="uses npm"), actor="t")
    assert head.memory_id == "b" and head.supersedes == "a" and head.status == "active"
    old = lc.get("a")
    assert old.status == "superseded" and old.version == 2
    chain = lc.chain("a")
    assert [m.memory_id for m in chain.newer] == ["b"]
    assert [m.memory_id for m in lc.chain("b").older] == ["a"]
    assert events(db)[-1].action == "memory.superseded"
    assert events(db)[-1].target_ids == ["a", "b"]


def test_add_with_supersedes_goes_through_supersede(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    lc.add(make_record(memory_id="b", supersedes="a"), actor="t")
    assert lc.get("a").status == "superseded"


def test_supersede_dangling_link_refused(lc: Lifecycle) -> None:
    with pytest.raises(DanglingLinkError, match="no such memory"):
        lc.supersede("missing", make_record(memory_id="b"), actor="t")
    with pytest.raises(NotFoundError):
        lc.get("b")  # nothing was written


def test_one_active_head_per_chain(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    lc.supersede("a", make_record(memory_id="b"), actor="t")
    with pytest.raises(ChainForkError, match="its active successor is b"):
        lc.supersede("a", make_record(memory_id="c"), actor="t")
    with pytest.raises(NotFoundError):
        lc.get("c")


def test_fork_refused_when_a_successor_already_exists(lc: Lifecycle, db: Database) -> None:
    # an imported store can hold an active memory that already has a successor
    lc.add(make_record(memory_id="a"), actor="t")
    lc.add(make_record(memory_id="b"), actor="t")
    with db.write() as s:
        s.execute(update(Memory).where(Memory.memory_id == "b").values(supersedes="a"))
    with pytest.raises(ChainForkError, match="already has a successor"):
        lc.supersede("a", make_record(memory_id="c"), actor="t")


def test_linking_an_existing_memory_cannot_close_a_cycle(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    lc.supersede("a", make_record(memory_id="b"), actor="t")
    lc.supersede("b", make_record(memory_id="c"), actor="t")
    with pytest.raises(SupersedeCycleError, match="cannot supersede itself"):
        lc.supersede("c", "c", actor="t")
    with pytest.raises(SupersedeCycleError, match="cannot supersede itself"):
        lc.supersede("c", make_record(memory_id="c"), actor="t")
    # b and a are not active, so they cannot become successors either way
    with pytest.raises(InvalidTransitionError):
        lc.supersede("c", "a", actor="t")


def test_cycle_detected_through_restored_ancestor(lc: Lifecycle, db: Database) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    lc.supersede("a", make_record(memory_id="b"), actor="t")
    # a store where 'a' was reactivated by hand (imported as is): a is still b's ancestor
    with db.write() as s:
        s.execute(
            update(Memory).where(Memory.memory_id == "a").values(status="active", supersedes=None)
        )
        s.execute(update(Memory).where(Memory.memory_id == "b").values(supersedes="a"))
    with pytest.raises(SupersedeCycleError, match="ancestor"):
        lc.supersede("b", "a", actor="t")


def test_lower_tier_cannot_supersede_without_approval(lc: Lifecycle, db: Database) -> None:
    lc.add(make_record(memory_id="a", source={"type": "explicit_statement"}), actor="t")
    low = make_record(memory_id="b", source={"type": "external_content"})
    with pytest.raises(TrustTierError, match="an external-tier memory cannot supersede a"):
        lc.supersede("a", low, actor="agent")
    assert lc.get("a").status == "active"
    head = lc.supersede("a", low, actor="agent", approved_by="officer-kim")
    assert head.trust_tier == "external"
    last = events(db)[-1]
    assert last.details["tier_override"] is True and last.details["approved_by"] == "officer-kim"
    assert lc.get("b").extra["supersede_approved_by"] == "officer-kim"  # seen by the chain audit


def test_an_approved_lower_tier_memory_named_by_id_is_linked_as_the_successor(
    lc: Lifecycle, db: Database
) -> None:
    lc.add(make_record(memory_id="a", source={"type": "explicit_statement"}), actor="t")
    lc.add(make_record(memory_id="b", source={"type": "external_content"}), actor="t")
    head = lc.supersede("a", "b", actor="agent", approved_by="officer-kim")
    assert head.memory_id == "b" and lc.get("a").status == "superseded"
    # the chain holds: the approved successor points at what it replaced, like any other
    assert lc.get("b").supersedes == "a"
    assert lc.get("b").extra["supersede_approved_by"] == "officer-kim"
    assert events(db)[-1].details["tier_override"] is True


def test_higher_or_equal_tier_supersedes_freely(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a", source={"type": "inferred"}), actor="t")
    lc.supersede("a", make_record(memory_id="b", source={"type": "explicit_statement"}), actor="t")
    lc.supersede("b", make_record(memory_id="c", source={"type": "explicit_statement"}), actor="t")
    assert lc.get("c").status == "active"


def test_supersede_needs_same_subject(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a", subject="user:a"), actor="t")
    with pytest.raises(InputError, match="same subject"):
        lc.supersede("a", make_record(memory_id="b", subject="user:b"), actor="t")


@pytest.mark.parametrize(
    ("setup", "action", "allowed"),
    [
        ("active", "soft_delete", True),
        ("active", "quarantine", True),
        ("active", "expire", True),
        ("active", "restore", False),
        ("deleted", "soft_delete", False),
        ("deleted", "quarantine", False),
        ("deleted", "expire", False),
        ("deleted", "restore", True),
        ("quarantined", "quarantine", False),
        ("quarantined", "expire", False),
        ("quarantined", "soft_delete", True),
        ("quarantined", "restore", True),
        ("expired", "expire", False),
        ("expired", "quarantine", True),
        ("expired", "restore", True),
        ("superseded", "expire", False),
        ("superseded", "restore", False),
        ("superseded", "quarantine", True),
    ],
)
def test_transition_table(lc: Lifecycle, setup: str, action: str, allowed: bool) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    if setup == "superseded":
        lc.supersede("a", make_record(memory_id="b"), actor="t")
    elif setup != "active":
        {"deleted": lc.soft_delete, "quarantined": lc.quarantine, "expired": lc.expire}[setup](
            "a", actor="t"
        )
    before = lc.get("a")
    if allowed:
        getattr(lc, action)("a", actor="t", reason="review 12")
        assert lc.get("a").version == before.version + 1
    else:
        with pytest.raises(InvalidTransitionError):
            getattr(lc, action)("a", actor="t")
        after = lc.get("a")
        assert (after.status, after.version) == (before.status, before.version)


def test_soft_delete_and_restore_round_trip(lc: Lifecycle, db: Database) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    deleted = lc.soft_delete("a", actor="user:alice", reason="user request")
    assert deleted.status == "deleted" and deleted.deleted_at is not None
    restored = lc.restore("a", actor="officer")
    assert restored.status == "active" and restored.deleted_at is None
    actions = [e.action for e in events(db)]
    assert actions == ["memory.added", "memory.deleted", "memory.restored"]
    assert events(db)[1].details == {"from": "active", "reason": "user request"}


def test_restore_of_superseded_then_quarantined_returns_superseded(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    lc.supersede("a", make_record(memory_id="b"), actor="t")
    lc.quarantine("a", actor="t")
    assert lc.restore("a", actor="t").status == "superseded"


def test_restore_keeps_one_head(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    lc.quarantine("a", actor="t")
    # while a is quarantined nobody can supersede it; once restored it is the head again
    restored = lc.restore("a", actor="t")
    assert restored.status == "active"
    lc.supersede("a", make_record(memory_id="b"), actor="t")
    lc.soft_delete("b", actor="t")
    lc.restore("b", actor="t")
    assert [lc.get("a").status, lc.get("b").status] == ["superseded", "active"]


def test_restore_of_expired_clears_expiry(lc: Lifecycle) -> None:
    past = (datetime.now(UTC) - timedelta(days=3)).isoformat()
    lc.add(make_record(memory_id="a", expires_at=past), actor="t")
    lc.expire("a", actor="daemon")
    restored = lc.restore("a", actor="officer")
    assert restored.status == "active" and restored.expires_at is None


def test_stale_expected_version_is_refused(lc: Lifecycle) -> None:
    m = lc.add(make_record(memory_id="a"), actor="t")
    lc.quarantine("a", actor="t", expected_version=m.version)
    with pytest.raises(ConcurrencyError, match="changed since it was read"):
        lc.restore("a", actor="t", expected_version=m.version)
    assert lc.get("a").status == "quarantined"


def test_record_access_counts_without_version_bump(lc: Lifecycle, db: Database) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    assert [lc.record_access("a") for _ in range(3)] == [1, 2, 3]
    m = lc.get("a")
    assert m.access_count == 3 and m.last_accessed_at is not None and m.version == 1
    with pytest.raises(NotFoundError):
        lc.record_access("nope")


def test_every_transition_keeps_the_audit_chain_valid(lc: Lifecycle, db: Database) -> None:
    lc.add(make_record(memory_id="a"), actor="t")
    lc.supersede("a", make_record(memory_id="b"), actor="t")
    lc.quarantine("b", actor="t")
    lc.restore("b", actor="t")
    lc.expire("b", actor="t")
    lc.soft_delete("b", actor="t")
    with db.session() as s:
        result = audit_log.verify(s)
    assert result.ok and result.checked == 6


def test_timestamps_are_timezone_aware_utc(lc: Lifecycle) -> None:
    lc.add(make_record(memory_id="a", created_at="2026-03-01T09:00:00+09:00"), actor="t")
    m = lc.get("a")
    assert m.created_at == datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
    assert m.created_at.tzinfo is not None and m.updated_at.utcoffset() == timedelta(0)


def test_failed_transition_writes_nothing(lc: Lifecycle, db: Database) -> None:
    lc.add(make_record(memory_id="a", source={"type": "explicit_statement"}), actor="t")
    n = len(events(db))
    with pytest.raises(TrustTierError):
        lc.supersede("a", make_record(memory_id="b", source={"type": "tool_output"}), actor="t")
    assert len(events(db)) == n
    with db.session() as s:
        assert s.get(Memory, "b") is None


# -- transition hooks (how the source outbox follows quarantines and restores) -------------


def test_transition_hooks_hear_quarantine_and_restore_in_the_transition(lc: Lifecycle) -> None:
    from auditor.lifecycle import hooks

    heard: list[tuple[str, str, str]] = []

    def hook(session: object, settings: object, memory: Memory, action: str) -> None:
        heard.append((memory.memory_id, memory.status, action))

    lc.add(make_record(memory_id="h"), actor="t")
    stop = hooks.subscribe(hook)
    try:
        lc.quarantine("h", actor="officer")
        lc.restore("h", actor="officer")
        lc.soft_delete("h", actor="officer")  # not a transition hooks hear about
    finally:
        stop()
    lc.restore("h", actor="officer")  # unsubscribed: not heard
    assert heard == [("h", "quarantined", "quarantine"), ("h", "active", "restore")]
    assert "auditor.sources.outbox:queue_transition" in hooks.DEFAULT_HOOKS


def test_a_failing_hook_aborts_the_transition(lc: Lifecycle, db: Database) -> None:
    from auditor.lifecycle import hooks

    def hook(session: object, settings: object, memory: Memory, action: str) -> None:
        raise RuntimeError("outbox unavailable")

    lc.add(make_record(memory_id="f"), actor="t")
    stop = hooks.subscribe(hook)
    try:
        with pytest.raises(RuntimeError):
            lc.quarantine("f", actor="officer")
    finally:
        stop()
    with db.session() as s:
        assert s.get(Memory, "f").status == "active"  # rolled back with the hook's failure
    with pytest.raises(ValueError, match="unknown lifecycle transition"):
        hooks.notify(None, db.settings, Memory(), "purge")  # type: ignore[arg-type]


def test_transition_many_writes_each_as_its_own_call_would(lc: Lifecycle, db: Database) -> None:
    from auditor.lifecycle import machine

    for mid in ("a", "b", "c"):
        lc.add(make_record(memory_id=mid), actor="t")
    items = [("a", "quarantined", "rule X"), ("b", "expired", None), ("c", "quarantined", None)]
    with db.write() as s:
        changed = machine.transition_many(s, db.settings, items, actor="scan")
        assert [m.memory_id for m in changed] == ["a", "b", "c"]
    assert [lc.get(m).status for m in ("a", "b", "c")] == ["quarantined", "expired", "quarantined"]
    assert all(lc.get(m).version == 2 for m in ("a", "b", "c"))  # one write each
    got = [(e.action, e.target_ids, e.details) for e in events(db)][-3:]
    assert got == [
        ("memory.quarantined", ["a"], {"from": "active", "reason": "rule X"}),
        ("memory.expired", ["b"], {"from": "active"}),
        ("memory.quarantined", ["c"], {"from": "active"}),
    ]
    with db.session() as s:
        assert audit_log.verify(s).ok


def test_transition_many_sees_the_ones_before_and_writes_nothing_on_a_refusal(
    lc: Lifecycle, db: Database
) -> None:
    from auditor.lifecycle import machine

    for mid in ("a", "b"):
        lc.add(make_record(memory_id=mid), actor="t")
    count = len(events(db))
    # "a" quarantined first, then expired: an expiry from quarantined is refused
    items = [("b", "quarantined", None), ("a", "quarantined", None), ("a", "expired", None)]
    with pytest.raises(InvalidTransitionError, match="memory a is quarantined"):
        with db.write() as s:
            machine.transition_many(s, db.settings, items, actor="scan")
    assert [lc.get(m).status for m in ("a", "b")] == ["active", "active"]
    assert len(events(db)) == count
    with pytest.raises(InputError, match="not quarantined or expired"), db.write() as s:
        machine.transition_many(s, db.settings, [("a", "deleted", None)], actor="scan")
    with pytest.raises(InputError, match="actor"), db.write() as s:
        machine.transition_many(s, db.settings, [("a", "expired", None)], actor=" ")


def test_check_transition_can_ask_about_a_planned_status(lc: Lifecycle, db: Database) -> None:
    from auditor.lifecycle import machine

    lc.add(make_record(memory_id="a"), actor="t")
    with db.session() as s:
        assert machine.check_transition(s, "a", "quarantined").memory_id == "a"
        with pytest.raises(InvalidTransitionError, match="memory a is quarantined"):
            machine.check_transition(s, "a", "quarantined", status="quarantined")
        with pytest.raises(NotFoundError):
            machine.check_transition(s, "zz", "quarantined")
