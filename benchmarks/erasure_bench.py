"""Erasure at scale: one heavy subject in a large store, SQLite and PostgreSQL side by side.

Usage::

    .venv/bin/python benchmarks/erasure_bench.py                       # 10,000 of 150,000
    .venv/bin/python benchmarks/erasure_bench.py --store 20000 --subject 2000 --databases sqlite

Each database runs in a fresh child process: the store is built with Core bulk inserts
(``--store`` memories over subjects of 40 memories each, one subject holding
``--subject`` of them; one finding per 10 memories with its link; a consent and an
account for the heavy subject), then ``erase_subject`` runs once and the figures are
printed: the time to build, the PII model's one-off load, the erasure's phases (wall
clock and this process's CPU time: on a shared machine the wall clock includes waiting
for a core; PostgreSQL's own work is in the wall clock only) (values collected, delete, storage
reclaimed, verification; cumulative) from its progress lines, the total, the receipt's verdict and
the peak resident memory. PostgreSQL comes from ``MEMAUDIT_BENCH_PG_URL`` (default: the
local test server) and runs in a scratch schema that is dropped afterwards.

``--encryption off`` (the default here) measures the search and the delete alone
(``MEMAUDIT_ENCRYPTION=off``). ``--encryption on`` is memaudit's own default (a master key
beside the store, a data key per subject): the built store is sealed first, untimed
(``migrate_store``, as ``memaudit encrypt-store`` does), and the erasure then destroys the
subject's key before anything else; collecting the values decrypts the subject's facts
and the shared-value pass decrypts every other fact once. ``--encryption both`` runs the
two side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"

CHILD = r"""
import json, resource, sys, time
from datetime import UTC, datetime
from sqlalchemy import insert
from auditor.config import load_settings
from auditor.store.db import Database
from auditor.store.models import Consent, Finding, FindingMemory, Memory, Principal
from auditor.hashing import content_hash
from auditor.erasure import requests as erasure

url, store_n, subject_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
encrypted = sys.argv[4] == "on"
settings = load_settings(database_url=url)
db = Database(settings)
db.upgrade()
HEAVY = "user:heavy.bench"
now = datetime.now(UTC)
WORDS = ["Seoul", "Busan", "pnpm", "JSON", "lighthouse", "signalbox", "Lisbon", "tea"]

def memory(i, subject, fact):
    return {
        "memory_id": f"mem_{i:08d}", "subject": subject, "namespace": "bench",
        "kind": "semantic", "category": "preference", "fact": fact, "confidence": 0.9,
        "source_type": "explicit_statement", "trust_tier": "user", "status": "active",
        "status_source": "memaudit", "created_at": now, "updated_at": now,
        "changed_at": now, "access_count": 0, "content_hash": content_hash(fact),
        "extra": {}, "version": 1,
    }

t0 = time.perf_counter()
rows, findings, links = [], [], []
def flush():
    with db.engine.begin() as conn:
        if rows:
            conn.execute(insert(Memory), rows)
        if findings:
            conn.execute(insert(Finding), findings)
            conn.execute(insert(FindingMemory), links)
    rows.clear(); findings.clear(); links.clear()

others = store_n - subject_n
for i in range(store_n):
    if i < subject_n:
        subject = HEAVY
        fact = (f"User's order {i} ships to {i} Rose Street, email heavy{i}@example.com, "
                f"prefers {WORDS[i % len(WORDS)]}")
    else:
        subject = f"user:u{(i - subject_n) // 40}"
        fact = f"User prefers {WORDS[i % len(WORDS)]} for task {i} (note {i * 7})"
    rows.append(memory(i, subject, fact))
    if i % 10 == 0:
        fid = f"fnd_{i:08d}"
        findings.append({
            "finding_id": fid, "fingerprint": fid, "rule_id": "MA-BENCH-001",
            "category": "sensitive", "severity": "low", "status": "open",
            "evidence": {"snippets": {f"mem_{i:08d}": "[redacted]"}},
            "first_seen": now, "last_seen": now,
        })
        links.append({"finding_id": fid, "memory_id": f"mem_{i:08d}"})
    if len(rows) >= 5000:
        flush()
flush()
with db.write() as s:
    s.add(Consent(subject=HEAVY, category="health", granted_at=now))
    s.add(Principal(username="heavy.bench", role="user", subject=HEAVY,
                    display_name="Heavy Bench", email="heavy.bench@example.com",
                    password_hash="x"))
built = time.perf_counter() - t0
if encrypted:
    from auditor.store.crypto_migrate import migrate_store
    assert db.cipher is not None, "encryption asked for, but the store has no key store"
    t_seal = time.perf_counter()
    migrate_store(db)
    built += time.perf_counter() - t_seal

# load the PII detector first: its model load (spaCy) is a one-off per process
from auditor.erasure.values import _pii_spans
t_load = time.perf_counter()
_pii_spans(["warm up"], settings)
model_load = time.perf_counter() - t_load

marks = []
def progress(line):
    marks.append((time.perf_counter(), time.process_time(), line))
