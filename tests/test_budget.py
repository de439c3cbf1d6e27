"""Recall@budget: queries, cuts, strategies, AUC arithmetic, cap binding, the fixture corpus."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from auditor.detectors.base import MemoryView
from auditor.detectors.duplicates import Tokenizer, jaccard
from auditor.tools.budget import (
    AucValue,
    BudgetItem,
    SectionCap,
    apply_caps,
    auc,
    budget_fractions,
    cap_report,
    items_from_views,
    make_query,
    order,
    render,
    sweep,
)

FIXTURE = Path(__file__).parent / "fixtures" / "budget" / "corpus.jsonl"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


# The hand-computed corpus (83 characters). A and B are near-duplicates (Jaccard 3/5).
#   recency  : D B A C   cumulative chars 18 42 64 83
#   frequency: D A C B   (access 9, 5, 1, 0)   18 40 59 83
#   dedup    : D B C     (A dropped, B is newer) 18 42 61
# Queries (even token positions): A,B -> {alpha, gamma}; C -> {zeta, theta}; D -> {kappa, mu};
# the query of A is recalled by A or B (Jaccard 2/4), the one of B likewise.
SMALL = [
    BudgetItem("zeta eta theta iota", day(1), 1, "c", "C"),
    BudgetItem("alpha beta gamma delta", day(2), 5, "c", "A"),
    BudgetItem("alpha beta gamma epsilon", day(3), 0, "c", "B"),
    BudgetItem("kappa lambda mu nu", day(4), 9, "c", "D"),
]
SMALL_RECALL = {
    "recency": [0, 0, 0.25, 0.25, 0.25, 0.75, 0.75, 0.75, 0.75, 1.0],
    "frequency": [0, 0, 0.25, 0.25, 0.75, 0.75, 0.75, 1.0, 1.0, 1.0],
    "dedup": [0, 0, 0.25, 0.25, 0.25, 0.75, 0.75, 1.0, 1.0, 1.0],
}
SMALL_AUC = {  # (AUC over [0.1, 1.0], AUC over [0.1, 0.7])
    "recency": (0.425, 0.1875),
    "frequency": (0.525, 0.2375),
    "dedup": (0.475, 0.1875),
}


def load_fixture() -> list[BudgetItem]:
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    return [
        BudgetItem(
            text=r["text"],
            created_at=datetime.fromisoformat(r["created_at"].replace("Z", "+00:00")),
            access_count=r["access_count"],
            section=r["section"],
            item_id=r["item_id"],
        )
        for r in rows
    ]


# -- queries and grid ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("alpha beta gamma delta", {"alpha", "gamma"}),
        ("alpha beta gamma delta epsilon", {"alpha", "gamma", "epsilon"}),
        ("one", {"one"}),
        ("a b a c", {"a"}),  # positions 0 and 2 hold the same token
        ("Use pnpm, not npm!", {"use", "not"}),
        ("배포는 목요일 오후에만 한다", {"배포는", "오후에만"}),
        ("...", set()),
    ],
)
def test_query_is_the_even_token_positions(text: str, expected: set[str]) -> None:
    assert make_query(Tokenizer().tokens(text)) == frozenset(expected)


@pytest.mark.parametrize(
    ("step", "extra", "expected"),
    [
        (0.1, (), tuple(k / 10 for k in range(1, 11))),
        (0.25, (), (0.25, 0.5, 0.75, 1.0)),
        (0.2, (0.1, 0.7), (0.1, 0.2, 0.4, 0.6, 0.7, 0.8, 1.0)),
        (1.0, (), (1.0,)),
    ],
)
def test_budget_fractions(
    step: float, extra: tuple[float, ...], expected: tuple[float, ...]
) -> None:
    assert budget_fractions(step, extra) == pytest.approx(expected)


@pytest.mark.parametrize("step", [0, 0.3, 1.5, -0.1])
def test_bad_step(step: float) -> None:
    with pytest.raises(ValueError, match="^step:"):
        budget_fractions(step)


# -- AUC ------------------------------------------------------------------------------


GRID = [k / 10 for k in range(1, 11)]


@pytest.mark.parametrize(
    ("points", "lo", "hi", "expected"),
    [
        ([(x, 1.0) for x in GRID], 0.1, 1.0, 0.9),
        ([(x, 1.0) for x in GRID], 0.1, 0.7, 0.6),
        ([(x, x) for x in GRID], 0.1, 1.0, (1.0 - 0.01) / 2),
        ([(x, 0.0) for x in GRID[:-1]] + [(1.0, 1.0)], 0.1, 1.0, 0.05),
        ([(0.2, 0.0), (0.4, 1.0)], 0.3, 0.4, 0.1 * (0.5 + 1.0) / 2),  # interpolated end
        ([(0.4, 1.0), (0.2, 0.0)], 0.2, 0.4, 0.1),  # any order
    ],
)
def test_auc_trapezoid(
    points: list[tuple[float, float]], lo: float, hi: float, expected: float
) -> None:
    assert auc(points, lo, hi) == pytest.approx(expected)


@pytest.mark.parametrize(("lo", "hi"), [(0.05, 1.0), (0.1, 1.1), (0.5, 0.5), (0.7, 0.1)])
def test_auc_range_must_lie_inside_the_points(lo: float, hi: float) -> None:
    with pytest.raises(ValueError):
        auc([(x, 1.0) for x in GRID], lo, hi)


def test_auc_value_normalised() -> None:
    assert AucValue(0.1, 0.7, 0.3).normalised == pytest.approx(0.5)


# -- strategies, hand-computed -------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("recency", ["D", "B", "A", "C"]),
        ("frequency", ["D", "A", "C", "B"]),
        ("dedup", ["D", "B", "C"]),
    ],
)
def test_order(strategy: str, expected: list[str]) -> None:
    assert [SMALL[i].item_id for i in order(SMALL, strategy)] == expected


def test_frequency_ties_fall_back_to_recency() -> None:
    items = [BudgetItem("a", day(1), 2, item_id="old"), BudgetItem("b", day(2), 2, item_id="new")]
    assert [items[i].item_id for i in order(items, "frequency")] == ["new", "old"]


@pytest.mark.parametrize("strategy", ["recency", "frequency", "dedup"])
def test_small_sweep_by_hand(strategy: str) -> None:
    result = sweep(SMALL, strategies=[strategy])
    curve = result.curve(strategy)
    assert [p.char_budget for p in curve.points] == [8, 16, 24, 33, 41, 49, 58, 66, 74, 83]
    assert [p.recall for p in curve.points] == pytest.approx(SMALL_RECALL[strategy])
    full, partial = SMALL_AUC[strategy]
    assert curve.auc(0.1, 1.0).area == pytest.approx(full)
    assert curve.auc(0.1, 0.7).area == pytest.approx(partial)
    assert curve.auc(0.1, 1.0).normalised == pytest.approx(full / 0.9)


def test_small_sweep_statistics() -> None:
    result = sweep(SMALL)
    assert (result.items, result.total_chars, result.queries) == (4, 83, 4)
    assert (result.clusters, result.near_duplicates) == (3, 1)
    assert result.duplicate_share == pytest.approx(0.25)
    assert result.curve("recency").full_recall_at == pytest.approx(1.0)
    assert result.curve("dedup").full_recall_at == pytest.approx(0.8)
    assert result.dedup_gain(0.1, 1.0) == pytest.approx(0.475 / 0.525 - 1)


def test_prefix_cut_versus_fill() -> None:
    # at 41 chars recency takes D (18); B (24) does not fit. Prefix cut stops there; fill
    # skips B and takes A (22): D + A = 40 chars, recalling the queries of D, A and B.
    cut = sweep(SMALL, strategies=["recency"]).curve("recency").points[4]
    filled = sweep(SMALL, strategies=["recency"], fill=True).curve("recency").points[4]
    assert (cut.kept_items, cut.kept_chars, cut.recall) == (1, 18, 0.25)
    assert (filled.kept_items, filled.kept_chars, filled.recall) == (2, 40, 0.75)


@pytest.mark.parametrize(("match_threshold", "expected"), [(0.3, 1.0), (0.31, 0.5)])
def test_match_threshold_is_inclusive(match_threshold: float, expected: float) -> None:
    # the query of P is {t0, t2, t4}; Q holds those 3 among its 10 tokens: Jaccard 3/10
    items = [
        BudgetItem("t0 t1 t2 t3 t4 t5", day(1), item_id="P"),
        BudgetItem("t0 t2 t4 u1 u2 u3 u4 u5 u6 u7", day(2), item_id="Q"),
    ]
    result = sweep(items, strategies=["recency"], match_threshold=match_threshold)
    point = next(p for p in result.curve("recency").points if p.fraction == pytest.approx(0.7))
    assert (point.kept_items, point.recall) == (1, expected)


def test_items_without_tokens_have_no_query_but_cost_chars() -> None:
    items = [*SMALL, BudgetItem("!!! ???", day(0), item_id="E")]
    result = sweep(items)
    assert (result.queries, result.total_chars) == (4, 90)


def test_empty_corpus() -> None:
    result = sweep([])
    assert result.items == 0 and result.queries == 0
    assert all(p.recall == 1.0 for c in result.curves for p in c.points)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"strategies": ["random"]}, "strategies"),
        ({"strategies": []}, "strategies"),
        ({"cluster_threshold": 0.0}, "cluster_threshold"),
        ({"match_threshold": 1.2}, "match_threshold"),
        ({"step": 0.3}, "step"),
    ],
)
def test_bad_sweep_arguments(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name}:"):
        sweep(SMALL, **kwargs)  # type: ignore[arg-type]


def _reference_recall(
    items: list[BudgetItem], strategy: str, share: float, tok: Tokenizer
) -> float:
    """A brute-force sweep point: all pairs, no index."""
    lengths = [len(x.text) for x in items]
    budget = math.floor(share * sum(lengths) + 1e-9)
    sets = [tok.token_set(x.text) for x in items]
    newest = sorted(range(len(items)), key=lambda i: (items[i].created_at, items[i].item_id, i))
    rank = {i: r for r, i in enumerate(reversed(newest))}
    if strategy == "frequency":
        ordering = sorted(range(len(items)), key=lambda i: (-items[i].access_count, rank[i]))
    else:
        ordering = sorted(range(len(items)), key=lambda i: rank[i])
    if strategy == "dedup":
        parent = list(range(len(items)))

        def find(i: int) -> int:
            while parent[i] != i:
                i = parent[i]
            return i

        for i, j in itertools.combinations(range(len(items)), 2):
            if jaccard(sets[i], sets[j]) >= 0.5:
                parent[find(i)] = find(j)
        best: dict[int, int] = {}
        for i in ordering[::-1]:  # oldest first, so the newest ends up kept
            best[find(i)] = i
        ordering = [i for i in ordering if i in set(best.values())]
    kept, used = [], 0
    for i in ordering:
        if used + lengths[i] > budget:
            break
        kept.append(i)
        used += lengths[i]
    queries = [make_query(tok.tokens(x.text)) for x in items]
    queries = [q for q in queries if q]
    hit = sum(any(jaccard(q, sets[k]) >= 0.3 for k in kept) for q in queries)
    return hit / len(queries) if queries else 1.0


def test_sweep_matches_a_brute_force_reference() -> None:
    rng = random.Random(11)
    tok = Tokenizer()
    for _ in range(40):
        vocab = [f"w{i}" for i in range(rng.randint(4, 12))]
        items = [
            BudgetItem(
                " ".join(rng.choices(vocab, k=rng.randint(1, 7))),
                day(rng.randint(0, 30)),
                rng.randint(0, 4),
                item_id=f"i{k}",
            )
            for k in range(rng.randint(1, 15))
        ]
        result = sweep(items)
        for curve in result.curves:
            for point in curve.points:
                expected = _reference_recall(items, curve.name, point.fraction, tok)
                assert point.recall == pytest.approx(expected), (curve.name, point.fraction)


# -- caps --------------------------------------------------------------------------------


def _paper_like() -> list[BudgetItem]:
    """36 corrections of 25 chars (900) and 9 patterns of 70 chars (630), distinct words."""
    items = []
    for k in range(36):
        items.append(
            BudgetItem(
                f"correction{k:02d} x{k:02d}".ljust(25, "."), day(k), 0, "correction", f"c{k:02d}"
            )
        )
    for k in range(9):
        items.append(BudgetItem(f"pattern{k} y{k}".ljust(70, "."), day(k), 0, "pattern", f"p{k}"))
    return items


PAPER_CAPS = {"correction": SectionCap(12, 900), "pattern": SectionCap(6, 700)}


@pytest.fixture
def all_levels_logged() -> Iterator[None]:
    """structlog's defaults (no level filter) for the test, then the previous set-up."""
    saved = structlog.get_config()
    structlog.reset_defaults()
    try:
        yield
    finally:
        structlog.configure(**saved)


