"""Full-scan time of a large store, with 1 and with N daemon replicas side by side.

Usage::

    .venv/bin/python benchmarks/scan_bench.py --memories 1000000 --replicas 0,1,2
    .venv/bin/python benchmarks/scan_bench.py --memories 100000 --database sqlite
    .venv/bin/python benchmarks/scan_bench.py --memories 100000 --corpus realistic

The store is synthetic (short template sentences, :mod:`auditor.tools.synthetic`) or realistic
(texts of the train splits of ``../shared/eval`` and ``../shared/train``, replicated with new
ids and long-tailed subjects, :mod:`auditor.tools.realistic`; ``--corpora DIR`` or
``MEMAUDIT_CORPORA_DIR`` point elsewhere).

PostgreSQL (``MEMAUDIT_BENCH_PG_URL``, default the local test server): for each replica
count the same synthetic store is imported into a scratch schema of its own, N real
``memaudit daemon`` processes are started (schedules off, so they only work shards), and
this process queues one full scan's shards (``--shards``) and waits for the run, exactly
as the leader's scan job does. The time is from queuing to the run's completion; peak RSS
is each replica's high-water mark. ``0`` replicas means no queue at all: this process scans
the shards itself (what ``memaudit scan`` does), the baseline for the queue's overhead.

SQLite: one in-process full scan (the daemon scans shards itself there).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from sqlalchemy import create_engine, make_url, text

from auditor.config import DEFAULT_SCHEDULE, load_settings
from auditor.logging import configure_logging
from auditor.rulepack.pack import load_pack
from auditor.scan.runs import DISPATCH_QUEUE
from auditor.scan.scanner import Scanner
from auditor.scan.shards import ShardQueue
from auditor.scan.workers import largest_first
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import ScanRun
from auditor.tools.realistic import CorporaMissing, write_realistic
from auditor.tools.synthetic import write_synthetic

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
ROOT = Path(__file__).resolve().parents[1]


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
            return bool(json.loads(resp.read()).get("shard_worker") == "ready")
    except OSError:
        return False


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of some processes (from /proc; gone ones count 0)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip().startswith("postgres"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _import(url: str, corpus: Path) -> tuple[Database, float]:
    db = Database(load_settings(database_url=url))
    db.upgrade()
    t0 = time.perf_counter()
    Importer(db, actor="bench").run(open_source("jsonl", corpus, db.settings))
    took = time.perf_counter() - t0
    with db.write() as session:  # "scanned before": replicas start no scan of their own
        session.add(ScanRun(mode="full", status="completed"))
    return db, took


def _replicated_scan(url: str, db: Database, replicas: int, shards: int) -> dict[str, float]:
    env = {
        **os.environ,
        "MEMAUDIT_DATABASE_URL": url,
        "MEMAUDIT_LOG_LEVEL": "warning",
        **{f"MEMAUDIT_SCHEDULE__{job.upper()}": "off" for job in DEFAULT_SCHEDULE},
    }
    ports = [_port() for _ in range(replicas)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "auditor", "daemon", "--health-port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    try:
        deadline = time.monotonic() + 180
        while not all(_ready(p) for p in ports):
            if time.monotonic() > deadline:
                raise SystemExit("replicas did not start")
            time.sleep(0.5)
        scanner = Scanner(db, load_pack())
        queue = ShardQueue(db)
        pg_pids = _postgres_pids()
        cpu0 = (_cpu_seconds([p.pid for p in procs]), _cpu_seconds(pg_pids))
        t0 = time.perf_counter()
        run_id = scanner.start(full=True, shards=shards, dispatch=DISPATCH_QUEUE)
        # the daemon's order: biggest shards first (auditor.daemon.runner)
        queue.defer(run_id, largest_first(scanner, run_id, range(shards)))
        status = queue.wait(run_id, lambda: False, poll=0.5)
        took = time.perf_counter() - t0
        replica_cpu = _cpu_seconds([p.pid for p in procs]) - cpu0[0]
        # backends started during the scan count too (new pids since the start)
        pg_cpu = _cpu_seconds(sorted(set(_postgres_pids()))) - cpu0[1]
        queue.close()
        summary = scanner.summary(run_id)
        peaks = [_peak_rss_mib(p.pid) for p in procs]
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=300)
    return {
        "seconds": took,
        "memories": summary.memories_scanned,
        "findings": summary.findings_new,
        "peak_rss_mib": max(peaks),
        "ok": float(status == "completed"),
        "replica_cpu_s": replica_cpu,
        "postgres_cpu_s": pg_cpu,
    }


def _inline_scan(db: Database, shards: int) -> dict[str, float]:
    t0 = time.perf_counter()
    summary = Scanner(db, load_pack()).run(full=True, shards=shards)
    return {
        "seconds": time.perf_counter() - t0,
        "memories": summary.memories_scanned,
        "findings": summary.findings_new,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "ok": float(summary.complete),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--database", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument(
        "--replicas", default="0,1,2", help="replica counts to compare (0: in-process)"
    )
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--corpus", choices=["synthetic", "realistic"], default="synthetic")
    parser.add_argument(
        "--corpora", type=Path, default=None, help="folder with eval/ and train/ (realistic)"
    )
    args = parser.parse_args()
    configure_logging("warning", "console")
    with tempfile.TemporaryDirectory(prefix="memaudit-scanbench-") as tmp:
        if args.corpus == "realistic":
            try:
                corpus = write_realistic(
                    Path(tmp) / "store.jsonl", args.memories, root=args.corpora
                )
            except CorporaMissing as exc:
                raise SystemExit(f"realistic corpus: {exc}") from None
        else:
            corpus = write_synthetic(Path(tmp) / "store.jsonl", args.memories)
        print(f"{args.corpus} store: {args.memories:,} memories", flush=True)
        if args.database == "sqlite":
            db, imported = _import(f"sqlite:///{Path(tmp) / 'bench.db'}", corpus)
            t0 = time.perf_counter()
            summary = Scanner(db, load_pack()).run(full=True)
            took = time.perf_counter() - t0
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"sqlite: {args.memories:,} memories imported in {imported:.0f}s; full scan "
                f"{took:.0f}s = {args.memories / took:,.0f} memories/s, "
                f"{summary.findings_new:,} findings, peak RSS {peak:.0f} MiB"
            )
            db.dispose()
            return
        base = make_url(os.environ.get("MEMAUDIT_BENCH_PG_URL", DEFAULT_PG))
        admin = create_engine(base)
        results: list[tuple[int, float, dict[str, float]]] = []
        try:
            for replicas in (int(x) for x in args.replicas.split(",")):
                schema = f"scanbench_{uuid.uuid4().hex[:8]}"
                with admin.begin() as conn:
                    conn.execute(text(f'CREATE SCHEMA "{schema}"'))
                url = base.update_query_dict({"options": f"-csearch_path={schema}"})
                url_text = url.render_as_string(hide_password=False)
                try:
                    db, imported = _import(url_text, corpus)
                    if replicas == 0:
                        r = _inline_scan(db, args.shards)
                    else:
                        r = _replicated_scan(url_text, db, replicas, args.shards)
                    db.dispose()
                finally:
                    with admin.begin() as conn:
                        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
                results.append((replicas, imported, r))
                who = f"{replicas} replica(s)" if replicas else "in-process, no queue"
                print(
                    f"postgresql, {who}, {args.shards} shards: "
                    f"{args.memories:,} memories imported in {imported:.0f}s; full scan "
                    f"{r['seconds']:.0f}s = {r['memories'] / r['seconds']:,.0f} memories/s, "
                    f"{r['findings']:,.0f} findings, peak RSS per replica "
                    f"{r['peak_rss_mib']:.0f} MiB, completed={bool(r['ok'])}"
                    + (
                        f"; CPU during the scan: replicas {r['replica_cpu_s']:.0f}s, "
                        f"PostgreSQL {r['postgres_cpu_s']:.0f}s "
                        f"({(r['replica_cpu_s'] + r['postgres_cpu_s']) / r['seconds']:.2f} "
                        f"of {os.cpu_count()} cores busy)"
                        if "replica_cpu_s" in r
                        else ""
                    ),
                    flush=True,
                )
        finally:
            admin.dispose()
        if len(results) > 1:
            one = next((r for n, _i, r in results if n == 1), results[0][2])
            for replicas, _imported, r in results:
                if replicas > 1:
                    print(
                        f"speed-up {replicas} replicas vs 1: {one['seconds'] / r['seconds']:.2f}x"
                    )


if __name__ == "__main__":
    main()