t1, c1 = time.perf_counter(), time.process_time()
receipt = erasure.erase_subject(db, HEAVY, actor="officer.bench", progress=progress)
total, cpu = time.perf_counter() - t1, time.process_time() - c1

def at(prefix):
    for t, c, line in marks:
        if prefix in line:
            return [t - t1, c - c1]
    return None
phases = {
    "values collected": at("deleting "),
    "deleted": at("deleted: "),
    "storage reclaimed": at("verifying:"),
    "verified + receipt": [total, cpu],
}
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({
    "built_s": built, "model_load_s": model_load, "total_s": total, "cpu_s": cpu,
    "phases": phases, "verdict": receipt.verdict,
    "memories_erased": receipt.data["counts"]["memories"],
    "findings_deleted": receipt.data["counts"]["findings_deleted"],
    "values_searched": receipt.data["verification"]["values"].get("searched"),
    "tables_searched": receipt.data["verification"]["searched"].get("tables"),
    "peak_rss_mib": peak,
    "data_key": "destroyed" if "destroyed" in str(receipt.data.get("data_key", "")) else "-",
}))
"""


def _pg_schema(base: str) -> tuple[str, str]:
    from sqlalchemy import create_engine, make_url, text

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    engine = create_engine(base)
    with engine.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine.dispose()
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False), schema


def _drop(base: str, schema: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(base)
    with engine.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    engine.dispose()


def run_one(url: str, store: int, subject: int, work: Path, encryption: str) -> dict[str, object]:
    env = {**os.environ, "MEMAUDIT_LOG_LEVEL": "warning"}
    for name in ("MEMAUDIT_MASTER_KEY", "MEMAUDIT_KEY_DIR", "MEMAUDIT_ENCRYPTION"):
        env.pop(name, None)
    if encryption == "on":
        keys = work / f"keys-{uuid.uuid4().hex[:8]}"
        keys.mkdir(mode=0o700)
        env["MEMAUDIT_MASTER_KEY"] = os.urandom(32).hex()
        env["MEMAUDIT_KEY_DIR"] = str(keys)
    else:
        env["MEMAUDIT_ENCRYPTION"] = "off"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(store), str(subject), encryption],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr[-3000:]}")
    line = done.stdout.strip().splitlines()[-1]
    result: dict[str, object] = json.loads(line)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=int, default=150_000, help="memories in the store")
    parser.add_argument("--subject", type=int, default=10_000, help="memories of the subject")
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument(
        "--encryption",
        choices=["off", "on", "both"],
        default="both",
        help="encryption at rest of the store (on: memaudit's default)",
    )
    args = parser.parse_args()
    modes = ["off", "on"] if args.encryption == "both" else [args.encryption]
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="memaudit-erasure-bench-") as tmp:
        work = Path(tmp)
        for name in args.databases.split(","):
            for mode in modes:
                column = name if len(modes) == 1 else f"{name}/{'enc' if mode == 'on' else 'clear'}"
                if name == "sqlite":
                    db_file = work / f"bench-{mode}.db"
                    results[column] = run_one(
                        f"sqlite:///{db_file}", args.store, args.subject, work, mode
                    )
                elif name == "postgresql":
                    base = os.environ.get("MEMAUDIT_BENCH_PG_URL", DEFAULT_PG)
                    url, schema = _pg_schema(base)
                    try:
                        results[column] = run_one(url, args.store, args.subject, work, mode)
                    finally:
                        _drop(base, schema)
                else:
                    raise SystemExit(f"unknown database {name!r}")
    print(f"erasure of one subject with {args.subject:,} memories in a store of {args.store:,}")
    names = list(results)
    print(f"{'':36}" + "".join(f"{n:>18}" for n in names))
    print("(store built (s) includes sealing it, untimed by the erasure, when encrypted)")
    rows = [("store built (s)", "built_s"), ("PII model load (s, once)", "model_load_s")]
    for label, key in rows:
        print(f"{label:36}" + "".join(f"{float(results[n][key]):>18.1f}" for n in names))
    for phase in ("values collected", "deleted", "storage reclaimed", "verified + receipt"):
        cells = []
        for n in names:
            value = results[n]["phases"].get(phase)  # type: ignore[attr-defined]
            cells.append(f"{value[0]:>11.1f} /{value[1]:>5.1f}" if value else f"{'-':>18}")
        print(f"{'  at ' + phase + ' (wall/cpu s)':36}" + "".join(cells))
    for label, key in (
        ("erasure total, wall (s)", "total_s"),
        ("erasure total, CPU (s)", "cpu_s"),
        ("peak RSS (MiB)", "peak_rss_mib"),
    ):
        print(f"{label:36}" + "".join(f"{float(results[n][key]):>18.1f}" for n in names))
    for label, key in (
        ("memories erased", "memories_erased"),
        ("findings deleted", "findings_deleted"),
        ("values searched", "values_searched"),
        ("tables searched", "tables_searched"),
        ("verdict", "verdict"),
        ("subject's data key", "data_key"),
    ):
        print(f"{label:36}" + "".join(f"{str(results[n][key]):>18}" for n in names))


if __name__ == "__main__":
    main()
