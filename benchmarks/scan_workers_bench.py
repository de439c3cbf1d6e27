"""`memaudit scan` on SQLite with 1 and with N worker processes, side by side in one run.

Usage::

    .venv/bin/python benchmarks/scan_workers_bench.py --memories 20000 --workers 1,2
    .venv/bin/python benchmarks/scan_workers_bench.py --corpus synthetic --memories 50000

The same realistic store (texts of the train splits of ``../shared/eval`` and
``../shared/train``, :mod:`auditor.tools.realistic`; ``--corpora DIR`` points elsewhere) is
imported once per worker count into a SQLite file of its own, so every scan is the first
full scan of a fresh store (same findings to write). For each worker count the scan is the
command a user runs, ``memaudit scan --full --workers N``, in a process of its own: the
figures are the whole command (interpreter, imports, building the detectors, the workers'
start-up: forked with the detectors built when that is safe, see ``docs/scanning.md``) and
the run as it records itself. Then 1% of the memories is changed (every 100th record, its
fact extended) and an incremental ``memaudit scan --workers N`` runs: its time is printed as
a share of the full one. Printed per run: memories/s, the speed-up over the first count,
findings (they must be equal), the CPU seconds of the command and its workers, the peak RSS
of the largest of them, and the load average (the machine may be shared: a wall-clock
ratio is only as good as the idle cores it had).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from auditor.config import load_settings
from auditor.logging import configure_logging
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.tools.realistic import CorporaMissing, write_realistic
from auditor.tools.synthetic import write_synthetic


def _cpu(who: int) -> float:
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


def _command(
    url: str, workers: int, shards: int | None, full: bool
) -> tuple[dict[str, Any], float]:
    """``memaudit scan [--full] --workers N`` in a child process: its summary and wall time."""
    env = {**os.environ, "MEMAUDIT_DATABASE_URL": url, "MEMAUDIT_LOG_LEVEL": "warning"}
    if shards is not None:
        env["MEMAUDIT_SCAN_SHARDS"] = str(shards)
    cmd = [sys.executable, "-m", "auditor", "scan", "--json", "--no-progress"]
    cmd += ["--workers", str(workers), *(["--full"] if full else [])]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"memaudit scan --workers {workers} failed: {done.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary, took


def _one(
    corpus: Path, folder: Path, workers: int, shards: int | None, run: int
) -> dict[str, float]:
    url = f"sqlite:///{folder / f'run{run}-w{workers}.db'}"  # a fresh store every run
    settings = load_settings(database_url=url)
    db = Database(settings)
    db.upgrade()
    t0 = time.perf_counter()
    Importer(db, actor="bench").run(open_source("jsonl", corpus, settings))
    imported = time.perf_counter() - t0
    db.dispose()
    children0 = _cpu(resource.RUSAGE_CHILDREN)
    summary, took = _command(url, workers, shards, full=True)
    cpu = _cpu(resource.RUSAGE_CHILDREN) - children0
    # 1% of the memories changed, then an incremental scan (the same worker count)
    changed = folder / "changed.jsonl"
    with corpus.open(encoding="utf-8") as src, changed.open("w", encoding="utf-8") as out:
        for i, line in enumerate(src):
            if i % 100 == 0:
                rec = json.loads(line)
                rec["fact"] = f"{rec['fact']} (updated)"
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    db = Database(settings)
    Importer(db, actor="bench").run(open_source("jsonl", changed, settings))
    db.dispose()
    inc, inc_s = _command(url, workers, shards, full=False)
    return {
        "seconds": took,
        "scan_s": float(summary["duration_s"]),
        "imported_s": imported,
        "memories": float(summary["memories_scanned"]),
        "findings": float(summary["findings_new"]),
        "complete": float(summary["complete"]),
        "shards": float(summary["shards"]["total"]),
        "cpu_s": cpu,
        "load1": os.getloadavg()[0],
        "incremental_s": inc_s,
        "incremental_scan_s": float(inc["duration_s"]),
        "incremental_memories": float(inc["memories_scanned"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument(
        "--workers", default="1,2", help="worker counts to compare (repeat to alternate: 1,2,1,2)"
    )
    parser.add_argument("--shards", type=int, default=None, help="default: the setting (16)")
    parser.add_argument("--corpus", choices=["realistic", "synthetic"], default="realistic")
    parser.add_argument("--corpora", type=Path, default=None, help="folder with eval/, train/")
    args = parser.parse_args()
    configure_logging("warning", "console")
    counts = [int(x) for x in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="memaudit-workersbench-") as tmp:
        folder = Path(tmp)
        try:
            if args.corpus == "realistic":
                corpus = write_realistic(folder / "store.jsonl", args.memories, root=args.corpora)
            else:
                corpus = write_synthetic(folder / "store.jsonl", args.memories)
        except CorporaMissing as exc:
            raise SystemExit(f"realistic corpus: {exc}") from None
        shards = args.shards or load_settings().scan_shards
        print(
            f"{args.corpus} store, {args.memories:,} memories, SQLite, {shards} shards, "
            f"{os.cpu_count()} cores; memaudit scan --full --workers N, a process of its own",
            flush=True,
        )
        results: list[tuple[int, dict[str, float]]] = []
        for run, n in enumerate(counts):
            r = _one(corpus, folder, n, args.shards, run)
            results.append((n, r))
            base, base_scan = results[0][1]["seconds"], results[0][1]["scan_s"]
            print(
                f"workers={n}: whole command {r['seconds']:.1f}s = "
                f"{r['memories'] / r['seconds']:,.0f} memories/s "
                f"(x{base / r['seconds']:.2f} vs workers={counts[0]}; the run itself "
                f"{r['scan_s']:.1f}s, x{base_scan / r['scan_s']:.2f}), "
                f"{r['findings']:,.0f} findings, complete={bool(r['complete'])}, "
                f"{r['shards']:.0f} shards; CPU of the command and its workers "
                f"{r['cpu_s']:.0f}s; load average {r['load1']:.1f} "
                f"(import {r['imported_s']:.0f}s); incremental after 1% changed: whole "
                f"command {r['incremental_s']:.1f}s = {r['incremental_s'] / r['seconds']:.1%} "
                f"of full, the run {r['incremental_scan_s']:.1f}s (detectors built for it) "
                f"= {r['incremental_scan_s'] / r['scan_s']:.1%} "
                f"({r['incremental_memories']:,.0f} memories re-evaluated)",
                flush=True,
            )
        findings = {r["findings"] for _, r in results}
        if len(findings) != 1:
            print(f"FINDINGS DIFFER between worker counts: {sorted(findings)}", flush=True)
            sys.exit(1)
        peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak RSS of the largest scan process: {peak_child:.0f} MiB")


if __name__ == "__main__":
    main()
