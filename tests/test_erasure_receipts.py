"""Receipts never overstate (issue 11 item 1).

A receipt lists per store what was deleted, what was searched (values counted, never
printed) and what may still hold the subject, with the reason; ``verified`` only when every
copy that could exist was searched with a method that can find it. Short values are
searched as whole tokens, not skipped; rows without an owner, sources without write-back
and "0 values searched" are never a pass; ``verify-erasure`` exits 1 whenever the proof is
incomplete.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auditor.erasure import requests as erasure
from auditor.erasure.receipts import KIND_SHORT, ReceiptFacts, assess
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import Principal, SourceWatermark
from auditor.store.residue import Hit
from auditor.testing import make_record, write_jsonl

ALICE = "user:alice"
BOB = "user:bob"
FACT = "Alice's allotment is plot 17 on Marsh Lane"


def _import(db: Database, path: Path, rows: list[dict[str, Any]]) -> None:
    report = Importer(db).run(open_source("jsonl", write_jsonl(path, rows), db.settings))
    assert report.ok, report.errors


@pytest.fixture
def two(db: Database, tmp_path: Path) -> Database:
    _import(
        db,
        tmp_path / "m.jsonl",
        [
            make_record(memory_id="a1", subject=ALICE, fact=FACT),
            make_record(memory_id="b1", subject=BOB, fact="Bob restores old clocks"),
        ],
    )
    return db


def test_a_clean_erasure_lists_what_it_deleted_and_searched(two: Database) -> None:
    receipt = erasure.erase_subject(two, ALICE, actor="officer")
    data = receipt.as_dict()
    assert data["verified"] is True and data["verdict"] == "verified"
    own = data["stores"]["memaudit"]
    assert own["deleted"]["memories"] == 1 and own["deleted"]["tombstones"] == 2
    assert own["searched"]["tables"] >= 10 and own["searched"]["columns"] >= 50
    assert own["searched"]["values"]["subject_id"] == 1
    assert own["searched"]["values"]["identifying"] >= 1  # the fact (and PII spans in it)
    if two.dialect == "sqlite":
        assert any(f.startswith("file ") for f in own["searched"]["files"])
    else:
        assert own["limits"] and "WAL" in own["limits"][0]
    assert own["found"] == [] and own["may_hold"] == []
    text = json.dumps(data)
    assert FACT not in text and "Marsh Lane" not in text and ALICE not in text
    assert erasure.verify_receipt(data)


def test_a_short_value_is_searched_as_a_whole_token_not_skipped(
    two: Database,
    run_cli,  # type: ignore[no-untyped-def]
    db_url: str,
) -> None:
    with two.write() as s:  # "ally" (4 characters) is the subject's account name
        s.add(Principal(username="ally", role="user", subject=ALICE))
        s.add(SourceWatermark(name="notes", position=None, details={"who": "ally called"}))
    receipt = erasure.erase_subject(two, ALICE, actor="officer")
    data = receipt.as_dict()
    own = data["stores"]["memaudit"]
    assert own["searched"]["values"]["short_whole_tokens"] >= 1
    places = [m["place"] for m in own["may_hold"]]
    assert "table source_watermarks.details" in places
    reason = next(m["reason"] for m in own["may_hold"] if "source_watermarks" in m["place"])
    assert "shorter than" in reason and "whole token" in reason
    assert not receipt.ok and data["verdict"] == "incomplete"
    assert "ally" not in json.dumps(data)
    verify = run_cli("--database-url", db_url, "verify-erasure", ALICE)
    assert verify.code == 1 and "incomplete" in verify.out


def test_rows_without_an_owner_make_the_receipt_incomplete(two: Database, tmp_path: Path) -> None:
    _import(
        two,
        tmp_path / "orphans.jsonl",
        [
            make_record(
                memory_id="h1",
                subject="mem0-unattributed:shop",
                fact="passport number X1234567 recorded",
                status="deleted",
            )
        ],
    )
    receipt = erasure.erase_subject(two, ALICE, actor="officer")
    own = receipt.data["stores"]["memaudit"]
    entry = next(m for m in own["may_hold"] if "mem0-unattributed:shop" in m["place"])
    assert "1 rows" in entry["place"] and "without an owner" in entry["reason"]
    assert not receipt.ok and receipt.verdict == "incomplete"


def test_a_source_the_erasure_could_not_reach_is_named(two: Database, tmp_path: Path) -> None:
    _import(
        two,
        tmp_path / "crm.jsonl",
        [
            make_record(
                memory_id="a2", subject=ALICE, fact="Alice orders oat milk", source_name="crm"
            )
        ],
    )
    receipt = erasure.erase_subject(two, ALICE, actor="officer")
    crm = receipt.data["stores"]["source crm"]
    assert crm["verified"] is False and crm["searched"] == "not searched"
    assert "without write-back" in crm["may_hold"][0]["reason"]
    assert "1 item" in crm["may_hold"][0]["reason"]
    assert not receipt.ok


def test_verify_erasure_exit_codes(
    two: Database,
    run_cli,  # type: ignore[no-untyped-def]
    db_url: str,
) -> None:
    env = ("--database-url", db_url)
    held = run_cli(*env, "verify-erasure", BOB)  # never erased: still held
    assert held.code == 1 and "it was not erased" in held.out
    erasure.erase_subject(two, ALICE, actor="officer")
    done = run_cli(*env, "verify-erasure", ALICE, "--json")
    result = json.loads(done.out)
    assert done.code == 0 and result["ok"] and result["complete"]
    assert result["receipt"]["verdict"] == "verified"


def _facts(**kw: Any) -> ReceiptFacts:
    base: dict[str, Any] = {
        "dialect": "sqlite",
        "counts": {"memories": 3},
        "hits": (),
        "searched": {"tables": 5, "columns": 20, "files": 2, "values": 4},
        "files": ["file store.db"],
        "unsearchable": (),
        "value_stats": {"searched": 4, "pii_detector": "ok"},
        "held_before": {"memories": 3},
    }
    base.update(kw)
    return ReceiptFacts(**base)


def test_assess_zero_values_is_not_a_pass() -> None:
    out = assess(_facts(value_stats={"searched": 0, "pii_detector": "ok"}))
    assert out["verified"] is False and out["verdict"] == "incomplete"
    reasons = [m["reason"] for m in out["stores"]["memaudit"]["may_hold"]]
    assert any("only the subject id" in r for r in reasons)
    assert assess(_facts())["verified"] is True


def test_assess_takes_what_the_connector_reports() -> None:
    mem0 = {
        "status": "done",
        "counts": {"mem0.memories": 2},
        "remaining": [],
        "notes": [],
        "verified": True,
        "searched": {"files": ["history.db"], "values": 7},
        "may_hold": [{"place": "mem0.history", "reason": "11 rows without an owner"}],
    }
    out = assess(_facts(sources={"shop": mem0}))
    shop = out["stores"]["source shop"]
    assert shop["searched"] == {"files": ["history.db"], "values": 7}
    assert shop["may_hold"] == [{"place": "mem0.history", "reason": "11 rows without an owner"}]
    assert shop["verified"] is False and out["verified"] is False
    bare = {"status": "done", "counts": {}, "remaining": ["qdrant"], "notes": [], "verified": False}
    found = assess(_facts(sources={"shop": bare}))
    assert found["verdict"] == "not verified"
    assert found["stores"]["source shop"]["searched"] == "not reported by the connector"


def test_assess_pii_detector_and_tiny_values_are_named() -> None:
    out = assess(
        _facts(value_stats={"searched": 4, "pii_detector": "unavailable", "too_short_to_search": 2})
    )
    reasons = " ".join(m["reason"] for m in out["stores"]["memaudit"]["may_hold"])
    assert "PII detector was unavailable" in reasons and "2 value(s)" in reasons
    short = assess(_facts(hits=(Hit("table x.y", KIND_SHORT, 1),)))
    assert short["verdict"] == "incomplete" and short["stores"]["memaudit"]["found"] == []
    real = assess(_facts(hits=(Hit("table x.y", "identifying value", 1),)))
    assert real["verdict"] == "not verified"
