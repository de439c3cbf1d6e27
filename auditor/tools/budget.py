"""Recall@budget: which memories to keep in a briefing with a fixed character budget.

Reproduces the sweep of the de-duplication paper (``shared/SEEDS.md`` section 5) on any list
of memories (one subject, or a whole store), with three keep strategies:

* ``recency``: newest first (``created_at``, then ``updated_at``, then id), then cut;
* ``frequency``: most accessed first (``access_count``), newest first among equals, then cut;
* ``dedup``: link items whose token sets have Jaccard >= ``cluster_threshold`` (0.5) into
  clusters (union-find), keep the newest item of each cluster, order those by recency, cut.

Method, as in the paper:

* the corpus size is its length in characters; a budget is a share of it (10%, 20%, ...,
  100% with ``step=0.1``), ``floor(share * total)`` characters;
* "cut" walks the strategy's order and stops at the first item that no longer fits (a
  prefix); ``fill=True`` skips it and keeps trying shorter items instead;
* one query per item: the tokens at its even positions (0, 2, 4, ...), a deterministic
  sub-sequence; items without tokens have no query;
* a query is recalled at a budget when some kept item's token set has Jaccard >=
  ``match_threshold`` (0.3) with the query's token set; recall@budget = the share of
  queries recalled;
* AUC: the trapezoid rule over the (budget, recall) points, reported over [0.1, 1.0] and
  [0.1, 0.7] (range ends off the grid are added as extra budget points). ``area`` is the
  raw integral (at most the range's width), ``normalised`` divides by the width.

Tokenisation and clustering are those of the duplicates detector
(:mod:`auditor.detectors.duplicates`), so the sweep measures what the detector would do.

Caps (the paper's hidden bug). A product briefing often has per-section caps on both the
item count and the characters (12 corrections + 6 patterns, 900 + 700 characters). Which of
the two binds depends on the average item length; :func:`apply_caps` fills each section in
a strategy's order and records which cap fired (``items``, ``chars`` or ``none``), logs it
(``budget_cap_fired``), and :func:`cap_report` compares both caps with each cap alone and
with one pooled character budget (the sum of the section character caps).

Everything here is a pure function over :class:`BudgetItem` lists; no database.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Literal

import structlog

from auditor.detectors.duplicates import (
    DEFAULT_THRESHOLD,
    EPS,
    Tokenizer,
    clusters,
    jaccard,
    newest_key,
    similar_pairs,
)

if TYPE_CHECKING:
    from auditor.detectors.base import MemoryView

__all__ = [
    "ANY_SECTION",
    "AUC_RANGES",
    "DEFAULT_MATCH_THRESHOLD",
    "DEFAULT_STEP",
    "STRATEGIES",
    "AucValue",
    "BudgetItem",
    "BudgetPoint",
    "CapReport",
    "CapRun",
    "SectionCap",
    "SectionOutcome",
    "StrategyCurve",
    "SweepResult",
    "apply_caps",
    "auc",
    "budget_fractions",
    "cap_report",
    "items_from_views",
    "make_query",
    "order",
    "recall",
    "render",
    "sweep",
]

log = structlog.get_logger(__name__)

DEFAULT_STEP = 0.1
DEFAULT_MATCH_THRESHOLD = 0.3
#: the AUC ranges the paper reports
AUC_RANGES: tuple[tuple[float, float], ...] = ((0.1, 1.0), (0.1, 0.7))
STRATEGIES: tuple[str, ...] = ("recency", "frequency", "dedup")
#: the section name that carries the cap of every section not named in a caps mapping
ANY_SECTION = "*"

Strategy = Literal["recency", "frequency", "dedup"]
CapName = Literal["items", "chars", "both", "none"]


@dataclass(frozen=True, slots=True)
class BudgetItem:
    """One memory as the briefing sees it.

    Attributes:
        text: the memory's text (its length in characters is its cost).
        created_at: creation time (naive: UTC; missing: oldest).
        access_count: how often it was retrieved (the frequency strategy).
        section: the briefing section it belongs to (e.g. ``correction``, ``pattern``).
        item_id: a stable id, the last tie-breaker of "newest".
        updated_at: last update, the second key of "newest".
    """

    text: str
    created_at: datetime | None = None
    access_count: int = 0
    section: str = "default"
    item_id: str = ""
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class BudgetPoint:
    """Recall of one strategy at one budget."""

    fraction: float
    char_budget: int
    kept_items: int
    kept_chars: int
    recalled: int
    recall: float


@dataclass(frozen=True, slots=True)
class AucValue:
    """Area under a recall@budget curve over ``[lo, hi]``."""

    lo: float
    hi: float
    area: float

    @property
    def normalised(self) -> float:
        """The area divided by the range's width (the mean recall over the range)."""
        return self.area / (self.hi - self.lo)


