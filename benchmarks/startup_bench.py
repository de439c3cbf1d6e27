"""CLI start-up benchmark: wall time of simple ``memaudit`` commands, median of N runs.

Usage::

    .venv/bin/python benchmarks/startup_bench.py
    .venv/bin/python benchmarks/startup_bench.py --repeat 5 --source /tmp/old-checkout

Each command runs in a fresh child process (``python -m auditor ...``), so each figure is
the whole start-up: the interpreter, the imports, settings, opening the store and the
command's own work. The listing commands read a scratch SQLite store loaded with the demo
(``memaudit init --demo``, not scanned); ``scan (empty)`` scans a second scratch store that
holds no memory, and ``guard`` judges one harmless candidate memory (it has to load the
detectors its rules need: it is listed for comparison, not held to the 1 s target).

``--source DIR`` puts another checkout's ``auditor`` package first on ``sys.path`` (same
interpreter, same installed libraries), so a before/after pair comes from one run of this
script on one machine: the figures are comparable side by side.

Bytecode: with ``PYTHONDONTWRITEBYTECODE=1`` in the environment (as on the project's build
machine) and libraries installed without ``.pyc`` files (``uv pip install`` compiles none),
every start compiles every imported module from source: that is most of a listing's time.
An installed package normally runs from cached bytecode. ``--bytecode`` chooses what is
timed: ``env`` (the environment as it is), ``cached`` (a private bytecode cache,
``PYTHONPYCACHEPREFIX`` in a temporary folder, filled by the untimed warm-up run; no
checkout or library folder is written to) or ``both`` (the default: a column each).

The target (issue 13): ``--help``, ``findings``, ``memories list`` and ``summary`` under 1 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.0

#: (label, arguments, store, held to the target)
COMMANDS: tuple[tuple[str, tuple[str, ...], str, bool], ...] = (
    ("--help", ("--help",), "demo", True),
    ("findings", ("findings",), "demo", True),
    ("memories list", ("memories", "list"), "demo", True),
    ("summary", ("summary",), "demo", True),
    ("scan (empty store)", ("scan", "--no-progress"), "empty", False),
    ("guard", ("guard", "--fact", "prefers tea in the morning"), "demo", False),
)


def _env(source: Path | None, db: Path, pycache: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["MEMAUDIT_DATABASE_URL"] = f"sqlite:///{db}"
    env["MEMAUDIT_LOG_LEVEL"] = "warning"
    env.pop("MEMAUDIT_CONFIG", None)
    if pycache is not None:  # bytecode cached (in a private folder), as an install runs
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if source is not None:
        env["PYTHONPATH"] = str(source) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(python: str, args: tuple[str, ...], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one ``memaudit`` run."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [python, "-m", "auditor", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    elapsed = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    # guard exits 1 for a quarantine/reject verdict; anything above that is a failure
    if done.returncode > 1:
        tail = done.stderr.decode("utf-8", "replace")[-400:]
        raise SystemExit(f"memaudit {' '.join(args)} exited {done.returncode}: {tail}")
    return elapsed, cpu


def measure(
    python: str, source: Path | None, repeat: int, cached: bool = False
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds per command label, from ``repeat`` runs each.

    Args:
        cached: run with a private bytecode cache (see the module docstring).
    """
    with tempfile.TemporaryDirectory(prefix="memaudit-startup-") as tmp:
        work = Path(tmp)
        pycache = work / "pycache" if cached else None
        stores = {"demo": work / "demo.db", "empty": work / "empty.db"}
        _run(python, ("init", "--demo"), _env(source, stores["demo"], pycache), work)
        _run(python, ("init",), _env(source, stores["empty"], pycache), work)
        figures: dict[str, tuple[float, float]] = {}
        for label, args, store, _held in COMMANDS:
            env = _env(source, stores[store], pycache)
            _run(python, args, env, work)  # warm the file cache and the bytecode
            runs = [_run(python, args, env, work) for _ in range(repeat)]
            figures[label] = (
                statistics.median(wall for wall, _ in runs),
                statistics.median(cpu for _, cpu in runs),
            )
        return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (median)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to time")
    parser.add_argument(
        "--source",
        type=Path,
        action="append",
        default=[],
        help="another checkout to time side by side (repeatable); the current one is always timed",
    )
    parser.add_argument(
        "--bytecode",
        choices=["env", "cached", "both"],
        default="both",
        help="time with the environment's bytecode setting, a private bytecode cache, or both",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    for source in args.source:
        if not (source / "auditor" / "__init__.py").is_file():
            parser.error(f"--source {source}: no auditor package there")
    modes = {"env": [False], "cached": [True], "both": [False, True]}[args.bytecode]
    no_write = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    columns: list[tuple[str, dict[str, tuple[float, float]]]] = []
    for cached in modes:
        how = (
            "bytecode cached"
            if cached
            else ("PYTHONDONTWRITEBYTECODE: installed .pyc only" if no_write else "environment")
        )
        for source in args.source:
            figures = measure(args.python, source.resolve(), args.repeat, cached)
            columns.append((f"{source}, {how}", figures))
        figures = measure(args.python, ROOT, args.repeat, cached)
        columns.append((f"{ROOT} (this checkout), {how}", figures))

    print(
        f"memaudit start-up, median of {args.repeat} runs, seconds of wall time / CPU time "
        f"(user + system; less sensitive to a busy machine); target < {TARGET_S} s wall"
    )
    load = os.getloadavg()[0]
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} CPUs")
    for index, (name, _) in enumerate(columns):
        print(f"  [{index}] {name}")
    header = f"{'command':<20}" + "".join(
        f"{'[' + str(i) + '] wall/cpu':>18}" for i in range(len(columns))
    )
    print(header)
    failed = False
    # held to the target: this checkout's last column (bytecode cached, when timed)
    held_column = columns[-1][1]
    for label, _args, _store, held in COMMANDS:
        cells = "".join(
            f"{figures[label][0]:>11.2f}/{figures[label][1]:<6.2f}" for _, figures in columns
        )
        mark = ""
        if held:
            ok = held_column[label][0] < TARGET_S
            failed = failed or not ok
            mark = f"  [{len(columns) - 1}] ok" if ok else f"  [{len(columns) - 1}] over target"
        print(f"{label:<20}{cells}{mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
