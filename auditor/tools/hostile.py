"""Hostile text: the adversarial inputs and the pattern-running code they are fed to.

Shared by the linear-time test (``tests/test_hostile_text.py``) and the benchmark
(``benchmarks/hostile_text_bench.py``). :data:`UNITS` are short pieces that, repeated to
the largest allowed fact, make a backtracking pattern rescan a run from every position:
runs of word characters, digits, ``@``, dots, blanks, repeated delimiters and the prefixes of
what the patterns look for (key headers, ``password=``, ``USING x(``, escape introducers).
:func:`targets` names every place outside ``auditor/detectors/`` where memaudit runs a
pattern over memory text, notes, reasons, record fields or log values (the detectors'
own patterns are measured by their own benchmark), each as a function of one text.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

__all__ = ["UNITS", "hostile", "targets"]

#: repeated to the wanted size; each defeats some naive pattern
UNITS: dict[str, str] = {
    "word run": "a",
    "digit run": "1",
    "at signs": "@",
    "dots": ".",
    "blanks": " ",
    "word-at": "a@",
    "word-dot": "a.",
    "digit-dot": "1.",
    "spaced digits": "1 ",
    "dashed digits": "1-",
    "slashes": "a/",
    "local@domain.": "x@a.",
    "phone-ish": "+1(",
    "url creds": "a://b:",
    "iban-ish": "DE12 ",
    "key-like": "password=",
    "token prefix": "ghp_",
    "key header": "-----BEGIN PRIVATE KEY-----",
    "quotes": "'a",
    "content option": ",content=",
    "using clause": "USING a(",
    "csi": "\x1b[",
    "osc": "\x1b]8;;",
    "bidi": "\u202e1",
    "newlines": "---\n",
}


def hostile(unit: str, size: int) -> str:
    """``UNITS[unit]`` repeated to ``size`` characters."""
    piece = UNITS[unit]
    return (piece * (size // len(piece) + 1))[:size]


def _record(text: str) -> Any:
    from auditor.config import Settings
    from auditor.errors import RecordError
    from auditor.records import parse_record

    raw = {
        "memory_id": "m1",
        "subject": "user:hostile",
        "fact": text,
        "source": {"type": "import", "session_id": text[:256], "uri": text[:4096]},
    }
    try:
        return parse_record(raw, "hostile", Settings())
    except RecordError as exc:
        return exc


def targets() -> dict[str, Callable[[str], object]]:
    """Every pattern-running function outside the detectors, by a descriptive name."""
    from auditor.config import Settings
    from auditor.detectors import build
    from auditor.detectors.base import DetectContext, MemoryView
    from auditor.hashing import content_hash
    from auditor.judge.llm import fence
    from auditor.logging import _PATTERNS, redact, scrub
    from auditor.safetext import clean, one_line
    from auditor.scan.evidence import redacted_snippet
    from auditor.sources.files import memoryfield
    from auditor.sources.live import _memoryfield_index as mf_index
    from auditor.sources.live import mem0_owners

    ctx = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=Settings())
    control = build("control_chars", {})

    def detect(text: str) -> object:
        view = MemoryView(memory_id="m", subject="user:x", fact=text, trust_tier="user")
        return control.analyze(view, ctx)

    def snippet(text: str) -> object:
        mid = len(text) // 2
        return redacted_snippet(text, [(mid, mid + 10, "X")], mask_own=False)

    found: dict[str, Callable[[str], object]] = {
        "logging.scrub": scrub,
        "logging.scrub(limit=500)": lambda t: scrub(t, limit=500),
        "logging.redact (log event)": lambda t: redact(None, "info", {"event": t, "note": t}),
        "safetext.clean": clean,
        "safetext.one_line": one_line,
        "evidence.redacted_snippet": snippet,
        "records.parse_record": _record,
        "hashing.content_hash": content_hash,
        "judge.fence": lambda t: fence("A", t, meta={"source": t}),
        "detectors.control_chars": detect,
        "memoryfield_index._module": lambda t: mf_index._module("CREATE TABLE t USING fts5" + t),
        "memoryfield_index._content_option": mf_index._content_option,
        "mem0_owners.names_subject": lambda t: mem0_owners.names_subject(t, "bob"),
        "memoryfield._LONG_QUOTED": lambda t: memoryfield._LONG_QUOTED.sub("'…'", t),
        "memoryfield._CLOSE": lambda t: memoryfield._CLOSE.search(t),
    }
    for i, step in enumerate(_PATTERNS):
        found[f"logging pattern {i}: {step.pattern.pattern[:32]}"] = partial(step.pattern.sub, "")
    return found
