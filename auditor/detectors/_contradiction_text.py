"""Reading one memory for the contradiction detector: tokens, slot values, numbers, dates.

:func:`build_profile` turns a fact into a :class:`Profile`: what the pair judge compares.
It is computed once per memory and scan (and cached by content hash), so the per-pair work
is set arithmetic. Offsets always point into the original fact (no normalisation that could
shift them), so spans stay exact.

The lexicon (value sets, cue words, number words) comes from
:mod:`auditor.detectors._contradiction_data`, possibly extended by a rule's params
(:class:`Lexicon`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from auditor.detectors import _contradiction_data as data
from auditor.detectors._literals import LiteralSet, necessary_literals
from auditor.detectors.prefilter import fold

__all__ = [
    "DateMention",
    "Lexicon",
    "NumberMention",
    "Profile",
    "QuestionAnswer",
    "Token",
    "TraitMention",
    "ValueMention",
    "build_profile",
    "cue_sets_for",
    "find_values",
    "is_hangul",
    "jaccard",
    "ko_root",
    "negated_at",
    "stem",
    "token_at",
]

Polarity = Literal["pos", "neg", "past"]

_WORD = re.compile(r"\w+(?:['’]\w+)*(?:[-.+#]\w+)*[+#]*", re.UNICODE)
_CLAUSE_BREAK = re.compile(r"[.;!?:()\[\]\n—–]|\s-\s|,")
_DIGIT = re.compile(r"\d")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")
_DIGIT_NUMBER = re.compile(
    r"(?<![\w.:/\-–—])(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
    r"(?P<tail>[\uac00-\ud7a3]{0,3})(?![\d])"
)
_CLOCK = re.compile(
    r"(?i)(?<![\w:.])(?:(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)\s*(?P<ap>[ap]\.?m\.?)?"
    r"|(?P<h2>1[0-2]|0?[1-9])\s*(?P<ap2>[ap]\.?m\.?))(?![\w:])"
    r"|(?P<half>오전|오후)?\s*(?P<h3>[0-2]?\d)\s*시(?:\s*(?P<m3>[0-5]?\d)\s*분)?"
)
_AMPM = re.compile(r"(?i)\d\s*[ap]\.?m\b")
_MONTH_NAMES = "|".join(sorted(data.MONTHS, key=len, reverse=True))
#: Date patterns with what a text must contain for each to be tried: "month" (a month
#: name token), "ko" (년 or 월) or "digit" (any digit; every date pattern needs one).
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<!\d)(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d)"), "digit"),
    (re.compile(r"(?<![\d/])(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<y>\d{4})(?![\d/])"), "digit"),
    (
        re.compile(
            rf"(?i)\b(?P<mn>{_MONTH_NAMES})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?"
        ),
        "month",
    ),
    (
        re.compile(
            rf"(?i)\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mn>{_MONTH_NAMES})\b"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?"
        ),
        "month",
    ),
    (re.compile(rf"(?i)\b(?P<mn>{_MONTH_NAMES})\s+(?:of\s+)?(?P<y>\d{{4}})\b"), "month"),
    (
        re.compile(r"(?:(?P<y>\d{4})\s*년\s*)?(?P<m>\d{1,2})\s*월\s*(?P<d>\d{1,2})\s*일"),
        "ko",
    ),
    (re.compile(r"(?P<y>\d{4})\s*년(?!\s*\d{1,2}\s*월)"), "ko"),
    (re.compile(r"(?<!\d)(?P<m>\d{1,2})\s*월(?!\s*\d{1,2}\s*일)"), "ko"),
    (re.compile(r"(?<![\w.,\-–—])(?P<y>1[5-9]\d{2}|20\d{2})(?![\w-]|[.,]\d)"), "digit"),
)
_QA = re.compile(
    r"^\s*(?:" + "|".join(data.QA_QUESTION_MARKERS) + r")\s*[:.)]\s*(?P<q>.+?)\s+"
    r"(?:" + "|".join(data.QA_ANSWER_MARKERS) + r")\s*[:.)]\s*(?P<a>.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
#: The same memory layout without markers: one question, then its short answer
#: ("How many moons does Mars have? Two."); bounded repetitions, linear time.
_QA_PLAIN = re.compile(r"^\s*(?P<q>[^?\n]{8,300}\?)\s+(?P<a>[^?\n]{1,80}?)\s*$")
_POST_NEGATION = frozenset(
    {"not", "isn't", "aren't", "banned", "forbidden", "disallowed", "prohibited", "never"}
)
_KO_NEG_TOKEN = re.compile(data.KO_NEGATION_PATTERN)
_WH = re.compile(
    r"(?i)^\s*(?P<wh>how many|how much|how long|how old|how far|how tall|what year|which year|"
    r"what date|when|who|whom|whose|where|which|what|why|how|is|are|was|were|do|does|did|can|"
    r"has|have|had)\b"
)
_KO_DETERMINERS = ("한", "두", "세", "네")
_KO_COUNT_WORDS = ("다섯", "여섯", "일곱", "여덟", "아홉", "하나", "둘", "셋", "넷")
_KO_ENDINGS = tuple(
    sorted(
        """지 지는 지도 고 는 다 요 음 함 하지 하고 해서 했음 했다 한다 합니다 해요 었음 았음
        었다 았다 어서 아서 게 기 기로 며 면서 니까""".split(),
        key=len,
        reverse=True,
    )
)
_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*")
#: A substring each transition pattern needs (cheap prefilter, same order as the patterns).
_TRANSITION_NEEDLES = ("from", "replaced", "from", "에서")


def is_hangul(text: str) -> bool:
    """Whether ``text`` contains Hangul syllables."""
    return _HANGUL.search(text) is not None


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
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


class Token(NamedTuple):
    """One word of a fact: its lower-cased text, stem and offsets (a tuple: cheap to build)."""

    text: str
    stem: str
    start: int
    end: int
    clause: int
    content: bool


@dataclass(frozen=True, slots=True)
class ValueMention:
    """A value of an exclusive slot found in a fact."""

    slot: str
    value: str
    start: int
    end: int
    polarity: Polarity


@dataclass(frozen=True, slots=True)
class NumberMention:
    """A number and what it counts (``unit``) or follows (``prev``)."""

    value: float
    start: int
    end: int
    unit: str
    prev: str
    approx: bool


@dataclass(frozen=True, slots=True)
class DateMention:
    """A calendar date (any of year, month, day may be unknown) and the words before it."""

    year: int | None
    month: int | None
    day: int | None
    start: int
    end: int
    keys: frozenset[str]

    def differs(self, other: DateMention) -> bool:
        """Whether the two dates disagree on a field both specify."""
        return any(
            a is not None and b is not None and a != b
            for a, b in ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        )

    def comparable(self, other: DateMention) -> bool:
        """Whether both specify at least one common field."""
        return any(
            a is not None and b is not None
            for a, b in ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        )


@dataclass(frozen=True, slots=True)
class TraitMention:
    """One side (``a`` or ``b``) of an exclusive trait pair found in a fact."""

    trait: str
    side: Literal["a", "b"]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class QuestionAnswer:
    """A question / answer memory ("Q: ... A: ...")."""

    q_start: int
    q_end: int
    a_start: int
    a_end: int
    q_stems: frozenset[str]
    a_stems: frozenset[str]
    a_text: str
    wh: str
    a_numbers: tuple[float, ...]
    a_dates: tuple[DateMention, ...]
    a_proper: bool
    yes_no: bool
    choice: bool


@dataclass(frozen=True)
class Profile:
    """What the pair judge knows about one fact.

    The fields the candidate search reads (tokens, stems, bigrams, values, traits, the
    question/answer reading) are read when the profile is built; the others are read from
    the fact the first time the pair judge asks for them (cached properties of the same
    functions), so a memory that meets no candidate pair, about a third of a realistic
    store's, never pays for its dates, numbers, negations, scopes and names.
    """

    tokens: tuple[Token, ...]
    stems: frozenset[str]
    bigrams: frozenset[str]
    values: tuple[ValueMention, ...]
    traits: tuple[TraitMention, ...]
    qa: QuestionAnswer | None
    hangul: bool
    question: bool
    length: int
    text: str = field(repr=False)
    lex: Lexicon = field(repr=False, compare=False)

    @functools.cached_property
    def dates(self) -> tuple[DateMention, ...]:
        """Dates and periods named in the fact."""
        return _dates(self.text, self.tokens)

    @functools.cached_property
    def numbers(self) -> tuple[NumberMention, ...]:
        """Numbers outside the dates (with their units), then clock-time bounds."""
        spans = [(d.start, d.end) for d in self.dates]
        found = _numbers(self.text, self.tokens, spans, self.hangul)
        return found + tuple(_times(self.text, self.tokens))

    @functools.cached_property
    def negations(self) -> tuple[tuple[int, int], ...]:
        """Token ranges under a negation."""
        return _negations(self.text, self.tokens, self.hangul)

    @functools.cached_property
    def scopes(self) -> frozenset[str]:
        """Where a statement holds ("at work", "for side projects")."""
        return _scopes(self.text, self.lex)

    @functools.cached_property
    def universal(self) -> bool:
        """Whether the fact says always / never / every."""
        return any(t.text in data.UNIVERSAL_WORDS for t in self.tokens)

    @functools.cached_property
    def hedged(self) -> bool:
        """Whether the fact is hedged ("maybe", "I think")."""
        low = self.text.lower()
        return any(h in low for h in self.lex.hedges)

    @functools.cached_property
    def ko_roots(self) -> frozenset[str]:
        """Roots of the Hangul content words outside negations."""
        if not self.hangul:
            return frozenset()
        return frozenset(
            ko_root(t.text)
            for t in self.tokens
            if t.content and is_hangul(t.text) and not _KO_NEG_TOKEN.search(t.text)
        )

    @functools.cached_property
    def proper(self) -> frozenset[str]:
        """Stems of capitalised words that are not a sentence's first (names, titles)."""
        return _proper_words(self.text, self.tokens)

    @property
    def negated(self) -> bool:
        """Whether the fact contains a negation."""
        return bool(self.negations)


