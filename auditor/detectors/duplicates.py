"""Near-duplicate memories of one subject: token-set Jaccard clusters, keep the newest.

The method is the one of the de-duplication paper (``shared/SEEDS.md`` section 5): two
memories whose token sets have a Jaccard similarity of at least ``threshold`` (0.5) are
linked; links are closed transitively (union-find), so a cluster is a connected component;
the newest memory of a cluster (``created_at``, then ``updated_at``, then ``memory_id``) is
kept and every older member is reported as its near-duplicate.

Tokenisation (:class:`~auditor.detectors.duplicate_tokens.Tokenizer`), kept deliberately
plain because the paper uses plain token sets:

* NFKC, then ``casefold`` (lower-casing that also folds ``ß``, full-width letters, ...);
* word tokens are maximal runs of ``\\w`` characters; a run is split where Hangul meets
  another script, so ``pnpm만`` gives ``pnpm`` and ``만`` (a particle glued to a Latin word);
* Hangul: ``hangul="word"`` (default, the paper's choice) keeps each Hangul run as one token,
  which makes particles count (``회의는`` and ``회의를`` differ); ``hangul="bigram"`` turns a
  run into character bigrams (a one-syllable run stays one token), which tolerates particles
  and endings and raises the similarity of Korean rewordings;
* no stop words by default (the paper's plain sets); ``stop_words`` drops a given list;
* ``words="stems"`` (not the paper's: issue 10, chosen on hand-written pairs) compares words
  by a light stem (the contradiction reader's), drops English function words
  (:data:`~auditor.detectors.duplicate_tokens.FUNCTION_WORDS`: not those carrying a
  negation, a direction, a time relation or a quantity) and cuts Korean particles and
  verb/copula endings before the Hangul mode applies: "editors" meets "editor", "배포합니다"
  meets "배포는"; it also writes one number or clock time one way ("3,000" and "3k" are
  "3000"; "2am", "02:00" and "two in the morning" are "t0200") and drops hedges of a number
  ("about", "roughly").

Chinese and Japanese text without spaces becomes one token per run; the detector is not
meant for them.

Candidate pairs come from an inverted token index with prefix filtering (AllPairs, Bayardo
et al. 2007): tokens are ordered by rarity, and two sets with Jaccard >= t must share a token
among the first ``|x| - ceil(t*|x|) + 1`` of each, so only those prefixes are indexed and
probed, plus a size filter (``t*|x| <= |y|``). The search is exact and close to linear on
memory-sized texts: common words rarely reach a prefix. Identical token sets are merged
first. ``max_postings`` bounds a posting list (the oldest entries are dropped): the cost
stays bounded on pathological groups at the price of possibly missed pairs, which are
counted and logged (``duplicate_postings_capped``).

One detection per older member, about the pair ``(kept, duplicate)``: a finding's
fingerprint (rule, memory ids, content hashes) then stays stable while the cluster grows
with older copies (one new finding per new copy, the others untouched), and changes only
when a newer memory becomes the one to keep, which changes the suggested resolution too.
A single detection per cluster would churn on every membership change and could not be
resolved copy by copy.

Entities:
    ``near_duplicate``: an older memory whose content a newer memory of the same subject
    repeats; score = the strength of its strongest link: the Jaccard similarity, or for a
    containment link the share of the shorter memory's tokens found in the longer one.

Params:
    threshold (float, 0 < t <= 1, default 0.5): the clustering threshold.
    stop_words (list of str, default []): tokens ignored (after normalisation).
    hangul ("word" | "bigram", default "word"): how Hangul runs are tokenised.
    max_postings (int >= 1, default 1000): longest posting list of the token index.
    partition_by (list of "namespace" | "category" | "kind", default []): compare only
        memories that agree on these fields as well as on the subject.
    numbers_must_match (bool, default false): do not link two memories whose tokens with
        digits differ (templated facts about different values: two flights, two ids); off
        by default, as in the paper. Details always say whether the numbers differ.
    conflicts_break_links (bool, default false): do not link two memories that the
        contradiction detector reads as conflicting (its pair judge and open-vocabulary
        frames, :func:`auditor.detectors.contradiction.offline_signals`: two values of one
        attribute, "the standup is on Mondays" / "... on Thursdays"; a statement and its
        negation; two numbers or dates): those are a contradiction, not a copy; nor two
        memories saying one relation of two different named things ("project A is licensed
        under MIT" / "project B ..."). A negated alternative ("X, not Y") or added detail
        still links.
    conflict_min_score (float in [0, 1], default 0): only conflict signals this strong
        break a link (the contradiction rules' ``min_score``, 0.55, in MA-DUP-001).
    words ("plain" | "stems", default "plain"): plain tokens, or stems (see above).
    containment (float in (0, 1] or null, default null): also link a memory whose tokens are
        at least this share contained in a longer one (a restatement that adds detail:
        "written in Go" / "written in Go 1.22 with chi"), when the pair's Jaccard is at
        least ``containment_floor`` (0.3) and the shorter memory has 3 tokens or more.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

import structlog

from auditor.config import tier_rank
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span
from auditor.detectors.contradiction import offline_signals
from auditor.detectors.duplicate_tokens import (
    Tokenizer,
)
from auditor.detectors.frame_pairs import (
    different_things,
    relation_swapped,
    substituted_value,
    typed_apart,
    typed_restatement,
)
from auditor.detectors.frame_people import about_a_relative_apart
from auditor.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_POSTINGS",
    "DEFAULT_THRESHOLD",
    "DuplicateDetector",
    "PairSearch",
    "Tokenizer",
    "clusters",
    "jaccard",
    "newest_key",
    "similar_pairs",
]

log = structlog.get_logger(__name__)

DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_POSTINGS = 1000
#: tolerance of threshold comparisons (Jaccard values are ratios of small integers)
EPS = 1e-9
PARTITION_FIELDS = ("namespace", "category", "kind")
_DIGIT = re.compile(r"\d")
_MIN_DATETIME = datetime.min.replace(tzinfo=UTC)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two token sets.

    Args:
        a: a token set.
        b: another token set.

    Returns:
        ``|a & b| / |a | b|``; 0.0 when both are empty (empty texts never link).
    """
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


