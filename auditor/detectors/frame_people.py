"""People in frames: a relative named in apposition ("my partner Sam", read as that
relative's name), a frame about another person than the other frame's ("her birthday"
/ "her mother's birthday"), and a fact about a relative it opens with against one that
never names that relative ("Marcus's sister is getting married on June 8" / "Marcus got
married on June 8": two people's facts, for duplicates), and the people a subject's store
introduces by name ("남편 티아구는", "my colleague Dana"), whose facts are theirs. Read by
:mod:`auditor.detectors.contradiction_frames`, :mod:`auditor.detectors.contradiction` and
:mod:`auditor.detectors.duplicates`."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Sequence

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import (
    Tok,
    _data,
    _is_hangul,
    _month_names,
    _tokens,
    ko_relative,
    modality_of,
    relatives,
)
from auditor.detectors.transliteration import hangul_skeleton, latin_skeletons, same_name

__all__ = [
    "about_a_relative_apart",
    "about_someone_else",
    "another_person",
    "introduced_people",
    "names_a_relative",
    "one_name",
    "two_people",
    "ko_named_relative_view",
    "named_relative_view",
    "opening_name",
    "relative_names",
]


def another_person(a: Frame, b: Frame) -> bool:
    """Whether two English heads name different people beside the subject: a relative in
    one that the other lacks ("her birthday" / "her mother's birthday", "his son's school" /
    "his daughter's school")."""
    if a.lang != "en" or b.lang != "en":
        return False
    people = relatives()[0]
    if (a.names & b.head) or (b.names & a.head):
        return False  # "my daughter Asha" / "Asha": the relative is named, one person
    return (a.head & people) != (b.head & people)


#: possessives before a relative named in apposition ("my partner Sam")
_NAMING_OWNERS = frozenset({"my", "his", "her", "their", "our", "your"})


def relative_names(text: str, toks: Sequence[Tok]) -> list[Frame]:
    """The name of a relative given in apposition ("I live in Leeds with my partner Sam",
    "my daughter Asha is 6") as that relative's name: the frame "My partner's name is Tom"
    gives. Only a capitalised word right after the relative, in the present."""
    people = relatives()[0]
    out: list[Frame] = []
    for i in range(len(toks) - 2):
        owner, rel, name = toks[i], toks[i + 1], toks[i + 2]
        if owner.low not in _NAMING_OWNERS or rel.key not in people:
            continue
        raw = text[name.start : name.end]
        if not (raw[:1].isupper() and raw.isalpha() and name.key not in _proper_non_names()):
            continue
        lows = [t.low for t in toks]
        modality = modality_of(lows, text, False)
        out.append(
            Frame(
                lang="en",
                head=frozenset({rel.key, "nam"}),
                rel="=",
                functional=True,
                subject=True,
                values=frozenset({name.key}),
                typed=(),
                only=False,
                conj=False,
                negated=False,
                modality=modality,
                span=(name.start, name.end),
                approx=False,
                names=frozenset(),
                attached=frozenset(),
                owners=frozenset({rel.key}),
                roles=frozenset(),
            )
        )
    return out


@functools.cache
def _proper_non_names() -> frozenset[str]:
    """Capitalised words after a relative that are no name (days, months, "I")."""
    d = _data()
    months = _month_names()
    return frozenset(
        {stem(w) for w in d["weekdays"] if w.isascii()}
        | {stem(m) for m in months}
        | set(months)
        | {"i"}
    )


def named_relative_view(text: str, toks: Sequence[Tok]) -> Sequence[Tok] | None:
    """The sentence from the name on when it opens with a relative named in apposition
    ("Jordan's son Eli is in year 2" -> "Eli is in year 2"), so that it meets "Eli is in
    year 5"; None otherwise."""
    if len(toks) < 4 or toks[1].key not in relatives()[0]:  # noqa: PLR2004
        return None
    if not (toks[0].low in _NAMING_OWNERS or toks[0].low.endswith("'s")):
        return None
    raw = text[toks[2].start : toks[2].end]
    if not (raw[:1].isupper() and raw.isalpha()) or toks[2].key in _proper_non_names():
        return None
    return toks[2:]


def ko_named_relative_view(toks: Sequence[Tok]) -> Sequence[Tok] | None:
    """The Korean sentence from the name on when it opens with an owner, a relative and the
    relative's name as its topic ("혜진의 아들 준우는 올해 7살이다" -> "준우는 올해
    7살이다"); None otherwise."""
    if len(toks) < 4 or not toks[0].low.endswith("의"):  # noqa: PLR2004
        return None
    relative = toks[1].low
    if relative not in relatives()[1]:
        return None
    if not toks[2].low.endswith(("은", "는", "이", "가")) or len(toks[2].low) < 2:  # noqa: PLR2004
        return None
    return toks[2:]


