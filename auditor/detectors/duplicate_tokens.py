"""The near-duplicate detector's tokens (:class:`Tokenizer`): plain word tokens as the
de-duplication paper uses them, or with ``words="stems"`` light stems without English
function words, Korean particles and endings cut, and one number or clock time written one
way. See :mod:`auditor.detectors.duplicates` for the choices and their measurements."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from auditor.detectors._contradiction_data import APPROX_WORDS, EN_STOPWORDS, NUMBER_WORDS
from auditor.detectors._contradiction_text import stem
from auditor.detectors.contradiction_frames import ko_key

__all__ = ["FUNCTION_WORDS", "HANGUL_MODES", "WORD_MODES", "Tokenizer", "normalise"]

HANGUL_MODES = ("word", "bigram")
WORD_MODES = ("plain", "stems")
#: English words that do not change what a fact says, dropped with ``words: stems``: the
#: contradiction reader's stop words without those that carry a negation, a direction, a
#: time or size relation or a quantity ("not", "off", "before", "more", "every"): "turns the
#: lights on" and "... off" must stay two different token sets.
FUNCTION_WORDS: frozenset[str] = EN_STOPWORDS - frozenset(
    """not no never nor neither without only t on off up down in out over under above below
    before after again once more most less than same other another all any some each every
    many much both either few""".split()
)
#: hedges of a number that do not change the fact ("about 3,000" / "roughly 3k"), dropped
#: with ``words: stems`` too ("over", "under" and "some" stay: they carry a relation)
_HEDGES: frozenset[str] = frozenset(
    w for w in APPROX_WORDS if w.isascii() and w.isalpha() and w not in ("over", "under", "some")
)
#: one number or clock time written one of several ways, in one pass: a number with
#: thousands separators ("3,000") or a thousands suffix ("3k"), a clock time with am / pm
#: ("2am", "2:30 p.m.") or on the 24-hour clock ("02:00"), an hour said with the part of
#: the day ("7 in the morning", "seven in the evening")
#: where :data:`_NUMERIC` can match (a quick scan without look-behinds to run it rarely)
_NUMERIC_HINT = re.compile(r"\d[,:]\d|\dk\b|\d ?[ap]\.?m\b|in the (?:morning|afternoon|evening)")
_NUMERIC = re.compile(
    r"(?P<thousands>(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,]))"
    r"|(?P<kilo>(?<![\w.])(?P<kn>\d{1,3}(?:\.\d)?)k\b)"
    r"|(?P<c12>(?<![\w:.])(?P<h12>\d{1,2})(?::(?P<m12>[0-5]\d))?\s?(?P<ap>[ap])\.?m\b\.?)"
    r"|(?P<c24>(?<![\w:.])(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)(?![\d:]))"
    r"|(?P<dp>\b(?P<dh>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"(?: o'clock)? in the (?P<part>morning|afternoon|evening)\b)"
)

_HANGUL = "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff"
#: a Hangul run, or a run of other word characters
_TOKEN = re.compile(rf"[{_HANGUL}]+|[^\W{_HANGUL}]+")
_IS_HANGUL = re.compile(rf"[{_HANGUL}]")
_DIGIT = re.compile(r"\d")


class Tokenizer:
    """Plain word tokens of a text (see the module docstring for the choices).

    Args:
        hangul: ``word`` (a Hangul run is one token) or ``bigram`` (character bigrams).
        stop_words: tokens to drop, compared after normalisation.

    Raises:
        ValueError: an unknown ``hangul`` mode.
    """

    def __init__(
        self, hangul: str = "word", stop_words: Iterable[str] = (), words: str = "plain"
    ) -> None:
        if hangul not in HANGUL_MODES:
            raise ValueError(f"hangul: must be one of {', '.join(HANGUL_MODES)}, not {hangul!r}")
        if words not in WORD_MODES:
            raise ValueError(f"words: must be one of {', '.join(WORD_MODES)}, not {words!r}")
        self.hangul = hangul
        self.words = words
        stop = {normalise(w) for w in stop_words}
        if words == "stems":
            stop |= FUNCTION_WORDS | _HEDGES
        self.stop_words = frozenset(stop)

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text`` in order (repeats kept).

        Args:
            text: any text (untrusted).

        Returns:
            Lower-cased, NFKC-normalised word tokens, stop words removed.
        """
        out: list[str] = []
        stems = self.words == "stems"
        norm = normalise(text)
        if stems and (_DIGIT.search(norm) is not None or " in the " in norm):
            norm = _plain_numbers(norm)
        for run in _TOKEN.findall(norm):
            hangul = _IS_HANGUL.match(run) is not None
            if stems:
                if run in self.stop_words:
                    continue  # before stemming: "does" is a function word, "doe" is not
                if run in _CARDINALS:
                    run = str(NUMBER_WORDS[run])  # "seven" meets "7"
                    out.append(run)
                    continue
                run = ko_key(run) if hangul else stem(run)
                if not run:
                    continue  # a particle or an ending on its own
            if self.hangul == "bigram" and len(run) > 1 and hangul:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
            else:
                out.append(run)
        if self.stop_words and not stems:
            out = [t for t in out if t not in self.stop_words]
        return out

    def token_set(self, text: str) -> frozenset[str]:
        """The set of tokens of ``text``.

        Args:
            text: any text (untrusted).

        Returns:
            The distinct tokens of :meth:`tokens`.
        """
        return frozenset(self.tokens(text))


