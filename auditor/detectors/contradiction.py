"""Contradictions: two active memories of one subject that cannot both hold.

``scope = "subject"``: the engine hands over one subject's memories (blocking by subject).
Inside the group the detector never compares all pairs; candidates come from an inverted
index of content stems (top-k neighbours per memory; a frequent key only links memories
close in time) and from a
time-ordered walk over memories that mention values of the same exclusive slot (see
:mod:`auditor.detectors._contradiction_candidates`). Each candidate pair is then judged
offline (:mod:`auditor.detectors._contradiction_pairs`): slot/value conflicts from value sets
kept as data, negation, exclusive traits, numbers and dates, and question/answer memories
contradicted by a statement. Optionally an LLM judge (``DetectContext.judge``, see
:mod:`auditor.judge.llm`) settles uncertain candidates within its budget: any object with
``judge_pair(older, newer, *, hint=None)`` returning a result with ``verdict``
(contradiction / compatible / unsure), ``confidence``, ``which_supersedes``, ``status`` and
``model``. A confirmed candidate takes the judge's confidence if higher; an uncertain one the
judge calls compatible (confidence >= 0.6) is dropped; strong heuristic evidence is never sent
and never dropped. The model's rationale is not copied into findings (it may quote memory
text). A judge that raises is logged and ignored (the heuristic findings stay).

Entities: ``slot_conflict``, ``negation``, ``exclusive_choice``, ``numeric_conflict``,
``date_conflict``, ``answer_conflict`` and ``judged_contradiction`` (a pair no heuristic
flagged but the LLM judge called a contradiction).

Every detection is about a pair ``(older, newer)`` ordered by ``created_at`` then id, carries
spans in both facts (``Span.memory_id`` set), and details: ``slot``, ``values`` (only words
of the value sets, never free text), ``signals`` and a ``suggested_resolution``::

    {"action": "supersede", "supersede": newer_id, "superseded": older_id, "keep": newer_id,
     "why": "newer explicit statement of same or higher tier"}

or, when the newer memory is not an explicit statement of the same or a higher trust tier,
``{"action": "review", "supersede": None, "keep": <id or None>, "why": ...}``. A rule with
``action: supersede`` lets the scan engine apply the first form automatically
(``lifecycle.supersede(superseded, supersede)``); the second is for a reviewer.

Params (all optional):
    top_k: similar neighbours kept per memory (default 8).
    max_df: for index keys held by more memories, only this many neighbours in time are
        visited (default 64).
    max_fact_chars: longer memories are not compared (default 1000). A fact about a person
        is a sentence or a few; a memory past a thousand characters is a document (a
        fetched page, a tool's JSON answer, a config, a Memoryfield page), whose values
        are not the subject's. On the realistic store
        (:mod:`auditor.tools.realistic`) every conflict such a memory took part in was
        a false alarm, and reading them was an eighth of the detector's time.
    skip_kinds: memory kinds left out (default ``[episodic]``: events, not standing facts).
    apart_sources: ``source.type`` values whose memories are not compared with each other
        (default ``[tool_output]``: each tool result is the answer to one call, such as the
        weather on one date or the buses on one route, so two results that give one field
        two values are two calls, not a conflict). Such a memory is still compared with
        the subject's memories of every other source. ``[]`` compares all pairs.
    checks: families of checks to run (default all: slot, trait, numeric, date, answer,
        negation).
    uncertain_band: ``[low, high]`` scores sent to the LLM judge when one is set
        (default ``[0.3, 0.65]``).
    judge_similar: also send unflagged pairs at least this similar to the judge
        (default 0.45; ``null`` to disable).
    judge_max_pairs: most pairs per subject sent to the judge (default 20).
    extra_slots / extra_traits / extra_hedges: extend the tables of
        :mod:`auditor.detectors._contradiction_data`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog

from auditor.config import tier_rank
from auditor.detectors._contradiction_candidates import Keys, keys_of
from auditor.detectors._contradiction_candidates import candidate_pairs as _index_candidates
from auditor.detectors._contradiction_data import ONCE_DATE_EVENTS
from auditor.detectors._contradiction_pairs import Signal, judge_pair, similarity
from auditor.detectors._contradiction_profile import Lexicon, Profile, build_profile, cue_sets_for
from auditor.detectors._literals import LiteralSet
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span
from auditor.detectors.contradiction_frames import frame_keys, frames_of, text_modality
from auditor.detectors.frame_ages import named_age_keys, own_age_keys
from auditor.detectors.frame_crossings import crossing_keys
from auditor.detectors.frame_denials import denied_index_keys, skeleton_keys
from auditor.detectors.frame_hours import hours_keys
from auditor.detectors.frame_occasions import dated_events_apart
from auditor.detectors.frame_pairs import (
    compared_values,
    contrasted_attribute,
    different_things,
)
from auditor.detectors.frame_people import about_someone_else, introduced_people, two_people
from auditor.detectors.frame_pets import pet_keys
from auditor.detectors.frame_preferences import preference_keys
from auditor.detectors.frame_rates import rate_keys
from auditor.detectors.frame_reading import read_pair
from auditor.detectors.frame_stance import stance_keys
from auditor.detectors.prefilter import fold
from auditor.errors import ConfigError
from auditor.vocab import SOURCE_TYPES

__all__ = ["ContradictionDetector", "candidate_pairs", "offline_signals", "suggested_resolution"]

log = structlog.get_logger(__name__)

_CHECKS = ("slot", "trait", "numeric", "date", "answer", "negation", "frame")
#: Offline signals a restatement ("X" / "X, not Y") explains away: a negated alternative.
_RESTATEMENT_DROPS = frozenset({"slot_conflict", "negation"})
#: Offline signals a plan, a past state or a hypothetical about the same head explains away.
_MODAL_DROPS = frozenset(
    {"slot_conflict", "negation", "exclusive_choice", "numeric_conflict", "date_conflict"}
)
#: Offline signals that two relations of one head do not explain away: a trait that rules
#: the other out ("has a peanut allergy" / "snacks on peanut butter"), a value one fact
#: denies ("supports dark mode" / "has no dark theme")
_ACROSS_RELATIONS = frozenset({"exclusive_choice", "negation"})
#: Offline signals explained away when the frames read one relation of two different named
#: things ("the meeting lasts 30 minutes" / "the standup lasts 15 minutes").
_OTHER_THING_DROPS = frozenset({"slot_conflict", "numeric_conflict", "date_conflict"})
#: Signals of two values of one attribute (not traits, negations or rules).
_VALUE_ENTITIES = _OTHER_THING_DROPS | {"value_conflict"}
#: Frame blocking: each memory meets this many latest earlier memories per frame key.
_FRAME_NEIGHBOURS = 8
#: Frame signals below this score are candidates for the LLM judge only.
_WEAK_FRAME = 0.5
_EXPLICIT_SOURCES = frozenset({"explicit_statement", "system"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Profiles kept by content hash (about 12 KiB each, their tokens included). A subject's
#: window and its overlap (``auditor.scan.scanner.SUBJECT_WINDOW`` + ``WINDOW_OVERLAP``,
#: 2,500 memories) fit twice; 50,000 made a scan of one big subject hold 600 MB of them.
_PROFILE_CACHE_SIZE = 5_000
#: Candidate keys kept by content hash (a few hundred bytes each: key strings are interned,
#: mentions shared with the profile; ``benchmarks/subject_memory_bench.py`` prints the
#: peak). An incremental scan of a subject whose other memories' keys are kept builds
#: profiles only for the changed memories and the partners of their candidate pairs.
_KEYS_CACHE_SIZE = 100_000


def _created(m: MemoryView) -> datetime:
    ts = m.created_at
    if ts is None:
        return _EPOCH
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


def _rank(tier: str) -> int:
    try:
        return tier_rank(tier)
    except ConfigError:
        return -1


def suggested_resolution(older: MemoryView, newer: MemoryView) -> dict[str, Any]:
    """How a reviewer (or a ``supersede`` rule) might resolve a contradiction.

    A newer explicit statement (or system memory) of the same or a higher trust tier
    supersedes the older memory; anything else goes to a reviewer, keeping the memory of the
    higher tier when the tiers differ.

    Args:
        older: the older memory of the pair.
        newer: the newer memory.

    Returns:
        ``{"action", "supersede", "superseded", "keep", "why"}`` (see the module docstring).
    """
    old_rank, new_rank = _rank(older.trust_tier), _rank(newer.trust_tier)
    if newer.source_type in _EXPLICIT_SOURCES and new_rank >= old_rank:
        return {
            "action": "supersede",
            "supersede": newer.memory_id,
            "superseded": older.memory_id,
            "keep": newer.memory_id,
            "why": "newer explicit statement of same or higher tier",
        }
    if old_rank > new_rank:
        return {
            "action": "review",
            "supersede": None,
            "superseded": None,
            "keep": older.memory_id,
            "why": f"the newer memory has a lower trust tier ({newer.trust_tier} < "
            f"{older.trust_tier}); it never overrides the older one without a reviewer",
        }
    return {
        "action": "review",
        "supersede": None,
        "superseded": None,
        "keep": None,
        "why": "the newer memory is not an explicit statement; a reviewer decides which holds",
    }


class ContradictionDetector(Detector):
    """Finds pairs of memories of one subject that cannot both hold; see the module docstring.

    Raises:
        ValueError: invalid params (the message names the parameter).
    """

    name = "contradiction"
    scope = "subject"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        p = self.params
        self.top_k = _int_param(p, "top_k", 8, 1, 100)
        self.max_df = _int_param(p, "max_df", 64, 2, 100_000)
        self.max_fact_chars = _int_param(p, "max_fact_chars", 1000, 100, 10_000_000)
        self.judge_max_pairs = _int_param(p, "judge_max_pairs", 20, 0, 10_000)
        skip = p.get("skip_kinds", ["episodic"])
        if not isinstance(skip, list) or not all(isinstance(k, str) for k in skip):
            raise ValueError("params.skip_kinds must be a list of memory kinds")
        self.skip_kinds = frozenset(skip)
        apart = p.get("apart_sources", ["tool_output"])
        if not isinstance(apart, list) or any(a not in SOURCE_TYPES for a in apart):
            raise ValueError(
                f"params.apart_sources must be a list out of {', '.join(SOURCE_TYPES)}"
            )
        self.apart_sources = frozenset(apart)
        checks = p.get("checks", list(_CHECKS))
        if not isinstance(checks, list) or not checks or any(c not in _CHECKS for c in checks):
            raise ValueError(f"params.checks must be a non-empty list out of {', '.join(_CHECKS)}")
        self.checks = tuple(checks)
        band = p.get("uncertain_band", [0.3, 0.65])
        if (
            not isinstance(band, list)
            or len(band) != 2
            or not all(isinstance(x, (int, float)) for x in band)
            or not 0 <= band[0] <= band[1] <= 1
        ):
            raise ValueError("params.uncertain_band must be [low, high] with 0 <= low <= high <= 1")
        self.uncertain_low, self.uncertain_high = float(band[0]), float(band[1])
        similar = p.get("judge_similar", 0.45)
        if similar is not None and not (isinstance(similar, (int, float)) and 0 <= similar <= 1):
            raise ValueError("params.judge_similar must be a number 0..1 or null")
        self.judge_similar: float | None = None if similar is None else float(similar)
        self.lexicon = Lexicon.from_params(p)
        self._cues = cue_sets_for(self.lexicon)
        self._profiles: OrderedDict[str, Profile] = OrderedDict()
        self._keys: OrderedDict[str, Keys] = OrderedDict()

    # -- profiles --------------------------------------------------------------------

    def profile(self, fact: str, content_hash: str = "") -> Profile:
        """The (cached) profile of one fact.

        Args:
            fact: the memory text.
            content_hash: its content hash, the cache key (no caching when empty).

        Returns:
            The profile.
        """
        if content_hash:
            found = self._profiles.get(content_hash)
            if found is not None:
                self._profiles.move_to_end(content_hash)
                return found
        prof = build_profile(fact, self.lexicon, self._cues)
        if content_hash:
            self._profiles[content_hash] = prof
            if len(self._profiles) > _PROFILE_CACHE_SIZE:
                self._profiles.popitem(last=False)
        return prof

    def keys(self, m: MemoryView) -> Keys:
        """The (cached) candidate keys of one memory (:class:`Keys`)."""
        cached = self._keys.get(m.content_hash) if m.content_hash else None
        if cached is not None:
            self._keys.move_to_end(m.content_hash)
            return cached
        frames: list[str] = []
        denied: list[str] = []
        if "frame" in self.checks:
            frames = [k for fr in frames_of(m.fact) for k in frame_keys(fr)]
            frames.extend(stance_keys(m.fact))
            frames.extend(preference_keys(m.fact))
            frames.extend(pet_keys(m.fact))
            frames.extend(rate_keys(m.fact))
            frames.extend(own_age_keys(m.fact))
            frames.extend(named_age_keys(m.fact))
            frames.extend(crossing_keys(m.fact))
            frames.extend(hours_keys(m.fact))
            denied = denied_index_keys(m.fact)
        prof = self.profile(m.fact, m.content_hash)
        if _event_words().any_in(fold(m.fact)):  # (the dates are read only then)
            # a one-time event's date, in either language ("생일은 5월 2일" / "born on"),
            # meets the subject's other dates of that event
            frames.extend(
                k for d in prof.dates if not d.other for k in d.keys if k.startswith("event:")
            )
        found = keys_of(prof, frames, denied=denied)
        if m.content_hash:
            self._keys[m.content_hash] = found
            if len(self._keys) > _KEYS_CACHE_SIZE:
                self._keys.popitem(last=False)
        return found

    # -- candidates ------------------------------------------------------------------

    def usable(self, memories: Sequence[MemoryView]) -> list[MemoryView]:
        """The memories the detector compares, oldest first (active, not skipped, short)."""
        out = [
            m
            for m in memories
            if m.status == "active"
            and m.kind not in self.skip_kinds
            and m.fact.strip()
            and len(m.fact) <= self.max_fact_chars
        ]
        out.sort(key=lambda m: (_created(m), m.memory_id))
        return out

    def candidates(
        self,
        usable: Sequence[MemoryView],
        keys: Sequence[Keys],
        focus: Collection[int] | None = None,
    ) -> dict[tuple[int, int], float]:
        """Candidate pairs of one subject (indices into ``usable``, oldest first).

        The similarity index and slot walks of
        :mod:`auditor.detectors._contradiction_candidates`, plus frame blocking: memories
        whose sentences share an attribute head and relation
        (:func:`auditor.detectors.contradiction_frames.frame_keys`) meet their
        ``_FRAME_NEIGHBOURS`` latest predecessors per key. Linear in the subject's size.
        ``keys``: each memory's :meth:`keys`; ``focus``: only pairs with one of these
        memories are wanted (others may be missing, see
        :func:`auditor.detectors._contradiction_candidates.candidate_pairs`).
        """
        order = list(range(len(usable)))
        pairs = _index_candidates(keys, order, top_k=self.top_k, max_df=self.max_df, focus=focus)
        if "frame" in self.checks:
            recent: dict[str, list[int]] = {}
            for i in order:
                for key in keys[i].frames:
                    seen = recent.setdefault(key, [])
                    for j in seen:
                        pairs.setdefault((j, i), 0.0)
                    seen.append(i)
                    if len(seen) > _FRAME_NEIGHBOURS:
                        del seen[0]
            _denial_candidates(keys, order, pairs)
        return pairs

    # -- the detector ----------------------------------------------------------------

    def analyze_group(self, memories: Sequence[MemoryView], ctx: DetectContext) -> list[Detection]:
        """Contradicting pairs among one subject's memories.

        Args:
            memories: the subject's memories (the engine passes those the rules apply to).
            ctx: the scan context; ``ctx.judge`` (optional) settles uncertain pairs.

        Returns:
            One detection per contradicting pair, ``memory_ids = (older, newer)``.
        """
        usable = self.usable(memories)
        if len(usable) < 2 or all(m.source_type in self.apart_sources for m in usable):
            return []
        keys = [self.keys(m) for m in usable]
        if ctx.focus is None:
            pairs = self.candidates(usable, keys)
        else:  # incremental scan: judge only pairs with a changed memory
            focus = ctx.focus
            changed = [i for i, m in enumerate(usable) if m.memory_id in focus]
            pairs = {
                k: v
                for k, v in self.candidates(usable, keys, changed).items()
                if usable[k[0]].memory_id in focus or usable[k[1]].memory_id in focus
            }
        # profiles only of the memories in a pair (kept ones, or read again)
        profiles = _Profiles(self, usable)
        found: dict[tuple[int, int], tuple[Signal, list[Signal]]] = {}
        undecided: list[tuple[int, int, float]] = []
        others: frozenset[str] | None = None  # the people the store introduces by name
        for (i, j), _score in sorted(pairs.items()):
            older, newer = usable[i], usable[j]
            if (
                _linked(older, newer)
                or (older.content_hash and older.content_hash == newer.content_hash)
                or (
                    older.source_type in self.apart_sources
                    and newer.source_type in self.apart_sources
                )
                or two_people(older.fact, newer.fact)  # "Tomás ..." / "Elena ..."
            ):
                continue
            signals = judge_pair(
                profiles[i], profiles[j], older.fact, newer.fact, self.lexicon, checks=self.checks
            )
            if "frame" in self.checks:
                signals = _with_frames(
                    signals,
                    older.fact,
                    newer.fact,
                    weak=ctx.judge is not None,
                    years_apart=_years_apart(older, newer),
                    any_relation=self.lexicon.any_relation_slots,
                )
            if signals and others is None:  # (read only once a pair has a signal)
                others = introduced_people([m.fact for m in usable])
            if signals and others and about_someone_else(older.fact, newer.fact, others):
                continue  # "남편 티아구는 ..." told: "티아구는 커피를 안 마신다" is his
            if signals:
                found[(i, j)] = (signals[0], signals)
            elif self.judge_similar is not None and ctx.judge is not None:
                sim = similarity(profiles[i], profiles[j])
                if sim >= self.judge_similar:
                    undecided.append((i, j, sim))
        verdicts: dict[tuple[int, int], Any] = {}
        if ctx.judge is not None and self.judge_max_pairs:
            verdicts = self._ask_judge(usable, found, undecided, ctx)
        detections: list[Detection] = []
        for key in sorted(set(found) | set(verdicts)):
            i, j = key
            det = self._detection(usable[i], usable[j], found.get(key), verdicts.get(key))
            if det is not None:
                detections.append(det)
        return detections

    def _ask_judge(
        self,
        usable: Sequence[MemoryView],
        found: Mapping[tuple[int, int], tuple[Signal, list[Signal]]],
        undecided: Sequence[tuple[int, int, float]],
        ctx: DetectContext,
    ) -> dict[tuple[int, int], Any]:
        """Send uncertain candidates (weakest evidence first, then similar pairs) to the judge."""
        queue: list[tuple[tuple[int, int], str | None]] = [
            (key, sig.entity)
            for key, (sig, _all) in sorted(found.items(), key=lambda kv: kv[1][0].score)
            if self.uncertain_low <= sig.score < self.uncertain_high
        ]
        queue += [((i, j), None) for i, j, _s in sorted(undecided, key=lambda t: -t[2])]
        verdicts: dict[tuple[int, int], Any] = {}
        for key, hint in queue[: self.judge_max_pairs]:
            i, j = key
            try:
                verdict = ctx.judge.judge_pair(usable[i], usable[j], hint=hint)
            except Exception as exc:  # noqa: BLE001 - the judge is optional; keep the heuristics
                log.warning("contradiction_judge_error", error=type(exc).__name__)
                break
            if verdict is not None:
                verdicts[key] = verdict
        return verdicts

    def _detection(
        self,
        older: MemoryView,
        newer: MemoryView,
        heuristic: tuple[Signal, list[Signal]] | None,
        verdict: Any,
    ) -> Detection | None:
        """One detection for a pair, merging the heuristic signals and the judge's verdict."""
        judge_info: dict[str, Any] | None = None
        if verdict is not None:
            judge_info = {
                "verdict": getattr(verdict, "verdict", "unsure"),
                "confidence": round(float(getattr(verdict, "confidence", 0.0)), 3),
                "which_supersedes": getattr(verdict, "which_supersedes", "none"),
                "status": getattr(verdict, "status", "ok"),
                "model": getattr(verdict, "model", None),
            }
        if heuristic is None:
            if judge_info is None or judge_info["verdict"] != "contradiction":
                return None
            entity, score = "judged_contradiction", judge_info["confidence"]
            reason = "the LLM judge found that the two memories cannot both hold"
            spans: tuple[Span, ...] = ()
            details: dict[str, Any] = {"signals": ["judged_contradiction"], "slot": None}
        else:
            best, signals = heuristic
            # the first reading names the conflict; another that reads it more surely
            # (the frames past a scope the older check saw) sets how sure
            entity, reason = best.entity, best.reason
            score = max(sig.score for sig in signals)
            spans = tuple(
                [Span(s, e, label, older.memory_id) for s, e, label in best.spans.older]
                + [Span(s, e, label, newer.memory_id) for s, e, label in best.spans.newer]
            )
            details = dict(best.details)
            details["signals"] = sorted(
                {x for sig in signals for x in sig.details.get("signals", [sig.entity])}
            )
            if judge_info is not None:
                if judge_info["verdict"] == "contradiction":
                    score = max(score, judge_info["confidence"])
                elif (
                    judge_info["verdict"] == "compatible"
                    and judge_info["confidence"] >= 0.6
                    and score < self.uncertain_high
                ):
                    return None
        details["suggested_resolution"] = suggested_resolution(older, newer)
        if judge_info is not None:
            details["judge"] = judge_info
        return Detection(
            memory_ids=(older.memory_id, newer.memory_id),
            detector=self.name,
            entity=entity,
            score=round(min(1.0, max(0.0, score)), 3),
            reason=reason,
            spans=spans,
            details=details,
        )


