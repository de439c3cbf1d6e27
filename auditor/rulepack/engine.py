"""The in-memory rule engine: rules x detectors over memory views, no database.

Shared by the scan engine (:mod:`auditor.scan.scanner`), the write guard
(:mod:`auditor.scan.guard`), ``memaudit eval`` and the rules' own test cases. Rules that use
the same detector with the same params share one detector call per memory. A detector that
crashes on one memory is recorded as an :class:`EngineError` for that memory and rule group,
and the run goes on.

Before the per-memory detectors run, one pass of :class:`auditor.detectors.prefilter.Prefilter`
over the memory's text (every needle the detectors declare, in one automaton) decides which
of them can possibly fire; the others are not called, and a detector with parts is told
which of its parts may fire. The decision is exact (a detector none of whose needles occurs
finds nothing); ``Engine(rules, prefilter=False)`` or ``MEMAUDIT_PREFILTER=0`` turns it off.

Detectors are built on demand: a rule group's detector (Presidio and spaCy for ``pii``, the
pattern tables of the others) is built when the first memory that the group's rules apply
to arrives, so an engine that is given nothing builds none, and the write guard builds only
the detectors of the rules that apply to its candidate. A detector that can say, before it
is built, what a text must contain for it to find anything (a gate: the pii detector's
digits, ``@``, group and password words, :mod:`auditor.detectors.pii_gate`) waits for a
memory that contains it, so a scan or a guard check of plain prose never loads Presidio.
The gates are off with the prefilter. Building one can take seconds: the
``on_load`` callback hears of it first (the CLI prints a progress line). :meth:`Engine.load`
builds them all at once (rule linting, benchmarks that keep start-up out of their timings).
Findings are the same either way: a group's prefilter needles join the automaton when it
is built, before any memory is judged with it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog

from auditor.config import Settings
from auditor.detectors import build, build_gate, detector_scope
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView
from auditor.detectors.prefilter import Needles, Prefilter, prefilter_enabled
from auditor.logging import scrub
from auditor.records import parse_record
from auditor.rulepack.pack import Rule, RulePack

log = structlog.get_logger(__name__)

__all__ = [
    "CaseResult",
    "Engine",
    "EngineError",
    "Hit",
    "case_views",
    "run_rule_tests",
]

TIER_SOURCE = {
    "system": "system",
    "user": "explicit_statement",
    "agent": "inferred",
    "external": "external_content",
}


@dataclass(frozen=True)
class Hit:
    """A rule reporting one detection."""

    rule: Rule
    detection: Detection


@dataclass(frozen=True)
class EngineError:
    """A detector that crashed on some memories; the message is scrubbed of personal data."""

    rule_ids: tuple[str, ...]
    memory_ids: tuple[str, ...]
    error: str


@dataclass
class _Group:
    #: the registry name and the params of the rules' shared detector
    name: str
    params: Mapping[str, Any]
    rules: list[Rule] = field(default_factory=list)
    label: str = ""
    #: the detector's parts (None: not prefiltered, it runs on every memory)
    parts: frozenset[str] | None = None
    #: keep this group's detections per memory in :attr:`Engine.kept`
    keep: bool = False
    #: the engine has built the detector and taken its prefilter needles
    ready: bool = False
    #: what a text must contain for the detector to find anything, known before it is
    #: built (:func:`auditor.detectors.build_gate`; None: build it on the first memory)
    gate: Needles | None = None
    _detector: Detector | None = None
    _applicable: dict[tuple[str, str, str, str], list[Rule]] = field(default_factory=dict)

    @property
    def built(self) -> bool:
        """Whether the detector has been built."""
        return self._detector is not None

    @property
    def detector(self) -> Detector:
        """The rules' detector, built on first use (shared through the registry)."""
        if self._detector is None:
            self._detector = build(self.name, self.params)
        return self._detector

    def applicable(self, m: MemoryView) -> list[Rule]:
        """The group's rules that apply to ``m`` (memoised on the properties rules test)."""
        key = (m.trust_tier, m.category, m.kind, m.status)
        found = self._applicable.get(key)
        if found is None:
            found = [r for r in self.rules if _applies(r, m)]
            self._applicable[key] = found
        return found


