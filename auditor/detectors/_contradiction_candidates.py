"""Candidate pairs for the contradiction detector: blocking, never all pairs.

The engine already blocks by subject (a detector gets one subject's memories). Inside a
group, two cheap sources of candidates keep the cost about linear in the group's size:

* **Similarity**: an inverted index from content stems (and Hangul bigrams) to memories.
  For a key held by more than ``max_df`` memories only the ``max_df`` memories nearest in
  time are visited (sorted-neighbourhood blocking: frequent keys would otherwise make the
  work quadratic); each memory keeps its ``top_k`` most similar neighbours, scored by the
  summed inverse document frequency of shared keys.
* **Slots and traits**: memories that mention a value of the same exclusive slot (or a side
  of the same exclusive trait) are walked in time order; each is paired with the most recent
  earlier memory of every *other* value (and of its own value with the opposite polarity).
  That is ``O(values)`` per memory, however large the slot's block.

The result maps ``(i, j)`` (indices into the group, ``i < j``) to the similarity score.

The search reads a memory's :class:`Keys` (its index keys, slot values, trait sides and
frame keys): a few hundred bytes, kept by the detector for many more memories than their
profiles (a profile holds the fact's tokens), so an incremental scan of a big subject finds
the candidate pairs of its changed memories without reading every other memory again.
"""

from __future__ import annotations

import heapq
import math
import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from auditor.detectors._contradiction_profile import Profile, TraitMention, ValueMention

__all__ = ["Keys", "candidate_pairs", "index_keys", "keys_of"]


class _Mentions(Protocol):
    """What the slot and trait walks read of a memory (a :class:`Profile` or its keys)."""

    @property
    def values(self) -> tuple[ValueMention, ...]: ...

    @property
    def traits(self) -> tuple[TraitMention, ...]: ...


@dataclass(frozen=True, slots=True)
class Keys:
    """What the candidate search reads of one fact (see the module docstring).

    Attributes:
        index: its inverted-index keys (:func:`index_keys`), interned: one copy of each key
            string however many facts hold it.
        values: its slot value mentions (the profile's).
        traits: its trait mentions (the profile's).
        frames: its frame blocking keys, sorted and interned (empty when frames are off).
        denied: index keys of the words it rules out as alternatives ("Shopify, not Etsy":
            ``w:etsy``), which meet the facts whose index holds them.
    """

    index: tuple[str, ...]
    values: tuple[ValueMention, ...]
    traits: tuple[TraitMention, ...]
    frames: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()


def keys_of(
    profile: Profile,
    frames: Iterable[str] = (),
    *,
    max_keys: int = 48,
    denied: Iterable[str] = (),
) -> Keys:
    """The :class:`Keys` of a fact from its profile, its frame keys and its denied words."""
    return Keys(
        index=tuple(sys.intern(k) for k in index_keys(profile, max_keys=max_keys)),
        values=profile.values,
        traits=profile.traits,
        frames=tuple(sys.intern(k) for k in sorted(set(frames))),
        denied=tuple(sys.intern(k) for k in sorted(set(denied))),
    )


def index_keys(profile: Profile, *, max_keys: int = 48) -> list[str]:
    """The inverted-index keys of one memory: content stems, Hangul bigrams, QA stems.

    Args:
        profile: the memory's profile.
        max_keys: at most this many keys (longest stems first; long facts are capped so a
            Markdown page does not touch every posting list).

    Returns:
        The keys, in a fixed order: a memory's similarity scores are float sums over its
        keys, so an order taken from a set (which changes with the interpreter's hash seed)
        could change the last bits of a score and so which of two near-tied neighbours
        is kept: findings that differ between processes.
    """
    keys = {"w:" + s for s in profile.stems if len(s) > 1}
    if profile.qa is not None:
        keys.update("w:" + s for s in profile.qa.q_stems)
    keys.update("b:" + g for g in profile.bigrams)
    if len(keys) > max_keys:
        return sorted(keys, key=lambda k: (-len(k), k))[:max_keys]
    return sorted(keys)


