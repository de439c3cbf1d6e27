"""The words of a fact, for the contradiction detector: tokens, stems, negation.

:func:`_tokens` splits a fact into tokens (:class:`Token`: lower-cased text, :func:`stem`,
offsets into the original fact, clause number, content word or not), cached per text;
:func:`token_at` finds the token at an offset, :func:`negated_at` tells whether words are
negated in their clause (English and Korean), :func:`ko_root` gives a rough Korean root for
comparing a statement with its negation, and :func:`jaccard` compares two sets of stems.
Offsets always point into the original fact (no normalisation that could shift them), so
spans stay exact.

The numbers and dates of a fact are read in
:mod:`auditor.detectors._contradiction_quantities`, the whole fact (its profile) in
:mod:`auditor.detectors._contradiction_profile`; the word lists come from
:mod:`auditor.detectors._contradiction_data`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from auditor.detectors import _contradiction_data as data

__all__ = ["Token", "is_hangul", "jaccard", "ko_root", "negated_at", "stem", "token_at"]

_WORD = re.compile(r"\w+(?:['’]\w+)*(?:[-.+#]\w+)*[+#]*", re.UNICODE)

_CLAUSE_BREAK = re.compile(r"[.;!?:()\[\]\n—–]|\s-\s|,")

_HANGUL = re.compile(r"[\uac00-\ud7a3]")

_POST_NEGATION = frozenset(
    {"not", "isn't", "aren't", "banned", "forbidden", "disallowed", "prohibited", "never"}
)

_KO_NEG_TOKEN = re.compile(data.KO_NEGATION_PATTERN)

_KO_ENDINGS = tuple(
    sorted(
        """지 지는 지도 고 는 다 요 음 함 하지 하고 해서 했음 했다 한다 합니다 해요 었음 았음
        었다 았다 어서 아서 게 기 기로 며 면서 니까""".split(),
        key=len,
        reverse=True,
    )
)


def is_hangul(text: str) -> bool:
    """Whether ``text`` contains Hangul syllables."""
    return not text.isascii() and _HANGUL.search(text) is not None


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A light, deterministic stem: lower case, no possessive, no plural or -ing/-ed ending.

    Hangul words lose a trailing particle (성수동에 -> 성수동) when at least two syllables
    remain. Not a linguistic stemmer: it only has to map the forms of one word to one key.

    Args:
        word: one token.

    Returns:
        The stem (may equal the lower-cased word).
    """
    w = word.lower().replace("’", "'")
    if is_hangul(w):
        for particle in data.KO_PARTICLES:
            if w.endswith(particle) and len(w) - len(particle) >= 2:
                return w[: -len(particle)]
        return w
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("sses"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = _undoubled(w[:-3])
    elif len(w) > 4 and w.endswith("ed"):
        w = _undoubled(w[:-2])
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


#: consonants an English verb doubles before -ing / -ed ("running", "stopped", "planned")
_DOUBLED = frozenset("bdgmnprt")


def _undoubled(w: str) -> str:
    """A verb's stem without the consonant doubled before -ing / -ed ("runn" -> "run"),
    for stems of four letters or more ("add" of "added" stays)."""
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] in _DOUBLED:  # noqa: PLR2004
        return w[:-1]
    return w


class Token(NamedTuple):
    """One word of a fact: its lower-cased text, stem and offsets (a tuple: cheap to build)."""

    text: str
    stem: str
    start: int
    end: int
    clause: int
    content: bool


@functools.lru_cache(maxsize=65_536)
def _word(raw: str) -> tuple[str, str, bool, bool]:
    """One word's (lower case, stem, content word?, clause-break word?), read once per word."""
    low = raw.lower() if raw.isascii() else raw.lower().replace("’", "'")
    content = (
        low not in data.EN_STOPWORDS
        and not low.isdigit()
        and low not in data.NUMBER_WORDS
        and (len(low) > 1 or (not low.isascii() and is_hangul(low)))
    )
    return low, stem(raw), content, low in data.CLAUSE_BREAK_WORDS


@functools.lru_cache(maxsize=16_384)
def _tokens(text: str) -> tuple[Token, ...]:
    breaks = [m.start() for m in _CLAUSE_BREAK.finditer(text)]
    breaks.append(len(text) + 1)  # a sentinel: no bounds test in the loop
    out: list[Token] = []
    clause = 0
    bi = 0
    next_break = breaks[0]
    word = _word
    make = tuple.__new__  # Token(...) without the named tuple's Python-level __new__
    for m in _WORD.finditer(text):
        start = m.start()
        while next_break < start:
            clause += 1
            bi += 1
            next_break = breaks[bi]
        low, stemmed, content, breaks_clause = word(m.group())
        if breaks_clause:
            clause += 1
        out.append(make(Token, (low, stemmed, start, m.end(), clause, content)))
    return tuple(out)


def has_phrase(words: Sequence[str], phrases: Iterable[str]) -> bool:
    """Whether one of ``phrases`` (words joined by single spaces) occurs among ``words``
    as whole words, in order."""
    joined = " " + " ".join(words) + " "
    return any(f" {p} " in joined for p in phrases)