def _applies(rule: Rule, m: MemoryView) -> bool:
    return rule.applies(m.trust_tier, m.category, m.kind, m.status)


class Engine:
    """Runs a set of rules over memories.

    Args:
        rules: the rules to run (usually ``pack.active()``).
        prefilter: decide in one pass per memory which detectors can fire (default: on
            unless ``MEMAUDIT_PREFILTER=0``); findings are the same either way.
        on_load: called with a detector's name just before the engine builds it (building
            one can take seconds: Presidio, spaCy, pattern tables).

    Raises:
        KeyError: a rule names an unknown detector. Invalid params are found when the
            detector is built (:meth:`load` builds every one).
    """

    def __init__(
        self,
        rules: Sequence[Rule],
        prefilter: bool | None = None,
        on_load: Callable[[str], None] | None = None,
    ) -> None:
        self.rules = list(rules)
        self.on_load = on_load
        groups: dict[str, _Group] = {}
        for rule in self.rules:
            key = rule.detector + "\0" + json.dumps(rule.params, sort_keys=True, default=str)
            if key not in groups:
                groups[key] = _Group(rule.detector, rule.params)
            groups[key].rules.append(rule)
        for group in groups.values():
            more = f" +{len(group.rules) - 1}" if len(group.rules) > 1 else ""
            group.label = f"{group.name} [{group.rules[0].id}{more}]"
        scopes = {g.name: detector_scope(g.name) for g in groups.values()}
        self.memory_groups = [g for g in groups.values() if scopes[g.name] == "memory"]
        self.subject_groups = [g for g in groups.values() if scopes[g.name] == "subject"]
        self._prefiltered = prefilter if prefilter is not None else prefilter_enabled()
        if self._prefiltered:
            for group in self.memory_groups:
                group.gate = build_gate(group.name, group.params)
        #: the gates of the memory groups (by index), in one automaton (built on first use)
        self._gates: Prefilter[int] | None = None
        #: per memory group that declared prefilter needles: (group index, part) -> needles
        self._needles: dict[tuple[int, str], Needles] = {}
        self.prefilter: Prefilter[tuple[int, str]] | None = None
        self._lock = threading.RLock()
        #: per rule group (its label): memories the prefilter spared it (when profiling)
        self.skipped: dict[str, int] = {}
        #: per rule group (its label): [seconds inside the detector, calls]; None = off
        self.timings: dict[str, list[float]] | None = None
        #: memory id -> detector -> every detection it made on that memory's whole fact
        #: (before rule selection), for the detectors :meth:`keep_detections` names
        self.kept: dict[str, dict[str, list[Detection]]] = {}

    def keep_detections(self, names: Iterable[str]) -> None:
        """From now on, keep in :attr:`kept` what these detectors (with their default
        parameters) find on each memory they run on, by detector name; a memory the prefilter
        or a detector's gate spared them keeps an empty list (exact: they would find
        nothing), one they did not run on (no rule applies, or they failed) keeps nothing.
        The caller empties :attr:`kept`.

        The evidence masker reuses them instead of running the same detectors again.
        """
        wanted = set(names)
        for group in self.memory_groups:
            rule = group.rules[0]
            group.keep = rule.detector in wanted and not rule.params

    def start_profile(self) -> None:
        """Time every detector call from now on (see :attr:`timings`); off by default.

        When off, the only cost is one ``is None`` test per rule group and memory.
        """
        self.timings = {g.label: [0.0, 0.0] for g in self.memory_groups + self.subject_groups}
        self.skipped = {g.label: 0 for g in self.memory_groups if g.parts is not None}

    def stop_profile(self) -> dict[str, list[float]]:
        """Stop timing; returns what was measured (label -> [seconds, calls])."""
        found, self.timings = self.timings or {}, None
        return found

    @classmethod
    def from_pack(cls, pack: RulePack) -> Engine:
        """An engine over the pack's active rules."""
        return cls(pack.active())

    def load(self) -> Engine:
        """Build every rule group's detector now (instead of on demand); returns the engine.

        Raises:
            ValueError, TypeError: a rule's params are invalid (the message names them).
        """
        for index, group in enumerate(self.memory_groups):
            self._ready_memory_group(index, group)
        for group in self.subject_groups:
            self._ready_subject_group(group)
        return self

    def _build(self, group: _Group) -> Detector:
        if not group.built and self.on_load is not None:
            self.on_load(group.name)
        return group.detector

    def _ready_memory_group(self, index: int, group: _Group) -> None:
        """Build a memory group's detector; its prefilter needles join the automaton."""
        with self._lock:
            if group.ready:
                return
            detector = self._build(group)
            if self._prefiltered:
                declared = detector.prefilter_needles()
                if declared:
                    group.parts = frozenset(declared)
                    for part, found in declared.items():
                        self._needles[(index, part)] = found
                    self.prefilter = Prefilter(self._needles)
            group.ready = True

    def _ready_for(
        self, index: int, group: _Group, text: str, opened: list[frozenset[int]]
    ) -> bool:
        """Build a memory group's detector for ``text``, unless its gate says that the
        detector would find nothing in it (then False: it is spared this memory).

        ``opened`` caches, per memory, the groups whose gate the text passes.
        """
        if group.gate is not None:
            if not opened:
                opened.append(self._open_gates(text))
            if index not in opened[0]:
                return False
        self._ready_memory_group(index, group)
        return True

    def _spared(self, group: _Group, memory_id: str) -> None:
        """A memory group's detector would find nothing in this memory: count it, and keep
        its (empty) detections when they are kept."""
        if self.timings is not None:
            self.skipped[group.label] = self.skipped.get(group.label, 0) + 1
        if group.keep:
            self.kept.setdefault(memory_id, {})[group.name] = []

    def _open_gates(self, text: str) -> frozenset[int]:
        """The memory groups (indexes) whose gate lets ``text`` through."""
        gates = self._gates
        if gates is None:
            with self._lock:
                if self._gates is None:
                    self._gates = Prefilter(
                        {i: g.gate for i, g in enumerate(self.memory_groups) if g.gate is not None}
                    )
                gates = self._gates
        return gates.decide(text)

    def _ready_subject_group(self, group: _Group) -> None:
        with self._lock:
            if not group.ready:
                self._build(group)
                group.ready = True

    def prepare(self, memories: Sequence[MemoryView]) -> None:
        """Tell the built detectors that run on every memory (no prefilter parts, no gate)
        which memories are about to go through :meth:`run_memory`, so that those whose work
        is cheaper in bulk do it now (:meth:`Detector.prepare`). Findings are the same with
        or without it; a detector that fails here is skipped (the memory's own run reports
        its error).
        """
        for group in self.memory_groups:
            if not group.built or group.parts is not None or group.gate is not None:
                continue
            detector = group.detector
            if type(detector).prepare is Detector.prepare:
                continue
            wanted = [m for m in memories if group.applicable(m)]
            if not wanted:
                continue
            started = time.perf_counter() if self.timings is not None else 0.0
            try:
                detector.prepare(wanted)
            except Exception:  # noqa: BLE001 - a hint only: analyze does the work instead
                log.warning("detector_prepare_failed", detector=group.name)
            finally:
                if self.timings is not None:
                    _tick(self.timings, group.label, started, calls=0)

    def run_memory(self, m: MemoryView, ctx: DetectContext) -> tuple[list[Hit], list[EngineError]]:
        """Per-memory rules on one memory."""
        hits: list[Hit] = []
        errors: list[EngineError] = []
        timings = self.timings
        may: frozenset[tuple[int, str]] | None = None
        decided_by: Prefilter[tuple[int, str]] | None = None
        opened: list[frozenset[int]] = []  # the groups whose gate ``m`` passes (once known)
        for index, group in enumerate(self.memory_groups):
            rules = group.applicable(m)
            if not rules:
                continue
            if not group.ready and not self._ready_for(index, group, m.fact, opened):
                self._spared(group, m.memory_id)  # by its gate
                continue
            parts: frozenset[str] | None = None
            prefilter = self.prefilter
            if group.parts is not None and prefilter is not None:
                if may is None or prefilter is not decided_by:
                    # (again when a group built since has grown the automaton)
                    may, decided_by = prefilter.decide(m.fact), prefilter
                parts = frozenset(p for p in group.parts if (index, p) in may)
                if not parts:
                    self._spared(group, m.memory_id)  # by the prefilter
                    continue
            started = time.perf_counter() if timings is not None else 0.0
            detector = group.detector
            try:
                if parts is None:
                    detections = detector.analyze(m, ctx)
                else:
                    detections = detector.analyze_parts(m, ctx, parts)
            except Exception as exc:  # noqa: BLE001 - one memory must not stop a scan
                errors.append(_error(rules, (m.memory_id,), exc))
                continue
            finally:
                if timings is not None:
                    _tick(timings, group.label, started)
            if group.keep:
                self.kept.setdefault(m.memory_id, {})[group.name] = detections
            for d in detections:
                hits.extend(Hit(r, d) for r in rules if r.selects(d.entity, d.score))
        return hits, errors

    def run_subject(
        self, memories: Sequence[MemoryView], ctx: DetectContext
    ) -> tuple[list[Hit], list[EngineError]]:
        """Per-subject rules on the memories of one subject."""
        hits: list[Hit] = []
        errors: list[EngineError] = []
        if not memories:
            return hits, errors
        timings = self.timings
        for group in self.subject_groups:
            usable = [m for m in memories if group.applicable(m)]
            if not usable:
                continue
            self._ready_subject_group(group)
            by_id = {m.memory_id: m for m in usable}
            started = time.perf_counter() if timings is not None else 0.0
            try:
                detections = group.detector.analyze_group(usable, ctx)
            except Exception as exc:  # noqa: BLE001 - one subject must not stop a scan
                errors.append(_error(group.rules, tuple(by_id), exc))
                continue
            finally:
                if timings is not None:
                    _tick(timings, group.label, started)
            if ctx.focus is not None:
                detections = [
                    d
                    for d in detections
                    if not ctx.focus.isdisjoint((*d.memory_ids, *d.context_ids))
                ]
            for d in detections:
                involved = [by_id[i] for i in (*d.memory_ids, *d.context_ids) if i in by_id]
                for r in group.rules:
                    if r.selects(d.entity, d.score) and all(_applies(r, m) for m in involved):
                        hits.append(Hit(r, d))
        return hits, errors

    def run(
        self, memories: Iterable[MemoryView], ctx: DetectContext
    ) -> tuple[list[Hit], list[EngineError]]:
        """Every rule over a set of memories (grouped by subject for subject rules)."""
        hits: list[Hit] = []
        errors: list[EngineError] = []
        by_subject: dict[str, list[MemoryView]] = {}
        memories = list(memories)
        self.prepare(memories)
        for m in memories:
            h, e = self.run_memory(m, ctx)
            hits += h
            errors += e
            by_subject.setdefault(m.subject, []).append(m)
        if self.subject_groups:
            for group in by_subject.values():
                h, e = self.run_subject(group, ctx)
                hits += h
                errors += e
        return hits, errors


