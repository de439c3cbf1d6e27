"""The Korean readers of the open-vocabulary frames: a sentence with a topic ("사내 위키는
Notion으로 운영한다", "X의 Y는 Z다"), an existential ("서울 본사에 있다"), and a habit without
a topic ("매일 아침 8시에 출근한다"). Read by
:func:`auditor.detectors.contradiction_frames.frames_of`; the cue words are data
(``data/contradiction_frames.json``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import (
    KO_ARGUMENT_PARTICLES,
    Tok,
    _data,
    _is_hangul,
    _ko_negated,
    _typed,
    bigrams,
    modality_of,
)

__all__ = ["MAX_VALUE_TOKENS", "ko_frame"]

#: at most this many tokens of a value are read
MAX_VALUE_TOKENS = 8


#: Korean endings of "there is" (an existential predicate: "[when] [thing]이 있다").
_KO_EXISTENTIAL = ("있다", "있음", "있어요", "있어", "있습니다", "있고", "있는데")


def _ko_existential(toks: Sequence[Tok]) -> tuple[Sequence[Tok], Sequence[Tok]] | None:
    """``(head tokens, value tokens)`` of "매주 화요일에 피아노 레슨이 있다" (every Tuesday
    there is a piano lesson) or "서울 사무실에는 직원이 40명 있다" (the Seoul office has 40
    employees): the subject marked 이/가 before an existential predicate (a count may stand
    between them) is the head, with the bare nouns before it and the place it is in; the
    adverbials that say when or how many are the value. None for any other shape."""
    if len(toks) < 3 or not toks[-1].low.startswith(_KO_EXISTENTIAL):
        return None
    subject = len(toks) - 2
    counted = any(c.isdigit() for c in toks[subject].low)
    if counted:
        subject -= 1  # "직원이 40명 있다": the count is the value
    low = toks[subject].low
    if subject < 0 or not (_is_hangul(low) and len(low) >= 2 and low.endswith(("이", "가"))):
        return None
    start = subject
    while (
        start > 0 and _is_hangul(toks[start - 1].low) and toks[start - 1].key == toks[start - 1].low
    ):
        start -= 1  # bare nouns of the subject ("피아노 레슨이"): no particle, no ending
    if start == 0 and not counted:
        return None
    when = [t for t in toks[:start] if _says_when(t)]
    place = [t for t in toks[:start] if not _says_when(t)]
    count = [toks[subject + 1]] if counted else []
    return [*place, *toks[start : subject + 1]], [*when, *count]


def _says_when(t: Tok) -> bool:
    """Whether a Korean adverbial says when or how often (a number, a day, a habit word)."""
    d = _data()
    return (
        any(c.isdigit() for c in t.low)
        or t.low.startswith(tuple(d["ko_habit_words"]))
        or t.low.endswith("마다")
        or any(t.low.startswith(w) for w in d["weekdays"] if _is_hangul(w))
        or any(t.low.startswith(w) for w in d["dayparts"] if _is_hangul(w))
    )


def _topic_index(toks: Sequence[Tok]) -> int:
    """The index of the topic word (marked 은 / 는, not an adverbial topic), or -1."""
    adverbial = _data()["ko_adverbial_topics"]
    for i, t in enumerate(toks):
        if not _is_hangul(t.low) or t.low in adverbial or t.low.endswith(tuple(adverbial)):
            continue
        if t.low.endswith(("은", "는")) and len(t.low) >= 2:  # noqa: PLR2004
            return i
        if t.low in ("은", "는") and i > 0 and toks[i - 1].end == t.start:
            return i  # "MBTI는": the particle glued to a word in Latin letters
    return -1


def _marks(text: str, value_toks: Sequence[Tok], glued: set[int]) -> tuple[bool, bool, bool]:
    """Whether a Korean value restricts ("에만", "TIFF로만"), lists ("와", "및") or negates."""
    d = _data()
    only = (
        any(
            t.low.endswith(tuple(d["only_suffixes_ko"])) and (len(t.low) > 2 or k in glued)  # noqa: PLR2004
            for k, t in enumerate(value_toks)
        )
        or "오직" in text
    )
    conj = (
        any(
            (t.low.endswith(tuple(d["conjunction_suffixes_ko"])) and len(t.low) >= 2)  # noqa: PLR2004
            or (t.low in d["conjunction_suffixes_ko_set"] and k in glued)
            for k, t in enumerate(value_toks[:-1])
        )
        or " 및 " in text
    )
    return only, conj, _ko_negated(value_toks)


def _relation(value_toks: Sequence[Tok]) -> tuple[int, str]:
    """The predicate's index in the value and the relation key ("=" for a copula, a noun
    with 다 or an adjective as the whole predicate)."""
    d = _data()
    pred = len(value_toks) - 1
    while pred > 0 and value_toks[pred].low.startswith(tuple(d["ko_auxiliaries"])):
        pred -= 1  # "운영하고 있다", "작성되어 있다": the auxiliary is not the relation
    last = value_toks[pred].low
    if (
        last.endswith(tuple(d["ko_copula_final"]))
        or not _is_hangul(last)
        or (pred == 0 and _ko_noun_or_adjective(last))
    ):
        return pred, "="  # one word after the topic is the value ("이름은 초코다", "회의는 길다")
    return pred, value_toks[pred].key


def _owners_and_roles(
    toks: Sequence[Tok], topic: int, before_pred: Sequence[Tok]
) -> tuple[frozenset[str], frozenset[str]]:
    """The owner of a possessive head (every word up to the last 의: "은지 씨의 차는" -> 은지
    씨) and the role nouns of the value ("GPL 라이선스로 배포된다", "Firebase를 백엔드로 쓴다":
    beside a named value, in Latin letters or digits; "오픈소스 라이선스로" is a description)."""
    last_of = max((k for k in range(topic) if toks[k].low.endswith("의")), default=-1)
    owners = _ko_head(toks[: last_of + 1]) if last_of >= 0 else frozenset()
    named = any(not _is_hangul(t.low) and t.low[:1].isalnum() for t in before_pred)
    roles = frozenset(
        t.key
        for t in before_pred
        if named and t.low.endswith("로") and _is_hangul(t.key) and not t.key.endswith("로")
    )
    return owners, roles


def _parenthesised(toks: Sequence[Tok]) -> set[int]:
    """Indexes of the tokens inside parentheses (a gloss of the word before them)."""
    out: set[int] = set()
    depth = 0
    for k, t in enumerate(toks):
        if t.low == "(":
            depth += 1
        elif t.low == ")":
            depth = max(depth - 1, 0)
        elif depth:
            out.add(k)
    return out


def ko_frame(text: str, toks: Sequence[Tok]) -> Frame | None:
    """The frame of a Korean sentence: with a topic ("X는 ..."), an existential, or a habit."""
    d = _data()
    topic = _topic_index(toks)
    if topic < 0 or topic + 1 >= len(toks):
        existential = _ko_existential(toks)
        if existential is None:
            return _ko_habitual(text, toks)
        head_toks, value_toks = existential
        return _ko_typed_only(text, toks, head_toks, value_toks)
    head = _ko_head(toks[: topic + 1])
    value_toks = toks[topic + 1 :][:MAX_VALUE_TOKENS]
    for k, t in enumerate(value_toks):
        if any(t.low.startswith(w) for w in d["ko_negated_alternative"]) and k + 1 < len(
            value_toks
        ):
            value_toks = value_toks[k + 1 :]  # "A가 아니라 B": the value is B
            break
    qual = d["qualifiers_set"] | d["ko_light_verbs_set"]
    glued = _glued_particles(value_toks)  # "TIFF로만", "iOS와": particles, not values
    aside = _parenthesised(value_toks)  # "한글(HWP) 파일로만": a gloss, not another value
    values = frozenset(
        t.key
        for k, t in enumerate(value_toks)
        if t.key
        and any(c.isalnum() for c in t.key)
        and t.key not in qual
        and k not in glued
        and k not in aside
    )
    typed = _typed(value_toks, True)
    if not values and not typed:
        return None
    pred, rel = _relation(value_toks)
    if pred > 0 and value_toks[pred - 1].key in d["ko_idioms"].get(rel, ()):
        # an idiom that says one verb ("잠자리에 든다" is "잔다"): its verb, the noun no value
        rel = d["ko_idioms"][rel][value_toks[pred - 1].key]
        values = values - {value_toks[pred - 1].key}
    functional = not (rel != "=" and rel.startswith(tuple(d["ko_multi_valued_roots"])))
    # what the typed values count or time: the object ("주 3회 필라테스를" / "한 번 수영을")
    instrument = any(
        t.low.startswith(("로", "으로")) if k in glued else t.low.endswith(("로", "로만"))
        for k, t in enumerate(value_toks[:pred])
        if len(t.low) >= 2 or k in glued  # noqa: PLR2004 - "도로" is a road, not "by"
    )
    light = rel in d["ko_light_verbs_set"]
    # with an instrument, the words before the object name it too ("작업 파일을"); with 하다
    # they may say how ("완전 재택근무를": fully), so the object alone is the activity
    object_toks = _object_phrase(value_toks[:pred], qual, whole=not light)
    objects = frozenset(t.key for t in object_toks)
    if objects and (light or (functional and instrument)):
        # "X를 한다" is the verb "X하다": the activity belongs to the head, so "채식을 한다" /
        # "스케치를 한다" are two things one does, "주 2회 재택근무를" / "완전 재택근무를" two
        # values of one; with an instrument the object is what the value is of ("작업
        # 파일을 TIFF로 저장한다": the work files' format)
        head = _ko_head([*toks[: topic + 1], *object_toks])
        values = values - objects
        if not values and not typed:
            return None
    head_words = [t.low[:-1] if t.low.endswith(("은", "는")) else t.low for t in toks[: topic + 1]]
    if rel == "=" and all(w in d["person_heads_set"] for w in head_words):
        functional = False  # "저는 X이다": a person's traits hold many values
    elif (
        rel == "="
        and len(head_words) == 1
        and not typed
        and _is_hangul(head_words[0])
        and values
        and all(len(v) >= 2 and _is_hangul(v) for v in values)  # nouns, not "길다" / "짧다"
    ):
        # "동민은 미혼이다" / "동민은 왼손잡이다": a bare topic (a name, as often as not) with an
        # untyped noun says one of its many traits, as "Priya is Y" does in English; an
        # attribute is named ("동민의 직업은", "라이선스는 ... 이다" after its owner) or typed
        functional = False
    frame = _ko_made(
        text,
        toks,
        value_toks,
        head,
        rel,
        functional,
        values,
        typed,
        _marks(text, value_toks, glued),
        objects,
    )
    owners, roles = _owners_and_roles(toks, topic, value_toks[:pred])
    return dataclasses.replace(frame, owners=owners, roles=roles)


def _glued_particles(toks: Sequence[Tok]) -> set[int]:
    """Indexes of Hangul tokens written right after Latin letters or digits without a space:
    the particle of a name ("TIFF로만", "iOS와", "Notion으로")."""
    return {
        k
        for k in range(1, len(toks))
        if toks[k - 1].end == toks[k].start
        and _is_hangul(toks[k].low)
        and not _is_hangul(toks[k - 1].low)
    }


def _object_phrase(toks: Sequence[Tok], qual: frozenset[str], *, whole: bool) -> list[Tok]:
    """The objects (을 / 를) among ``toks``; with ``whole``, with the bare words right before
    each ("작업 파일을": 작업 and 파일), not qualifiers ("항상") or numbers."""
    out: list[Tok] = []
    for k, t in enumerate(toks):
        if not (t.low.endswith(("을", "를")) and len(t.low) >= 2):  # noqa: PLR2004
            continue
        j = k
        while (
            whole
            and j > 0
            and _is_hangul(toks[j - 1].low)
            and toks[j - 1].key == toks[j - 1].low
            and toks[j - 1].low not in qual
            and not any(c.isdigit() for c in toks[j - 1].low)
        ):
            j -= 1
        out.extend(toks[j : k + 1])
    return out


#: final consonants (jongseong index) of a verb's plain present or past before 다:
#: ㄴ ("간다", "먹는다" through 는) and ㅆ ("갔다", "했다")
_KO_VERB_FINALS = (4, 20)


def _ko_noun_or_adjective(word: str) -> bool:
    """Whether a one-word Korean predicate ending in 다 is a noun with the copula or an
    adjective ("초코다", "길다"), not a verb ("간다", "먹는다", "갔다"): a verb's plain form
    puts ㄴ, 는 or ㅆ before 다."""
    if len(word) < 2 or not word.endswith("다"):  # noqa: PLR2004 - a syllable and 다
        return False
    before = word[-2]
    if before == "는" or not _is_hangul(before):
        return False
    return (ord(before) - 0xAC00) % 28 not in _KO_VERB_FINALS


def _ko_head(toks: Sequence[Tok]) -> frozenset[str]:
    """A Korean head as the bigrams of its words' keys, a one-syllable noun read without
    the possessive 의 ("딸의 이름" and "딸 이름" are one head; "회의" is a noun)."""
    nouns = _data()["ko_nouns_ending_in_ui_set"]
    keys = [
        t.key[:-1]
        if len(t.key) == 2 and t.key.endswith("의") and t.key not in nouns  # noqa: PLR2004
        else t.key
        for t in toks
    ]
    return frozenset(bigrams(" ".join(keys)))


def _ko_habitual(text: str, toks: Sequence[Tok]) -> Frame | None:
    """The frame of a Korean sentence without a topic that says when something is done or
    happened: "매일 아침 7시에 출근한다" (goes to work at 7 every morning), "매주 월요일에
    요가를 한다", "딸이 2019년에 태어났다". The head is the predicate with its arguments
    (the words marked 을/를/이/가), compared as whole keys, so another subject or object is
    another head; the value is the typed values of the adverbials (when, how often, how
    long). Read only with a habit word or a marked subject (``ko_habit_words``), never for a
    request ("300단어 이상으로 작성하세요")."""
    d = _data()
    pred = len(toks) - 1
    while pred > 0 and toks[pred].low.startswith(tuple(d["ko_auxiliaries"])):
        pred -= 1
    last = toks[pred].low
    if (
        pred == 0
        or not _is_hangul(last)
        or last.endswith(tuple(d["ko_copula_final"]))
        or last.startswith(_KO_EXISTENTIAL)
        or toks[-1].low.endswith(tuple(d["ko_request_endings"]))
    ):
        return None
    args = [
        t
        for t in toks[:pred]
        if _is_hangul(t.low)
        and len(t.low) >= 2
        and t.low.endswith(KO_ARGUMENT_PARTICLES)
        and not any(c.isdigit() for c in t.low)
    ]
    value_toks = [t for t in toks[:pred] if t not in args]
    habit = any(
        t.low.startswith(tuple(d["ko_habit_words"])) or t.low.endswith("마다") or t.low == "때는"
        for t in value_toks
    )
    has_subject = any(t.low.endswith(("이", "가")) for t in args)
    if not value_toks or not (habit or has_subject):
        return None
    typed = _typed(value_toks, True)
    if not typed:
        return None
    rel = toks[pred].key
    head = frozenset({rel, *(t.key for t in args)})
    negated = _ko_negated(toks)
    # the adverbials' other words ("회사 근처에서") are values of a relation that holds many
    # (only the judge weighs them); the typed values are compared as usual
    qual = d["qualifiers_set"] | d["ko_light_verbs_set"]
    values = frozenset(t.key for t in value_toks if t.key and t.key not in qual)
    return _ko_made(
        text, toks, value_toks, head, rel, False, values, typed, (False, False, negated)
    )


def _ko_made(  # noqa: PLR0913 - a frame's fields, read by the two Korean readers
    text: str,
    toks: Sequence[Tok],
    value_toks: Sequence[Tok],
    head: frozenset[str],
    rel: str,
    functional: bool,
    values: frozenset[str],
    typed: dict[str, set[Any]],
    flags: tuple[bool, bool, bool],
    attached: frozenset[str] = frozenset(),
) -> Frame:
    """A Korean frame (``flags``: only, conjunction, negated; ``attached``: what its typed
    values are of); modality, span and the approximation words are read from the tokens."""
    only, conj, negated = flags
    return Frame(
        "ko",
        head,
        rel,
        functional,
        True,
        values,
        tuple(sorted((k, frozenset(v)) for k, v in typed.items())),
        only,
        conj,
        negated,
        modality_of([t.low for t in toks], text, True),
        (value_toks[0].start, value_toks[-1].end),
        any(w in t.low for t in value_toks for w in ("약", "대략", "정도", "쯤", "가량")),
        frozenset(),
        attached,
    )


def _ko_typed_only(
    text: str, toks: Sequence[Tok], head_toks: Sequence[Tok], value_toks: Sequence[Tok]
) -> Frame | None:
    """The frame of an existential sentence: only its typed values (when, how often, how
    long) are compared; the adverbials' other words are not values of the thing."""
    typed = _typed(value_toks, True)
    if not typed:
        return None
    head = frozenset(bigrams(" ".join(t.key for t in head_toks)))
    return _ko_made(
        text, toks, value_toks, head, "=", True, frozenset(), typed, (False, False, False)
    )
