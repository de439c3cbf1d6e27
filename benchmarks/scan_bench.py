"""Full-scan time of a large synthetic store on PostgreSQL (or SQLite), one process.

Usage::

    .venv/bin/python benchmarks/scan_bench.py --memories 1000000
    .venv/bin/python benchmarks/scan_bench.py --memories 100000 --database sqlite

Imports ``auditor.synthetic`` records into a scratch schema (PostgreSQL from
``MEMAUDIT_BENCH_PG_URL``, default the local test server) and times one full scan with the
shipped rule pack, as the daemon's leader runs it today (one replica; shards across
replicas come with the task queue). Peak RSS is the whole process.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, make_url, text

from auditor.config import load_settings
from auditor.importer import Importer
from auditor.logging import configure_logging
from auditor.rules import load_pack
from auditor.scan import Scanner
from auditor.sources import open_source
from auditor.store.db import Database
from auditor.synthetic import write_synthetic

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--database", choices=["postgresql", "sqlite"], default="postgresql")
    args = parser.parse_args()
    configure_logging("warning", "console")
    with tempfile.TemporaryDirectory(prefix="memaudit-scanbench-") as tmp:
        corpus = write_synthetic(Path(tmp) / "store.jsonl", args.memories)
        schema = f"scanbench_{uuid.uuid4().hex[:8]}"
        admin = None
        if args.database == "postgresql":
            base = make_url(os.environ.get("MEMAUDIT_BENCH_PG_URL", DEFAULT_PG))
            admin = create_engine(base)
            with admin.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA "{schema}"'))
            url = base.update_query_dict({"options": f"-csearch_path={schema}"})
            url_text = url.render_as_string(hide_password=False)
        else:
            url_text = f"sqlite:///{Path(tmp) / 'bench.db'}"
        try:
            db = Database(load_settings(database_url=url_text))
            db.upgrade()
            t0 = time.perf_counter()
            Importer(db, actor="bench").run(open_source("jsonl", corpus, db.settings))
            imported = time.perf_counter() - t0
            scanner = Scanner(db, load_pack())
            t0 = time.perf_counter()
            summary = scanner.run(full=True)
            took = time.perf_counter() - t0
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{args.database}: {args.memories:,} memories imported in {imported:.0f}s; "
                f"full scan {took:.0f}s = {args.memories / took:,.0f} memories/s, "
                f"{summary.findings_new:,} findings, peak RSS {peak:.0f} MiB, one replica"
            )
            db.dispose()
        finally:
            if admin is not None:
                with admin.begin() as conn:
                    conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()


if __name__ == "__main__":
    main()
