"""``memaudit rules``: list, lint and self-test the rule pack.

Registered by :mod:`auditor.cli.main`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.cli.context import (
    Ctx,
    emit_rows,
    listing_format,
    load_rule_pack,
    pass_ctx,
    rules_option,
)
from auditor.exitcodes import ExitCode

__all__ = ["rules_group"]


@click.group("rules")
def rules_group() -> None:
    """The rule pack: list, lint and self-test the rules."""


@rules_group.command("list")
@rules_option
@listing_format
@pass_ctx
def rules_list(c: Ctx, rules_dir: Path | None, fmt: str) -> None:
    """List the rules of the pack."""
    from auditor.rulepack.pack import rule_summary

    pack = load_rule_pack(c, rules_dir)
    rows = (dict(rule_summary(r)) for r in pack.rules)
    emit_rows(rows, fmt, ["id", "status", "category", "severity", "detector", "action", "title"])


@rules_group.command("lint")
@rules_option
@pass_ctx
def rules_lint(c: Ctx, rules_dir: Path | None) -> None:
    """Validate every rule (schema, ids, file names, detector params); exit 2 on a problem."""
    from auditor.rulepack.pack import RuleError

    pack = load_rule_pack(c, rules_dir)
    from auditor.rulepack.engine import Engine

    for rule in pack.rules:
        try:
            Engine([rule]).load()  # builds the detector: that checks the params
        except (ValueError, TypeError, KeyError) as exc:
            raise RuleError(f"{rule.where}: params: {exc}") from None
    click.echo(f"{len(pack.rules)} rules OK in {pack.root} (pack sha256 {pack.sha256[:16]})")


@rules_group.command("test")
@rules_option
@click.argument("rule_ids", nargs=-1)
@pass_ctx
def rules_test(c: Ctx, rules_dir: Path | None, rule_ids: tuple[str, ...]) -> None:
    """Run the rules' own flag / pass / known_miss cases (exit 1 if one fails)."""
    from auditor.rulepack.engine import run_rule_tests

    pack = load_rule_pack(c, rules_dir)
    results = run_rule_tests(pack, c.settings, list(rule_ids) or None)
    failed = [r for r in results if not r.ok]
    misses = [r for r in results if r.kind == "known_miss"]
    for r in failed:
        verb = "did not fire" if r.kind == "flag" else "fired"
        extra = f" ({r.note})" if r.note else ""
        click.echo(f"FAIL {r.rule_id} {r.kind}[{r.index}] {verb}{extra}  [{r.where}]")
    for r in misses:
        if r.caught:
            click.echo(f"note {r.rule_id} known_miss[{r.index}] is now caught: promote it")
    passed = sum(1 for r in results if r.ok and r.kind != "known_miss")
    click.echo(f"{passed} passed, {len(failed)} failed ({len(misses)} known misses recorded)")
    if failed:
        sys.exit(ExitCode.CHECK_FAILED)