@dataclass(frozen=True, slots=True)
class StrategyCurve:
    """One strategy's sweep."""

    name: str
    points: tuple[BudgetPoint, ...]
    aucs: tuple[AucValue, ...]

    @property
    def full_recall_at(self) -> float | None:
        """The smallest budget share with recall 1.0, or None."""
        return next((p.fraction for p in self.points if p.recall >= 1.0 - EPS), None)

    def auc(self, lo: float, hi: float) -> AucValue:
        """The AUC over ``[lo, hi]``.

        Raises:
            KeyError: that range was not computed.
        """
        for value in self.aucs:
            if math.isclose(value.lo, lo) and math.isclose(value.hi, hi):
                return value
        raise KeyError(f"no AUC over [{lo}, {hi}]")


@dataclass(frozen=True, slots=True)
class SectionCap:
    """A section's caps; None means no cap of that kind."""

    max_items: int | None = None
    max_chars: int | None = None


@dataclass(frozen=True, slots=True)
class SectionOutcome:
    """What the caps did to one section.

    Attributes:
        fired: ``items`` (the count cap stopped the section), ``chars`` (an item did not fit
            the character cap), ``both`` (with ``fill``: items were skipped for their length,
            then the count cap stopped the section), ``none`` (every item was kept).
    """

    section: str
    available: int
    kept: int
    kept_chars: int
    max_items: int | None
    max_chars: int | None
    fired: CapName


@dataclass(frozen=True, slots=True)
class CapRun:
    """One cap configuration applied to the corpus."""

    label: str
    sections: tuple[SectionOutcome, ...]
    kept_items: int
    kept_chars: int
    recall: float

    @property
    def fired(self) -> dict[str, CapName]:
        """Section -> the cap that fired in it."""
        return {s.section: s.fired for s in self.sections}


@dataclass(frozen=True, slots=True)
class CapReport:
    """Both caps together versus each alone, in one strategy's order."""

    strategy: str
    both: CapRun
    items_only: CapRun
    chars_only: CapRun
    pooled_chars: CapRun | None


@dataclass(frozen=True, slots=True)
class SweepResult:
    """The outcome of :func:`sweep`.

    Attributes:
        items: corpus size in items.
        total_chars: corpus size in characters.
        queries: how many queries (items with at least one token).
        clusters: how many de-duplication clusters (singletons included).
        near_duplicates: items the dedup strategy drops (older members of a cluster).
        curves: one per strategy, in the order asked.
        caps: the cap report, when caps were given.
    """

    items: int
    total_chars: int
    queries: int
    clusters: int
    near_duplicates: int
    cluster_threshold: float
    match_threshold: float
    step: float
    fill: bool
    curves: tuple[StrategyCurve, ...]
    caps: CapReport | None = None

    @property
    def duplicate_share(self) -> float:
        """The share of items that are older near-duplicates."""
        return self.near_duplicates / self.items if self.items else 0.0

    def curve(self, name: str) -> StrategyCurve:
        """The curve of strategy ``name``.

        Raises:
            KeyError: that strategy was not swept.
        """
        for c in self.curves:
            if c.name == name:
                return c
        raise KeyError(name)

    def dedup_gain(self, lo: float, hi: float) -> float | None:
        """Relative AUC gain of ``dedup`` over the best other strategy on ``[lo, hi]``.

        Returns:
            ``dedup / best_other - 1``, or None when dedup or another strategy is missing
            or the best other area is zero.
        """
        names = {c.name for c in self.curves}
        if "dedup" not in names or len(names) < 2:
            return None
        best = max(c.auc(lo, hi).area for c in self.curves if c.name != "dedup")
        return self.curve("dedup").auc(lo, hi).area / best - 1.0 if best > 0 else None


# -- building blocks ---------------------------------------------------------------------


def make_query(tokens: Sequence[str]) -> frozenset[str]:
    """The query of an item: its tokens at even positions (0, 2, 4, ...), as a set.

    Args:
        tokens: the item's tokens in order.

    Returns:
        The query's token set (empty for an item without tokens).
    """
    return frozenset(tokens[::2])


