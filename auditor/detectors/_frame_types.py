"""The readings the open-vocabulary frames make of a sentence and of a pair (data only):
:class:`Frame` ("head relation value"), :class:`FrameVerdict` and :data:`Modality`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Frame", "FrameVerdict", "Modality"]

Modality = Literal["current", "plan", "past", "hypothetical"]


@dataclass(frozen=True, slots=True)
class Frame:
    """One "head relation value" reading of a sentence.

    Attributes:
        lang: ``en`` or ``ko``.
        head: content keys of the attribute head (the subject phrase; empty when none).
        rel: the relation key (copula, verb stem with its preposition; ``ko`` for Korean).
        functional: whether the relation holds one value at a time.
        subject: whether the sentence names its subject (not "Works at X").
        values: content keys of the value (qualifiers removed).
        typed: typed value sets by type (weekday, daypart, date, month, duration, count,
            clock, dom).
        only: the value is restricted ("only", "에만").
        conj: the value lists several items ("X and Y", "X와 Y").
        negated: the sentence is negated.
        modality: current, plan, past or hypothetical.
        span: offsets of the value in the fact.
        approx: the value is approximate ("about", "약").
        names: head keys written as names (a capital letter past the sentence's first word:
            "NHS number", "DataGov API key"); two heads with a name each that the other
            lacks are two things.
        attached: keys of what the typed values are attached to ("the 7:40 bus" -> bus).
        owners: head keys of a possessor ("Lumen's CI", "모아의 라이선스": Korean as
            bigrams); a head that is only another's owner names another thing.
        roles: keys of a noun in the value that names the attribute ("under the GPL
            license", "GPL 라이선스로", "백엔드로"): "Lumen is released under the GPL
            license" gives Lumen's licence.
    """

    lang: str
    head: frozenset[str]
    rel: str
    functional: bool
    subject: bool
    values: frozenset[str]
    typed: tuple[tuple[str, frozenset[Any]], ...]
    only: bool
    conj: bool
    negated: bool
    modality: Modality
    span: tuple[int, int]
    approx: bool = False
    names: frozenset[str] = frozenset()
    attached: frozenset[str] = frozenset()
    owners: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()

    def typed_map(self) -> dict[str, frozenset[Any]]:
        """The typed values as a mapping."""
        return dict(self.typed)


@dataclass(frozen=True, slots=True)
class FrameVerdict:
    """The outcome of comparing two frames.

    Attributes:
        kind: ``typed`` (typed values differ), ``only`` (a restriction broken), ``value``
            (untyped values differ), ``negated`` (one fact denies a value the other one
            lists), ``restatement`` (same value, more detail) or ``compatible``.
        score: heuristic confidence that the pair conflicts (0 for compatible kinds).
        value_type: the type of the differing values (``text`` when untyped).
        older_span / newer_span: value offsets in each fact.
    """

    kind: str
    score: float
    value_type: str
    older_span: tuple[int, int]
    newer_span: tuple[int, int]
