"""Rule loading: malformed rules are refused with file:line; rules test themselves."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.rulepack.engine import run_rule_tests
from auditor.rulepack.pack import RuleError, load_pack

GOOD = """
id: MA-TST-010
title: Keyword rule
status: test
description: a test rule
category: injection
severity: medium
detector: keyword
params: {terms: [evil]}
tests:
  flag: ["an evil plan"]
  pass: ["a good plan"]
  known_miss: ["an 3vil plan"]
"""


def pack_with(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(parents=True)
    for name, body in files.items():
        (folder / name).write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return folder


def test_good_pack_loads_and_self_tests(tmp_path: Path) -> None:
    pack = load_pack(pack_with(tmp_path, {"ma-tst-010-kw.yaml": GOOD}))
    assert [r.id for r in pack.rules] == ["MA-TST-010"] and len(pack.sha256) == 64
    results = run_rule_tests(pack, load_settings())
    assert [(r.kind, r.ok, r.caught) for r in results] == [
        ("flag", True, True),
        ("pass", True, False),
        ("known_miss", True, False),
    ]


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        (GOOD.replace("severity: medium", "severity: huge"), 6, "severity"),
        (GOOD.replace("detector: keyword", "detector: magic"), 7, "unknown detector"),
        (GOOD.replace("id: MA-TST-010", "id: rule-10"), 1, "must look like MA-"),
        (GOOD.replace("title: Keyword rule\n", ""), 1, "title: Field required"),
        (GOOD + "extra_key: 1\n", 13, "extra_key"),
        (GOOD.replace("params: {terms: [evil]}", "params: {terms: [evil]"), 9, "invalid YAML"),
        (GOOD + "---\n" + GOOD, 15, "exactly one rule"),
        (GOOD.replace('  flag: ["an evil plan"]\n', "  flag: []\n"), 1, "tests.flag"),
    ],
)
def test_malformed_rule_names_file_and_line(
    tmp_path: Path, body: str, line: int, message: str
) -> None:
    folder = pack_with(tmp_path, {"ma-tst-010-kw.yaml": body})
    with pytest.raises(RuleError) as info:
        load_pack(folder)
    assert str(info.value).startswith(f"ma-tst-010-kw.yaml:{line}:"), str(info.value)
    assert message in str(info.value)


def test_duplicate_and_retired_ids_and_file_names(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="also used by"):
        load_pack(pack_with(tmp_path / "a", {"ma-tst-010-a.yaml": GOOD, "ma-tst-010-b.yaml": GOOD}))
    folder = pack_with(tmp_path / "b", {"ma-tst-010-a.yaml": GOOD})
    (folder / "RETIRED_IDS").write_text("MA-TST-010  # replaced\n")
    with pytest.raises(RuleError, match="retired"):
        load_pack(folder)
    with pytest.raises(RuleError, match="file name must start with the rule id"):
        load_pack(pack_with(tmp_path / "c", {"keyword.yaml": GOOD}))


def test_bad_params_are_reported_by_lint(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = pack_with(
        tmp_path, {"ma-tst-010-kw.yaml": GOOD.replace("{terms: [evil]}", "{terms: []}")}
    )
    r = run_cli("rules", "lint", "--rules", str(folder))
    assert r.code == 2 and "ma-tst-010-kw.yaml:1: params: params.terms" in r.err


def test_rules_commands(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = pack_with(tmp_path, {"ma-tst-010-kw.yaml": GOOD})
    assert "1 rules OK" in run_cli("rules", "lint", "--rules", str(folder)).out
    listed = run_cli("rules", "list", "--rules", str(folder), "--format", "json")
    assert '"MA-TST-010"' in listed.out
    ok = run_cli("rules", "test", "--rules", str(folder))
    assert ok.code == 0 and "2 passed, 0 failed (1 known misses recorded)" in ok.out
    broken = GOOD.replace('flag: ["an evil plan"]', 'flag: ["a fine plan"]')
    (folder / "ma-tst-010-kw.yaml").write_text(textwrap.dedent(broken).lstrip())
    bad = run_cli("rules", "test", "--rules", str(folder))
    assert bad.code == 1 and "FAIL MA-TST-010 flag[0] did not fire" in bad.out


def test_max_score_leaves_strong_hits_to_another_rule(tmp_path: Path) -> None:
    soft = GOOD.replace("params: {terms: [evil]}", "params: {terms: [evil], score: 0.9}")
    soft = soft.replace("tests:", "match: {min_score: 0.5, max_score: 0.8}\ntests:")
    (folder := pack_with(tmp_path, {"ma-tst-010-kw.yaml": soft}))
    rule = load_pack(folder, lint=False).rules[0]
    assert rule.selects("keyword", 0.6) and not rule.selects("keyword", 0.8)
    assert not rule.selects("keyword", 0.4)
