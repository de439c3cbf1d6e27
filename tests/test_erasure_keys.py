"""Keyed digests by default (issue 11 item 9): the key ``init`` creates, its file, its use.

Every digest that stands for a subject (receipt, tombstones, ledger, audit events) must be
an HMAC with the store's key, never the unkeyed SHA-256 anyone can recompute from a guessed
id; the key file is 0600 and lives outside the database.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from auditor.config import load_settings, sqlite_key_file
from auditor.erasure import requests as erasure
from auditor.erasure.keys import ensure_audit_key
from auditor.hashing import subject_digest
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Tombstone
from auditor.testing import make_record, write_jsonl

SUBJECT = "user:4242424"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _unkeyed(subject: str) -> str:
    return hashlib.sha256(b"memaudit-subject:" + subject.encode()).hexdigest()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Database]:
    old = os.umask(0o022)  # what most shells give: files would be world-readable by default
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'store.db'}"))
    db.upgrade()
    try:
        yield db
    finally:
        os.umask(old)
        db.dispose()


def test_init_creates_a_private_key_beside_the_store(fresh: Database, tmp_path: Path) -> None:
    outcome = ensure_audit_key(fresh)
    assert outcome.status == "created"
    path = tmp_path / "store.db.audit-hmac-key"
    assert outcome.path == path and path.is_file()
    assert _mode(path) == 0o600
    key = path.read_text().strip()
    assert len(key) == 64 and key not in outcome.message
    assert fresh.settings.audit_hmac_key is not None
    assert fresh.settings.audit_hmac_key.get_secret_value() == key
    # a new process (new settings) finds it beside the store
    again = load_settings(database_url=str(fresh.url.render_as_string(hide_password=False)))
    assert again.audit_hmac_key is not None and again.audit_hmac_key.get_secret_value() == key
    # run again: the key is kept, never overwritten
    second = ensure_audit_key(Database(again))
    assert second.status in ("configured", "existing")
    assert path.read_text().strip() == key


def test_every_digest_of_an_erasure_is_keyed(fresh: Database, tmp_path: Path) -> None:
    ensure_audit_key(fresh)
    key = (tmp_path / "store.db.audit-hmac-key").read_text().strip().encode()
    db = Database(load_settings(database_url=str(fresh.url.render_as_string(False))))
    report = Importer(db).run(
        open_source(
            "jsonl",
            write_jsonl(
                tmp_path / "m.jsonl",
                [make_record(memory_id="m1", subject=SUBJECT, fact="Likes long train rides")],
            ),
            db.settings,
        )
    )
    assert report.ok
    receipt = erasure.erase_subject(db, SUBJECT, actor="officer")
    keyed = hmac.new(key, SUBJECT.encode(), hashlib.sha256).hexdigest()
    assert keyed != _unkeyed(SUBJECT)
    assert receipt.data["subject_digest"] == keyed and receipt.data["digest_keyed"] is True
    assert subject_digest(SUBJECT, key) == keyed
    with db.session() as s:
        tombs = set(s.scalars(select(Tombstone.subject_digest)))
        details = [e.details for e in s.scalars(select(AuditEvent))]
    assert tombs == {keyed}
    digests = {d["subject_digest"] for d in details if "subject_digest" in d}
    assert digests == {keyed}
    ledger = erasure.ledger_path(db)
    assert ledger is not None and _mode(ledger) == 0o600
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [e["subject_digest"] for e in entries] == [keyed]
    text = ledger.read_text() + json.dumps(receipt.as_dict())
    assert _unkeyed(SUBJECT) not in text


def test_a_given_key_wins_and_nothing_is_created(tmp_path: Path) -> None:
    db = Database(
        load_settings(
            database_url=f"sqlite:///{tmp_path / 's.db'}", audit_hmac_key="from-the-environment"
        )
    )
    db.upgrade()
    assert ensure_audit_key(db).status == "configured"
    assert not (tmp_path / "s.db.audit-hmac-key").exists()


def test_the_secrets_folder_gets_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    monkeypatch.setenv("MEMAUDIT_SECRETS_DIR", str(secrets))
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 's.db'}"))
    db.upgrade()
    outcome = ensure_audit_key(db)
    assert outcome.status == "created" and outcome.path == secrets / "memaudit_audit_hmac_key"
    assert _mode(secrets / "memaudit_audit_hmac_key") == 0o600
    loaded = load_settings(database_url=f"sqlite:///{tmp_path / 's.db'}").audit_hmac_key
    assert loaded is not None
    assert loaded.get_secret_value() == outcome.path.read_text().strip()


def test_a_log_hashed_without_a_key_gets_none(fresh: Database, tmp_path: Path) -> None:
    erasure_rows = [make_record(memory_id="m1", subject=SUBJECT)]
    Importer(fresh).run(
        open_source("jsonl", write_jsonl(tmp_path / "m.jsonl", erasure_rows), fresh.settings)
    )
    outcome = ensure_audit_key(fresh)
    assert outcome.status == "unkeyed-log" and "Rotation" in outcome.message
    assert not (tmp_path / "store.db.audit-hmac-key").exists()
    assert fresh.settings.audit_hmac_key is None


def test_key_file_location_rules() -> None:
    assert sqlite_key_file("sqlite:///:memory:") is None
    assert sqlite_key_file("postgresql+psycopg://u@h/db") is None
    path = sqlite_key_file("sqlite:////srv/memaudit/store.db")
    assert path == Path("/srv/memaudit/store.db.audit-hmac-key")


@pytest.mark.pg
def test_postgresql_without_a_secrets_folder_says_digests_are_unkeyed(
    pg_schema_url: str,
) -> None:
    db = Database(load_settings(database_url=pg_schema_url))
    db.upgrade()
    try:
        outcome = ensure_audit_key(db)
        assert outcome.status == "no-location" and outcome.path is None
        assert "MEMAUDIT_AUDIT_HMAC_KEY" in outcome.message
    finally:
        db.dispose()
