"""The offline pair judge of the contradiction detector: can two facts both hold?

:func:`judge_pair` compares the profiles of two memories (older first) and returns the
signals it found, strongest first. Each :class:`Signal` is one kind of conflict:

==================  =========================================================================
entity              when
==================  =========================================================================
slot_conflict       the two memories fill one exclusive slot with different values
                    (pnpm vs npm, JSON vs CSV, Seoul vs Busan, window vs aisle)
negation            one memory states what the other denies (a value, or the whole fact)
exclusive_choice    the memories assert two traits that exclude each other
                    (vegetarian vs loves steak, teetotal vs collects wine)
numeric_conflict    the same count differs ("two kids" vs "three kids")
date_conflict       a one-time date differs (anniversary on May 12 vs June 3)
answer_conflict     a question/answer memory and a statement (or another answer) give
                    different answers to the same question (knowledge poisoning)
==================  =========================================================================

Scores are heuristic confidences: about 0.75-0.9 for typed evidence (a value from a known
set, a number with the same unit, a date of a one-time attribute), about 0.5 and below for
ambiguous evidence (a scoped statement against an unscoped one, an untyped answer): those
are the *uncertain* candidates an LLM judge may settle.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.detectors import _contradiction_data as data
from auditor.detectors._contradiction_profile import (
    Lexicon,
    Profile,
    QuestionAnswer,
    find_values,
)
from auditor.detectors._contradiction_quantities import DateMention, NumberMention
from auditor.detectors._contradiction_text import (
    is_hangul,
    jaccard,
    ko_root,
    negated_at,
    stem,
    token_at,
)

__all__ = ["PairSignal", "Signal", "judge_pair", "similarity"]

#: Base scores per kind of evidence (tuning knobs; the rule's min_score decides).
BASE_SCORES: dict[str, float] = {
    "slot_conflict": 0.8,
    "slot_transition": 0.85,
    "negation_value": 0.8,
    "exclusive_choice": 0.75,
    "numeric_conflict": 0.75,
    "date_conflict": 0.75,
    "answer_typed": 0.8,
    "answer_named": 0.7,
    "answer_untyped": 0.6,
    "answer_negated": 0.75,
    "answer_polarity": 0.6,
    "answer_comparison": 0.65,
    "answer_weak": 0.4,
    "negation_fact": 0.65,
}
_OPTIONS = re.compile(r"(?P<x>[^?]+?)\s+or\s+(?:the\s+)?(?P<y>[^?,]+)")
_CONNECTORS = frozenset({"of", "to", "the", "v.", "vs.", "and", "&", "de", "la", "von", "van"})
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

#: Facts longer than this (characters) are compared by typed evidence only (slot values,
#: traits, one-time dates, answers): "same context" numbers and dates and whole-fact
#: negation need short statements to mean anything.
SHORT_FACT = 300

#: Words that only carry the negation ("no longer", "not anymore").
_NEGATION_FILLER = frozenset({"longer", "anymore", "more", "ever"})

#: Score taken off for ambiguity.
PENALTIES: dict[str, float] = {
    "hedged": 0.15,
    "one_scoped": 0.3,
    "several_values": 0.1,
    "approx": 0.1,
}


@dataclass(frozen=True)
class PairSignal:
    """Span-level evidence of one signal: (start, end, label) in the older and newer fact."""

    older: tuple[tuple[int, int, str], ...]
    newer: tuple[tuple[int, int, str], ...]


@dataclass
class Signal:
    """One kind of conflict between two memories.

    Attributes:
        entity: the detector entity (see the module docstring).
        score: heuristic confidence 0..1.
        reason: a sentence for a reviewer, without the values themselves.
        spans: where the evidence is in the older and the newer fact.
        details: slot, values (vocabulary words only), signals, penalties.
    """

    entity: str
    score: float
    reason: str
    spans: PairSignal
    details: dict[str, Any] = field(default_factory=dict)


def similarity(a: Profile, b: Profile) -> float:
    """Content similarity of two facts: stem Jaccard, or Hangul bigram Jaccard if higher."""
    sim = jaccard(a.stems, b.stems)
    if a.bigrams and b.bigrams:
        sim = max(sim, jaccard(a.bigrams, b.bigrams))
    return sim


def _fuzzy_in(word: str, pool: frozenset[str]) -> bool:
    """Whether ``word`` or a word sharing a 5-letter prefix with it is in ``pool``."""
    if word in pool:
        return True
    if len(word) < 4:
        return False
    for other in pool:
        if len(other) >= 4 and (other.startswith(word) or word.startswith(other)):
            return True
        if len(word) >= 5 and len(other) >= 5 and word[:5] == other[:5]:
            return True
    return False


def _scope_penalty(
    a: Profile,
    b: Profile,
    scopes: tuple[frozenset[str], frozenset[str]] | None = None,
) -> tuple[float, str | None, bool]:
    """(penalty, note, compatible) for two statements' scopes (``scopes``: the scopes to
    compare instead of the whole facts', e.g. those of the clauses a trait is told in)."""
    sa, sb = scopes if scopes is not None else (a.scopes, b.scopes)
    if sa and sb and not (sa & sb):
        if not (a.universal or b.universal):
            return 0.0, "different scopes", True
        return PENALTIES["one_scoped"], "different scopes, one universal", False
    if bool(sa) != bool(sb):
        unscoped = b if sa else a
        if not unscoped.universal:
            return PENALTIES["one_scoped"], "one statement is scoped", False
    return 0.0, None, False