def _literal_prefix(pattern: str) -> str:
    """The literal text a trait pattern starts with (lower case; "" when there is none).

    Used as a cheap substring prefilter: a pattern can only match where its prefix occurs.
    """
    depth = 0
    escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "|" and depth == 0:
            return ""  # a top-level alternative: no common prefix
    body = pattern.removeprefix(r"\b")
    out = []
    for ch in body:
        if ch.isalnum() or ch in " '-" or is_hangul(ch):
            out.append(ch)
        else:
            break
    # the character before an optional or a group may be optional itself
    if body[len(out) : len(out) + 1] in ("?", "*") and out:
        out.pop()
    return "".join(out).lower().strip()


@dataclass(frozen=True)
class Lexicon:
    """The compiled tables: slot value patterns, trait patterns, scope and hedge patterns.

    Args:
        slots: exclusive slots (see :class:`~auditor.detectors._contradiction_data.SlotSpec`).
        traits: exclusive trait pairs.
        hedges: hedge phrases.
    """

    slots: Mapping[str, data.SlotSpec]
    traits: Mapping[str, data.TraitSpec]
    hedges: tuple[str, ...]
    alias_index: dict[str, tuple[str, str]] = field(init=False)
    hangul_aliases: dict[str, tuple[str, str]] = field(init=False)
    multi_first: frozenset[str] = field(init=False)
    max_alias_words: int = field(init=False)
    trait_patterns: dict[str, tuple[re.Pattern[str], re.Pattern[str], frozenset[str]]] = field(
        init=False
    )
    trait_triggers: dict[str, tuple[str, ...]] = field(init=False)
    trait_ko_cues: dict[str, tuple[str, ...]] = field(init=False)
    scope_patterns: tuple[re.Pattern[str], ...] = field(init=False)
    #: per scope pattern, literals one of which each match holds (None: no such set)
    scope_gates: tuple[LiteralSet | None, ...] = field(init=False)
    transition_patterns: tuple[re.Pattern[str], ...] = field(init=False)
    known_values: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        alias_index: dict[str, tuple[str, str]] = {}
        for slot, spec in self.slots.items():
            for value, aliases in spec["values"].items():
                for alias in [value.replace("_", " "), *aliases]:
                    key = " ".join(alias.lower().split())
                    alias_index.setdefault(key, (slot, value))
        object.__setattr__(self, "alias_index", alias_index)
        object.__setattr__(
            self,
            "hangul_aliases",
            {k: v for k, v in alias_index.items() if is_hangul(k) and " " not in k},
        )
        object.__setattr__(
            self, "max_alias_words", max((len(k.split()) for k in alias_index), default=1)
        )
        object.__setattr__(
            self, "multi_first", frozenset(k.split()[0] for k in alias_index if " " in k)
        )
        traits = {
            name: (
                re.compile("|".join(f"(?:{p})" for p in spec["a"]), re.I),
                re.compile("|".join(f"(?:{p})" for p in spec["b"]), re.I),
                frozenset(c.lower() for c in spec["b_cues"]),
            )
            for name, spec in self.traits.items()
        }
        object.__setattr__(self, "trait_patterns", traits)
        object.__setattr__(
            self,
            "trait_ko_cues",
            {
                name: tuple(c for c in spec["b_cues"] if is_hangul(c))
                for name, spec in self.traits.items()
            },
        )
        object.__setattr__(
            self,
            "trait_triggers",
            {
                name: tuple(sorted({_literal_prefix(p) for p in (*spec["a"], *spec["b"])}))
                for name, spec in self.traits.items()
            },
        )
        object.__setattr__(
            self, "scope_patterns", tuple(re.compile(p) for p in data.SCOPE_PATTERNS)
        )
        gates = (necessary_literals(p.pattern, p.flags) for p in self.scope_patterns)
        object.__setattr__(
            self, "scope_gates", tuple(None if g is None else LiteralSet(g) for g in gates)
        )
        object.__setattr__(
            self, "transition_patterns", tuple(re.compile(p) for p in data.TRANSITION_PATTERNS)
        )
        known = {w for a in alias_index for w in a.split()}
        object.__setattr__(self, "known_values", frozenset(known))

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Lexicon:
        """The default tables, extended by ``params`` (``extra_slots``, ``extra_traits``,
        ``extra_hedges``).

        Raises:
            ValueError: a malformed extension (the message names the parameter).
        """
        slots: dict[str, data.SlotSpec] = {k: v for k, v in data.SLOTS.items()}
        extra = params.get("extra_slots", {})
        if not isinstance(extra, Mapping):
            raise ValueError("params.extra_slots must map slot names to slot specs")
        for name, spec in extra.items():
            if not isinstance(spec, Mapping) or not isinstance(spec.get("values"), Mapping):
                raise ValueError(f"params.extra_slots.{name} needs a 'values' mapping")
            values = {
                str(v): [str(a) for a in (aliases or [])] for v, aliases in spec["values"].items()
            }
            slots[str(name)] = {
                "title": str(spec.get("title", name)),
                "values": values,
                "cues": [str(c) for c in spec.get("cues", [])],
                "window": int(spec.get("window", 4)),
                "shared_context": bool(spec.get("shared_context", False)),
            }
        traits: dict[str, data.TraitSpec] = {k: v for k, v in data.TRAITS.items()}
        extra_traits = params.get("extra_traits", {})
        if not isinstance(extra_traits, Mapping):
            raise ValueError("params.extra_traits must map trait names to trait specs")
        for name, tspec in extra_traits.items():
            try:
                traits[str(name)] = {
                    "title": str(tspec.get("title", name)),
                    "a": [str(p) for p in tspec["a"]],
                    "b": [str(p) for p in tspec["b"]],
                    "b_cues": [str(c) for c in tspec.get("b_cues", [])],
                    "reason": str(tspec.get("reason", "the two traits exclude each other")),
                }
                for p in (*traits[str(name)]["a"], *traits[str(name)]["b"]):
                    re.compile(p)
            except (KeyError, TypeError, AttributeError, re.error) as exc:
                raise ValueError(f"params.extra_traits.{name}: {exc}") from None
        hedges = tuple(data.HEDGE_PHRASES) + tuple(
            str(h).lower() for h in params.get("extra_hedges", [])
        )
        return cls(slots, traits, hedges)


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
        joined = " " + " ".join(before) + " "
        if any(f" {phrase} " in joined for phrase in data.NEGATION_PHRASES):
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
    if hangul:
        own = tokens[last].text
        tail = own[len(own) - 2 :] if len(own) > 2 else ""
        if tail in ("말고", "대신"):
            return True
        for i in range(last + 1, min(len(tokens), last + 4)):
            t = tokens[i]
            if t.clause != clause:
                break
            if _KO_NEG_TOKEN.search(t.text):
                return True
    return False


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


