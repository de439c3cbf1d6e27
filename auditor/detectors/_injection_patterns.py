"""Pattern tables of the injection detector: the loader of their data files.

Each :class:`PatternSpec` names one kind of planted directive: an id
(``<lang>.<entity>.<what>``), the entity it reports, the language, a score (0..1: >= 0.8 is a
*strong* signal that no user preference explains; lower scores are *soft*, imperative-style
signals that the rules only report for agent / external memories), a prefilter and a short
description that becomes part of the reviewer's reason. The prefilter keeps the detector
fast: at least one of the lower-case ``needles`` must occur in the lower-cased text, and one
of ``also`` too when it is given, before the regular expression runs (a ``cased`` spec's
needles that hold capitals are looked up in the text as is).

The specs are data files beside this module (their headers give the format and the rules):
``data/injection_specs.yaml`` (the entities, the patterns by entity, the fragments they
share and the letter-spaced "squashed" patterns) and ``data/injection_patterns.yaml`` (the
structural patterns), read once, at import, with the bounded YAML loader. A malformed file
stops the import with a :class:`ValueError` that names the file and the entry.

Regular expressions are compiled once, at import. Most run on the lower-cased text (their
source is lower-cased, escapes kept), which is 2-3 times faster than ``re.IGNORECASE``;
``cased`` ones run case-sensitively on the text itself. Gaps between words are bounded
(``{0,n}``) so that no pattern can backtrack catastrophically on long memories. The tables
are grouped by entity:

* ``instruction_override``: "ignore previous instructions", "new instructions:", goal hijacks
* ``prompt_leak``: system-prompt extraction
* ``jailbreak_persona``: DAN, developer mode, "you are now ...", role-play overrides
* ``role_marker``: chat-template tokens and fake role headers (``<|im_start|>``, ``[INST]``)
* ``role_spoof``: a fake conversation turn ("Assistant: ... User: ...") inside content
* ``secrecy_directive``: "do not tell the user", "secretly ..."
* ``tool_or_memory_write``: "call the send_email tool", "store this in your memory", agent
  actions on money, credentials and messages
* ``standing_directive``: "always / never / from now on you ..." rules for the assistant
* ``assistant_directive``: text addressed to the assistant about its reply ("translate your
  response", "add this link to your answer", "if the user asks, say ...")
* ``exfiltration_directive``: "send the conversation / the user's data to <url or address>"
* ``exfiltration_link``: URLs that carry placeholders for data (``?q={conversation}``)
* ``hidden_text``: text that declares itself hidden from humans ("invisible to humans")
* ``task_hijack``: a request to an assistant planted in a document (weak; external only)

Korean (``ko``), German (``de``) and a few other languages (``xx``: one pattern family that
spans es / fr / ru / hr / it / pt) sit next to English (``en``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from auditor import safe_yaml
from auditor.detectors._literals import LiteralSet, necessary_literals_by_case

__all__ = [
    "ENTITIES",
    "PATTERNS",
    "SQUASHED_PATTERNS",
    "NeedleIndex",
    "Pattern",
    "PatternSpec",
    "ignorecase",
    "needle_index",
]

_DATA_DIR = Path(__file__).with_name("data")
#: the data file of the entities, the patterns by entity and the squashed patterns
SPECS_FILE = _DATA_DIR / "injection_specs.yaml"
#: the data file of the structural patterns (see its header)
DATA_FILE = _DATA_DIR / "injection_patterns.yaml"


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """One row of a pattern table (see the module docstring)."""

    id: str
    entity: str
    lang: str
    score: float
    needles: tuple[str, ...]
    regex: str
    what: str
    cased: bool = False
    also: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled :class:`PatternSpec`.

    Attributes:
        regex: for most specs, runs on the lower-cased text (its source is lower-cased with
            escapes kept), 2-3 times faster than ``re.IGNORECASE``; for ``cased`` specs, the
            case-sensitive regex that runs on the text itself.
        fallback_source: the source of :attr:`fallback`; None for ``cased`` specs.
        required: for a spec that is not ``cased``, literals one of which every match of
            :attr:`regex` contains as written (read from the regex itself, see
            :func:`auditor.detectors._literals.necessary_literals_by_case`): a lower-cased
            text with none of them is not searched. Often more selective than the
            ``needles`` ("system", "instruction" where the needle is "your"). None: unknown.
    """

    id: str
    entity: str
    lang: str
    score: float
    needles: tuple[str, ...]
    regex: re.Pattern[str]
    fallback_source: str | None
    what: str
    also: tuple[str, ...] = ()
    cased_needles: bool = False
    required: frozenset[str] | None = None

    @property
    def fallback(self) -> re.Pattern[str] | None:
        """The ``re.IGNORECASE`` regex on the text itself, for the rare text whose lower-cased
        form has another length (``İ``); None for ``cased`` specs.

        Compiled on first use: almost no text needs it, and compiling every pattern twice
        at import was a third of the injection detector's start-up.
        """
        source = self.fallback_source
        return None if source is None else ignorecase(source)


