"""The shipped rule pack: it loads, lints, and every rule passes its own test cases."""

from __future__ import annotations

import pytest

from auditor.config import load_settings
from auditor.rulepack.engine import Engine, run_rule_tests
from auditor.rulepack.pack import load_pack

PACK = load_pack()
SETTINGS = load_settings()


def test_pack_loads_and_every_rule_builds() -> None:
    assert PACK.rules, "the shipped pack has no rules"
    for rule in PACK.rules:
        Engine([rule])  # detector params are valid


@pytest.mark.parametrize("rule", PACK.rules, ids=[r.id for r in PACK.rules])
def test_rule_passes_its_own_cases(rule) -> None:  # type: ignore[no-untyped-def]
    results = run_rule_tests(PACK, SETTINGS, [rule.id])
    failed = [r for r in results if not r.ok]
    assert not failed, [(r.kind, r.index, r.note) for r in failed]
    assert any(r.kind == "flag" for r in results)