@dataclass(frozen=True, slots=True)
class PairSearch:
    """The outcome of :func:`similar_pairs`.

    Attributes:
        pairs: ``(i, j, jaccard)`` with ``i < j`` (input positions), every pair of sets with
            Jaccard >= the threshold (unless ``dropped_postings`` > 0).
        verified: how many candidate pairs were compared exactly (the search's cost).
        dropped_postings: posting-list entries dropped by the ``max_postings`` cap; when
            positive, some qualifying pairs may be missing.
    """

    pairs: tuple[tuple[int, int, float], ...]
    verified: int
    dropped_postings: int


def similar_pairs(
    sets: Sequence[frozenset[str]],
    threshold: float = DEFAULT_THRESHOLD,
    max_postings: int | None = DEFAULT_MAX_POSTINGS,
) -> PairSearch:
    """Every pair of token sets with Jaccard >= ``threshold`` (prefix-filtered self-join).

    Identical non-empty sets are linked with similarity 1.0 to their first occurrence
    without being compared; distinct sets are searched with an inverted index over rarity
    prefixes (see the module docstring). Empty sets never link.

    Args:
        sets: token sets, by position.
        threshold: the similarity threshold, 0 < threshold <= 1.
        max_postings: the longest posting list kept (None: unbounded, exact).

    Returns:
        The pairs found and the search's cost.

    Raises:
        ValueError: a threshold outside (0, 1] or a cap below 1.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold: must be in (0, 1], not {threshold!r}")
    if max_postings is not None and max_postings < 1:
        raise ValueError(f"max_postings: must be at least 1, not {max_postings!r}")
    pairs: list[tuple[int, int, float]] = []
    first: dict[frozenset[str], int] = {}
    for i, s in enumerate(sets):
        if not s:
            continue
        head = first.setdefault(s, i)
        if head != i:
            pairs.append((head, i, 1.0))
    reps = sorted(first.items(), key=lambda item: (len(item[0]), item[1]))
    freq = Counter(tok for s, _ in reps for tok in s)
    ordered = [sorted(s, key=lambda t: (freq[t], t)) for s, _ in reps]
    index: dict[str, deque[int]] = {}
    verified = dropped = 0
    for x, toks in enumerate(ordered):
        size = len(toks)
        prefix = size - math.ceil(threshold * size - EPS) + 1
        min_size = threshold * size - EPS
        seen: set[int] = set()
        x_set, x_pos = reps[x]
        for tok in toks[:prefix]:
            posting = index.get(tok)
            if posting is None:
                posting = index[tok] = deque(maxlen=max_postings)
            for y in posting:
                if y in seen or len(ordered[y]) < min_size:
                    continue
                seen.add(y)
                verified += 1
                y_set, y_pos = reps[y]
                sim = jaccard(x_set, y_set)
                if sim >= threshold - EPS:
                    pairs.append((min(x_pos, y_pos), max(x_pos, y_pos), sim))
            if max_postings is not None and len(posting) == max_postings:
                dropped += 1
            posting.append(x)
    pairs.sort()
    return PairSearch(tuple(pairs), verified, dropped)


def clusters(n: int, pairs: Iterable[tuple[int, int, float]]) -> list[list[int]]:
    """Connected components of the linked pairs (union-find), singletons included.

    Args:
        n: how many items there are (positions ``0..n-1``).
        pairs: ``(i, j, similarity)`` links.

    Returns:
        Components as sorted position lists, ordered by their smallest position.
    """
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, _ in pairs:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def _aware(value: datetime | None) -> datetime:
    if value is None:
        return _MIN_DATETIME
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def newest_key(
    created_at: datetime | None, updated_at: datetime | None, item_id: str
) -> tuple[datetime, datetime, str]:
    """The sort key that makes "newest" well defined: created, then updated, then id.

    Missing timestamps sort oldest; naive ones are read as UTC.

    Args:
        created_at: creation time.
        updated_at: last update time.
        item_id: the id, the final tie-breaker.

    Returns:
        A key whose maximum is the newest item.
    """
    return (_aware(created_at), _aware(updated_at), item_id)


def _view_key(m: MemoryView) -> tuple[datetime, datetime, str]:
    return newest_key(m.created_at, m.updated_at, m.memory_id)


def _conflict(a: MemoryView, b: MemoryView, min_score: float = 0.0) -> bool:
    """Whether two facts conflict rather than repeat each other: the contradiction detector
    reads a conflict signal of at least ``min_score`` between them (two values of one
    attribute, a negated statement, two numbers or dates: :func:`offline_signals`), or they
    say one relation of two different named things."""
    if a.fact == b.fact:
        return False  # a copy word for word (most links of a store that repeats itself)
    older, newer = (a, b) if _view_key(a) <= _view_key(b) else (b, a)
    if any(sig.score >= min_score - EPS for sig in offline_signals(older.fact, newer.fact)):
        return True
    # one value swapped for another, even of a relation that holds many ("plays soccer on
    # Saturdays" / "plays tennis on Saturdays"): two facts, not one told twice
    if substituted_value(older.fact, newer.fact) or typed_apart(older.fact, newer.fact):
        return True
    if relation_swapped(older.fact, newer.fact):
        return True
    if about_a_relative_apart(older.fact, newer.fact):
        return True  # "Marcus got married on ..." / "Marcus's sister is getting married on ..."
    return different_things(a.fact, b.fact)


def _share_param(params: Mapping[str, Any], name: str, default: float | None) -> float | None:
    value = params.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(f"{name}: must be a number in (0, 1] or null")
    return float(value)


def _numbers(tokens: frozenset[str]) -> frozenset[str]:
    """The tokens that contain a digit (values: dates, amounts, ids)."""
    return frozenset(t for t in tokens if _DIGIT.search(t))


def _rank(tier: str) -> int | None:
    try:
        return tier_rank(tier)
    except ConfigError:
        return None


@dataclass
class _Member:
    """The best link of one memory: its highest similarity and to whom."""

    best: float = 0.0
    partner: int = -1


#: How many token lists the detector keeps, by content hash: each a tuple of interned tokens
#: (a few hundred bytes; 100,000 of them about 40 MB), so that an incremental scan of a big
#: subject does not tokenise the subject's other memories again.
_TOKEN_CACHE_SIZE = 100_000


class DuplicateDetector(Detector):
    """Near-duplicate memories of one subject (see the module docstring).

    Args:
        params: ``threshold``, ``stop_words``, ``hangul``, ``max_postings``,
            ``partition_by``, ``numbers_must_match``.

    Raises:
        ValueError: a bad parameter (the message names it).
    """

    name: ClassVar[str] = "duplicates"
    scope: ClassVar[Literal["memory", "subject"]] = "subject"
    ENTITY: ClassVar[str] = "near_duplicate"
    PARAMS: ClassVar[frozenset[str]] = frozenset(
        {
            "threshold",
            "stop_words",
            "hangul",
            "max_postings",
            "partition_by",
            "numbers_must_match",
            "conflicts_break_links",
            "containment",
            "containment_floor",
            "words",
            "conflict_min_score",
        }
    )

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        self._token_cache: dict[str, tuple[str, ...]] = {}
        unknown = sorted(set(self.params) - self.PARAMS)
        if unknown:
            raise ValueError(f"{unknown[0]}: unknown parameter of the duplicates detector")
        threshold = self.params.get("threshold", DEFAULT_THRESHOLD)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError("threshold: must be a number in (0, 1]")
        if not 0.0 < float(threshold) <= 1.0:
            raise ValueError(f"threshold: must be in (0, 1], not {threshold!r}")
        self.threshold = float(threshold)
        stop_words = self.params.get("stop_words", [])
        if not isinstance(stop_words, list) or not all(isinstance(w, str) for w in stop_words):
            raise ValueError("stop_words: must be a list of strings")
        self.tokenizer = Tokenizer(
            str(self.params.get("hangul", "word")),
            stop_words,
            str(self.params.get("words", "plain")),
        )
        max_postings = self.params.get("max_postings", DEFAULT_MAX_POSTINGS)
        if isinstance(max_postings, bool) or not isinstance(max_postings, int):
            raise ValueError("max_postings: must be an integer >= 1")
        if max_postings < 1:
            raise ValueError(f"max_postings: must be at least 1, not {max_postings}")
        self.max_postings = max_postings
        partition_by = self.params.get("partition_by", [])
        if not isinstance(partition_by, list) or any(
            f not in PARTITION_FIELDS for f in partition_by
        ):
            raise ValueError(f"partition_by: must be a list of {', '.join(PARTITION_FIELDS)}")
        self.partition_by: tuple[str, ...] = tuple(partition_by)
        numbers_must_match = self.params.get("numbers_must_match", False)
        if not isinstance(numbers_must_match, bool):
            raise ValueError("numbers_must_match: must be true or false")
        self.numbers_must_match = numbers_must_match
        breaks = self.params.get("conflicts_break_links", False)
        if not isinstance(breaks, bool):
            raise ValueError("conflicts_break_links: must be true or false")
        self.conflicts_break_links = breaks
        least = self.params.get("conflict_min_score", 0.0)
        if isinstance(least, bool) or not isinstance(least, (int, float)) or not 0 <= least <= 1:
            raise ValueError("conflict_min_score: must be a number in [0, 1]")
        self.conflict_min_score = float(least)
        self.containment = _share_param(self.params, "containment", None)
        floor = _share_param(self.params, "containment_floor", 0.3)
        self.containment_floor = 0.3 if floor is None else floor

    def analyze_group(self, memories: Sequence[MemoryView], ctx: DetectContext) -> list[Detection]:
        """Near-duplicates among the memories of one subject.

        Args:
            memories: every memory of one subject that the rules apply to.
            ctx: the scan context; in an incremental scan ``ctx.focus`` (the changed
                memories) limits the work to their clusters, with the same detections for
                them as a full analysis.

        Returns:
            One ``near_duplicate`` detection per older member of each cluster, with
            ``memory_ids = (kept, duplicate)``, ordered by kept id, then duplicate id.
        """
        parts: dict[tuple[str, ...], list[MemoryView]] = {}
        for m in memories:
            parts.setdefault(tuple(str(getattr(m, f)) for f in self.partition_by), []).append(m)
        detections: list[Detection] = []
        for part in parts.values():
            if len(part) > 1:
                detections.extend(self._analyze_part(part, ctx.focus))
        detections.sort(key=lambda d: d.memory_ids)
        return detections

    def _token_set(self, m: MemoryView) -> frozenset[str]:
        """The memory's token set; its tokens are kept by content hash (scans see most facts
        again), as a tuple of interned strings: a set of them is four times the size."""
        if not m.content_hash:
            return self.tokenizer.token_set(m.fact)
        found = self._token_cache.get(m.content_hash)
        if found is not None:
            return frozenset(found)
        tokens = self.tokenizer.token_set(m.fact)
        if len(self._token_cache) >= _TOKEN_CACHE_SIZE:
            self._token_cache.pop(next(iter(self._token_cache)))  # oldest first
        self._token_cache[m.content_hash] = tuple(sys.intern(t) for t in tokens)
        return tokens

    def _focus_pairs(
        self, sets: Sequence[frozenset[str]], start: Sequence[int], facts: Sequence[str]
    ) -> tuple[tuple[int, int, float], ...]:
        """Every linked pair in the clusters of ``start``: a search outward from them.

        Exact for those clusters (a cluster is the connected component of its members), and
        cheap when few memories changed: each visited memory is compared with the others.
        """
        seen_pairs: set[tuple[int, int]] = set()
        found: list[tuple[int, int, float]] = []
        visited = set(start)
        queue = list(start)
        while queue:
            i = queue.pop()
            if not sets[i]:
                continue
            for j, other in enumerate(sets):
                if j == i or not other:
                    continue
                key = (i, j) if i < j else (j, i)
                if key in seen_pairs:
                    continue
                seen_pairs.add(key)
                strength = self._strength(sets, i, j, jaccard(sets[i], other), facts)
                if strength is not None:
                    found.append((key[0], key[1], strength))
                    if j not in visited:
                        visited.add(j)
                        queue.append(j)
        return tuple(sorted(found))

    def _floor(self) -> float:
        """The lowest Jaccard at which two memories can link (containment searches lower)."""
        if self.containment is None:
            return self.threshold
        return min(self.threshold, self.containment_floor)

    def _strength(
        self, sets: Sequence[frozenset[str]], i: int, j: int, sim: float, facts: Sequence[str]
    ) -> float | None:
        """How strongly two memories with Jaccard ``sim`` link, or None if they do not.

        Their Jaccard when it reaches the threshold; for a restatement that adds detail (a
        containment link, searched from ``containment_floor``), the share of the shorter
        memory's tokens that the longer one holds: the measure the link was made by, which
        is what the detection's score and the rule's ``min_score`` compare. Below both, a
        pair whose frames give one attribute the same typed value in other words (a *frame*
        link, :func:`~auditor.detectors.frame_pairs.typed_restatement`) links at the
        threshold itself.
        """
        if sim >= self.threshold - EPS:
            return sim
        if self.containment is None or sim < self.containment_floor - EPS:
            return None
        small = min(len(sets[i]), len(sets[j]))
        if small < 3:
            return None
        share = len(sets[i] & sets[j]) / small
        if share >= self.containment - EPS:
            return share
        return self.threshold if typed_restatement(facts[i], facts[j]) else None

    def _linked(
        self,
        sets: Sequence[frozenset[str]],
        pairs: Iterable[tuple[int, int, float]],
        facts: Sequence[str],
    ) -> tuple[tuple[int, int, float], ...]:
        """The pairs that link, each with its strength (see :meth:`_strength`)."""
        out: list[tuple[int, int, float]] = []
        for i, j, sim in pairs:
            strength = self._strength(sets, i, j, sim, facts)
            if strength is not None:
                out.append((i, j, strength))
        return tuple(out)

    def _analyze_part(
        self, part: Sequence[MemoryView], focus: frozenset[str] | None = None
    ) -> list[Detection]:
        sets = [self._token_set(m) for m in part]
        facts = [m.fact for m in part]
        start = [i for i, m in enumerate(part) if m.memory_id in focus] if focus is not None else []
        if focus is not None and not start:
            return []  # nothing in this part changed: its findings stand as they are
        if focus is not None and len(start) <= max(4, len(part) // 8):
            pairs = self._focus_pairs(sets, start, facts)
        else:
            search = similar_pairs(sets, self._floor(), self.max_postings)
            if search.dropped_postings:
                log.warning(
                    "duplicate_postings_capped",
                    memories=len(part),
                    dropped=search.dropped_postings,
                    max_postings=self.max_postings,
                )
            pairs = self._linked(sets, search.pairs, facts)
        if self.conflicts_break_links:
            least = self.conflict_min_score
            pairs = tuple(p for p in pairs if not _conflict(part[p[0]], part[p[1]], least))
        if self.numbers_must_match:
            pairs = tuple(p for p in pairs if _numbers(sets[p[0]]) == _numbers(sets[p[1]]))
        if not pairs:
            return []
        members = [_Member() for _ in part]
        for i, j, sim in pairs:
            for a, b in ((i, j), (j, i)):
                member = members[a]
                if sim > member.best or (
                    sim == member.best and part[b].memory_id < part[member.partner].memory_id
                ):
                    member.best, member.partner = sim, b
        out: list[Detection] = []
        direct = {frozenset((i, j)) for i, j, _sim in pairs}
        for group in clusters(len(part), pairs):
            if len(group) < 2:
                continue
            kept = max(group, key=lambda k: _view_key(part[k]))
            for k in group:
                if k != kept and not self._conflicts_through(part, direct, kept, k):
                    out.append(self._detection(part, sets, members, group, kept, k))
        return out

    def _conflicts_through(
        self, part: Sequence[MemoryView], direct: set[frozenset[int]], kept: int, k: int
    ) -> bool:
        """Whether a member joined to the kept memory only through others conflicts with it
        ("반려견 이름은 초코다" and "몽이다", each linked to "반려견을 키운다"): superseding
        it by the kept one would settle a contradiction as a copy."""
        if not self.conflicts_break_links or frozenset((kept, k)) in direct:
            return False
        return _conflict(part[k], part[kept], self.conflict_min_score)

    def _link_kind(self, sets: Sequence[frozenset[str]], i: int, j: int, strength: float) -> str:
        """How a pair linked at ``strength``: ``jaccard``, ``containment`` or ``frame``."""
        if strength <= jaccard(sets[i], sets[j]) + EPS:
            return "jaccard"
        small = min(len(sets[i]), len(sets[j]))
        share = len(sets[i] & sets[j]) / small if small else 0.0
        if self.containment is not None and share >= self.containment - EPS:
            return "containment"
        return "frame"

    def _detection(
        self,
        part: Sequence[MemoryView],
        sets: Sequence[frozenset[str]],
        members: Sequence[_Member],
        group: Sequence[int],
        kept: int,
        dup: int,
    ) -> Detection:
        keep_m, dup_m = part[kept], part[dup]
        member = members[dup]
        to_kept = jaccard(sets[kept], sets[dup])
        kept_rank, dup_rank = _rank(keep_m.trust_tier), _rank(dup_m.trust_tier)
        lower_trust = kept_rank is not None and dup_rank is not None and kept_rank < dup_rank
        resolution: dict[str, Any] = {
            "action": "review" if lower_trust else "supersede",
            "keep": keep_m.memory_id,
            "supersede": dup_m.memory_id,
        }
        if lower_trust:
            resolution["why"] = (
                "the newest copy has a lower trust tier; superseding needs a reviewer's approval"
            )
        partner_jaccard = jaccard(sets[dup], sets[member.partner])
        link = self._link_kind(sets, dup, member.partner, member.best)
        if link == "containment":
            how = (
                f"{member.best:.0%} of the shorter memory's words are in the other "
                f"(containment >= {self.containment or 0:.2f}, a restatement with detail)"
            )
        elif link == "frame":
            how = "both give one attribute the same typed value in other words"
        else:
            how = f"token Jaccard {member.best:.2f} >= {self.threshold:.2f}"
        reason = (
            f"Near-duplicate of a newer memory of the same subject: {how} in a cluster of "
            f"{len(group)}; keep {keep_m.memory_id}, supersede {dup_m.memory_id}."
        )
        return Detection(
            memory_ids=(keep_m.memory_id, dup_m.memory_id),
            detector=self.name,
            entity=self.ENTITY,
            score=round(member.best, 4),
            reason=reason,
            spans=(
                Span(0, len(keep_m.fact), "kept_newest", keep_m.memory_id),
                Span(0, len(dup_m.fact), "near_duplicate", dup_m.memory_id),
            ),
            details={
                "method": "token_set_jaccard",
                "threshold": self.threshold,
                "link": link,
                "jaccard": round(partner_jaccard, 4),
                "linked_to": part[member.partner].memory_id,
                "jaccard_to_kept": round(to_kept, 4),
                "cluster_size": len(group),
                "kept_id": keep_m.memory_id,
                "kept_tier": keep_m.trust_tier,
                "duplicate_tier": dup_m.trust_tier,
                "tokens": len(sets[dup]),
                "differing_tokens": len(sets[kept] ^ sets[dup]),
                "numbers_differ": _numbers(sets[kept]) != _numbers(sets[dup]),
                "hangul": self.tokenizer.hangul,
                "suggested_resolution": resolution,
            },
        )