def _cue_near(
    tokens: Sequence[Token], first: int, last: int, cues: frozenset[str], window: int
) -> bool:
    lo, hi = max(0, first - window), min(len(tokens), last + window + 1)
    for i in range(lo, hi):
        if first <= i <= last:
            continue
        t = tokens[i]
        if t.text in cues or t.stem in cues:
            return True
        if is_hangul(t.text) and any(t.text.startswith(c) for c in cues if is_hangul(c)):
            return True
    return False


def find_values(
    text: str, tokens: Sequence[Token], lex: Lexicon
) -> list[tuple[int, int, int, int, str, str]]:
    """Every value of every slot in a fact, by token look-up (no giant alternation regex).

    Multi-word aliases ("vs code", "new york") are matched on adjacent tokens; a Hangul
    token matches an alias it starts with (서울에서 -> 서울).

    Returns:
        ``(first token, last token, start, end, slot, value)`` tuples, left to right.
    """
    out: list[tuple[int, int, int, int, str, str]] = []
    n = len(tokens)
    i = 0
    index = lex.alias_index
    hangul = is_hangul(text)  # no Hangul in the fact, none in any of its tokens
    while i < n:
        hit: tuple[int, tuple[str, str]] | None = None
        widest = min(lex.max_alias_words, n - i) if tokens[i].text in lex.multi_first else 1
        for width in range(widest, 0, -1):
            last = i + width - 1
            if width > 1 and any(
                text[tokens[k].end : tokens[k + 1].start].strip() for k in range(i, last)
            ):
                continue
            key = (
                tokens[i].text
                if width == 1
                else " ".join(tokens[k].text for k in range(i, last + 1))
            )
            found = index.get(key)
            if found is not None:
                hit = (last, found)
                break
        if hit is None and hangul and is_hangul(tokens[i].text):
            word = tokens[i].text
            found = lex.hangul_aliases.get(tokens[i].stem)
            if found is None:
                for cut in range(len(word) - 1, 1, -1):
                    found = lex.hangul_aliases.get(word[:cut])
                    if found is not None:
                        break
            if found is not None:
                hit = (i, found)
        if hit is None:
            i += 1
            continue
        last, (slot, value) = hit
        out.append((i, last, tokens[i].start, tokens[last].end, slot, value))
        i = last + 1
    return out


