"""Peak memory of a full scan against the size of the largest subject.

Usage::

    .venv/bin/python benchmarks/subject_memory_bench.py                  # 1k and 10k
    .venv/bin/python benchmarks/subject_memory_bench.py --sizes 1000,10000,100000
    .venv/bin/python benchmarks/subject_memory_bench.py --sizes 5000 --tracemalloc

For each size a store is built in a SQLite file of its own: one subject holding ``size``
realistic memories (texts of the train splits of ``../shared/eval`` and ``../shared/train``,
:mod:`auditor.tools.realistic`, every copy tagged so no two facts are equal) plus 200 small
subjects of 12. The full scan runs in a fresh child process with the shipped rule pack in
one process (``workers=1``), so the printed peak RSS is the scan's own high-water mark
(``ru_maxrss`` of the child: imports, detectors and the scan). ``--tracemalloc`` prints the
ten biggest allocation sites at the peak instead (slower).
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

ROOT = Path(__file__).resolve().parents[1]


def _build(path: Path, size: int, corpora: Path | None) -> Path:
    from auditor.tools.realistic import realistic_records

    small = 200 * 12
    with path.open("w", encoding="utf-8") as fh:
        for i, rec in enumerate(realistic_records(size + small, seed=11, root=corpora)):
            rec["subject"] = "user:big" if i < size else f"user:s{(i - size) // 12:04d}"
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path


def _child(db_url: str, trace: bool) -> None:
    """In the child process: one full scan, print JSON figures."""
    import tracemalloc

    from auditor.config import load_settings
    from auditor.logging import configure_logging
    from auditor.rulepack.pack import load_pack
    from auditor.scan.scanner import Scanner
    from auditor.store.db import Database

    configure_logging("warning", "console")
    db = Database(load_settings(database_url=db_url))
    scanner = Scanner(db, load_pack())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if trace:
        tracemalloc.start(8)
    t0 = time.perf_counter()
    summary = scanner.run(full=True, workers=1)
    took = time.perf_counter() - t0
    top: list[str] = []
    if trace:
        _cur, peak = tracemalloc.get_traced_memory()
        snap = tracemalloc.take_snapshot()
        top = [f"peak traced {peak / 2**20:.0f} MiB (at the end: see below)"]
        top += [str(s) for s in snap.statistics("lineno")[:10]]
    print(
        json.dumps(
            {
                "seconds": took,
                "memories": summary.memories_scanned,
                "findings": summary.findings_new,
                "complete": summary.complete,
                "rss_before_scan_mib": before,
                "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "top": top,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="largest-subject sizes")
    parser.add_argument("--corpora", type=Path, default=None, help="folder with eval/, train/")
    parser.add_argument("--tracemalloc", action="store_true", help="biggest allocation sites")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.tracemalloc)
        return
    from auditor.config import load_settings
    from auditor.logging import configure_logging
    from auditor.sources.files import open_source
    from auditor.sources.importer import Importer
    from auditor.store.db import Database

    configure_logging("warning", "console")
    print("largest subject | memories | full scan | peak RSS (scan process) | before scan")
    for size in (int(x) for x in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="memaudit-subjectbench-") as tmp:
            corpus = _build(Path(tmp) / "store.jsonl", size, args.corpora)
            url = f"sqlite:///{Path(tmp) / 'store.db'}"
            db = Database(load_settings(database_url=url))
            db.upgrade()
            Importer(db, actor="bench").run(open_source("jsonl", corpus, db.settings))
            db.dispose()
            out = subprocess.run(
                [sys.executable, __file__, "--child", url]
                + (["--tracemalloc"] if args.tracemalloc else []),
                cwd=ROOT,
                env={**os.environ, "MEMAUDIT_LOG_LEVEL": "warning"},
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode != 0:
                raise SystemExit(out.stderr[-3000:])
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{size:>15,} | {r['memories']:>8,} | {r['seconds']:>7.0f}s | "
                f"{r['peak_rss_mib']:>10,.0f} MiB | {r['rss_before_scan_mib']:,.0f} MiB "
                f"({r['findings']:,} findings, complete={r['complete']})",
                flush=True,
            )
            for line in r["top"]:
                print("    " + line)


if __name__ == "__main__":
    main()