def _hedge_penalty(a: Profile, b: Profile) -> float:
    return PENALTIES["hedged"] if (a.hedged or b.hedged) else 0.0


def _shared_context(a: Profile, b: Profile, lex: Lexicon) -> bool:
    """Whether two facts share a content word besides the slot values: one word, or one
    name written in Hangul in one and in Latin letters in the other ("루멘" / "Lumen")."""
    skip = lex.known_values
    if any(s not in skip for s in a.stems & b.stems):
        return True
    if a.hangul == b.hangul:
        return False
    (ha, la), (hb, lb) = a.name_skeletons, b.name_skeletons
    return bool(ha & lb or hb & la)


def _slot_signals(a: Profile, b: Profile, lex: Lexicon) -> list[Signal]:
    out: list[Signal] = []
    slots = {v.slot for v in a.values} & {v.slot for v in b.values}
    for slot in sorted(slots):
        spec = lex.slots[slot]
        va = [v for v in a.values if v.slot == slot]
        vb = [v for v in b.values if v.slot == slot]
        pa = {v.value for v in va if v.polarity == "pos"}
        pb = {v.value for v in vb if v.polarity == "pos"}
        na = {v.value for v in va if v.polarity == "neg"}
        nb = {v.value for v in vb if v.polarity == "neg"}
        old_b = {v.value for v in vb if v.polarity == "past"}
        if spec.get("shared_context") and not _shared_context(a, b, lex):
            continue
        conflict = bool(pa and pb and not (pa & pb))
        denied = (pa & nb) | (pb & na)
        if not conflict and not denied:
            continue
        penalty, scope_note, compatible = _scope_penalty(a, b)
        if compatible:
            continue
        signals = []
        if conflict:
            signals.append("slot_conflict")
        if denied:
            signals.append("negation")
        if conflict:
            key = "slot_transition" if (pa & old_b) else "slot_conflict"
            entity = "slot_conflict"
        else:
            key, entity = "negation_value", "negation"
        score = BASE_SCORES[key] + (0.05 if conflict and denied else 0.0)
        if len(pa) > 1 or len(pb) > 1:
            penalty += PENALTIES["several_values"]
        penalty += _hedge_penalty(a, b)
        involved = pa | pb | denied
        spans = PairSignal(
            tuple((v.start, v.end, f"{slot}:{v.polarity}") for v in va if v.value in involved),
            tuple((v.start, v.end, f"{slot}:{v.polarity}") for v in vb if v.value in involved),
        )
        title = spec.get("title", slot)
        if conflict:
            reason = f"the two memories give different values for one {title}"
        else:
            reason = f"one memory denies the {title} the other one states"
        if key == "slot_transition":
            reason += " (the newer one says it changed)"
        details: dict[str, Any] = {
            "slot": slot,
            "values": {"older": sorted(pa), "newer": sorted(pb), "denied": sorted(denied)},
            "signals": signals,
        }
        if scope_note:
            details["scope"] = scope_note
        out.append(Signal(entity, round(max(0.05, score - penalty), 3), reason, spans, details))
    return out


