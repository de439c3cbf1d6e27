"""Two preferences in opposite order (:func:`reversed_preferences`): "Grace prefers phone
calls to text messages" / "Grace would rather get a text than a phone call", "지훈은 커피보다
차를 좋아한다" / "지훈은 차보다 커피를 선호한다". One of the frames' other readings.

A preference names its subject (the words before the verb), what is preferred and what it
is preferred to: "prefers A to / over B", "would rather A than B", "likes / loves / enjoys A
more / better than B"; in Korean "B보다 A를 (더) 좋아한다 / 선호한다", "B보다 A가 좋다". Two
facts conflict when the subjects are the same words and each one's preferred side shares a
word with the other's rejected side. The verbs are data (``preference_verbs``,
``preference_verbs_ko`` and the liking verbs of the stances in
``auditor/detectors/data/contradiction_frames.json``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_words import Tok, _data, _is_hangul, _tokens, lowered
from auditor.detectors._literals import LiteralSet
from auditor.detectors.contradiction_frames import text_modality

__all__ = ["dispreferred", "preference_keys", "reversed_preferences"]

#: Facts whose preferences are remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000
#: at most this many content words on either side of a preference
_SIDE_WORDS = 4
#: words that are no side of a preference: auxiliaries and verbs of having or doing
_NOT_SIDE = frozenset(
    {"would", "rather", "get", "gets", "have", "has", "do", "does", "be", "much", "far"}
)
#: words after what is preferred that name what it is preferred to
_TO_WORDS = frozenset({"to", "over", "than", "instead"})
#: a preference needs one of these in its text ("to" / "over" after "prefer" too)
_CUE = LiteralSet({"prefer", "rather", "than"})
#: the Korean "than", glued to the word before it ("커피보다")
_KO_THAN = "보다"
#: Korean topic and subject markers: the words up to the first one name the subject
_KO_TOPIC_MARKERS = ("은", "는", "이", "가")
#: Korean markers of what is preferred ("차를", "차가")
_KO_OBJECT_MARKERS = ("을", "를", "이", "가")


@dataclass(frozen=True, slots=True)
class _Preference:
    """One preference: who (keys), what is preferred and what it is preferred to (keys)."""

    subject: frozenset[str]
    better: frozenset[str]
    worse: frozenset[str]


@functools.cache
def _words() -> tuple[frozenset[str], frozenset[str], tuple[str, ...], frozenset[str]]:
    """(English preference stems, liking stems, Korean verb starts, skipped words)."""
    d = _data()
    return (
        frozenset(stem(w) for w in d["preference_verbs"]),
        frozenset(stem(w) for w in d["stance_like"]),
        tuple(d["preference_verbs_ko"]) + tuple(d["stance_like_ko"]),
        frozenset(d["qualifiers_set"] | d["determiners_set"] | _NOT_SIDE),
    )


def _side(toks: Sequence[Tok], skip: frozenset[str], stops: frozenset[str]) -> list[str]:
    """Content keys from the start of ``toks`` up to a stop word or a clause end."""
    out: list[str] = []
    clause = _data()["clause_stops_set"]
    for t in toks:
        if t.low in stops or t.low in clause or len(out) == _SIDE_WORDS:
            break
        if t.low not in skip and t.key:
            out.append(t.key)
    return out


def _en_preference(toks: Sequence[Tok]) -> _Preference | None:
    prefer, like, _ko, skip = _words()
    lows = [t.low for t in toks]
    for i, t in enumerate(toks):
        rather = t.low == "rather" and i > 0 and lows[i - 1] in ("would", "'d")
        liking = t.key in like and ("than" in lows[i + 1 :])
        if not (t.key in prefer or rather or liking):
            continue
        subject = frozenset(b.key for b in toks[:i] if b.low not in skip and b.key)
        rest = toks[i + 1 :]
        better = _side(rest, skip | {"more", "better"}, _TO_WORDS)
        cut = next((k for k, r in enumerate(rest) if r.low in _TO_WORDS), -1)
        if cut < 0 or not subject or not better:
            return None
        worse = _side(rest[cut + 1 :], skip | {"of"}, frozenset())
        if not worse:
            return None
        return _Preference(subject, frozenset(better), frozenset(worse))
    return None


def _ko_preference(toks: Sequence[Tok]) -> _Preference | None:
    _prefer, _like, ko_verbs, _skip = _words()
    topic = next(
        (k for k, t in enumerate(toks[:3]) if t.low != t.key and t.low.endswith(_KO_TOPIC_MARKERS)),
        -1,
    )
    if topic < 0:
        return None
    than = next(
        (k for k in range(topic + 1, len(toks)) if toks[k].low.endswith(_KO_THAN)),
        -1,
    )
    if than < 0 or not any(t.low.startswith(ko_verbs) for t in toks[than + 1 :]):
        return None
    worse = toks[than].low[: -len(_KO_THAN)]
    better = next(
        (
            t.key
            for t in toks[than + 1 :]
            if t.low != t.key and t.low.endswith(_KO_OBJECT_MARKERS) and t.key
        ),
        None,
    )
    if not worse or better is None:
        return None
    subject = frozenset(t.key for t in toks[: topic + 1])
    return _Preference(subject, frozenset({better}), frozenset({worse}))


@functools.lru_cache(maxsize=_FACT_CACHE)
def _preference(text: str) -> _Preference | None:
    """The preference a fact states in the present, if any (the first one)."""
    low = lowered(text)
    if not (_CUE.any_word_start(low) or _KO_THAN in low):
        return None  # no comparison word: most facts, read without tokenising them again
    toks = _tokens(text)
    if not text.isascii() and any(_is_hangul(t.low) for t in toks):
        found = _ko_preference(toks)
    else:
        found = _en_preference(toks)
    if found is None or text_modality(text) != "current":
        return None
    return found


def reversed_preferences(older_text: str, newer_text: str) -> bool:
    """Whether two facts of one subject prefer in opposite orders."""
    a, b = _preference(older_text), _preference(newer_text)
    if a is None or b is None or a.subject != b.subject:
        return False
    return bool(a.better & b.worse) and bool(a.worse & b.better)


def preference_keys(text: str) -> list[str]:
    """Blocking keys of a fact's preference: its subject with each word on either side, so
    that two orders of one pair meet as candidates."""
    found = _preference(text)
    if found is None:
        return []
    subject = " ".join(sorted(found.subject))
    return ["pf:" + subject + "|" + w for w in sorted(found.better | found.worse)]


def dispreferred(text: str, span: tuple[int, int]) -> bool:
    """Whether the words at ``span`` of ``text`` are what its preference is preferred to
    ("phone calls" in "prefers emails to phone calls"): mentioned, not stated."""
    found = _preference(text)
    if found is None:
        return False
    keys = {t.key for t in _tokens(text[span[0] : span[1]])}
    return bool(keys & found.worse)
