"""The audit log's hash chain names the first changed, deleted or reordered event."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, select, update

from auditor.config import load_settings
from auditor.lifecycle import audit_log
from auditor.lifecycle.machine import Lifecycle
from auditor.store.db import Database
from auditor.store.models import AuditEvent, AuditHead
from auditor.testing import make_record


@pytest.fixture
def filled(db: Database) -> Database:
    lc = Lifecycle(db)
    for i in range(5):
        lc.add(make_record(memory_id=f"m{i}"), actor="t")
    return db


def _verify(db: Database, key: bytes | None = None) -> audit_log.VerifyResult:
    with db.session() as s:
        return audit_log.verify(s, key=key)


def test_intact_chain_verifies(filled: Database) -> None:
    result = _verify(filled)
    assert result.ok and result.checked == 5 and result.first_bad_seq is None


def test_changed_event_is_named(filled: Database) -> None:
    with filled.write() as s:
        s.execute(update(AuditEvent).where(AuditEvent.seq == 3).values(actor="mallory"))
    result = _verify(filled)
    assert not result.ok and result.first_bad_seq == 3 and "content changed" in result.reason


def test_changed_details_are_detected(filled: Database) -> None:
    with filled.write() as s:
        s.execute(update(AuditEvent).where(AuditEvent.seq == 2).values(details={"x": 1}))
    assert _verify(filled).first_bad_seq == 2


def test_deleted_event_is_named(filled: Database) -> None:
    with filled.write() as s:
        s.execute(delete(AuditEvent).where(AuditEvent.seq == 2))
    result = _verify(filled)
    assert not result.ok and result.first_bad_seq == 3 and "missing" in result.reason


def test_deleted_tail_is_detected(filled: Database) -> None:
    with filled.write() as s:
        s.execute(delete(AuditEvent).where(AuditEvent.seq == 5))
    result = _verify(filled)
    assert not result.ok and "tail mismatch" in result.reason and result.checked == 4


def test_reordered_events_are_detected(filled: Database) -> None:
    with filled.write() as s:
        e2, e3 = (s.get(AuditEvent, 2), s.get(AuditEvent, 3))
        assert e2 is not None and e3 is not None
        fields = (
            "event_id",
            "ts",
            "actor",
            "action",
            "target_type",
            "target_ids",
            "details",
            "prev_hash",
            "hash",
        )
        v2 = {f: getattr(e2, f) for f in fields}
        v3 = {f: getattr(e3, f) for f in fields}
        s.execute(update(AuditEvent).where(AuditEvent.seq == 2).values(event_id="tmp"))
        s.execute(update(AuditEvent).where(AuditEvent.seq == 3).values(**v2))
        s.execute(update(AuditEvent).where(AuditEvent.seq == 2).values(**v3))
    result = _verify(filled)
    assert not result.ok and result.first_bad_seq == 2


def test_forged_chain_rebuilt_without_key_fails_with_key(db: Database) -> None:
    keyed = Database(
        load_settings(database_url=str(db.url.render_as_string(False)), audit_hmac_key="s3cret-key")
    )
    Lifecycle(keyed).add(make_record(memory_id="a"), actor="t")
    assert _verify(keyed, b"s3cret-key").ok
    assert not _verify(keyed, None).ok  # a plain sha256 chain would not match
    # an attacker rewrites the event and recomputes an unkeyed hash: the keyed check fails
    with keyed.write() as s:
        ev = s.scalars(select(AuditEvent)).one()
        forged = audit_log.compute_hash(
            seq=ev.seq,
            event_id=ev.event_id,
            ts=ev.ts,
            actor="mallory",
            action=ev.action,
            target_type=ev.target_type,
            target_ids=list(ev.target_ids),
            details=dict(ev.details),
            prev_hash=ev.prev_hash,
        )
        ev.actor, ev.hash = "mallory", forged
        s.execute(update(AuditHead).values(last_hash=forged))
    assert not _verify(keyed, b"s3cret-key").ok
    keyed.dispose()


def test_details_refuse_personal_data(db: Database) -> None:
    with db.write() as s, pytest.raises(ValueError, match="must not carry"):
        audit_log.append(
            s,
            actor="t",
            action="x",
            target_type="memory",
            details={"nested": {"fact": "lives in Busan"}},
        )


def test_cli_verify_exit_codes(filled: Database, run_cli) -> None:  # type: ignore[no-untyped-def]
    url = filled.url.render_as_string(hide_password=False)
    ok = run_cli("--database-url", url, "audit-log", "verify")
    assert ok.code == 0 and "5 events verified" in ok.out
    with filled.write() as s:
        s.execute(update(AuditEvent).where(AuditEvent.seq == 4).values(action="memory.nothing"))
    bad = run_cli("--database-url", url, "audit-log", "verify")
    assert bad.code == 1
    assert "BROKEN at event 4" in bad.out


def test_missing_head_row_refuses_to_append(filled: Database) -> None:
    from auditor.errors import AuditChainError
    from auditor.store.models import Memory

    with filled.write() as s:
        s.execute(delete(AuditHead))
    with pytest.raises(AuditChainError, match="head row is missing"):
        Lifecycle(filled).add(make_record(memory_id="new"), actor="t")
    with filled.session() as s:
        assert s.get(Memory, "new") is None  # the transition rolled back with the event


def test_append_many_chains_like_appends_one_by_one(filled: Database) -> None:
    events = [
        audit_log.Pending("t", "memory.quarantined", "memory", (f"m{i}",), {"from": "active"})
        for i in range(3)
    ]
    with filled.write() as s:
        before = s.get(AuditHead, 1)
        assert before is not None
        start = before.last_seq
        written = audit_log.append_many(s, events)
        # each links to the one before it, and the head to the last
        assert [e.seq for e in written] == [start + 1, start + 2, start + 3]
        assert [e.prev_hash for e in written[1:]] == [e.hash for e in written[:-1]]
        head = s.get(AuditHead, 1)
        assert head is not None and head.last_hash == written[-1].hash
    assert _verify(filled).ok
    with filled.session() as s:
        stored = [e.target_ids for e in s.scalars(select(AuditEvent).order_by(AuditEvent.seq))]
    assert stored[-3:] == [["m0"], ["m1"], ["m2"]]


def test_append_many_refuses_personal_data_before_appending_any(filled: Database) -> None:
    with filled.session() as s:
        count = len(list(s.scalars(select(AuditEvent))))
    good = audit_log.Pending("t", "x", "memory", ("m0",), {"from": "active"})
    bad = audit_log.Pending("t", "x", "memory", ("m1",), {"fact": "lives in Busan"})
    with filled.write() as s, pytest.raises(ValueError, match="must not carry"):
        audit_log.append_many(s, [good, bad])
    with filled.session() as s:
        assert len(list(s.scalars(select(AuditEvent)))) == count
    assert _verify(filled).ok
