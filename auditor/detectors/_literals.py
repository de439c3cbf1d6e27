"""Find which of many literal strings occur in a text, in one pass.

A loop of ``word in text`` costs one scan of the text per word, and Python's ``re`` tries
the alternatives of ``a|b|c`` one by one at every position. An Aho-Corasick automaton
(``pyahocorasick``, C, as in :mod:`auditor.detectors.prefilter`) reports every occurrence of
every word, overlapping ones included, in one pass: the words it reports are exactly the
words that occur.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from re import _constants as _c  # type: ignore[attr-defined]  # no stub: CPython's own
from re import _parser  # type: ignore[attr-defined]  # the parser ``re.compile`` uses
from typing import Any

import ahocorasick

from auditor.detectors.prefilter import fold

__all__ = ["LiteralSet", "necessary_literals", "necessary_literals_by_case"]

#: The shortest literal worth a gate (a one- or two-letter ASCII literal is in nearly every
#: text; two Hangul syllables are already a word).
MIN_GATE_CHARS = 3
MIN_GATE_CHARS_NON_ASCII = 2
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)


class LiteralSet:
    """A set of literal strings that can report which of them occur in a text.

    Args:
        words: the literals (empty strings are ignored).
    """

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(w for w in words if w)
        self._automaton: ahocorasick.Automaton | None = None
        if self.words:
            automaton = ahocorasick.Automaton()
            for word in self.words:
                automaton.add_word(word, word)
            automaton.make_automaton()
            self._automaton = automaton

    def present(self, text: str) -> set[str]:
        """Every literal of the set that occurs in ``text`` (overlaps included)."""
        if self._automaton is None:
            return set()
        return {word for _, word in self._automaton.iter(text)}

    def any_in(self, text: str) -> bool:
        """Whether some literal of the set occurs in ``text`` (stops at the first)."""
        if self._automaton is None:
            return False
        return next(self._automaton.iter(text), None) is not None

    def any_word_start(self, text: str) -> bool:
        """Whether some literal of the set occurs in ``text`` at the start of a word: the
        character before it is no letter, digit or underscore, or Hangul meets another
        script there ("CI는": a Korean word starts after Latin letters)."""
        if self._automaton is None:
            return False
        for end, word in self._automaton.iter(text):
            start = end - len(word) + 1
            if start == 0:
                return True
            prev = text[start - 1]
            if not (prev.isalnum() or prev == "_") or _hangul(prev) != _hangul(text[start]):
                return True
        return False


def _hangul(c: str) -> bool:
    return "\uac00" <= c <= "\ud7a3"


def necessary_literals(regex: str, flags: int = 0) -> frozenset[str] | None:
    """Literals, lower case, one of which is in every match of ``regex``; None if unknown.

    Read from the parsed pattern (Python's own ``re`` parser): in a sequence, every item
    that is not optional must match, so a run of literal characters, a group, a repeat of
    at least one and an alternation whose every branch gives literals each give a
    necessary set; the most selective is kept (its shortest literal the longest).
    Lookarounds, classes and back-references give nothing. The literals are compared
    with :func:`auditor.detectors.prefilter.fold`-ed text; a literal with a character
    that has a case other than ASCII's (whose case-insensitive matches ``fold`` might not
    produce) makes the answer None, as does a set whose shortest literal is shorter than
    :data:`MIN_GATE_CHARS` (:data:`MIN_GATE_CHARS_NON_ASCII` with other letters).
    """
    found = _necessary(regex, flags, track_case=False)
    if found is None or not all(_foldable(c) for word, _ in found for c in word):
        return None
    return frozenset(fold(word) for word, _ in found)


def necessary_literals_by_case(
    regex: str, flags: int = 0
) -> tuple[frozenset[str], frozenset[str]] | None:
    """:func:`necessary_literals`, told apart by case: ``(folded, cased)``.

    A literal of a part of ``regex`` that matches case-sensitively (``(?-i:HIV)`` in a
    pattern compiled with ``re.IGNORECASE``, or a pattern without it) occurs *as written* in
    every text the part matches: it is in ``cased``, to be looked for in the text itself
    ("STI" is in far fewer texts than "sti" is in folded ones: "still", "question"). The
    others are in ``folded``, as :func:`necessary_literals` gives them. Every match contains
    a literal of ``folded`` in the folded text or one of ``cased`` in the text. None when
    unknown (as for :func:`necessary_literals`; a cased literal needs no foldable letters).
    """
    found = _necessary(regex, flags, track_case=True)
    if found is None or not all(_foldable(c) for word, cased in found if not cased for c in word):
        return None
    folded = frozenset(fold(word) for word, cased in found if not cased)
    return folded, frozenset(word for word, cased in found if cased)


#: a literal of a parsed pattern, and whether it is matched case-sensitively (always False
#: when the case is not tracked)
_Lit = tuple[str, bool]


def _necessary(regex: str, flags: int, track_case: bool) -> set[_Lit] | None:
    """The most selective necessary literal set of ``regex``, long enough to gate on."""
    try:
        tree = _parser.parse(regex, flags)
    except re.error:
        return None
    ignorecase = bool(tree.state.flags & re.IGNORECASE) if track_case else None
    found = _sequence(list(tree), ignorecase)
    if not found or any(
        len(word) < (MIN_GATE_CHARS if word.isascii() else MIN_GATE_CHARS_NON_ASCII)
        for word, _ in found
    ):
        return None
    return found


def _foldable(c: str) -> bool:
    """ASCII, or a character without case (nothing else matches it case-insensitively)."""
    return c.isascii() or (c.lower() == c and c.upper() == c and c.casefold() == c)


def _strength(words: set[_Lit]) -> tuple[int, int]:
    return min(len(word) for word, _ in words), -len(words)


def _sequence(items: Sequence[tuple[Any, Any]], ignorecase: bool | None) -> set[_Lit] | None:
    """The most selective necessary literal set of a sequence of parsed items.

    ``ignorecase``: whether the items match case-insensitively (None: not tracked, every
    literal is marked case-insensitive).
    """
    best: set[_Lit] | None = None
    run: list[str] = []
    cased = ignorecase is False

    def consider(words: set[_Lit] | None) -> None:
        nonlocal best
        if words and (best is None or _strength(words) > _strength(best)):
            best = words

    for op, av in items:
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            consider({("".join(run), cased)})
            run = []
        if op is _c.SUBPATTERN:
            inner = ignorecase
            if inner is not None:
                _group, add_flags, del_flags, _ = av
                inner = (inner or bool(add_flags & re.IGNORECASE)) and not (
                    del_flags & re.IGNORECASE
                )
            consider(_sequence(list(av[-1]), inner))
        elif op is _c.ATOMIC_GROUP:
            consider(_sequence(list(av), ignorecase))
        elif op is _c.BRANCH:
            branches = [_sequence(list(branch), ignorecase) for branch in av[1]]
            if all(branches):
                consider(set().union(*branches))  # type: ignore[arg-type]
        elif op in _REPEATS and av[0] >= 1:
            consider(_sequence(list(av[2]), ignorecase))
    if run:
        consider({("".join(run), cased)})
    return best


def min_digits(regex: str, flags: int = 0) -> int:
    """The fewest digits (characters ``\\d`` matches) any match of ``regex`` contains.

    Read from the parsed pattern: a literal digit, ``\\d`` or a class of digits only counts
    one per repetition; a sequence adds up, a repeat multiplies by its least count, an
    alternation takes its smallest branch; anything else (lookarounds, other classes,
    back-references) counts nothing. So a text with fewer digits than this has no match.
    0 when the pattern cannot be read.
    """
    try:
        tree = _parser.parse(regex, flags)
    except re.error:
        return 0
    return _digits_of(list(tree))


def _digits_of(items: Sequence[tuple[Any, Any]]) -> int:
    total = 0
    for op, av in items:
        if op is _c.LITERAL:
            total += re.fullmatch(r"\d", chr(av)) is not None
        elif op is _c.IN:
            total += _digit_class(av)
        elif op is _c.SUBPATTERN:
            total += _digits_of(list(av[-1]))
        elif op is _c.ATOMIC_GROUP:
            total += _digits_of(list(av))
        elif op is _c.BRANCH:
            total += min(_digits_of(list(branch)) for branch in av[1])
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            least, _most, body = av
            total += least * _digits_of(list(body))
    return total


def _digit_class(members: Sequence[tuple[Any, Any]]) -> int:
    """1 when every character the class matches is a digit, else 0."""
    if not members or members[0][0] is _c.NEGATE:
        return 0
    for op, av in members:
        if op is _c.CATEGORY and av is _c.CATEGORY_DIGIT:
            continue
        if op is _c.LITERAL and re.fullmatch(r"\d", chr(av)):
            continue
        if op is _c.RANGE and all(re.fullmatch(r"\d", chr(c)) for c in range(av[0], av[1] + 1)):
            continue
        return 0
    return 1
