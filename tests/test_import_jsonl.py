"""JSONL import: streaming, idempotent, faithful to the source, loss-free on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from auditor.config import load_settings
from auditor.lifecycle import audit_log
from auditor.lifecycle.machine import Lifecycle
from auditor.sources.files import open_source
from auditor.sources.importer import Importer, ImportReport
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Consent, ImportRun, Memory, Tombstone
from auditor.testing import make_record, write_jsonl


def run_import(db: Database, path: Path, **settings_overrides: object) -> ImportReport:
    settings = (
        db.settings.model_copy(update=settings_overrides) if settings_overrides else db.settings
    )
    target = Database(settings, url=db.url.render_as_string(hide_password=False))
    try:
        return Importer(target).run(open_source("jsonl", path, settings))
    finally:
        target.dispose()


def memories(db: Database) -> dict[str, Memory]:
    with db.session() as s:
        return {m.memory_id: m for m in s.scalars(select(Memory))}


def actions(db: Database) -> list[str]:
    with db.session() as s:
        return [e.action for e in s.scalars(select(AuditEvent).order_by(AuditEvent.seq))]


def test_import_stores_canonical_fields(db: Database, tmp_path: Path) -> None:
    rec = make_record(
        memory_id="a",
        fact="서울에 산다",
        category="identity",
        source={"type": "inferred", "session_id": 7, "turn": 3, "uri": "x://1"},
        created_at="2026-01-02T03:04:05",
        embedding_ref="vec://a",
        custom_field={"k": 1},
        trust_tier="system",
    )
    report = run_import(db, write_jsonl(tmp_path / "m.jsonl", [rec]))
    assert (report.inserted, report.skipped, report.ok) == (1, 0, True)
    m = memories(db)["a"]
    assert m.fact == "서울에 산다" and m.trust_tier == "agent"  # tier from policy, not the record
    assert m.source_session_id == "7" and m.source_turn == 3 and m.source_uri == "x://1"
    assert m.created_at.tzinfo is not None and m.created_at.hour == 3  # naive read as UTC
    assert m.extra == {"custom_field": {"k": 1}, "claimed_trust_tier": "system"}
    assert m.origin == "jsonl" and m.import_run_id == report.run_id
    assert actions(db) == ["memory.imported", "import.finished"]


def test_reimport_is_idempotent(db: Database, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [make_record(memory_id=f"m{i}") for i in range(5)])
    first = run_import(db, path)
    before = {k: (m.version, m.record_hash) for k, m in memories(db).items()}
    second = run_import(db, path)
    assert (first.inserted, second.inserted, second.updated, second.unchanged) == (5, 0, 0, 5)
    assert {k: (m.version, m.record_hash) for k, m in memories(db).items()} == before
    assert actions(db) == ["memory.imported", "import.finished", "import.finished"]


def test_changed_record_updates_with_new_hash_and_event(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    a, b = make_record(memory_id="a", fact="uses pnpm"), make_record(memory_id="b")
    write_jsonl(path, [a, b])
    run_import(db, path)
    old = memories(db)["a"]
    write_jsonl(path, [{**a, "fact": "uses npm"}, b])
    report = run_import(db, path)
    new = memories(db)["a"]
    assert (report.updated, report.unchanged) == (1, 1)
    assert new.content_hash != old.content_hash and new.version == old.version + 1
    with db.session() as s:
        ev = s.scalars(select(AuditEvent).where(AuditEvent.action == "memory.updated")).one()
    assert ev.target_ids == ["a"]
    assert ev.details["changed_fields"] == ["fact"] and ev.details["content_changed"] is True
    assert "npm" not in json.dumps(ev.details)


BAD_LINES: list[tuple[str, bytes | str | dict[str, object]]] = [
    ("invalid JSON", '{"memory_id": "x1", "subject": '),
    ("missing required field 'fact'", {"memory_id": "x2", "subject": "user:a"}),
    ("missing required field 'memory_id'", {"subject": "user:a", "fact": "f"}),
    ("field 'created_at'", make_record(memory_id="x3", created_at="31/12/2026")),
    ("invalid UTF-8", b'{"memory_id": "x4", "subject": "user:a", "fact": "caf\xe9"}'),
    ("NUL byte", make_record(memory_id="x5", fact="hidden\u0000payload")),
    ("expected a JSON object, got list", "[1, 2, 3]"),
    (
        "not a JSON number",
        '{"memory_id": "x6", "subject": "user:a", "fact": "f", "confidence": NaN}',
    ),
    ("field 'confidence'", make_record(memory_id="x7", confidence=1.5)),
    ("field 'kind'", make_record(memory_id="x8", kind="gossip")),
    ("field 'subject'", make_record(memory_id="x9", subject="alice")),
    ("field 'status'", make_record(memory_id="x10", status="gone")),
]


def test_mixed_bad_file_keeps_good_records_and_names_lines(db: Database, tmp_path: Path) -> None:
    Lifecycle(db).add(make_record(memory_id="pre", fact="already stored"), actor="t")
    lines: list[bytes | str | dict[str, object]] = [make_record(memory_id="good1")]
    lines += [line for _reason, line in BAD_LINES]
    lines += ["", make_record(memory_id="good2")]
    report = run_import(db, write_jsonl(tmp_path / "mixed.jsonl", lines))
    assert report.inserted == 2 and report.skipped == len(BAD_LINES) and not report.ok
    for n, (reason, _line) in enumerate(BAD_LINES, start=2):
        matching = [e for e in report.errors if e.startswith(f"line {n}:")]
        assert matching and reason in matching[0], (n, reason, report.errors)
    stored = memories(db)
    assert set(stored) == {"pre", "good1", "good2"}
    assert stored["pre"].fact == "already stored" and stored["pre"].version == 1
    assert not any("payload" in e or "café" in e for e in report.errors)
    with db.session() as s:
        run = s.get(ImportRun, report.run_id)
        assert run is not None and run.status == "completed_with_errors"
        assert run.counts["skipped"] == len(BAD_LINES)


def test_huge_line_is_skipped_without_loading_it(db: Database, tmp_path: Path) -> None:
    big = make_record(memory_id="big", fact="x" * (10 * 1024 * 1024))
    path = write_jsonl(
        tmp_path / "big.jsonl", [make_record(memory_id="ok1"), big, make_record(memory_id="ok2")]
    )
    report = run_import(db, path)
    assert report.inserted == 2 and report.skipped == 1
    assert report.errors[0].startswith("line 2: record is over the limit of 1,048,576 bytes")


def test_fact_over_fact_limit_but_under_line_limit(db: Database, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "f.jsonl", [make_record(memory_id="f", fact="y" * 300_000)])
    report = run_import(db, path)
    assert report.skipped == 1 and "over the limit of 262,144" in report.errors[0]


def test_duplicate_ids_in_one_file_are_reported(db: Database, tmp_path: Path) -> None:
    rows = [
        make_record(memory_id="d", fact="first"),
        make_record(memory_id="e"),
        make_record(memory_id="d", fact="second"),
    ]
    report = run_import(db, write_jsonl(tmp_path / "d.jsonl", rows))
    assert report.skipped == 1 and "duplicate memory_id, first given at line 1" in report.errors[0]
    assert memories(db)["d"].fact == "first"


def test_duplicate_ids_across_batches_are_reported(db: Database, tmp_path: Path) -> None:
    rows = [
        make_record(memory_id="d", fact="first"),
        make_record(memory_id="e"),
        make_record(memory_id="d", fact="second"),
    ]
    report = run_import(db, write_jsonl(tmp_path / "d.jsonl", rows), import_batch_size=1)
    assert report.skipped == 1 and "given earlier in this import" in report.errors[0]
    assert memories(db)["d"].fact == "first"


def test_store_problems_are_mirrored_not_repaired(db: Database, tmp_path: Path) -> None:
    rows = [
        make_record(memory_id="dangling", supersedes="ghost"),
        make_record(memory_id="cyc1", supersedes="cyc2"),
        make_record(memory_id="cyc2", supersedes="cyc1"),
        make_record(memory_id="root"),
        make_record(memory_id="fork1", supersedes="root"),
        make_record(memory_id="fork2", supersedes="root"),
        make_record(memory_id="high", source={"type": "explicit_statement"}),
        make_record(memory_id="low", supersedes="high", source={"type": "external_content"}),
        make_record(memory_id="stale", expires_at="2020-01-01T00:00:00Z"),
        make_record(memory_id="said-active", status="active"),
        make_record(memory_id="claims", supersedes="said-active"),
        make_record(memory_id="nosource", source=None),
    ]
    report = run_import(db, write_jsonl(tmp_path / "p.jsonl", rows))
    assert report.ok and report.inserted == len(rows)
    m = memories(db)
    assert m["dangling"].supersedes == "ghost" and m["dangling"].status == "active"
    assert (m["cyc1"].status, m["cyc2"].status) == ("superseded", "superseded")
    assert m["root"].status == "superseded"
    assert (m["fork1"].status, m["fork2"].status) == ("active", "active")
    assert (m["high"].status, m["low"].trust_tier) == ("superseded", "external")
    assert m["stale"].status == "active" and m["stale"].expires_at is not None
    assert m["said-active"].status == "active"  # stated status kept; the audit reports it
    assert m["nosource"].source_type is None and m["nosource"].trust_tier == "external"
    assert report.derived_superseded == 4


def test_chain_status_derived_regardless_of_order_and_batches(db: Database, tmp_path: Path) -> None:
    rows = (
        [make_record(memory_id="new", supersedes="old")]
        + [make_record(memory_id=f"pad{i}") for i in range(5)]
        + [make_record(memory_id="old")]
    )
    run_import(db, write_jsonl(tmp_path / "o.jsonl", rows), import_batch_size=2)
    assert memories(db)["old"].status == "superseded"
    # the source later drops the link: the derived status follows
    rows[0] = make_record(memory_id="new")
    report = run_import(db, write_jsonl(tmp_path / "o.jsonl", rows), import_batch_size=2)
    assert report.derived_active == 1 and memories(db)["old"].status == "active"


def test_reviewed_status_survives_reimport(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_jsonl(path, [make_record(memory_id="q", fact="v1")])
    run_import(db, path)
    Lifecycle(db).quarantine("q", actor="officer", reason="injection")
    write_jsonl(path, [make_record(memory_id="q", fact="v2", status="active")])
    run_import(db, path)
    m = memories(db)["q"]
    assert (m.fact, m.status) == ("v2", "quarantined")
    with db.session() as s:
        ev = s.scalars(select(AuditEvent).where(AuditEvent.action == "memory.updated")).one()
    assert ev.details["kept_reviewed_status"] == "quarantined"


def test_erased_memory_is_not_reimported(db: Database, tmp_path: Path) -> None:
    with db.write() as s:
        s.add(Tombstone(memory_id="erased", subject_digest="0" * 64))
    report = run_import(db, write_jsonl(tmp_path / "e.jsonl", [make_record(memory_id="erased")]))
    assert report.skipped == 1 and "was erased" in report.errors[0]
    assert "erased" not in memories(db)


def test_consents_are_imported_once(db: Database, tmp_path: Path) -> None:
    consent = {"category": "health", "granted_at": "2026-01-01T00:00:00Z", "source": "settings"}
    path = write_jsonl(tmp_path / "c.jsonl", [make_record(memory_id="h", consents=[consent])])
    assert run_import(db, path).consents_added == 1
    assert run_import(db, path).consents_added == 0
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Consent)) == 1


def test_import_keeps_audit_chain_valid(db: Database, tmp_path: Path) -> None:
    rows = [make_record(memory_id=f"m{i}") for i in range(2500)]
    run_import(db, write_jsonl(tmp_path / "big.jsonl", rows))
    with db.session() as s:
        result = audit_log.verify(s)
        assert result.ok
        # 2,500 new records in batches of 1,000: three import events and the summary
        assert result.checked == 4


def test_missing_file_and_wrong_format_are_clear(db: Database, tmp_path: Path) -> None:
    from auditor.errors import InputError

    with pytest.raises(InputError, match="no such file"):
        open_source("jsonl", tmp_path / "nope.jsonl", db.settings)
    with pytest.raises(InputError, match="not a file"):
        list(open_source("jsonl", tmp_path, db.settings).items())
    with pytest.raises(InputError, match="unknown import format"):
        open_source("xml", tmp_path, db.settings)


@pytest.mark.slow
def test_import_memory_is_bounded(tmp_path: Path) -> None:
    """Peak Python memory does not grow with the number of records (streaming)."""
    import tracemalloc

    def peak(n: int) -> int:
        db = Database(load_settings(database_url=f"sqlite:///{tmp_path / f's{n}.db'}"))
        db.upgrade()
        path = write_jsonl(
            tmp_path / f"{n}.jsonl",
            (make_record(memory_id=f"m{i}", fact=f"fact number {i} " * 4) for i in range(n)),
        )
        tracemalloc.start()
        Importer(db).run(open_source("jsonl", path, db.settings))
        _cur, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        db.dispose()
        return top

    small, large = peak(4000), peak(24000)
    assert large < small * 1.5, (small, large)


def test_unknown_consent_category_is_refused(db: Database, tmp_path: Path) -> None:
    consent = {"category": "healthcare", "granted_at": "2026-01-01T00:00:00Z"}
    path = write_jsonl(tmp_path / "c.jsonl", [make_record(memory_id="h", consents=[consent])])
    report = run_import(db, path)
    assert report.skipped == 1 and "consents.0.category" in report.errors[0]
    assert "must be a special category" in report.errors[0]
