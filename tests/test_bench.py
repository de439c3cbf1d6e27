"""``memaudit bench``: the realistic corpus (train split only, deterministic, long-tailed
subjects), the engine's timing hooks, and the figures the bench reports."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.hashing import content_hash
from auditor.records import parse_record
from auditor.rulepack.engine import Engine, Hit
from auditor.rulepack.pack import load_pack
from auditor.tools.bench import OUTSIDE, as_dict, profile_rows, render, run_bench
from auditor.tools.realistic import (
    CorporaMissing,
    corpora_roots,
    realistic_records,
    subject_sizes,
    train_pool,
)
from auditor.tools.splits import split_of_corpus
from auditor.tools.synthetic import synthetic_records

_TAG = re.compile(r" \[[a-z]+\]$")
_TOPICS = [
    "prefers tea over coffee in the morning",
    "the build log shows 3 warnings and no errors",
    "서울에서 열리는 회의에 참석할 예정",
    "config: retries=3, timeout=30s, region=eu-west",
    "asked for a summary of the quarterly report",
]


def _corpus(folder: Path, prefix: str, n: int, source: str) -> None:
    folder.mkdir(parents=True)
    with (folder / "memories.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            rec = {
                "memory_id": f"{prefix}_{i}",
                "subject": f"user:{prefix}-u{i // 20}",
                "namespace": folder.name,
                "kind": "note" if source != "explicit_statement" else "semantic",
                "category": "note",
                # the id is in the text, so a drawn text names the memory it came from
                "fact": f"item {prefix}_{i}: {_TOPICS[i % len(_TOPICS)]}",
                "source": {"type": source, "uri": None},
                "created_at": "2026-01-03T08:00:00Z",
            }
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    (folder / "labels.json").write_text(json.dumps({"memory_labels": {}}), encoding="utf-8")


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A small fake ``shared/`` tree: two eval corpora and one train corpus."""
    root = tmp_path / "shared"
    _corpus(root / "eval" / "fake-chat", "fkc", 60, "explicit_statement")
    _corpus(root / "eval" / "fake-tools", "fkt", 50, "tool_output")
    _corpus(root / "train" / "fake-web", "fkw", 40, "external_content")
    return root


def _source_id(fact: str) -> str:
    return _TAG.sub("", fact).split(":", 1)[0].removeprefix("item ")


