"""Two facts or one: frame tests the duplicates detector (and the contradiction detector)
ask of a pair that shares most of its words.

* :func:`substituted_value`: one relation of one thing with a content word swapped ("plays
  soccer" / "plays tennis on Saturdays"), or Korean sentences equal but for one subject or
  object: two facts;
* :func:`different_things`: one relation of two different named things ("Project A is
  licensed under MIT" / "Project B ..."): a template, not a copy;
* :func:`typed_apart`: the two facts give one kind of typed value (a day of the week, a
  clock time, a date, an amount with its unit) values that do not overlap ("does yoga every
  Monday" / "every Wednesday"): two facts, however many words they share;
* :func:`typed_restatement`: one attribute given the same typed value in other words ("태양의
  생일은 11월 2일이다" / "태양은 11월 2일에 태어났다"): one fact told twice, however few words
  the two share;
* :func:`relation_swapped`: equal but for a verb that ties a person to a place in another
  way ("lives in Seoul" / "works in Seoul"): two facts.

Both read the frames of :mod:`auditor.detectors.contradiction_frames`.
"""

from __future__ import annotations

import functools
import re

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import KO_ARGUMENT_PARTICLES, _data, _is_hangul, _tokens, _typed
from auditor.detectors.contradiction_frames import (
    compare_frames,
    frames_of,
    heads_match,
)
from auditor.detectors.frame_people import another_person
from auditor.detectors.frame_relations import same_relation
from auditor.detectors.frame_roles import owner_apart

__all__ = [
    "compared_values",
    "contrasted_attribute",
    "different_things",
    "relation_swapped",
    "substituted_value",
    "typed_apart",
    "typed_restatement",
]

#: The most tokens of a fact read for its typed values (a long text is no short fact).
_TYPED_TOKENS = 200

#: The most words a substituted value may have on each side ("soccer" / "tennis").
_SUBSTITUTION_WORDS = 2
#: Words that are no value of their own ("emails over calls" / "email to calls").
_NOT_VALUES = ("prepositions_set", "determiners_set", "qualifiers_set", "conjunctions_set")
_COMPARISON_WORDS = frozenset({"over", "than", "instead", "rather", "versus", "vs"})


@functools.cache
def _not_values() -> frozenset[str]:
    """The words that are no value of their own (built once from the data file)."""
    d = _data()
    return frozenset().union(*(d[k] for k in _NOT_VALUES)) | _COMPARISON_WORDS


def substituted_value(a_text: str, b_text: str) -> bool:
    """Whether two facts say one relation of one thing with one value swapped for another
    ("Her son plays soccer on Saturdays" / "... plays tennis on Saturdays"; "주말마다 등산을
    간다" / "주말마다 수영을 간다"): two facts, whether or not the relation holds many values.
    The swapped words are content words (not prepositions, determiners, qualifiers), at most
    :data:`_SUBSTITUTION_WORDS` on each side; a rewording that adds detail is no swap, and
    neither is one number written two ways when the typed values agree ("30일" / "30일간")."""
    skip = _not_values()
    if _ko_argument_swap(a_text, b_text):
        return True
    for fa in frames_of(a_text):
        for fb in frames_of(b_text):
            if not heads_match(fa, fb) or fa.negated != fb.negated:
                continue
            rel_words = {fa.rel, fb.rel}
            if _typed_agree(fa, fb):
                rel_words |= {v for v in fa.values ^ fb.values if any(c.isdigit() for c in v)}
            only_a = {v for v in fa.values - fb.values if v not in skip and v not in rel_words}
            only_b = {v for v in fb.values - fa.values if v not in skip and v not in rel_words}
            if only_a and only_b and max(len(only_a), len(only_b)) <= _SUBSTITUTION_WORDS:
                return True
    return False


def _typed_agree(a: Frame, b: Frame) -> bool:
    """Whether two frames' typed values agree on every kind both give, one kind at least
    ("30분" / "매일 아침 30분씩": one duration, the other adds that it is every day)."""
    ta, tb = a.typed_map(), b.typed_map()
    shared = set(ta) & set(tb)
    return bool(shared) and all(ta[kind] == tb[kind] for kind in shared)


def _ko_argument_swap(a_text: str, b_text: str) -> bool:
    """Two Korean sentences equal but for one argument ("주말마다 등산을 간다" / "주말마다 수영을
    간다", "일요일에 수영을 간다" / "일요일에 요가를 한다"): each has exactly one token the
    other lacks besides its final verb, both marked as a subject or an object, with different
    keys. A reworded predicate alone is no swap."""
    if not (_is_hangul(a_text) and _is_hangul(b_text)):
        return False
    ta = [t for t in _tokens(a_text) if _is_hangul(t.low)]
    tb = [t for t in _tokens(b_text) if _is_hangul(t.low)]
    keys_a, keys_b = {t.key for t in ta}, {t.key for t in tb}
    only_a = [t for t in ta if t.key not in keys_b]
    only_b = [t for t in tb if t.key not in keys_a]
    if ta and tb and only_a and only_b and only_a[-1] is ta[-1] and only_b[-1] is tb[-1]:
        # each object with its own verb ("수영을 간다" / "요가를 한다"): the objects decide
        only_a, only_b = only_a[:-1], only_b[:-1]
    if len(only_a) != 1 or len(only_b) != 1 or len(ta) < 2 or len(tb) < 2:
        return False
    return all(
        t.low.endswith(KO_ARGUMENT_PARTICLES) and t.key != t.low for t in (only_a[0], only_b[0])
    )


