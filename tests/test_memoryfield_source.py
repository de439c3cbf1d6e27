"""The ``memoryfield`` connector: pull, quarantine / restore and erasure written back into a
Memoryfield folder or zip and its SQLite vector index, safely (stage, fsync, swap)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from auditor.config import Settings, load_settings
from auditor.erasure import requests as erasure
from auditor.errors import ConcurrencyError, InputError, NotFoundError
from auditor.lifecycle.machine import Lifecycle
from auditor.sources.files.memoryfield import MemoryfieldSource
from auditor.sources.live import _memoryfield_tree as tree_mod
from auditor.sources.live import open_connector
from auditor.sources.live.base import SourceConfig, memory_id_for
from auditor.sources.live.memoryfield import MemoryfieldConnector
from auditor.sources.outbox import run_outbox
from auditor.sources.registry import add_source
from auditor.sources.sync import sync_source
from auditor.store.db import Database
from auditor.store.models import Memory

ALICE_DIET = """---
title: "Alice's diet notes"
uuid: "6f1c2a54-2b1e-4c39-9d55-0a1b2c3d4e5f"
subject: "user:alice"
created: 2026-03-01T10:00:00Z
---
# Diet

Alice is allergic to peanuts and carries an EpiPen in her red backpack.

She prefers oat milk in her morning flat white at the Harbour Street cafe.

## Preferences

Reply in short bullet points, with links to the official docs.
"""

ALICE_TRIP = """---
title: "Lisbon trip"
subject: "user:alice"
---
Alice flies to Lisbon on 12 June with her sister Maren Okonkwo-Lind.

Her passport number ends in 7731 and she always wants a window seat.
"""

BOB_WORK = """---
title: "Bob at work"
uuid: "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a"
subject: "user:bob"
---
Bob leads the billing migration and reviews pull requests every Tuesday morning.

## Preferences