def candidate_pairs(
    profiles: Sequence[Profile] | Sequence[Keys],
    order: Sequence[int],
    *,
    top_k: int = 8,
    max_df: int = 64,
    max_keys: int = 48,
    focus: Collection[int] | None = None,
) -> dict[tuple[int, int], float]:
    """Candidate pairs of one group; see the module docstring.

    Args:
        profiles: one profile per memory, or its :class:`Keys` (their index keys were
            taken with ``max_keys`` when they were made).
        order: memory indices sorted by creation time (then id).
        top_k: neighbours kept per memory from the similarity index.
        max_df: for index keys held by more memories than this, visit only this many
            neighbours in time.
        max_keys: index keys per memory at most.
        focus: only the pairs with one of these memories are wanted (an incremental
            scan's changed memories): the similarity search then ranks the neighbours of
            these memories and of the memories that could rank one of them, not of every
            memory. Every pair with a focus memory is found as without ``focus``, with the
            same score; pairs without one may be missing (the caller drops them).

    Returns:
        ``{(i, j): similarity}`` with ``i < j``; similarity is 0 for slot/trait-only pairs.
    """
    n = len(profiles)
    pairs: dict[tuple[int, int], float] = {}
    if n < 2:
        return pairs
    index_of = [
        p.index if isinstance(p, Keys) else index_keys(p, max_keys=max_keys) for p in profiles
    ]
    postings: dict[str, list[int]] = {}
    positions: list[list[tuple[str, int]]] = [[] for _ in range(n)]
    rank = {i: r for r, i in enumerate(order)}
    for i in order:
        for key in index_of[i]:
            plist = postings.setdefault(key, [])
            positions[i].append((key, len(plist)))
            plist.append(i)
    idf = {k: math.log(1.0 + n / len(v)) for k, v in postings.items() if len(v) > 1}
    half = max(1, max_df // 2)
    rows: Iterable[int] = range(n)
    if focus is not None:
        rows = sorted(_rankers(focus, positions, postings, idf, max_df, half))
    for i in rows:
        scores: dict[int, float] = {}
        for key, pos in positions[i]:
            weight = idf.get(key)
            if weight is None:
                continue
            plist = postings[key]
            if len(plist) > max_df:
                # a frequent key: only its neighbours in time (sorted-neighbourhood blocking)
                plist = plist[max(0, pos - half) : pos + half + 1]
            for j in plist:
                if j != i:
                    scores[j] = scores.get(j, 0.0) + weight
        if not scores:
            continue
        best = heapq.nsmallest(top_k, scores.items(), key=lambda kv: (-kv[1], rank[kv[0]]))
        for j, score in best:
            pair = (i, j) if i < j else (j, i)
            if score > pairs.get(pair, -1.0):
                pairs[pair] = score
    _slot_pairs(profiles, order, pairs)
    _trait_pairs(profiles, order, pairs)
    return pairs


def _rankers(
    focus: Collection[int],
    positions: Sequence[Sequence[tuple[str, int]]],
    postings: dict[str, list[int]],
    idf: dict[str, float],
    max_df: int,
    half: int,
) -> set[int]:
    """The focus memories and every memory whose neighbour search visits one of them.

    A pair (f, j) is kept from f's search or from j's; j's search visits f exactly when f's
    visits j (a key held by both, and for a frequent key positions at most ``half`` apart
    in its posting list: the same window seen from either end), so these are the
    memories whose searches can keep a pair with a focus memory.
    """
    out = set(focus)
    for f in focus:
        for key, pos in positions[f]:
            if key not in idf:
                continue
            plist = postings[key]
            if len(plist) > max_df:
                plist = plist[max(0, pos - half) : pos + half + 1]
            out.update(plist)
    return out


def _add(pairs: dict[tuple[int, int], float], i: int, j: int) -> None:
    if i == j:
        return
    pair = (i, j) if i < j else (j, i)
    pairs.setdefault(pair, 0.0)


def _slot_pairs(
    profiles: Sequence[_Mentions], order: Sequence[int], pairs: dict[tuple[int, int], float]
) -> None:
    """Pair each slot mention with the latest earlier mention of a conflicting value."""
    latest: dict[tuple[str, str, str], int] = {}
    values_by_slot: dict[str, set[str]] = {}
    for i in order:
        mentions = profiles[i].values
        if not mentions:
            continue
        for v in mentions:
            values_by_slot.setdefault(v.slot, set()).add(v.value)
        for v in mentions:
            if v.polarity == "neg":
                j = latest.get((v.slot, v.value, "pos"))
                if j is not None:
                    _add(pairs, i, j)
                continue
            j = latest.get((v.slot, v.value, "neg"))
            if j is not None:
                _add(pairs, i, j)
            for other in values_by_slot[v.slot]:
                if other != v.value:
                    j = latest.get((v.slot, other, "pos"))
                    if j is not None:
                        _add(pairs, i, j)
        for v in mentions:
            latest[(v.slot, v.value, "neg" if v.polarity == "neg" else "pos")] = i


def _trait_pairs(
    profiles: Sequence[_Mentions], order: Sequence[int], pairs: dict[tuple[int, int], float]
) -> None:
    """Pair each trait mention with the latest earlier mention of the opposite side."""
    latest: dict[tuple[str, str], int] = {}
    for i in order:
        traits = profiles[i].traits
        if not traits:
            continue
        for t in traits:
            j = latest.get((t.trait, "b" if t.side == "a" else "a"))
            if j is not None:
                _add(pairs, i, j)
        for t in traits:
            latest[(t.trait, t.side)] = i
