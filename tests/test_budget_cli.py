"""``memaudit budget`` over a store: the sweep, cap reporting and bad input."""

from __future__ import annotations

import json
from pathlib import Path

from auditor.testing import make_record, write_jsonl


def test_budget_command(run_cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli = lambda *a: run_cli("--database-url", db_url, *a)  # noqa: E731
    cli("init")
    rows = [
        make_record(
            memory_id=f"m{i}",
            subject="user:b",
            fact=f"always run the linter before commit {i % 3}",
            created_at=f"2026-01-{i + 1:02d}T00:00:00Z",
            category="correction",
        )
        for i in range(9)
    ]
    rows += [
        make_record(
            memory_id=f"x{i}",
            subject="user:b",
            fact=f"distinct rule number {w}",
            category="pattern",
        )
        for i, w in enumerate(["alpha", "beta", "gamma"])
    ]
    cli("import", str(write_jsonl(tmp_path / "b.jsonl", rows)))
    table = cli("budget", "--subject", "user:b", "--cap", "correction:2:", "--cap", "*:1:80")
    assert table.code == 0, table.err
    assert "recall@budget: 12 items" in table.out and "items cap fired" in table.out
    data = json.loads(cli("budget", "--subject", "user:b", "--json").out)
    assert data["items"] == 12
    assert [c["name"] for c in data["curves"]] == ["recency", "frequency", "dedup"]
    assert cli("budget", "--subject", "user:nobody").code == 2
    bad = cli("budget", "--cap", "nonsense")
    assert bad.code == 2 and "SECTION:ITEMS:CHARS" in bad.err
