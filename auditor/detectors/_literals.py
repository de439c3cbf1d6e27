"""Find which of many literal strings occur in a text, in one pass.

Python's ``re`` tries the alternatives of ``a|b|c`` one by one at every position, and a
loop of ``word in text`` costs one scan per word. A regex shaped like a trie of the words
costs about the length of the match at each position instead. A look-ahead makes it try
every position (overlapping occurrences), and since every word that starts at a position
is a prefix of the longest one found there, mapping each match to its prefixes in the set
gives exactly the words that occur.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["LiteralSet"]


def _trie_pattern(words: Iterable[str]) -> str:
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:  # type: ignore[type-arg]
        if "" in node and len(node) == 1:
            return ""
        optional = "" in node
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if optional else body

    return build(trie)


class LiteralSet:
    """A set of literal strings that can report which of them occur in a text.

    Args:
        words: the literals (empty strings are ignored).
    """

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(w for w in words if w)
        if not self.words:
            self._regex = None
            self._prefixes: dict[str, frozenset[str]] = {}
            return
        self._regex = re.compile("(?=(" + _trie_pattern(self.words) + "))")
        by_length = sorted(self.words, key=len)
        self._prefixes = {
            w: frozenset(p for p in by_length if len(p) <= len(w) and w.startswith(p))
            for w in self.words
        }

    def present(self, text: str) -> set[str]:
        """Every literal of the set that occurs in ``text`` (overlaps included)."""
        found: set[str] = set()
        if self._regex is None:
            return found
        for m in self._regex.finditer(text):
            found |= self._prefixes[m.group(1)]
        return found