#: How many words may open a fact before the relative it is about ("Marcus's younger
#: sister", "지우의 남편은").
_OPENING = 4
#: How much of a fact its opening words are read from (a long fact is not tokenised whole
#: for them)
_OPENING_CHARS = 120


def _opening_relative(text: str) -> str:
    """The relative a fact opens with, as its subject ("Marcus's younger sister is getting
    married ...", "Her son starts school ...", "지우의 남편은 ..."), or ""."""
    en = relatives()[0]
    for t in _tokens(text[:_OPENING_CHARS])[:_OPENING]:
        if t.low in (",", ":", "(", ")"):
            break
        if _is_hangul(t.low):
            found = ko_relative(t.low)
            if found:
                return found
        elif stem(t.low) in en:
            return stem(t.low)
    return ""


def about_a_relative_apart(a_text: str, b_text: str) -> bool:
    """Whether one fact is about a relative (it opens with one: "Marcus's sister is getting
    married on June 8") that the other never names ("Marcus got married on June 8"): two
    people's facts, however many words they share."""
    for x, y in ((a_text, b_text), (b_text, a_text)):
        relative = _opening_relative(x)
        if relative and not _names_relative(y, relative):
            name = _relative_name(x, relative)
            if name and name in y:
                continue  # "루시아의 파트너 하비에르는 ..." / "하비에르는 ...": the partner, named
            return True
    return False


def _relative_name(text: str, relative: str) -> str:
    """The name a relative is given in apposition ("my partner Sam", "파트너 하비에르는"), as
    written, or ""."""
    toks = _tokens(text)
    for i, t in enumerate(toks[:-1]):
        hit = ko_relative(t.low) == relative if _is_hangul(relative) else stem(t.low) == relative
        if not hit:
            continue
        nxt = toks[i + 1]
        raw = text[nxt.start : nxt.end]
        if _is_hangul(raw) and raw.endswith(_ko_topic_particles()) and len(raw) >= 3:  # noqa: PLR2004
            return raw[:-1]
        if raw[:1].isupper() and raw.isalpha():
            return raw
        return ""
    return ""


def _names_relative(text: str, relative: str) -> bool:
    return any(
        ko_relative(t.low) == relative if _is_hangul(relative) else stem(t.low) == relative
        for t in _tokens(text)
    )


def two_people(a_text: str, b_text: str, *, topics_are_names: bool = False) -> bool:
    """Whether two facts open with the names of two different people ("Tomás never drinks
    alcohol" / "Elena likes a glass of wine with dinner"; "토마스는 ..." / "Elena ..."): in a
    subject's store one of them is about someone else, so nothing of theirs conflicts. A
    name in Hangul and one in Latin letters are one person when their consonant skeletons
    meet ("토마스" / "Tomás"). A fact that opens with no name says nothing here, and two
    Korean topics are not compared (without articles "가게는" is a topic as "토마스는" is),
    nor a Korean topic of two syllables with a Latin name ("장부는": a ledger), unless
    ``topics_are_names``: where the facts say what only a being has (an age), a Korean
    topic is read as a name ("하늘은 29살" / "먹물이는 세 살": two beings)."""
    na, nb = opening_name(a_text), opening_name(b_text)
    if na is None or nb is None or na == nb:
        return False
    if _is_hangul(na) and _is_hangul(nb):
        return topics_are_names
    if not _is_hangul(na) and not _is_hangul(nb):
        return True
    korean, latin = (na, nb) if _is_hangul(na) else (nb, na)
    if len(korean) < _KO_NAME_SYLLABLES and not topics_are_names:
        return False  # "장부는 ...", "가게는 ...": as likely a thing's topic as a name
    return not same_name(korean, latin)


#: the fewest syllables of a Korean topic read as a person's name against a Latin one
#: ("토마스는", "엘레나는"): a two-syllable topic is as often a thing ("장부는", "가게는")
_KO_NAME_SYLLABLES = 3


@functools.lru_cache(maxsize=10_000)
def opening_name(text: str) -> str | None:
    """The name a fact opens with as its subject, folded (accents off, lower case), or
    None: an English capitalised word (three letters or more) followed by a finite verb,
    perhaps after an adverb ("Elena is ...", "Tomás never drinks ..."; not "Write a ...",
    "Releases of ..."), or a Korean word of two to four syllables with a subject or topic
    particle that is no relative and no adverbial topic ("토마스는 ...")."""
    toks = _tokens(text[:_OPENING_CHARS])
    if len(toks) < 2:  # noqa: PLR2004 - a name and what it does
        return None
    first = toks[0]
    if _is_hangul(first.low):
        return _ko_opening_name(first.low)
    raw = text[first.start : first.end]
    if not (len(raw) >= 3 and raw[0].isupper() and raw[1:].isalpha() and raw[1:].islower()):  # noqa: PLR2004
        return None
    if first.low in _NOT_NAMES or stem(first.low) in relatives()[0]:
        return None  # "Every ...", "Mum loves ..."
    if first.key in _proper_non_names() or first.low in _proper_non_names():
        return None  # "Sunday is ..."
    verb = 2 if toks[1].low in _ADVERBS and len(toks) > 2 else 1  # noqa: PLR2004
    if toks[verb].low in _NOT_VERBS:
        return None  # "Drives his car ...": a note that opens with its verb
    if not _finite_verb(text[toks[verb].start : toks[verb].end]):
        return None
    return _folded(first.low)


