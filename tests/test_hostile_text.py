"""Linear time on hostile text: every pattern outside the detectors, fed the largest fact.

Each target of :func:`auditor.tools.hostile.targets` gets every hostile input of
:data:`auditor.tools.hostile.UNITS` at the largest allowed fact (``max_fact_bytes``) and at
an eighth of it. Linear work grows about 8 times; a pattern that rescans a run from every
position grows 64 times (and took seconds to minutes before: the e-mail scrub pattern, the
FTS ``USING`` clause parser). The bound is a growth ratio of CPU times measured in the same
test, so a slow or busy machine does not fail it; work that stays under 50 ms at the largest
size passes whatever its ratio (timer noise dominates there), and nothing may take over 5 s.
Figures per character: ``benchmarks/hostile_text_bench.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from auditor.config import Settings
from auditor.logging import scrub
from auditor.tools.hostile import UNITS, hostile, targets

LARGE = Settings().max_fact_bytes
SMALL = LARGE // 8
GROWTH_LIMIT = 24.0  # linear: 8; quadratic: 64
FLOOR_S = 0.05
CEILING_S = 5.0

#: the individual scrub patterns are covered by ``logging.scrub``, which runs them all
_TARGETS = {
    name: fn
    for name, fn in targets().items()
    if not name.startswith(("logging pattern", "logging.redact"))
}


def _best(fn: Callable[[str], object], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        fn(text)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_TARGETS))
def test_every_pattern_outside_the_detectors_grows_linearly(name: str) -> None:
    fn = _TARGETS[name]
    over = []
    for unit in UNITS:
        big_text, small_text = hostile(unit, LARGE), hostile(unit, SMALL)
        big = _best(fn, big_text, 1)
        if big <= FLOOR_S:
            continue
        small = _best(fn, small_text, 3)
        if big > GROWTH_LIMIT * small:
            big = _best(fn, big_text, 2)  # a second look before calling it super-linear
        if big > CEILING_S or (big > FLOOR_S and big > GROWTH_LIMIT * small):
            over.append(f"{unit}: {big:.3f}s at {LARGE:,} chars, {small:.4f}s at {SMALL:,}")
    assert over == [], f"{name} is not linear on: {over}"


def test_a_long_note_costs_what_a_short_one_does() -> None:
    # the dashboard froze for seconds on a 40,000-character reason passed through scrub
    note = hostile("local@domain.", 40_000)
    short = _best(lambda t: scrub(t, limit=500), note[:600], 5)
    long = _best(lambda t: scrub(t, limit=500), note, 5)
    assert long < max(5 * short, 0.005)
    assert scrub(note, limit=500) == scrub(note)[:500]


@pytest.mark.parametrize("unit", ["local@domain.", "word-at", "key header"])
def test_scrub_with_a_limit_is_the_prefix_of_the_full_scrub(unit: str) -> None:
    text = "mail jane.doe@example.org now " + hostile(unit, 3_000)
    assert scrub(text, limit=200) == scrub(text)[:200]
    assert "jane.doe" not in scrub(text, limit=200)


def test_scrub_still_masks_what_it_did() -> None:
    text = (
        "a.b+c@ex-ample.co.uk and x@y.z; -----BEGIN RSA PRIVATE KEY-----\nMIIE\n"
        "-----END RSA PRIVATE KEY----- then -----BEGIN PRIVATE KEY-----\nunterminated"
    )
    assert scrub(text) == "[EMAIL] and [EMAIL]; [PRIVATE_KEY] then [PRIVATE_KEY]"
    assert scrub("b" * 70 + "@example.org") == "b" * 6 + "[EMAIL]"  # local part: 64 at most
    assert scrub("@b.c@d.com") == "@[EMAIL]"
