"""Clean terminals: record data printed by the CLI cannot drive Rich markup or the terminal.

Covers :mod:`auditor.safetext`, :mod:`auditor.cli.terminal`, the CLI's human outputs (JSON and
CSV stay exact), and the ``control_chars`` detector with its rule MA-INJ-015.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.text import Text

from auditor.cli.terminal import SafeConsole, cell, safe_text
from auditor.config import Settings
from auditor.detectors import build
from auditor.detectors.base import DetectContext, MemoryView
from auditor.safetext import clean, one_line
from auditor.testing import make_record, write_jsonl

ESC = "\x1b"
CLEAR = f"{ESC}[2J{ESC}[H"
LINK = f"{ESC}]8;;https://evil.example/x{ESC}\\click{ESC}]8;;{ESC}\\"
TITLE = f"{ESC}]0;pwned\x07"
RLO = "\u202e"
HOSTILE_FACT = f"Prefers tea {CLEAR}{LINK} {TITLE}{ESC}[31mred{ESC}[0m [/nope] [link=https://evil.example]x[/link] acct {RLO}0987654321\u202c"  # noqa: E501


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (f"a{ESC}[2Jb", "ab"),
        (f"a{ESC}[38;5;196mb{ESC}[0m", "ab"),
        (f"a{ESC}]8;;https://x.example\x07link{ESC}]8;;\x07b", "alinkb"),
        (f"a{ESC}]0;title{ESC}\\b", "ab"),
        ("a\x9b2Jb", "ab"),  # the 8-bit CSI form
        (f"a{ESC}b", "a"),  # a lone ESC takes the next character, as a terminal would
        ("line1\r\nline2\rover", "line1\nline2 over"),
        (f"{RLO}0987654321", "0987654321"),
        ("x\u2066y\u2069z\u200e", "xyz"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("bell\x07nul\x00del\x7fc1\x85", "bellnuldelc1"),
        ("plain [text] ünïcode 한국어", "plain [text] ünïcode 한국어"),
    ],
)
def test_clean_removes_sequences_controls_and_bidi(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_clean_of_none_and_non_strings() -> None:
    assert clean(None) == "" and clean(42) == "42"
    assert one_line("a\n\n b\t c", 4) == "a b…"


def test_safe_text_escapes_markup_and_cell_is_never_markup() -> None:
    console = SafeConsole(file=io.StringIO(), force_terminal=True, width=200, highlight=False)
    console.print(f"[bold]id[/] {safe_text('[/nope] [link=https://x.example]y[/link]')}")
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[/nope]" in out and "[link=https://x.example]" in out
    assert f"{ESC}]8;" not in out  # no hyperlink was made
    assert isinstance(cell("[/nope]"), Text) and cell("[/nope]").plain == "[/nope]"
    assert cell("x" * 80, 60).plain == "x" * 57 + "..."


def test_safe_console_cleans_every_printed_string() -> None:
    console = SafeConsole(file=io.StringIO(), force_terminal=False, width=200)
    console.print(HOSTILE_FACT, markup=False)
    console.print(Text(f"x{CLEAR}y"))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert ESC not in out and RLO not in out and "\x07" not in out
    assert "0987654321" in out and "xy" in out


# -- the CLI ------------------------------------------------------------------------------


@pytest.fixture
def cli(run_cli, db_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    def run(*args: str):  # type: ignore[no-untyped-def]
        return run_cli("--database-url", db_url, *args)

    assert run("init").code == 0
    rows = [
        make_record(memory_id="m[/nope]", fact=HOSTILE_FACT, category="pref[/x]"),
        make_record(memory_id="plain", fact="Prefers green tea"),
    ]
    assert run("import", str(write_jsonl(tmp_path / "h.jsonl", rows))).code == 0
    return run


def _assert_inert(text: str) -> None:
    assert ESC not in text and "\x07" not in text and "\x9b" not in text
    assert RLO not in text and "\u202c" not in text
    assert "internal error" not in text


def test_memories_list_table_survives_markup_and_sequences(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli("memories", "list")
    assert r.code == 0, r.err
    _assert_inert(r.out + r.err)
    assert "m[/nope]" in r.out and "pref[/x]" in r.out  # shown literally, no MarkupError


def test_memories_show_prints_no_control_sequences(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli("memories", "show", "m[/nope]")
    assert r.code == 0, r.err
    _assert_inert(r.out + r.err)
    assert "[link=https://evil.example]x[/link]" in r.out  # literal text, not a hyperlink
    assert "0987654321" in r.out and "1234567890" not in r.out  # no RTL reordering


def test_summary_and_findings_tables_are_clean(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = cli("summary")
    assert r.code == 0, r.err
    _assert_inert(r.out)
    assert "pref[/x]" in r.out
    assert cli("scan", "--full").code == 0
    listed = cli("findings", "--status", "all")
    assert listed.code == 0, listed.err
    _assert_inert(listed.out + listed.err)


def test_json_and_csv_outputs_stay_exact(cli) -> None:  # type: ignore[no-untyped-def]
    rows = json.loads(cli("memories", "list", "--format", "json").out)
    assert {m["memory_id"]: m["fact"] for m in rows}["m[/nope]"] == HOSTILE_FACT
    shown = json.loads(cli("memories", "show", "m[/nope]", "--format", "json").out)
    assert shown["memory"]["fact"] == HOSTILE_FACT
    out = cli("memories", "list", "--format", "csv").out
    facts = {row["memory_id"]: row["fact"] for row in csv.DictReader(io.StringIO(out))}
    assert facts["m[/nope]"] == HOSTILE_FACT


# -- the control_chars detector and MA-INJ-015 --------------------------------------------


def _detect(fact: str) -> dict[str, float]:
    ctx = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=Settings())
    view = MemoryView(memory_id="m", subject="user:x", fact=fact, trust_tier="user")
    return {d.entity: d.score for d in build("control_chars", {}).analyze(view, ctx)}


@pytest.mark.parametrize(
    ("fact", "entity", "at_least"),
    [
        (f"tea{CLEAR}", "terminal_escape", 1.0),
        (f"see {LINK}", "terminal_escape", 1.0),
        (f"x{TITLE}", "terminal_escape", 1.0),
        (f"{ESC}[31mred{ESC}[0m", "terminal_escape", 0.9),
        (f"acct {RLO}0987654321", "bidi_override", 0.9),
    ],
)
def test_control_chars_flags_sequences_and_overrides(
    fact: str, entity: str, at_least: float
) -> None:
    assert _detect(fact).get(entity, 0.0) >= at_least


def test_control_chars_leaves_clean_text_and_scores_isolates_low() -> None:
    assert _detect("Writes ESC [2J and [link=x] literally") == {}
    assert _detect("שלום \u2067world\u2069") == {"bidi_override": 0.6}


def test_control_chars_spans_point_at_the_sequences() -> None:
    ctx = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=Settings())
    fact = f"a{CLEAR}b"
    view = MemoryView(memory_id="m", subject="user:x", fact=fact, trust_tier="user")
    (d,) = build("control_chars", {}).analyze(view, ctx)
    assert [fact[s.start : s.end] for s in d.spans] == [f"{ESC}[2J", f"{ESC}[H"]
    assert ESC not in d.reason and "2J" not in json.dumps(dict(d.details))


def test_control_chars_takes_no_params() -> None:
    with pytest.raises(ValueError, match="no params"):
        build("control_chars", {"x": 1})
