"""``memaudit bench``: scan throughput, side by side with baselines, in one run.

Two corpora, measured one after the other in the same process and shown side by side:

* ``synthetic``: the short, uniform template sentences of :mod:`auditor.tools.synthetic`;
* ``realistic``: texts of the *train* splits of the labelled corpora (``../shared/eval`` and
  ``../shared/train`` of a checkout: chat observations, tool outputs, web and document
  snippets, configs and logs, Korean included, up to several KB), replicated to the size
  asked with new ids and long-tailed subjects (:mod:`auditor.tools.realistic`). The wheel
  does not carry those corpora: without them the realistic column says so and is skipped
  (or, when only the realistic corpus was asked for, the bench stops with the reason).

For each corpus, in a scratch SQLite database (or the ``database_url`` given, one corpus):

1. the baseline: Presidio's pattern-only analyzer alone (blank spaCy pipeline, default
   recognizers) over the same texts;
2. a full scan with the rule pack (every rule, findings written, actions applied), in
   memories/s and MB/s of text, and as a multiple of the baseline, in wall-clock time and
   in CPU time of this process (steadier on a shared machine; with SQLite the store works
   in this process too, a PostgreSQL server's CPU is not counted);
3. where the full scan's time goes: the engine times every rule group's detector calls
   during that scan (:meth:`auditor.rulepack.engine.Engine.start_profile`); the rest is the store
   (reading, findings, actions); and, per detector, the share of memories the one-pass
   prefilter (:mod:`auditor.detectors.prefilter`) spared it;
4. an incremental scan after 1% of the memories changed, as a share of the full scan;
   and (SQLite scratch store, ``workers`` above 1) ``memaudit scan --full --workers N``
   (one per core by default) on a fresh copy of the store, in a process of its own, timed
   as a user sees it: the scan as its run records it, and the whole command with its
   imports, detectors and workers' start-up; beside Presidio alone on one core;
5. the write guard: average time to judge one candidate;
6. (synthetic only) contradiction candidate generation at growing store sizes (per-memory
   cost should stay flat: linear growth, not quadratic).

Figures are memories per second (higher is better) or milliseconds. Machines are noisy:
compare the lines of one run, not runs of different days.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from auditor.config import Settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.records import parse_record
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import RulePack
from auditor.scan.scanner import Scanner
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.tools.realistic import (
    CorporaMissing,
    corpora_roots,
    describe,
    realistic_records,
    train_pool,
)
from auditor.tools.synthetic import synthetic_records

__all__ = [
    "BenchResult",
    "Corpus",
    "presidio_baseline",
    "presidio_times",
    "profile_rows",
    "run_bench",
]

Say = Callable[[str], None]
#: which corpora ``memaudit bench`` measures
Corpus = Literal["synthetic", "realistic", "both"]
CORPORA: tuple[str, ...] = ("synthetic", "realistic")
#: the label of the profile row for time spent outside detectors
OUTSIDE = "store, findings, actions (outside detectors)"


@dataclass
class BenchResult:
    """The figures of one ``memaudit bench`` run.

    ``figures`` is flat JSON (``<corpus>_<key>``); ``rows`` keeps the displayed values per
    label and corpus, so that the corpora show side by side; ``profiles`` holds each corpus's
    ranked profile table (label, ms per memory, share of the full scan).
    """

    memories: int
    figures: dict[str, float] = field(default_factory=dict)
    rows: dict[str, dict[str, str]] = field(default_factory=dict)
    corpora: list[str] = field(default_factory=list)
    profiles: dict[str, list[tuple[str, float, float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: per corpus: rule group label -> share of the memories the prefilter spared it
    spared: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, corpus: str, key: str, label: str, value: float, shown: str) -> None:
        """Record one figure of one corpus."""
        if corpus not in self.corpora:
            self.corpora.append(corpus)
        self.figures[f"{corpus}_{key}"] = value
        self.rows.setdefault(label, {})[corpus] = shown

    @property
    def lines(self) -> list[tuple[str, str]]:
        """(label, shown) pairs, corpora joined: the old single-column view."""
        return [
            (label, " | ".join(f"{c}: {v}" for c, v in shown.items()))
            for label, shown in self.rows.items()
        ]


def presidio_baseline(texts: Sequence[str]) -> float:
    """Seconds Presidio's pattern-only analyzer (blank spaCy, default recognizers) takes."""
    return presidio_times(texts)[0]


