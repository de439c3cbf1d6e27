"""An age told twice: the subject's own ("Tendai is 41 years old" / "텐다이 씨는 올해 서른다섯
살이 되었다", "Tomasz is 48" / "He is 52 years old"), or a named being's ("Cat: Miso, grey
tabby, 4 years old." / "Miso is 9 and on a kidney diet", "Borys is seven" / "보리스는 올해 세
살이 되었다").

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

A named being's age is read from a short fact (or the one sentence of it that gives an age)
that names it once and gives one age: a label ("Cat: Miso, ...", "고양이 두부: 3살"), a name
after an animal word ("Their dog Farofa is a 4-year-old beagle", "a Jindo dog, Bori, 7
years old"), the name the fact opens with ("Miso is 9", "두부는 다섯 살 ..."; "Miso is 9"
read as an age only when nothing but "now" follows the number in its clause: "Miso is 4
kg" is a weight), or a pet's name ("a beagle named Rosie, about 8 years old").
Two such facts conflict when they name one being, written alike or, across the two
scripts, with consonant skeletons that meet (:mod:`auditor.detectors.transliteration`;
a name too short to have a skeleton is no evidence), and give it ages apart as above. Not
read: a fact about a relative, a role ("Patient is 65"), an age in the past.
"""

from __future__ import annotations

import functools
import re

from auditor.detectors._frame_words import (
    _is_hangul,
    _number,
    _tokens,
    _typed,
)
from auditor.detectors.contradiction_frames import SENTENCE, frames_of
from auditor.detectors.frame_people import names_a_relative, one_name, opening_name, two_people
from auditor.detectors.frame_pets import named_pets, names_a_pet
from auditor.detectors.transliteration import hangul_skeleton, latin_skeletons

__all__ = ["named_age_keys", "named_ages_apart", "own_age_keys", "own_ages_apart"]

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
    if frame.owners or names_a_relative(text) or names_a_pet(text):
        return None  # "Her son is 7", "아들이 일곱 살이다", "먹물이는 세 살 된 고양이다"
    if not _about_the_subject(text):
        return None
    if any(t.low in _EN_PAST for t in _tokens(text)):
        return None  # "Ola was 30 when she moved": an age she had
    return float(next(iter(ages))), _is_hangul(text)


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


#: "Miso is 9", "Borys is seven and ...": a number after a name's "is" that ends its clause
_EN_IS_AGE = re.compile(
    r"^[A-Z][^\W\d_]{2,} is (?P<n>\d{1,3}|[a-z]+)(?=\s*(?:$|[.,;:!)]|and\b|but\b|now\b|[—–]|- ))"
)
#: "Cat: Miso, grey tabby, 4 years old.": a word, a colon, a capitalised name
_EN_LABEL = re.compile(r"^\s*(?P<kind>[A-Za-z]+):\s*(?P<name>[A-Z][^\W\d_]{2,})\b")
#: "Their dog Farofa ...", "a Jindo dog, Bori, ...": an animal word, then its name
_EN_APPOSED = re.compile(r"\b(?P<kind>[a-z]+),?\s+(?P<name>[A-Z][^\W\d_]{2,})\b")
#: "고양이 두부: 3살, ...": a Korean word, a name, a colon
_KO_LABEL = re.compile(r"^\s*(?P<kind>[가-힣]+)\s+(?P<name>[가-힣]{1,4})\s*:")