def test_count_caps_bind_first_the_papers_hidden_bug(all_levels_logged: None) -> None:
    items = _paper_like()
    with capture_logs() as logs:
        report = cap_report(items, PAPER_CAPS)
    assert report.both.fired == {"correction": "items", "pattern": "items"}
    assert report.both.kept_items == 18
    assert report.both.recall == pytest.approx(18 / 45)
    assert report.chars_only.fired == {"correction": "none", "pattern": "none"}
    assert (report.chars_only.kept_items, report.chars_only.recall) == (45, 1.0)
    assert report.items_only.kept_items == 18
    assert report.pooled_chars is not None and report.pooled_chars.kept_items == 45
    fired = [e for e in logs if e["event"] == "budget_cap_fired"]
    assert {(e["section"], e["cap"], e["caps"]) for e in fired} == {
        ("correction", "items", "both"),
        ("pattern", "items", "both"),
    }
    assert all("text" not in e and "fact" not in e for e in fired)


@pytest.mark.parametrize(
    ("caps", "fill", "fired", "kept"),
    [
        ({"s": SectionCap(max_items=2)}, False, "items", ["n3", "n2"]),
        ({"s": SectionCap(max_chars=25)}, False, "chars", ["n3"]),  # 10 + 20 > 25
        ({"s": SectionCap(max_chars=25)}, True, "chars", ["n3", "n1", "n0"]),  # skips the 20
        ({"s": SectionCap(max_items=2, max_chars=25)}, True, "both", ["n3", "n1"]),
        ({"s": SectionCap(max_items=9, max_chars=99)}, False, "none", ["n3", "n2", "n1", "n0"]),
        ({"*": SectionCap(max_items=1)}, False, "items", ["n3"]),
        ({"other": SectionCap(max_items=1)}, False, "none", ["n3", "n2", "n1", "n0"]),
    ],
)
def test_which_cap_fired(
    caps: dict[str, SectionCap], fill: bool, fired: str, kept: list[str]
) -> None:
    items = [
        BudgetItem("x" * 5, day(0), section="s", item_id="n0"),
        BudgetItem("x" * 10, day(1), section="s", item_id="n1"),
        BudgetItem("x" * 20, day(2), section="s", item_id="n2"),
        BudgetItem("x" * 10, day(3), section="s", item_id="n3"),
    ]
    got, outcomes = apply_caps(items, order(items, "recency"), caps, fill=fill)
    assert [items[i].item_id for i in got] == kept
    assert [o.fired for o in outcomes] == [fired]


