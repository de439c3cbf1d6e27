"""`memaudit scan` on SQLite with 1 and with N worker processes, side by side in one run.

Usage::

    .venv/bin/python benchmarks/scan_workers_bench.py --memories 20000 --workers 1,2
    .venv/bin/python benchmarks/scan_workers_bench.py --corpus synthetic --memories 50000

The same realistic store (texts of the train splits of ``../shared/eval`` and
``../shared/train``, :mod:`auditor.tools.realistic`; ``--corpora DIR`` points elsewhere) is
imported once per worker count into a SQLite file of its own, so every scan is the first
full scan of a fresh store (same findings to write). For each worker count the figure is
the wall time of ``Scanner.run(full=True, workers=N)``, which includes starting the worker
processes (``spawn``: each imports memaudit and builds its detectors). Then 1% of the
memories is changed (every 100th record, its fact extended) and an incremental scan runs
with the same worker count: its time is printed as a share of the full scan. Printed per run:
memories/s, the speed-up over the first count, findings (they must be equal), the CPU
seconds of the workers (children) and of this process, the peak RSS of this process and of
the largest worker, and the load average (the machine may be shared: a wall-clock ratio
is only as good as the idle cores it had).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from auditor.config import load_settings
from auditor.logging import configure_logging
from auditor.rulepack.pack import load_pack
from auditor.scan.scanner import Scanner
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.tools.realistic import CorporaMissing, write_realistic
from auditor.tools.synthetic import write_synthetic


def _cpu(who: int) -> float:
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


def _one(corpus: Path, folder: Path, workers: int, shards: int) -> dict[str, float]:
    settings = load_settings(database_url=f"sqlite:///{folder / f'w{workers}.db'}")
    db = Database(settings)
    db.upgrade()
    t0 = time.perf_counter()
    Importer(db, actor="bench").run(open_source("jsonl", corpus, settings))
    imported = time.perf_counter() - t0
    scanner = Scanner(db, load_pack())
    scanner.engine.load()  # this process's detectors: start-up, untimed as before
    children0, self0 = _cpu(resource.RUSAGE_CHILDREN), _cpu(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    summary = scanner.run(full=True, workers=workers, shards=shards)
    took = time.perf_counter() - t0
    # 1% of the memories changed, then an incremental scan (the same worker count)
    changed = folder / "changed.jsonl"
    with corpus.open(encoding="utf-8") as src, changed.open("w", encoding="utf-8") as out:
        for i, line in enumerate(src):
            if i % 100 == 0:
                rec = json.loads(line)
                rec["fact"] = f"{rec['fact']} (updated)"
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    Importer(db, actor="bench").run(open_source("jsonl", changed, settings))
    t1 = time.perf_counter()
    inc = Scanner(db, load_pack()).run(workers=workers, shards=shards)
    inc_s = time.perf_counter() - t1
    out = {
        "seconds": took,
        "imported_s": imported,
        "memories": float(summary.memories_scanned),
        "findings": float(summary.findings_new),
        "complete": float(summary.complete),
        "shards": float(summary.shards_total),
        "children_cpu_s": _cpu(resource.RUSAGE_CHILDREN) - children0,
        "self_cpu_s": _cpu(resource.RUSAGE_SELF) - self0,
        "load1": os.getloadavg()[0],
        "incremental_s": inc_s,
        "incremental_memories": float(inc.memories_scanned),
    }
    db.dispose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--workers", default="1,2", help="worker counts to compare")
    parser.add_argument("--shards", type=int, default=8)
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
        print(
            f"{args.corpus} store, {args.memories:,} memories, SQLite, {args.shards} shards, "
            f"{os.cpu_count()} cores",
            flush=True,
        )
        results: list[tuple[int, dict[str, float]]] = []
        for n in counts:
            r = _one(corpus, folder, n, args.shards)
            results.append((n, r))
            base = results[0][1]["seconds"]
            print(
                f"workers={n}: full scan {r['seconds']:.1f}s = "
                f"{r['memories'] / r['seconds']:,.0f} memories/s "
                f"(x{base / r['seconds']:.2f} vs workers={counts[0]}), "
                f"{r['findings']:,.0f} findings, complete={bool(r['complete'])}, "
                f"{r['shards']:.0f} shards; CPU: workers {r['children_cpu_s']:.0f}s, "
                f"this process {r['self_cpu_s']:.0f}s; load average {r['load1']:.1f} "
                f"(import {r['imported_s']:.0f}s); incremental after 1% changed: "
                f"{r['incremental_s']:.1f}s = {r['incremental_s'] / r['seconds']:.1%} of full "
                f"({r['incremental_memories']:,.0f} memories re-evaluated)",
                flush=True,
            )
        findings = {r["findings"] for _, r in results}
        if len(findings) != 1:
            print(f"FINDINGS DIFFER between worker counts: {sorted(findings)}", flush=True)
            sys.exit(1)
        peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak RSS: this process {peak_self:.0f} MiB, largest worker {peak_child:.0f} MiB")


if __name__ == "__main__":
    main()