def token_at(tokens: Sequence[Token], pos: int) -> int:
    """Index of the first token ending after ``pos`` (binary search)."""
    lo, hi = 0, len(tokens)
    while lo < hi:
        mid = (lo + hi) // 2
        if tokens[mid].end <= pos:
            lo = mid + 1
        else:
            hi = mid
    return lo


def negated_at(tokens: Sequence[Token], first: int, last: int, hangul: bool) -> bool:
    """Whether the words ``tokens[first:last + 1]`` are negated in their clause."""
    if first >= len(tokens):
        return False
    clause = tokens[first].clause
    before: list[str] = []
    for i in range(first - 1, max(-1, first - 5), -1):
        t = tokens[i]
        if t.clause != clause:
            break
        if t.text in data.NEGATION_WORDS or t.text.endswith("n't"):
            return True
        before.insert(0, t.text)
    if before:
        if has_phrase(before, data.NEGATION_PHRASES):
            return True
    if not hangul and last + 1 < len(tokens) and tokens[last + 1].clause == clause:
        nxt = tokens[last + 1].text
        if nxt in _POST_NEGATION:
            return True
        if (
            nxt in ("is", "are", "was", "were")
            and last + 2 < len(tokens)
            and (tokens[last + 2].text in _POST_NEGATION and tokens[last + 2].clause == clause)
        ):
            return True
    return hangul and _ko_negated_after(tokens, last)


def _ko_negated_after(tokens: Sequence[Token], last: int) -> bool:
    """Whether a Korean word is negated after it: "말고" / "대신" on the word, or a negation
    before its clause's verb, over the commas of a list it is an item of."""
    own = tokens[last].text
    tail = own[len(own) - 2 :] if len(own) > 2 else ""
    if tail in ("말고", "대신"):
        return True
    clause = tokens[last].clause
    listed = False  # past a comma of a list
    for i in range(last + 1, min(len(tokens), last + _KO_NEG_REACH)):
        t = tokens[i]
        if t.clause != clause:
            if not _ko_list_item(tokens[i - 1]):
                break
            clause, listed = t.clause, True  # the next item: one clause with the verb
        if _KO_NEG_TOKEN.search(t.text):
            return True
        if (listed or i > last + 2) and t.text.endswith(_KO_PREDICATE_ENDS):
            break  # the clause's verb came, not negated
    return False


#: how far after a Korean word its clause's negation is looked for (the verb ends the
#: clause: "우유, 치즈, 버터 같은 유제품을 전혀 먹지 않는다" negates all three)
_KO_NEG_REACH = 9
#: endings of a Korean predicate that ends a clause ("마시고", "먹는다", "좋아하지만")
_KO_PREDICATE_ENDS = ("다", "요", "고", "서", "며", "면", "지만", "는데", "니까")


def _ko_list_item(t: Token) -> bool:
    """Whether a Korean word is an item of a list (a bare noun before a comma, as "우유" in
    "우유, 치즈, 버터 같은 ..."): the comma after it does not end its clause."""
    return is_hangul(t.text) and t.stem == t.text and not t.text.endswith(_KO_PREDICATE_ENDS)


def _negations(text: str, tokens: Sequence[Token], hangul: bool) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for t in tokens:
        if t.text in data.NEGATION_WORDS and t.text not in (
            "unlike",
            "except",
            "rather",
            "instead",
            "avoid",
            "avoids",
        ):
            out.append((t.start, t.end))
        elif t.text.endswith("n't"):
            out.append((t.start, t.end))
        elif hangul and not t.text.isascii() and _KO_NEG_TOKEN.search(t.text):
            out.append((t.start, t.end))
    return tuple(out)


def ko_root(word: str) -> str:
    """A rough Korean root: particles and common verb endings off, a final ㄴ/ㄹ/ㅁ dropped.

    마심 / 마시지 -> 마시, 먹음 / 먹지 -> 먹, 살고 / 산다 -> 사. Only for comparing a
    statement with its negation; not a morphological analyser.
    """
    w = stem(word)
    for ending in _KO_ENDINGS:
        if w.endswith(ending) and len(w) > len(ending):
            w = w[: -len(ending)]
            break
    code = ord(w[-1]) - 0xAC00
    if 0 <= code < 11172 and code % 28 in (4, 8, 16):
        w = w[:-1] + chr(ord(w[-1]) - code % 28)
    return w


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two collections of strings (0 for two empty ones)."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


#: How many words before a value are read for a past state ("lived in Chicago for").
_PAST_WINDOW = 5


def past_state_at(tokens: Sequence[Token], first: int, last: int, hangul: bool) -> bool:
    """Whether the words ``tokens[first:last + 1]`` are stated as a past state in their
    clause: after a past tense of a verb of state or a marker of the past ("lived in
    Chicago", "used to work at Naver"), or, in Korean, before a past verb of state or a
    past perfect ("서울에 살았었다"); see ``past_state_before`` in the data file."""
    if first >= len(tokens):
        return False
    clause = tokens[first].clause
    before = [t.text for t in tokens[max(0, first - _PAST_WINDOW) : first] if t.clause == clause]
    if has_phrase(before, data.PAST_STATE_BEFORE):
        return True
    if not hangul:
        return False
    for t in tokens[last + 1 : last + 4]:
        if t.clause != clause:
            break
        if is_hangul(t.text) and any(p in t.text for p in data.PAST_STATE_KO):
            return True
    return False
