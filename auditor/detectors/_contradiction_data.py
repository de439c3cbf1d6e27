"""Word lists and value sets of the contradiction detector: the loader of their data file.

Everything language-specific the contradiction detector knows lives in
``data/contradiction_words.yaml`` (its header gives the rules), as plain tables an operator
can read and extend (a rule's ``params`` may add slots, traits and cue words; see
:mod:`auditor.detectors.contradiction`). English and Korean at least. The file is read once,
at import, with the bounded YAML loader; a malformed one stops the import with a
:class:`ValueError` that names the file and the entry.

* :data:`SLOTS`: exclusive value sets ("one value at a time"): package managers, export
  formats, the city someone lives in, editors, operating systems, reply languages, seats,
  themes, ... Each slot lists its values (canonical name -> aliases), optional *cue* words
  that must stand near a value for it to count (a city only fills ``city_of_residence``
  next to "lives in" / "살고"), and whether two memories must also share context words.
* :data:`TRAITS`: pairs of traits that exclude each other (vegetarian vs. loves steak).
* Cue words: negation, transitions ("switched from X to Y"), scope ("for personal
  projects", "at work"), universals ("all", "always", "only"), hedges ("in an alternate
  universe"), approximations ("about").
* Numbers and dates: number words (English and Korean), month names, Korean counters, and
  the date attributes that hold one value per person or thing (birthday, anniversary,
  release date ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, NotRequired, TypedDict

from auditor import safe_yaml

__all__ = [
    "APPROX_WORDS",
    "AVOID_BEFORE",
    "BOUND_WORDS",
    "bound_side",
    "CLAUSE_BREAK_WORDS",
    "COMPARATIVES",
    "EN_STOPWORDS",
    "EVENT_WORDS",
    "HEDGE_PHRASES",
    "KO_COUNTERS",
    "KO_QUANTITY_ADVERBS",
    "KO_NEGATION_PATTERN",
    "KO_NUMBER_WORDS",
    "KO_PARTICLES",
    "LIGHT_VERBS",
    "MONTHS",
    "NEGATION_WORDS",
    "PAST_STATE_BEFORE",
    "PAST_STATE_KO",
    "NEGATION_PHRASES",
    "NUMBER_WORDS",
    "ONCE_DATE_EVENTS",
    "ONCE_DATE_KEYS",
    "QA_ANSWER_MARKERS",
    "QA_QUESTION_MARKERS",
    "SCOPE_PATTERNS",
    "SLOTS",
    "SlotSpec",
    "TIME_RELATIONS",
    "TRAITS",
    "TRANSITION_PATTERNS",
    "TraitSpec",
    "TYPE_SETS",
    "UNIVERSAL_WORDS",
    "WH_NUMERIC",
]

#: the data file (see its header)
DATA_FILE = Path(__file__).with_name("data") / "contradiction_words.yaml"


class SlotSpec(TypedDict, total=False):
    """One exclusive slot.

    Keys:
        title: a human name for reasons ("package manager").
        values: canonical value -> aliases (matched as whole words, case-insensitive;
            Hangul aliases may be followed by particles).
        cues: words one of which must stand within ``window`` tokens of a value for the
            value to fill this slot (empty: any mention counts).
        window: how many tokens around a value a cue may stand (default 4).
        shared_context: both memories must also share a content word besides the values
            (the *thing* the value is about, e.g. "report" for an export format).
        any_relation: the value names the attribute whichever verb states it ("runs on
            GitLab CI" / "uses GitHub Actions"): two frames of one thing that differ only
            by their relation do not explain the conflict away (default false: "lives in
            Seoul" / "works in Busan" are two attributes, "stored as JSON" / "exports CSV"
            two formats).
    """

    title: str
    values: dict[str, list[str]]
    cues: list[str]
    window: int
    shared_context: bool
    any_relation: bool


class TraitSpec(TypedDict):
    """Two traits that exclude each other: a memory with ``a`` vs. a memory with ``b``.

    Keys:
        title: a human name ("diet").
        a: regular expressions (case-insensitive) of the first trait.
        b: regular expressions of the second trait.
        b_cues: words that must appear in the clause for ``b`` to count (liking, eating ...);
            empty: ``b`` counts alone.
        reason: why they cannot both hold.
        lasting: (optional, default false) ``b`` told of the past still holds now (a brother
            at last year's wedding is a brother today; a husband last year may not be).
    """

    title: str
    a: list[str]
    b: list[str]
    b_cues: list[str]
    reason: str
    lasting: NotRequired[bool]


# -- reading the data file -------------------------------------------------------------------


class _File:
    """The data file's top-level mapping, read through typed accessors that name the entry."""

    def __init__(self, path: Path) -> None:
        self.name = path.name
        doc = safe_yaml.load_file(path, where=path.name)
        if not isinstance(doc, dict):
            raise ValueError(f"{self.name}: a mapping expected at the top level")
        self.doc: dict[str, Any] = doc

    def get(self, key: str) -> Any:
        if key not in self.doc:
            raise ValueError(f"{self.name}: {key} is missing")
        return self.doc[key]

    def fail(self, where: str, expected: str, value: Any) -> ValueError:
        return ValueError(f"{self.name}: {where}: {expected} expected, got {value!r}")

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(where, "a non-empty string", value)
        return value

    def words(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(where, "a list of strings", value)
        return [self.text(v, f"{where}[{i}]") for i, v in enumerate(value)]

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise self.fail(where, "a mapping", value)
        return value

    def regex(self, value: Any, where: str) -> str:
        """A pattern; a multi-line one has its lines stripped and joined."""
        return "".join(line.strip() for line in self.text(value, where).splitlines())

    def word_list(self, key: str) -> list[str]:
        return self.words(self.get(key), key)

    def numbers(self, key: str) -> dict[str, int]:
        table = self.mapping(self.get(key), key)
        for word, number in table.items():
            if isinstance(number, bool) or not isinstance(number, int):
                raise self.fail(f"{key}.{word}", "a whole number", number)
        return table

    def labels(self, key: str) -> dict[str, str]:
        table = self.mapping(self.get(key), key)
        return {word: self.text(label, f"{key}.{word}") for word, label in table.items()}


def _slot(file: _File, name: str, raw: Any) -> SlotSpec:
    where = f"slots.{name}"
    row = file.mapping(raw, where)
    unknown = sorted(set(row) - set(SlotSpec.__annotations__))
    if unknown or "values" not in row or "title" not in row:
        raise file.fail(
            where, "title, values and optional cues, window, shared_context, any_relation", row
        )
    values = file.mapping(row["values"], f"{where}.values")
    spec: SlotSpec = {
        "title": file.text(row["title"], f"{where}.title"),
        "values": {k: file.words(v, f"{where}.values.{k}") for k, v in values.items()},
    }
    if "cues" in row:
        spec["cues"] = file.words(row["cues"], f"{where}.cues")
    if "window" in row:
        if isinstance(row["window"], bool) or not isinstance(row["window"], int):
            raise file.fail(f"{where}.window", "a whole number", row["window"])
        spec["window"] = row["window"]
    if "shared_context" in row:
        if not isinstance(row["shared_context"], bool):
            raise file.fail(f"{where}.shared_context", "true or false", row["shared_context"])
        spec["shared_context"] = row["shared_context"]
    if "any_relation" in row:
        if not isinstance(row["any_relation"], bool):
            raise file.fail(f"{where}.any_relation", "true or false", row["any_relation"])
        spec["any_relation"] = row["any_relation"]
    return spec


def _trait(file: _File, name: str, raw: Any) -> TraitSpec:
    where = f"traits.{name}"
    row = file.mapping(raw, where)
    required = {"title", "a", "b", "b_cues", "reason"}
    if not required <= set(row) <= required | {"lasting"}:
        raise file.fail(where, "title, a, b, b_cues, reason and optional lasting", sorted(row))
    spec: TraitSpec = {
        "title": file.text(row["title"], f"{where}.title"),
        "a": _regexes(file, row["a"], f"{where}.a"),
        "b": _regexes(file, row["b"], f"{where}.b"),
        "b_cues": file.words(row["b_cues"], f"{where}.b_cues"),
        "reason": file.text(row["reason"], f"{where}.reason"),
    }
    if "lasting" in row:
        if not isinstance(row["lasting"], bool):
            raise file.fail(f"{where}.lasting", "true or false", row["lasting"])
        spec["lasting"] = row["lasting"]
    return spec


def _regexes(file: _File, value: Any, where: str) -> list[str]:
    return [file.regex(p, f"{where}[{i}]") for i, p in enumerate(file.words(value, where))]


def _patterns(file: _File, key: str) -> tuple[str, ...]:
    return tuple(_regexes(file, file.get(key), key))


_FILE = _File(DATA_FILE)

#: Exclusive slots; see :class:`SlotSpec`.
SLOTS: Final[dict[str, SlotSpec]] = {
    name: _slot(_FILE, name, raw)
    for name, raw in _FILE.mapping(_FILE.get("slots"), "slots").items()
}
_Phrases = tuple[tuple[str, ...], ...]


def _bound_words(f: _File) -> dict[str, tuple[_Phrases, _Phrases]]:
    """``bound_words`` of the data file: per side, the phrases before and after a number."""
    table = f.mapping(f.get("bound_words"), "bound_words")

    def phrases(key: str) -> _Phrases:
        words = f.words(table.get(key), f"bound_words.{key}")
        return tuple(sorted((tuple(w.split()) for w in words), key=len, reverse=True))

    return {side: (phrases(f"{side}_before"), phrases(f"{side}_after")) for side in ("min", "max")}


#: Traits that exclude each other; see :class:`TraitSpec`.
TRAITS: Final[dict[str, TraitSpec]] = {
    name: _trait(_FILE, name, raw)
    for name, raw in _FILE.mapping(_FILE.get("traits"), "traits").items()
}
#: English function words left out of similarity and context comparisons.
EN_STOPWORDS: Final[frozenset[str]] = frozenset(_FILE.word_list("en_stopwords"))
#: Verbs kept as context words next to a number ("has two kids").
LIGHT_VERBS: Final[frozenset[str]] = frozenset(_FILE.word_list("light_verbs"))
#: Korean particles and copula endings stripped from the end of a token (longest first).
KO_PARTICLES: Final[tuple[str, ...]] = tuple(
    sorted(_FILE.word_list("ko_particles"), key=len, reverse=True)
)
#: English negation words (a value right after one is negated).
NEGATION_WORDS: Final[frozenset[str]] = frozenset(_FILE.word_list("negation_words"))
#: Multi-word negations (matched before single words).
NEGATION_PHRASES: Final[tuple[str, ...]] = tuple(_FILE.word_list("negation_phrases"))
#: Words before a value that state it as a past state ("lived in", "used to").
PAST_STATE_BEFORE: Final[tuple[str, ...]] = tuple(_FILE.word_list("past_state_before"))
#: Words before a trait's food or habit that keep it away ("avoids", "checks labels for").
AVOID_BEFORE: Final[tuple[str, ...]] = tuple(_FILE.word_list("avoid_before"))
#: Pieces of Korean words after a value that state it as a past state ("살았다", "다녔었다").
PAST_STATE_KO: Final[tuple[str, ...]] = tuple(_FILE.word_list("past_state_ko"))
#: Korean negation, as a regular expression over one token (see the data file).
KO_NEGATION_PATTERN: Final[str] = _FILE.regex(
    _FILE.get("ko_negation_pattern"), "ko_negation_pattern"
)
#: Words that end a clause for negation scope (besides punctuation).
CLAUSE_BREAK_WORDS: Final[frozenset[str]] = frozenset(_FILE.word_list("clause_break_words"))
#: Transitions, with named groups ``old`` and ``new`` (see the data file).
TRANSITION_PATTERNS: Final[tuple[str, ...]] = _patterns(_FILE, "transition_patterns")
#: Scope qualifiers, with a group ``scope`` that names the context (see the data file).
SCOPE_PATTERNS: Final[tuple[str, ...]] = _patterns(_FILE, "scope_patterns")
#: Words that make a statement universal ("for all projects", "always", "only").
UNIVERSAL_WORDS: Final[frozenset[str]] = frozenset(_FILE.word_list("universal_words"))
#: Hedges that soften a statement: counterfactual, fictional or hearsay framing.
HEDGE_PHRASES: Final[tuple[str, ...]] = tuple(_FILE.word_list("hedge_phrases"))
#: Words of approximation ("about 7 years"): small numeric differences are not conflicts.
APPROX_WORDS: Final[frozenset[str]] = frozenset(_FILE.word_list("approx_words"))
#: Bounds on a number: side ("min" / "max") -> (words before it, words after it), each a
#: tuple of word tuples, longest first ("at least 25 times", "3시간 이상").
BOUND_WORDS: Final[dict[str, tuple[_Phrases, _Phrases]]] = _bound_words(_FILE)


def bound_side(before: tuple[str, ...], after: tuple[str, ...]) -> str:
    """ "min" or "max" when a number is a bound, read from the (lower-case) words right
    before it (up to three) and right after it (up to three; its unit may stand first:
    "3 hours or more", "3시간 이상"), else "". Before is read first, the longest phrase
    across both sides first ("no more than" is a "max", not the "min" of "more than")."""
    side, longest = "", 0
    for name, (pre, _) in BOUND_WORDS.items():
        for phrase in pre:
            if len(phrase) > longest and before[len(before) - len(phrase) :] == phrase:
                side, longest = name, len(phrase)
    if side:
        return side
    for name, (_, post) in BOUND_WORDS.items():
        for phrase in post:
            if after[: len(phrase)] == phrase or after[1 : 1 + len(phrase)] == phrase:
                return name
    return ""


#: Korean adverbs of quantity before a counted number ("정확히 4개"): not what it counts.
KO_QUANTITY_ADVERBS: Final[frozenset[str]] = frozenset(_FILE.word_list("ko_quantity_adverbs"))
#: Closed word classes an answer may belong to (slot values are types too).
TYPE_SETS: Final[dict[str, frozenset[str]]] = {
    name: frozenset(_FILE.words(words, f"type_sets.{name}"))
    for name, words in _FILE.mapping(_FILE.get("type_sets"), "type_sets").items()
}
#: English number words.
NUMBER_WORDS: Final[dict[str, int]] = _FILE.numbers("number_words")
#: Korean native and Sino-Korean number words (as counted: 두 명, 세 개, 아이가 셋).
KO_NUMBER_WORDS: Final[dict[str, int]] = _FILE.numbers("ko_number_words")
#: Korean counters that turn a number into a count of something (명 people, 개 things ...).
KO_COUNTERS: Final[tuple[str, ...]] = tuple(_FILE.word_list("ko_counters"))
#: English month names (and abbreviations) -> month number.
MONTHS: Final[dict[str, int]] = _FILE.numbers("months")
#: Date attributes that hold one value (two different dates for one of them conflict).
#: Words of a one-time event -> the event ("married" / "wedding" -> "wedding"), see
#: ``once_date_events`` in the data file; a date keyed by one also has "event:<name>".
ONCE_DATE_EVENTS: Final[dict[str, str]] = {
    word: name
    for name, words in _FILE.mapping(_FILE.get("once_date_events"), "once_date_events").items()
    for word in _FILE.words(words, f"once_date_events.{name}")
}
ONCE_DATE_KEYS: Final[frozenset[str]] = frozenset(_FILE.word_list("once_date_keys")) | {
    "event:" + name for name in ONCE_DATE_EVENTS.values()
}
#: Comparative words -> direction (+1 "more / later / higher", -1 "less / earlier / lower").
COMPARATIVES: Final[dict[str, int]] = _FILE.numbers("comparatives")
#: Words that make a clock time a preference boundary: word -> relation (after / before).
TIME_RELATIONS: Final[dict[str, str]] = _FILE.labels("time_relations")
#: Words of dated events that recur (two sessions on two dates do not conflict).
EVENT_WORDS: Final[frozenset[str]] = frozenset(_FILE.word_list("event_words"))
#: Markers of a question / answer memory ("Q: ... A: ...").
QA_QUESTION_MARKERS: Final[tuple[str, ...]] = tuple(_FILE.word_list("qa_question_markers"))
QA_ANSWER_MARKERS: Final[tuple[str, ...]] = tuple(_FILE.word_list("qa_answer_markers"))
#: Question words whose answer is a number or a date.
WH_NUMERIC: Final[dict[str, str]] = _FILE.labels("wh_numeric")
del _FILE