@functools.cache
def _default_lexicon() -> tuple[Lexicon, Mapping[str, frozenset[str]]]:
    lex = Lexicon.from_params({})
    return lex, cue_sets_for(lex)


def offline_signals(older: str, newer: str) -> list[Signal]:
    """The conflict signals the detector (default parameters, no LLM judge) reads between two
    facts, older first: its pair judge corrected by its frames, as in :meth:`analyze_group`;
    empty when it sees no conflict. For detectors that must not call a contradiction a copy.
    """
    lex = _default_lexicon()[0]
    signals = judge_pair(_default_profile(older), _default_profile(newer), older, newer, lex)
    return _with_frames(signals, older, newer, weak=False, any_relation=lex.any_relation_slots)


@functools.cache
def _event_words() -> LiteralSet:
    """The words of one-time events (``once_date_events`` of the data file), folded."""
    return LiteralSet(fold(w) for w in ONCE_DATE_EVENTS)


@functools.lru_cache(maxsize=1024)
def _default_profile(text: str) -> Profile:
    """A fact's profile under the default lexicon (a store's copies share one; a profile is
    about 12 KiB, so the cache stays near 12 MB)."""
    lex, cues = _default_lexicon()
    return build_profile(text, lex, cues)


def _denial_candidates(
    keys: Sequence[Keys], order: Sequence[int], pairs: dict[tuple[int, int], float]
) -> None:
    """Add the pairs of a fact that rules a word out as an alternative and the facts whose
    index holds that word ("Shopify, not Etsy" / "sells on Etsy"), the
    ``_FRAME_NEIGHBOURS`` latest deniers of each word for each fact: linear in the
    subject's size."""
    deniers: dict[str, list[int]] = {}
    for i in order:
        for key in keys[i].denied:
            seen = deniers.setdefault(key, [])
            seen.append(i)
            if len(seen) > _FRAME_NEIGHBOURS:
                del seen[0]
    if not deniers:
        return
    across = any(key.startswith("tr:") for key in deniers)  # a Korean denial of a loanword
    for j in order:
        for key in keys[j].index:
            found = [key, *skeleton_keys(key)] if across else [key]
            for i in (i for k in found for i in deniers.get(k, ())):
                if i != j:
                    pairs.setdefault((min(i, j), max(i, j)), 0.0)


