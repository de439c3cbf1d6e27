"""Cost per character of every per-memory detector and pattern table on hostile text.

Usage::

    .venv/bin/python benchmarks/linear_time_bench.py            # 10,000 and 40,000 chars
    .venv/bin/python benchmarks/linear_time_bench.py --sizes 20000,80000 --only pii

For each adversarial input (:data:`SHAPES`: long runs of word
characters, digits, ``@``, dots, repeated delimiters, ...) at two sizes, it prints the CPU
microseconds per character of every per-memory detector of the rule pack, and of every
regex of the pattern tables (injection patterns, the secrets generic finder's patterns, the
PII recognizers' patterns), and the growth: the per-character cost at the larger size
divided by that at the smaller one. Linear work keeps the growth near 1; a quadratic
pattern shows about the size ratio (4 with the defaults). Figures are CPU time of this
process; compare the lines of one run.
"""

from __future__ import annotations

import argparse
import random
import string
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from auditor.config import load_settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import load_pack


def _random_run(n: int) -> str:
    """``n`` base64 characters from a fixed seed (high entropy, no whitespace)."""
    rng = random.Random(11)
    return "".join(rng.choice(_BASE64) for _ in range(n))


_BASE64 = string.ascii_letters + string.digits + "+/"

#: name -> a function giving a hostile text of about n characters
SHAPES: dict[str, Callable[[int], str]] = {
    "word chars": lambda n: "a" * n,
    "digits": lambda n: "7" * n,
    "at signs": lambda n: "@" * n,
    "dots": lambda n: "." * n,
    "word@word.": lambda n: ("ab@cd." * (n // 6 + 1))[:n],
    "a.b-": lambda n: ("a.b-" * (n // 4 + 1))[:n],
    "key=": lambda n: ("key=" * (n // 4 + 1))[:n],
    "spaces and digits": lambda n: ("1 " * (n // 2 + 1))[:n],
    "quotes": lambda n: ("'a" * (n // 2 + 1))[:n],
    "base64ish": lambda n: ("QUJD" * (n // 4 + 1))[:n],
    # one high-entropy run after a key word: a secret rule's filter once cost its square
    "key=random run": lambda n: ("api_key=" + _random_run(n))[:n],
    "ignore previous": lambda n: ("ignore previous " * (n // 16 + 1))[:n],
    "hangul": lambda n: "가" * n,
    "newlines": lambda n: "\n" * n,
}


def _cpu(fn: Callable[[], object]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def _tables() -> Iterator[tuple[str, Any]]:
    import regex  # Presidio's patterns are written for it (\p{...}); Presidio depends on it

    from auditor.detectors import _injection_patterns, pii, secrets_generic

    for p in _injection_patterns.PATTERNS:
        yield f"injection:{p.id}", p.regex
    for name in ("_ASSIGN", "_FLAG", "_PROSE", "_NETRC"):
        yield f"secrets_generic:{name}", getattr(secrets_generic, name)
    analyzer = pii._ENGINES and next(iter(pii._ENGINES.values()))
    if analyzer:
        for rec in analyzer.registry.recognizers:
            for pat in getattr(rec, "patterns", []) or []:
                flags = rec.global_regex_flags or (regex.DOTALL | regex.MULTILINE)
                yield f"pii:{rec.name}:{pat.name}", regex.compile(pat.regex, flags)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,40000")
    parser.add_argument("--only", default="", help="only detectors / tables containing this")
    parser.add_argument("--tables", action="store_true", help="also every pattern table regex")
    args = parser.parse_args()
    small, large = (int(x) for x in args.sizes.split(","))
    settings = load_settings()
    engine = Engine(load_pack(settings.rules_dir).active(), prefilter=False)
    ctx = DetectContext(now=datetime.now(UTC), settings=settings)
    print(f"CPU µs per character at {small:,} and {large:,} characters; growth = ratio")
    worst: list[tuple[float, str]] = []
    for group in engine.memory_groups:
        label = group.label
        if args.only and args.only not in label:
            continue
        det = group.detector
        for shape, make in SHAPES.items():
            per = []
            for n in (small, large):
                view = MemoryView("m", "user:a", make(n), "external")
                per.append(_cpu(lambda v=view, d=det: d.analyze(v, ctx)) / n * 1e6)
            growth = per[1] / per[0] if per[0] > 0 else 0.0
            worst.append((growth, f"{label} / {shape}"))
            print(f"{label[:40]:40s} {shape:18s} {per[0]:8.3f} {per[1]:8.3f}  x{growth:.1f}")
    if args.tables:
        for name, regex in _tables():
            if args.only and args.only not in name:
                continue
            for shape, make in SHAPES.items():
                per = []
                for n in (small, large):
                    text = make(n)
                    per.append(
                        _cpu(lambda t=text, r=regex: sum(1 for _ in r.finditer(t))) / n * 1e6
                    )
                growth = per[1] / per[0] if per[0] > 1e-3 else 1.0
                worst.append((growth, f"{name} / {shape}"))
                if growth > 2.5:
                    print(f"{name[:60]:60s} {shape:18s} {per[0]:8.3f} {per[1]:8.3f}  x{growth:.1f}")
    worst.sort(reverse=True)
    print("largest growth:", ", ".join(f"{w} x{g:.1f}" for g, w in worst[:8]))


if __name__ == "__main__":
    main()