def _ko_opening_name(word: str) -> str | None:
    if not word.endswith(_ko_topic_particles()) or word.endswith(_adverbial_topics()):
        return None
    name = word[:-1]
    if not 2 <= len(name) <= 4 or ko_relative(name):  # noqa: PLR2004
        return None
    return name


def _finite_verb(word: str) -> bool:
    """Whether a lower-case English word reads as a finite verb after a subject: an
    auxiliary, or a form in -s or -ed ("is", "doesn't", "likes", "moved")."""
    if not (word.isalpha() or word.endswith("n't")) or not word.islower():
        return False
    return word in _AUXILIARIES or (word.endswith(("s", "ed")) and not word.endswith("ss"))


#: capitalised words that open a sentence and name nobody
_NOT_NAMES = frozenset(
    """the this that these those there then when while after before since during every each
    all some most many his her their our your its she they you one today yesterday also
    always never usually often sometimes recently currently now lately only just""".split()
)
#: words that end in -s but are no verb: after a note's own opening verb ("Drives his")
_NOT_VERBS = frozenset({"his", "hers", "its", "this", "us", "thus", "plus", "yes"})
#: adverbs between a subject and its verb ("Tomás never drinks")
_ADVERBS = frozenset(
    "never always usually often sometimes rarely seldom also still just only really".split()
)
#: auxiliaries and copulas that follow a subject
_AUXILIARIES = frozenset(
    """is was has had does did can could will would should must isn't wasn't hasn't hadn't
    doesn't didn't can't won't""".split()
)


@functools.cache
def _ko_topic_particles() -> tuple[str, ...]:
    """Korean particles of a sentence's subject or topic (``ko_topic_suffixes``)."""
    return tuple(_data()["ko_topic_suffixes"])


@functools.cache
def _adverbial_topics() -> tuple[str, ...]:
    return tuple(_data()["ko_adverbial_topics"])


#: words besides the relatives that introduce another person by name ("my colleague Dana",
#: "후배 민재 씨"), as stems
_EN_INTRODUCERS = frozenset(
    stem(w)
    for w in (
        "colleague coworker friend flatmate roommate housemate boss manager neighbour "
        "neighbor classmate labmate teammate"
    ).split()
)
_KO_INTRODUCERS = ("후배", "선배", "동료", "친구", "룸메이트", "팀장", "상사", "이웃", "동기")
#: the endings a Korean name takes in a fact ("티아구는", "민재 씨가", "은지의")
_KO_NAME_ENDINGS = (
    "씨는",
    "씨가",
    "씨의",
    "씨도",
    "씨",
    "는",
    "은",
    "이가",
    "가",
    "이",
    "의",
    "도",
)
#: the fewest syllables of a Korean word after a relative read as a name without "씨"
#: ("남편 티아구는"; "남편 회사는" is the husband's company)
_KO_BARE_NAME = 3
#: how many words a Korean fact may open with before the person it is about ("연구실
#: 후배 민재 씨는 ...")
_KO_TOPIC_WORDS = 4


def introduced_people(facts: Sequence[str]) -> frozenset[str]:
    """The names a subject's facts introduce as other people, folded: a capitalised name
    right after a relative or a colleague word ("her husband Tiago", "my colleague Dana"),
    a Korean name after one ("남편 티아구는", "후배 민재 씨"). A name two facts or more open
    with, in either script, is the subject's own ("Tiago's wife Rafaela ..." in Rafaela's
    store) and is left out."""
    en_words = relatives()[0] | _EN_INTRODUCERS
    names: set[str] = set()
    for text in facts:
        toks = _tokens(text)
        for k in range(len(toks) - 1):
            t, nxt = toks[k], toks[k + 1]
            if _is_hangul(t.low):
                if ko_relative(t.low) or t.low.startswith(_KO_INTRODUCERS):
                    after = toks[k + 2].low if k + 2 < len(toks) else ""
                    name = _ko_name(nxt.low, marked=after.startswith("씨"))
                    if name is not None:
                        names.add(name)
            elif stem(t.low) in en_words:
                raw = text[nxt.start : nxt.end].split("'")[0].split("\u2019")[0]
                if len(raw) >= 3 and raw[0].isupper() and raw[1:].isalpha() and raw[1:].islower():  # noqa: PLR2004
                    names.add(_folded(raw))
    openings = [n for n in (opening_name(f) for f in facts) if n is not None]
    # the subject's own names: those two facts or more open with, in either script
    own = frozenset(n for n in set(openings) if openings.count(n) >= 2)  # noqa: PLR2004
    return frozenset(n for n in names if not _known(n, own))


