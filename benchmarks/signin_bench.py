"""Sign-in benchmark: peak memory of N concurrent failed sign-ins, unbounded vs bounded.

Usage::

    .venv/bin/python benchmarks/signin_bench.py                # 40 concurrent sign-ins
    .venv/bin/python benchmarks/signin_bench.py --concurrent 16

Each case runs in a fresh Python process (so one case's peak does not hide the other's)
with a scratch SQLite store holding one officer account, and real argon2 parameters
(RFC 9106 defaults: 64 MiB per verification). N threads start together and each signs in
with a wrong password, half under the account's name and half under unknown names.

* ``before``: ``sign_in_max_concurrent`` = N (no effective bound: what memaudit did
  before the slots existed);
* ``after``: the default ``sign_in_max_concurrent`` (2).

Rate limits are raised out of the way in both cases so that every attempt reaches argon2.
It prints, side by side: the process's RSS after setup, its peak RSS (``ru_maxrss``),
the growth, the wall time and how the attempts ended (wrong password / told busy).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "benchmark password 123"


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _case(concurrent: int, slots: int | None) -> dict[str, object]:
    """Run one case in this process and return its figures."""
    sys.path.insert(0, str(ROOT))
    from auditor.access import accounts, signin
    from auditor.access.signin_limits import SignInBusyError
    from auditor.config import load_settings
    from auditor.errors import AuthError
    from auditor.store.db import Database

    folder = tempfile.mkdtemp(prefix="memaudit-signin-bench-")
    overrides: dict[str, object] = {
        "database_url": f"sqlite:///{folder}/bench.db",
        "sign_in_account_rate": 100_000,
        "sign_in_global_rate": 100_000,
        "sign_in_max_failures": 0,
        "sign_in_wait_seconds": 60,
    }
    if slots is not None:
        overrides["sign_in_max_concurrent"] = slots
    db = Database(load_settings(**overrides))
    db.upgrade()
    accounts.add_user(db, "bench-officer", role="officer", password=PASSWORD, by="bench")
    accounts.verify_password(None, "warm the dummy hash")  # computed once per process
    base_rss = _rss_mib()
    base_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    outcomes = {"wrong_password": 0, "busy": 0, "other": 0}
    lock = threading.Lock()
    barrier = threading.Barrier(concurrent)

    def one(i: int) -> None:
        name = "bench-officer" if i % 2 == 0 else f"nobody-{i}"
        barrier.wait()
        try:
            signin.authenticate(db, name, "not the password")
            kind = "other"
        except SignInBusyError:
            kind = "busy"
        except AuthError:
            kind = "wrong_password"
        with lock:
            outcomes[kind] += 1

    threads = [threading.Thread(target=one, args=(i,)) for i in range(concurrent)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    db.dispose()
    return {
        "slots": db.settings.sign_in_max_concurrent,
        "rss_after_setup_mib": round(base_rss, 1),
        "peak_before_storm_mib": round(base_peak, 1),
        "peak_rss_mib": round(peak, 1),
        "growth_mib": round(peak - base_rss, 1),
        "wall_s": round(wall, 2),
        **outcomes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrent", type=int, default=40)
    parser.add_argument("--case", choices=("before", "after"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case is not None:
        slots = args.concurrent if args.case == "before" else None
        print(json.dumps(_case(args.concurrent, slots)))
        return
    rows = {}
    for case in ("before", "after"):
        out = subprocess.run(
            [sys.executable, __file__, "--concurrent", str(args.concurrent), "--case", case],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows[case] = json.loads(out.strip().splitlines()[-1])
    print(f"{args.concurrent} concurrent failed sign-ins (argon2 RFC 9106 defaults, 64 MiB each)")
    keys = list(rows["before"])
    print(f"{'':24}{'before':>12}{'after':>12}")
    for key in keys:
        print(f"{key:24}{rows['before'][key]!s:>12}{rows['after'][key]!s:>12}")


if __name__ == "__main__":
    main()
