"""The audit trail stays the staff's: an erasure redacts only what is the subject's.

Issue 11 item 7, each case named there: officer ``kim`` erasing ``user:kim`` keeps kim's own
officer events; erasing ``user:daniel`` (account ``daniel``) does not touch officer
``daniel.ops``; ``user:ines.duarte`` does not count ``user:ines.duarte-2`` as residue;
``erase user`` / ``erase password`` are refused by the subject-form check. The chain still
verifies and who did what stays visible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from auditor.erasure import requests as erasure
from auditor.errors import InputError
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Memory, Principal
from auditor.testing import make_record, write_jsonl


def _import(db: Database, path: Path, rows: list[dict[str, Any]]) -> None:
    report = Importer(db).run(open_source("jsonl", write_jsonl(path, rows), db.settings))
    assert report.ok, report.errors


def _event(db: Database, actor: str, action: str, targets: list[str], **details: Any) -> int:
    with db.write() as s:
        ev = audit_log.append(
            s,
            actor=actor,
            action=action,
            target_type="memory",
            target_ids=targets,
            details=details,
            key=audit_key(db.settings),
        )
        return int(ev.seq)


def _events(db: Database) -> dict[int, tuple[str, str, list[str], dict[str, Any]]]:
    with db.session() as s:
        return {
            e.seq: (e.actor, e.action, list(e.target_ids), dict(e.details))
            for e in s.scalars(select(AuditEvent).order_by(AuditEvent.seq))
        }


def _chain_ok(db: Database) -> bool:
    with db.session() as s:
        return audit_log.verify(s, key=audit_key(db.settings)).ok


def test_officer_kim_erasing_user_kim_keeps_kims_own_events(db: Database, tmp_path: Path) -> None:
    _import(
        db,
        tmp_path / "m.jsonl",
        [
            make_record(memory_id="kim_1", subject="user:kim", fact="Kim rides a red Vespa"),
            make_record(memory_id="bob_1", subject="user:bob", fact="Bob sells vintage maps"),
        ],
    )
    with db.write() as s:
        s.add(Principal(username="kim", display_name="Kim Officer", role="officer"))
    searched = _event(db, "kim", "memory.searched", ["bob_1"], query_digest="ab12")
    dismissed = _event(db, "kim", "finding.dismissed", ["fnd_1"], note="false positive")
    about_kim = _event(db, "kim", "memory.quarantined", ["kim_1"], note="user:kim asked")
    before = _events(db)
    receipt = erasure.erase_subject(db, "user:kim", actor="kim")
    assert receipt.ok, receipt.data["stores"]
    after = _events(db)
    assert after[searched] == before[searched]
    assert after[dismissed] == before[dismissed]
    # the event about the subject's memory keeps its actor (staff) but loses the subject id
    actor, action, targets, details = after[about_kim]
    assert (actor, action, targets) == ("kim", "memory.quarantined", ["kim_1"])
    assert details["note"] == "[erased]"
    for seq, event in before.items():  # no event of officer kim lost its actor
        if event[0] == "kim":
            assert after[seq][0] == "kim"
    assert _chain_ok(db)


def test_erasing_daniel_does_not_touch_officer_daniel_ops(db: Database, tmp_path: Path) -> None:
    _import(
        db,
        tmp_path / "m.jsonl",
        [
            make_record(
                memory_id="d_1", subject="user:daniel", fact="Daniel is training for Ironman"
            )
        ],
    )
    with db.write() as s:
        s.add(
            Principal(
                username="daniel", display_name="Daniel Moss", role="user", subject="user:daniel"
            )
        )
        s.add(Principal(username="daniel.ops", display_name="Ops", role="officer"))
    own = _event(db, "daniel", "memory.viewed", ["d_1"])
    ops = [
        _event(db, "daniel.ops", "finding.dismissed", ["fnd_9"], note="daniel.ops checked it"),
        _event(db, "daniel.ops", "account.signed_in", [], via="password"),
    ]
    before = _events(db)
    receipt = erasure.erase_subject(db, "user:daniel", actor="daniel.ops")
    after = _events(db)
    for seq in ops:
        assert after[seq] == before[seq]
    assert after[own][0].startswith("subject#")  # the subject's own action: its label
    assert after[own][1:] == before[own][1:]  # what was done stays visible
    assert receipt.ok, receipt.data["verification"]["hits"]
    assert _chain_ok(db)


def test_a_longer_subject_id_is_someone_else(db: Database, tmp_path: Path) -> None:
    ines, other = "user:ines.duarte", "user:ines.duarte-2"
    _import(
        db,
        tmp_path / "m.jsonl",
        [
            make_record(memory_id="i_1", subject=ines, fact="Ines paints ceramic tiles"),
            make_record(memory_id="i2_1", subject=other, fact="The other Ines sails dinghies"),
        ],
    )
    theirs = _event(db, "officer", "memory.reviewed", ["i2_1"], note=f"{other} confirmed")
    before = _events(db)
    receipt = erasure.erase_subject(db, ines, actor="officer")
    assert receipt.ok and receipt.verdict == "verified", receipt.data["stores"]
    assert receipt.data["verification"]["hits"] == []
    assert _events(db)[theirs] == before[theirs]
    with db.session() as s:
        assert s.scalars(select(Memory.memory_id).where(Memory.subject == other)).all() == ["i2_1"]
    assert erasure.verify_erasure(db, ines).ok
    assert _chain_ok(db)


@pytest.mark.parametrize("word", ["user", "password"])
def test_erasing_a_common_word_is_refused_and_rewrites_nothing(
    db: Database, tmp_path: Path, word: str
) -> None:
    _import(db, tmp_path / "m.jsonl", [make_record(memory_id="x_1", subject="user:x1")])
    _event(db, "admin", "account.created", ["acct_1"], role="user")
    _event(db, "admin", "account.signed_in", ["acct_1"], method="password")
    before = _events(db)
    with pytest.raises(InputError, match="not a subject id"):
        erasure.erase_subject(db, word, actor="admin")
    assert _events(db) == before


def test_the_subjects_own_events_are_redacted_and_stay_readable(
    db: Database, tmp_path: Path
) -> None:
    _import(
        db,
        tmp_path / "m.jsonl",
        [make_record(memory_id="z_1", subject="user:zoe", fact="Zoe lives at 9 Elm Court")],
    )
    with db.write() as s:
        s.add(Principal(username="zoe.k", role="user", subject="user:zoe"))
    own = _event(db, "zoe.k", "memory.corrected", ["z_1"], reason="I moved from 9 Elm Court")
    other = _event(db, "officer", "memory.reviewed", ["q_1"], reason="unrelated")
    account = _event(db, "admin", "account.added", ["zoe.k"], role="user")
    before = _events(db)
    receipt = erasure.erase_subject(db, "user:zoe", actor="officer")
    after = _events(db)
    # an event about the subject's account: the staff actor stays, the account name goes
    assert after[account][:2] == ("admin", "account.added")
    assert after[account][2] == ["[erased]"] and after[account][3] == {"role": "user"}
    actor, action, targets, details = after[own]
    assert actor.startswith("subject#") and action == "memory.corrected"
    assert targets == ["z_1"] and details["reason"] == "[erased]"
    assert after[other] == before[other]
    assert receipt.ok
    assert _chain_ok(db)
