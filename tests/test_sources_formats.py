"""Source adapters for Memoryfields (zip and folder), key-value dumps and state.json notes.

Inputs are built in ``tmp_path`` (zips with :mod:`zipfile` at run time). Every yielded record
must pass :func:`auditor.records.parse_record`; every error must name its location and never
carry the memory's text (the word ``SECRETWORD`` stands for personal data below).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.config import Settings
from auditor.errors import InputError, RecordError
from auditor.records import MemoryRecord, parse_record
from auditor.sources.files import detect_format, open_source
from auditor.sources.files.base import Source, SourceItem
from auditor.sources.files.kv import KvSource
from auditor.sources.files.memoryfield import MemoryfieldSource
from auditor.sources.files.state import StateSource

SECRET = "SECRETWORD"
SUBJECT = "user:alice"
MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z
MTIME_ISO = "2026-01-01T00:00:00+00:00"


def settings(**overrides: Any) -> Settings:
    return Settings(**overrides)


def read_all(source: Source) -> tuple[list[SourceItem], list[SourceItem]]:
    """(record items, error items); every record item is validated with parse_record."""
    items = list(source.items())
    good = [item for item in items if item.raw is not None]
    bad = [item for item in items if item.error is not None]
    for item in good:
        parse_record(item.raw, item.location, source.settings)
    return good, bad


def parsed(source: Source) -> list[MemoryRecord]:
    good, bad = read_all(source)
    assert bad == []
    return [parse_record(item.raw, item.location, source.settings) for item in good]


def errors_by_location(items: list[SourceItem]) -> dict[str, str]:
    return {item.location: item.error or "" for item in items}


def assert_no_secret(*messages: str) -> None:
    for message in messages:
        assert SECRET not in message
        assert SECRET.lower() not in message.lower()


def write_zip(path: Path, entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            if isinstance(name, str):
                info = zipfile.ZipInfo(name, date_time=(2025, 3, 4, 5, 6, 8))
                info.compress_type = zipfile.ZIP_DEFLATED
            else:
                info = name
            zf.writestr(info, data)
    return path


def mf(path: Path, subject: str | None = SUBJECT, **limits: Any) -> MemoryfieldSource:
    return MemoryfieldSource(path, settings(**limits), subject=subject)


PAGE_WITH_FRONT_MATTER = (
    b"---\n"
    b"title: Language preference\n"
    b"created: 2026-01-05\n"
    b"modified: 2026-01-06T10:30:00Z\n"
    b"uuid: 0F8FAD5B-D9CB-469F-A165-70867728950E\n"
    b"summary: what language to answer in\n"
    b"subject: user:bob\n"
    b"category: preference\n"
    b"---\n"
    b"Bob prefers answers in Korean.\n"
)


# -- Memoryfield: zip --------------------------------------------------------------------


def test_memoryfield_zip_happy_path(tmp_path: Path) -> None:
    archive = write_zip(
        tmp_path / "agent-notes.zip",
        [
            ("notes/", b""),
            ("notes/lang.md", PAGE_WITH_FRONT_MATTER),
            ("plain.md", b"# Plain page\n\nAlice uses pnpm.\n"),
            ("index.sqlite", b"SQLite format 3\x00" + bytes(100)),
            ("img/logo.png", b"\x89PNG\r\n"),
        ],
    )
    source = mf(archive)
    assert source.total == archive.stat().st_size
    good, bad = read_all(source)
    assert bad == []
    assert source.skipped_entries == 2
    assert source.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert [item.external_id for item in good] == ["notes/lang.md", "plain.md"]
    with zipfile.ZipFile(archive) as zf:
        assert [item.consumed for item in good] == [
            zf.getinfo("notes/lang.md").compress_size,
            zf.getinfo("plain.md").compress_size,
        ]

    lang, plain = (parse_record(i.raw, i.location, source.settings) for i in good)
    assert good[0].location == "entry notes/lang.md"
    assert lang.memory_id == "mf_0f8fad5b-d9cb-469f-a165-70867728950e"
    assert lang.subject == "user:bob"  # front matter wins over --subject
    assert lang.namespace == "memoryfield:agent-notes"
    assert (lang.kind, lang.category) == ("note", "preference")
    assert lang.fact == "Bob prefers answers in Korean.\n"
    assert lang.created_at == datetime(2026, 1, 5, tzinfo=UTC)  # unquoted YAML date
    assert lang.updated_at == datetime(2026, 1, 6, 10, 30, tzinfo=UTC)
    assert lang.source is not None
    assert lang.source.type == "import"
    assert lang.source.uri == f"memoryfield://{source.sha256}/notes/lang.md"
    assert lang.extra_fields == {
        "title": "Language preference",
        "summary": "what language to answer in",
        "page_bytes": len(PAGE_WITH_FRONT_MATTER),
    }

    expected_id = hashlib.sha256(b"memoryfield:agent-notes\0plain.md").hexdigest()[:26]
    assert plain.memory_id == "mf_" + expected_id
    assert plain.subject == SUBJECT
    assert (plain.kind, plain.category) == ("note", "note")
    assert plain.fact == "# Plain page\n\nAlice uses pnpm.\n"
    assert plain.created_at == plain.updated_at == datetime(2025, 3, 4, 5, 6, 8, tzinfo=UTC)
    assert plain.extra_fields["title"] is None


def test_memoryfield_ids_stable_across_reads(tmp_path: Path) -> None:
    archive = write_zip(
        tmp_path / "m.zip", [("a.md", b"one"), ("b/c.md", b"---\ntitle: t\n---\ntwo")]
    )
    first = [item.raw for item in mf(archive).items()]
    second = [item.raw for item in mf(archive).items()]
    assert first == second
    assert len({raw["memory_id"] for raw in first if raw}) == 2


def test_memoryfield_namespace_override_and_registry(tmp_path: Path) -> None:
    archive = write_zip(tmp_path / "m.zip", [("a.md", b"one")])
    assert detect_format(archive) == "memoryfield"
    source = open_source("memoryfield", archive, settings(), subject=SUBJECT, namespace="ns")
    assert isinstance(source, MemoryfieldSource)
    (record,) = parsed(source)
    assert record.namespace == "ns"
    assert record.memory_id == "mf_" + hashlib.sha256(b"ns\0a.md").hexdigest()[:26]


def test_memoryfield_page_without_subject_is_an_error_item(tmp_path: Path) -> None:
    archive = write_zip(
        tmp_path / "m.zip",
        [("mine.md", b"---\nsubject: user:carol\n---\nfine"), ("orphan.md", SECRET.encode())],
    )
    good, bad = read_all(mf(archive, subject=None))
    assert [item.external_id for item in good] == ["mine.md"]
    errors = errors_by_location(bad)
    assert errors == {
        "entry orphan.md": "no subject: pass --subject or set subject in the front matter"
    }


def test_memoryfield_path_traversal_refused_and_nothing_written(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    archive = write_zip(
        work / "evil.zip",
        [
            ("../evil.md", f"{SECRET} traversal".encode()),
            ("/abs.md", f"{SECRET} absolute".encode()),
            ("notes\\..\\..\\win.md", f"{SECRET} backslash".encode()),
            ("C:/drive.md", f"{SECRET} drive".encode()),
            ("notes/../../up.md", f"{SECRET} nested".encode()),
            ("ok.md", b"safe page"),
        ],
    )
    before = sorted(p.name for p in tmp_path.rglob("*"))
    good, bad = read_all(mf(archive))
    assert [item.external_id for item in good] == ["ok.md"]
    errors = errors_by_location(bad)
    assert set(errors) == {
        "entry ../evil.md",
        "entry /abs.md",
        "entry notes\\..\\..\\win.md",
        "entry C:/drive.md",
        "entry notes/../../up.md",
    }
    assert "traversal" in errors["entry ../evil.md"]
    assert "absolute" in errors["entry /abs.md"]
    assert "absolute" in errors["entry C:/drive.md"]
    assert "backslash" in errors["entry notes\\..\\..\\win.md"]
    assert_no_secret(*errors.values())
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_memoryfield_symlink_entry_refused(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("link.md", date_time=(2025, 1, 1, 0, 0, 0))
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    archive = write_zip(tmp_path / "m.zip", [(link, b"/etc/passwd"), ("ok.md", b"fine")])
    good, bad = read_all(mf(archive))
    assert [item.external_id for item in good] == ["ok.md"]
    assert errors_by_location(bad) == {"entry link.md": "symlink entry; refused"}


def test_memoryfield_zip_bomb_refused(tmp_path: Path) -> None:
    bomb = b"\0" * (3 * (1 << 20))
    archive = write_zip(tmp_path / "m.zip", [("bomb.md", bomb), ("ok.md", b"fine")])
    good, bad = read_all(mf(archive, memoryfield_max_ratio=10.0))
    assert [item.external_id for item in good] == ["ok.md"]
    (error,) = bad
    assert error.location == "entry bomb.md"
    assert error.error is not None and "looks like a zip bomb" in error.error


def test_memoryfield_large_but_not_compressible_page_is_not_a_bomb(tmp_path: Path) -> None:
    page = os.urandom(600_000).hex().encode()  # 1.2 MB, ratio ~2
    archive = write_zip(tmp_path / "m.zip", [("big.md", page)])
    (record,) = parsed(mf(archive, memoryfield_max_ratio=10.0, max_fact_bytes=2_000_000))
    assert record.extra_fields["page_bytes"] == len(page)


def test_memoryfield_too_many_entries(tmp_path: Path) -> None:
    archive = write_zip(tmp_path / "m.zip", [(f"p{i}.md", b"x") for i in range(4)])
    source = mf(archive, memoryfield_max_entries=3)
    with pytest.raises(InputError) as info:
        list(source.items())
    assert str(archive) in str(info.value)
    assert "4 entries" in str(info.value) and "limit of 3" in str(info.value)
    assert source.sha256 is None  # refused before reading anything


@pytest.mark.parametrize("zip64", [False, True])
def test_memoryfield_too_many_entries_refused_before_loading_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zip64: bool
) -> None:
    if zip64:  # make zipfile write the zip64 end records, as for > 65,535 entries
        monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 2)
    archive = write_zip(tmp_path / "m.zip", [(f"p{i}.md", b"x") for i in range(5)])
    data = archive.read_bytes()
    assert data[-22:-18] == b"PK\x05\x06"
    if zip64:  # the plain end record then says 0xFFFF: the count is in the zip64 record
        assert b"PK\x06\x06" in data
        archive.write_bytes(data[:-14] + b"\xff\xff\xff\xff" + data[-10:])

    def no_directory(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the central directory was loaded")

    monkeypatch.setattr(zipfile, "ZipFile", no_directory)
    with pytest.raises(InputError, match="5 entries, over the limit of 3"):
        list(mf(archive, memoryfield_max_entries=3).items())


@pytest.mark.parametrize("content", [b"this is not a zip file", b"", b"PK\x03\x04garbage"])
def test_memoryfield_not_a_zip(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.zip"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        list(mf(path).items())
    assert str(path) in str(info.value)
    assert "not a zip archive" in str(info.value)


def test_memoryfield_truncated_zip(tmp_path: Path) -> None:
    archive = write_zip(tmp_path / "m.zip", [("a.md", b"page one " * 100)])
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="not a zip archive"):
        list(mf(archive).items())


def test_memoryfield_corrupt_entry_is_an_error_item(tmp_path: Path) -> None:
    path = tmp_path / "m.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("bad.md", f"{SECRET} AAAAAAAA".encode())
        zf.writestr("ok.md", b"fine")
    path.write_bytes(path.read_bytes().replace(b"AAAAAAAA", b"BBBBBBBB"))  # CRC mismatch
    good, bad = read_all(mf(path))
    assert [item.external_id for item in good] == ["ok.md"]
    (error,) = bad
    assert error.location == "entry bad.md"
    assert error.error == "corrupt entry (BadZipFile)"


def test_memoryfield_invalid_utf8_names_byte_offset(tmp_path: Path) -> None:
    archive = write_zip(
        tmp_path / "m.zip", [("bad.md", SECRET.encode() + b" \xff tail"), ("ok.md", b"fine")]
    )
    good, bad = read_all(mf(archive))
    assert len(good) == 1
    assert errors_by_location(bad) == {"entry bad.md": f"invalid UTF-8 at byte {len(SECRET) + 2}"}


def test_memoryfield_bad_yaml_names_line(tmp_path: Path) -> None:
    page = f"---\ntitle: fine\nsummary: [{SECRET}, unclosed\n---\nbody {SECRET}\n".encode()
    bad_mapping = f"---\n- {SECRET}\n---\nbody\n".encode()
    archive = write_zip(
        tmp_path / "m.zip", [("bad.md", page), ("list.md", bad_mapping), ("ok.md", b"fine")]
    )
    good, bad = read_all(mf(archive))
    assert len(good) == 1
    errors = errors_by_location(bad)
    assert errors["entry bad.md"].startswith("bad YAML front matter at line ")
    line = int(errors["entry bad.md"].split("line ")[1].split(":")[0])
    assert line in (3, 4)  # where the flow sequence is, or where the parser gives up
    assert errors["entry list.md"] == "front matter is not a mapping (got list)"
    assert_no_secret(*errors.values())


def test_memoryfield_bad_front_matter_values(tmp_path: Path) -> None:
    archive = write_zip(
        tmp_path / "m.zip",
        [
            ("date.md", f"---\ncreated: {SECRET}\n---\nbody".encode()),
            ("title.md", f"---\ntitle: [{SECRET}]\n---\nbody".encode()),
            ("uuid.md", b"---\nuuid: not-a-uuid\n---\nbody"),
            ("impossible.md", f"---\nexpires: 2026-13-45\n---\n{SECRET}".encode()),
        ],
    )
    good, bad = read_all(mf(archive))
    errors = errors_by_location(bad)
    assert errors == {
        "entry date.md": "front matter 'created' is not an ISO 8601 date",
        "entry title.md": "front matter 'title' must be text, got list",
        "entry impossible.md": "bad YAML front matter: a value cannot be read (ValueError)",
    }
    (uuid_page,) = good  # an invalid uuid falls back to the path-based id
    assert uuid_page.raw is not None
    assert uuid_page.raw["memory_id"].startswith("mf_") and len(uuid_page.raw["memory_id"]) == 29


def test_memoryfield_duplicate_uuid_and_duplicate_entry(tmp_path: Path) -> None:
    page = b"---\nuuid: 0f8fad5b-d9cb-469f-a165-70867728950e\n---\nbody"
    archive = tmp_path / "m.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.md", page)
        zf.writestr("b.md", page)
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("a.md", b"again")
    good, bad = read_all(mf(archive))
    assert [item.external_id for item in good] == ["a.md"]
    errors = [(item.location, item.error) for item in bad]
    assert errors == [
        ("entry b.md", "front matter uuid is already used by entry a.md"),
        ("entry a.md", "duplicate entry name in the archive"),
    ]


def test_memoryfield_page_over_size_limit(tmp_path: Path) -> None:
    big = (SECRET + " ") * 300  # 3,300 bytes
    archive = write_zip(tmp_path / "m.zip", [("big.md", big.encode()), ("ok.md", b"fine")])
    good, bad = read_all(mf(archive, memoryfield_max_page_bytes=2048))
    assert len(good) == 1
    assert errors_by_location(bad) == {"entry big.md": "page is over the limit of 2,048 bytes"}


def test_memoryfield_total_limit_stops_import(tmp_path: Path) -> None:
    pages = [(f"p{i}.md", os.urandom(300).hex().encode()) for i in range(4)]  # 600 bytes each
    archive = write_zip(tmp_path / "m.zip", pages)
    items = list(mf(archive, memoryfield_max_total_bytes=1024).items())
    assert [item.location for item in items] == ["entry p0.md", "entry p1.md"]
    assert items[0].raw is not None
    assert items[1].error is not None and "stopped here" in items[1].error
    assert "1,024" in items[1].error


def test_memoryfield_nul_byte_left_to_the_record_validator(tmp_path: Path) -> None:
    archive = write_zip(tmp_path / "m.zip", [("nul.md", b"before\0after")])
    (item,) = list(mf(archive).items())
    assert item.raw is not None
    with pytest.raises(RecordError, match="NUL"):
        parse_record(item.raw, item.location, settings())


def test_memoryfield_nul_in_entry_name_refused(tmp_path: Path) -> None:
    archive = write_zip(tmp_path / "m.zip", [("a.mdX.exe", b"trick"), ("ok.md", b"fine")])
    # zipfile cuts names at NUL when writing: put the NUL into both headers by hand.
    archive.write_bytes(archive.read_bytes().replace(b"a.mdX.exe", b"a.md\0.exe"))
    good, bad = read_all(mf(archive))
    assert len(good) == 1
    (error,) = bad
    assert error.error == "NUL byte in the entry name; refused"
    assert "\0" not in error.location


def test_memoryfield_crlf_front_matter_and_expires(tmp_path: Path) -> None:
    page = b"---\r\ncreated: '2026-02-01T09:00:00+09:00'\r\nexpires: 2026-03-01\r\n" + (
        b"kind: semantic\r\n---\r\nbody line\r\n"
    )
    archive = write_zip(tmp_path / "m.zip", [("crlf.md", page)])
    (record,) = parsed(mf(archive))
    assert record.fact == "body line\r\n"
    assert record.kind == "semantic"
    assert record.created_at == datetime(2026, 2, 1, 0, 0, tzinfo=UTC)
    assert record.updated_at == record.created_at
    assert record.expires_at == datetime(2026, 3, 1, tzinfo=UTC)


# -- Memoryfield: folder -----------------------------------------------------------------


def make_folder(root: Path) -> Path:
    (root / "notes" / "deep").mkdir(parents=True)
    (root / "notes" / "lang.md").write_bytes(PAGE_WITH_FRONT_MATTER)
    (root / "notes" / "deep" / "plain.md").write_text("plain page", encoding="utf-8")
    (root / "index.db").write_bytes(b"SQLite format 3\x00")
    for path in root.rglob("*"):
        os.utime(path, (MTIME, MTIME))
    return root


def test_memoryfield_folder_happy_path(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "field")
    source = mf(folder)
    assert detect_format(folder) == "memoryfield"
    good, bad = read_all(source)
    assert bad == []
    assert source.skipped_entries == 1
    assert source.total == len(PAGE_WITH_FRONT_MATTER) + len("plain page")
    assert source.sha256 is not None and len(source.sha256) == 64
    assert [item.external_id for item in good] == ["notes/deep/plain.md", "notes/lang.md"]
    assert [item.consumed for item in good] == [len("plain page"), len(PAGE_WITH_FRONT_MATTER)]
    plain = parse_record(good[0].raw, good[0].location, source.settings)
    assert plain.namespace == "memoryfield:field"
    ns_path = b"memoryfield:field\0notes/deep/plain.md"
    assert plain.memory_id == "mf_" + hashlib.sha256(ns_path).hexdigest()[:26]
    assert plain.created_at == datetime.fromtimestamp(MTIME, UTC)
    assert plain.source is not None
    assert plain.source.uri == f"memoryfield://{source.sha256}/notes/deep/plain.md"

    again = mf(folder)
    assert [item.raw for item in again.items()] == [item.raw for item in good]
    assert again.sha256 == source.sha256
    (folder / "notes" / "deep" / "plain.md").write_text("changed", encoding="utf-8")
    changed = mf(folder)
    list(changed.items())
    assert changed.sha256 != source.sha256


def test_memoryfield_folder_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET, encoding="utf-8")
    folder = make_folder(tmp_path / "field")
    (folder / "escape.md").symlink_to(outside / "secret.md")
    (folder / "escape-dir").symlink_to(outside, target_is_directory=True)
    (folder / "alias.md").symlink_to(folder / "notes" / "deep" / "plain.md")
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    good, bad = read_all(mf(folder))
    assert errors_by_location(bad) == {
        "entry escape.md": "symlink leaves the folder; refused",
        "entry escape-dir": "symlink leaves the folder; refused",
    }
    facts = {item.external_id: item.raw["fact"] for item in good if item.raw}
    assert facts["alias.md"] == "plain page"  # a link inside the folder is read
    assert all(SECRET not in fact for fact in facts.values())


def test_memoryfield_folder_too_many_entries(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "field")
    with pytest.raises(InputError, match="more than 2 entries"):
        list(mf(folder, memoryfield_max_entries=2).items())


def test_memoryfield_folder_fifo_page_refused(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "field")
    os.mkfifo(folder / "pipe.md")
    good, bad = read_all(mf(folder))
    assert len(good) == 2
    assert errors_by_location(bad) == {"entry pipe.md": "not a regular file; refused"}


def test_memoryfield_folder_non_utf8_name_refused(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "field")
    fd = os.open(os.fsencode(folder) + b"/bad\xff.md", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"page")
    os.close(fd)
    good, bad = read_all(mf(folder))
    assert len(good) == 2
    (error,) = bad
    assert error.error == "file name is not valid UTF-8; refused"
    assert error.location == "entry bad\\udcff.md"


def test_memoryfield_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        mf(tmp_path / "nope.zip")


# -- kv ----------------------------------------------------------------------------------


def write_json(path: Path, value: Any, *, raw: str | None = None) -> Path:
    path.write_text(raw if raw is not None else json.dumps(value), encoding="utf-8")
    os.utime(path, (MTIME, MTIME))
    return path


def kv(path: Path, subject: str | None = SUBJECT, **limits: Any) -> KvSource:
    return KvSource(path, settings(**limits), subject=subject)


def test_kv_happy_path(tmp_path: Path) -> None:
    doc = {"language": "Korean", "pets": ["cat", "개"], "age": 42, "opts": {"dark": True}}
    path = write_json(tmp_path / "agent-kv.json", doc)
    assert detect_format(path) == "kv"
    source = kv(path)
    good, bad = read_all(source)
    assert bad == []
    assert [item.location for item in good] == [
        "key 'language'",
        "key 'pets'",
        "key 'age'",
        "key 'opts'",
    ]
    assert [item.external_id for item in good] == list(doc)
    assert sum(item.consumed for item in good) == path.stat().st_size
    records = [parse_record(i.raw, i.location, source.settings) for i in good]
    assert [r.fact for r in records] == [
        "language: Korean",
        'pets: ["cat","개"]',
        "age: 42",
        'opts: {"dark":true}',
    ]
    first = records[0]
    digest = hashlib.sha256(f"kv:agent-kv\0{SUBJECT}\0language".encode()).hexdigest()[:26]
    assert first.memory_id == "kv_" + digest
    assert (first.subject, first.namespace) == (SUBJECT, "kv:agent-kv")
    assert (first.kind, first.category) == ("semantic", "note")
    assert first.source is not None
    assert (first.source.type, first.source.uri) == ("import", "kv://agent-kv.json#language")
    assert first.created_at == first.updated_at == datetime.fromtimestamp(MTIME, UTC)
    assert first.extra_fields == {"kv_key": "language"}
    assert [i.raw for i in kv(path).items()] == [i.raw for i in good]


def test_kv_bad_items(tmp_path: Path) -> None:
    long_key = "k" * 200
    raw = json.dumps({"gone": None, "": SECRET, "ok": "fine", long_key: "v"})
    raw = raw[:-1] + ', "ok": "second"}'  # a duplicate key: the last value wins
    path = write_json(tmp_path / "kv.json", None, raw=raw)
    good, bad = read_all(kv(path))
    assert [item.raw["fact"] for item in good if item.raw] == [f"{long_key}: v", "ok: second"]
    assert good[0].location == "key '" + "k" * 80 + "…'"
    assert errors_by_location(bad) == {
        "key 'gone'": "value is null",
        "key ''": "empty key",
        "key 'ok'": "duplicate key; only its last value is imported",
    }


def test_kv_requires_subject(tmp_path: Path) -> None:
    path = write_json(tmp_path / "kv.json", {"a": 1})
    with pytest.raises(InputError, match="--subject"):
        list(kv(path, subject=None).items())


def test_kv_whole_file_errors(tmp_path: Path) -> None:
    not_object = write_json(tmp_path / "list.json", [SECRET])
    with pytest.raises(InputError, match="expected a JSON object of key -> value") as info:
        list(kv(not_object).items())
    assert str(not_object) in str(info.value)

    broken = write_json(tmp_path / "broken.json", None, raw='{\n  "a": "' + SECRET + '",\n  b\n}')
    with pytest.raises(InputError) as info:
        list(kv(broken).items())
    assert "line 3, column 3" in str(info.value)
    assert_no_secret(str(info.value))

    bad_utf8 = tmp_path / "bad.json"
    bad_utf8.write_bytes(b'{"a": "' + SECRET.encode() + b'\xc3\x28"}')
    with pytest.raises(InputError, match=f"invalid UTF-8 at byte {8 + len(SECRET)}") as info:
        list(kv(bad_utf8).items())
    assert_no_secret(str(info.value))

    big = write_json(tmp_path / "big.json", {"a": "x" * 2000})
    with pytest.raises(InputError, match="over the limit of 1,024 bytes"):
        list(kv(big, max_source_file_bytes=1024).items())

    nan = write_json(tmp_path / "nan.json", None, raw='{"a": NaN}')
    with pytest.raises(InputError, match="NaN"):
        list(kv(nan).items())

    with pytest.raises(InputError, match="not a file"):
        list(kv(tmp_path).items())


def test_kv_entry_over_record_limit(tmp_path: Path) -> None:
    path = write_json(tmp_path / "kv.json", {"big": SECRET * 200, "ok": 1})
    good, bad = read_all(kv(path, max_record_bytes=1024))
    assert len(good) == 1
    assert errors_by_location(bad) == {"key 'big'": "entry is over the limit of 1,024 bytes"}


def test_kv_bom_accepted(tmp_path: Path) -> None:
    path = tmp_path / "kv.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"a": "b"}).encode())
    (record,) = parsed(kv(path))
    assert record.fact == "a: b"


# -- state -------------------------------------------------------------------------------

STATE = {
    "objective": "Ship the memory audit",
    "constraints": ["Use pnpm only", {"text": "No cloud", "source": "notes/request.md#limits"}],
    "decisions": [
        {
            "id": "D1",
            "text": "Use SQLite locally",
            "source": "notes/request.md#output",
            "status": "confirmed",
        },
        {"text": "Answer in Korean"},
    ],
    "completed": [{"text": "Wrote the importer", "source": "runs/42.log"}, {"text": "Tests"}],
    "open_questions": [{"text": "Which retention?", "source": None}],
    "next_actions": ["Write docs", {"text": "Tag release"}],
    "sources": [
        {"path": "notes/request.md", "purpose": "the request", "checked_at": "2026-01-02"},
        {"path": "README.md", "purpose": "tour", "checked_at": None},
    ],
    "scratch": "ignored",
    "mood": 3,
}


def state(path: Path, subject: str | None = SUBJECT, **limits: Any) -> StateSource:
    return StateSource(path, settings(**limits), subject=subject)


def test_state_happy_path(tmp_path: Path) -> None:
    path = write_json(tmp_path / "state.json", STATE)
    assert detect_format(path) == "state"
    source = state(path)
    good, bad = read_all(source)
    assert bad == []
    assert source.ignored_keys == ["scratch", "mood"]
    assert sum(item.consumed for item in good) == path.stat().st_size
    records = {i.location: parse_record(i.raw, i.location, source.settings) for i in good}
    shape = {loc: (r.category, r.kind, r.fact) for loc, r in records.items()}
    assert shape == {
        "objective": ("objective", "semantic", "Ship the memory audit"),
        "constraints[0]": ("constraint", "semantic", "Use pnpm only"),
        "constraints[1]": ("constraint", "semantic", "No cloud"),
        "decisions[0]": ("decision", "semantic", "Use SQLite locally"),
        "decisions[1]": ("decision", "semantic", "Answer in Korean"),
        "completed[0]": ("completed", "episodic", "Wrote the importer"),
        "completed[1]": ("completed", "episodic", "Tests"),
        "open_questions[0]": ("open_question", "procedural", "Which retention?"),
        "next_actions[0]": ("next_action", "procedural", "Write docs"),
        "next_actions[1]": ("next_action", "procedural", "Tag release"),
        "sources[0]": ("source", "procedural", "notes/request.md: the request"),
        "sources[1]": ("source", "procedural", "README.md: tour"),
    }
    for record in records.values():
        assert (record.subject, record.namespace) == (SUBJECT, "state:state")
        assert record.created_at == record.updated_at == datetime.fromtimestamp(MTIME, UTC)
        assert record.source is not None and record.source.type == "import"

    d1 = records["decisions[0]"]
    digest = hashlib.sha256(f"state:state\0{SUBJECT}\0decisions\0D1".encode()).hexdigest()[:26]
    assert d1.memory_id == "st_" + digest
    assert d1.source is not None and d1.source.uri == "notes/request.md#output"
    assert d1.extra_fields == {
        "state_section": "decisions",
        "state_item_source": "notes/request.md#output",
        "decision_id": "D1",
        "state_status": "confirmed",
    }
    d2 = records["decisions[1]"]
    text_key = f"state:state\0{SUBJECT}\0decisions\0Answer in Korean".encode()
    assert d2.memory_id == "st_" + hashlib.sha256(text_key).hexdigest()[:26]
    assert d2.extra_fields["decision_id"] is None and d2.extra_fields["state_status"] is None

    tests_done = records["completed[1]"]
    assert tests_done.extra_fields == {"state_section": "completed", "state_item_source": None}
    assert tests_done.source is not None
    assert tests_done.source.uri == "state://state.json#completed"
    assert records["sources[1]"].extra_fields["checked_at"] is None
    assert records["sources[0]"].extra_fields["checked_at"] == "2026-01-02"
    assert len({r.memory_id for r in records.values()}) == len(records)
    assert [i.external_id for i in good][3] == "D1"

    assert [i.raw for i in state(path).items()] == [i.raw for i in good]


def test_state_bad_items(tmp_path: Path) -> None:
    doc = {
        "objective": 7,
        "constraints": ["fine", 42, {"source": f"{SECRET}.md"}, "", "fine"],
        "decisions": [
            {"id": "D1", "text": "one"},
            {"id": "D2", "text": f"{SECRET} two"},
            {"id": "D3", "status": "confirmed"},
            {"id": "D1", "text": f"{SECRET} again"},
            {"id": [1], "text": f"{SECRET}"},
        ],
        "completed": [{"text": 5}, {"text": f"{SECRET}", "source": 3}],
        "open_questions": {"text": SECRET},
        "sources": [{"purpose": SECRET}, SECRET, {"path": "a", "checked_at": 20260101}],
    }
    path = write_json(tmp_path / "state.json", doc)
    good, bad = read_all(state(path))
    locations = sorted(item.location for item in good)
    assert locations == ["constraints[0]", "decisions[0]", "decisions[1]"]
    errors = errors_by_location(bad)
    assert errors == {
        "objective": "expected a string, got int",
        "open_questions": "expected a list, got dict",
        "constraints[1]": "expected a string or an object with 'text', got int",
        "constraints[2]": "missing 'text'",
        "constraints[3]": "empty text",
        "constraints[4]": "duplicate item: same as constraints[0] (ids would collide)",
        "decisions[2]": "missing 'text'",
        "decisions[3]": "duplicate decision id 'D1': same as decisions[0] (ids would collide)",
        "decisions[4]": "'id' must be a string, got list",
        "completed[0]": "'text' must be a string, got int",
        "completed[1]": "'source' must be a string, got int",
        "sources[0]": "missing 'path'",
        "sources[1]": "expected an object with 'path' and 'purpose', got a string",
        "sources[2]": "'checked_at' must be a date string or null, got int",
    }
    assert_no_secret(*errors.values(), *errors)


def test_state_whole_file_errors(tmp_path: Path) -> None:
    path = write_json(tmp_path / "state.json", STATE)
    with pytest.raises(InputError, match="--subject"):
        list(state(path, subject=None).items())
    not_object = write_json(tmp_path / "list.json", [STATE])
    with pytest.raises(InputError, match="expected a JSON object"):
        list(state(not_object).items())
    broken = write_json(tmp_path / "broken.json", None, raw='{"objective": ')
    with pytest.raises(InputError, match="invalid JSON at line 1, column 15"):
        list(state(broken).items())
    big = write_json(tmp_path / "big.json", {**STATE, "objective": "x" * 2000})
    with pytest.raises(InputError, match="over the limit of 1,024 bytes"):
        list(state(big, max_source_file_bytes=1024).items())


def test_state_item_over_record_limit(tmp_path: Path) -> None:
    path = write_json(tmp_path / "state.json", {"objective": SECRET * 200, "constraints": ["c"]})
    good, bad = read_all(state(path, max_record_bytes=1024))
    assert [item.location for item in good] == ["constraints[0]"]
    assert errors_by_location(bad) == {"objective": "entry is over the limit of 1,024 bytes"}