def budget_fractions(step: float = DEFAULT_STEP, extra: Iterable[float] = ()) -> tuple[float, ...]:
    """The budget shares of a sweep: ``step, 2*step, ..., 1.0`` plus ``extra`` points.

    Args:
        step: the grid step, a divisor of 1 (0.1, 0.05, 0.2, ...).
        extra: more shares to include (AUC range ends off the grid).

    Returns:
        Sorted, distinct shares in (0, 1].

    Raises:
        ValueError: a step that is not in (0, 1] or does not divide 1, or an extra share
            outside (0, 1].
    """
    if not 0.0 < step <= 1.0:
        raise ValueError(f"step: must be in (0, 1], not {step!r}")
    n = round(1.0 / step)
    if not math.isclose(n * step, 1.0, abs_tol=1e-9):
        raise ValueError(f"step: must divide 1 (0.1, 0.05, 0.2, ...), not {step!r}")
    shares = {round(k / n, 9) for k in range(1, n + 1)}
    for value in extra:
        if not 0.0 < value <= 1.0:
            raise ValueError(f"AUC range end {value!r} is outside (0, 1]")
        shares.add(round(value, 9))
    return tuple(sorted(shares))


def auc(points: Sequence[tuple[float, float]], lo: float, hi: float) -> float:
    """Area under a piecewise-linear curve over ``[lo, hi]`` (trapezoid rule).

    Ends that fall between points are interpolated linearly.

    Args:
        points: ``(x, y)`` pairs, any order, distinct x.
        lo: the range's start.
        hi: the range's end.

    Returns:
        The area (not normalised).

    Raises:
        ValueError: ``lo >= hi`` or a range outside the points' x span.
    """
    pts = sorted(points)
    if lo >= hi:
        raise ValueError(f"AUC range [{lo}, {hi}] is empty")
    if not pts or lo < pts[0][0] - EPS or hi > pts[-1][0] + EPS:
        raise ValueError(f"AUC range [{lo}, {hi}] is outside the swept budgets")

    def at(x: float) -> float:
        for (x0, y0), (x1, y1) in pairwise(pts):
            if x0 - EPS <= x <= x1 + EPS:
                return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        return pts[-1][1]

    xs = [lo] + [x for x, _ in pts if lo + EPS < x < hi - EPS] + [hi]
    ys = [at(x) for x in xs]
    segments = zip(pairwise(xs), pairwise(ys), strict=True)
    return sum((x1 - x0) * (y0 + y1) / 2 for (x0, x1), (y0, y1) in segments)


def _recency_key(item: BudgetItem, index: int) -> tuple[datetime, datetime, str, int]:
    return (*newest_key(item.created_at, item.updated_at, item.item_id), index)


def order(
    items: Sequence[BudgetItem],
    strategy: str,
    tokenizer: Tokenizer | None = None,
    cluster_threshold: float = DEFAULT_THRESHOLD,
) -> list[int]:
    """A strategy's keep order: item positions, most wanted first.

    Args:
        items: the corpus.
        strategy: ``recency``, ``frequency`` or ``dedup`` (dedup leaves out the older
            members of each cluster).
        tokenizer: the tokenizer for ``dedup`` (default: the detector's default).
        cluster_threshold: Jaccard threshold that links items (``dedup``).

    Returns:
        Positions in ``items``.

    Raises:
        ValueError: an unknown strategy or a bad threshold.
    """
    by_recency = sorted(range(len(items)), key=lambda i: _recency_key(items[i], i), reverse=True)
    if strategy == "recency":
        return by_recency
    if strategy == "frequency":
        rank = {i: r for r, i in enumerate(by_recency)}
        return sorted(range(len(items)), key=lambda i: (-items[i].access_count, rank[i]))
    if strategy == "dedup":
        tok = tokenizer or Tokenizer()
        kept = set(_dedup_keep(items, [tok.token_set(x.text) for x in items], cluster_threshold))
        return [i for i in by_recency if i in kept]
    raise ValueError(f"strategy: must be one of {', '.join(STRATEGIES)}, not {strategy!r}")


def _dedup_keep(
    items: Sequence[BudgetItem], sets: Sequence[frozenset[str]], threshold: float
) -> list[int]:
    """The newest position of each cluster (singletons included)."""
    search = similar_pairs(sets, threshold, max_postings=None)
    return [
        max(group, key=lambda i: _recency_key(items[i], i))
        for group in clusters(len(items), search.pairs)
    ]