@functools.lru_cache(maxsize=1024)
def ignorecase(source: str) -> re.Pattern[str]:
    """A pattern's fallback regex, compiled once (see :attr:`Pattern.fallback`)."""
    return re.compile(source, re.IGNORECASE | re.MULTILINE)


def _lower_regex(source: str) -> str:
    """Lower-case a regular expression's literals, keeping escapes (``\\S``, ``\\W``) intact."""
    out: list[str] = []
    escaped = False
    for ch in source:
        out.append(ch if escaped else ch.lower())
        escaped = not escaped and ch == "\\"
    return "".join(out)


#: the longest run of whitespace / non-word characters that one gap between words may span
MAX_GAP = 40
#: the longest run any other repeated item may span (a word, a URL, a token)
MAX_RUN = 256
_GAP_ATOMS = ("\\s", "\\W", "[ \\t]")
#: "up to K tokens" written as ``(?:\\S+\\s*){0,K}``: a run without spaces may be cut
#: anywhere, which is exponential on long runs; it becomes a bounded character gap instead
_TOKEN_GAP = re.compile(r"\(\?:\\S\+\\s\*\)\{0,(\d)\}\??")
_TOKEN_CHARS = 20
#: one character of a gap that stays in its sentence: a dot followed by more text is part
#: of a URL, a file name or a number ("bit.ly/x", "v2.1"), not the sentence's end
_SENTENCE_CHAR = r"(?:[^.!?\n]|\.(?=\S))"
_MAX_REPEAT = 6
_OPEN_RANGE = re.compile(r"(?<!\\)\{(\d+),\}")


def unbounded_quantifiers(source: str) -> list[int]:
    """Offsets of the ``*`` and ``+`` quantifiers of a regex (escapes and classes skipped)."""
    found: list[int] = []
    i, in_class = 0, False
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if source[i + 1 : i + 2] == "^":
                i += 1
            if source[i + 1 : i + 2] == "]":
                i += 1
        elif ch in "*+" and i > 0 and source[i - 1] != "(":
            # after another quantifier, "+" makes it possessive: not a quantifier of its own
            possessive = source[i - 1] in "}*+?" and not (i > 1 and source[i - 2] == "\\")
            if not possessive:
                found.append(i)
        i += 1
    return found


def bounded(source: str) -> str:
    """``source`` with every unbounded quantifier made bounded (linear time by construction).

    ``X*`` / ``X+`` become ``X{0,n}`` / ``X{1,n}``: n is :data:`MAX_GAP` for whitespace and
    non-word gaps (``\\s``, ``\\W``, ``[ \\t]``), :data:`MAX_REPEAT` repeats for a group and
    :data:`MAX_RUN` for anything else; "up to K tokens" groups become a bounded character gap
    that stays in its sentence.
    A gap that may eat a whole text from every start position makes a pattern quadratic (or
    worse, when two runs can split one stretch of text); bounded runs keep it linear.
    """
    source = _TOKEN_GAP.sub(
        lambda m: f"{_SENTENCE_CHAR}{{0,{_TOKEN_CHARS * int(m.group(1))}}}?", source
    )
    source = _OPEN_RANGE.sub(lambda m: f"{{{m.group(1)},{MAX_RUN}}}", source)
    out: list[str] = []
    last = 0
    for pos in unbounded_quantifiers(source):
        head = source[last:pos]
        if head.endswith(_GAP_ATOMS):
            limit = MAX_GAP
        elif head.endswith(")"):
            limit = _MAX_REPEAT
        else:
            limit = MAX_RUN
        low = "0" if source[pos] == "*" else "1"
        out.append(f"{head}{{{low},{limit}}}")
        last = pos + 1
    out.append(source[last:])
    return "".join(out)


def _compile(spec: PatternSpec, path: Path | None = None) -> Pattern:
    try:
        return _compiled(spec)
    except re.error as exc:
        where = f"{path.name}: " if path is not None else ""
        raise ValueError(f"{where}pattern {spec.id}: invalid regex: {exc}") from None


