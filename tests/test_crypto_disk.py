"""No plaintext of a subject's text on disk, and no key after an erasure (crypto-shredding).

PostgreSQL: every file of the server's data directory (heap, indexes, TOAST, WAL segments)
is searched after a ``CHECKPOINT``, before and after erasing the subject through the public
API (:func:`auditor.erasure.requests.erase_subject`). A control value written in a column that is
*not* encrypted must be found, which proves the search sees the files. An unreadable data
directory fails the test (it runs as the server's superuser here); without
``MEMAUDIT_TEST_PG_URL`` it is skipped like every PostgreSQL test.

SQLite: the database file, its WAL and shared-memory file are searched the same way.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from auditor.erasure import requests as erasure
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import Consent
from auditor.testing import make_record, write_jsonl


def _needles() -> dict[str, bytes]:
    tag = uuid.uuid4().hex[:10]
    return {
        "fact": f"Zanzibar{tag} passport P{tag}".encode(),
        "uri": f"https://mail.example/inbox/Q{tag}".encode(),
        "consent": f"signed consent form R{tag}".encode(),
        "control": f"ctrl{tag}ns".encode(),
    }


def _seed(db: Database, tmp_path: Path, n: dict[str, bytes]) -> None:
    fact, uri = n["fact"].decode(), n["uri"].decode()
    records = [
        make_record(
            memory_id=f"z{i}-{uuid.uuid4().hex[:6]}",
            subject="user:zara",
            fact=f"{fact} #{i}",
            source={"type": "explicit_statement", "session_id": "s", "turn": i, "uri": uri},
        )
        for i in range(5)
    ]
    records.append(
        make_record(
            memory_id=f"o-{uuid.uuid4().hex[:6]}",
            subject="user:otto",
            namespace=n["control"].decode(),  # not encrypted: the control
            fact="otto keeps bees",
        )
    )
    path = write_jsonl(tmp_path / "seed.jsonl", records)
    report = Importer(db).run(open_source("jsonl", path, db.settings))
    assert report.ok and report.inserted == 6
    with db.write() as s:
        s.add(Consent(subject="user:zara", category="health", source=n["consent"].decode()))


def _search(files: list[Path], needles: dict[str, bytes]) -> dict[str, list[str]]:
    hits: dict[str, list[str]] = {name: [] for name in needles}
    for path in files:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue  # a segment recycled while we walked
        except PermissionError:
            pytest.fail(f"cannot read {path}: run the PostgreSQL tests as the server's owner")
        for name, needle in needles.items():
            if needle in data:
                hits[name].append(str(path))
    return hits


def _pg_files(db: Database) -> list[Path]:
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("CHECKPOINT"))
        conn.execute(text("SELECT pg_switch_wal()"))
        root = Path(str(conn.execute(text("SHOW data_directory")).scalar_one()))
    if not os.access(root, os.R_OK | os.X_OK):
        pytest.fail(f"PostgreSQL data directory {root} is not readable by this test")
    return [p for p in root.rglob("*") if p.is_file()]


def _check_erasure(db: Database, files: list[Path] | None = None) -> None:
    assert db.keystore is not None
    assert db.keystore.exists("user:zara")
    erasure.erase_subject(db, "user:zara", actor="officer")
    assert not db.keystore.exists("user:zara")
    assert db.keystore.data_key("user:zara", create=False) is None
    assert db.keystore.exists("user:otto")


@pytest.mark.pg
def test_pg_data_directory_and_wal_hold_no_plaintext(pg_schema_url: str, tmp_path: Path) -> None:
    from auditor.config import load_settings

    db = Database(load_settings(database_url=pg_schema_url))
    db.upgrade()
    try:
        assert db.cipher is not None, "the test fixtures must turn encryption on"
        needles = _needles()
        _seed(db, tmp_path, needles)
        hits = _search(_pg_files(db), needles)
        assert hits["control"], "the control value was not found: the search sees nothing"
        assert hits["fact"] == [] and hits["uri"] == [] and hits["consent"] == [], hits
        _check_erasure(db)
        hits = _search(_pg_files(db), needles)
        assert hits["control"]
        assert hits["fact"] == [] and hits["uri"] == [] and hits["consent"] == [], hits
    finally:
        db.dispose()


def test_sqlite_files_hold_no_plaintext(tmp_path: Path) -> None:
    from auditor.config import load_settings

    database = tmp_path / "store.db"
    db = Database(load_settings(database_url=f"sqlite:///{database}"))
    db.upgrade()
    try:
        needles = _needles()
        _seed(db, tmp_path, needles)
        files = [p for p in tmp_path.glob("store.db*") if p.is_file()]
        hits = _search(files, needles)
        assert hits["control"], "the control value was not found: the search sees nothing"
        assert hits["fact"] == [] and hits["uri"] == [] and hits["consent"] == [], hits
        _check_erasure(db)
        hits = _search([p for p in tmp_path.glob("store.db*") if p.is_file()], needles)
        assert hits["fact"] == [] and hits["uri"] == [] and hits["consent"] == [], hits
    finally:
        db.dispose()
