"""What the frames say about a pair of facts: :func:`read_pair` compares every frame of the
older fact with every frame of the newer one (:func:`~auditor.detectors.contradiction_frames.
compare_frames`), then tries one event told in other words
(:func:`~auditor.detectors.frame_anchors.anchored_typed`) or once in each language
(:func:`~auditor.detectors.frame_crossings.crossed_typed`), a value the other memory rules
out as an alternative (:func:`~auditor.detectors.frame_denials.denied_alternative`; not
what a dated past event states), one person's or one named being's two ages
(:mod:`~auditor.detectors.frame_ages`), "never on D" against "every day"
(:func:`~auditor.detectors.frame_schedule.never_every`), a liking against a disliking of
one thing (:func:`~auditor.detectors.frame_stance.opposite_stances`), two preferences in
opposite order (:func:`~auditor.detectors.frame_preferences.reversed_preferences`), one
pet's two names, one activity's two rates and a place's closing days told in each
language (:func:`~auditor.detectors.frame_hours.closing_days_apart`).
Reasons never quote values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from auditor.detectors._contradiction_pairs import PairSignal, Signal
from auditor.detectors._frame_types import Frame, FrameVerdict
from auditor.detectors._frame_words import _tokens
from auditor.detectors.contradiction_frames import compare_frames, frames_of, text_modality
from auditor.detectors.frame_ages import named_ages_apart, own_ages_apart
from auditor.detectors.frame_anchors import anchored_typed
from auditor.detectors.frame_crossings import crossed_typed
from auditor.detectors.frame_denials import denied_alternative, on_occasion
from auditor.detectors.frame_hours import closing_days_apart
from auditor.detectors.frame_occasions import dated_past
from auditor.detectors.frame_people import about_a_relative_apart
from auditor.detectors.frame_pets import two_pet_names
from auditor.detectors.frame_preferences import dispreferred, reversed_preferences
from auditor.detectors.frame_rates import other_rates
from auditor.detectors.frame_schedule import never_every
from auditor.detectors.frame_stance import opposite_stances

__all__ = ["FrameReading", "read_pair"]


@dataclass(frozen=True, slots=True)
class FrameReading:
    """What the frames say about a pair of facts.

    Attributes:
        signals: conflict signals (entities ``value_conflict`` and ``rule_conflict``).
        restatement: the facts give one attribute the same value, one with more words
            ("X" / "X, not Y" / "X at 10am"): other value-set signals are negated
            alternatives or details, not conflicts.
        modal: one fact is a plan, a past state or a hypothetical about a shared head, or
            the two say other relations of it or other occasions.
        modal_by_relation: ``modal`` only because the two facts say two relations of one
            head ("has a peanut allergy" / "snacks on peanut butter toast"): no reason to
            doubt a trait that rules one out, since such traits always span two relations.
    """

    signals: tuple[Signal, ...]
    restatement: bool
    modal: bool
    modal_by_relation: bool = False


_REASONS = {
    "typed": "the two memories give different {t} values for the same attribute",
    "only": "one memory restricts the attribute to one value; the other adds more",
    "value": "the two memories give different values for the same attribute",
    "negated": "one memory denies a value that the other one lists for the same attribute",
    "never_every": "one memory rules a day out; the other says it happens every day",
    "denied": "one memory rules out, as an alternative, the value the other one gives",
    "stance": "one memory says the subject likes what the other says they dislike",
    "preference": "the two memories state the same preference in opposite order",
    "pet_name": "the two memories give one pet two names",
    "rate": "the two memories say one activity happens at two different rates",
    "own_age": "the two memories give the person two different ages",
    "named_age": "the two memories give one named person or animal two different ages",
    "hours": "one memory says the place is closed on a day the other says it is open",
}


def _anchored(older_text: str, newer_text: str) -> str | None:
    """:func:`~auditor.detectors.frame_anchors.anchored_typed` of two facts in the present,
    each one sentence (the owners of their frames passed on)."""
    fa, fb = frames_of(older_text), frames_of(newer_text)
    if len(fa) != 1 or len(fb) != 1:
        return None
    if fa[0].modality != "current" or fb[0].modality != "current" or fa[0].negated != fb[0].negated:
        return None
    return anchored_typed(
        older_text,
        newer_text,
        fa[0].owners | fb[0].owners,
        approx=fa[0].approx or fb[0].approx,
    )


def read_pair(older_text: str, newer_text: str) -> FrameReading:
    """Frame signals for one pair of facts (older first); see :class:`FrameReading`.

    Reasons never quote the values; spans point at them.
    """
    best: FrameVerdict | None = None
    restatement = False
    compatible: set[str] = set()  # why frames were compatible: relation, modality, scope
    for fa in frames_of(older_text):
        for fb in frames_of(newer_text):
            verdict = compare_frames(fa, fb)
            if verdict is None:
                continue
            if verdict.kind == "value" and _told_by_both(fa, fb, older_text, newer_text):
                verdict = FrameVerdict("restatement", 0.0, "text", fa.span, fb.span)
            elif verdict.kind in ("value", "typed") and on_occasion(older_text) != on_occasion(
                newer_text
            ):  # one of them an exception
                # "눈 오는 날에는 지하철 대신 버스": an exception on an occasion, not the rule
                verdict = FrameVerdict("compatible", 0.0, "scope", fa.span, fb.span)
            if verdict.kind == "restatement":
                restatement = True
            elif verdict.kind == "compatible":
                compatible.add(verdict.value_type)
            elif best is None or verdict.score > best.score:
                best = verdict
    if (
        best is None
        and not restatement
        and (text_modality(older_text) != "current" or text_modality(newer_text) != "current")
    ):
        compatible.add("modality")
    modal = bool(compatible)
    signals: list[Signal] = []
    if best is not None:
        signals.append(_verdict_signal(best))
        restatement = False
    if best is None or best.score < _CLEAR:
        other = _other_signal(older_text, newer_text)
        if other is not None:
            signals.insert(0, other)  # stronger than a plausible value for the judge
    return FrameReading(
        tuple(signals),
        restatement and not signals,
        modal and not signals,
        compatible == {"relation"} and not signals,
    )


def _told_by_both(fa: Frame, fb: Frame, older_text: str, newer_text: str) -> bool:
    """Whether each frame's own values are words of the other fact too (a hyphenated value
    by its parts): one fact cut its value short at a comma, the other told it in another
    order ("works a four-on, four-off rota of 12-hour shifts" / "works 12-hour shifts,
    four days on and four days off"), so the values do not differ."""
    words_a, words_b = _words(older_text), _words(newer_text)
    only_a, only_b = fa.values - fb.values, fb.values - fa.values

    def within(values: frozenset[str], words: frozenset[str]) -> bool:
        return all(part in words for v in values for part in v.split("-") if part)

    return bool(only_a or only_b) and within(only_a, words_b) and within(only_b, words_a)


def _words(text: str) -> frozenset[str]:
    """A fact's word keys and lower-case words, hyphenated words also by their parts."""
    out: set[str] = set()
    for t in _tokens(text):
        out.update((t.key, t.low, *t.low.split("-"), *t.key.split("-")))
    return frozenset(out)


#: a frame verdict at least this strong needs no other reading (the rules' min_score)
_CLEAR = 0.55


def _verdict_signal(best: FrameVerdict) -> Signal:
    """The signal of the strongest frame verdict (values as spans, never quoted)."""
    entity = "rule_conflict" if best.kind == "only" else "value_conflict"
    spans = PairSignal(
        ((best.older_span[0], best.older_span[1], "value"),),
        ((best.newer_span[0], best.newer_span[1], "value"),),
    )
    return Signal(
        entity,
        best.score,
        _REASONS[best.kind].format(t=best.value_type),
        spans,
        {
            "slot": "frame:" + best.value_type,
            "signals": [entity],
            "evidence": best.kind,
            "value_type": best.value_type,
        },
    )


def _other_signal(older_text: str, newer_text: str) -> Signal | None:
    """A conflict the frame pairs do not read: one event told in other words, a value ruled
    out as an alternative, "never on D" against "every day". None for a fact about a
    relative the other never names ("Ola's husband bought a new car" / "Ola has never
    owned a car")."""
    signal = _first_other_signal(older_text, newer_text)
    if signal is not None and about_a_relative_apart(older_text, newer_text):
        return None  # (asked only of a pair with a signal: most pairs have none)
    return signal


def _first_other_signal(older_text: str, newer_text: str) -> Signal | None:
    anchored = _anchored(older_text, newer_text) or crossed_typed(older_text, newer_text)
    if anchored is not None:
        return Signal(
            "value_conflict",
            0.7,
            _REASONS["typed"].format(t=anchored),
            PairSignal((), ()),
            {
                "slot": "frame:" + anchored,
                "signals": ["value_conflict"],
                "evidence": "anchored",
                "value_type": anchored,
            },
        )
    denial = denied_alternative(older_text, newer_text)
    stating = older_text if denial is not None and denial.newer_denies else newer_text
    if denial is not None and dispreferred(stating, denial.stated_span):
        denial = None  # "prefers emails to phone calls" does not state phone calls
    elif denial is not None and dated_past(stating):
        denial = None  # "switched to Figma back in 2021": a dated event, not today's use
    if denial is not None:
        older_span, newer_span = (
            (denial.stated_span, denial.denying_span)
            if denial.newer_denies
            else (denial.denying_span, denial.stated_span)
        )
        return Signal(
            "negation",
            0.65,
            _REASONS["denied"],
            PairSignal(((*older_span, "value"),), ((*newer_span, "value"),)),
            {"slot": "frame:alternative", "signals": ["negation"], "evidence": "denied"},
        )
    for ages_apart, evidence in ((own_ages_apart, "own_age"), (named_ages_apart, "named_age")):
        if ages_apart(older_text, newer_text):
            return Signal(
                "value_conflict",
                0.65,
                _REASONS[evidence],
                PairSignal((), ()),
                {
                    "slot": "frame:age",
                    "signals": ["value_conflict"],
                    "evidence": evidence,
                    "value_type": "age",
                },
            )
    for check, entity, evidence, slot in _WHOLE_FACT_CHECKS:
        if check(older_text, newer_text):
            return Signal(
                entity,
                0.65,
                _REASONS[evidence],
                PairSignal((), ()),
                {"slot": slot, "signals": [entity], "evidence": evidence},
            )
    return None


#: readings of two whole facts (no span of a value): check, entity, evidence, slot
_WHOLE_FACT_CHECKS: tuple[tuple[Callable[[str, str], bool], str, str, str], ...] = (
    (opposite_stances, "value_conflict", "stance", "frame:stance"),
    (reversed_preferences, "value_conflict", "preference", "frame:preference"),
    (never_every, "rule_conflict", "never_every", "frame:schedule"),
    (two_pet_names, "value_conflict", "pet_name", "frame:pet_name"),
    (other_rates, "value_conflict", "rate", "frame:rate"),
    (closing_days_apart, "rule_conflict", "hours", "frame:schedule"),
)
