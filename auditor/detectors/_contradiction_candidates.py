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
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

from auditor.detectors._contradiction_profile import Profile

__all__ = ["candidate_pairs", "index_keys"]


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
    profiles: Sequence[Profile],
    order: Sequence[int],
    *,
    top_k: int = 8,
    max_df: int = 64,
    max_keys: int = 48,
) -> dict[tuple[int, int], float]:
    """Candidate pairs of one group; see the module docstring.

    Args:
        profiles: one profile per memory.
        order: memory indices sorted by creation time (then id).
        top_k: neighbours kept per memory from the similarity index.
        max_df: for index keys held by more memories than this, visit only this many
            neighbours in time.
        max_keys: index keys per memory at most.

    Returns:
        ``{(i, j): similarity}`` with ``i < j``; similarity is 0 for slot/trait-only pairs.
    """
    n = len(profiles)
    pairs: dict[tuple[int, int], float] = {}
    if n < 2:
        return pairs
    keys_of = [index_keys(p, max_keys=max_keys) for p in profiles]
    postings: dict[str, list[int]] = {}
    positions: list[list[tuple[str, int]]] = [[] for _ in range(n)]
    rank = {i: r for r, i in enumerate(order)}
    for i in order:
        for key in keys_of[i]:
            plist = postings.setdefault(key, [])
            positions[i].append((key, len(plist)))
            plist.append(i)
    idf = {k: math.log(1.0 + n / len(v)) for k, v in postings.items() if len(v) > 1}
    half = max(1, max_df // 2)
    for i in range(n):
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


def _add(pairs: dict[tuple[int, int], float], i: int, j: int) -> None:
    if i == j:
        return
    pair = (i, j) if i < j else (j, i)
    pairs.setdefault(pair, 0.0)


def _slot_pairs(
    profiles: Sequence[Profile], order: Sequence[int], pairs: dict[tuple[int, int], float]
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
    profiles: Sequence[Profile], order: Sequence[int], pairs: dict[tuple[int, int], float]
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
