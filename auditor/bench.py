"""``memaudit bench``: scan throughput, side by side with baselines, in one run.

On a synthetic store (:mod:`auditor.synthetic`) in a scratch SQLite database (or the
``--database-url`` given), it measures, one after the other in the same process:

1. the baseline: Presidio's pattern-only analyzer alone (blank spaCy pipeline, default
   recognizers) over the same texts;
2. a full scan with the default rule pack (every rule, findings written, actions applied);
3. an incremental scan after 1% of the memories changed, as a share of the full scan;
4. the write guard: average time to judge one candidate;
5. contradiction candidate generation at growing store sizes (per-memory cost should stay
   flat: linear growth, not quadratic).

Figures are memories per second (higher is better) or milliseconds. Machines are noisy:
compare the lines of one run, not runs of different days.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from auditor.config import Settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.engine import Engine
from auditor.importer import Importer
from auditor.records import parse_record
from auditor.rules import RulePack
from auditor.scan import Scanner
from auditor.sources import open_source
from auditor.store.db import Database
from auditor.synthetic import synthetic_records, write_synthetic

__all__ = ["BenchResult", "presidio_baseline", "run_bench"]

Say = Callable[[str], None]


@dataclass
class BenchResult:
    """The figures of one ``memaudit bench`` run."""

    memories: int
    lines: list[tuple[str, str]] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, label: str, value: float, shown: str) -> None:
        self.figures[key] = value
        self.lines.append((label, shown))


def presidio_baseline(texts: list[str]) -> float:
    """Seconds Presidio's pattern-only analyzer (blank spaCy, default recognizers) takes."""
    os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
    import spacy
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    with tempfile.TemporaryDirectory(prefix="memaudit-blank-") as folder:
        spacy.blank("en").to_disk(folder)
        provider = NlpEngineProvider(
            nlp_configuration={
                "nlp_engine_name": "spacy",
                "models": [{"lang_code": "en", "model_name": folder}],
            }
        )
        engine = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
        engine.analyze("warm up a@b.example", language="en")
        started = time.perf_counter()
        for text in texts:
            engine.analyze(text, language="en")
        return time.perf_counter() - started


def _views(n: int, settings: Settings, seed: int = 11) -> list[MemoryView]:
    return [
        MemoryView.from_record(parse_record(r, "bench", settings), settings)
        for r in synthetic_records(n, seed=seed, per_subject=25)
    ]


def run_bench(
    pack: RulePack,
    settings: Settings,
    memories: int = 100_000,
    database_url: str | None = None,
    say: Say = print,
) -> BenchResult:
    """Run the benchmark and return its figures (``say`` reports progress)."""
    result = BenchResult(memories)
    with tempfile.TemporaryDirectory(prefix="memaudit-bench-") as tmp:
        corpus = write_synthetic(Path(tmp) / "store.jsonl", memories)
        texts = [r["fact"] for r in synthetic_records(memories)]
        say(f"synthetic store: {memories:,} memories")

        say("baseline: Presidio pattern-only analyzer alone ...")
        base = presidio_baseline(texts)
        result.add(
            "presidio_per_s",
            "Presidio pattern-only alone",
            memories / base,
            f"{memories / base:,.0f} memories/s",
        )

        url = database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        db = Database(settings, url=url)
        db.upgrade()
        say("importing ...")
        Importer(db, actor="bench").run(open_source("jsonl", corpus, settings))

        say("full scan with the default rule pack ...")
        scanner = Scanner(db, pack)  # builds the detectors: start-up, like Presidio's, untimed
        warm = MemoryView("warm", "user:warm", "warm up a@b.example 당뇨 hunter2", "external")
        scanner.engine.run([warm], DetectContext(now=datetime.now(UTC), settings=settings))
        started = time.perf_counter()
        full = scanner.run(full=True)
        full_s = time.perf_counter() - started
        result.add(
            "full_scan_per_s",
            f"full scan, {len(pack.active())} rules",
            memories / full_s,
            f"{memories / full_s:,.0f} memories/s ({full_s:.1f}s, {full.findings_new:,} findings)",
        )
        ratio = (memories / full_s) / (memories / base)
        result.add("full_vs_presidio", "full scan / Presidio alone", ratio, f"{ratio:.2f}x")

        say("changing 1% and scanning incrementally ...")
        changed = Path(tmp) / "changed.jsonl"
        step = 100
        with changed.open("w", encoding="utf-8") as fh:
            import json

            for i, rec in enumerate(synthetic_records(memories)):
                if i % step == 0:
                    rec["fact"] = rec["fact"] + " (updated)"
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        Importer(db, actor="bench").run(open_source("jsonl", changed, settings))
        started = time.perf_counter()
        inc = Scanner(db, pack).run()
        inc_s = time.perf_counter() - started
        result.add(
            "incremental_share",
            "incremental scan after 1% changed",
            inc_s / full_s,
            f"{inc_s:.2f}s = {inc_s / full_s:.1%} of the full scan "
            f"({inc.memories_scanned:,} memories re-scanned)",
        )
        db.dispose()

    say("write guard ...")
    from auditor.guard import WriteGuard

    guard = WriteGuard(pack, settings)
    candidates = list(synthetic_records(min(memories, 5000), seed=3))
    guard.check(candidates[0])
    started = time.perf_counter()
    for cand in candidates:
        guard.check(cand)
    per = (time.perf_counter() - started) / len(candidates) * 1000
    result.add("guard_ms", "write guard, one candidate", per, f"{per:.3f} ms on average")

    say("contradiction candidate generation at growing sizes ...")
    rules = [r for r in pack.active() if r.category in ("contradiction", "duplicate")]
    if rules:
        engine = Engine(rules)
        ctx = DetectContext(now=datetime.now(UTC), settings=settings)
        sizes = [max(1000, memories // 10), max(2000, memories // 4), max(4000, memories // 2)]
        for size in sizes:
            views = _views(size, settings)
            started = time.perf_counter()
            engine.run(views, ctx)
            took = time.perf_counter() - started
            result.add(
                f"pairs_us_per_memory_{size}",
                f"contradiction+duplicate rules, {size:,} memories",
                took / size * 1e6,
                f"{took / size * 1e6:,.1f} µs per memory ({took:.2f}s)",
            )
    return result


def render(result: BenchResult) -> str:
    """The figures as an aligned text table."""
    width = max(len(label) for label, _ in result.lines)
    return "\n".join(f"{label:<{width}}  {shown}" for label, shown in result.lines)


def as_dict(result: BenchResult) -> dict[str, Any]:
    """JSON-ready figures."""
    return {"memories": result.memories, "figures": result.figures}