def _splits(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for sub in ("eval", "train"):
        for folder in (root / sub).iterdir():
            out.update(split_of_corpus(folder)[0])
    return out


def test_realistic_corpus_draws_only_train_split_memories(shared: Path) -> None:
    splits = _splits(shared)
    assert set(splits.values()) == {"train", "dev", "test"}  # the fake tree has all three
    train = {mid for mid, s in splits.items() if s == "train"}
    records = list(realistic_records(400, root=shared))
    drawn = {_source_id(r["fact"]) for r in records}
    assert drawn <= train
    assert drawn == train  # 400 draws over a pool of ~90: every train text is used
    assert {p.memory_id for p in train_pool(corpora_roots(shared))} == train


def test_realistic_corpus_is_deterministic_and_varied(shared: Path) -> None:
    first = list(realistic_records(300, seed=5, root=shared))
    assert first == list(realistic_records(300, seed=5, root=shared))
    assert first != list(realistic_records(300, seed=6, root=shared))
    assert len({r["memory_id"] for r in first}) == 300
    # replicas carry a tag, so no two memories share a content hash (detector caches)
    assert len({content_hash(r["fact"]) for r in first}) == 300
    # the original record's source type decides the tier: it is kept
    by_prefix = {r["fact"].split("_")[0]: r["source"]["type"] for r in first}
    assert by_prefix == {
        "item fkc": "explicit_statement",
        "item fkt": "tool_output",
        "item fkw": "external_content",
    }
    settings = load_settings()
    for rec in first[:20]:
        parse_record(rec, "test", settings)  # valid canonical records


def test_subject_sizes_are_long_tailed() -> None:
    import random

    sizes = subject_sizes(20_000, random.Random(7))
    assert sum(sizes) == 20_000
    ordered = sorted(sizes)
    median = ordered[len(ordered) // 2]
    assert ordered[0] <= 3
    assert ordered[-1] >= 20 * median  # a few large subjects beside many small ones
    assert ordered[-1] <= 1000  # capped at n // 20
    counts = Counter(r["subject"] for r in realistic_records(2_000, pool=_tiny_pool()))
    assert max(counts.values()) > 5 * sorted(counts.values())[len(counts) // 2]


def _tiny_pool() -> list:  # type: ignore[type-arg]
    from auditor.tools.realistic import PoolText

    return [
        PoolText("c", f"c_{i}", t, "explicit_statement", "semantic", "note", None)
        for i, t in enumerate(_TOPICS)
    ]


def test_missing_corpora_are_named(tmp_path: Path) -> None:
    with pytest.raises(CorporaMissing, match=str(tmp_path / "nowhere")):
        corpora_roots(tmp_path / "nowhere")
    with pytest.raises(CorporaMissing, match="MEMAUDIT_CORPORA_DIR"):
        list(realistic_records(10, root=tmp_path))


def test_env_var_points_at_the_corpora(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMAUDIT_CORPORA_DIR", str(shared))
    assert corpora_roots() == [shared / "eval", shared / "train"]


def _hits(hits: list[Hit]) -> list[tuple[str, tuple[str, ...], str, tuple[object, ...]]]:
    return sorted(
        (h.rule.id, h.detection.memory_ids, h.detection.entity, h.detection.spans) for h in hits
    )


def test_engine_profile_is_off_by_default_and_changes_no_finding() -> None:
    settings = load_settings()
    rules = [
        r
        for r in load_pack().active()
        if r.detector in ("injection", "secrets", "duplicates", "expiry", "hygiene")
    ]
    views = [
        MemoryView.from_record(parse_record(r, "t", settings), settings)
        for r in synthetic_records(300, seed=4, problem_rate=0.2)
    ]
    ctx = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=settings)
    engine = Engine(rules)
    assert engine.timings is None
    plain, _ = engine.run(views, ctx)
    assert engine.timings is None  # nothing was recorded with the profile off
    engine.start_profile()
    timed, _ = engine.run(views, ctx)
    timings = engine.stop_profile()
    assert engine.timings is None
    assert plain and _hits(plain) == _hits(timed)
    labels = {g.label for g in engine.memory_groups + engine.subject_groups}
    assert set(timings) == labels
    injection = next(v for k, v in timings.items() if k.startswith("injection ["))
    assert injection[1] == 300 and injection[0] > 0
    duplicates = next(v for k, v in timings.items() if k.startswith("duplicates ["))
    assert duplicates[1] == len({v.subject for v in views})


def test_profile_rows_rank_groups_and_count_the_rest() -> None:
    rows = profile_rows({"a [R1]": [1.0, 10], "b [R2]": [3.0, 10], "c [R3]": [0.0, 0]}, 100, 5.0)
    assert [r[0] for r in rows] == ["b [R2]", "a [R1]", OUTSIDE]
    assert rows[0][1] == pytest.approx(30.0)  # ms per memory
    assert rows[-1][2] == pytest.approx(0.2)  # 1 s of 5 outside the detectors
    assert sum(r[2] for r in rows) == pytest.approx(1.0)


def test_bench_reports_both_corpora_side_by_side(shared: Path) -> None:
    settings = load_settings()
    pack = load_pack()
    said: list[str] = []
    result = run_bench(
        pack, settings, 120, corpus="both", corpora_dir=shared, say=said.append, pair_sizes=[100]
    )
    assert result.corpora == ["synthetic", "realistic"]
    for corpus in result.corpora:
        for key in (
            "presidio_per_s",
            "full_scan_per_s",
            "full_scan_mb_per_s",
            "full_vs_presidio",
            "full_vs_presidio_cpu",
            "incremental_share",
            "guard_ms",
            "texts",
        ):
            assert result.figures[f"{corpus}_{key}"] > 0, (corpus, key)
        rows = result.profiles[corpus]
        assert rows[0][1] >= rows[-1][1]
        assert any(r[0].startswith("pii [") for r in rows)
        assert any(r[0] == OUTSIDE for r in rows)
        assert sum(r[2] for r in rows) == pytest.approx(1.0, abs=0.02)
    assert result.figures["synthetic_pairs_us_per_memory_100"] > 0
    text = render(result)
    assert re.search(r"^\s+synthetic\s+realistic$", text.splitlines()[0])
    assert "where the realistic full scan's time goes (ranked):" in text
    assert "full scan / Presidio alone" in text
    assert "full scan / Presidio alone, CPU time" in text
    data = as_dict(result)
    assert data["corpora"] == ["synthetic", "realistic"]
    assert data["profiles"]["realistic"][0]["ms_per_memory"] > 0
    json.dumps(data)


def test_bench_says_when_the_realistic_corpus_is_missing(tmp_path: Path) -> None:
    settings = load_settings()
    pack = load_pack()
    with pytest.raises(CorporaMissing):
        run_bench(pack, settings, 50, corpus="realistic", corpora_dir=tmp_path, say=lambda _: None)
    said: list[str] = []
    result = run_bench(
        pack, settings, 50, corpus="both", corpora_dir=tmp_path, say=said.append, pair_sizes=[50]
    )
    assert result.corpora == ["synthetic"]
    assert any("realistic corpus skipped" in line and str(tmp_path) in line for line in said)
    assert "realistic corpus skipped" in render(result)


def test_bench_times_memaudit_scan_with_workers_as_a_process_of_its_own(tmp_path: Path) -> None:
    """With workers, the bench runs ``memaudit scan --full --workers N`` on a fresh copy of
    the store in a child process, and says whether it found what one process found."""
    settings = load_settings()
    pack = load_pack()
    said: list[str] = []
    result = run_bench(
        pack, settings, 60, corpus="synthetic", say=said.append, pair_sizes=[60], workers=2
    )
    assert any("memaudit scan --full --workers 2" in line for line in said)
    assert result.figures["synthetic_workers_per_s"] > 0
    assert result.figures["synthetic_workers_vs_presidio"] > 0
    assert result.figures["synthetic_workers_command_vs_presidio"] > 0
    # Presidio alone is timed again after the scan, and the ratio uses the two timings' mean
    assert any("Presidio pattern-only alone again" in line for line in said)
    before = 60 / result.figures["synthetic_presidio_per_s"]
    mean = (before + result.figures["synthetic_presidio_again_s"]) / 2
    scan_s = 60 / result.figures["synthetic_workers_per_s"]
    assert abs(result.figures["synthetic_workers_vs_presidio"] - mean / scan_s) < 1e-9
    shown = result.rows["memaudit scan --full, 2 workers"]["synthetic"]
    assert "same findings as one process" in shown and "whole command" in shown
    # then 1% changed and `memaudit scan` again, a command of its own (cold caches)
    assert any("after 1% changed, a process of its own" in line for line in said)
    cold = result.rows["incremental scan after 1% changed, cold"]["synthetic"]
    assert "of the full command" in cold and " 1 re-scanned" in cold
    assert result.figures["synthetic_incremental_cold_share"] > 0
    database = run_bench(
        pack,
        settings,
        60,
        database_url=f"sqlite:///{tmp_path / 'given.db'}",
        say=said.append,
        corpus="synthetic",
        pair_sizes=[60],
        workers=2,
    )
    assert "synthetic_workers_per_s" not in database.figures  # a given store: not run
    assert any("needs a scratch SQLite store" in note for note in database.notes)