def _years_apart(older: MemoryView, newer: MemoryView) -> float:
    """Years between the two memories' creation (0 when either has no date)."""
    if older.created_at is None or newer.created_at is None:
        return 0.0
    return abs((_created(newer) - _created(older)).total_seconds()) / (365.25 * 86400)


def _with_frames(
    signals: list[Signal],
    older: str,
    newer: str,
    *,
    weak: bool,
    years_apart: float = 0.0,
    any_relation: frozenset[str] = frozenset(),
) -> list[Signal]:
    """The offline signals, corrected and extended by the open-vocabulary frames.

    ``weak``: keep frame signals below ``_WEAK_FRAME`` (plausible candidates that only the
    LLM judge can settle); without a judge they would only be noise. ``years_apart``: the
    time between the two memories; two ages told a year or more apart may both have been
    true, so they are no conflict. ``any_relation``: slots whose values name the attribute
    whatever the verb (the lexicon's ``any_relation_slots``): their conflicts stay when the
    frames read two relations of one thing.
    """
    reading = read_pair(older, newer)
    if years_apart >= 1.0:
        reading = dataclasses.replace(
            reading,
            signals=tuple(s for s in reading.signals if s.details.get("value_type") != "age"),
        )
    if reading.restatement:
        signals = [s for s in signals if s.entity not in _RESTATEMENT_DROPS]
    if reading.modal:
        drops = _MODAL_DROPS - _ACROSS_RELATIONS if reading.modal_by_relation else _MODAL_DROPS
        signals = [
            s
            for s in signals
            if s.entity not in drops
            or (reading.modal_by_relation and s.details.get("slot") in any_relation)
            or _lasting_past(s, older, newer)
        ]
    if not reading.signals and signals and different_things(older, newer):
        signals = [s for s in signals if s.entity not in _OTHER_THING_DROPS]
    if signals and dated_events_apart(older, newer):
        signals = [s for s in signals if s.entity != "slot_conflict"]  # a history of moves
    frame_signals = [s for s in reading.signals if weak or s.score >= _WEAK_FRAME]
    if (signals or frame_signals) and (
        contrasted_attribute(older, newer) or compared_values(older, newer)
    ):
        # "60 euros instead of his standard rate", "is dearer: 12 euros": two things' values
        signals = [s for s in signals if s.entity not in _VALUE_ENTITIES]
        frame_signals = [s for s in frame_signals if s.entity not in _VALUE_ENTITIES]
    # the older checks' typed evidence stays first (its entity names the rule that fires)
    return [*signals, *frame_signals]


