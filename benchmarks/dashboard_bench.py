"""Dashboard benchmark: the review queue's first page over 100,000 findings.

Usage::

    .venv/bin/python benchmarks/dashboard_bench.py                      # SQLite, 100,000 findings
    .venv/bin/python benchmarks/dashboard_bench.py --findings 20000
    .venv/bin/python benchmarks/dashboard_bench.py --database-url postgresql+psycopg://...

It seeds a scratch store with bulk inserts (SQLAlchemy Core: 20,000 memories of 2,000
subjects, N findings, 70% of them open, first seen over 90 days, one memory each and a
second one for every tenth), signs an officer in, then times

(a) ``auditor.access.officer_findings.review_queue``: the first page (50 open findings, newest
    first), as the page asks for it, and with a severity filter and a severity sort;
(b) the dashboard's review-queue page rendered by ``streamlit.testing.v1.AppTest`` (the
    whole script: sign-in check, filters, the service call, the table and the forms).

Each figure is the median of ``--repeat`` runs after one warm-up run (the first run's time
is printed too). The target: the first page renders within one second.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "benchmark password 123"
CATEGORIES = ("injection", "sensitive", "secret", "contradiction", "expired", "duplicate")
SEVERITIES = ("low", "medium", "high", "critical")
STATUSES = ("open",) * 7 + ("acknowledged", "resolved", "dismissed")


def seed(db: Any, findings: int, memories: int = 20_000, subjects: int = 2_000) -> None:
    """Bulk-insert memories and findings (no scan: the queue is what is measured)."""
    from auditor.store.models import Finding, FindingMemory, Memory

    rng = random.Random(7)
    now = datetime.now(UTC)
    mem_rows = [
        {
            "memory_id": f"mem_{i:08d}",
            "subject": f"user:{i % subjects}",
            "namespace": ("assistant-web", "coding-agent", "travel-bot")[i % 3],
            "kind": "semantic",
            "category": "preference",
            "fact": f"Synthetic fact number {i}",
            "source_type": "inferred",
            "trust_tier": ("user", "agent", "external")[i % 3],
            "status": "active",
            "status_source": "source",
            "created_at": now - timedelta(days=200),
            "updated_at": now - timedelta(days=200),
            "content_hash": uuid.UUID(int=rng.getrandbits(128)).hex * 2,
            "extra": {},
            "version": 1,
            "access_count": 0,
            "changed_at": now,
        }
        for i in range(memories)
    ]
    with db.write() as session:
        for start in range(0, len(mem_rows), 5_000):
            session.execute(insert(Memory), mem_rows[start : start + 5_000])
    batch: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for i in range(findings):
        seen = now - timedelta(seconds=rng.randrange(90 * 86_400))
        fid = f"fnd_{i:010d}"
        batch.append(
            {
                "finding_id": fid,
                "fingerprint": uuid.UUID(int=rng.getrandbits(128)).hex * 2,
                "rule_id": f"MA-BENCH-{i % 40:03d}",
                "category": CATEGORIES[i % len(CATEGORIES)],
                "severity": rng.choice(SEVERITIES),
                "status": rng.choice(STATUSES),
                "evidence": {"detector": "bench", "reason": "synthetic", "snippets": {}},
                "first_seen": seen,
                "last_seen": seen,
            }
        )
        links.append({"finding_id": fid, "memory_id": f"mem_{i % memories:08d}", "position": 0})
        if i % 10 == 0:
            links.append(
                {"finding_id": fid, "memory_id": f"mem_{(i + 1) % memories:08d}", "position": 1}
            )
        if len(batch) >= 5_000:
            with db.write() as session:
                session.execute(insert(Finding), batch)
                session.execute(insert(FindingMemory), links)
            batch, links = [], []
    if batch:
        with db.write() as session:
            session.execute(insert(Finding), batch)
            session.execute(insert(FindingMemory), links)
    if db.dialect == "postgresql":
        with db.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(first run, median of ``repeat`` later runs) in seconds."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return first, statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--database-url", default=None, help="default: a scratch SQLite file")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="memaudit-dashboard-bench-")
    url = args.database_url or f"sqlite:///{Path(tmp.name) / 'bench.db'}"
    os.environ["MEMAUDIT_DATABASE_URL"] = url
    os.environ.setdefault("MEMAUDIT_LOG_LEVEL", "error")
    sys.path.insert(0, str(ROOT / "dashboard"))

    from streamlit.testing.v1 import AppTest

    from auditor.access import accounts, signin
    from auditor.access import officer_findings as access_findings
    from auditor.access.officer_findings import QueueFilter
    from auditor.config import load_settings
    from auditor.store.db import Database

    db = Database(load_settings())
    db.upgrade()
    start = time.perf_counter()
    seed(db, args.findings)
    print(
        f"seeded {args.findings:,} findings in {time.perf_counter() - start:.1f} s ({db.dialect})"
    )
    accounts.add_user(db, "bench-officer", role="officer", password=PASSWORD, by="bench")
    actor = signin.authenticate(db, "bench-officer", PASSWORD)

    page = access_findings.review_queue(db, actor)
    print(f"open findings: {page.total:,}; first page: {len(page.rows)} rows")
    print("\n(a) access.review_queue, first page of 50")
    cases: list[tuple[str, Callable[[], Any]]] = [
        (
            "open, newest first (the page's default)",
            lambda: access_findings.review_queue(db, actor),
        ),
        (
            "open, severity high",
            lambda: access_findings.review_queue(db, actor, QueueFilter(severity="high")),
        ),
        ("open, by severity", lambda: access_findings.review_queue(db, actor, sort="-severity")),
        (
            "open, one subject",
            lambda: access_findings.review_queue(db, actor, QueueFilter(subject="user:42")),
        ),
        ("every status", lambda: access_findings.review_queue(db, actor, QueueFilter(status=None))),
    ]
    for label, fn in cases:
        first, median = timed(fn, args.repeat)
        print(f"  {label:<42} first {first * 1000:7.1f} ms   median {median * 1000:7.1f} ms")

    print("\n(b) the review-queue page rendered by AppTest (whole script)")
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=60)
    at.session_state["_memaudit_actor"] = actor
    start = time.perf_counter()
    at.run()  # the landing page (overview): imports, the cached store
    landing = time.perf_counter() - start
    assert not at.exception, [e.value for e in at.exception]

    def render() -> None:
        at.switch_page("views/review_queue.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.title[0].value == "Review queue"

    first, median = timed(render, args.repeat)
    print(f"  overview (first run of the app, imports included)  {landing * 1000:7.1f} ms")
    print(
        f"  review queue, first page                           first {first * 1000:7.1f} ms"
        f"   median {median * 1000:7.1f} ms"
    )
    verdict = "within" if median < 1.0 else "NOT within"
    print(f"\nthe first page renders {verdict} one second (median {median:.3f} s)")
    db.dispose()
    tmp.cleanup()
    return 0 if median < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
