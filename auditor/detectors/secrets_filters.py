"""False-alarm filters shared by every secrets finder: placeholders, dummies, empty PEM blocks.

A value that has the shape of a credential but opens nothing is not reported:

* **placeholder runs**: one character repeated (``ghp_xxxxxxxx...``, ``AAAAAAAAAAAA``), an
  ascending run of letters or digits (``abcdefghijkl``, ``123456789``), a value that repeats a
  short unit (``a1b2a1b2a1b2``), or too few distinct characters;
* **words, not a token**: a value in mixed case with a run of 10 or more lower-case letters
  (``PREfix_helloworld``), which a generated mixed-case token almost never has (checked only
  for values that must look generated; lower-case alphabets such as base36 are exempt), or
  three or more ``-``/``_``/``.``-separated parts that are lower-case words
  (``my-test-token-here``);
* **templates and elisions**: ``<YOUR_API_KEY>``, ``${TOKEN}``, ``{{ secret }}``, ``sk-...``;
* **documented dummies**: a value containing ``EXAMPLE`` (AWS's ``AKIAIOSFODNN7EXAMPLE``) or one
  of the vendors' documented example keys listed in ``data/secrets_placeholders.yaml``;
* **empty PEM blocks**: a ``BEGIN ... PRIVATE KEY`` line whose body (up to its ``END`` line) has
  no key material, or only ``...``.

The tables live in ``data/secrets_placeholders.yaml``; the checks are plain Python (no regex
runs on the memory text except the bounded PEM-body scan below).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from auditor.detectors.secrets_patterns import PLACEHOLDER_WORDS

__all__ = [
    "Level",
    "PlaceholderTables",
    "empty_pem_block",
    "placeholder_reason",
    "tables",
]

DATA = Path(__file__).with_name("data") / "secrets_placeholders.yaml"
#: How far after a ``BEGIN`` line the body of a PEM block is looked for.
_PEM_WINDOW = 6000
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = "-----END"
#: What an elided PEM body may consist of.
_PEM_FILLER = frozenset(".\u2026xX*#-_")
#: Letters, digits and the separators keys use; the "core" of a value is what remains once
#: a vendor prefix such as ``ghp_`` / ``sk-live-`` is taken off.
_PREFIX = re.compile(r"^[A-Za-z]{1,12}[_\-.]")
#: ``<YOUR_API_KEY>``, ``${TOKEN}``, ``{{ secret }}``, ``%(password)s`` inside a value.
_TEMPLATE = re.compile(
    r"<[A-Za-z][A-Za-z _\-]{1,63}>|\$\{[A-Za-z_][\w.]{0,63}\}|\{\{ ?[\w.]{1,64} ?\}\}"
    r"|%\([\w]{1,64}\)s"
)
Level = Literal["stated", "format", "token"]
_SEPARATORS = re.compile(r"[-_.]")
#: A lower-case word with a vowel (``my``, ``tokens``, ``correct``), as a separated part.
_SMALL_WORD = re.compile(r"[a-z]{0,12}[aeiouy][a-z]{0,12}")


@dataclass(frozen=True)
class PlaceholderTables:
    """The data of ``secrets_placeholders.yaml``."""

    documented_dummies: frozenset[str]
    template_markers: tuple[str, ...]
    max_char_run: int
    max_sequence_run: int
    min_len_for_variety: int
    min_distinct: int
    max_lower_run: int
    max_words: int


@cache
def tables(path: Path = DATA) -> PlaceholderTables:
    """The placeholder tables (read once)."""
    raw: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return PlaceholderTables(
        documented_dummies=frozenset(str(x) for x in raw["documented_dummies"]),
        template_markers=tuple(str(x) for x in raw["template_markers"]),
        max_char_run=int(raw["max_char_run"]),
        max_sequence_run=int(raw["max_sequence_run"]),
        min_len_for_variety=int(raw["min_len_for_variety"]),
        min_distinct=int(raw["min_distinct"]),
        max_lower_run=int(raw["max_lower_run"]),
        max_words=int(raw["max_words"]),
    )


def _longest_char_run(value: str) -> int:
    best = run = 0
    prev = ""
    for ch in value:
        run = run + 1 if ch == prev else 1
        prev = ch
        best = max(best, run)
    return best


#: the shortest rest after a leading run for that run to count as the format's prefix
_REST_AFTER_RUN = 40


def _without_leading_run(core: str, run: int) -> str:
    """``core`` without a leading run of one character when a long generated rest follows
    (a Twitter bearer token opens with 22 "A"s): the run is the format's prefix, not a
    placeholder. A short rest ("xxxxxxxxxxxx1234") keeps the run, and the value stays a
    placeholder."""
    if len(core) < run or len(set(core[:run])) != 1:
        return core
    rest = core.lstrip(core[0])
    return rest if len(rest) >= _REST_AFTER_RUN else core


def _longest_ascending_run(value: str) -> int:
    """Longest run of consecutive letters or digits in ascending order (case-insensitive)."""
    best = run = 0
    prev = -10
    for ch in value.lower():
        code = ord(ch)
        if ch.isascii() and ch.isalnum() and code == prev + 1:
            run += 1
        else:
            run = 1
        prev = code
        best = max(best, run)
    return best


def _filler_body(value: str) -> bool:
    """``sk_live_000000...``, ``ghp_xxxx...``: the longest part is one character repeated,
    or nearly ("xxxx...xxxxabcd": one run holds four fifths of it)."""
    longest = max(_SEPARATORS.split(value), key=len)
    if len(longest) < 8 or 2 * len(longest) < len(value):
        return False
    return len(set(longest)) == 1 or 5 * _longest_char_run(longest) >= 4 * len(longest)


def _longest_lower_run(value: str) -> int:
    """Longest run of lower-case ASCII letters (a generated token rarely has a long one)."""
    best = run = 0
    for ch in value:
        run = run + 1 if "a" <= ch <= "z" else 0
        best = max(best, run)
    return best


def _repeats_short_unit(value: str, max_unit: int = 8) -> bool:
    """Whether ``value`` is a short unit written three or more times (``a1b2a1b2a1b2``)."""
    n = len(value)
    for unit in range(1, max_unit + 1):
        if n < unit * 3:
            break
        head = value[:unit]
        if (head * (n // unit + 1))[:n] == value:
            return True
    return False


def _stated_reason(v: str, t: PlaceholderTables) -> str | None:
    """The checks of every level: empty, documented dummies, placeholder words, templates."""
    if not v:
        return "empty"
    if v in t.documented_dummies or any(d in v for d in t.documented_dummies):
        return "documented_dummy"
    if "example" in v.lower():
        return "documented_example"
    if v.lower() in PLACEHOLDER_WORDS:  # "mongodb://user:password@host": the word, not a value
        return "placeholder_word"
    if any(m in v for m in t.template_markers) or _TEMPLATE.search(v):
        return "template"
    if len(v) >= 6 and len(set(v)) <= 2:
        return "placeholder_run"
    return None


def placeholder_reason(value: str, *, level: Level = "token") -> str | None:
    """Why ``value`` is a placeholder or a documented dummy, or None when it may be real.

    Args:
        value: the candidate secret (without surrounding quotes).
        level: ``stated`` (a password a person wrote: documented dummies, templates and
            elisions only), ``format`` (a match of a vendor format: also a body that is one
            repeated character, ``ghp_xxxx...``), ``token`` (a value that must look generated:
            also character runs, ascending sequences, repeated units and low variety).
    """
    t = tables()
    v = value.strip().strip("\"'`")
    reason = _stated_reason(v, t)
    if reason is not None or level == "stated":
        return reason
    core = _PREFIX.sub("", v, count=1) or v
    if (len(core) >= 4 and len(set(core)) == 1) or _filler_body(v):
        return "placeholder_run"
    if level == "format":
        return None
    core = _without_leading_run(core, t.max_char_run)
    if _longest_char_run(core) >= t.max_char_run:
        return "placeholder_run"
    if _longest_ascending_run(core) >= t.max_sequence_run:
        return "sequence_run"
    if _repeats_short_unit(core):
        return "repeated_unit"
    if len(core) >= t.min_len_for_variety and len(set(core)) < t.min_distinct:
        return "low_variety"
    if any(c.isupper() for c in core) and _longest_lower_run(core) >= t.max_lower_run:
        return "words"
    if sum(1 for part in _SEPARATORS.split(v) if _SMALL_WORD.fullmatch(part)) >= t.max_words:
        return "words"
    if _encoded_words(core):
        return "encoded_text"
    return None


#: Base64 (standard or URL-safe alphabet) that may decode to text.
_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
#: Words and spaces only: what an encoded sentence decodes to ("super secret value").
_PLAIN_WORDS = re.compile(r"[A-Za-z]{2,}(?: [A-Za-z]{1,}){2,}")


def _encoded_words(value: str) -> bool:
    """Whether ``value`` is base64 of a plain sentence (``c3VwZXIgc2VjcmV0IHZhbHVl`` is
    "super secret value"): a test string, not a key, which decodes to random bytes. Encoded
    JSON (a JWT's parts, some vendor tokens) has braces and quotes and is not matched."""
    if _BASE64.fullmatch(value) is None:
        return False
    body = value.replace("-", "+").replace("_", "/")
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = decoded.decode("ascii")
    except UnicodeDecodeError:
        return False
    return _PLAIN_WORDS.fullmatch(text.strip()) is not None


def empty_pem_block(text: str, start: int) -> bool:
    """Whether the PEM private-key block whose span starts at ``start`` has no key material.

    The body is what lies between the ``BEGIN`` line and the ``END`` line (or the end of a
    bounded window when the block is cut off). It is empty when, once whitespace is taken
    out, nothing is left but elision and filler characters (``...``, ``…``, ``x``, ``*``,
    ``#``, ``-``) or a ``<placeholder>``. A span that is not a PEM ``BEGIN`` line (an OpenSSH
    / PuTTY file, a Betterleaks match of another shape) is never called empty.
    """
    origin = max(0, start - 16)  # a span may start at "BEGIN", after the dashes
    window = text[origin : start + _PEM_WINDOW]
    m = _PEM_BEGIN.search(window, 0, 216)
    if m is None:
        return False
    body_end = window.find(_PEM_END, m.end())
    body = window[m.end() : body_end if body_end != -1 else len(window)]
    # a PEM inside a JSON or YAML string has escaped line ends ("...-----\\n...\\n-----END")
    core = "".join(body.replace("\\n", "\n").replace("\\r", "\r").split())
    if _TEMPLATE.fullmatch(core):
        return True
    return all(ch in _PEM_FILLER for ch in core)
