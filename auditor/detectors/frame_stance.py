"""Opposite stances toward one thing (:func:`opposite_stances`): "Subin hates cilantro" /
"Subin loves cilantro so much she adds it to pho", "수빈은 고수를 싫어한다" / "수빈은 고수를
아주 좋아해서 쌀국수에 듬뿍 넣는다". One of the frames' other readings: the two verbs are two
relations to the frames, so their values are never compared there.

A stance is a liking or a disliking verb, its subject (the words before it) and its object
(the words after it in its clause; in Korean the word with an object or subject marker
before it). Two facts conflict when the subjects are the same words, the objects are the
same or one holds the other ("cilantro" / "fresh cilantro" do, "hiking in the mountains" /
"hiking in the rain" do not) and the stances are opposite. "doesn't like" is a disliking,
and so is a refusal to eat or drink ("doesn't eat", "can't eat", "매운 음식을 잘 못
먹는다"); "doesn't hate" says nothing. A plan, a past state or a hypothetical is no stance.

The verbs are data (``stance_like``, ``stance_dislike``, ``stance_consume`` and their
Korean stems in ``auditor/detectors/data/contradiction_frames.json``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_words import Tok, _data, _is_hangul, _tokens, lowered
from auditor.detectors._literals import LiteralSet
from auditor.detectors.contradiction_frames import text_modality

__all__ = ["opposite_stances", "stance_keys"]

#: Facts whose stances are remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000
#: at most this many content words of an English object ("hiking in the mountains")
_OBJECT_WORDS = 4
#: Korean markers of the object of a liking ("고수를", "고수가 싫어요")
_KO_OBJECT_MARKERS = ("을", "를", "이", "가")
#: English words that end a stance's object besides the clause stops and stance verbs
_OBJECT_STOPS = frozenset({"when", "if", "whenever", "unless"})
#: English auxiliaries before a stance verb ("does not like", "can't eat"): not its subject
_AUXILIARIES = frozenset({"does", "do", "did", "can", "cannot", "will", "would"})
#: Korean topic and subject markers: the words up to the first one name whose stance it is
_KO_TOPIC_MARKERS = ("은", "는", "이", "가")


@dataclass(frozen=True, slots=True)
class _Stance:
    """One liking or disliking: who (keys), of what (keys), +1 or -1."""

    subject: frozenset[str]
    obj: frozenset[str]
    sign: int


@dataclass(frozen=True, slots=True)
class _Verbs:
    """The stance verbs: English stems, and the starts of Korean verb forms."""

    like: frozenset[str]
    dislike: frozenset[str]
    consume: frozenset[str]
    ko_like: tuple[str, ...]
    ko_dislike: tuple[str, ...]
    ko_consume: tuple[str, ...]


@functools.cache
def _verbs() -> _Verbs:
    d = _data()
    return _Verbs(
        frozenset(stem(w) for w in d["stance_like"]),
        frozenset(stem(w) for w in d["stance_dislike"]),
        frozenset(stem(w) for w in d["stance_consume"]),
        tuple(d["stance_like_ko"]),
        tuple(d["stance_dislike_ko"]),
        tuple(d["stance_consume_ko"]),
    )


@functools.cache
def _cue() -> LiteralSet:
    """The stance verbs' stems and Korean starts, to find in a lowered text in one pass (a
    superset: the verbs are checked again on the tokens)."""
    d = _data()
    english = {w for key in ("stance_like", "stance_dislike", "stance_consume") for w in d[key]}
    korean = {
        w for key in ("stance_like_ko", "stance_dislike_ko", "stance_consume_ko") for w in d[key]
    }
    return LiteralSet({stem(w) for w in english | {"stand"}} | korean)


@functools.cache
def _not_content() -> frozenset[str]:
    """Words that are neither a stance's subject nor its object (qualifiers, determiners)."""
    d = _data()
    return frozenset(d["qualifiers_set"] | d["determiners_set"])


def _en_sign(toks: Sequence[Tok], i: int, negated: bool, v: _Verbs) -> int:
    """+1 (a liking), -1 (a disliking) or 0 (no stance) of the verb at ``i``."""
    t = toks[i]
    if t.low == "stand" and i > 0 and toks[i - 1].low in ("can't", "cannot"):
        return -1  # "can't stand"
    if t.key in v.like:
        return -1 if negated else 1
    if t.key in v.dislike:
        return 0 if negated else -1  # "doesn't hate": no stance
    if t.key in v.consume:
        return -1 if negated else 0  # "doesn't eat", "can't eat"
    return 0