def _trait_signals(a: Profile, b: Profile, lex: Lexicon) -> list[Signal]:
    out: list[Signal] = []
    for name, spec in lex.traits.items():
        ta = [t for t in a.traits if t.trait == name]
        tb = [t for t in b.traits if t.trait == name]
        if not ta or not tb:
            continue
        sides_a, sides_b = {t.side for t in ta}, {t.side for t in tb}
        if not (("a" in sides_a and "b" in sides_b) or ("b" in sides_a and "a" in sides_b)):
            continue
        if sides_a == {"a", "b"} or sides_b == {"a", "b"}:
            continue  # one memory holds both: it explains itself ("vegetarian, but eats fish")
        # the scopes of the clauses that tell the trait ("an only child; his parents live
        # in Gimhae": Gimhae is where the parents live)
        near = (
            frozenset().union(*(a.scopes_near(t.start, t.end) for t in ta)),
            frozenset().union(*(b.scopes_near(t.start, t.end) for t in tb)),
        )
        penalty, scope_note, compatible = _scope_penalty(a, b, near)
        if compatible:
            continue
        penalty += _hedge_penalty(a, b)
        spans = PairSignal(
            tuple((t.start, t.end, f"{name}:{t.side}") for t in ta),
            tuple((t.start, t.end, f"{name}:{t.side}") for t in tb),
        )
        details: dict[str, Any] = {"slot": name, "trait": name, "signals": ["exclusive_choice"]}
        if spec.get("lasting"):
            details["lasting"] = True
        if scope_note:
            details["scope"] = scope_note
        out.append(
            Signal(
                "exclusive_choice",
                round(BASE_SCORES["exclusive_choice"] - penalty, 3),
                f"{spec['title']}: {spec['reason']}",
                spans,
                details,
            )
        )
    return out


def _numbers_differ(x: float, y: float, approx: bool) -> bool:
    if x == y:
        return False
    if approx:
        return abs(x - y) / max(abs(x), abs(y), 1.0) > 0.25
    return True


def _bounds_exclude(a: NumberMention, b: NumberMention) -> bool:
    """Whether two numbers, one of them a bound, cannot both hold: "at least 25" against
    "at most 10" or against "10"; two lower (or two upper) bounds always can."""
    a_lo = a.value if a.bound != "max" else -math.inf
    a_hi = a.value if a.bound != "min" else math.inf
    b_lo = b.value if b.bound != "max" else -math.inf
    b_hi = b.value if b.bound != "min" else math.inf
    return a_lo > b_hi or b_lo > a_hi


#: stems of "have" said two ways ("they have two children" / "has three kids")
_HAVE = {"has": "hav", "had": "hav"}


def _numeric_signals(a: Profile, b: Profile, sim: float) -> list[Signal]:
    best: Signal | None = None
    for na in a.numbers:
        if not na.unit:
            continue
        for nb in b.numbers:
            if not na.counts_as(nb) or na.other != nb.other:
                continue  # another thing counted, or another person's count
            # a Korean count names what it counts ("고양이 두 마리" / "고양이는 한 마리뿐")
            counted = all(
                is_hangul(n.unit) and n.unit not in data.KO_COUNTERS for n in (na, nb)
            )  # (a counter's own unit, "1년" / "20년", says nothing of what it counts)
            same_prev = bool(na.prev) and _HAVE.get(na.prev, na.prev) == _HAVE.get(nb.prev, nb.prev)
            if not same_prev and not counted and sim < 0.3:
                continue
            approx = na.approx or nb.approx
            if na.bound or nb.bound:
                if not _bounds_exclude(na, nb):
                    continue  # "at least 25" and "at least 10" both hold
            elif not _numbers_differ(na.value, nb.value, approx):
                continue
            if any(m.unit == na.unit and m.value == nb.value for m in a.numbers) or any(
                m.unit == nb.unit and m.value == na.value for m in b.numbers
            ):
                continue
            score = BASE_SCORES["numeric_conflict"] - _hedge_penalty(a, b)
            if approx:
                score -= PENALTIES["approx"]
            if best is None or score > best.score:
                timed = na.unit.startswith("time:")
                details: dict[str, Any] = {
                    "slot": na.unit if timed else f"count:{na.unit}",
                    "signals": ["numeric_conflict"],
                }
                if max(na.value, nb.value) < 1000 and not timed:
                    details["values"] = {"older": na.value, "newer": nb.value}
                best = Signal(
                    "numeric_conflict",
                    round(score, 3),
                    "the two memories give different numbers for the same count",
                    PairSignal(((na.start, na.end, "number"),), ((nb.start, nb.end, "number"),)),
                    details,
                )
    return [best] if best else []