def different_things(a_text: str, b_text: str) -> bool:
    """Whether two facts say the same relation of two different named things ("Project A is
    licensed under MIT" / "Project B is licensed under MIT"): a template, not a copy."""
    fa, fb = frames_of(a_text), frames_of(b_text)
    if not fa or not fb:
        return False
    if any(heads_match(x, y) for x in fa for y in fb):
        return False
    if any(x.rel == y.rel and (another_person(x, y) or owner_apart(x, y)) for x in fa for y in fb):
        return True  # "her birthday" / "her mother's birthday", "Lumen" / "Lumen's CI"
    return any(
        x.lang == y.lang
        and x.subject
        and y.subject
        and same_relation(x, y)
        and bool(x.head)
        and bool(y.head)
        and bool(x.head - y.head)
        and bool(y.head - x.head)
        for x in fa
        for y in fb
    )


def typed_apart(a_text: str, b_text: str) -> bool:
    """Whether two facts give one kind of typed value values that do not overlap ("does yoga
    every Monday" / "every Wednesday", "7시에" / "9시에"): two facts, not one told twice.
    One value written two ways ("30 minutes" / "half an hour") agrees."""
    ta = _typed(_tokens(a_text)[:_TYPED_TOKENS], _is_hangul(a_text))
    if not ta:
        return False
    tb = _typed(_tokens(b_text)[:_TYPED_TOKENS], _is_hangul(b_text))
    return any(kind in tb and not (values & tb[kind]) for kind, values in ta.items())


@functools.cache
def _distinct_relations() -> frozenset[str]:
    return frozenset(stem(w) for w in _data()["distinct_relations"])


def relation_swapped(a_text: str, b_text: str) -> bool:
    """Whether two facts tie one person to one place or organisation by two different
    verbs, one each ("lives in Seoul" / "works in Seoul", "studied at KAIST" / "teaches at
    KAIST", "her mum lives in Cardiff" / "visits her mum in Cardiff once a month";
    ``distinct_relations`` of the data file); other words of detail may differ too."""
    keys_a = {t.key for t in _tokens(a_text)[:_TYPED_TOKENS]}
    keys_b = {t.key for t in _tokens(b_text)[:_TYPED_TOKENS]}
    relations = _distinct_relations()
    only_a, only_b = (keys_a - keys_b) & relations, (keys_b - keys_a) & relations
    return len(only_a) == 1 and len(only_b) == 1


def typed_restatement(a_text: str, b_text: str) -> bool:
    """Whether two facts give one attribute the same typed value in other words ("Ben's
    birthday is on June 4" / "Ben was born on June 4", "태양의 생일은 11월 2일이다" / "태양은
    11월 2일에 태어났다"): their frames match (one head, one relation) and read as a
    restatement, with equal typed values on both sides."""
    for fa in frames_of(a_text):
        if not fa.typed:
            continue
        for fb in frames_of(b_text):
            if fa.typed != fb.typed:
                continue
            verdict = compare_frames(fa, fb)
            if verdict is not None and verdict.kind == "restatement":
                return True
    return False


#: words that set a value against another attribute ("60 euros instead of his standard rate")
_CONTRAST_PHRASES = (("instead", "of"), ("rather", "than"))
#: the most words read after "instead of" for the attribute it names
_CONTRAST_WORDS = 4


def contrasted_attribute(a_text: str, b_text: str) -> bool:
    """Whether one fact sets its value against the attribute the other one gives ("For
    emergency call-outs he charges 60 euros an hour instead of his standard rate" / "His
    standard rate is 45 euros an hour"): the words after "instead of" or "rather than" name
    the other fact's head, so the two values belong to two attributes. Words that name the
    other's value instead ("uses vim instead of emacs" / "uses emacs") are a denied
    alternative, not this."""
    for x, y in ((a_text, b_text), (b_text, a_text)):
        named = _contrasted_words(x)
        if named and any(named & f.head for f in frames_of(y)):
            return True
    return False


def _contrasted_words(text: str) -> frozenset[str]:
    """The content keys of the words after "instead of" / "rather than" (up to four)."""
    toks = _tokens(text)
    lows = [t.low for t in toks]
    skip = _not_values()
    for i in range(len(toks) - 1):
        if (lows[i], lows[i + 1]) in _CONTRAST_PHRASES:
            after = toks[i + 2 : i + 2 + _CONTRAST_WORDS]
            return frozenset(
                t.key
                for t in after
                if len(t.key) > 2 and t.low not in skip and t.low not in _POSSESSIVE_WORDS
            )
    return frozenset()


#: words that compare two things' values ("is dearer: 12 euros for the same jar")
_COMPARATIVES = re.compile(
    r"\b(?:dearer|cheaper|pricier|costlier|(?<!no )longer|shorter|(?:more|less) expensive)\b"
    r"|더\s*(?:비싸|싸|저렴|길|짧)"
)


def compared_values(a_text: str, b_text: str) -> bool:
    """Whether one fact gives its value as a comparison with another thing's ("Her
    lavender honey is dearer: 12 euros"): its number belongs to the thing compared, not to
    the other fact's."""
    return bool(_COMPARATIVES.search(a_text.lower()) or _COMPARATIVES.search(b_text.lower()))


#: possessive determiners before the contrasted attribute ("his standard rate")
_POSSESSIVE_WORDS = frozenset({"his", "her", "their", "my", "our", "your", "its"})