def presidio_times(texts: Sequence[str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of Presidio's pattern-only analyzer over ``texts``."""
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
        started, cpu = time.perf_counter(), time.process_time()
        for text in texts:
            engine.analyze(text, language="en")
        return time.perf_counter() - started, time.process_time() - cpu


def profile_rows(
    timings: dict[str, list[float]], memories: int, total_s: float
) -> list[tuple[str, float, float]]:
    """A ranked profile: (rule group, ms per memory, share of ``total_s``), slowest first.

    The time not spent in any detector becomes the row :data:`OUTSIDE`.
    """
    rows = [
        (label, seconds / memories * 1000, seconds / total_s)
        for label, (seconds, calls) in timings.items()
        if calls
    ]
    inside = sum(seconds for seconds, _ in timings.values())
    outside = max(0.0, total_s - inside)
    rows.append((OUTSIDE, outside / memories * 1000, outside / total_s))
    return sorted(rows, key=lambda row: -row[1])


def _views(n: int, settings: Settings, seed: int = 11) -> list[MemoryView]:
    return [
        MemoryView.from_record(parse_record(r, "bench", settings), settings)
        for r in synthetic_records(n, seed=seed, per_subject=25)
    ]


def _write(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path


def _corpora(corpus: Corpus) -> list[str]:
    return list(CORPORA) if corpus == "both" else [corpus]


def run_bench(  # noqa: PLR0913 - the options of one run, all but two with defaults
    pack: RulePack,
    settings: Settings,
    memories: int = 100_000,
    database_url: str | None = None,
    say: Say = print,
    corpus: Corpus = "both",
    corpora_dir: Path | None = None,
    pair_sizes: Sequence[int] | None = None,
    workers: int = 1,
) -> BenchResult:
    """Run the benchmark and return its figures (``say`` reports progress).

    Args:
        pack: the rule pack to scan with.
        settings: memaudit settings.
        memories: the size of each corpus's store.
        database_url: a scratch store (default: a temporary SQLite file per corpus); it is
            written to, and holds one corpus: with ``both``, only the synthetic one is run.
        say: progress reporter.
        corpus: ``synthetic``, ``realistic`` or ``both`` (side by side).
        corpora_dir: where the labelled corpora are (default: ``$MEMAUDIT_CORPORA_DIR``, else
            ``../shared`` next to the checkout).
        pair_sizes: store sizes of the contradiction scaling step (default: a tenth, a
            quarter and a half of ``memories``, at least 1,000, 2,000 and 4,000).
        workers: above 1, also time a full scan with this many worker processes (on a
            fresh scratch SQLite store; not with ``database_url``).

    Raises:
        CorporaMissing: ``corpus="realistic"`` and the labelled corpora are not there.
    """
    chosen = _corpora(corpus)
    result = BenchResult(memories)
    if database_url and len(chosen) > 1:
        chosen = ["synthetic"]
        note = "a benchmark database holds one corpus: synthetic only (ask for realistic)"
        say(note)
        result.notes.append(note)
    records: dict[str, list[dict[str, Any]]] = {}
    for name in chosen:
        if name == "synthetic":
            records[name] = list(synthetic_records(memories))
            continue
        try:
            pool = train_pool(corpora_roots(corpora_dir))
            records[name] = list(realistic_records(memories, pool=pool))
        except CorporaMissing as exc:
            if corpus == "realistic":
                raise
            say(f"realistic corpus skipped: {exc}")
            result.notes.append(f"realistic corpus skipped: {exc}")
    if workers > 1 and database_url:
        note = "the scan with worker processes needs a scratch SQLite store: not run"
        say(note)
        result.notes.append(note)
        workers = 1
    for name, recs in records.items():
        _bench_corpus(result, name, recs, pack, settings, database_url, say, workers)
    if "synthetic" in records:
        sizes = pair_sizes or [
            max(1000, memories // 10),
            max(2000, memories // 4),
            max(4000, memories // 2),
        ]
        _pair_scaling(result, pack, settings, sizes, say)
    return result


def _bench_corpus(
    result: BenchResult,
    name: str,
    records: list[dict[str, Any]],
    pack: RulePack,
    settings: Settings,
    database_url: str | None,
    say: Say,
    workers: int = 1,
) -> None:
    n = len(records)
    texts = [str(r["fact"]) for r in records]
    stats = _texts_row(result, name, texts)
    say(f"{name} store: {n:,} memories, {stats['mb']:.1f} MB of text")
    say(f"{name}: baseline, Presidio pattern-only analyzer alone ...")
    baseline = _baseline(result, name, texts, stats)
    with tempfile.TemporaryDirectory(prefix="memaudit-bench-") as tmp:
        url = database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        db = Database(settings, url=url)
        db.upgrade()
        say(f"{name}: importing ...")
        Importer(db, actor="bench").run(
            open_source("jsonl", _write(Path(tmp) / "s.jsonl", records), settings)
        )
        say(f"{name}: full scan with the rule pack ...")
        scanner = Scanner(db, pack)
        full_s = _full_scan(result, name, scanner, pack, settings, n, stats, baseline)

        say(f"{name}: changing 1% and scanning incrementally ...")
        _incremental_scan(result, name, db, records, pack, settings, Path(tmp), full_s)
        db.dispose()
        if workers > 1:
            _workers_scan(result, name, records, pack, settings, workers, Path(tmp), say)
    _guard(result, name, records, pack, settings, say)


def _texts_row(result: BenchResult, name: str, texts: list[str]) -> dict[str, float]:
    """The corpus's size and length statistics, as its ``texts`` row; returns the stats."""
    n = len(texts)
    stats = describe(texts)
    result.add(
        name,
        "texts",
        "texts",
        stats["mb"],
        f"{n:,} memories, {stats['mb']:.1f} MB; chars mean {stats['mean']:.0f}, median "
        f"{stats['median']:.0f}, p90 {stats['p90']:.0f}, max {stats['max']:.0f}; "
        f"{stats['korean_share']:.0%} Korean",
    )
    return stats


def _baseline(
    result: BenchResult, name: str, texts: list[str], stats: dict[str, float]
) -> tuple[float, float]:
    """Step 1: Presidio's pattern-only analyzer alone; its wall-clock and CPU seconds."""
    n = len(texts)
    base, base_cpu = presidio_times(texts)
    result.add(
        name,
        "presidio_per_s",
        "Presidio pattern-only alone",
        n / base,
        f"{n / base:,.0f} memories/s, {stats['mb'] / base:.3f} MB/s "
        f"({base:.1f}s wall, {base_cpu:.1f}s CPU)",
    )
    return base, base_cpu


def _full_scan(
    result: BenchResult,
    name: str,
    scanner: Scanner,
    pack: RulePack,
    settings: Settings,
    n: int,
    stats: dict[str, float],
    baseline: tuple[float, float],
) -> float:
    """Steps 2 and 3: the profiled full scan, beside the baseline; its wall-clock seconds."""
    base, base_cpu = baseline
    scanner.engine.load()  # builds the detectors: start-up, like Presidio's, untimed
    warm = MemoryView("warm", "user:warm", "warm up a@b.example 당뇨 hunter2", "external")
    scanner.engine.run([warm], DetectContext(now=datetime.now(UTC), settings=settings))
    scanner.engine.start_profile()
    started, cpu = time.perf_counter(), time.process_time()
    full = scanner.run(full=True, workers=1)  # one process: like Presidio, and profiled
    full_s, full_cpu = time.perf_counter() - started, time.process_time() - cpu
    timings = scanner.engine.stop_profile()
    result.spared[name] = {label: count / n for label, count in scanner.engine.skipped.items() if n}
    for label, share in result.spared[name].items():
        result.figures[f"{name}_spared_{label.split(' ')[0]}"] = share
    result.add(
        name,
        "full_scan_per_s",
        f"full scan, {len(pack.active())} rules",
        n / full_s,
        f"{n / full_s:,.0f} memories/s, {stats['mb'] / full_s:.3f} MB/s "
        f"({full_s:.1f}s wall, {full_cpu:.1f}s CPU, {full.findings_new:,} findings)",
    )
    result.figures[f"{name}_full_scan_mb_per_s"] = stats["mb"] / full_s
    result.figures[f"{name}_findings"] = full.findings_new
    ratio = base / full_s
    result.add(name, "full_vs_presidio", "full scan / Presidio alone", ratio, f"{ratio:.2f}x")
    # on a busy machine wall-clock ratios drift with the load; CPU seconds of this process
    # (SQLite runs in it; a PostgreSQL server's CPU is not counted) drift much less
    ratio_cpu = base_cpu / full_cpu if full_cpu > 0 else 0.0
    result.add(
        name,
        "full_vs_presidio_cpu",
        "full scan / Presidio alone, CPU time",
        ratio_cpu,
        f"{ratio_cpu:.2f}x",
    )
    result.profiles[name] = profile_rows(timings, n, full_s)
    return full_s


def _incremental_scan(
    result: BenchResult,
    name: str,
    db: Database,
    records: list[dict[str, Any]],
    pack: RulePack,
    settings: Settings,
    tmp: Path,
    full_s: float,
) -> None:
    """Step 4: change 1% of the memories, then time an incremental scan against the full.

    In this process, right after the full scan: the detectors are built and their per-fact
    caches hold the store, as in a daemon whose last scan saw it (a command of its own
    starts cold: :func:`_workers_scan` times that too)."""
    _change_one_percent(db, records, settings, tmp)
    started = time.perf_counter()
    inc = Scanner(db, pack).run(workers=1)
    inc_s = time.perf_counter() - started
    result.add(
        name,
        "incremental_share",
        "incremental scan after 1% changed, warm",
        inc_s / full_s,
        f"{inc_s:.2f}s = {inc_s / full_s:.1%} of full ({inc.memories_scanned:,} re-scanned; "
        "this process: detectors and their caches warm, as in the daemon)",
    )


def _change_one_percent(
    db: Database, records: list[dict[str, Any]], settings: Settings, tmp: Path
) -> None:
    """Import every 100th record again with its fact extended (1% of the store changed)."""
    changed = [{**rec, "fact": f"{rec['fact']} (updated)"} for rec in records[::100]]
    Importer(db, actor="bench").run(
        open_source("jsonl", _write(tmp / "changed.jsonl", changed), settings)
    )


def _workers_scan(
    result: BenchResult,
    name: str,
    records: list[dict[str, Any]],
    pack: RulePack,
    settings: Settings,
    workers: int,
    tmp: Path,
    say: Say,
) -> None:
    """``memaudit scan --full --workers N`` on a fresh copy of the store, as a user runs it.

    A process of its own: its imports, its detectors and its workers' start-up are timed,
    as they are for a user (this process has built its detectors already). Reported: the
    scan as the run records it and the whole command.
    """
    n = len(records)
    url = f"sqlite:///{tmp / 'workers.db'}"
    db = Database(settings, url=url)
    db.upgrade()
    Importer(db, actor="bench").run(
        open_source("jsonl", _write(tmp / "workers.jsonl", records), settings)
    )
    db.dispose()
    say(f"{name}: memaudit scan --full --workers {workers}, a process of its own ...")
    command = [sys.executable, "-m", "auditor", "scan", "--full", "--json", "--no-progress"]
    command += ["--workers", str(workers), "--rules", str(pack.root)]
    ran = _scan_command(result, command, url, f"{name}: the scan with {workers} workers", say)
    if ran is None:
        return
    summary, took = ran
    scan_s = float(summary.get("duration_s") or took)
    findings = int(summary.get("findings_new", -1))
    single = int(result.figures.get(f"{name}_findings", -1))
    same = (
        "same findings as one process"
        if findings == single
        else (f"FINDINGS DIFFER from one process ({single:,})")
    )
    result.add(
        name,
        "workers_per_s",
        f"memaudit scan --full, {workers} workers",
        n / scan_s,
        f"{n / scan_s:,.0f} memories/s (scan {scan_s:.1f}s, whole command {took:.1f}s with "
        f"start-up; {summary.get('shards', {}).get('total', '?')} shards, {findings:,} "
        f"findings: {same})",
    )
    # the machine's speed drifts over a run: Presidio alone is timed again right after the
    # scan, and the scan compared with the mean of the two timings around it
    say(f"{name}: Presidio pattern-only alone again, after the scan ...")
    before = n / result.figures[f"{name}_presidio_per_s"]
    after, _ = presidio_times([str(r["fact"]) for r in records])
    presidio_s = (before + after) / 2
    result.figures[f"{name}_presidio_again_s"] = after
    result.add(
        name,
        "workers_vs_presidio",
        f"memaudit scan, {workers} workers / Presidio alone (one core)",
        presidio_s / scan_s,
        f"{presidio_s / scan_s:.2f}x (whole command: {presidio_s / took:.2f}x; Presidio "
        f"alone {before:.1f}s before, {after:.1f}s after)",
    )
    result.figures[f"{name}_workers_command_vs_presidio"] = presidio_s / took
    again = [c for c in command if c != "--full"]
    _cold_incremental(result, name, records, settings, url, tmp, again, took, say)


def _scan_command(
    result: BenchResult, command: list[str], url: str, what: str, say: Say
) -> tuple[dict[str, Any], float] | None:
    """Run a ``memaudit scan --json`` command on the store at ``url``: its summary and wall
    seconds, or None (said, and noted in the result) when it failed."""
    env = {**os.environ, "MEMAUDIT_DATABASE_URL": url, "MEMAUDIT_LOG_LEVEL": "warning"}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        note = f"{what} failed (exit {done.returncode})"
        say(note)
        result.notes.append(note)
        return None
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary, took


def _cold_incremental(  # noqa: PLR0913 - one step's inputs
    result: BenchResult,
    name: str,
    records: list[dict[str, Any]],
    settings: Settings,
    url: str,
    tmp: Path,
    command: list[str],
    full_took: float,
    say: Say,
) -> None:
    """``memaudit scan`` after 1% changed, a command of its own, against the full command.

    What a scan from cron costs: its imports and detectors, and caches that start empty, so
    a touched subject's other memories are read again (the warm row is the daemon's case).
    """
    db = Database(settings, url=url)
    _change_one_percent(db, records, settings, tmp)
    db.dispose()
    say(f"{name}: memaudit scan after 1% changed, a process of its own ...")
    ran = _scan_command(result, command, url, f"{name}: the incremental scan command", say)
    if ran is None:
        return
    summary, took = ran
    scan_s = float(summary.get("duration_s") or took)
    result.add(
        name,
        "incremental_cold_share",
        "incremental scan after 1% changed, cold",
        took / full_took,
        f"whole command {took:.1f}s = {took / full_took:.1%} of the full command (the run "
        f"{scan_s:.1f}s, detectors built for it; {summary.get('memories_scanned', 0):,} "
        "re-scanned; a process of its own, caches empty, as from cron)",
    )


def _guard(
    result: BenchResult,
    name: str,
    records: list[dict[str, Any]],
    pack: RulePack,
    settings: Settings,
    say: Say,
) -> None:
    say(f"{name}: write guard ...")
    from auditor.scan.guard import WriteGuard

    guard = WriteGuard(pack, settings)
    guard.engine.load()  # detector start-up untimed
    # every 7th record up to 2,000 candidates: a spread over the corpus, not one subject
    candidates = [{**rec, "memory_id": f"cand_{i}"} for i, rec in enumerate(records[::7][:2000])]
    guard.check(candidates[0])
    started = time.perf_counter()
    for cand in candidates:
        guard.check(cand)
    per = (time.perf_counter() - started) / len(candidates) * 1000
    result.add(name, "guard_ms", "write guard, one candidate", per, f"{per:.3f} ms on average")


def _pair_scaling(
    result: BenchResult, pack: RulePack, settings: Settings, sizes: Sequence[int], say: Say
) -> None:
    say("contradiction candidate generation at growing sizes ...")
    rules = [r for r in pack.active() if r.category in ("contradiction", "duplicate")]
    if not rules:
        return
    engine = Engine(rules).load()  # detector start-up untimed
    ctx = DetectContext(now=datetime.now(UTC), settings=settings)
    for size in sizes:
        views = _views(size, settings)
        started = time.perf_counter()
        engine.run(views, ctx)
        took = time.perf_counter() - started
        result.add(
            "synthetic",
            f"pairs_us_per_memory_{size}",
            f"contradiction+duplicate rules, {size:,} memories",
            took / size * 1e6,
            f"{took / size * 1e6:,.1f} µs per memory ({took:.2f}s)",
        )


def render(result: BenchResult) -> str:
    """The figures as text: one table with the corpora side by side, then each profile."""
    corpora = result.corpora
    header = ["", *corpora]
    body = [[label, *(shown.get(c, "-") for c in corpora)] for label, shown in result.rows.items()]
    lines = _table([header, *body])
    for note in result.notes:
        lines.append(note)
    for name, rows in result.profiles.items():
        lines.append("")
        lines.append(f"where the {name} full scan's time goes (ranked):")
        spared = result.spared.get(name, {})
        table = [["rule group", "ms per memory", "share", "spared by the prefilter"]]
        table += [
            [label, f"{ms:.3f}", f"{share:.1%}", f"{spared[label]:.0%}" if label in spared else ""]
            for label, ms, share in rows
        ]
        lines += _table(table)
    return "\n".join(lines)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def as_dict(result: BenchResult) -> dict[str, Any]:
    """JSON-ready figures."""
    return {
        "memories": result.memories,
        "corpora": result.corpora,
        "figures": result.figures,
        "profiles": {
            name: [{"group": g, "ms_per_memory": ms, "share": share} for g, ms, share in rows]
            for name, rows in result.profiles.items()
        },
        "spared": result.spared,
        "notes": result.notes,
    }