def _date_keys_match(da: DateMention, db: DateMention, sim: float) -> bool:
    if da.other != db.other:
        return False  # "her wedding" / "her sister's wedding": two people's events
    if da.names and db.names and da.names.isdisjoint(db.names):
        return False  # "Kelly Slater, born ..." / "Paul Hogan, born ...": two people
    shared = da.keys & db.keys
    if shared & data.ONCE_DATE_KEYS:
        return True
    if (da.keys | db.keys) & data.EVENT_WORDS:
        return False  # dated events (sessions, trips) recur; they do not conflict
    return bool(shared) and sim >= 0.5


def _date_signals(a: Profile, b: Profile, sim: float) -> list[Signal]:
    for da in a.dates:
        for db in b.dates:
            if not da.comparable(db) or not da.differs(db):
                continue
            if not _date_keys_match(da, db, sim):
                continue
            if any(x.comparable(db) and not x.differs(db) for x in a.dates) or any(
                y.comparable(da) and not y.differs(da) for y in b.dates
            ):
                continue
            once = sorted((da.keys & db.keys) & data.ONCE_DATE_KEYS)
            score = BASE_SCORES["date_conflict"] - _hedge_penalty(a, b)
            return [
                Signal(
                    "date_conflict",
                    round(score, 3),
                    "the two memories give different dates for the same one-time event",
                    PairSignal(((da.start, da.end, "date"),), ((db.start, db.end, "date"),)),
                    {
                        "slot": "date:" + (once[0] if once else "same context"),
                        "signals": ["date_conflict"],
                    },
                )
            ]
    return []


def _strict_in(word: str, pool: frozenset[str]) -> bool:
    """Whether ``word`` is in ``pool``, allowing only small inflection differences."""
    if word in pool:
        return True
    if len(word) < 5:
        return False
    return any(len(o) >= 5 and o[:5] == word[:5] and abs(len(o) - len(word)) <= 2 for o in pool)


def _distinct_answer(qa: QuestionAnswer) -> frozenset[str]:
    """Answer stems that are not already words of the question."""
    return frozenset(s for s in qa.a_stems if not _fuzzy_in(s, qa.q_stems))


def _answer_position(qa: QuestionAnswer, other: Profile, other_text: str) -> int | None:
    """Offset of the answer inside ``other_text`` (None when absent)."""
    a_low = qa.a_text.strip().lower().rstrip(".")
    if len(a_low) >= 2 and not qa.yes_no:
        m = re.search(r"(?<!\w)" + re.escape(a_low) + r"(?!\w)", other_text.lower())
        if m:
            return m.start()
    if qa.a_dates:
        for d in other.dates:
            if any(x.comparable(d) and not x.differs(d) for x in qa.a_dates):
                return d.start
        return None
    if qa.a_numbers:
        for n in other.numbers:
            if n.value in qa.a_numbers:
                return n.start
        for d in other.dates:
            if d.year is not None and float(d.year) in qa.a_numbers:
                return d.start
        return None
    distinct = _distinct_answer(qa)
    if distinct:
        hits = [t for t in other.tokens if t.content and _strict_in(t.stem, distinct)]
        needed = len(distinct) if len(distinct) <= 2 else math.ceil(0.75 * len(distinct))
        if len({t.stem for t in hits}) >= needed:
            return hits[0].start
    return None


def _answer_negated(other: Profile, pos: int) -> bool:
    tokens = other.tokens
    first = token_at(tokens, pos)
    if first >= len(tokens):
        return False
    if negated_at(tokens, first, first, other.hangul):
        return True
    clause = tokens[first].clause
    window = [t.text for t in tokens[max(0, first - 4) : first] if t.clause == clause]
    return any(w in ("unlike", "instead", "rather", "contrary", "not") for w in window)