def _ko_name(word: str, *, marked: bool) -> str | None:
    """A Korean name in a word after a relative ("티아구는" -> 티아구; "민재" before "씨"),
    or None for a word that is as likely a thing ("회사는") or no noun ("결혼해서")."""
    stripped, particle = word, False
    for ending in _KO_NAME_ENDINGS:
        if stripped.endswith(ending) and len(stripped) > len(ending) + 1:
            marked = marked or ending.startswith("씨")
            particle = True
            stripped = stripped[: -len(ending)]
            break
    if not all(_is_hangul(c) for c in stripped) or ko_relative(stripped):
        return None
    if not 2 <= len(stripped) <= 4:  # noqa: PLR2004
        return None
    if marked or (particle and len(stripped) >= _KO_BARE_NAME):
        return stripped
    return None


def names_a_relative(text: str) -> bool:
    """Whether a fact names a relative anywhere ("Her son is 7", "아들이 일곱 살이다"; a
    Korean relative as a whole word with its particles)."""
    en = relatives()[0]
    return any(
        ko_relative(t.low) if _is_hangul(t.low) else (stem(t.low) in en or t.key in en)
        for t in _tokens(text)
    )


def _folded(word: str) -> str:
    """A word in lower case without accents ("Tomás" -> "tomas")."""
    folded = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in folded if not unicodedata.combining(c))


def _person_of(text: str, others: frozenset[str]) -> str | None:
    """The introduced person a fact is about: its opening name, or a Korean fact's topic
    among its first words ("연구실 후배 민재 씨는 ..."), when that is one of ``others``."""
    name = opening_name(text)
    if name is not None and _known(name, others):
        return name
    if not _is_hangul(text):
        return None
    toks = _tokens(text)[:_KO_TOPIC_WORDS]
    for k, t in enumerate(toks):
        after = toks[k + 1].low if k + 1 < len(toks) else ""
        name = _ko_name(t.low, marked=after.startswith("씨"))
        # the person the fact is about, not a companion ("도윤 씨와 함께 산다")
        topic = t.low.endswith(("는", "은", "가", "이")) or after in _KO_TITLED_TOPICS
        if name is not None and topic and _known(name, others):
            return name
    return None


#: "씨" with a topic or subject particle after a name ("민재 씨는"; not "씨와": with him)
_KO_TITLED_TOPICS = frozenset({"씨는", "씨가", "씨도", "씨"})


def _known(name: str, others: frozenset[str]) -> bool:
    """Whether a name is one of ``others`` (see :func:`one_name`)."""
    return any(one_name(name, other) for other in others)


def one_name(a: str, b: str) -> bool:
    """Whether two folded names are one: alike, or across the scripts with consonant
    skeletons that meet. Unlike :func:`~auditor.detectors.transliteration.same_name`, a
    name too short for a skeleton is no evidence that two are one."""
    if a == b:
        return True
    if _is_hangul(a) == _is_hangul(b):
        return False
    hangul, latin = (a, b) if _is_hangul(a) else (b, a)
    skeleton = hangul_skeleton(hangul)
    return skeleton is not None and skeleton in latin_skeletons(latin)


def _mentions(text: str, name: str) -> bool:
    """Whether a fact names a person anywhere ("Sam's partner Alex is a teacher": Alex)."""
    for t in _tokens(text):
        word = t.low.split("'")[0]
        if _is_hangul(word):
            found = _ko_name(word, marked=True)
            word = found if found is not None else word
        if _known(_folded(word), frozenset({name})):
            return True
    return False


def about_someone_else(a_text: str, b_text: str, others: frozenset[str]) -> bool:
    """Whether one of two facts is about a person the store introduced as someone else
    (``others``, from :func:`introduced_people`) and the other is not about that person:
    "남편 티아구는 ..." told, "티아구는 커피를 전혀 안 마신다" is the husband's, not the
    subject's ("Drinks about four espressos a day")."""
    pa, pb = _person_of(a_text, others), _person_of(b_text, others)
    if pa is None and pb is None:
        return False
    if pa is not None and pb is not None:
        return not (pa == pb or _known(pa, frozenset({pb})))
    person, other_text = (pa, b_text) if pa is not None else (pb, a_text)
    assert person is not None
    return not _mentions(other_text, person)