def _tick(timings: dict[str, list[float]], label: str, started: float, calls: int = 1) -> None:
    slot = timings.setdefault(label, [0.0, 0.0])
    slot[0] += time.perf_counter() - started
    slot[1] += calls


def _error(rules: Sequence[Rule], memory_ids: tuple[str, ...], exc: BaseException) -> EngineError:
    message = scrub(f"{type(exc).__name__}: {exc}", limit=300)
    return EngineError(tuple(r.id for r in rules), memory_ids, message)


# -- rule test cases -------------------------------------------------------------------


def _case_memory(rule: Rule, case: Any, n: int, settings: Settings) -> MemoryView:
    tier = rule.applies_to.tiers[0] if rule.applies_to.tiers else "external"
    base: dict[str, Any] = {
        "memory_id": f"case_{n}",
        "subject": "user:rule-test",
        "category": rule.applies_to.categories[0] if rule.applies_to.categories else "note",
        "kind": rule.applies_to.kinds[0] if rule.applies_to.kinds else "semantic",
        "source": {"type": TIER_SOURCE[tier]},
        "created_at": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
    }
    if isinstance(case, str):
        base["fact"] = case
    elif isinstance(case, Mapping):
        base.update(case)
    else:
        raise ValueError(f"{rule.where}: a test case is a string or a mapping")
    record = parse_record(base, f"{rule.where} test case", settings)
    return MemoryView.from_record(record, settings)