def _typed_rival(qa: QuestionAnswer, other: Profile) -> bool:
    """Whether ``other`` offers a number or date where the stored answer is one."""
    if qa.a_dates:
        return any(any(x.comparable(d) and x.differs(d) for x in qa.a_dates) for d in other.dates)
    if any(n.value not in qa.a_numbers for n in other.numbers):
        return True
    date_question = qa.wh in ("when", "what year", "which year", "what date", "date")
    return date_question and any(d.year is not None for d in other.dates)


def _word_type_rival(qa: QuestionAnswer, other: Profile, other_text: str, lex: Lexicon) -> bool:
    """Whether ``other`` names another word of the answer's closed class (a colour, a side,
    a weekday, a value of a known slot such as a city)."""
    words = {t.text for t in other.tokens}
    a_words = {w.lower() for w in re.findall(r"[\w-]+", qa.a_text)}
    for members in data.TYPE_SETS.values():
        if a_words & members and any(w in members and w not in a_words for w in words):
            return True
    answer_slots = {
        lex.alias_index[w] for w in a_words | {qa.a_text.strip().lower()} if w in lex.alias_index
    }
    if not answer_slots:
        return False
    for _f, _l, _s, _e, slot, value in find_values(other_text, other.tokens, lex):
        if any(slot == s and value != v for s, v in answer_slots):
            return True
    return False


def _options(question: str) -> tuple[str, str] | None:
    """The two alternatives of an "X or Y" question, or None."""
    m = _OPTIONS.search(question)
    if m is None:
        return None
    left, right = m.group("x").strip(), m.group("y").strip()
    left = re.split(r",\s*", left)[-1]
    left_words = left.split()
    while left_words and left_words[0][:1].islower():
        left_words.pop(0)
    right_words: list[str] = []
    for w in right.split():
        if w[:1].islower() and w.lower() not in _CONNECTORS:
            break
        right_words.append(w)
    x, y = " ".join(left_words), " ".join(right_words)
    return (x, y) if x and y else None


def _comparison(qa: QuestionAnswer, qa_text: str, other_text: str) -> bool | None:
    """Whether a comparative statement picks the other option than the stored answer.

    Returns:
        True (it does), False (it agrees) or None (no comparison could be read).
    """
    question = qa_text[qa.q_start : qa.q_end]
    opts = _options(question)
    if opts is None:
        return None
    q_dirs = [
        data.COMPARATIVES[w]
        for w in re.findall(r"[\w]+", question.lower())
        if w in data.COMPARATIVES
    ]
    if not q_dirs:
        return None
    stems = [
        frozenset(stem(w) for w in re.findall(r"[\w']+", o) if w.lower() not in data.EN_STOPWORDS)
        for o in opts
    ]
    own = [stems[0] - stems[1], stems[1] - stems[0]]
    if not own[0] or not own[1]:
        return None
    answer = frozenset(
        stem(w) for w in re.findall(r"[\w']+", qa.a_text) if w.lower() not in data.EN_STOPWORDS
    )
    if answer & own[0] and not answer & own[1]:
        answer_idx = 0
    elif answer & own[1] and not answer & own[0]:
        answer_idx = 1
    else:
        return None
    for sentence in _SENTENCE.split(other_text):
        words = re.findall(r"[\w']+", sentence)
        dirs = [data.COMPARATIVES[w.lower()] for w in words if w.lower() in data.COMPARATIVES]
        if not dirs:
            continue
        first: int | None = None
        for w in words:
            st = stem(w)
            hit = [i for i in (0, 1) if st in own[i]]
            if hit:
                first = hit[0]
                break
        if first is None:
            continue
        winner = first if dirs[0] == q_dirs[0] else 1 - first
        return winner != answer_idx
    return None


