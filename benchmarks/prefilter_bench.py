"""The per-memory detectors with and without the one-pass prefilter, side by side.

Usage::

    .venv/bin/python benchmarks/prefilter_bench.py --memories 3000 --corpus realistic

Runs the rule pack's per-memory rules (no store: the engine alone) over the same memories
twice, prefilter off then on, and prints CPU milliseconds per memory (this process's CPU
time, steadier than wall-clock time on a shared machine), each detector's share of the
calls the prefilter spared, and whether the findings are identical (they must be).
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

from auditor.config import load_settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.records import parse_record
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import load_pack
from auditor.tools.realistic import corpora_roots, realistic_records, train_pool
from auditor.tools.synthetic import synthetic_records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--corpus", choices=("realistic", "synthetic"), default="realistic")
    args = parser.parse_args()
    settings = load_settings()
    pack = load_pack(settings.rules_dir)
    if args.corpus == "realistic":
        records = list(realistic_records(args.memories, pool=train_pool(corpora_roots(None))))
    else:
        records = list(synthetic_records(args.memories))
    views = [MemoryView.from_record(parse_record(r, "bench", settings), settings) for r in records]
    ctx = DetectContext(now=datetime.now(UTC), settings=settings)
    n = len(views)
    outputs = []
    print(f"{args.corpus}: {n:,} memories, per-memory rules only, CPU time of this process")
    for on in (False, True):
        engine = Engine(pack.active(), prefilter=on).load()
        engine.run(views[:20], ctx)  # builds and warms the detectors, untimed
        engine.start_profile()
        started = time.process_time()
        found = []
        for view in views:
            hits, _ = engine.run_memory(view, ctx)
            found.append(sorted((h.rule.id, repr(h.detection)) for h in hits))
        cpu = time.process_time() - started
        engine.stop_profile()
        outputs.append(found)
        spared = ", ".join(
            f"{label.split(' ')[0]} {count / n:.0%}" for label, count in engine.skipped.items()
        )
        print(
            f"prefilter {'on ' if on else 'off'}: {cpu / n * 1000:.3f} ms per memory "
            f"({n / cpu:,.0f} memories/s)" + (f"; spared: {spared}" if on else "")
        )
    print("findings identical:", outputs[0] == outputs[1], f"({sum(map(len, outputs[1])):,} hits)")


if __name__ == "__main__":
    main()
