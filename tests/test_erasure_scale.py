"""Erasure at scale: one automaton pass instead of one query per value (issue 11, item 6).

The figures are in ``benchmarks/erasure_bench.py``; these tests pin the behaviour that
makes them possible: the matcher finds what the old per-needle rules found, the streaming
pass and the SQL pre-filter find the same rows, and the number of statements a
verification runs does not grow with the number of values searched for.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, select

from auditor.erasure import requests as erasure
from auditor.erasure.values import _pii_batches, _pii_spans
from auditor.lifecycle import audit_log
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, ImportRun, Memory
from auditor.store.residue import Matcher, matching_rows, search_database
from auditor.testing import make_record, write_jsonl

# -- the matcher --------------------------------------------------------------------------


def test_matcher_respects_case_word_boundaries_json_forms_and_exclusions() -> None:
    m = Matcher(["user:ines.duarte", "Wisteria Lane", "Zoë"], exclude=["user:ines.duarte-2"])
    assert m.search("note about USER:INES.DUARTE today")
    assert m.search('{"a": "42 wisteria lane"}')
    assert m.search('{"name": "Zo\\u00eb"}')  # SQLite's JSON escape of the value
    assert not m.search("user:ines.duarte-2 called")  # someone else's identifier
    assert m.search("user:ines.duarte-2 and user:ines.duarte")  # but the subject is there too
    assert not m.search("user:ines.duartes")  # a longer word is not the value
    assert not m.search("Wisteria Lanes")
    assert m.found_needles("wisteria lane, zoë") == {"Wisteria Lane", "Zoë"}


def test_bytes_matches_are_leftmost_longest_and_not_overlapping() -> None:
    m = Matcher(["Alice lives in Paris", "Paris", "alice"])
    data = b"xx ALICE LIVES IN PARIS; paris; malice"
    spans = [(s.start(), s.end()) for s in m.finditer_bytes(data)]
    assert spans == [(3, 23), (25, 30)]  # the long form wins, "malice" is another word


def test_many_needles_match_like_few() -> None:
    needles = [f"filler value {n:05d}" for n in range(3000)] + ["Quarry Hill"]
    big, small = Matcher(needles), Matcher(["Quarry Hill"])
    assert not big.prefilterable and small.prefilterable
    for text in ("moved to quarry hill.", "Quarry Hills", "xQuarry Hill", "", "filler value 1"):
        assert big.search(text) == small.search(text) or "filler" in text


# -- database passes ----------------------------------------------------------------------


def _seed_rows(db: Database, tmp_path: Path) -> None:
    rows = [
        make_record(memory_id="m_hit", subject="user:ana", fact="Ana lives on Quarry Hill"),
        make_record(memory_id="m_case", subject="user:bo", fact="QUARRY HILL is far"),
        make_record(memory_id="m_word", subject="user:cy", fact="Quarry Hills are green"),
        make_record(memory_id="m_none", subject="user:di", fact="nothing to see"),
    ]
    source = open_source("jsonl", write_jsonl(tmp_path / "seed.jsonl", rows), db.settings)
    assert Importer(db).run(source).ok
    with db.write() as s:
        s.add(ImportRun(source_format="jsonl", location="export-quarry hill.jsonl"))


def test_streaming_pass_and_prefilter_find_the_same_rows(db: Database, tmp_path: Path) -> None:
    _seed_rows(db, tmp_path)
    matcher = Matcher(["Quarry Hill"])
    with db.session() as s:
        for col in (Memory.fact, Memory.subject):
            pre = sorted(matching_rows(s, [Memory.memory_id], col, matcher, prefilter=True))
            pas = sorted(matching_rows(s, [Memory.memory_id], col, matcher, prefilter=False))
            assert pre == pas
        found = sorted(k for k, _v in matching_rows(s, [Memory.memory_id], Memory.fact, matcher))
    assert found == [("m_case",), ("m_hit",)]


def test_search_database_reports_the_same_with_many_values(db: Database, tmp_path: Path) -> None:
    _seed_rows(db, tmp_path)
    few = {"v": Matcher(["Quarry Hill"])}
    many = {"v": Matcher(["Quarry Hill", *(f"unrelated {n:05d}" for n in range(500))])}
    with db.engine.connect() as conn:
        a = search_database(conn, few)
        b = search_database(conn, many)
    assert sorted(h.as_dict().items() for h in a.hits) == sorted(
        h.as_dict().items() for h in b.hits
    )
    places = {h.place for h in b.hits}
    assert {"table import_runs.location", "table memories.fact"} <= places or (
        # with encryption at rest memories.fact holds ciphertext only
        "table import_runs.location" in places
    )


@contextmanager
def _statements(db: Database) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(str(args[2])[:60])

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", count)


def test_verification_statements_do_not_grow_with_the_values(db: Database, tmp_path: Path) -> None:
    _seed_rows(db, tmp_path)
    with _statements(db) as few:
        erasure.verify_erasure(db, "user:ana", values=[f"value {n:04d} here" for n in range(40)])
    with _statements(db) as many:
        erasure.verify_erasure(db, "user:ana", values=[f"value {n:04d} here" for n in range(4000)])
    # the old search ran one query per 100 forms per column: ~120 times more here
    assert len(many) <= len(few) + 5, (len(few), len(many))


def test_audit_candidates_for_thousands_of_memory_ids_take_one_pass(db: Database) -> None:
    from auditor.erasure.audit_redaction import AuditScope, _candidates

    with db.write() as s:
        audit_log.append(s, actor="officer", action="x", target_type="memory", target_ids=["m_3"])
    ids = frozenset(f"m_{n}" for n in range(5000))
    scope = AuditScope(
        subject="user:ana",
        digest="d" * 64,
        label="subject#dddd",
        usernames=frozenset(),
        memory_ids=ids,
        id_matcher=Matcher(["user:ana"]),
        matcher=Matcher(["user:ana"]),
    )
    with _statements(db) as seen, db.session() as s:
        seqs = _candidates(s, scope)
        targets = [s.scalar(select(AuditEvent.target_ids).where(AuditEvent.seq == q)) for q in seqs]
    assert targets == [["m_3"]]
    assert len(seen) < 10


# -- PII values in batches ----------------------------------------------------------------


def test_pii_batches_keep_small_subjects_one_fact_per_call() -> None:
    assert _pii_batches(["a", "b"]) == ["a", "b"]
    batched = _pii_batches([f"fact {n}" for n in range(45)])
    assert len(batched) == 3 and batched[0].count("\n\n") == 19


@pytest.mark.slow
def test_pii_values_found_in_batches_equal_those_found_one_by_one(tmp_path: Path) -> None:
    from auditor.config import load_settings

    settings = load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}")
    facts = [
        f"Customer {n} can be reached at person{n}@example.org or +1 415 555 01{n:02d}"
        for n in range(30)
    ] + ["Marie Curie lives at 10 Downing Street, London", "IBAN DE89370400440532013000"]
    single: set[str] = set()
    for fact in facts:
        single |= _pii_spans([fact], settings)[0]
    batched, status = _pii_spans(facts, settings)
    assert status == "ok"
    assert batched == single
