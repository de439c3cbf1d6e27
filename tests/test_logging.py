"""Logs never carry memory text or obvious personal data."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import structlog
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import auditor.logging as logging_module
from auditor.config import load_settings
from auditor.logging import configure_logging, scrub
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.testing import make_record, write_jsonl
from tests.corpora import train_texts

FACTS = [
    "Lives at 221B Baker Street and walks the dog at six",
    "Email is jane.doe@example.com, phone +44 20 7946 0958",
    "주민등록번호 900101-1234568 로 가입함",
    "Card 4111 1111 1111 1111 expires 04/29",
]


@pytest.fixture
def log_stream() -> io.StringIO:
    stream = io.StringIO()
    configure_logging("debug", "json", stream=stream)
    yield stream
    configure_logging("warning", "auto")


def test_import_logs_hold_no_fact_text(log_stream: io.StringIO, tmp_path: Path) -> None:
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 's.db'}"))
    db.upgrade()
    rows = [make_record(memory_id=f"m{i}", fact=f) for i, f in enumerate(FACTS)]
    rows.append("{ not json")
    rows.append(make_record(memory_id="bad", subject="nobody", fact=FACTS[1]))
    Importer(db).run(open_source("jsonl", write_jsonl(tmp_path / "m.jsonl", rows), db.settings))
    output = log_stream.getvalue()
    events = [json.loads(line) for line in output.splitlines()]
    assert {e["event"] for e in events} >= {"import_started", "import_finished"}
    for fact in FACTS:
        for word in fact.split()[:4]:
            if len(word) > 4 and not word.isdigit():
                assert word not in output, word
    for value in ("jane.doe@example.com", "900101-1234568", "4111 1111 1111 1111", "Baker"):
        assert value not in output
    db.dispose()


def test_redaction_of_text_keys_subjects_and_strings(log_stream: io.StringIO) -> None:
    log = structlog.get_logger("t")
    log.info(
        "memory_seen",
        fact="Lives in Busan",
        subject="user:kim",
        note="mail me at kim@example.org or 010-1234-5678",
        nested={"text": "secret words", "ok": 3},
    )
    event = json.loads(log_stream.getvalue())
    assert event["fact"] == "[redacted fact, 14 chars]"
    assert event["subject"].startswith("subject#") and "kim" not in event["subject"]
    assert "kim@example.org" not in event["note"] and "010-1234-5678" not in event["note"]
    assert event["nested"] == {"text": "[redacted text, 12 chars]", "ok": 3}


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        ("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghij"),
        ("postgresql://app:hunter2@db:5432/x", "hunter2"),
        ("password=correcthorse", "correcthorse"),
        ("IBAN DE89370400440532013000", "DE89370400440532013000"),
        ("ssn 078-05-1120", "078-05-1120"),
        ("from 192.168.10.24", "192.168.10.24"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "MIIEow",
        ),
    ],
)
def test_scrub(text: str, leaked: str) -> None:
    assert leaked not in scrub(text)


def test_scrub_keeps_ids_and_counts() -> None:
    assert scrub("imported 1200 records into run 7 for mem_01J8ZK") == (
        "imported 1200 records into run 7 for mem_01J8ZK"
    )


def test_exceptions_are_scrubbed(log_stream: io.StringIO) -> None:
    log = structlog.get_logger("t")
    try:
        raise ValueError("bad value jane.doe@example.com")
    except ValueError:
        log.error("failed", exc_info=True)
    assert "jane.doe@example.com" not in log_stream.getvalue()


# -- linear time on hostile text -----------------------------------------------------------

_HOSTILE = {
    "word run": "a",
    "digit run": "1",
    "spaced digits": "1 ",
    "dotted": "a.",
    "at signs": "a@",
    "slashes": "a/",
    "dashes": "1-",
    "key-like": "password=",
}


def _cost(text: str) -> float:
    import time

    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        scrub(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("unit", sorted(_HOSTILE))
def test_scrub_grows_linearly_on_hostile_runs(unit: str) -> None:
    # four times the text may cost about four times as much; a pattern that rescans the
    # run from every position costs sixteen times as much (measured as a ratio, so a slow
    # machine does not fail it; 20 KB of a quadratic pattern took seconds before)
    piece = _HOSTILE[unit]
    small, large = piece * (25_000 // len(piece)), piece * (100_000 // len(piece))
    ratio = _cost(large) / max(_cost(small), 1e-5)
    assert ratio < 10, f"{unit}: 4x the text cost {ratio:.1f}x"


def test_snippet_of_a_huge_fact_is_scrubbed_only_around_the_span() -> None:
    from auditor.scan.evidence import redacted_snippet

    head = "x" * 200_000
    fact = head + " mail bob.smith@example.org about card 4111 1111 1111 1111 " + "y" * 200_000
    start = fact.index("4111")
    snippet = redacted_snippet(fact, [(start, start + 19, "credit_card")])
    assert "[CREDIT_CARD]" in snippet and "[EMAIL]" in snippet
    assert "bob.smith" not in snippet and "4111" not in snippet
    assert snippet.startswith("…") and snippet.endswith("…") and len(snippet) <= 162


def test_subject_digests_in_logs_are_keyed_when_a_key_is_set() -> None:
    from auditor.hashing import subject_digest

    stream = io.StringIO()
    configure_logging("debug", "json", stream=stream, digest_key=b"k" * 32)
    try:
        structlog.get_logger("t").info("seen", subject="user:4242424")
    finally:
        configure_logging("warning", "auto")
    shown = json.loads(stream.getvalue())["subject"]
    assert shown == "subject#" + subject_digest("user:4242424", b"k" * 32)[:12]
    assert shown != "subject#" + subject_digest("user:4242424")[:12]  # not the unkeyed one


def _scrub_unconditionally(text: str, limit: int | None = None) -> str:
    """:func:`scrub` with every pattern run on every text (what its conditions skip)."""
    if limit is not None:
        text = text[: limit + logging_module._PREFIX_MARGIN]
    text = logging_module._mask_emails(logging_module._mask_keys(text))
    for step in logging_module._PATTERNS:
        text = step.pattern.sub(step.placeholder, text)
    return text if limit is None else text[:limit]


_SCRUB_PIECES = st.sampled_from(
    [
        "a", "Z", " ", "-", ".", "0", "7", "١", "٣", "@", "://", "AKIA", "ASIA", "ghp_", "sk-",
        "xoxb-", "Password", "PASSWORD", "paſſword", "token", "=", ":", "\n", "/", "+", "_",
        "ABCDEFGHIJ", "0123456789", "x.y", "DE89",
    ]
)  # fmt: skip


@hypothesis_settings(max_examples=400, deadline=None)
@given(pieces=st.lists(_SCRUB_PIECES, max_size=40), limit=st.none() | st.integers(1, 60))
def test_scrub_skips_only_patterns_that_cannot_match(pieces: list[str], limit: int | None) -> None:
    text = "".join(pieces)
    assert scrub(text, limit) == _scrub_unconditionally(text, limit)


def test_scrub_equals_the_unconditional_patterns_on_the_corpora() -> None:
    texts = [t.fact for t in train_texts()]
    changed = 0
    for text in texts:
        fast = scrub(text)
        assert fast == _scrub_unconditionally(text), text[:80]
        changed += fast != text
    assert changed > 100  # the corpora exercise the patterns
    shortest = {step.placeholder: step.shortest for step in logging_module._PATTERNS}
    assert shortest["[LONG_TOKEN]"] == 40 and shortest["[IP]"] == 7


def test_without_the_parser_every_text_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortest-match gate reads CPython's private ``re`` parser; should that change,
    no pattern is skipped for length."""
    import re

    def broken(*_: object, **__: object) -> None:
        raise AttributeError("no parser")

    pattern = re.compile(r"\d{13}")
    assert logging_module._shortest_match(pattern) == 13
    monkeypatch.setattr(re._parser, "parse", broken)
    assert logging_module._shortest_match(pattern) == 0