def _cut(
    ordering: Sequence[int], lengths: Sequence[int], char_budget: int, fill: bool
) -> list[int]:
    kept: list[int] = []
    used = 0
    for i in ordering:
        if used + lengths[i] > char_budget:
            if fill:
                continue
            break
        kept.append(i)
        used += lengths[i]
    return kept


def _query_matches(
    queries: Sequence[frozenset[str]], sets: Sequence[frozenset[str]], threshold: float
) -> list[frozenset[int]]:
    """For each query, the items whose token set matches it (Jaccard >= threshold).

    An exact join with prefix filtering, as in :func:`similar_pairs`: tokens are ordered by
    rarity in the corpus, items are indexed by their prefixes and queries probe theirs.
    """
    freq = Counter(tok for s in sets for tok in s)

    def prefix(s: frozenset[str]) -> list[str]:
        toks = sorted(s, key=lambda t: (freq.get(t, 0), t))
        return toks[: len(toks) - math.ceil(threshold * len(toks) - EPS) + 1]

    index: dict[str, list[int]] = {}
    for i, s in enumerate(sets):
        for tok in prefix(s) if s else ():
            index.setdefault(tok, []).append(i)
    out: list[frozenset[int]] = []
    for q in queries:
        candidates: set[int] = set()
        for tok in prefix(q) if q else ():
            candidates.update(index.get(tok, ()))
        out.append(frozenset(i for i in candidates if jaccard(q, sets[i]) >= threshold - EPS))
    return out


def recall(kept: Iterable[int], matches: Sequence[frozenset[int]]) -> tuple[int, float]:
    """How many queries the kept items recall, and the share.

    Args:
        kept: positions of the kept items.
        matches: for each query, the positions of the items that match it.

    Returns:
        ``(recalled, recall)``; recall is 1.0 for no queries.
    """
    keep = set(kept)
    hit = sum(1 for m in matches if not m.isdisjoint(keep))
    return hit, (hit / len(matches) if matches else 1.0)


def _cap_for(caps: Mapping[str, SectionCap], section: str) -> SectionCap:
    return caps.get(section) or caps.get(ANY_SECTION) or SectionCap()


def apply_caps(
    items: Sequence[BudgetItem],
    ordering: Sequence[int],
    caps: Mapping[str, SectionCap],
    *,
    fill: bool = False,
    label: str = "caps",
    log_fired: bool = True,
) -> tuple[list[int], tuple[SectionOutcome, ...]]:
    """Fill each section in ``ordering`` until one of its caps fires.

    A section not named in ``caps`` takes the ``"*"`` entry, or no cap. The count cap fires
    when the section is full and another of its items is waiting; the character cap fires
    when the next item does not fit (``fill=True`` skips it and tries the next ones).

    Args:
        items: the corpus.
        ordering: positions, most wanted first (e.g. from :func:`order`).
        caps: section -> its caps.
        fill: keep trying shorter items after a character overflow.
        label: names the configuration in the ``budget_cap_fired`` log events.
        log_fired: log a ``budget_cap_fired`` event (info) per section whose cap fired;
            off for counterfactual runs.

    Returns:
        The kept positions and one outcome per section (sorted by section name).

    Raises:
        ValueError: a negative cap.
    """
    _check_caps(caps)
    available: dict[str, int] = {}
    for it in items:
        available[it.section] = available.get(it.section, 0) + 1
    kept_n: dict[str, int] = dict.fromkeys(available, 0)
    used: dict[str, int] = dict.fromkeys(available, 0)
    fired: dict[str, CapName] = dict.fromkeys(available, "none")
    closed: set[str] = set()
    kept: list[int] = []
    for i in ordering:
        item = items[i]
        sec = item.section
        if sec in closed:
            continue
        cap = _cap_for(caps, sec)
        if cap.max_items is not None and kept_n[sec] >= cap.max_items:
            fired[sec] = "both" if fired[sec] == "chars" else "items"
            closed.add(sec)
            continue
        if cap.max_chars is not None and used[sec] + len(item.text) > cap.max_chars:
            if fired[sec] == "none":
                fired[sec] = "chars"
            if not fill:
                closed.add(sec)
            continue
        kept.append(i)
        kept_n[sec] += 1
        used[sec] += len(item.text)
    outcomes = _section_outcomes(caps, available, kept_n, used, fired)
    if log_fired:
        _log_fired(outcomes, label)
    return kept, outcomes