def _values(
    text: str,
    tokens: Sequence[Token],
    lex: Lexicon,
    hangul: bool,
    cue_sets: Mapping[str, frozenset[str]],
) -> tuple[ValueMention, ...]:
    mentions = find_values(text, tokens, lex)
    if not mentions:
        return ()
    found: list[ValueMention] = []
    past: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    low = text.lower()
    for pattern, needle in zip(lex.transition_patterns, _TRANSITION_NEEDLES, strict=True):
        if needle not in low:
            continue
        for m in pattern.finditer(text):
            past.append(m.span("old"))
            current.append(m.span("new"))
    for first, last, start, end, slot, value in mentions:
        spec = lex.slots[slot]
        cues = cue_sets[slot]
        if cues and not _cue_near(tokens, first, last, cues, int(spec.get("window", 4))):
            continue
        polarity: Polarity = "pos"
        if any(a <= start < b for a, b in past) and not any(a <= start < b for a, b in current):
            polarity = "past"
        elif negated_at(tokens, first, last, hangul):
            polarity = "neg"
        found.append(ValueMention(slot, value, start, end, polarity))
    return tuple(found)


def _times(text: str, tokens: Sequence[Token]) -> list[NumberMention]:
    """Clock times that bound a preference ("after 14:00", "오후 3시 이후"), in minutes.

    The unit is ``time:<relation>`` (after / before) and ``prev`` the content word before,
    so "meetings after 13:00" and "meetings after 15:00" conflict while "at 10:00" (an event)
    is not read at all.
    """
    out: list[NumberMention] = []
    if ":" not in text and "시" not in text and _AMPM.search(text) is None:
        return out
    for m in _CLOCK.finditer(text):
        g = m.groupdict()
        hour_s = g["h"] or g["h2"] or g["h3"]
        if hour_s is None:
            continue
        hour, minute = int(hour_s), int(g["m"] or g["m3"] or 0)
        ampm = (g["ap"] or g["ap2"] or "").lower().replace(".", "")
        if (ampm == "pm" or g["half"] == "오후") and hour < 12:
            hour += 12
        elif (ampm == "am" or g["half"] == "오전") and hour == 12:
            hour = 0
        if hour > 24:
            continue
        first = token_at(tokens, m.start())
        last = token_at(tokens, m.end() - 1)
        relation = ""
        before_idx = first - 1
        if first > 0 and tokens[first - 1].text in data.TIME_RELATIONS:
            relation = data.TIME_RELATIONS[tokens[first - 1].text]
            before_idx = first - 2
        elif last + 1 < len(tokens) and tokens[last + 1].text in data.TIME_RELATIONS:
            relation = data.TIME_RELATIONS[tokens[last + 1].text]
        elif last + 1 < len(tokens):
            tail = tokens[last + 1].text
            relation = next(
                (r for w, r in data.TIME_RELATIONS.items() if is_hangul(w) and tail.startswith(w)),
                "",
            )
        if not relation:
            continue
        prev = ""
        for j in range(before_idx, max(-1, before_idx - 4), -1):
            if tokens[j].content and not tokens[j].text[:1].isdigit():
                prev = tokens[j].stem
                break
        out.append(
            NumberMention(
                float(hour * 60 + minute), m.start(), m.end(), f"time:{relation}", prev, False
            )
        )
    return out


