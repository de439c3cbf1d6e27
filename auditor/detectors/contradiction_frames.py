"""Open-vocabulary "same attribute, different value" frames for the contradiction detector.

A *frame* is read from one sentence by structure, not from value lists: the attribute head
(the thing the sentence is about and its relation: "the Tessera project | is licensed
under", "the meeting | lasts", "사내 위키는 | ... 운영한다"), and the value (whatever follows:
"AGPL-3.0", "30 minutes", "Notion"). English: ``HEAD (copula | relation verb [participle]
[preposition]) VALUE`` and ``HEAD: VALUE``; a sentence without a subject ("Works at Naver",
"Never deploys on Fridays") has the user as its subject and the verb as its head; "only"
inside the relation ("ships only for iOS") marks the value, not the relation. Korean:
``HEAD은/는 VALUE PREDICATE`` (the topic-marked phrase is the head; "X의 Y는 Z" too) and the
existential ``[WHEN] HEAD이/가 있다`` ("매주 화요일에 피아노 레슨이 있다"), whose typed values
alone are compared. Tokens, Korean keys and typed values come from
:mod:`auditor.detectors._frame_words`.

Two relations match when they are equal, both copulas, or in one group of the data file's
``relation_groups`` ("is licensed under" / "is distributed under"; "ships for" / "is
available on"; "goes out" / "is sent" for a schedule, only when both frames carry typed
values of one kind, so "is written every Thursday" / "goes out every Monday" stay two
events).

:func:`compare_frames` decides a pair of frames:

* typed values (weekdays, weekend, parts of the day, dates, months, durations, counts with a
  unit, clock times, days of the month) that do not overlap: a clear conflict;
* "only X" against "X and Y" (a rule and a statement that breaks it);
* untyped values that differ, with the same head and relation: a conflict when the relation
  is single-valued (a copula with a named subject, "lives in", "is licensed under", "runs
  on"); otherwise a plausible candidate with a low score (the LLM judge decides);
* a value that only adds words ("Go" vs "Go 1.22 with chi"), or a negated alternative
  ("Vite, not Webpack": the clause stops at "not"), is a restatement: no conflict;
* a plan, a past state or a hypothetical ("plans to move to Rust", "used to live in", "if")
  never conflicts with the current state.

:func:`auditor.detectors.frame_schedule.never_every` catches "never on D" against "every
day" or "every D". The cue words are data (``data/contradiction_frames.json``): relation
and modality words only, never values.
Every regular expression here is linear-time (no nested unbounded quantifiers).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame, FrameVerdict, Modality
from auditor.detectors._frame_words import (
    AGE_VERBS,
    Tok,
    _data,
    _is_hangul,
    _number,
    _tokens,
    _typed,
    age_after_verb,
    ko_key,
    modality_of,
)
from auditor.detectors.frame_acronyms import acronym_aligned, acronym_keys
from auditor.detectors.frame_anchors import ages_close, folded, near_values, other_period
from auditor.detectors.frame_jobs import as_job
from auditor.detectors.frame_korean import MAX_VALUE_TOKENS, ko_frame
from auditor.detectors.frame_lengths import compound_lengths, without_length_words
from auditor.detectors.frame_occasions import (
    attached_keys,
    other_activity,
    other_occasions,
    scope_words,
)
from auditor.detectors.frame_people import (
    another_person,
    ko_named_relative_view,
    named_relative_view,
    relative_names,
)
from auditor.detectors.frame_relations import ko_relation_groups, relation_group
from auditor.detectors.frame_roles import object_aligned, owner_apart, role_aligned
from auditor.detectors.frame_schedule import generic_verbs
from auditor.detectors.frame_verbs import en_boundary, named_entity
from auditor.detectors.frame_versions import meets_minimum
from auditor.detectors.frame_views import appositive_views, reduced_relative_view

__all__ = [
    "Frame",
    "FrameVerdict",
    "SENTENCE",
    "compare_frames",
    "frame_keys",
    "frames_of",
    "heads_match",
    "ko_key",
    "text_modality",
]

#: where one sentence of a fact ends and the next begins
SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_MAX_FRAMES = 4
#: Untyped values longer than this (content words) are paraphrase-prone: judge only.
_SHORT_VALUE = 4
#: at most this many words in one item of a list of values ("and some French")
_LIST_ITEM = 4
_APPROX = frozenset(
    {"about", "around", "roughly", "approximately", "approx", "nearly", "almost", "circa", "~"}
)

#: Facts whose frames, modality and schedule are remembered: four times a big subject's
#: window and overlap (2,500 memories), so one scan does not keep most of a store's texts.
_FACT_CACHE = 10_000


@functools.lru_cache(maxsize=_FACT_CACHE)
def text_modality(text: str) -> Modality:
    """Whether a whole fact states the present, a plan, a past state or a hypothetical."""
    toks = _tokens(text)
    korean = not text.isascii() and any(_is_hangul(t.low) for t in toks)
    return modality_of([t.low for t in toks], text, korean)


def _clause_end(toks: Sequence[Tok], start: int) -> int:
    stops = _data()["clause_stops_set"]
    for i in range(start, len(toks)):
        if toks[i].low in stops:
            return i
    return len(toks)


def _list_end(toks: Sequence[Tok], start: int) -> int:
    """The end of a value from ``start``: the clause end, or past commas that separate the
    items of one list ("Arabic, English and some French", "Go, Rust, or Zig"): each item
    short, the last after "and" / "or"."""
    end = _clause_end(toks, start)
    n = len(toks)
    while end < n and toks[end].low == ",":
        nxt = _clause_end(toks, end + 1)
        item = [t.low for t in toks[end + 1 : nxt]]
        if not item or len(item) > _LIST_ITEM:
            break
        end = nxt
        if item[0] in ("and", "or"):
            return end
    return _clause_end(toks, start) if end < n and toks[end].low == "," else end


def _en_functional(  # noqa: PLR0913 - the relation's parts and the head they follow
    verb: str,
    rel_parts: Sequence[str],
    head_toks: Sequence[Tok],
    nxt: str,
    text: str,
    offset: int,
) -> bool:
    """Whether an English relation holds one value at a time."""
    d = _data()
    subject = bool(head_toks)
    if verb == ":":
        return subject
    if verb in d["copulas_set"]:
        # "X is Y" holds one Y; "I am Y" / "is a Y" (a person's traits) and "Priya is Y" (a
        # name's attributes) hold many
        person = subject and all(t.low in d["person_heads_set"] for t in head_toks)
        bare = all(p in d["prepositions_set"] for p in rel_parts[1:])  # not "is written in"
        return (
            subject
            and not person
            and not (bare and named_entity(text, head_toks, offset))
            and not (len(rel_parts) == 1 and nxt in ("a", "an"))
        )
    return bool(verb in d["functional_verbs_set"] and verb not in d["multi_valued_verbs_set"])


def _only_before_relation(lows: Sequence[str], j: int, d: Mapping[str, Any]) -> bool:
    """Whether ``lows[j]`` is "only" (or "just", ...) right before a participle or a
    preposition that continues the relation ("ships only for", "is only available on")."""
    if lows[j] not in d["only_words_set"] or j + 1 >= len(lows):
        return False
    nxt = lows[j + 1]
    return nxt in d["participles_set"] or (
        nxt in d["prepositions_set"] and nxt not in ("every", "each")
    )


def _just_now(lows: Sequence[str], k: int) -> bool:
    """Whether "just" at ``k`` means "recently" ("Asha just turned 9", "has just moved"):
    right before a verb in the past tense or a participle."""
    if lows[k] != "just" or k + 1 >= len(lows):
        return False
    nxt = lows[k + 1]
    return nxt.endswith("ed") or nxt in _data()["participles_set"] or nxt in AGE_VERBS


#: at most this many words in a value that one fact denies and the other one lists
_DENIED_WORDS = 2


def _sole_of_kind(lows: Sequence[str], k: int) -> bool:
    """Whether "only" at ``k`` follows "a" / "an" ("an only child", "an only daughter"): the
    adjective, a trait of the noun, not a restriction of the relation to one value ("the
    only" and "her only" stay restrictions: "her only hobby is chess")."""
    return k > 0 and lows[k - 1] in ("a", "an")


def _letter_name(text: str, t: Tok, offset: int, first: Tok) -> bool:
    """Whether a capital letter past the sentence's first word names something ("Service A",
    "Plan B") rather than being the article "a"."""
    return t.start > first.start and text[t.start - offset : t.end - offset].isupper()


#: adverbs that make a relation exclusive ("written entirely in Rust")
_WHOLLY = frozenset({"entirely", "exclusively", "solely", "wholly", "completely", "fully"})
#: relations whose value is a programming language ("is written in Rust"): the value names
#: the attribute of "Atlas's main language is TypeScript"
_LANGUAGE_RELATIONS = frozenset({"written in", "cod in", "implement in", "programm in"})


def _en_relation(lows: Sequence[str], boundary: int) -> tuple[list[str], int, bool]:
    """The relation's words from the verb at ``boundary`` (its participles, particles and
    prepositions: "is licensed under"), where the value starts, and whether "only" stood
    inside the relation ("ships only for iOS": the relation is "ships for")."""
    d = _data()
    n = len(lows)
    rel_parts = [lows[boundary] if lows[boundary] != ":" else ":"]
    j = boundary + 1
    only_in_rel = False
    while j < n and (
        lows[j] in d["participles_set"]
        or lows[j] in d["relation_particles_set"]
        or (lows[j].endswith("ed") and len(lows[j]) > 4 and rel_parts[0] in d["copulas_set"])  # noqa: PLR2004
        or _only_before_relation(lows, j, d)
    ):
        if lows[j] in d["only_words_set"]:
            only_in_rel = True
        else:
            rel_parts.append(lows[j])
        j += 1
    if (
        len(rel_parts) > 1
        and j + 1 < n
        and lows[j].endswith("ly")
        and lows[j + 1] in d["prepositions_set"]
    ):
        only_in_rel = only_in_rel or lows[j] in _WHOLLY  # "written entirely in Rust"
        j += 1  # an adverb inside the relation ("hosted mostly on", "written entirely in")
    while (
        j < n
        and lows[j] in d["prepositions_set"]
        and lows[j] not in ("every", "each")
        and not (lows[j] == "at" and j + 1 < n and lows[j + 1] in ("least", "most"))
    ):  # "runs at least 20 km": "at least" is the value's bound, not the relation's
        rel_parts.append(lows[j])
        j += 1
    return rel_parts, j, only_in_rel


def _en_frame(text: str, toks: Sequence[Tok], offset: int = 0) -> Frame | None:
    """The frame of an English sentence ``text`` (``toks`` start at ``offset`` of the fact)."""
    d = _data()
    lows = [t.low for t in toks]
    n = len(toks)
    skip = d["qualifiers_set"] | d["only_words_set"] | d["never_words_set"] | {"usually"}
    boundary = en_boundary(toks)
    if boundary < 0:
        return None
    head_toks = [
        t
        for t in toks[:boundary]
        if _letter_name(text, t, offset, toks[0])
        or (
            t.low not in skip
            and t.low not in d["determiners_set"]
            and t.low not in (",", "does", "do", "did")  # "Beacon does not run on ..."
        )
    ]
    rel_parts, j, only_in_rel = _en_relation(lows, boundary)
    end = _list_end(toks, j)
    value_toks = toks[j:end][:MAX_VALUE_TOKENS]
    verb = rel_parts[0]
    if verb == ":" and any(t.low in d["question_auxiliaries_set"] for t in value_toks):
        return None  # "SUBJECT: your card has been charged ...": a message, not a value
    subject = bool(head_toks)
    functional = _en_functional(verb, rel_parts, head_toks, lows[j] if j < n else "", text, offset)
    head = frozenset(t.key for t in head_toks if t.key)
    names = frozenset(
        t.key
        for t in head_toks
        if t.key
        and t.start > toks[0].start
        and any(c.isupper() for c in text[t.start - offset : t.end - offset])
    )
    if not head:
        head = frozenset({"@" + stem(verb)})
    named_after = _trailing_name(text, value_toks, offset)
    if named_after and verb in d["copulas_set"]:
        # "Tomás's dog is a golden retriever named Bolinha": Bolinha is the head's name
        head, names = head | named_after, names | named_after
        value_toks = value_toks[: -len(named_after) - 1]
    if verb in d["copulas_set"] and len(rel_parts) > 1 and rel_parts[1] in ("called", "named"):
        head, rel_parts = head | {"nam"}, rel_parts[:1]  # "is called Emma": "'s name is Emma"
    if (
        verb in d["copulas_set"] and len(rel_parts) > 1 and rel_parts[1] in d["prepositions_set"]
    ) or any(p in d["event_relations_set"] for p in rel_parts):
        rel = "="  # "is on Mondays", "is every Thursday", "happens on", "is held on": one relation
    else:
        rel = " ".join(stem(p) for p in rel_parts if p not in d["copulas_set"]) or "="
    before = lows[:boundary]
    vlows = [t.low for t in value_toks]
    only = (
        only_in_rel
        or any(
            w in d["only_words_set"]
            and not _just_now(before + vlows, k)
            and not _sole_of_kind(before + vlows, k)
            for k, w in enumerate(before + vlows)
        )
        # "for all design work", "for every trip": the whole purpose, one value
        or any(
            w in ("all", "every") and k > 0 and vlows[k - 1] in ("for", "in")
            for k, w in enumerate(vlows)
        )
    )
    conj = any(t.low in d["conjunctions_set"] for t in value_toks)
    negated = any(w in d["never_words_set"] or w.endswith("n't") for w in lows[: j + 1])
    typed = _typed(value_toks, False)
    age = age_after_verb(verb, value_toks)
    if age is None and verb in d["copulas_set"] and named_entity(text, head_toks, offset):
        age = _bare_age(value_toks)  # "Margaret is 71 and retired from teaching"
    if age is not None:
        typed.setdefault("age", set()).add(age)
    numbers = d["number_words"]
    values = frozenset(
        # a number word is its digits ("nine years old" / "is 9"), never the article "a"
        str(numbers[t.low]) if t.low in numbers and t.low not in ("a", "an") else t.key
        for t in value_toks
        if t.low not in d["qualifiers_set"]
        and t.low not in d["conjunctions_set"]
        and t.low not in d["only_words_set"]
        and t.low not in (",", ":", "(", ")")
    )
    if not values and not typed:
        return None
    span = (value_toks[0].start, value_toks[-1].end) if value_toks else (0, 0)
    modality = modality_of(lows, text, False)
    if modality == "current" and verb in ("was", "were") and "age" in typed:
        modality = "past"  # "Pippin was 3 when we adopted him": an age he had
    return Frame(
        "en",
        head,
        rel,
        functional,
        subject,
        values,
        tuple(sorted((k, frozenset(v)) for k, v in typed.items())),
        only,
        conj,
        negated,
        modality,
        span,
        any(w in _APPROX for w in lows),
        names,
        attached_keys(value_toks, typed),
        _en_owners(head_toks),
        frozenset({"languag"})
        if rel in _LANGUAGE_RELATIONS
        else _en_roles(text, value_toks, offset),
    )


def _trailing_name(text: str, value_toks: Sequence[Tok], offset: int) -> frozenset[str]:
    """The keys of a capitalised name that ends a value after "named" / "called" ("a golden
    retriever named Bolinha"), one or two words; empty when there is none."""
    for size in (1, 2):
        k = len(value_toks) - size - 1
        if k < 1 or value_toks[k].low not in ("named", "called"):
            continue
        name = value_toks[k + 1 :]
        if all(text[t.start - offset : t.start - offset + 1].isupper() for t in name):
            return frozenset(t.key for t in name if t.key)
    return frozenset()


def _bare_age(value_toks: Sequence[Tok]) -> float | None:
    """A named person's age given as a bare number after the copula ("Margaret is 71",
    "Margaret is 71 and retired"): the number alone, or before "and" or a comma."""
    if not value_toks:
        return None
    num = _number(value_toks[0].low)
    if num is None or not value_toks[0].low[:1].isdigit() or not (0 < num <= 110):  # noqa: PLR2004
        return None
    if len(value_toks) > 1 and value_toks[1].low not in ("and", ",", ";"):
        return None
    return num


def _en_owners(head_toks: Sequence[Tok]) -> frozenset[str]:
    """The keys of a head's possessor phrase: every word up to the last possessive ("Crumb
    & Co's rent" -> crumb, co; "Margaret's book club" -> margaret)."""
    last = max((k for k, t in enumerate(head_toks) if t.low.endswith("'s")), default=-1)
    if last < 0:
        return frozenset()
    skip = _data()["determiners_set"]
    return frozenset(
        t.key for t in head_toks[: last + 1] if t.key and t.key[0].isalnum() and t.low not in skip
    )


def _en_roles(text: str, value_toks: Sequence[Tok], offset: int) -> frozenset[str]:
    """The noun that ends a value and names its attribute ("under the GPL license" ->
    license): a lower-case word after a name or another value word."""
    d = _data()
    if len(value_toks) < 2:  # noqa: PLR2004 - a value and the noun after it
        return frozenset()
    last = value_toks[-1]
    word = text[last.start - offset : last.end - offset]
    closed = d["qualifiers_set"] | d["only_words_set"] | d["determiners_set"]
    if not word.isalpha() or not word.islower() or last.low in closed:
        return frozenset()
    if last.low in d["prepositions_set"] or last.low in d["conjunctions_set"]:
        return frozenset()
    if any(t.low in d["prepositions_set"] for t in value_toks[:-1]):
        return frozenset()  # "five people at the bakery": the bakery is where, not what
    # a named value before it ("the GPL license", "the 3.2 release"), not a description
    # ("an open-source license": any licence of that kind)
    named = any(
        any(c.isupper() or c.isdigit() for c in text[t.start - offset : t.end - offset])
        for t in value_toks[:-1]
    )
    return frozenset({last.key}) if named else frozenset()


def _is_question(part: str, toks: Sequence[Tok]) -> bool:
    """Whether a sentence asks rather than states: it ends with a question mark, or opens
    with a question word and an auxiliary ("what is ...", "where does ..."). A question
    gives no value ("What is matcha?" and "What is the Imjin war" are not two values of
    one "what"); "What matters is X" still states one.
    """
    if part.rstrip().endswith(("?", "\uff1f")):
        return True
    d = _data()
    first = toks[0].low
    if first in d["question_contractions_set"]:
        return True
    return first in d["question_words_set"] and toks[1].low in d["question_auxiliaries_set"]


@functools.lru_cache(maxsize=_FACT_CACHE)
def frames_of(text: str) -> tuple[Frame, ...]:
    """The frames of a fact (at most four sentences are read).

    Args:
        text: the memory text.

    Returns:
        One frame per sentence that has a head and a value.
    """
    out: list[Frame] = []
    offset = 0
    make = tuple.__new__  # Tok(...) without the named tuple's Python-level __new__
    # the text past the fourth sentence is never read: split no further than that
    for part in SENTENCE.split(text, maxsplit=_MAX_FRAMES)[:_MAX_FRAMES]:
        pos = text.find(part, offset)
        offset = pos + len(part) if pos >= 0 else offset
        toks: Sequence[Tok] = _tokens(part)
        if pos > 0:
            toks = [make(Tok, (t.low, t.key, t.start + pos, t.end + pos)) for t in toks]
        if len(toks) < 2 or _is_question(part, toks):
            continue
        if any(_is_hangul(t.low) for t in toks):
            frame = ko_frame(part, toks)
            if frame is not None:
                out.append(as_job(_as_birthday(frame), part))
            named = ko_named_relative_view(toks)
            if named is not None:
                frame = ko_frame(part, named)  # "혜진의 아들 준우는 7살이다": 준우 is 7
                if frame is not None:
                    out.append(_as_birthday(frame))
            continue
        base: Frame | None = None
        views = appositive_views(text, toks)
        reduced = reduced_relative_view(toks)
        if reduced is not None:
            views = [*views, reduced]
        named = named_relative_view(text, toks)
        if named is not None:
            views = [*views, named]
        for view in views:
            frame = _en_frame(part, view, max(pos, 0))
            if frame is not None:
                base = base or frame
                out.append(as_job(without_length_words(_as_birthday(frame)), part))
        out.extend(relative_names(text, toks))
        out.extend(compound_lengths(toks, base))
    return tuple(out)


#: typed kinds of a date of birth
_BIRTH_KINDS = frozenset({"date", "month", "year"})
#: possessive pronouns before a birthday told as a verb's object
_POSSESSIVES = frozenset({"her", "his", "my", "their", "your", "our"})


def _as_birthday(f: Frame) -> Frame:
    """A date of birth said with the verb ("Ben was born on June 4", "11월 2일에 태어났다") or
    a birthday as the object of a verb ("celebrates her birthday in late October") as the
    head's birthday ("Ben's birthday is June 4", "생일은 11월 2일이다"): one attribute,
    whichever way it is told. Only with a date, a month or a year ("born in Busan" is a
    place)."""
    if not (_typed_kinds(f) & _BIRTH_KINDS) or not f.head:
        return f
    if f.lang == "en" and f.rel == "=" and "born" in f.values:
        word, drop = "birthday", {"born"}
    elif (
        f.lang == "en"
        and "birthday" in f.values
        and (f.rel.startswith("celebrat") or f.rel in ("has", "have", "hav", "had"))
        and not f.values.isdisjoint(_POSSESSIVES)
    ):
        # "celebrates her birthday in late October", "has his birthday on May 2" (not "bought
        # a birthday cake on May 3")
        word, drop = "birthday", {"birthday", *_POSSESSIVES}
    elif f.lang == "ko" and f.rel.startswith("태어"):
        word, drop = "생일", {f.rel}
    elif f.lang == "ko" and f.rel == "=" and any(v.endswith(("일생", "년생")) for v in f.values):
        word, drop = "생일", set()  # "10월 3일생이다": born on October 3
    else:
        return f
    return dataclasses.replace(
        f,
        head=f.head | {word},
        rel="=",
        functional=True,
        values=f.values - drop,
        owners=f.owners | f.head,
    )


def frame_keys(frame: Frame) -> list[str]:
    """Blocking keys of a frame: memories whose frames share one meet as candidates. An age
    meets the head's other ages whatever the verb ("is 41 years old" / "turned 38")."""
    head = "".join(sorted(frame.head))[:40] if frame.lang == "ko" else " ".join(sorted(frame.head))
    keys = ["kh:" + head] if frame.lang == "ko" else ["eh:" + head + "|" + frame.rel]
    if "age" in _typed_kinds(frame):
        keys.append("age:" + head)
    keys.extend(acronym_keys(frame))  # "minimum supported Rust version" / "MSRV"
    return keys


def heads_match(a: Frame, b: Frame) -> bool:
    """Whether two frames speak of one attribute: one language, heads that overlap, and
    one relation (equal, both copulas, or one group of ``relation_groups``)."""
    if a.lang != b.lang:
        return False
    if not a.head or not b.head:
        return False
    overlap = len(a.head & b.head) / len(a.head | b.head)
    if a.lang == "ko":
        if overlap < 0.6 or owner_apart(a, b):  # noqa: PLR2004
            return False
        typed = bool(_typed_kinds(a) & _typed_kinds(b))
        if typed and not _ko_values_meet(a, b):
            return False  # "관리비를 10일에 낸다" / "카드값을 25일에 낸다": two payments
        return (
            a.rel == b.rel
            or typed
            or ko_relation_groups().get(a.rel, "a") == ko_relation_groups().get(b.rel, "b")
        )
    if overlap < 0.5 or (a.names - b.head and b.names - a.head):
        return False  # "NHS number" / "Turkish ID number": one word shared, two things
    if a.head - b.head and b.head - a.head:
        return False  # "Ben's mortgage payment" / "Ben's car payment": a word swapped
    if owner_apart(a, b):
        return False  # "Lumen" / "Lumen's CI"
    if another_person(a, b):
        return False  # "her birthday" / "her mother's birthday"
    if a.rel == b.rel or a.rel in ("=", ":") and b.rel in ("=", ":") or _one_timed_verb(a, b):
        return True
    if _both_ages(a, b):
        return True  # "is 34 years old" / "turned 36": one age, whatever the verb
    group = relation_group(a.rel)
    if group is None or group != relation_group(b.rel):
        return False
    # a schedule said with two verbs ("goes out" / "is sent") is one only for typed values
    return group != "schedule" or bool(_typed_kinds(a) & _typed_kinds(b))


def _ko_values_meet(a: Frame, b: Frame) -> bool:
    """Whether two Korean frames with typed values of one kind can speak of one event: the
    words of their values and verbs other than the typed ones ("월급을 받는다" / "월급날이")
    meet, or one side has none ("주간 회의는 매주 월요일이다" / "매주 수요일에 열린다"). A
    person and two events on two dates are two facts ("6월 30일에 이사한다" / "7월 15일에
    여행을 간다", "월급날이 10일" / "카드 대금을 15일에 낸다")."""
    if a.rel == b.rel:
        return True  # one verb: typed values attached to two things are other_activity's
    words_a, words_b = _ko_event_words(a), _ko_event_words(b)
    return not words_a or not words_b or bool(words_a & words_b)


def _ko_event_words(f: Frame) -> set[str]:
    """A Korean frame's value and verb words besides typed values, scope words, the copula
    and 하다."""
    scope = scope_words()
    return {
        folded(v)
        for v in f.values | {f.rel}
        if v not in ("=", "하") and v not in scope and not any(c.isdigit() for c in v)
    }


def _one_timed_verb(a: Frame, b: Frame) -> bool:
    """Whether two English relations are one verb with other prepositions and typed values
    of one kind on both sides ("deploy on Fridays" / "deploy every Tuesday"): one schedule.
    Without a shared typed kind they stay two ("works at Google" / "works on weekends")."""
    va, vb = a.rel.split(" ", 1)[0], b.rel.split(" ", 1)[0]
    return va == vb and va not in ("=", ":") and bool(_typed_kinds(a) & _typed_kinds(b))


def _both_ages(a: Frame, b: Frame) -> bool:
    """Whether both frames give an age ("is 34 years old", "turned 36", "28살이다")."""
    return "age" in _typed_kinds(a) and "age" in _typed_kinds(b)


def _other_relation(a: Frame, b: Frame) -> bool:
    """Whether two English sentences about one named thing say two different relations of
    it ("the contract was signed in March 2024" / "expires in March 2027", "the store opens
    at 9" / "closes at 6"): two attributes, so their dates and numbers do not conflict.
    Copulas, and relations of one group ("starts" / "begins"), are one relation."""
    if a.lang != "en" or b.lang != "en" or not (a.subject and b.subject):
        return False
    if a.rel == b.rel or a.rel in ("=", ":") or b.rel in ("=", ":") or _one_timed_verb(a, b):
        return False
    if _both_ages(a, b):
        return False
    if not a.head or not b.head or len(a.head & b.head) / len(a.head | b.head) < 0.5:
        return False
    group = relation_group(a.rel)
    return group is None or group != relation_group(b.rel)


def _typed_kinds(f: Frame) -> set[str]:
    return {k for k, _v in f.typed}


def _typed_verdict(a: Frame, b: Frame) -> tuple[str, str] | None:
    ta, tb = a.typed_map(), b.typed_map()
    if other_period(ta, tb):
        return None  # "$40 a month" / "$400 a year": two prices
    for kind in sorted(set(ta) & set(tb)):
        if kind.startswith(_BOUND_KINDS):
            continue  # "at least 2" / "at least 3": both may hold
        va, vb = ta[kind], tb[kind]
        if not (va & vb):
            if (a.approx or b.approx) and near_values(va, vb):
                continue  # "about 150" / "about 160"
            if kind == "age" and ages_close(va, vb):
                continue  # "is 34" / "turned 35": a birthday in between
            return "typed", kind.split(":")[0]
        if a.only and vb > va and b.conj:
            return "only", kind.split(":")[0]
        if b.only and va > vb and a.conj:
            return "only", kind.split(":")[0]
    excluded = _bound_excludes(ta, tb) or _bound_excludes(tb, ta)
    return ("typed", excluded.split(":")[0]) if excluded else None


#: typed-value kinds of numbers under a bound (see :func:`auditor.detectors._frame_words._typed`)
_BOUND_KINDS = ("min:", "max:")


def _bound_excludes(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> str | None:
    """The kind whose plain values in ``tb`` all fall outside a bound of ``ta`` ("at least
    20 km" / "10 km"), or None."""
    for kind, bounds in ta.items():
        if not kind.startswith(_BOUND_KINDS):
            continue
        side, plain = kind.split(":", 1)
        values = tb.get(plain)
        if not values or not all(isinstance(v, (int, float)) for v in (*bounds, *values)):
            continue
        if side == "min" and max(values) < min(bounds):
            return plain
        if side == "max" and min(values) > max(bounds):
            return plain
    return None


def compare_frames(a: Frame, b: Frame) -> FrameVerdict | None:
    """Whether two frames (older ``a``, newer ``b``) give one attribute two values.

    Returns:
        A verdict when the heads match (None otherwise): see :class:`FrameVerdict`.
    """
    aligned = role_aligned(a, b) or object_aligned(a, b)
    if aligned is not None:
        a, b = aligned  # "Lumen's license is MIT" / "released under the GPL license"
    spelled = acronym_aligned(a, b)
    if spelled is not None:
        a, b = spelled  # "minimum supported Rust version" / "MSRV"
    if _other_relation(a, b):
        return FrameVerdict("compatible", 0.0, "relation", a.span, b.span)
    if not heads_match(a, b):
        return None
    if a.modality != "current" or b.modality != "current":
        return FrameVerdict("compatible", 0.0, "modality", a.span, b.span)
    if a.negated != b.negated:
        # "supports Linux, macOS and Windows" / "does not run on Windows": a listed value
        # denied; any other negation is the negation check's business
        neg, pos = (a, b) if a.negated else (b, a)
        if 0 < len(neg.values) <= _DENIED_WORDS and neg.values < pos.values and pos.conj:
            return FrameVerdict("negated", 0.7, "text", a.span, b.span)
        if _never_at_all(neg, pos):  # "커피를 전혀 안 마신다" / "커피를 하루에 세 잔 마신다"
            return FrameVerdict("negated", 0.7, "text", a.span, b.span)
        return None
    if other_occasions(a, b) or other_activity(a, b):
        return FrameVerdict("compatible", 0.0, "scope", a.span, b.span)
    if meets_minimum(a, b) or meets_minimum(b, a):  # "3.10 or newer" / "3.12"
        return FrameVerdict("restatement", 0.0, "text", a.span, b.span)
    typed = _typed_verdict(a, b)
    if typed is not None:
        kind, vtype = typed
        return FrameVerdict(kind, 0.8 if kind == "typed" else 0.7, vtype, a.span, b.span)
    # the relation words are not values ("Notion으로 관리한다" / "Notion을 쓴다": one tool)
    rel_words = {a.rel, b.rel} if a.rel != b.rel else set()
    only_a, only_b = a.values - b.values - rel_words, b.values - a.values - rel_words
    if (a.only and only_b and b.conj and not only_a) or (
        b.only and only_a and a.conj and not only_b
    ):
        return FrameVerdict("only", 0.7, "text", a.span, b.span)
    if _only_other(a, b, only_a, only_b) or _only_other(b, a, only_b, only_a):
        return FrameVerdict("only", 0.6, "text", a.span, b.span)
    if not only_a or not only_b:
        return FrameVerdict("restatement", 0.0, "text", a.span, b.span)
    if len(only_a) > 4 or len(only_b) > 4:
        return None
    kinds_a, kinds_b = set(a.typed_map()), set(b.typed_map())
    if kinds_a & kinds_b:
        return None  # typed values agree; the words around them differ
    if kinds_a and kinds_b:
        return None  # "valid for two years" / "expires in June 2027": a length and a date
    if a.functional and b.functional and max(len(a.values), len(b.values)) <= _SHORT_VALUE:
        score = 0.72 if a.subject else 0.62
    else:
        score = 0.4
    if a.lang == "ko" and (len(only_a) > 2 or len(only_b) > 2):
        score = min(score, 0.5)
    return FrameVerdict("value", score, "text", a.span, b.span)


#: words that make a negation total ("전혀 안 마신다", "never drinks")
_AT_ALL = frozenset({"전혀", "절대", "절대로", "never"})


def _never_at_all(neg: Frame, pos: Frame) -> bool:
    """Whether a negation said of everything ("커피를 전혀 안 마신다") meets the same verb
    with the same object stated ("커피를 하루에 세 잔 마신다"); a negation with a time or
    a scope ("저녁에는", "평일에는") is not said of everything."""
    if neg.rel != pos.rel or neg.values.isdisjoint(_AT_ALL):
        return False
    if neg.typed or not neg.values.isdisjoint(scope_words()):
        return False  # "저녁에는 커피를 전혀 안 마신다": never in the evening only
    objects = neg.values - _AT_ALL - {neg.rel} - _NEGATION_VALUES - _AUXILIARIES
    return bool(objects & (pos.values - {pos.rel}))


#: auxiliaries a frame may keep among its values: no object ("has never been outside the
#: UK" / "has been vegan for two years" share "been", not a thing)
_AUXILIARIES = frozenset({"been", "be", "being", "had", "got", "gotten", "done"})


#: negation words a frame may keep among its values
_NEGATION_VALUES = frozenset({"안", "못", "않", "not", "n't", "no"})


def _only_other(x: Frame, y: Frame, only_x: frozenset[str], only_y: frozenset[str]) -> bool:
    """Whether ``x`` restricts the relation to short values ("only drinks decaf", "uses
    Sketch for all design work") and ``y`` gives it another ("drinks green tea", "uses
    Figma for design work"): a rule and a fact that breaks it, short values only. A
    generic verb ("takes the bus" / "takes vitamin D", "쓴다") needs a shared purpose as
    well."""
    shared = (x.values & y.values) - {x.rel, y.rel}  # (a Korean verb is among its values)
    if x.rel.split(" ", 1)[0] in generic_verbs() and not shared:
        return False  # "리눅스 노트북만 쓴다" / "파이썬과 고를 쓴다": "use" holds many things
    return (
        x.only
        and not x.typed  # "only answers email in the afternoon": the time may be what is only
        and not y.only
        and not y.negated
        and not x.conj
        and 0 < len(only_x) <= 2  # noqa: PLR2004 - a value or a name in two words
        and 0 < len(only_y) <= 3  # noqa: PLR2004
    )
