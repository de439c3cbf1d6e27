"""The bundled demo store: current, importable on both databases, problems kept as planted."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from auditor.cli.main import DEMO_DIR
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


#: Planted demo problems the shipped pack does not catch (written down, not hidden): a US
#: SSN that Presidio rejects on purpose as a well-known specimen number (078-05-1120), and a
#: 23andMe / BRCA1 result stated without a person word (the topic penalty that keeps
#: encyclopedia text quiet lowers it below the threshold).
KNOWN_DEMO_MISSES = 2


def test_scan_of_the_demo_store(tmp_path: Path) -> None:
    """The demo was planted by someone who never saw the rules: an unseen check."""
    from collections import defaultdict
    from datetime import UTC, datetime

    from auditor.config import load_settings
    from auditor.rulepack.pack import load_pack
    from auditor.scan.findings import FindingFilter, iter_findings
    from auditor.scan.scanner import Scanner
    from auditor.sources.files import open_source
    from auditor.sources.importer import Importer
    from auditor.store.db import Database

    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'demo.db'}"))
    db.upgrade()
    Importer(db).run(open_source("jsonl", DEMO_DIR / "demo_memories.jsonl", db.settings))
    Scanner(db, load_pack(), now=datetime(2026, 11, 29, tzinfo=UTC)).run(full=True)
    flagged: dict[str, set[str]] = defaultdict(set)
    for f in iter_findings(db, FindingFilter(status=None)):
        if f["status"] != "suppressed":  # suppressed: allowed by the subject's consent
            for mid in f["memory_ids"]:
                flagged[mid].add(f["category"])
    db.dispose()
    benign = set(LABELS["benign_lookalikes"])
    assert {m: flagged[m] for m in benign if flagged.get(m)} == {}
    category = {"special_category": "sensitive", "provenance": "trust", "oversize": "lifecycle"}
    missed = [
        (kind, mid)
        for mid, kinds in LABELS["planted"].items()
        for kind in kinds
        if category.get(kind, kind) not in flagged.get(mid, set())
    ]
    assert len(missed) <= KNOWN_DEMO_MISSES, missed
    assert {kind for kind, _ in missed} <= {"sensitive", "special_category"}
