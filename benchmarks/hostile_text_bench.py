"""Cost per character of every pattern outside the detectors, on hostile text.

Usage::

    .venv/bin/python benchmarks/hostile_text_bench.py
    .venv/bin/python benchmarks/hostile_text_bench.py --size 262144 --small 32768 --json

For each target of :func:`auditor.tools.hostile.targets` (log scrubbing and each of its
patterns, evidence snippets, record validation, terminal cleaning, the judge's fence, the
``control_chars`` detector, connectors' parsing) and each hostile input of
:data:`auditor.tools.hostile.UNITS`, the time on ``--size`` characters (default: the largest
allowed fact, ``Settings.max_fact_bytes``) and on ``--small`` characters is measured (best
of ``--repeat``, in CPU time: other processes on the machine do not count). It prints, per
target, the worst input's cost in nanoseconds per character and the growth ratio (large /
small time: linear work grows by the size ratio, 8 by default; a quadratic pattern by its
square). A linear baseline (one ``str.translate`` pass) is measured in the same run, so
figures from a busy machine can be read relative to it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.config import Settings  # noqa: E402
from auditor.tools.hostile import UNITS, hostile, targets  # noqa: E402


def _best(fn: Callable[[str], object], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        fn(text)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=Settings().max_fact_bytes)
    parser.add_argument("--small", type=int, default=None, help="default: size / 8")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", default=None, help="only targets whose name contains this")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    small = args.small or args.size // 8
    table = str.maketrans("abc", "xyz")
    baseline = _best(lambda t: t.translate(table), hostile("word run", args.size), args.repeat)
    rows = []
    for name, fn in targets().items():
        if args.only and args.only not in name:
            continue
        worst = ("", 0.0, 0.0)
        for unit in UNITS:
            big = _best(fn, hostile(unit, args.size), args.repeat)
            if big > worst[1]:
                little = _best(fn, hostile(unit, small), args.repeat)
                worst = (unit, big, big / max(little, 1e-6))
        rows.append(
            {
                "target": name,
                "worst_input": worst[0],
                "seconds": round(worst[1], 4),
                "ns_per_char": round(worst[1] / args.size * 1e9, 1),
                "growth": round(worst[2], 1),
            }
        )
    if args.json:
        print(json.dumps({"size": args.size, "small": small, "rows": rows}, indent=2))
        return
    print(
        f"hostile text: {args.size:,} characters (growth measured against {small:,}; "
        f"linear = {args.size / small:.0f}x); baseline str.translate "
        f"{baseline / args.size * 1e9:.1f} ns/char"
    )
    print(f"{'target':<46} {'worst input':<16} {'seconds':>8} {'ns/char':>9} {'growth':>7}")
    for r in rows:
        print(
            f"{r['target']:<46} {r['worst_input']:<16} {r['seconds']:>8.4f} "
            f"{r['ns_per_char']:>9.1f} {r['growth']:>6.1f}x"
        )


if __name__ == "__main__":
    main()
