"""The subject's own age told twice: "Tendai is 41 years old" / "텐다이 씨는 올해 서른다섯 살이
되었다", "Tomasz is 48" / "He is 52 years old".

The frames compare two ages only when their heads meet in one language, so a name and a
pronoun, or the two languages, never meet there. In a store of one person a fact whose
subject is that person (it opens with a name or a personal pronoun, or names nobody: "Is
48", "올해 마흔여덟 살이다") and whose one sentence gives one age tells the person's age;
two such facts with different ages conflict. Not read: a fact that names a relative
anywhere ("Her son is 7", "아들이 일곱 살이다") or an animal, one in the past or in the
negative, one that opens with a role ("Patient is a 65-year-old male"); and two facts
that open with two different names (in Korean too, where a topic may be a pet's name) or
with "I" and "he" / "she" are two beings' ages. Korean ages are often counted a year or
two ahead of the international count, so an age in Korean and one in English conflict
only when they are more than ``_KO_COUNT_GAP`` apart, and two in one language when
more than a year apart (a birthday may lie between them). Two ages told a year or more apart
may both have been true: the detector drops the signal then (it carries the value type
"age"). Read by :mod:`auditor.detectors.frame_reading`.
"""

from __future__ import annotations

import functools

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_words import _is_hangul, _tokens, ko_relative, relatives
from auditor.detectors.contradiction_frames import frames_of
from auditor.detectors.frame_people import opening_name, two_people
from auditor.detectors.frame_pets import names_a_pet

__all__ = ["own_age_keys", "own_ages_apart"]

#: Facts whose own age is remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000
#: A longer fact is a page or a tool result, not one person's age.
_MAX_CHARS = 200
#: How far apart a Korean and an English age may be and still be one age, counted two ways.
_KO_COUNT_GAP = 2
#: How far apart two ages told in one language may be: a birthday may lie between them
#: ("is 34 years old" / "turned 35 last month").
_BIRTHDAY_GAP = 1
#: personal pronouns a fact about its subject may open with
_EN_PRONOUNS = frozenset({"he", "she", "they", "i"})
_KO_PRONOUNS = ("그는", "그녀는", "그가", "그녀가", "나는", "저는")
#: capitalised words a note may open with that name a role, not a person ("Patient is ...")
_ROLES = frozenset(
    """patient user client customer student child baby man woman person employee author
    applicant participant subject candidate member guest visitor caller""".split()
)
#: words of an age one had ("was 30 when she moved", "used to ...")
_EN_PAST = frozenset({"was", "were", "used"})
#: words a subjectless note may open with ("Is 48 years old.", "올해 마흔여덟 살이다.")
_EN_BARE = frozenset({"is", "turned", "turns", "aged", "age"})
_KO_BARE = ("올해", "현재", "지금", "만 ")


@functools.lru_cache(maxsize=_FACT_CACHE)
def _own_age(text: str) -> tuple[float, bool] | None:
    """(age, told in Korean) of the subject's own age in a one-sentence fact, or None."""
    if len(text) > _MAX_CHARS:
        return None
    frames = frames_of(text)
    if len(frames) != 1:
        return None
    frame = frames[0]
    ages = dict(frame.typed).get("age")
    if not ages or len(ages) != 1 or frame.modality != "current" or frame.negated:
        return None
    if frame.owners or _names_a_relative(text) or names_a_pet(text):
        return None  # "Her son is 7", "아들이 일곱 살이다", "먹물이는 세 살 된 고양이다"
    if not _about_the_subject(text):
        return None
    if any(t.low in _EN_PAST for t in _tokens(text)):
        return None  # "Ola was 30 when she moved": an age she had
    return float(next(iter(ages))), _is_hangul(text)


def _names_a_relative(text: str) -> bool:
    en = relatives()[0]
    return any(
        ko_relative(t.low) if _is_hangul(t.low) else stem(t.low) in en for t in _tokens(text)
    )


def _about_the_subject(text: str) -> bool:
    """Whether a fact's subject is the person the store is about: it opens with a name (no
    role: "Patient is a 65-year-old male"), a personal pronoun, or no subject at all."""
    name = opening_name(text)
    if name is not None:
        return name not in _ROLES
    toks = _tokens(text)
    if not toks:
        return False
    first = toks[0].low
    if _is_hangul(first):
        return first.startswith(_KO_PRONOUNS) or text.lstrip().startswith(_KO_BARE)
    return first in _EN_PRONOUNS or first in _EN_BARE


def _grammatical_person(text: str) -> int:
    """1 for a fact told in the first person ("I just turned 54", "저는 ..."), 3 for one
    about "he" / "she", else 0 (a name, or no subject)."""
    toks = _tokens(text)
    if not toks:
        return 0
    first = toks[0].low
    if first in ("i", "i'm") or first.startswith(("나는", "저는", "제가", "내가")):
        return 1
    if first in ("he", "she", "he's", "she's") or first.startswith(("그는", "그녀는", "그가")):
        return 3
    return 0


def own_ages_apart(a_text: str, b_text: str) -> bool:
    """Whether two facts give the subject's own age two different values (see the module)."""
    a, b = _own_age(a_text), _own_age(b_text)
    if a is None or b is None or two_people(a_text, b_text, topics_are_names=True):
        return False
    if {_grammatical_person(a_text), _grammatical_person(b_text)} == {1, 3}:
        return False  # "I just turned 64" / "He just turned 50": the user and someone else
    gap = _KO_COUNT_GAP if a[1] != b[1] else _BIRTHDAY_GAP
    return abs(a[0] - b[0]) > gap


def own_age_keys(text: str) -> list[str]:
    """The blocking key of a fact that tells the subject's own age ("age:@self"), so that
    two of them meet as candidates in either language and whatever their subject words."""
    return ["age:@self"] if _own_age(text) is not None else []