def _compiled(spec: PatternSpec) -> Pattern:
    spec = replace(spec, regex=bounded(spec.regex))
    cased_needles = spec.cased and any(n != n.lower() for n in spec.needles)
    needles = spec.needles if cased_needles else tuple(n.lower() for n in spec.needles)
    required: frozenset[str] | None = None
    if spec.cased:
        regex = re.compile(spec.regex, re.MULTILINE)
        fallback = None
    else:
        regex = re.compile(_lower_regex(spec.regex), re.MULTILINE)
        fallback = spec.regex  # compiled on first use (Pattern.fallback); the tests compile all
        # the regex runs case-sensitively on the lower-cased text: its literals are there as
        # written (none in a case-insensitive part, or the answer would need folding)
        literals = necessary_literals_by_case(regex.pattern, regex.flags)
        if literals is not None and not literals[0]:
            required = literals[1]
    also = tuple(a.lower() for a in spec.also)
    return Pattern(
        spec.id,
        spec.entity,
        spec.lang,
        spec.score,
        needles,
        regex,
        fallback,
        spec.what,
        also,
        cased_needles,
        required,
    )


# -- the data files ------------------------------------------------------------------------

_FRAGMENT_REF = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
_REQUIRED = ("id", "entity", "lang", "score", "needles", "regex", "what")
_OPTIONAL = ("cased", "also")
_SQUASHED_KEYS = ("id", "entity", "score", "regex")


def _joined(source: str) -> str:
    """A multi-line regex of the data file as one line (lines are stripped, then joined)."""
    return "".join(line.strip() for line in source.splitlines())


def _read(path: Path) -> dict[str, Any]:
    """A data file's top-level mapping (bounded YAML: no aliases, tags, huge files)."""
    doc = safe_yaml.load_file(path, where=path.name)
    if not isinstance(doc, dict):
        raise ValueError(f"{path.name}: a mapping expected at the top level")
    return doc


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what}: a non-empty string expected, got {value!r}")
    return value


def _words(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what}: a non-empty list of strings expected")
    return tuple(_text(v, f"{what}[{i}]") for i, v in enumerate(value))


def _fragments(doc: dict[str, Any], path: Path) -> dict[str, str]:
    raw = doc.get("fragments") or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path.name}: fragments: a mapping expected")
    fragments = {str(k): _joined(_text(v, f"{path.name}: fragment {k}")) for k, v in raw.items()}
    for name, source in fragments.items():
        if nested := _FRAGMENT_REF.search(source):
            raise ValueError(
                f"{path.name}: fragment {name} refers to {nested.group(0)} (fragments may not nest)"
            )
    return fragments


def _expander(fragments: dict[str, str], where: str) -> Any:
    def expand(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fragments:
            raise ValueError(f"{where}: unknown fragment {{{name}}}")
        return fragments[name]

    return expand


def _row(row: Any, path: Path, index: int, keys: tuple[str, ...], optional: tuple[str, ...]) -> str:
    """The id of a pattern row, once the row's keys are checked (for error messages)."""
    if not isinstance(row, dict):
        raise ValueError(f"{path.name}: entry {index + 1}: a mapping expected")
    where = f"{path.name}: pattern {row.get('id', f'#{index + 1}')!r}"
    missing = [k for k in keys if k not in row]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(row) - set(keys) - set(optional))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
    score = row["score"]
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise ValueError(f"{where}: score must be a number in 0..1, got {score!r}")
    return where


def _spec(row: Any, path: Path, index: int, fragments: dict[str, str]) -> PatternSpec:
    where = _row(row, path, index, _REQUIRED, _OPTIONAL)
    cased = row.get("cased", False)
    if not isinstance(cased, bool):
        raise ValueError(f"{where}: cased must be true or false")
    entity = _text(row["entity"], f"{where}: entity")
    if entity not in ENTITIES:
        raise ValueError(f"{where}: unknown entity {entity}")
    regex = _joined(_text(row["regex"], f"{where}: regex"))
    return PatternSpec(
        id=_text(row["id"], f"{where}: id"),
        entity=entity,
        lang=_text(row["lang"], f"{where}: lang"),
        score=float(row["score"]),
        needles=_words(row["needles"], f"{where}: needles"),
        regex=_FRAGMENT_REF.sub(_expander(fragments, where), regex),
        what=_text(row["what"], f"{where}: what"),
        cased=cased,
        also=_words(row["also"], f"{where}: also") if "also" in row else (),
    )


def _specs(doc: dict[str, Any], path: Path) -> tuple[PatternSpec, ...]:
    fragments = _fragments(doc, path)
    rows = doc.get("patterns") or []
    if not isinstance(rows, list):
        raise ValueError(f"{path.name}: patterns: a list expected")
    return tuple(_spec(row, path, i, fragments) for i, row in enumerate(rows))


