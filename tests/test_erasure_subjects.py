"""A typo'd or malformed subject is refused, with near matches; nothing held is said so.

Issue 11 item 5 and issue 14 item 1: ``memaudit erase user:olivai.w`` (no such subject) must
not report success, ``erase kim`` / ``erase user`` / ``erase password`` are not subject ids,
and a subject erased before gets a receipt that says nothing was held, never "verified".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from auditor.access import accounts, signin
from auditor.access import erasure as access_erasure
from auditor.erasure import queue as erasure_queue
from auditor.erasure import requests as erasure
from auditor.erasure.subjects import check_subject_form, near_matches, resolve_subject
from auditor.erasure.verify import verify_subject
from auditor.errors import InputError
from auditor.hashing import subject_digest
from auditor.lifecycle.audit_key import audit_key
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, ErasureRequest, Memory
from auditor.testing import make_record, write_jsonl

OLIVIA = "user:olivia.w"
BEN = "user:ben.cho"
KIM = "user:kim"


def _import(db: Database, path: Path, rows: list[dict[str, Any]]) -> None:
    report = Importer(db).run(open_source("jsonl", write_jsonl(path, rows), db.settings))
    assert report.ok, report.errors


@pytest.fixture
def people(db: Database, tmp_path: Path) -> Database:
    _import(
        db,
        tmp_path / "people.jsonl",
        [
            make_record(memory_id="o1", subject=OLIVIA, fact="Olivia keeps bees in Harrow"),
            make_record(memory_id="b1", subject=BEN, fact="Ben plays the cello on Sundays"),
            make_record(memory_id="k1", subject=KIM, fact="Kim collects Soviet-era radios"),
        ],
    )
    return db


def _state(db: Database) -> tuple[int, int, int]:
    with db.session() as s:
        return (
            int(s.scalar(select(func.count()).select_from(Memory)) or 0),
            int(s.scalar(select(func.count()).select_from(ErasureRequest)) or 0),
            int(s.scalar(select(func.count()).select_from(AuditEvent)) or 0),
        )


@pytest.mark.parametrize("typed", ["kim", "user", "password", "user:", ":x", "user: kim", ""])
def test_a_malformed_subject_is_refused_with_a_clear_message(typed: str) -> None:
    with pytest.raises(InputError) as err:
        check_subject_form(typed)
    message = str(err.value)
    assert "subject" in message
    assert "user:42" in message or "required" in message


def test_erasing_a_word_is_refused_before_anything_changes(people: Database) -> None:
    before = _state(people)
    for word in ("kim", "user", "password"):
        with pytest.raises(InputError, match="not a subject id"):
            erasure.erase_subject(people, word, actor="kim")
        with pytest.raises(InputError, match="not a subject id"):
            erasure.request_erasure(people, word, requested_by="kim")
    assert _state(people) == before


def test_an_unknown_subject_is_refused_with_the_nearest_existing_one(people: Database) -> None:
    before = _state(people)
    with pytest.raises(InputError) as err:
        erasure.erase_subject(people, "user:olivai.w", actor="officer")
    assert str(err.value) == "no data held for user:olivai.w; did you mean user:olivia.w?"
    with pytest.raises(InputError, match="did you mean user:olivia.w"):
        erasure.request_erasure(people, "user:olivai.w", requested_by="officer")
    assert _state(people) == before  # no request, no event, nothing deleted


def test_a_bare_id_is_offered_its_subject_form(people: Database) -> None:
    with pytest.raises(InputError, match="not a subject id"):
        resolve_subject(people, "kim")
    assert near_matches("kim", [KIM, OLIVIA, BEN]) == [KIM]
    assert near_matches("user:nobody", [KIM, OLIVIA, BEN]) == []


def test_cli_refuses_unknown_subjects_everywhere(
    people: Database,
    run_cli,  # type: ignore[no-untyped-def]
    db_url: str,
) -> None:
    env = ("--database-url", db_url)
    before = _state(people)
    erase = run_cli(*env, "erase", "user:olivai.w", "--by", "officer", "--yes")
    assert erase.code == 2
    assert "no data held for user:olivai.w; did you mean user:olivia.w?" in erase.err
    nobody = run_cli(*env, "erase", "user:nobody", "--by", "officer", "--yes")
    assert nobody.code == 2 and "no data held for user:nobody" in nobody.err
    word = run_cli(*env, "erase", "password", "--by", "officer", "--yes")
    assert word.code == 2 and "not a subject id" in word.err
    request = run_cli(*env, "erasure", "request", "user:ben.chp", "--by", "officer")
    assert request.code == 2 and "did you mean user:ben.cho?" in request.err
    verify = run_cli(*env, "verify-erasure", "user:kin")
    assert verify.code == 2 and "did you mean user:kim?" in verify.err
    assert _state(people) == before


def test_dashboard_service_refuses_a_typo_with_near_matches(people: Database) -> None:
    accounts.add_user(people, "off", role="officer", password="pw-Officer-12345", by="test")
    actor = signin.authenticate(people, "off", "pw-Officer-12345")
    with pytest.raises(InputError, match=r"did you mean user:olivia\.w\?"):
        access_erasure.erase_subject_now(people, actor, "user:olivai.w")
    with pytest.raises(InputError, match="not a subject id"):
        access_erasure.erase_subject_now(people, actor, "olivia")
    assert erasure.list_requests(people) == []


def test_a_subject_erased_before_gets_a_nothing_held_receipt(
    people: Database,
    run_cli,  # type: ignore[no-untyped-def]
    db_url: str,
) -> None:
    first = erasure.erase_subject(people, KIM, actor="officer")
    assert first.ok and first.verdict == "verified"
    again = erasure.erase_subject(people, KIM, actor="officer")
    assert not again.ok
    assert again.verdict == "nothing held" and again.nothing_held
    assert again.data["held_before"] == {
        "memories": 0,
        "consents": 0,
        "accounts": 0,
        "waiting_requests": 0,
    }
    reasons = [m["reason"] for m in again.data["stores"]["memaudit"]["may_hold"]]
    assert any("nothing was held" in r for r in reasons)
    cli = run_cli("--database-url", db_url, "erase", KIM, "--by", "officer", "--yes")
    assert cli.code == 0 and "nothing was held" in cli.err
    assert json.loads(cli.out)["verdict"] == "nothing held"
    # verify-erasure judges by the erasure that held data: verified
    assert verify_subject(people, KIM)["ok"] is True


def test_export_style_resolution_refuses_a_subject_that_holds_nothing(people: Database) -> None:
    erasure.erase_subject(people, KIM, actor="officer")
    assert resolve_subject(people, KIM).nothing_held
    with pytest.raises(InputError, match="erased before"):
        resolve_subject(people, KIM, allow_erased=False)
    with pytest.raises(InputError, match="no data held for user:ben.ch; did you mean"):
        resolve_subject(people, "user:ben.ch", allow_erased=False)


def test_a_stored_request_from_before_the_check_still_runs(people: Database) -> None:
    """A request recorded before subjects were checked must not stop the daemon's queue."""
    with people.write() as s:
        s.add(
            ErasureRequest(
                subject_digest=subject_digest("legacy", audit_key(people.settings)),
                subject="legacy",
                requested_by="officer",
                status="approved",
                decided_by="officer",
                receipt={},
            )
        )
    result = erasure_queue.run_queue(people, actor="daemon")
    assert result["executed"] == 1
    assert [r["status"] for r in erasure.list_requests(people)] == ["executed"]
