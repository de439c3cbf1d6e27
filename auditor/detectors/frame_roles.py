"""Heads that name an attribute through its owner or through the value: "Lumen's CI" is not
Lumen (:func:`owner_apart`), "Lumen is released under the GPL license" gives the
attribute of "Lumen's license is MIT" (:func:`role_aligned`), and "Omar pays his rent on
the 5th" the day of "Omar's rent is due on the 25th" (:func:`object_aligned`). Read by
:func:`auditor.detectors.contradiction_frames.compare_frames`.
"""

from __future__ import annotations

import dataclasses
import functools

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import _data, bigrams

__all__ = ["object_aligned", "owner_apart", "role_aligned"]


#: head words that rank an attribute without naming another ("main language")
_RANKS = frozenset({"main", "primary", "default", "preferred", "core"})


def owner_apart(a: Frame, b: Frame) -> bool:
    """Whether one head is only the owner of the other's thing ("Lumen" / "Lumen's CI",
    "Priya" / "Priya's standup", "모아" / "모아의 백엔드"): two things, not one. A noun
    that names the thing as a whole ("Fern's code", "Fern's repository";
    ``whole_thing_nouns`` of the data file) is the owner itself."""
    for x, y in ((a, b), (b, a)):
        if y.head and y.head < x.head and y.head <= x.owners:
            return not (x.head - y.head) <= _whole_thing_nouns()
    return False


@functools.cache
def _whole_thing_nouns() -> frozenset[str]:
    return frozenset(stem(w) for w in _data()["whole_thing_nouns"])


def _role_keys(f: Frame) -> frozenset[str]:
    """The role nouns of a frame, keyed as its head is (Korean heads are bigrams)."""
    if f.lang == "ko":
        return frozenset(k for r in f.roles for k in bigrams(r))
    return f.roles


#: typed values that say when: a day of the month or week, a date, a month, a clock time
_WHEN_KINDS = frozenset({"dom", "weekday", "date", "month", "clock"})


def object_aligned(a: Frame, b: Frame) -> tuple[Frame, Frame] | None:
    """The two frames read as one attribute when one names a thing in its head with a
    typed value ("현우의 월세는 매달 25일에 빠져나간다", "Omar's rent is due on the 25th")
    and the other has that thing as its object with a typed value of the same kind ("현우는
    매달 5일에 월세를 송금한다", "Omar pays his rent on the 5th"): the second is given the
    first's head and relation, when both say when it happens (a day, a date, a time), or
    when one limits the relation with "only" and the other lists values with the same verb
    ("Priya's clinic only treats adults" / "Priya treats adults and children at the
    clinic": a rule and a list that breaks it). None otherwise."""
    if a.lang != b.lang:
        return None
    for x, y, swap in ((a, b, False), (b, a, True)):
        if not y.head or not y.head < x.head:
            continue
        when = x.typed_map().keys() & y.typed_map().keys() & _WHEN_KINDS
        rule = x.rel == y.rel and ((x.only and y.conj) or (y.only and x.conj))
        if not (when or rule):
            continue  # a day or a date says when the thing happens (a rate or a count may
            # belong to another thing of the sentence: "bills clients 45 euros an hour")
        objects = y.values - {y.rel}
        keys = frozenset(k for v in objects for k in bigrams(v)) if x.lang == "ko" else objects
        extra = x.head - y.head - keys
        if not (x.head - y.head) & keys or len(extra) > (1 if x.lang == "ko" else 0):
            continue
        if when:
            values = objects - keys  # the thing moves to the head; the typed values stay
        else:  # the values but the thing, which moves to the head ("at the clinic")
            named = x.head - y.head
            values = frozenset(
                v for v in objects if not (bigrams(v) if x.lang == "ko" else {v}) & named
            )
        moved = dataclasses.replace(y, head=x.head, rel=x.rel, values=values)
        return (moved, x) if swap else (x, moved)
    return None


def role_aligned(a: Frame, b: Frame) -> tuple[Frame, Frame] | None:
    """The two frames read as one attribute when one names it in its head ("Lumen's license
    is MIT", "모아의 라이선스는 MIT이다") and the other in its value ("Lumen is released
    under the GPL license", "모아는 GPL 라이선스로 배포된다", "Firebase를 백엔드로
    사용한다"): the second is given the first's head and relation, its values without the
    role noun and the verb, and holds one value as the first does. Only a relation that
    holds one value names a role ("employs five people at the bakery" does not). None when
    neither does.
    """
    if a.lang != b.lang:
        return None
    for x, y, swap in ((a, b, False), (b, a, True)):
        roles = _role_keys(y)
        if not roles or not y.functional or not y.head or not y.head < x.head:
            continue
        if not roles <= x.head:
            continue
        # what the head has beyond the owner and the role: at most the bigram that joins
        # two Korean words ("모아라이선스" holds "아라"), or a word that ranks the attribute
        # ("Atlas's main language")
        if len(x.head - y.head - roles - _RANKS) > (1 if x.lang == "ko" else 0):
            continue
        values = y.values - y.roles - {y.rel}
        if not values:
            continue
        moved = dataclasses.replace(
            y, head=x.head, rel=x.rel, functional=x.functional, values=values, roles=frozenset()
        )
        return (moved, x) if swap else (x, moved)
    return None