def load_specs(path: Path = DATA_FILE) -> tuple[PatternSpec, ...]:
    """The pattern specs of a data file (format: the file's header).

    Raises:
        ValueError: the file is malformed (an unknown fragment or entity, a missing field,
            a value of the wrong type); the message names the file and the pattern.
    """
    return _specs(_read(path), path)


def _entities(doc: dict[str, Any], path: Path) -> dict[str, str]:
    raw = doc.get("entities")
    if not isinstance(raw, dict) or not raw:
        raise ValueError(f"{path.name}: entities: a mapping of entity -> meaning expected")
    return {str(k): _text(v, f"{path.name}: entity {k}") for k, v in raw.items()}


def _squashed(doc: dict[str, Any], path: Path) -> tuple[tuple[str, str, float, str], ...]:
    """(id, entity, score, regex) rows of the file's ``squashed`` list."""
    rows: list[tuple[str, str, float, str]] = []
    for i, row in enumerate(doc.get("squashed") or []):
        where = _row(row, path, i, _SQUASHED_KEYS, ())
        entity = _text(row["entity"], f"{where}: entity")
        if entity not in ENTITIES:
            raise ValueError(f"{where}: unknown entity {entity}")
        regex = _joined(_text(row["regex"], f"{where}: regex"))
        rows.append((_text(row["id"], f"{where}: id"), entity, float(row["score"]), regex))
    return tuple(rows)


def _unique(patterns: tuple[Pattern, ...]) -> tuple[Pattern, ...]:
    seen: set[str] = set()
    for pattern in patterns:
        if pattern.id in seen:
            raise ValueError(f"injection pattern id {pattern.id} is used twice")
        seen.add(pattern.id)
    return patterns


_SPECS_DOC = _read(SPECS_FILE)
#: entity -> what it means (shown in reasons and in the rule documentation)
ENTITIES: dict[str, str] = _entities(_SPECS_DOC, SPECS_FILE)
_SPECS: tuple[PatternSpec, ...] = _specs(_SPECS_DOC, SPECS_FILE)
#: patterns matched against letter-spaced text once the spaces are squeezed out
#: ("S a y t h a t y o u ..."): id, entity, score, regex over lower-case letters only
_SQUASHED_SPECS: tuple[tuple[str, str, float, str], ...] = _squashed(_SPECS_DOC, SPECS_FILE)
del _SPECS_DOC

PATTERNS: tuple[Pattern, ...] = _unique(
    tuple(_compile(s, SPECS_FILE) for s in _SPECS)
    + tuple(_compile(s, DATA_FILE) for s in load_specs())
)
SQUASHED_PATTERNS: tuple[tuple[str, str, float, re.Pattern[str]], ...] = tuple(
    (pid, entity, score, re.compile(bounded(rx))) for pid, entity, score, rx in _SQUASHED_SPECS
)


@dataclass(frozen=True)
class NeedleIndex:
    """A pattern list's needles: the automata that find them, and which patterns need them.

    ``by_needle`` maps a needle to the positions of the patterns that have it among their
    ``needles``; ``unconditional`` are the patterns without needles. ``lower`` also finds
    the patterns' ``also`` words and ``required`` literals. A text's candidate
    patterns are then found from the needles present, not by testing every pattern.
    """

    lower: LiteralSet
    cased: LiteralSet
    by_needle: dict[str, tuple[int, ...]]
    unconditional: tuple[int, ...]

    def candidates(self, present: set[str]) -> list[int]:
        """Positions, in list order, of the patterns one of whose needles is present."""
        found = set(self.unconditional)
        for needle in present:
            found.update(self.by_needle.get(needle, ()))
        return sorted(found)


def needle_index(patterns: Sequence[Pattern]) -> NeedleIndex:
    """The needle index of a pattern list (lower-case and case-sensitive needles)."""
    lower: set[str] = set()
    cased: set[str] = set()
    by_needle: dict[str, list[int]] = {}
    unconditional: list[int] = []
    for i, pat in enumerate(patterns):
        (cased if pat.cased_needles else lower).update(pat.needles)
        lower.update(pat.also)
        lower.update(pat.required or ())
        if not pat.needles:
            unconditional.append(i)
        for needle in pat.needles:
            by_needle.setdefault(needle, []).append(i)
    return NeedleIndex(
        LiteralSet(lower),
        LiteralSet(cased),
        {n: tuple(ids) for n, ids in by_needle.items()},
        tuple(unconditional),
    )
