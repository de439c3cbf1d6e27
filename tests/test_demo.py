"""The bundled demo store: current, importable on both databases, problems kept as planted."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from auditor.cli import DEMO_DIR
from auditor.demo.generate import generate, validate
from auditor.store.models import Memory

LABELS = json.loads((DEMO_DIR / "labels.json").read_text(encoding="utf-8"))


def test_committed_demo_matches_the_generator(tmp_path: Path) -> None:
    assert validate(DEMO_DIR) == []
    generate(tmp_path)
    for name in ("demo_memories.jsonl", "labels.json", "state.json"):
        assert (tmp_path / name).read_bytes() == (DEMO_DIR / name).read_bytes(), name


def test_demo_loads_cleanly_and_keeps_planted_problems(run_cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("--database-url", db_url, "init", "--demo")
    assert r.code == 0, r.err
    assert "407 new" in r.out and "0 skipped" in r.out and "(memoryfield)" in r.out
    again = run_cli("--database-url", db_url, "init", "--demo")
    assert again.code == 0 and "demo not loaded" in again.err
    summary = json.loads(run_cli("--database-url", db_url, "summary", "--format", "json").out)
    assert summary["memories"] == 407 + 5 + 23
    from auditor.config import load_settings
    from auditor.store.db import Database

    db = Database(load_settings(database_url=db_url))
    with db.session() as s:
        stored = {m.memory_id: m for m in s.scalars(select(Memory))}
    db.dispose()
    ghosts = set(LABELS["ghost_ids"])
    dangling = [m for m in stored.values() if m.supersedes in ghosts]
    assert len(dangling) == len(ghosts)  # dangling links mirrored, not dropped
    for mid in LABELS["planted"]:
        assert mid in stored
    tiers = {stored[mid].trust_tier for mid, kinds in LABELS["planted"].items() if "trust" in kinds}
    assert "external" in tiers