def test_negative_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="caps"):
        apply_caps(SMALL, [0], {"c": SectionCap(max_items=-1)})


# -- the synthetic corpus ------------------------------------------------------------------


def test_dedup_beats_recency_and_frequency_on_a_corpus_with_near_duplicates() -> None:
    result = sweep(load_fixture(), caps=PAPER_CAPS)
    assert 0.25 <= result.duplicate_share <= 0.35
    dedup = result.curve("dedup")
    for other in ("recency", "frequency"):
        for lo, hi in ((0.1, 1.0), (0.1, 0.7)):
            assert dedup.auc(lo, hi).area > result.curve(other).auc(lo, hi).area
    assert result.curve("recency").points[-1].recall == 1.0
    assert result.caps is not None
    assert result.caps.both.fired == {"correction": "items", "pattern": "items"}
    assert result.caps.both.recall < result.caps.chars_only.recall


def test_render_is_a_small_table() -> None:
    text = render(sweep(SMALL, caps={"c": SectionCap(2, 60)}))
    lines = text.splitlines()
    assert "4 items, 83 chars, 4 queries; 1 near-duplicates (25.0%) in 3 clusters" in lines[0]
    assert lines[1].split() == ["budget", "chars", "recency", "frequency", "dedup"]
    assert lines[2].split() == ["10%", "8", "0.0000", "0.0000", "0.0000"]
    assert lines[11].split() == ["100%", "83", "1.0000", "1.0000", "1.0000"]
    assert "AUC [0.1, 1.0]       0.4250     0.5250     0.4750" in text
    assert "recall 1.0 at" in text and "dedup vs best other strategy" in text
    assert "c: 2 items + 60 chars -> items cap fired, kept 2 of 4 (42 chars)" in text


# -- from memory views -----------------------------------------------------------------


def test_items_from_views() -> None:
    views = [
        MemoryView(
            "m1",
            "user:a",
            "fact one",
            "user",
            category="preference",
            created_at=day(1),
            access_count=4,
            extra={"section": "correction"},
        ),
        MemoryView("m2", "user:a", "fact two", "user", category="project"),
        MemoryView("m3", "user:a", "fact three", "user", category="project"),
    ]
    items = items_from_views(views, access_counts={"m3": 7})
    assert [(i.item_id, i.section, i.access_count) for i in items] == [
        ("m1", "correction", 4),
        ("m2", "project", 0),
        ("m3", "project", 7),
    ]
    assert items[0].text == "fact one" and items[0].created_at == day(1)