def _korean_count(tokens: Sequence[Token], i: int) -> NumberMention | None:
    """A Korean count: "두 명", "세 개" (determiner + counter) or "아이가 둘", "셋이라"."""
    t = tokens[i]
    prev = tokens[i - 1].stem
    if t.text in _KO_DETERMINERS:
        if i + 1 < len(tokens) and any(tokens[i + 1].text.startswith(c) for c in data.KO_COUNTERS):
            return NumberMention(
                float(data.KO_NUMBER_WORDS[t.text]), t.start, t.end, prev, prev, False
            )
        return None
    for word in _KO_COUNT_WORDS:
        if t.text.startswith(word):
            rest = t.text[len(word) :]
            if (
                not rest
                or rest in data.KO_PARTICLES
                or rest.startswith("이")
                or rest in ("명", "임", "뿐")
            ):
                return NumberMention(
                    float(data.KO_NUMBER_WORDS[word]), t.start, t.end, prev, prev, False
                )
    return None


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


def _number_value(tok: str) -> float | None:
    if tok in data.NUMBER_WORDS:
        return float(data.NUMBER_WORDS[tok])
    if "-" in tok:
        parts = tok.split("-")
        if parts[0] in data.NUMBER_WORDS and parts[1] in data.NUMBER_WORDS:
            a, b = data.NUMBER_WORDS[parts[0]], data.NUMBER_WORDS[parts[1]]
            if a >= 20 and b < 10:
                return float(a + b)
    return None