def _check_caps(caps: Mapping[str, SectionCap]) -> None:
    """Refuse a negative cap (:class:`ValueError`)."""
    for name, cap in caps.items():
        for value in (cap.max_items, cap.max_chars):
            if value is not None and value < 0:
                raise ValueError(f"caps[{name!r}]: caps must be >= 0, not {value}")


def _section_outcomes(
    caps: Mapping[str, SectionCap],
    available: Mapping[str, int],
    kept_n: Mapping[str, int],
    used: Mapping[str, int],
    fired: Mapping[str, CapName],
) -> tuple[SectionOutcome, ...]:
    """One outcome per section, sorted by section name."""
    return tuple(
        SectionOutcome(
            section=sec,
            available=available[sec],
            kept=kept_n[sec],
            kept_chars=used[sec],
            max_items=_cap_for(caps, sec).max_items,
            max_chars=_cap_for(caps, sec).max_chars,
            fired=fired[sec],
        )
        for sec in sorted(available)
    )


def _log_fired(outcomes: Iterable[SectionOutcome], label: str) -> None:
    """A ``budget_cap_fired`` event (info) per section whose cap fired."""
    for o in outcomes:
        if o.fired != "none":
            log.info(
                "budget_cap_fired",
                caps=label,
                section=o.section,
                cap=o.fired,
                kept=o.kept,
                available=o.available,
                kept_chars=o.kept_chars,
                max_items=o.max_items,
                max_chars=o.max_chars,
            )


def _cap_run(
    label: str,
    items: Sequence[BudgetItem],
    ordering: Sequence[int],
    caps: Mapping[str, SectionCap],
    matches: Sequence[frozenset[int]],
    fill: bool,
) -> CapRun:
    kept, outcomes = apply_caps(
        items, ordering, caps, fill=fill, label=label, log_fired=label == "both"
    )
    _, share = recall(kept, matches)
    return CapRun(
        label=label,
        sections=outcomes,
        kept_items=len(kept),
        kept_chars=sum(len(items[i].text) for i in kept),
        recall=share,
    )


def cap_report(
    items: Sequence[BudgetItem],
    caps: Mapping[str, SectionCap],
    *,
    strategy: str = "recency",
    tokenizer: Tokenizer | None = None,
    cluster_threshold: float = DEFAULT_THRESHOLD,
    match_threshold: float = DEFAULT_MATCH_THRESHOLD,
    fill: bool = False,
    matches: Sequence[frozenset[int]] | None = None,
) -> CapReport:
    """Which cap binds: both caps, each alone, and one pooled character budget.

    Args:
        items: the corpus.
        caps: section -> caps (``"*"``: every other section).
        strategy: the order sections are filled in.
        tokenizer: tokenizer of queries and clusters (default: the detector's default).
        cluster_threshold: the dedup threshold (when ``strategy`` is ``dedup``).
        match_threshold: the query match threshold.
        fill: keep trying shorter items after a character overflow.
        matches: precomputed query matches (from a sweep), or None.

    Returns:
        The four runs; ``pooled_chars`` is None when no section has a character cap.
    """
    tok = tokenizer or Tokenizer()
    if matches is None:
        sets = [tok.token_set(x.text) for x in items]
        queries = [q for q in (make_query(tok.tokens(x.text)) for x in items) if q]
        matches = _query_matches(queries, sets, match_threshold)
    ordering = order(items, strategy, tok, cluster_threshold)
    items_only = {k: SectionCap(max_items=c.max_items) for k, c in caps.items()}
    chars_only = {k: SectionCap(max_chars=c.max_chars) for k, c in caps.items()}
    sections = {x.section for x in items}
    char_caps = [_cap_for(caps, s).max_chars for s in sections]
    pooled: CapRun | None = None
    if any(c is not None for c in char_caps):
        total = sum(c for c in char_caps if c is not None)
        if any(c is None for c in char_caps):
            total = sum(len(x.text) for x in items)  # an uncapped section: no pooled limit
        pooled_items = [
            BudgetItem(x.text, x.created_at, x.access_count, "pooled", x.item_id, x.updated_at)
            for x in items
        ]
        pooled = _cap_run(
            "pooled_chars",
            pooled_items,
            ordering,
            {"pooled": SectionCap(max_chars=total)},
            matches,
            fill,
        )
    return CapReport(
        strategy=strategy,
        both=_cap_run("both", items, ordering, caps, matches, fill),
        items_only=_cap_run("items_only", items, ordering, items_only, matches, fill),
        chars_only=_cap_run("chars_only", items, ordering, chars_only, matches, fill),
        pooled_chars=pooled,
    )