def _en_stances(toks: Sequence[Tok]) -> list[_Stance]:
    v = _verbs()
    verbs = v.like | v.dislike | v.consume
    if not any(t.key in verbs or t.low == "stand" for t in toks):
        return []
    d = _data()
    skip = _not_content()
    negations = d["never_words_set"]
    out: list[_Stance] = []
    for i, t in enumerate(toks):
        if t.key not in verbs and t.low != "stand":
            continue
        before = toks[:i]
        if any(b.low in d["clause_stops_set"] for b in before):
            continue  # a stance inside a later clause: its subject is not the fact's
        negated = any(b.low in negations or b.low.endswith("n't") for b in before)
        sign = _en_sign(toks, i, negated, v)
        if sign == 0:
            continue
        subject = frozenset(
            b.key
            for b in before
            if b.low not in skip
            and b.low not in negations
            and not b.low.endswith("n't")
            and b.low not in _AUXILIARIES
        )
        obj: list[str] = []
        for a in toks[i + 1 :]:
            if (
                a.low in d["clause_stops_set"]
                or a.low in _OBJECT_STOPS
                or a.key in verbs
                or len(obj) == _OBJECT_WORDS
            ):
                break
            if a.low not in skip and a.key:
                obj.append(a.key)
        if subject and obj:
            out.append(_Stance(subject, frozenset(obj), sign))
    return out


def _ko_negated_at(toks: Sequence[Tok], i: int) -> bool:
    """Whether the Korean verb at ``i`` is negated right there ("안 먹는다", "잘 못 먹는다",
    "먹지 않는다", "좋아하지 않는다"), not somewhere else in the sentence."""
    before = toks[i - 1].low if i > 0 else ""
    after = toks[i + 1].low if i + 1 < len(toks) else ""
    return before in ("안", "못") or after.startswith(("않", "못"))


def _ko_sign(toks: Sequence[Tok], i: int, v: _Verbs) -> int:
    low = toks[i].low
    negated = _ko_negated_at(toks, i)
    if low.startswith(v.ko_like):
        return -1 if negated else 1
    if low.startswith(v.ko_dislike):
        return 0 if negated else -1
    if low.startswith(v.ko_consume):
        return -1 if negated else 0
    return 0


def _ko_stances(toks: Sequence[Tok]) -> list[_Stance]:
    v = _verbs()
    if len(toks) < 3:  # noqa: PLR2004 - a subject, an object, a verb
        return []
    # whose stance: the words up to the first topic or subject marker ("지우는", "지우의 딸은")
    topic = next(
        (k for k, t in enumerate(toks[:3]) if t.low != t.key and t.low.endswith(_KO_TOPIC_MARKERS)),
        -1,
    )
    if topic < 0:
        return []
    subject = frozenset(t.key for t in toks[: topic + 1])
    out: list[_Stance] = []
    for i in range(topic + 2, len(toks)):
        sign = _ko_sign(toks, i, v)
        if sign == 0:
            continue
        # the object: the nearest word before the verb with an object or subject marker,
        # past at most two adverbs ("고수를 아주 좋아해서", "매운 음식을 잘 못 먹는다")
        for j in (i - 1, i - 2, i - 3):
            t = toks[j]
            if j > topic and t.low != t.key and t.low.endswith(_KO_OBJECT_MARKERS):
                out.append(_Stance(subject, frozenset({t.key}), sign))
                break
    return out


@functools.lru_cache(maxsize=_FACT_CACHE)
def _stances(text: str) -> tuple[_Stance, ...]:
    """The stances of a fact in the present (none for plans, past states, hypotheticals)."""
    if not _cue().any_word_start(lowered(text)):
        return ()  # no stance verb: most facts, read without tokenising them again
    toks = _tokens(text)
    if not text.isascii() and any(_is_hangul(t.low) for t in toks):
        found = _ko_stances(toks)
    else:
        found = _en_stances(toks)
    if not found or text_modality(text) != "current":
        return ()
    return tuple(found)


def opposite_stances(older_text: str, newer_text: str) -> bool:
    """Whether one fact likes what the other one dislikes, said of the same subject."""
    for a in _stances(older_text):
        for b in _stances(newer_text):
            if a.sign != b.sign and a.subject == b.subject and (a.obj <= b.obj or b.obj <= a.obj):
                return True
    return False


def stance_keys(text: str) -> list[str]:
    """Blocking keys of a fact's stances: one per object word, with the subject, so that a
    liking and a disliking of one thing meet as candidates whatever else the facts say."""
    return [
        "st:" + " ".join(sorted(s.subject)) + "|" + word
        for s in _stances(text)
        for word in sorted(s.obj)
    ]
