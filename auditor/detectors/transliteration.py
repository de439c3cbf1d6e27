"""One name in two scripts: a Latin word and its Hangul transcription ("Lumen" / "루멘",
"Harbor" / "하버", "standup" / "스탠드업").

Korean writes foreign names and loanwords by sound, following regular correspondences
(the national transcription rules for loanwords): each English consonant sound has one or
two Hangul consonants, vowels vary, a non-final "r" after a vowel is dropped, and an
epenthetic "으" follows a final consonant cluster. So the *consonant skeleton* of the two
forms agrees: both are read into one sequence of consonant classes, vowels and glides
dropped, repeats collapsed:

=====  ==================================  ===========================================
class  English letters                     Hangul consonants
=====  ==================================  ===========================================
P      p b f v ph                          ㅂ ㅃ ㅍ (final ㅂ ㅍ)
T      t d, th (also S)                    ㄷ ㄸ ㅌ (final ㄷ ㅅ ㅆ ㅈ ㅊ ㅌ: "깃" is git)
K      k c (hard) q ck g (hard) ch (also J) ㄱ ㄲ ㅋ (final ㄱ ㄲ ㅋ)
S      s sh, c before e/i/y, "tion"        ㅅ ㅆ
J      j z dg, g before e/i/y (also K)     ㅈ ㅉ ㅊ
M N L  m, n and ng, l and r before a vowel ㅁ, ㄴ and final ㅇ, ㄹ
H      h before a vowel                    ㅎ
=====  ==================================  ===========================================

An English spelling can sound two ways ("th", "ch", "g" before e/i): its reading is a
small set of skeletons, and two forms match when the Hangul skeleton is one of them.
Skeletons of one class are not compared (too many words share them), so "Leo" / "레오"
is not read. It is evidence that two words *may* name one thing, never a verdict: the
contradiction detector counts the name a Korean and an English fact are about (a Hangul
word among the first :data:`HANGUL_LEAD` words of one, a capitalised Latin word among the
first :data:`NAME_LEAD` of the other) as their shared context, which a slot such as a
project's database or CI service asks for (:mod:`auditor.detectors._contradiction_pairs`).
Collisions exist ("lumen" and "lemon" share L M N), which is why only the words a fact
is about are compared, and the check that follows still needs two values of one slot.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

__all__ = [
    "HANGUL_LEAD",
    "NAME_LEAD",
    "hangul_skeleton",
    "is_name",
    "latin_skeletons",
    "same_name",
    "without_possessive",
]

#: initial consonants of a Hangul syllable, in Unicode order, as classes ("" = silent ㅇ)
_INITIAL = (
    "K", "K", "N", "T", "T", "L", "M", "P", "P", "S", "S", "", "J", "J", "J", "K", "T", "P", "H",
)  # fmt: skip
#: final consonants (index 0: none), as the class of the sound a loanword gives them
_FINAL = (
    "", "K", "K", "K", "N", "N", "N", "T", "L", "L", "L", "L", "L", "L", "L", "L",
    "M", "P", "P", "T", "T", "N", "T", "T", "K", "T", "P", "",
)  # fmt: skip
_VOWELS = frozenset("aeiouy")
#: English letters -> class (the simple ones; the rest are read in context)
_SIMPLE = {"p": "P", "b": "P", "f": "P", "v": "P", "t": "T", "d": "T", "k": "K", "q": "K",
           "s": "S", "j": "J", "z": "J", "m": "M", "n": "N", "l": "L", "x": "KS"}  # fmt: skip
#: the shortest skeleton compared (one class matches far too many words)
MIN_CLASSES = 2
#: at most this many readings of one English word
_MAX_READINGS = 8
_NAME = re.compile(r"(?<![A-Za-z])[A-Z][a-z]{2,}(?![A-Za-z])")
#: the thing a fact is about is named among its first words: a Hangul word among the
#: first two, a Latin name among the first three ("The Orbit app's ...")
HANGUL_LEAD = 2
NAME_LEAD = 3


def _collapse(classes: Iterable[str]) -> str:
    out: list[str] = []
    for c in "".join(classes):
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


@functools.lru_cache(maxsize=65_536)
def hangul_skeleton(word: str) -> str | None:
    """The consonant skeleton of a Hangul word (other characters ignored), or None when it
    has fewer than :data:`MIN_CLASSES` classes."""
    parts: list[str] = []
    for ch in word:
        code = ord(ch) - 0xAC00
        if not 0 <= code < 11172:  # noqa: PLR2004 - the Hangul syllables block
            continue
        initial, rest = divmod(code, 588)
        parts.append(_INITIAL[initial])
        parts.append(_FINAL[rest % 28])
    skeleton = _collapse(parts)
    return skeleton if len(skeleton) >= MIN_CLASSES else None


def _letter(w: str, i: int) -> tuple[tuple[str, ...], int]:
    """The readings of the sound that starts at ``w[i]`` and how many letters it takes."""
    c, nxt = w[i], w[i + 1 : i + 2]
    after = w[i + 2 : i + 3]
    two = w[i : i + 2]
    if w.startswith(("tion", "sion"), i):
        return ("SN",), 4
    if two in _DIGRAPHS:
        reading: tuple[str, ...] = _DIGRAPHS[two]
    elif two == "ng":
        reading = ("NJ", "N") if after in _SOFT else ("N", "NK") if after in _VOWELS else ("N",)
    elif c in "cg":
        reading = _SOFTENED[c] if nxt in _SOFT else ("K",)
    elif c == "r":  # "fire", "store": an r before a final silent e is not written either
        silent_e = nxt == "e" and (len(w) == i + 2 or w[i + 2] not in _VOWELS)
        reading = ("L", "") if silent_e else ("L",) if nxt in _VOWELS else ("",)
    elif c == "h":
        before = w[i - 1] if i else ""
        reading = ("H",) if nxt in _VOWELS and (not before or before in _VOWELS) else ("",)
    elif c == "s" and i and w[i - 1] in _VOWELS and nxt in _VOWELS:
        reading = ("S", "J")  # "design": an s between vowels may sound z
    else:
        return (_SIMPLE.get(c, ""),), 1
    return reading, 2 if (two in _DIGRAPHS or two == "ng") else 1


#: two letters read as one sound
_DIGRAPHS: dict[str, tuple[str, ...]] = {
    "ph": ("P",),
    "th": ("S", "T", "TH"),  # "GitHub" is git-hub: t and h apart
    "sh": ("S",),
    "ch": ("J", "K"),
    "ck": ("K",),
    "qu": ("K",),
    "dg": ("J",),
    "dj": ("J",),
    "gh": ("",),
    "wh": ("",),
}
#: vowels after which c and g soften
_SOFT = frozenset("eiy")
_SOFTENED = {"c": ("S",), "g": ("J", "K")}


@functools.lru_cache(maxsize=65_536)
def latin_skeletons(word: str) -> frozenset[str]:
    """The consonant skeletons an English word may be transcribed with (empty when none has
    :data:`MIN_CLASSES` classes). A final plural or silent "s" may be left out ("Windows"
    / "윈도우", "Paris" / "파리")."""
    w = unicodedata.normalize("NFKD", word.lower())
    w = "".join(c for c in w if "a" <= c <= "z")
    w = re.sub(r"([b-df-hj-np-tv-z])\1", r"\1", w)  # doubled consonants sound once
    readings = [""]
    i = 0
    while i < len(w):
        if w[i] in _VOWELS or w[i] == "w":
            i += 1
            continue
        options, used = _letter(w, i)
        readings = [r + o for r in readings for o in options][:_MAX_READINGS]
        i += used
    if w.endswith("s") and len(w) > 3:  # noqa: PLR2004
        readings += [r[:-1] for r in readings if r.endswith("S")]
    return frozenset(s for s in map(_collapse, readings) if len(s) >= MIN_CLASSES)


def without_possessive(word: str) -> str:
    """A word without its possessive ("Lumen's" -> "Lumen")."""
    return word.split("'")[0].split("\u2019")[0]


def is_name(word: str) -> bool:
    """Whether a Latin word is written as a name (capitalised, three letters or more; a
    possessive may follow: "Lumen's")."""
    return _NAME.fullmatch(without_possessive(word)) is not None


def same_name(hangul: str, latin: str) -> bool:
    """Whether a name in Hangul and one in Latin letters may be one name ("토마스" / "Tomás",
    "망고" / "Mango"): their consonant skeletons meet, or one is too short to tell ("페퍼" /
    "Pepper" is one consonant class), which callers read as no evidence of two names."""
    skeleton, readings = hangul_skeleton(hangul), latin_skeletons(latin)
    return skeleton is None or not readings or skeleton in readings