Reply in short bullet points, with links to the official docs.
"""

BOB_TOOLS = """---
title: "Tooling"
---
The build uses pnpm; never suggest npm install for this repository.
"""

PAGES = {
    "notes/alice-diet.md": ALICE_DIET,
    "trips/alice-lisbon.md": ALICE_TRIP,
    "notes/bob-work.md": BOB_WORK,
    "tooling.md": BOB_TOOLS,  # no subject: the connector's `subject` option (user:bob)
}
ALICE_PAGES = {"notes/alice-diet.md", "trips/alice-lisbon.md"}
BOB_PAGES = {"notes/bob-work.md", "tooling.md"}
# what must not survive an erasure of user:alice, anywhere, in any file
ALICE_SECRETS = [
    "user:alice",
    "allergic to peanuts",
    "epipen",
    "harbour street",
    "maren okonkwo-lind",
    "passport number ends in 7731",
    "locker code is 4417",
    "6f1c2a54-2b1e-4c39-9d55-0a1b2c3d4e5f",
    "alice@example.org",
]
BOB_TEXT = ["billing migration", "never suggest npm install"]
INDEX = "index.sqlite"


# -- building Memoryfields -------------------------------------------------------------------


def _body(page: str) -> str:
    return page.split("\n---\n", 1)[1]


def _paragraphs(page: str) -> list[str]:
    return [p.strip() for p in _body(page).split("\n\n") if p.strip()]


def _vector(seed: int) -> bytes:
    return struct.pack("<8f", *(float((seed * 7 + i) % 11) for i in range(8)))


def build_linked_index(path: Path, pages: dict[str, str]) -> None:
    """pages <- chunks (declared FK) <- embeddings (``chunk_id``), an external-content FTS
    over chunks, and an orphan chunk of a page deleted long ago that names alice."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE pages (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, title TEXT);
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id),
            seq INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE TABLE embeddings (chunk_id INTEGER PRIMARY KEY, vector BLOB NOT NULL);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', content_rowid='id');
        """
    )
    for rel, page in pages.items():
        pid = conn.execute("INSERT INTO pages (path, title) VALUES (?, ?)", (rel, rel)).lastrowid
        for seq, para in enumerate(_paragraphs(page)):
            cid = conn.execute(
                "INSERT INTO chunks (page_id, seq, text) VALUES (?, ?, ?)", (pid, seq, para)
            ).lastrowid
            assert cid is not None
            conn.execute("INSERT INTO embeddings VALUES (?, ?)", (cid, _vector(cid)))
    cid = conn.execute(
        "INSERT INTO chunks (page_id, seq, text) VALUES (999, 0, ?)",
        ("Noted for user:alice: her locker code is 4417.",),
    ).lastrowid
    conn.execute("INSERT INTO embeddings VALUES (?, ?)", (cid, _vector(999)))
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    conn.commit()
    conn.close()


def build_flat_index(path: Path, pages: dict[str, str]) -> None:
    """One table with JSON metadata naming the page, and an own-content FTS table."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE vectors (id INTEGER PRIMARY KEY, meta TEXT, chunk TEXT, embedding BLOB);
        CREATE VIRTUAL TABLE search USING fts5(chunk, path UNINDEXED);
        """
    )
    n = 0
    for rel, page in pages.items():
        for seq, para in enumerate(_paragraphs(page)):
            n += 1
            meta = json.dumps({"source": {"file": f"/srv/agent/field/{rel}", "chunk": seq}})
            conn.execute("INSERT INTO vectors VALUES (?, ?, ?, ?)", (n, meta, para, _vector(n)))
            conn.execute("INSERT INTO search (rowid, chunk, path) VALUES (?, ?, ?)", (n, para, rel))
    conn.commit()
    conn.close()


def build_folder(root: Path, index: str | None, pages: dict[str, str] = PAGES) -> Path:
    root.mkdir(parents=True)
    for rel, page in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(page, encoding="utf-8")
    (root / "images").mkdir()
    (root / "images" / "map.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    if index == "linked":
        build_linked_index(root / INDEX, pages)
    elif index == "flat":
        build_flat_index(root / INDEX, pages)
    return root


def build_zip(path: Path, index: str | None, pages: dict[str, str] = PAGES) -> Path:
    staging = build_folder(path.parent / (path.stem + "-src"), index, pages)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(p for p in staging.rglob("*") if p.is_file()):
            zf.write(file, file.relative_to(staging).as_posix())
    shutil.rmtree(staging)
    return path


FORMATS = ["folder", "zip"]
INDEXES = [None, "linked", "flat"]


def build(tmp_path: Path, fmt: str, index: str | None) -> Path:
    base = tmp_path / "agent"
    base.mkdir()
    if fmt == "folder":
        return build_folder(base / "field", index)
    return build_zip(base / "field.zip", index)


def settings(**overrides: Any) -> Settings:
    return load_settings(database_url="sqlite://", **overrides)


def connector(path: Path, **options: Any) -> MemoryfieldConnector:
    config = SourceConfig(
        name="notes",
        kind="memoryfield",
        options={"path": str(path), "subject": "user:bob", **options},
    )
    conn = open_connector(config, settings())
    assert isinstance(conn, MemoryfieldConnector)
    return conn


# -- reading what is there, as the tests' own eyes ---------------------------------------------


def adapter_pages(path: Path) -> dict[str, str]:
    """What the import adapter (a Memoryfield reader) reads: page -> subject."""
    source = MemoryfieldSource(path, settings(), subject="user:bob")
    return {i.external_id: i.raw["subject"] for i in source.items() if i.raw and i.external_id}


def files(path: Path) -> dict[str, bytes]:
    """Every file's bytes (a zip: the archive itself and each entry, decompressed)."""
    if path.is_dir():
        return {
            p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*"))
            if p.is_file() and not p.is_symlink()
        }
    out = {"(archive)": path.read_bytes()}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            out[info.filename] = zf.read(info)
    return out


