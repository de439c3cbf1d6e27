"""Cost of encryption at rest: the same store with and without it, side by side, one run.

Usage::

    .venv/bin/python benchmarks/crypto_bench.py --memories 20000 --rounds 2
    .venv/bin/python benchmarks/crypto_bench.py --memories 20000 --database postgresql

For each round, the same synthetic store (:mod:`auditor.tools.synthetic`) is imported into a
fresh scratch database twice, once in clear (``MEMAUDIT_ENCRYPTION=off``) and once
encrypted (a master key and key folder of its own), the order alternating between rounds
so drift on a shared machine falls on both. Measured for each:

* import (ORM bulk insert; sealing is per row);
* a full scan with the shipped rule pack, one process (wall and CPU seconds of this
  process; with SQLite the store works in-process, so its CPU is counted);
* reading every fact once (``SELECT memory_id, fact``: the decryption cost alone);
* the officer's text search over every fact (SQL ``ILIKE`` in clear, decrypt-and-filter
  in Python when encrypted: :mod:`auditor.store.crypto_search`).

The overhead printed is encrypted / clear - 1 on the best (lowest) of the rounds. The
target of issue 11 is a full scan under 5% slower.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, func, make_url, select, text

from auditor.config import load_settings
from auditor.logging import configure_logging
from auditor.rulepack.pack import load_pack
from auditor.scan.scanner import Scanner
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.crypto_search import search_fact_ids
from auditor.store.db import Database
from auditor.store.models import Memory
from auditor.tools.synthetic import write_synthetic

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
MODES = ("clear", "encrypted")


@contextmanager
def _env(mode: str, keys: Path) -> Iterator[None]:
    saved = {
        k: os.environ.get(k)
        for k in ("MEMAUDIT_ENCRYPTION", "MEMAUDIT_MASTER_KEY", "MEMAUDIT_KEY_DIR")
    }
    if mode == "clear":
        os.environ["MEMAUDIT_ENCRYPTION"] = "off"
    else:
        os.environ.pop("MEMAUDIT_ENCRYPTION", None)
        os.environ["MEMAUDIT_MASTER_KEY"] = os.urandom(32).hex()
        os.environ["MEMAUDIT_KEY_DIR"] = str(keys)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _scratch(database: str, tmp: Path, tag: str) -> Iterator[str]:
    if database == "sqlite":
        yield f"sqlite:///{tmp / f'{tag}.db'}"
        return
    base = make_url(os.environ.get("MEMAUDIT_BENCH_PG_URL", DEFAULT_PG))
    schema = f"crypto_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield base.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
            hide_password=False
        )
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    started, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - started, time.process_time() - cpu, out


def _one(mode: str, source: Path, database: str, tmp: Path, tag: str) -> dict[str, float]:
    keys = tmp / f"{tag}-keys"
    with _env(mode, keys), _scratch(database, tmp, tag) as url:
        settings = load_settings(database_url=url)
        db = Database(settings)
        db.upgrade()
        assert (db.cipher is not None) == (mode == "encrypted")
        out: dict[str, float] = {}
        out["import_s"], out["import_cpu_s"], _ = _timed(
            lambda: Importer(db, actor="bench").run(open_source("jsonl", source, settings))
        )
        scanner = Scanner(db, load_pack())
        scanner.engine.load()  # detector start-up untimed, like the main bench
        out["scan_s"], out["scan_cpu_s"], _ = _timed(lambda: scanner.run(full=True, workers=1))

        def read_all() -> int:
            with db.session() as s:
                return sum(len(f) for _m, f in s.execute(select(Memory.memory_id, Memory.fact)))

        out["read_s"], out["read_cpu_s"], _ = _timed(read_all)

        def search() -> int:
            with db.session() as s:
                if db.cipher is None:
                    cond = Memory.fact.icontains("berlin", autoescape=True)
                    return int(s.scalar(select(func.count()).select_from(Memory).where(cond)) or 0)
                order = (Memory.changed_at.desc(), Memory.memory_id.desc())
                return len(search_fact_ids(s, "berlin", [], order))

        out["search_s"], _, hits = _timed(search)
        out["search_hits"] = float(hits)
        db.dispose()
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    configure_logging("warning", "console")
    results: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="memaudit-crypto-bench-") as tmp_name:
        tmp = Path(tmp_name)
        source = write_synthetic(tmp / "s.jsonl", args.memories)
        print("warm-up (untimed: lazy loads of the detectors) ...", flush=True)
        warm = write_synthetic(tmp / "warm.jsonl", 300, seed=3)
        for mode in MODES:
            _one(mode, warm, args.database, tmp, f"warm-{mode}")
        for r in range(args.rounds):
            order = MODES if r % 2 == 0 else tuple(reversed(MODES))
            for mode in order:
                print(f"round {r + 1}: {mode} ...", flush=True)
                results[mode].append(_one(mode, source, args.database, tmp, f"{mode}{r}"))
    best = {m: {k: min(x[k] for x in results[m]) for k in results[m][0]} for m in MODES}
    assert best["clear"]["search_hits"] == best["encrypted"]["search_hits"], "search differs"
    print(f"\n{args.memories:,} memories, {args.database}, best of {args.rounds} round(s)")
    print(f"{'':28}{'clear':>12}{'encrypted':>12}{'overhead':>10}")
    for key, label in (
        ("import_s", "import, wall (s)"),
        ("import_cpu_s", "import, CPU (s)"),
        ("scan_s", "full scan, wall (s)"),
        ("scan_cpu_s", "full scan, CPU (s)"),
        ("read_s", "read every fact, wall (s)"),
        ("read_cpu_s", "read every fact, CPU (s)"),
        ("search_s", "text search, all facts (s)"),
    ):
        c, e = best["clear"][key], best["encrypted"][key]
        print(f"{label:28}{c:12.3f}{e:12.3f}{(e / c - 1) if c else 0:10.1%}")
    print(
        f"{'search hits':28}{best['clear']['search_hits']:12.0f}"
        f"{best['encrypted']['search_hits']:12.0f}"
    )


if __name__ == "__main__":
    main()