def _lasting_past(signal: Signal, older: str, newer: str) -> bool:
    """Whether a trait signal stands although one fact is told of the past: the trait is
    lasting (a brother at last year's wedding is a brother now: "민서는 외동이다" / "작년에
    친오빠의 결혼식에 다녀왔다"), the fact that states it (side ``a``) is current and the
    other is past; a past state of the trait itself ("was an only child") still explains
    the pair away, as do plans and hypotheticals."""
    if not signal.details.get("lasting") or signal.entity != "exclusive_choice":
        return False
    a_older = any(label.endswith(":a") for _s, _e, label in signal.spans.older)
    state, event = (older, newer) if a_older else (newer, older)
    return text_modality(state) == "current" and text_modality(event) == "past"


def candidate_pairs(
    memories: Sequence[MemoryView], params: Mapping[str, Any] | None = None
) -> set[frozenset[str]]:
    """Every pair of memories that reaches the offline verdict step (or the LLM judge).

    The detector never compares all pairs; this is the set it does compare, for measuring
    *candidate recall* (the share of labelled contradictions that are ever looked at):
    memories are grouped by subject, filtered as the detector filters them (active, kinds
    not skipped, not too long) and blocked as in :meth:`ContradictionDetector.candidates`.
    Pairs already linked by ``supersedes`` or with equal content are left out, as in a scan.

    Args:
        memories: memories of any number of subjects.
        params: the detector params (as in a rule), default none.

    Returns:
        Unordered pairs of memory ids.
    """
    det = ContradictionDetector(params)
    by_subject: dict[str, list[MemoryView]] = {}
    for m in memories:
        by_subject.setdefault(m.subject, []).append(m)
    out: set[frozenset[str]] = set()
    for group in by_subject.values():
        usable = det.usable(group)
        if len(usable) < 2:
            continue
        for i, j in det.candidates(usable, [det.keys(m) for m in usable]):
            a, b = usable[i], usable[j]
            if _linked(a, b) or (a.content_hash and a.content_hash == b.content_hash):
                continue
            out.add(frozenset((a.memory_id, b.memory_id)))
    return out


class _Profiles:
    """The profiles of one subject's memories, by index, each read when first asked for."""

    def __init__(self, detector: ContradictionDetector, usable: Sequence[MemoryView]) -> None:
        self._detector, self._usable = detector, usable
        self._read: dict[int, Profile] = {}

    def __getitem__(self, i: int) -> Profile:
        found = self._read.get(i)
        if found is None:
            m = self._usable[i]
            found = self._read[i] = self._detector.profile(m.fact, m.content_hash)
        return found


def _linked(a: MemoryView, b: MemoryView) -> bool:
    """Whether one memory already supersedes the other (history, not a contradiction)."""
    return a.supersedes == b.memory_id or b.supersedes == a.memory_id


def _int_param(params: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"params.{name} must be an integer {low}..{high}")
    return value