# -- the sweep ---------------------------------------------------------------------------


def sweep(
    items: Sequence[BudgetItem],
    *,
    step: float = DEFAULT_STEP,
    strategies: Sequence[str] = STRATEGIES,
    cluster_threshold: float = DEFAULT_THRESHOLD,
    match_threshold: float = DEFAULT_MATCH_THRESHOLD,
    auc_ranges: Sequence[tuple[float, float]] = AUC_RANGES,
    fill: bool = False,
    tokenizer: Tokenizer | None = None,
    caps: Mapping[str, SectionCap] | None = None,
    cap_strategy: str = "recency",
) -> SweepResult:
    """Recall@budget of each strategy over budgets ``step..100%`` of the corpus's characters.

    Args:
        items: the corpus (a subject's memories, or a store's).
        step: the budget grid step (a divisor of 1).
        strategies: which strategies to sweep, in report order.
        cluster_threshold: Jaccard threshold that links near-duplicates (dedup).
        match_threshold: Jaccard threshold at which a kept item recalls a query.
        auc_ranges: ``(lo, hi)`` budget ranges to integrate over.
        fill: keep trying shorter items after a character overflow (default: prefix cut).
        tokenizer: tokenizer (default: the duplicates detector's default).
        caps: per-section caps to analyse as well (see :func:`cap_report`), or None.
        cap_strategy: the order in which the caps are filled.

    Returns:
        The curves, AUCs, corpus statistics and the optional cap report.

    Raises:
        ValueError: a bad step, threshold, strategy or AUC range.
    """
    _check_sweep_args(cluster_threshold, match_threshold, strategies)
    fractions = budget_fractions(step, (x for r in auc_ranges for x in r))
    tok = tokenizer or Tokenizer()
    sets = [tok.token_set(x.text) for x in items]
    queries = [q for q in (make_query(tok.tokens(x.text)) for x in items) if q]
    matches = _query_matches(queries, sets, match_threshold)
    lengths = [len(x.text) for x in items]
    total = sum(lengths)
    dedup_kept = _dedup_keep(items, sets, cluster_threshold)
    curves: list[StrategyCurve] = []
    for name in strategies:
        ordering = order(items, name, tok, cluster_threshold)
        curves.append(_curve(name, ordering, lengths, total, fractions, matches, auc_ranges, fill))
    report = None
    if caps is not None:
        report = cap_report(
            items,
            caps,
            strategy=cap_strategy,
            tokenizer=tok,
            cluster_threshold=cluster_threshold,
            match_threshold=match_threshold,
            fill=fill,
            matches=matches,
        )
    return SweepResult(
        items=len(items),
        total_chars=total,
        queries=len(queries),
        clusters=len(dedup_kept),
        near_duplicates=len(items) - len(dedup_kept),
        cluster_threshold=cluster_threshold,
        match_threshold=match_threshold,
        step=step,
        fill=fill,
        curves=tuple(curves),
        caps=report,
    )


def _check_sweep_args(
    cluster_threshold: float, match_threshold: float, strategies: Sequence[str]
) -> None:
    """Refuse a threshold outside (0, 1] or an unknown (or no) strategy (:class:`ValueError`)."""
    for name, value in (
        ("cluster_threshold", cluster_threshold),
        ("match_threshold", match_threshold),
    ):
        if not 0.0 < value <= 1.0:
            raise ValueError(f"{name}: must be in (0, 1], not {value!r}")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"strategies: choose from {', '.join(STRATEGIES)}")


def _curve(
    name: str,
    ordering: Sequence[int],
    lengths: Sequence[int],
    total: int,
    fractions: Sequence[float],
    matches: Sequence[frozenset[int]],
    auc_ranges: Sequence[tuple[float, float]],
    fill: bool,
) -> StrategyCurve:
    """One strategy's recall at each budget share of the corpus (``total`` chars), and its AUCs."""
    points: list[BudgetPoint] = []
    for share in fractions:
        budget = math.floor(share * total + EPS)
        kept = _cut(ordering, lengths, budget, fill)
        hit, rec = recall(kept, matches)
        points.append(
            BudgetPoint(share, budget, len(kept), sum(lengths[i] for i in kept), hit, rec)
        )
    xy = [(p.fraction, p.recall) for p in points]
    aucs = tuple(AucValue(lo, hi, auc(xy, lo, hi)) for lo, hi in auc_ranges)
    return StrategyCurve(name, tuple(points), aucs)