def _numbers(
    text: str, tokens: Sequence[Token], date_spans: Sequence[tuple[int, int]], hangul: bool
) -> tuple[NumberMention, ...]:
    out: list[NumberMention] = []

    def in_date(pos: int) -> bool:
        return any(a <= pos < b for a, b in date_spans)

    def unit_prev(i_first: int, i_last: int) -> tuple[str, str]:
        unit = ""
        if i_last + 1 < len(tokens):
            t = tokens[i_last + 1]
            if t.content and t.clause == tokens[i_last].clause and not t.text[:1].isdigit():
                unit = t.stem
        prev = ""
        for j in range(i_first - 1, max(-1, i_first - 4), -1):
            t = tokens[j]
            if t.clause != tokens[i_first].clause:
                break
            if t.content or t.text in data.LIGHT_VERBS:
                prev = t.stem
                break
        return unit, prev

    def approx_before(i_first: int) -> bool:
        return any(tokens[j].text in data.APPROX_WORDS for j in range(max(0, i_first - 2), i_first))

    for m in _DIGIT_NUMBER.finditer(text):
        if in_date(m.start()):
            continue
        raw = m.group("num").replace(",", "")
        if "," not in m.group("num") and len(raw) > 4:
            continue  # an identifier or a code, not a count
        value = float(raw + ("." + m.group("frac") if m.group("frac") else ""))
        first = token_at(tokens, m.start())
        last = token_at(tokens, m.end() - 1)
        if last >= len(tokens) or tokens[first].start != m.start() or tokens[last].end != m.end():
            continue  # part of a larger token (an id, a version, a phone number)
        tail = m.group("tail")
        if tail:  # Korean counter glued to the number: 2명, 3개, 5년
            counter = next((c for c in data.KO_COUNTERS if tail.startswith(c)), "")
            prev = tokens[first - 1].stem if first > 0 else ""
            # people and things are counted by the noun before (아이 2명), others by the counter
            unit = (prev or counter) if counter in ("명", "개", "마리") else counter
        else:
            unit, prev = unit_prev(first, last)
        out.append(NumberMention(value, m.start(), m.end(), unit, prev, approx_before(first)))
    for i, t in enumerate(tokens):
        word_value = _number_value(t.text)
        if word_value is not None and not t.text.isdigit():
            if t.text in ("once", "single", "pair", "couple") or (
                t.text == "one" and i + 1 < len(tokens) and tokens[i + 1].text == "of"
            ):
                continue
            if (
                "-" in t.text
                and _number_value(t.text.split("-")[0]) is not None
                and t.text.count("-") == 1
                and t.text.split("-")[1] not in data.NUMBER_WORDS
            ):
                word_value = _number_value(t.text.split("-")[0])
                if word_value is None:
                    continue
                out.append(
                    NumberMention(
                        word_value, t.start, t.end, stem(t.text.split("-", 1)[1]), "", False
                    )
                )
                continue
            unit, prev = unit_prev(i, i)
            if unit:
                out.append(NumberMention(word_value, t.start, t.end, unit, prev, approx_before(i)))
        elif hangul and i > 0 and is_hangul(t.text):
            found = _korean_count(tokens, i)
            if found is not None:
                out.append(found)
    return tuple(out)