def _qa_vs_statement(
    qa: QuestionAnswer, qa_text: str, other: Profile, other_text: str, lex: Lexicon
) -> tuple[str, float, int | None] | None:
    """(evidence key, topic overlap, answer offset in ``other``) or None when compatible."""
    if not qa.q_stems:
        return None
    shared = [s for s in qa.q_stems if _fuzzy_in(s, other.stems)]
    topic = len(shared) / len(qa.q_stems)
    if topic < 0.4 or len(shared) < min(2, len(qa.q_stems)):
        return None
    if qa.yes_no:
        if topic < 0.6:
            return None
        says_yes = qa.a_text.strip().lower().rstrip(".") in ("yes", "네", "예", "true")
        if says_yes == other.negated:
            return "answer_polarity", topic, None
        return None
    if qa.choice:
        picked = _comparison(qa, qa_text, other_text)
        if picked:
            return "answer_comparison", topic, None
        return None if picked is False else ("answer_weak", topic, None)
    pos = _answer_position(qa, other, other_text)
    if pos is not None:
        if _answer_negated(other, pos):
            return "answer_negated", topic, pos
        return None
    if qa.a_dates or qa.a_numbers or qa.wh in data.WH_NUMERIC:
        if _typed_rival(qa, other):
            return "answer_typed", topic, None
        return "answer_weak", topic, None
    if _word_type_rival(qa, other, other_text, lex):
        return "answer_typed", topic, None
    if qa.a_proper:
        rivals = {w for w in other.proper if not _fuzzy_in(w, qa.q_stems)}
        if rivals:
            return "answer_named", topic, None
        return "answer_weak", topic, None
    return ("answer_untyped" if topic >= 0.6 else "answer_weak"), topic, None


def _answer_signals(a: Profile, b: Profile, a_text: str, b_text: str, lex: Lexicon) -> list[Signal]:
    out: list[Signal] = []
    if a.qa is not None and b.qa is not None:
        qa, qb = a.qa, b.qa
        if jaccard(qa.q_stems, qb.q_stems) >= 0.6:
            same = (
                qa.a_text.strip().lower() == qb.a_text.strip().lower()
                or bool(qa.a_stems & qb.a_stems)
                or bool(set(qa.a_numbers) & set(qb.a_numbers))
            )
            if not same:
                out.append(
                    Signal(
                        "answer_conflict",
                        round(BASE_SCORES["answer_typed"] - _hedge_penalty(a, b), 3),
                        "the same question is stored with two different answers",
                        PairSignal(
                            ((qa.a_start, qa.a_end, "answer"),), ((qb.a_start, qb.a_end, "answer"),)
                        ),
                        {"slot": "question", "signals": ["answer_conflict"], "evidence": "qa_qa"},
                    )
                )
        return out
    for qa_side, qa_prof, qa_text, other, other_text in (
        ("older", a, a_text, b, b_text),
        ("newer", b, b_text, a, a_text),
    ):
        stored = qa_prof.qa
        if stored is None:
            continue
        verdict = _qa_vs_statement(stored, qa_text, other, other_text, lex)
        if verdict is None:
            continue
        key, topic, pos = verdict
        score = BASE_SCORES[key] - (PENALTIES["hedged"] if other.hedged else 0.0)
        qa_spans = ((stored.a_start, stored.a_end, "answer"),)
        other_spans: tuple[tuple[int, int, str], ...] = ()
        if pos is not None:
            other_spans = ((pos, pos + max(1, len(stored.a_text.strip())), "denied_answer"),)
        spans = (
            PairSignal(qa_spans, other_spans)
            if qa_side == "older"
            else PairSignal(other_spans, qa_spans)
        )
        reasons = {
            "answer_typed": "the statement gives a different number or date than the stored "
            "answer to the same question",
            "answer_named": "the statement names a different answer than the stored one for "
            "the same question",
            "answer_untyped": "the statement covers the stored question but not its answer",
            "answer_negated": "the statement denies the stored answer to the same question",
            "answer_polarity": "the statement says the opposite of the stored yes/no answer",
            "answer_comparison": "the statement picks the other alternative than the stored "
            "answer to the same comparison",
            "answer_weak": "the statement covers the stored question; whether it disagrees "
            "is unclear",
        }
        signals = ["answer_conflict"] + (
            ["negation"] if key in ("answer_negated", "answer_polarity") else []
        )
        out.append(
            Signal(
                "answer_conflict",
                round(score, 3),
                reasons[key],
                spans,
                {
                    "slot": "question",
                    "signals": signals,
                    "evidence": key,
                    "topic_overlap": round(topic, 3),
                    "hedged": other.hedged,
                },
            )
        )
    return out


