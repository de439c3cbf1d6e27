"""Find which of many literal strings occur in a text, in one pass.

A loop of ``word in text`` costs one scan of the text per word, and Python's ``re`` tries
the alternatives of ``a|b|c`` one by one at every position. An Aho-Corasick automaton
(``pyahocorasick``, C, as in :mod:`auditor.detectors.prefilter`) reports every occurrence of
every word, overlapping ones included, in one pass: the words it reports are exactly the
words that occur.
"""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick

__all__ = ["LiteralSet"]


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
