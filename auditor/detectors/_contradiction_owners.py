"""Whose a fact's mention is: the subject's own, or a relative's ("her husband loves
shrimp"), said as a fact or under a condition ("if he eats shrimp"), had or kept away
("avoids cheese"). Read by :mod:`auditor.detectors._contradiction_profile` for the
values, traits, numbers and dates of a fact."""

from __future__ import annotations

from collections.abc import Sequence

from auditor.detectors import _contradiction_data as data
from auditor.detectors._contradiction_text import Token, has_phrase, is_hangul, stem
from auditor.detectors._frame_words import ko_relative, relatives

__all__ = ["avoided", "conditional", "owned", "someone_else"]


def avoided(tokens: Sequence[Token], first: int) -> bool:
    """Whether a trait's food or habit at ``first`` is kept away in its clause ("checks
    labels for milk, eggs and honey", "avoids shrimp"; ``avoid_before`` of the data
    file)."""
    clause = tokens[first].clause
    before = [t.text for t in tokens[max(0, first - _AVOID_WINDOW) : first] if t.clause == clause]
    return has_phrase(before, data.AVOID_BEFORE)


#: How many words before a trait's mention are read for "avoids" ("checks labels for
#: milk, eggs and honey": six words back from "honey")
_AVOID_WINDOW = 7


def conditional(tokens: Sequence[Token], k: int) -> bool:
    """Whether the word at ``k`` is said under a condition, not as a fact ("if he eats
    shrimp", "새우를 먹으면"): a Korean verb in its conditional form, or "if" / "unless"
    / "whenever" shortly before it in its clause."""
    t = tokens[k]
    if is_hangul(t.text):
        return t.text.endswith("면") and not t.text.endswith("면서")
    return any(
        tokens[j].text in ("if", "unless", "whenever") and tokens[j].clause == t.clause
        for j in range(max(0, k - 3), k)
    )


def owned(tokens: Sequence[Token], first: int, cues: frozenset[str]) -> bool:
    """Whether a trait of having something is said by a possessive ("Marco's daughter
    Giulia", "Ben's dog"): for traits whose cues say having ("has")."""
    return "has" in cues and first > 0 and tokens[first - 1].text.endswith(("'s", "\u2019s"))


#: How many words before a trait's mention are read for another person.
_SOMEONE_WINDOW = 6


def someone_else(tokens: Sequence[Token], first: int) -> bool:
    """Whether a relative is named in the same clause just before the token at ``first``
    or opens that clause ("her husband loves shrimp", "남편은 새우를 좋아한다"): the
    mention is that person's."""
    en = relatives()[0]
    clause = tokens[first].clause
    if clause > 0 and _pronoun_of_an_opening_relative(tokens, clause, en):
        return True  # "His wife Rudo teaches maths; unlike Tendai, she'll have a glass of wine"
    if clause >= 2 and _appositive_relative(tokens, en):  # noqa: PLR2004 - after it
        return True  # "Lieve, Tomas's partner, is left-handed": the partner's trait
    start = first
    while start > 0 and tokens[start - 1].clause == clause:
        start -= 1
    # the words just before, and the clause's opening words, its subject ("Jiwoo's husband
    # loves cheese and puts together a cheese board": both cheeses are his)
    near = range(max(0, first - _SOMEONE_WINDOW), first)
    opening = range(start, min(first, start + _SUBJECT_WORDS))
    for k in sorted({*near, *opening}):
        t = tokens[k]
        if t.clause != clause:
            continue
        if t.text.endswith(_KO_WITH) or (k > 0 and tokens[k - 1].text in _EN_WITH):
            continue  # "친구들과 맥주 마시는 걸 좋아한다", "with her sister": company, not owner
        if _in_a_setting(tokens, k) or _ko_setting_or_company(tokens, k, first):
            continue  # "at a friend's birthday Marta had cheesecake": where, not whose
        if k + 1 < first and tokens[k + 1].text in ("and", "&"):
            continue  # "my husband and I live in Busan": the subject too
        if k > 1 and tokens[k - 2].text in ("and", "&") and tokens[k - 1].text in _POSSESSIVES:
            continue  # "Marcus and his wife had their wedding": the subject with them
        if t.stem in en or ko_relative(t.text):
            return True
    return False