def case_views(rule: Rule, case: Any, settings: Settings) -> list[MemoryView]:
    """The memories of one test case: a fact, a memory mapping, or ``{memories: [...]}``."""
    if isinstance(case, Mapping) and "memories" in case:
        return [_case_memory(rule, item, i, settings) for i, item in enumerate(case["memories"])]
    return [_case_memory(rule, case, 0, settings)]


@dataclass(frozen=True)
class CaseResult:
    """One test case's outcome."""

    rule_id: str
    where: str
    kind: str  # flag | pass | known_miss
    index: int
    ok: bool
    caught: bool
    note: str = ""


def _case_now(case: Any) -> datetime:
    if isinstance(case, Mapping) and "now" in case:
        return datetime.fromisoformat(str(case["now"]).replace("Z", "+00:00"))
    return datetime(2026, 6, 1, tzinfo=UTC)


def run_rule_tests(
    pack: RulePack, settings: Settings, rule_ids: Sequence[str] | None = None
) -> list[CaseResult]:
    """Run every rule's own test cases against that rule alone.

    ``flag`` cases must fire, ``pass`` cases must not; ``known_miss`` cases are reported
    (``caught`` says whether the rule now catches one, time to promote it) and never fail.
    A case may carry ``now`` (the scan time) and ``consents`` (categories the subject opted
    in to).
    """
    results: list[CaseResult] = []
    for rule in pack.rules:
        if rule_ids and rule.id not in rule_ids:
            continue
        engine = Engine([rule])
        for kind, cases in (
            ("flag", rule.tests.flag),
            ("pass", rule.tests.pass_),
            ("known_miss", rule.tests.known_miss),
        ):
            for i, case in enumerate(cases):
                try:
                    views = case_views(rule, _strip_case_keys(case), settings)
                except Exception as exc:  # noqa: BLE001 - a broken case is a failed case
                    results.append(
                        CaseResult(
                            rule.id, rule.where, kind, i, False, False, f"invalid case: {exc}"
                        )
                    )
                    continue
                consents = (
                    {views[0].subject: frozenset(case.get("consents", []))}
                    if isinstance(case, Mapping)
                    else {}
                )
                ctx = DetectContext(now=_case_now(case), settings=settings, consents=consents)
                hits, errors = engine.run(views, ctx)
                caught = any(h.rule.id == rule.id for h in hits)
                if errors:
                    results.append(
                        CaseResult(
                            rule.id,
                            rule.where,
                            kind,
                            i,
                            False,
                            caught,
                            f"detector error: {errors[0].error}",
                        )
                    )
                    continue
                ok = caught if kind == "flag" else (not caught if kind == "pass" else True)
                note = "now caught: promote it to flag" if kind == "known_miss" and caught else ""
                results.append(CaseResult(rule.id, rule.where, kind, i, ok, caught, note))
    return results


def _strip_case_keys(case: Any) -> Any:
    if isinstance(case, Mapping):
        return {k: v for k, v in case.items() if k not in ("now", "consents")}
    return case