#: Cardinal number words read as digits ("seven" meets "7"); not "single", "once", "pair"
#: or "couple", which mean other things too ("is single").
_CARDINALS = frozenset(
    w
    for w in NUMBER_WORDS
    if w not in ("single", "once", "twice", "couple", "pair", "dozen", "hundred", "thousand")
)


def normalise(text: str) -> str:
    """NFKC, then ``casefold`` (lower-casing that also folds "ß", full-width letters, ...)."""
    return unicodedata.normalize("NFKC", text).casefold()


def _plain_numbers(text: str) -> str:
    """Numbers written with thousands separators or a thousands suffix as plain digits
    ("3,000" and "3k" both "3000"), and clock times as one token on the 24-hour clock ("2am",
    "02:00" and "two in the morning" all "t0200"), so that one number or time written two
    ways reads the same."""
    if _NUMERIC_HINT.search(text) is None:
        return text  # most texts, digits or not, write no number or time two ways
    return _NUMERIC.sub(_one_way, text)


def _one_way(m: re.Match[str]) -> str:
    """The one way of writing what :data:`_NUMERIC` matched (or the match itself when it is
    no time after all: "13pm")."""
    kind = m.lastgroup
    if kind == "thousands":
        return m.group().replace(",", "")
    if kind == "kilo":
        return str(round(float(m.group("kn")) * 1000))
    if kind == "c24":
        return _clock_token(int(m.group("h24")), m.group("m24"))
    if kind == "c12":
        hour = int(m.group("h12"))
        if not 1 <= hour <= 12:  # noqa: PLR2004 - "13pm" is no time
            return m.group()
        return _clock_token(hour % 12 + (12 if m.group("ap") == "p" else 0), m.group("m12") or "00")
    word = m.group("dh")
    hour = int(word) if word.isdigit() else NUMBER_WORDS.get(word, 0)
    if not 1 <= hour <= 12:  # noqa: PLR2004
        return m.group()
    return _clock_token(hour % 12 + (0 if m.group("part") == "morning" else 12), "00")


def _clock_token(hour: int, minutes: str) -> str:
    """A clock time as one token on the 24-hour clock ("7 a.m.", "07:00" and "seven in the
    morning" are all "t0700"; "2pm" is "t1400")."""
    return f"t{hour:02d}{minutes}"