@functools.lru_cache(maxsize=_FACT_CACHE)
def _named_age(text: str) -> tuple[str, float, bool] | None:
    """(name, age, told in Korean) of a named being's one age in a short fact, or None: a
    fact of several sentences by the one sentence that gives an age ("고양이 '모찌'와 산다.
    모찌는 올해 네 살이다.")."""
    if len(text) > _MAX_CHARS or not _may_give_an_age(text):
        return None
    sentences = [p for p in SENTENCE.split(text) if p.strip()]
    if len(sentences) > 1:
        aged = [
            p
            for p in sentences
            if _EN_IS_AGE.match(p) or "age" in _typed(_tokens(p), _is_hangul(p))
        ]
        return _named_age(aged[0]) if len(aged) == 1 else None
    frames = frames_of(text)
    if len(frames) != 1 or frames[0].modality != "current" or frames[0].negated:
        return None
    ko = _is_hangul(text)
    ages = set(_typed(_tokens(text), ko).get("age", ()))  # the whole fact's, not one value's
    bare = _EN_IS_AGE.match(text)
    if bare and not ages:
        n = _number(bare.group("n"))
        if n is not None and n.is_integer() and 0 < n <= _MAX_PET_OR_PERSON_AGE:
            ages = {n}
    if len(ages) != 1 or names_a_relative(text):
        return None
    if any(t.low in _EN_PAST for t in _tokens(text)):
        return None  # "was 30 when she moved": an age one had
    name = _name_of(text)
    if name is None or name in _ROLES:
        return None
    return name, float(next(iter(ages))), ko


def _may_give_an_age(text: str) -> bool:
    """A cheap test before a fact is read: a Korean age word, "old", "turned", or "X is N"
    (a digit alone is no age: most digits are dates and amounts)."""
    if "살" in text or "세" in text:
        return True
    low = text.lower()
    return any(w in low for w in _AGE_CUES) or any(
        _EN_IS_AGE.match(p) for p in SENTENCE.split(text)
    )


#: English words of an age written without a digit ("just turned three", "five years old")
_AGE_CUES = ("turned", "turns", "aged", " old", "-old")


#: the oldest age "X is N" is read as (a larger number is a count or a measure)
_MAX_PET_OR_PERSON_AGE = 120


def _name_of(text: str) -> str | None:
    """The one being a fact is about: a label's name, the name it opens with, or its one
    named pet; folded (lower case)."""
    label = _EN_LABEL.match(text) or _KO_LABEL.match(text)
    if label is not None and names_a_pet(label.group("kind")):
        return label.group("name").lower()
    apposed = {
        m.group("name").lower() for m in _EN_APPOSED.finditer(text) if names_a_pet(m.group("kind"))
    }
    if len(apposed) == 1:
        return apposed.pop()  # "Their dog Farofa is a 4-year-old beagle", "a dog, Bori, 7"
    pets = named_pets(text)
    opening = opening_name(text)
    if opening is not None and (not names_a_pet(text) or opening in pets or _is_the_pet(text)):
        return opening  # (not "Dana adopted a 4-year-old cat": the age is the cat's)
    return pets[0] if len(set(pets)) == 1 and opening is None else None


def _is_the_pet(text: str) -> bool:
    """Whether the animal a fact names is what its opening name is: "Miso is a grey tabby",
    "콩이는 여섯 살 된 말티즈예요" (a copula after the name, or the animal as the Korean
    predicate), not "Dana adopted a cat"."""
    toks = _tokens(text)
    if len(toks) < 2:  # noqa: PLR2004 - a name and what it is
        return False
    if not _is_hangul(toks[0].low):
        return toks[1].low in ("is", "'s")
    last = next((t.low for t in reversed(toks) if _is_hangul(t.low)), "")
    return names_a_pet(last)


def named_ages_apart(a_text: str, b_text: str) -> bool:
    """Whether two facts give one named being two different ages (see the module)."""
    a, b = _named_age(a_text), _named_age(b_text)
    if a is None or b is None or not one_name(a[0], b[0]):
        return False
    gap = _KO_COUNT_GAP if a[2] != b[2] else _BIRTHDAY_GAP
    return abs(a[1] - b[1]) > gap


def named_age_keys(text: str) -> list[str]:
    """Blocking keys of a named being's age: its name ("age:=miso"), and its consonant
    skeletons ("age:~MS"), so that the same name in the other script meets it."""
    found = _named_age(text)
    if found is None:
        return []
    name = found[0]
    if _is_hangul(name):
        skeleton = hangul_skeleton(name)
        skeletons = {skeleton} if skeleton is not None else set()
    else:
        skeletons = set(latin_skeletons(name))
    return sorted({"age:=" + name} | {"age:~" + s for s in skeletons})
