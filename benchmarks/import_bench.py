"""Import throughput benchmark: records/s and peak memory, SQLite and PostgreSQL side by side.

Usage::

    .venv/bin/python benchmarks/import_bench.py --records 1000000
    .venv/bin/python benchmarks/import_bench.py --records 100000 --databases sqlite

It writes a synthetic canonical JSONL (mixed English and Korean facts, 5% with supersede
links, some consents), then imports it into each database in a fresh child process, so
each figure is that process's own wall time and peak resident memory (``ru_maxrss``). A
second import of the same file measures the idempotent re-import (every record unchanged).
PostgreSQL comes from ``MEMAUDIT_BENCH_PG_URL`` (default: the local test server) and runs in
a scratch schema that is dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"

EN = [
    "prefers {x} for package management",
    "lives in {x}",
    "works on project {x}",
    "wants answers in {x}",
    "had a meeting about {x} on Tuesday",
    "uses {x} for exports",
]
KO = ["{x}을(를) 선호함", "{x}에 거주함", "{x} 프로젝트를 진행 중", "답변은 {x}(으)로 원함"]
WORDS = [
    "pnpm",
    "npm",
    "Seoul",
    "Busan",
    "JSON",
    "CSV",
    "Korean",
    "English",
    "lighthouse",
    "signalbox",
    "서울",
    "부산",
    "한국어",
    "영어",
]

CHILD = """
import json, resource, sys, time
from auditor.config import load_settings
from auditor.sources.importer import Importer
from auditor.sources.files import open_source
from auditor.store.db import Database

url, path = sys.argv[1], sys.argv[2]
settings = load_settings(database_url=url)
db = Database(settings)
db.upgrade()
out = []
for label in ("first import", "re-import"):
    t0 = time.perf_counter()
    report = Importer(db).run(open_source("jsonl", path, settings))
    took = time.perf_counter() - t0
    out.append({"label": label, "seconds": took, "read": report.read,
                "inserted": report.inserted, "unchanged": report.unchanged,
                "skipped": report.skipped})
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"runs": out, "peak_rss_mib": peak_kib / 1024}))
"""


def write_corpus(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            template = rng.choice(KO if rng.random() < 0.4 else EN)
            rec = {
                "memory_id": f"bench_{i:08d}",
                "subject": f"user:u{i // 40}",
                "namespace": "bench",
                "kind": "semantic",
                "category": rng.choice(["preference", "identity", "project", "constraint"]),
                "fact": "User " + template.format(x=rng.choice(WORDS)) + f" (note {i})",
                "confidence": round(rng.random(), 2),
                "source": {
                    "type": rng.choice(["explicit_statement", "inferred", "external_content"]),
                    "session_id": f"s{i // 10}",
                    "turn": i % 10,
                    "uri": None,
                },
                "created_at": "2026-01-03T08:00:00Z",
                "updated_at": "2026-01-03T08:00:00Z",
                "supersedes": f"bench_{i - 1:08d}" if i % 20 == 19 else None,
                "access_count": i % 7,
            }
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def run_child(url: str, path: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{proc.stderr}")
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--databases", default="sqlite,postgresql")
    args = parser.parse_args()
    dbs = [d.strip() for d in args.databases.split(",") if d.strip()]
    with tempfile.TemporaryDirectory(prefix="memaudit-bench-") as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        t0 = time.perf_counter()
        write_corpus(corpus, args.records)
        size_mib = corpus.stat().st_size / 2**20
        print(
            f"corpus: {args.records:,} records, {size_mib:,.1f} MiB "
            f"(written in {time.perf_counter() - t0:.1f}s)"
        )
        print(f"{'database':<12} {'run':<13} {'seconds':>9} {'records/s':>11} {'peak RSS':>10}")
        for name in dbs:
            if name == "sqlite":
                url = f"sqlite:///{Path(tmp) / 'bench.db'}"
                result = run_child(url, corpus)
            elif name == "postgresql":
                result = _run_pg(corpus)
            else:
                raise SystemExit(f"unknown database {name!r}")
            for run in result["runs"]:  # type: ignore[union-attr]
                rate = run["read"] / run["seconds"]
                print(
                    f"{name:<12} {run['label']:<13} {run['seconds']:>9.1f} {rate:>11,.0f} "
                    f"{result['peak_rss_mib']:>8.0f} MiB"
                )
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; "
        f"peak RSS is the whole child process (interpreter and libraries included)"
    )


def _run_pg(corpus: Path) -> dict[str, object]:
    from sqlalchemy import create_engine, make_url, text

    base = make_url(os.environ.get("MEMAUDIT_BENCH_PG_URL", DEFAULT_PG))
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = base.update_query_dict({"options": f"-csearch_path={schema}"})
        return run_child(url.render_as_string(hide_password=False), corpus)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
