"""Supersede chains of one subject: the lifecycle invariants, re-checked by the daemon.

A memory's ``supersedes`` points backwards to the memory it replaced. Each detection names
the memories **at fault** (``memory_ids``: flagged, acted on by a reviewer's quarantine or
delete, part of the fingerprint) apart from the ones it is only about (``context_ids``:
shown to the reviewer, counted by an incremental scan's focus). Both are ordered (oldest
first; cycles in chain order starting from the smallest id), so fingerprints are stable:

* ``dangling_link``: the memory supersedes an id that exists neither among the subject's
  memories nor through ``ctx.lookup``; at fault ``(memory,)``.
* ``cycle``: following ``supersedes`` comes back to where it started (``A -> B -> A``, or a
  memory superseding itself); at fault ``(members...)``.
* ``fork``: two or more live memories (active or superseded) supersede the same memory: the
  chain has more than one head; at fault ``(heads...)``, context ``(target,)`` (it was
  replaced as it should be; which head is the real successor is the reviewer's call).
* ``active_superseded``: a memory is still active although a live memory (active or
  superseded) supersedes it; at fault ``(older,)``, context ``(newer...)`` (the newer
  memory is the one that should stay).
* ``tier_inversion``: an active memory of a lower trust tier supersedes one of a higher tier
  (ranked by :func:`auditor.config.tier_rank`) and nobody approved it; at fault
  ``(newer,)``, context ``(older,)`` (the higher-tier memory it pushed aside is the one to
  keep). An approval is read from the newer memory's ``extra`` (``params.approval_keys``).

Params:
    approval_keys: ``extra`` keys that record a reviewer's approval of a tier override
        (default ``[supersede_approved_by, approved_by]``).
    max_chain: the longest chain followed before giving up (default 10,000).

Without ``ctx.lookup``, a target outside the given memories counts as missing; the scan
engine passes a lookup so that targets of another status are still found.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from auditor.config import TIERS, tier_rank
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView

__all__ = ["ChainDetector"]

#: Statuses of a memory that still takes part in its chain's history.
LIVE = frozenset({"active", "superseded"})
DEFAULT_APPROVAL_KEYS = ("supersede_approved_by", "approved_by")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _when(m: MemoryView) -> datetime:
    stamp = m.created_at or m.updated_at
    if stamp is None:
        return _EPOCH
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _order(ms: Sequence[MemoryView]) -> list[MemoryView]:
    """Memories oldest first (ties by id): the deterministic order of detections."""
    return sorted(ms, key=lambda m: (_when(m), m.memory_id))


class ChainDetector(Detector):
    """Broken supersede chains among one subject's memories (see the module docstring).

    Raises:
        ValueError: a bad parameter (the message names it).
    """

    name = "chains"
    scope = "subject"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        keys = self.params.get("approval_keys", list(DEFAULT_APPROVAL_KEYS))
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ValueError("approval_keys must be a list of extra field names")
        self._approval_keys = tuple(keys)
        max_chain = self.params.get("max_chain", 10_000)
        if isinstance(max_chain, bool) or not isinstance(max_chain, int) or max_chain < 1:
            raise ValueError("max_chain must be a positive integer")
        self._max_chain: int = max_chain

    def analyze_group(self, memories: Sequence[MemoryView], ctx: DetectContext) -> list[Detection]:
        """Chain problems among ``memories`` (one subject)."""
        by_id = {m.memory_id: m for m in memories}
        resolved: dict[str, MemoryView | None] = {}

        def resolve(memory_id: str) -> MemoryView | None:
            if memory_id in by_id:
                return by_id[memory_id]
            if memory_id not in resolved:
                resolved[memory_id] = ctx.lookup(memory_id) if ctx.lookup else None
            return resolved[memory_id]

        out: list[Detection] = []
        linked = [(m, m.supersedes) for m in _order(memories) if m.supersedes is not None]

        # dangling links
        for m, target_id in linked:
            if target_id != m.memory_id and resolve(target_id) is None:
                out.append(self._dangling(m, target_id))

        # cycles
        in_cycle: set[str] = set()
        for cycle in self._cycles([m.memory_id for m, _ in linked], resolve):
            in_cycle.update(cycle)
            out.append(self._cycle(cycle))

        # forks and active superseded memories
        successors: dict[str, list[MemoryView]] = {}
        for m, target_id in linked:
            successors.setdefault(target_id, []).append(m)
        for target_id in sorted(successors):
            target = resolve(target_id)
            if target is None:
                continue
            live = [s for s in successors[target_id] if s.status in LIVE]
            if len(live) >= 2:
                out.append(self._fork(target, _order(live)))
            newer = [s for s in live if s.memory_id != target_id]
            if (
                target.status == "active"
                and newer
                and not ({target_id} | {s.memory_id for s in newer}) <= in_cycle
            ):
                out.append(self._active_superseded(target, _order(newer)))

        # tier inversions
        for m, target_id in linked:
            target = resolve(target_id)
            if target is None or m.status != "active" or target.memory_id == m.memory_id:
                continue
            if m.trust_tier not in TIERS or target.trust_tier not in TIERS:
                continue
            if tier_rank(m.trust_tier) >= tier_rank(target.trust_tier):
                continue
            if any(m.extra.get(k) for k in self._approval_keys):
                continue
            out.append(self._inversion(target, m))
        return out

    # -- cycle search ------------------------------------------------------------------

    def _cycles(
        self, starts: Sequence[str], resolve: Callable[[str], MemoryView | None]
    ) -> list[tuple[str, ...]]:
        """Every supersede cycle reachable from ``starts``, each once, in chain order."""
        done: set[str] = set()
        cycles: list[tuple[str, ...]] = []
        for start in sorted(starts):
            if start in done:
                continue
            path: list[str] = []
            index: dict[str, int] = {}
            current: str | None = start
            steps = 0
            while current is not None and current not in done and steps < self._max_chain:
                if current in index:
                    members = path[index[current] :]
                    pivot = members.index(min(members))
                    cycles.append(tuple(members[pivot:] + members[:pivot]))
                    break
                index[current] = len(path)
                path.append(current)
                node = resolve(current)
                current = node.supersedes if node is not None else None
                steps += 1
            done.update(path)
        return cycles

    # -- detections -----------------------------------------------------------------------

    def _dangling(self, m: MemoryView, target_id: str) -> Detection:
        return Detection(
            memory_ids=(m.memory_id,),
            detector=self.name,
            entity="dangling_link",
            score=1.0,
            reason=f"{m.memory_id} supersedes {target_id}, which does not exist",
            details={"missing_target": target_id, "status": m.status},
        )

    def _cycle(self, cycle: tuple[str, ...]) -> Detection:
        shown = " -> ".join((*cycle, cycle[0]))
        return Detection(
            memory_ids=cycle,
            detector=self.name,
            entity="cycle",
            score=1.0,
            reason=f"the supersede chain is a cycle ({shown}): it has no start and no head",
            details={"length": len(cycle)},
        )

    def _fork(self, target: MemoryView, heads: list[MemoryView]) -> Detection:
        return Detection(
            memory_ids=tuple(h.memory_id for h in heads),
            context_ids=(target.memory_id,),
            detector=self.name,
            entity="fork",
            score=0.95,
            reason=(
                f"{len(heads)} memories supersede {target.memory_id}; a chain may have only "
                "one head"
            ),
            details={
                "target": target.memory_id,
                "heads": [h.memory_id for h in heads],
                "head_statuses": [h.status for h in heads],
            },
        )

    def _active_superseded(self, target: MemoryView, newer: list[MemoryView]) -> Detection:
        return Detection(
            memory_ids=(target.memory_id,),
            context_ids=tuple(n.memory_id for n in newer),
            detector=self.name,
            entity="active_superseded",
            score=0.95,
            reason=(
                f"{target.memory_id} is still active although {newer[0].memory_id} "
                "supersedes it; superseded memories are never active"
            ),
            details={
                "superseded_by": [n.memory_id for n in newer],
                "suggested_status": "superseded",
            },
        )

    def _inversion(self, older: MemoryView, newer: MemoryView) -> Detection:
        gap = tier_rank(older.trust_tier) - tier_rank(newer.trust_tier)
        return Detection(
            memory_ids=(newer.memory_id,),
            context_ids=(older.memory_id,),
            detector=self.name,
            entity="tier_inversion",
            score=0.9,
            reason=(
                f"a {newer.trust_tier}-tier memory ({newer.source_type or 'no source'}) "
                f"supersedes a {older.trust_tier}-tier one without a reviewer's approval"
            ),
            details={
                "supersedes": older.memory_id,
                "older_tier": older.trust_tier,
                "newer_tier": newer.trust_tier,
                "older_source_type": older.source_type,
                "newer_source_type": newer.source_type,
                "tier_gap": gap,
            },
        )