def _negated_words(p: Profile) -> frozenset[str]:
    """What the negations of a fact deny: in English the first content words after each
    negation in its clause ("not MySQL", "doesn't eat meat"), in Korean the word before it
    ("자바스크립트가 아니라", "마시지 않는다"); as stems (English) or roots (Korean)."""
    tokens = p.tokens
    out: set[str] = set()
    for start, _end in p.negations:
        k = token_at(tokens, start)
        if k >= len(tokens):
            continue
        clause = tokens[k].clause
        if p.hangul and not tokens[k].text.isascii():
            if k > 0 and tokens[k - 1].clause == clause:
                out.add(ko_root(tokens[k - 1].text))
            continue
        found = 0
        for t in tokens[k + 1 : k + 6]:
            if t.clause != clause or found == 3:
                break
            if t.content and t.stem not in _NEGATION_FILLER:
                out.add(t.stem)
                found += 1
    return frozenset(out)


def _fact_negation(a: Profile, b: Profile) -> list[Signal]:
    if a.negated == b.negated or a.qa is not None or b.qa is not None:
        return []
    neg, pos = (a, b) if a.negated else (b, a)
    denied = _negated_words(neg)
    if denied and denied.isdisjoint(pos.stems | pos.ko_roots):
        # a negated alternative ("Postgres, not MySQL"): it denies nothing the other says
        return []
    if neg.hangul or pos.hangul:
        shared = len(neg.ko_roots & pos.ko_roots)
        if shared < 2 or not neg.ko_roots or not pos.ko_roots:
            return []
        sim = shared / len(neg.ko_roots)
        needed = 0.6
        if shared / len(pos.ko_roots) < 0.3:
            return []
    else:
        neg_stems, pos_stems = neg.stems - _NEGATION_FILLER, pos.stems - _NEGATION_FILLER
        if min(len(neg_stems), len(pos_stems)) < 2:
            return []
        # the negated statement says less: all of it inside the other one denies it too
        contained = len(neg_stems & pos_stems) / len(neg_stems)
        sim = max(jaccard(neg_stems, pos_stems), 0.75 * contained)
        needed = 0.6
        penalty, _note, compatible = _scope_penalty(a, b)
        if compatible or penalty:
            return []
    if sim < needed:
        return []
    spans_neg = tuple((s, e, "negation") for s, e in neg.negations)
    spans = PairSignal(spans_neg, ()) if neg is a else PairSignal((), spans_neg)
    score = BASE_SCORES["negation_fact"] + 0.2 * (sim - needed) - _hedge_penalty(a, b)
    return [
        Signal(
            "negation",
            round(min(score, 0.85), 3),
            "one memory negates what the other one states",
            spans,
            {"slot": "statement", "signals": ["negation"], "similarity": round(sim, 3)},
        )
    ]


def judge_pair(
    older: Profile,
    newer: Profile,
    older_text: str,
    newer_text: str,
    lex: Lexicon,
    *,
    checks: Sequence[str] = ("slot", "trait", "numeric", "date", "answer", "negation"),
) -> list[Signal]:
    """Every conflict signal between two memories, strongest first.

    Args:
        older: profile of the older memory.
        newer: profile of the newer memory.
        older_text: the older fact (for answer look-ups).
        newer_text: the newer fact.
        lex: the compiled lexicon.
        checks: which families of checks to run.

    Returns:
        The signals (empty: no conflict found).
    """
    if older.question or newer.question:
        return []  # a question asserts nothing
    sim = similarity(older, newer)
    short = max(older.length, newer.length) <= SHORT_FACT
    out: list[Signal] = []
    if "slot" in checks:
        out += _slot_signals(older, newer, lex)
    if "trait" in checks:
        out += _trait_signals(older, newer, lex)
    if "numeric" in checks and older.numbers and newer.numbers:
        out += _numeric_signals(older, newer, sim if short else 0.0)
    if "date" in checks and older.dates and newer.dates:
        out += _date_signals(older, newer, sim if short else 0.0)
    if "answer" in checks and (older.qa is not None or newer.qa is not None):
        out += _answer_signals(older, newer, older_text, newer_text, lex)
    if "negation" in checks and not out and short:
        out += _fact_negation(older, newer)
    out.sort(key=lambda s: -s.score)
    return out