def _dates(text: str, tokens: Sequence[Token]) -> tuple[DateMention, ...]:
    out: list[DateMention] = []
    if _DIGIT.search(text) is None:
        return ()
    taken: list[tuple[int, int]] = []
    has = {
        "digit": True,
        "month": any(t.text in data.MONTHS for t in tokens),
        "ko": "월" in text or "년" in text,
    }
    for pattern, needs in _DATE_PATTERNS:
        if not has[needs]:
            continue
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            groups = m.groupdict()
            year = int(groups["y"]) if groups.get("y") else None
            month: int | None = None
            if groups.get("mn"):
                month = data.MONTHS[groups["mn"].lower()]
            elif groups.get("m"):
                month = int(groups["m"])
            day = int(groups["d"]) if groups.get("d") else None
            if groups.get("a"):
                # 8/5/1989: month and day order is ambiguous unless one is above 12
                a, b = int(groups["a"]), int(groups["b"])
                if a > 12 >= b:
                    day, month = a, b
                elif b > 12 >= a:
                    month, day = a, b
            if (month is not None and not 1 <= month <= 12) or (
                day is not None and not 1 <= day <= 31
            ):
                continue
            taken.append(m.span())
            first = token_at(tokens, m.start())
            keys: set[str] = set()
            clause = tokens[first].clause if first < len(tokens) else -1
            for j in range(first - 1, max(-1, first - 6), -1):
                t = tokens[j]
                if t.clause < clause - 1:
                    break
                if t.content:
                    keys.add(t.stem)
                    keys.add(t.text)
            last = token_at(tokens, m.end() - 1)
            for j in range(last + 1, min(len(tokens), last + 3)):
                t = tokens[j]
                if t.content:
                    keys.add(t.stem)
            out.append(DateMention(year, month, day, m.start(), m.end(), frozenset(keys)))
    return tuple(out)


def _traits(
    text: str, tokens: Sequence[Token], lex: Lexicon, hangul: bool
) -> tuple[TraitMention, ...]:
    out: list[TraitMention] = []
    low = text.lower()
    for name, (pat_a, pat_b, cues) in lex.trait_patterns.items():
        if not any(trigger in low for trigger in lex.trait_triggers[name]):
            continue
        for side, pattern in (("a", pat_a), ("b", pat_b)):
            for m in pattern.finditer(text):
                first = token_at(tokens, m.start())
                last = max(first, token_at(tokens, m.end() - 1))
                if first >= len(tokens):
                    continue
                if side == "a":
                    # a negation inside the match is part of the trait ("doesn't drink")
                    if negated_at(tokens, first, first, False) and not re.search(
                        r"n't|not|never|안|않|못|끊", m.group(), re.I
                    ):
                        continue
                else:
                    if negated_at(tokens, first, last, hangul):
                        continue
                    if cues:
                        clause = tokens[first].clause
                        lo = token_at(tokens, max(0, m.start() - 60))
                        hi = token_at(tokens, m.start() + 60)
                        near = [t for t in tokens[lo:hi] if t.clause == clause or hangul]
                        ko_cues = lex.trait_ko_cues[name]
                        if not any(
                            t.text in cues
                            or t.stem in cues
                            or (ko_cues and any(c in t.text for c in ko_cues))
                            for t in near
                        ):
                            continue
                out.append(TraitMention(name, "a" if side == "a" else "b", m.start(), m.end()))
    return tuple(out)


def _scopes(text: str, lex: Lexicon) -> frozenset[str]:
    scopes: set[str] = set()
    folded: str | None = None
    for pattern, gate in zip(lex.scope_patterns, lex.scope_gates, strict=True):
        if gate is not None:
            folded = fold(text) if folded is None else folded
            if not gate.any_in(folded):
                continue  # no match can lack all of the gate's literals
        for m in pattern.finditer(text):
            scope = m.group("scope").lower()
            if scope in lex.known_values or scope in data.EN_STOPWORDS:
                continue
            scope = {
                "side project": "personal",
                "side projects": "personal",
                "personal projects": "personal",
                "personal project": "personal",
                "hobby": "personal",
                "weekend": "personal",
                "private": "personal",
                "hobby project": "personal",
                "hobby projects": "personal",
                "at work": "work",
                "work projects": "work",
                "work project": "work",
                "at the office": "work",
                "in the office": "work",
                "회사에서": "work",
                "회사 프로젝트": "work",
                "업무용": "work",
                "업무에서": "work",
                "개인 프로젝트": "personal",
                "사이드 프로젝트": "personal",
                "at home": "home",
                "집에서": "home",
                "레거시": "legacy",
            }.get(scope, scope)
            scopes.add(scope)
    return frozenset(scopes)