def _pronoun_of_an_opening_relative(
    tokens: Sequence[Token], clause: int, en: frozenset[str]
) -> bool:
    """Whether a later clause opens with "he" / "she" / "they" in a fact whose first words
    name a relative as its subject ("His wife Rudo ..."): the pronoun is the relative."""
    opening = [t for t in tokens if t.clause == 0][:_SUBJECT_WORDS]
    named = {t.stem for t in opening if t.stem in en}
    if not named:
        return False
    own = next((t for t in tokens if t.clause == clause), None)
    pronoun = own.text.split("'")[0] if own is not None else ""
    if pronoun not in ("he", "she", "they"):
        return False
    # "Her husband Earl died in 2019; she has lived alone since": "she" is not the husband
    other_gender = _MALE if pronoun == "she" else _FEMALE if pronoun == "he" else frozenset()
    return not named <= other_gender


#: relatives (as stems) who are men and who are women: a pronoun of the other gender after
#: them is someone else
_MALE = frozenset(
    stem(w)
    for w in "husband father dad son brother boyfriend grandfather grandson uncle nephew".split()
)
_FEMALE = frozenset(
    stem(w)
    for w in (
        "wife mother mum mom daughter sister girlfriend grandmother granddaughter aunt niece"
    ).split()
)


def _appositive_relative(tokens: Sequence[Token], en: frozenset[str]) -> bool:
    """Whether a fact opens with a name and a relative set off by commas ("Lieve, Tomas's
    partner, ..."): one word, then a short clause that names a relative."""
    opening = [t for t in tokens if t.clause == 0]
    apposed = [t for t in tokens if t.clause == 1]
    return (
        len(opening) == 1
        and 0 < len(apposed) <= _APPOSITION_WORDS
        and any(t.stem in en or ko_relative(t.text) for t in apposed)
    )


#: the most words of an apposition that names a relative ("Tomas's older partner")
_APPOSITION_WORDS = 4


def _in_a_setting(tokens: Sequence[Token], k: int) -> bool:
    """Whether the relative at ``k`` follows a preposition of place or time, perhaps with a
    determiner between ("at a friend's birthday", "during her sister's wedding")."""
    j = k - 1
    if j >= 0 and tokens[j].text in _DETERMINERS:
        j -= 1
    return (
        j >= 0 and tokens[j].text in _SETTING_PREPOSITIONS and tokens[j].clause == tokens[k].clause
    )


def _ko_setting_or_company(tokens: Sequence[Token], k: int, first: int) -> bool:
    """Whether the Korean relative at ``k`` names a place or an occasion ("부모님 댁에서",
    "여동생 결혼식에서": where, not whose) or company given by name ("애인 도윤 씨와 함께",
    "아들 내외와"): the next word or two, before ``first``, end in a particle of place or
    of company."""
    if not is_hangul(tokens[k].text) or tokens[k].text.endswith(_KO_SUBJECT_PARTICLES):
        return False
    for j in range(k + 1, min(k + 3, first)):
        t = tokens[j]
        if t.clause != tokens[k].clause:
            return False
        if t.text.endswith(_KO_PLACE) or t.text.endswith(_KO_WITH):
            return True
        if t.text.endswith(_KO_CASE_PARTICLES):
            return False  # "친구 상철은 하루에 ...": the friend is the subject
    return False


#: Korean particles of a sentence's subject or topic: a relative with one is whose
_KO_SUBJECT_PARTICLES = ("은", "는", "이", "가", "께서")
#: Korean case particles that end a noun phrase before a place or a companion would
_KO_CASE_PARTICLES = ("은", "는", "이", "가", "을", "를", "의", "도")
#: Korean particles of place ("댁에서", "결혼식에")
_KO_PLACE = ("에서", "에")

#: determiners between a preposition and a relative ("at a friend's ...")
_DETERMINERS = frozenset({"a", "an", "the", "my", "his", "her", "their", "our"})
#: prepositions that set a scene rather than name whose a thing is
_SETTING_PREPOSITIONS = frozenset({"at", "during", "after", "before", "on", "in"})

#: possessive words before a relative ("and his wife")
_POSSESSIVES = frozenset({"my", "his", "her", "their", "our"})

#: How many words open a clause as its subject ("Jiwoo's husband", "her older son").
_SUBJECT_WORDS = 3

#: a person one does something with, not whose taste it is ("친구들과", "with her sister")
_KO_WITH = ("과", "와", "랑", "하고")
_EN_WITH = frozenset({"with", "alongside"})