def items_from_views(
    views: Iterable[MemoryView], access_counts: Mapping[str, int] | None = None
) -> list[BudgetItem]:
    """Budget items from memory views.

    The section is ``extra["section"]`` when present, else the memory's category. The access
    count is the view's own, unless ``access_counts`` (memory id -> count) overrides it.

    Args:
        views: memory views (a subject's, or a store's).
        access_counts: optional memory id -> access count.

    Returns:
        One item per view, in the same order.
    """
    out: list[BudgetItem] = []
    for v in views:
        if access_counts is not None and v.memory_id in access_counts:
            count = access_counts[v.memory_id]
        else:
            count = v.access_count
        section = v.extra.get("section")
        out.append(
            BudgetItem(
                text=v.fact,
                created_at=v.created_at,
                access_count=max(0, int(count)),
                section=str(section) if section else v.category,
                item_id=v.memory_id,
                updated_at=v.updated_at,
            )
        )
    return out


# -- rendering ---------------------------------------------------------------------------


def _num(x: float) -> str:
    return str(round(x, 4))


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.0f}%"


def _cap_text(cap: SectionOutcome) -> str:
    limits = []
    if cap.max_items is not None:
        limits.append(f"{cap.max_items} items")
    if cap.max_chars is not None:
        limits.append(f"{cap.max_chars} chars")
    return (
        f"  {cap.section}: {' + '.join(limits) or 'no cap'} -> {cap.fired} cap fired, "
        f"kept {cap.kept} of {cap.available} ({cap.kept_chars} chars)"
    )


def render(result: SweepResult) -> str:
    """A small plain-text table of a sweep.

    Args:
        result: a sweep.

    Returns:
        Lines: a header, one row per budget, the AUCs, full-recall budgets, the dedup gain
        and, when caps were analysed, which cap fired per section.
    """
    names = [c.name for c in result.curves]
    width = max(9, *(len(n) + 2 for n in names))
    lines = [
        f"recall@budget: {result.items} items, {result.total_chars:,} chars, "
        f"{result.queries} queries; {result.near_duplicates} near-duplicates "
        f"({result.duplicate_share * 100:.1f}%) in {result.clusters} clusters "
        f"(cluster Jaccard >= {result.cluster_threshold}, match >= {result.match_threshold}"
        f"{', fill' if result.fill else ''})",
        f"{'budget':>7} {'chars':>8}" + "".join(f"{n:>{width}}" for n in names),
    ]
    for k, first in enumerate(result.curves[0].points):
        row = f"{_pct(first.fraction):>7} {first.char_budget:>8,}"
        row += "".join(f"{c.points[k].recall:>{width}.4f}" for c in result.curves)
        lines.append(row)
    for value in result.curves[0].aucs:
        label = f"AUC [{_num(value.lo)}, {_num(value.hi)}]"
        lines.append(
            f"{label:<16}"
            + "".join(f"{c.auc(value.lo, value.hi).area:>{width}.4f}" for c in result.curves)
        )
    lines.append(
        f"{'recall 1.0 at':<16}"
        + "".join(f"{_pct(c.full_recall_at):>{width}}" for c in result.curves)
    )
    gains = []
    for value in result.curves[0].aucs:
        gain = result.dedup_gain(value.lo, value.hi)
        if gain is not None:
            gains.append(f"{gain * 100:+.1f}% over [{_num(value.lo)}, {_num(value.hi)}]")
    if gains:
        lines.append("dedup vs best other strategy: " + ", ".join(gains))
    if result.caps is not None:
        rep = result.caps
        lines.append(f"caps ({rep.strategy} order):")
        lines.extend(_cap_text(s) for s in rep.both.sections)
        runs = [rep.both, rep.items_only, rep.chars_only]
        if rep.pooled_chars is not None:
            runs.append(rep.pooled_chars)
        for run in runs:
            lines.append(
                f"  {run.label:<12} kept {run.kept_items} items, {run.kept_chars:,} chars, "
                f"recall {run.recall:.4f}"
            )
    return "\n".join(lines)