def _question_answer(text: str, lex: Lexicon) -> QuestionAnswer | None:
    m = _QA.match(text) or _QA_PLAIN.match(text)
    if m is None:
        return None
    question, answer = m.group("q"), m.group("a")
    q_tokens = _tokens(question)
    a_tokens = _tokens(answer)
    wh_match = _WH.match(question)
    wh = wh_match.group("wh").lower() if wh_match else ""
    if not wh:
        for ko, kind in data.WH_NUMERIC.items():
            if is_hangul(ko) and ko in question:
                wh = kind
                break
    a_low = answer.strip().lower().rstrip(".")
    yes_no = a_low in ("yes", "no", "네", "아니오", "아니요", "예", "true", "false")
    a_dates = _dates(answer, a_tokens)
    a_numbers = tuple(
        n.value
        for n in _numbers(answer, a_tokens, [(d.start, d.end) for d in a_dates], is_hangul(answer))
    )
    word_nums = tuple(float(v) for t in a_tokens if (v := _number_value(t.text)) is not None)
    q_stems = frozenset(t.stem for t in q_tokens if t.content)
    a_stems = frozenset(t.stem for t in a_tokens if t.content)
    choice = (
        bool(a_stems)
        and a_stems <= q_stems
        and (
            " or " in question.lower()
            or "," in question
            or "또는" in question
            or wh in ("which", "who", "whom", "whose")
        )
    )
    return QuestionAnswer(
        q_start=m.start("q"),
        q_end=m.end("q"),
        a_start=m.start("a"),
        a_end=m.end("a"),
        q_stems=q_stems,
        a_stems=a_stems,
        a_text=answer,
        wh=wh,
        a_numbers=tuple(dict.fromkeys(a_numbers + word_nums)),
        a_dates=a_dates,
        a_proper=any(t[:1].isupper() for t in answer.split()),
        yes_no=yes_no,
        choice=choice,
    )


def _proper_words(text: str, tokens: Sequence[Token]) -> frozenset[str]:
    """Capitalised words that are not the first word of a sentence (names, titles)."""
    out: set[str] = set()
    for m in _CAPITALISED.finditer(text):
        before = text[: m.start()].rstrip()
        if not before or before[-1] in ".!?:\"'“(—–\n":
            # sentence start: only a name when the next word is capitalised too
            rest = text[m.end() :].lstrip()
            if not rest[:1].isupper():
                continue
        word = m.group().strip(".'’").lower()
        if word and word not in data.EN_STOPWORDS:
            out.add(stem(word))
    return frozenset(out)


def build_profile(text: str, lex: Lexicon, cue_sets: Mapping[str, frozenset[str]]) -> Profile:
    """Everything the pair judge compares, read from one fact.

    Args:
        text: the fact (untrusted; only read with linear-time regexes).
        lex: the compiled lexicon.
        cue_sets: slot name -> cue words (lower case), precomputed from ``lex``.

    Returns:
        The fact's profile.
    """
    hangul = is_hangul(text)
    tokens = _tokens(text)
    stems = frozenset(t.stem for t in tokens if t.content)
    bigrams: frozenset[str] = frozenset()
    if hangul:
        grams: set[str] = set()
        for run in _HANGUL_RUN.findall(text):
            grams.update(run[i : i + 2] for i in range(len(run) - 1))
            if len(run) == 1:
                grams.add(run)
        bigrams = frozenset(grams)
    qa = _question_answer(text, lex)
    return Profile(
        tokens=tokens,
        stems=stems,
        bigrams=bigrams,
        values=_values(text, tokens, lex, hangul, cue_sets),
        traits=_traits(text, tokens, lex, hangul),
        qa=qa,
        hangul=hangul,
        question=qa is None and text.rstrip().endswith(("?", "？")),
        length=len(text),
        text=text,
        lex=lex,
    )


def cue_sets_for(lex: Lexicon) -> dict[str, frozenset[str]]:
    """Slot name -> its cue words (lower case)."""
    return {
        name: frozenset(c.lower() for c in spec.get("cues", [])) for name, spec in lex.slots.items()
    }


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two collections of strings (0 for two empty ones)."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)