def leaks(path: Path, needles: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, data in files(path).items():
        low = data.lower()
        hits = [n for n in needles if n.lower().encode() in low]
        if hits:
            found[name] = hits
    return found


def index_query(path: Path, sql: str, tmp_path: Path) -> list[tuple[Any, ...]]:
    if path.is_dir():
        db_file = path / INDEX
    else:
        db_file = tmp_path / "peek.sqlite"
        with zipfile.ZipFile(path) as zf:
            db_file.write_bytes(zf.read(INDEX))
    conn = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def fts_terms(path: Path, table: str, tmp_path: Path) -> set[str]:
    """Every term a full-text table of the index holds (through ``fts5vocab``)."""
    peek = tmp_path / "terms.sqlite"
    peek.write_bytes(files(path)[INDEX])
    conn = sqlite3.connect(peek)
    try:
        conn.execute(f"CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, {table}, 'row')")
        return {row[0] for row in conn.execute("SELECT term FROM temp.vocab")}
    finally:
        conn.close()
        peek.unlink()


def siblings(path: Path) -> list[str]:
    """What else is beside the Memoryfield (backups, work folders)."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


# -- pull ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_pull_yields_every_page_with_connector_conventions(
    tmp_path: Path, fmt: str, index: str | None
) -> None:
    path = build(tmp_path, fmt, index)
    conn = connector(path)
    items = list(conn.pull(None))
    assert all(i.error is None for i in items), [i.error for i in items]
    by_id = {i.external_id: i.raw for i in items if i.raw}
    assert set(by_id) == set(PAGES)
    diet = by_id["notes/alice-diet.md"]
    assert diet["memory_id"] == memory_id_for("notes", "notes/alice-diet.md")
    assert diet["source"] == {"type": "import", "uri": "memoryfield://notes/notes/alice-diet.md"}
    assert diet["import_memory_id"] == "mf_6f1c2a54-2b1e-4c39-9d55-0a1b2c3d4e5f"
    assert (diet["source_name"], diet["source_kind"], diet["external_id"]) == (
        "notes",
        "memoryfield",
        "notes/alice-diet.md",
    )
    assert diet["source_status"] == "live" and "status" not in diet
    assert {r["subject"] for r in by_id.values()} == {"user:alice", "user:bob"}
    assert by_id["tooling.md"]["subject"] == "user:bob"
    # deterministic: the same state gives the same records
    again = {i.external_id: i.raw for i in connector(path).pull(None) if i.raw}
    assert again == by_id
    # the cursor is the sha256: an unchanged Memoryfield yields nothing
    cursor = conn.next_cursor()
    assert cursor == conn.current_sha256() == conn.last_sha256
    assert list(conn.pull(cursor)) == []
    assert conn.live_ids() == set(PAGES)
    report = conn.test()
    assert report["pages"] == 4 and report["quarantined"] == 0 and report["subjects"] == 2
    assert report["index_files"] == (0 if index is None else 1)
    assert report["format"] == fmt and report["sha256"] == cursor
    assert "alice" not in json.dumps(report).lower()


def test_options_are_checked(tmp_path: Path) -> None:
    path = build(tmp_path, "folder", None)
    with pytest.raises(InputError, match="unknown option"):
        connector(path, pasword="x")
    with pytest.raises(InputError, match="'backup' must be true or false"):
        connector(path, backup="yes")
    config = SourceConfig(name="notes", kind="memoryfield", options={})
    with pytest.raises(InputError, match="'path'"):
        open_connector(config, settings())
    with pytest.raises(InputError, match="no such file or folder"):
        connector(tmp_path / "missing").test()


# -- quarantine / restore ----------------------------------------------------------------------


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_quarantine_and_restore_round_trip(tmp_path: Path, fmt: str, index: str | None) -> None:
    path = build(tmp_path, fmt, index)
    conn = connector(path)
    before = conn.current_sha256()
    original = files(path)
    page = "notes/alice-diet.md"

    conn.quarantine([page])

    # a Memoryfield reader no longer reads it ...
    assert set(adapter_pages(path)) == set(PAGES) - {page}
    # ... and it is kept, byte for byte, in the quarantine area
    assert files(path)[f".quarantine/{page}.quarantined"] == original[page]
    after = conn.current_sha256()
    assert after != before and conn.last_sha256 == after
    # memaudit still sees it, as quarantined, under the same id
    pulled = {i.external_id: i.raw for i in conn.pull(None) if i.raw}
    assert pulled[page]["status"] == "quarantined"
    assert pulled[page]["source_status"] == "quarantined"
    assert pulled[page]["retained_in"] == "memoryfield.quarantine"
    assert pulled[page]["memory_id"] == memory_id_for("notes", page)
    assert conn.live_ids() == set(PAGES)
    if index == "linked":
        # its chunks, vectors and full-text entries left the index; the rest stayed
        paths = {r[0] for r in index_query(path, "SELECT path FROM pages", tmp_path)}
        assert paths == set(PAGES) - {page}
        assert index_query(
            path, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'peanuts'", tmp_path
        ) == [(0,)]
        assert index_query(
            path, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'billing'", tmp_path
        ) == [(1,)]
        orphans = "SELECT count(*) FROM embeddings WHERE chunk_id NOT IN (SELECT id FROM chunks)"
        assert index_query(path, orphans, tmp_path) == [(0,)]
    if index == "flat":
        assert index_query(
            path, "SELECT count(*) FROM search WHERE search MATCH 'peanuts'", tmp_path
        ) == [(0,)]
        assert index_query(
            path, "SELECT count(*) FROM vectors WHERE chunk LIKE '%peanuts%'", tmp_path
        ) == [(0,)]

    conn.quarantine([page])  # idempotent (a retried outbox batch)
    assert conn.current_sha256() == after

    conn.restore([page])

    assert set(adapter_pages(path)) == set(PAGES)
    restored = files(path)
    assert restored[page] == original[page]
    assert not any(name.startswith(".quarantine") for name in restored)
    if index == "linked":
        for table in ("pages", "chunks", "embeddings"):
            sql = f"SELECT * FROM {table} ORDER BY 1"
            assert index_query(path, sql, tmp_path) == _rows_of(original, table, tmp_path, fmt)
        assert index_query(
            path, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'peanuts'", tmp_path
        ) == [(1,)]
    if index == "flat":
        assert index_query(
            path, "SELECT count(*) FROM search WHERE search MATCH 'peanuts'", tmp_path
        ) == [(1,)]
    if fmt == "folder" and index is None:
        assert conn.current_sha256() == before  # the very same files again
    conn.restore([page])  # idempotent
    assert siblings(path) == []  # no backup by default, no work folder left


def _rows_of(
    original: dict[str, bytes], table: str, tmp_path: Path, fmt: str
) -> list[tuple[Any, ...]]:
    peek = tmp_path / f"orig-{table}.sqlite"
    peek.write_bytes(original[INDEX])
    conn = sqlite3.connect(peek)
    try:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
    finally:
        conn.close()
        peek.unlink()


def test_quarantine_refuses_unknown_and_unsafe_names(tmp_path: Path) -> None:
    path = build(tmp_path, "folder", "linked")
    conn = connector(path)
    before = conn.current_sha256()
    with pytest.raises(NotFoundError):
        conn.quarantine(["notes/nobody.md"])
    for bad in ("../outside.md", "/etc/passwd.md", "notes\\..\\x.md", "a\x00.md", "index.sqlite"):
        with pytest.raises(InputError):
            conn.quarantine([bad])
    with pytest.raises(NotFoundError):
        conn.restore(["notes/nobody.md"])
    assert conn.current_sha256() == before


def test_a_batch_with_a_page_gone_from_the_source_does_the_rest(tmp_path: Path) -> None:
    path = build(tmp_path, "zip", None)
    conn = connector(path)
    conn.quarantine(["notes/gone.md", "notes/bob-work.md"])
    assert set(adapter_pages(path)) == set(PAGES) - {"notes/bob-work.md"}
    conn.restore(["notes/gone.md", "notes/bob-work.md"])
    assert set(adapter_pages(path)) == set(PAGES)


def test_nothing_is_written_through_a_symlinked_folder(tmp_path: Path) -> None:
    path = build(tmp_path, "folder", "linked")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (path / ".quarantine").symlink_to(elsewhere, target_is_directory=True)
    conn = connector(path)
    before = conn.current_sha256()
    with pytest.raises(InputError, match="symlink"):
        conn.quarantine(["notes/alice-diet.md"])
    assert list(elsewhere.iterdir()) == []
    assert conn.current_sha256() == before and siblings(path) == []


def test_backup_option_keeps_the_previous_version(tmp_path: Path) -> None:
    path = build(tmp_path, "zip", "linked")
    original = path.read_bytes()
    conn = connector(path, backup=True)
    conn.quarantine(["notes/bob-work.md"])
    (backup,) = siblings(path)
    assert backup.startswith("field.zip.memaudit-backup-")
    assert (path.parent / backup).read_bytes() == original


# -- erasure -------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_erase_subject_removes_every_byte_and_keeps_the_other_subject(
    tmp_path: Path, fmt: str, index: str | None
) -> None:
    path = build(tmp_path, fmt, index)
    conn = connector(path, backup=True)
    conn.quarantine(["trips/alice-lisbon.md"])  # quarantined pages are erased too
    assert siblings(path)  # ... and so is the backup that quarantine kept
    original = files(path)
    before = conn.current_sha256()

    result = conn.erase_subject("user:alice", values=["alice@example.org", "Harbour Street"])

    assert result.verified, result.remaining
    assert result.counts["memoryfield.pages"] == 1
    assert result.counts["memoryfield.quarantined_pages"] == 1
    assert result.counts["memoryfield.backups"] == 1
    if index == "linked":
        # the diet page's row, its 5 chunks and their 5 vectors, and the orphan chunk naming
        # alice with its vector; the lisbon page's rows left the index with its quarantine
        assert result.counts["memoryfield.index_rows"] == 1 + 5 + 5 + 2
    elif index == "flat":
        assert result.counts["memoryfield.index_rows"] == 5 + 5  # vectors + search rows
    else:
        assert result.counts["memoryfield.index_rows"] == 0
    after = conn.current_sha256()
    assert after != before and conn.last_sha256 == after
    assert f"new sha256 {after}" in " ".join(result.notes)
    # gone from the pages, the quarantine area, the index, and every byte of every file
    assert adapter_pages(path) == dict.fromkeys(BOB_PAGES, "user:bob")
    assert not any(n.startswith(".quarantine") for n in files(path))
    assert leaks(path, ALICE_SECRETS) == {}
    assert siblings(path) == []  # no backup, no work folder
    # bob's pages are untouched, byte for byte, and still indexed
    now = files(path)
    for page in BOB_PAGES:
        assert now[page] == original[page]
    assert all(leaks(path, [text]) for text in BOB_TEXT)
    if index == "linked":
        paths = {r[0] for r in index_query(path, "SELECT path FROM pages", tmp_path)}
        assert paths == BOB_PAGES
        assert index_query(
            path, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'billing'", tmp_path
        ) == [(1,)]
        assert index_query(path, "SELECT count(*) FROM embeddings", tmp_path) == [(4,)]
    if index is not None:
        # the full-text index keeps no term of the erased text (terms are stored
        # prefix-compressed, so a byte search alone would not see them)
        fts = "chunks_fts" if index == "linked" else "search"
        terms = fts_terms(path, fts, tmp_path)
        assert {"billing", "pnpm"} <= terms
        assert not {"epipen", "peanuts", "okonkwo", "harbour", "lisbon", "locker"} & terms
    # a second erasure finds nothing and changes nothing
    again = conn.erase_subject("user:alice")
    assert again.verified and again.counts["memoryfield.pages"] == 0
    assert conn.current_sha256() == after


def test_erasure_reports_another_subjects_page_that_mentions_the_subject(tmp_path: Path) -> None:
    pages = dict(PAGES)
    pages["notes/bob-friends.md"] = (
        "---\nsubject: user:bob\n---\nMy friend user:alice recommended the tea shop.\n"
    )
    base = tmp_path / "agent"
    base.mkdir()
    path = build_folder(base / "field", "linked", pages)
    mention = (path / "notes/bob-friends.md").read_bytes()
    result = connector(path).erase_subject("user:alice")
    assert not result.verified
    # named by place (and the index row of that page), never by value
    assert any(r.startswith("notes/bob-friends.md: 1 match") for r in result.remaining)
    assert all("alice" not in r.replace("user:alice", "") for r in result.remaining)
    assert (path / "notes/bob-friends.md").read_bytes() == mention  # reported, not changed
    assert set(adapter_pages(path)) == BOB_PAGES | {"notes/bob-friends.md"}


def test_erasure_of_an_index_memaudit_cannot_edit(tmp_path: Path) -> None:
    base = tmp_path / "agent"
    base.mkdir()
    path = build_folder(base / "field", None)
    db_file = path / INDEX
    conn = sqlite3.connect(db_file)
    conn.execute("CREATE VIRTUAL TABLE notes_fts USING fts5(text, content='')")
    conn.execute("INSERT INTO notes_fts (rowid, text) VALUES (1, 'Alice is allergic to peanuts')")
    conn.commit()
    conn.close()
    result = connector(path).erase_subject("user:alice")
    assert not result.verified
    assert result.remaining == [
        "index index.sqlite: table notes_fts (fts5, contentless) cannot be edited by memaudit"
    ]
    assert db_file.exists()
    result = connector(path, drop_uneditable_index=True).erase_subject("user:alice")
    assert result.verified, result.remaining
    assert result.counts["memoryfield.index_files_dropped"] == 1
    assert not db_file.exists() and (path / "tooling.md").exists()


def test_a_corrupt_index_is_reported_or_dropped_and_pages_still_move(tmp_path: Path) -> None:
    base = tmp_path / "agent"
    base.mkdir()
    path = build_folder(base / "field", None)
    line = b"Alice is allergic to peanuts and carries an EpiPen in her red backpack."
    junk = b"SQLite format 3\x00" + b"\xff" * 4000 + line
    (path / INDEX).write_bytes(junk)
    conn = connector(path)
    conn.quarantine(["notes/alice-diet.md"])  # the page moves even if the index cannot
    assert "notes/alice-diet.md" not in adapter_pages(path)
    assert (path / INDEX).read_bytes() == junk
    result = conn.erase_subject("user:alice")
    assert not result.verified
    assert "index index.sqlite: cannot be edited (cannot read the index" in result.remaining[0]
    assert any(r.startswith("index.sqlite: 1 match") for r in result.remaining)
    assert set(adapter_pages(path)) == BOB_PAGES  # the pages went nevertheless
    result = connector(path, drop_uneditable_index=True).erase_subject("user:alice")
    assert result.verified, result.remaining
    assert not (path / INDEX).exists()


def test_erasure_in_a_wal_index_applies_and_removes_the_wal(tmp_path: Path) -> None:
    base = tmp_path / "agent"
    base.mkdir()
    path = build_folder(base / "field", "linked")
    db_file, wal = path / INDEX, path / (INDEX + "-wal")
    agent = sqlite3.connect(db_file)  # an agent that wrote in WAL mode and then crashed
    agent.execute("PRAGMA journal_mode=WAL")
    agent.execute("PRAGMA wal_autocheckpoint=0")
    agent.execute(
        "INSERT INTO chunks (page_id, seq, text) VALUES (999, 1, 'user:alice likes window seats')"
    )
    agent.commit()
    main_bytes, wal_bytes = db_file.read_bytes(), wal.read_bytes()
    agent.close()
    db_file.write_bytes(main_bytes)
    wal.write_bytes(wal_bytes)
    assert b"likes window seats" not in main_bytes and b"likes window seats" in wal_bytes
    result = connector(path).erase_subject("user:alice")
    assert result.verified, result.remaining
    assert not wal.exists()
    assert leaks(path, [*ALICE_SECRETS, "likes window seats"]) == {}
    assert index_query(path, "SELECT count(*) FROM embeddings", tmp_path) == [(4,)]


# -- safety ----------------------------------------------------------------------------------------


class Boom(Exception):
    pass


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("where", ["stage", "install"])
def test_a_failure_mid_rewrite_leaves_the_original_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, where: str
) -> None:
    path = build(tmp_path, fmt, "linked")
    original = files(path)
    conn = connector(path)
    before = conn.current_sha256()
    calls = {"n": 0}
    real_fsync = tree_mod._fsync

    def failing_fsync(p: Path) -> None:
        # the new version is written (links, copies, the edited index) but cannot be synced
        if where == "stage" and ".memaudit-work-" in str(p) and Path(p).name != "old":
            calls["n"] += 1
            raise Boom("disk full")
        real_fsync(p)

    monkeypatch.setattr(tree_mod, "_fsync", failing_fsync)
    if where == "install":
        cls = tree_mod.FolderTree if fmt == "folder" else tree_mod.ZipTree

        def failing_install(self: Any, staged: Path, work: Path, backup: Path | None) -> None:
            raise Boom("power cut")

        monkeypatch.setattr(cls, "install", failing_install)
    with pytest.raises(Boom):
        conn.erase_subject("user:alice")
    with pytest.raises(Boom):
        conn.quarantine(["notes/bob-work.md"])
    assert files(path) == original
    assert conn.current_sha256() == before
    assert siblings(path) == []  # the half-written version was removed
    assert calls["n"] == (2 if where == "stage" else 0)


def test_a_crash_between_the_two_renames_of_a_folder_is_recovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = build(tmp_path, "folder", "linked")
    original = files(path)
    conn = connector(path)
    # where renameat2 cannot swap, two renames: the second one fails
    monkeypatch.setattr(tree_mod, "_exchange", lambda a, b: False)
    real_rename = os.rename

    def second_fails(src: Any, dst: Any) -> None:
        if Path(src).name == "new":
            raise OSError(28, "No space left on device")
        real_rename(src, dst)

    monkeypatch.setattr(tree_mod.os, "rename", second_fails)
    with pytest.raises(OSError):
        conn.quarantine(["notes/bob-work.md"])
    monkeypatch.setattr(tree_mod.os, "rename", real_rename)
    assert files(path) == original and siblings(path) == []
    # the fallback itself works
    conn.quarantine(["notes/bob-work.md"])
    assert "notes/bob-work.md" not in adapter_pages(path)
    # a process killed between the renames: the folder is in the work folder; put back
    work = path.parent / ".field.memaudit-work-crashed"
    work.mkdir()
    real_rename(path, work / "old")
    assert not path.exists()
    assert connector(path).live_ids() == set(PAGES)
    assert path.is_dir() and siblings(path) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_change_during_the_rewrite_aborts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    path = build(tmp_path, fmt, None)
    conn = connector(path)
    cls = tree_mod.FolderTree if fmt == "folder" else tree_mod.ZipTree
    real_stage = cls.stage

    def stage_then_agent_writes(self: Any, plan: Any, work: Path, *, copy: bool) -> Path:
        staged = real_stage(self, plan, work, copy=copy)
        if fmt == "folder":
            (path / "new-note.md").write_text("---\nsubject: user:bob\n---\nNew.\n")
        else:
            with zipfile.ZipFile(path, "a") as zf:
                zf.writestr("new-note.md", "---\nsubject: user:bob\n---\nNew.\n")
        return staged

    monkeypatch.setattr(cls, "stage", stage_then_agent_writes)
    with pytest.raises(ConcurrencyError):
        conn.quarantine(["notes/alice-diet.md"])
    assert set(adapter_pages(path)) == set(PAGES) | {"new-note.md"}  # nothing lost
    assert siblings(path) == []


def _zip_with(path: Path, extra: Callable[[zipfile.ZipFile], None]) -> Path:
    build_zip(path, "linked")
    with zipfile.ZipFile(path, "a") as zf:
        extra(zf)
    return path


def test_zip_slip_names_are_refused_and_the_archive_is_untouched(tmp_path: Path) -> None:
    base = tmp_path / "agent"
    base.mkdir()

    def slip(zf: zipfile.ZipFile) -> None:
        zf.writestr("../../evil.md", "---\nsubject: user:bob\n---\nEvil.\n")
        zf.writestr("/abs/evil.md", "---\nsubject: user:bob\n---\nEvil.\n")

    path = _zip_with(base / "field.zip", slip)
    original = path.read_bytes()
    conn = connector(path)
    errors = [i.error for i in conn.pull(None) if i.error]
    assert len(errors) == 2 and all("refused" in e for e in errors)
    assert "../../evil.md" not in conn.live_ids()
    with pytest.raises(InputError, match="unsafe names"):
        conn.quarantine(["notes/alice-diet.md"])
    with pytest.raises(InputError, match="unsafe names"):
        conn.erase_subject("user:alice")
    assert path.read_bytes() == original
    assert siblings(path) == [] and not (tmp_path / "evil.md").exists()


def test_zip_bomb_is_refused_on_rewrite(tmp_path: Path) -> None:
    base = tmp_path / "agent"
    base.mkdir()

    def bomb(zf: zipfile.ZipFile) -> None:
        zf.writestr("images/huge.bin", bytes(8 * 1024 * 1024), zipfile.ZIP_DEFLATED)

    path = _zip_with(base / "field.zip", bomb)
    original = path.read_bytes()
    conn = MemoryfieldConnector(
        SourceConfig(name="notes", kind="memoryfield", options={"path": str(path)}),
        settings(memoryfield_max_ratio=50.0),
    )
    with pytest.raises(InputError, match="zip bomb"):
        conn.quarantine(["notes/alice-diet.md"])
    assert path.read_bytes() == original and siblings(path) == []


def test_folder_symlinks_are_never_followed(tmp_path: Path) -> None:
    base = tmp_path / "agent"
    base.mkdir()
    path = build_folder(base / "field", "linked")
    outside = tmp_path / "outside.md"
    outside.write_text("---\nsubject: user:alice\n---\nuser:alice outside the field\n")
    (path / "leak.md").symlink_to(outside)
    conn = connector(path)
    result = conn.erase_subject("user:alice")
    assert outside.read_text().startswith("---")  # not erased, not read
    assert os.readlink(path / "leak.md") == str(outside)  # the link is kept as it is
    assert result.verified, result.remaining
    assert "refused" in " ".join(i.error or "" for i in conn.pull(None))


# -- end to end through the sync engine ------------------------------------------------------------


@pytest.fixture
def field(tmp_path: Path) -> Iterator[Path]:
    base = tmp_path / "agent"
    base.mkdir()
    yield build_folder(base / "field", "linked")


def _memories(db: Database) -> dict[str, Memory]:
    with db.session() as session:
        return {m.memory_id: m for m in session.scalars(select(Memory))}


def test_sync_quarantine_restore_and_erasure_end_to_end(db: Database, field: Path) -> None:
    add_source(
        db,
        SourceConfig(
            name="notes",
            kind="memoryfield",
            options={"path": str(field), "subject": "user:bob"},
            write_back=True,
        ),
    )
    report = sync_source(db, "notes")
    assert report.status == "completed", report.as_dict()
    assert report.imported["inserted"] == 4
    assert sync_source(db, "notes").imported.get("inserted", 0) == 0  # unchanged: nothing
    diet = memory_id_for("notes", "notes/alice-diet.md")
    got = _memories(db)
    assert got[diet].subject == "user:alice" and got[diet].extra["source_kind"] == "memoryfield"

    Lifecycle(db).quarantine(diet, actor="reviewer.kim", reason="poisoned instruction")
    assert run_outbox(db)["done"] == 1
    assert "notes/alice-diet.md" not in adapter_pages(field)
    sync_source(db, "notes", full=True)
    assert _memories(db)[diet].status == "quarantined"

    Lifecycle(db).restore(diet, actor="reviewer.kim")
    assert run_outbox(db)["done"] == 1
    assert "notes/alice-diet.md" in adapter_pages(field)
    sync_source(db, "notes", full=True)
    assert _memories(db)[diet].status == "active"

    receipt = erasure.erase_subject(db, "user:alice", actor="officer.lee")
    data = receipt.as_dict()
    notes = data["sources"]["notes"]
    assert notes["verified"] is True, notes
    assert notes["counts"]["memoryfield.pages"] == 2
    assert receipt.ok, data["verification"]
    assert leaks(field, ALICE_SECRETS) == {}
    assert set(adapter_pages(field)) == BOB_PAGES
    report = sync_source(db, "notes", full=True)
    assert {m.subject for m in _memories(db).values()} == {"user:bob"}
