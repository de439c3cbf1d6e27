"""Generic credential assignments: a secret value under a key that names a credential.

Vendor rule sets know prefixes (``ghp_``, ``xoxb-``, ...); many credentials have none: a
service's token pasted as ``slack token = '...'``, ``xToken := "..."``, ``apiKey: ...`` in a
YAML file, ``"client_secret": "..."`` in JSON, ``--api-key ...`` on a command line, ``token=...``
inside a log line, ``login ... password ...`` in a ``.netrc``, a value pasted right after its
name with no operator (``tyntec SECRET ...``), or "the deploy token is ..." in prose. This
finder is open-vocabulary on the *value* side: it does not list services, it reads the key
name and checks the value's shape.

* The key name is split into words (separators and camelCase); it names a credential when a
  word (or the end of a glued word) is a password word, a token word, or ``key``
  (``data/secrets_keywords.yaml``), and its last word is not metadata (``token_url``,
  ``password_length``, ``secret_name``) and no word says it is public or fake.
* The value is checked by the kind of key: a password must look like one (not an ordinary
  word, not a reference such as ``$VAR`` / ``settings.password``); a token must look
  generated (length, two character classes, entropy); a bare ``key`` needs the strictest
  check. Placeholders, templates and documented dummies are refused
  (:mod:`auditor.detectors.secrets_filters`).

A match whose key names nothing secret does not hide what follows it: the search resumes at
its value (``staging box: ci_token = ...`` first reads as the key ``box``).

All patterns are linear: one bounded character class for the key, a literal operator, and a
bounded value; no nested quantifiers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from auditor.detectors.secrets_filters import placeholder_reason
from auditor.detectors.secrets_patterns import is_placeholder

__all__ = [
    "GATES",
    "KO_GATES",
    "GenericFinding",
    "KeyClass",
    "classify_key",
    "find_assignments",
    "value_ok",
]

DATA = Path(__file__).with_name("data") / "secrets_keywords.yaml"
KeyClass = Literal["password", "token", "key"]


@dataclass(frozen=True)
class GenericFinding:
    """A value under a credential-named key."""

    start: int
    end: int
    key_class: KeyClass
    pattern: str
    quoted: bool


@dataclass(frozen=True)
class _Vocab:
    password_words: frozenset[str]
    token_words: frozenset[str]
    token_suffixes: tuple[str, ...]
    password_suffixes: tuple[str, ...]
    key_words: frozenset[str]
    meta_last: frozenset[str]
    meta_any: frozenset[str]
    korean_token_words: tuple[str, ...]
    token_min_len: int
    token_min_entropy: float
    key_min_len: int
    key_min_entropy: float
    password_min_len: int


@cache
def _vocab(path: Path = DATA) -> _Vocab:
    raw: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))

    def words(name: str) -> frozenset[str]:
        return frozenset(str(x).lower() for x in raw[name])

    return _Vocab(
        password_words=words("password_words"),
        token_words=words("token_words"),
        token_suffixes=tuple(str(x) for x in raw["token_suffixes"]),
        password_suffixes=tuple(str(x) for x in raw["password_suffixes"]),
        key_words=words("key_words"),
        meta_last=words("meta_last_words"),
        meta_any=words("meta_any_words"),
        korean_token_words=tuple(
            sorted((str(x) for x in raw["korean_token_words"]), key=len, reverse=True)
        ),
        token_min_len=int(raw["token_min_len"]),
        token_min_entropy=float(raw["token_min_entropy"]),
        key_min_len=int(raw["key_min_len"]),
        key_min_entropy=float(raw["key_min_entropy"]),
        password_min_len=int(raw["password_min_len"]),
    )


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

#: A quoted or bare value (bounded; the bare form stops at spaces, quotes, brackets, ``&``).
_VALUE = (
    r"(?:\"(?P<dq>[^\"\n]{1,256})\"|'(?P<sq>[^'\n]{1,256})'|`(?P<bq>[^`\n]{1,256})`"
    r"|(?P<bare>[^\s\"'`,;&<>()\[\]{}]{1,256}))"
)
#: ``key = value``, ``key: value``, ``key := value``, ``"key": "value"``, ``key => value``.
_ASSIGN = re.compile(
    r"(?<![\w.\-$])(?P<key>[A-Za-z_][\w.\-]{0,63})[\"'\]]?\s{0,3}(?::=|=>|->|=|:)\s{0,3}" + _VALUE
)
#: ``--api-key VALUE``, ``--token=VALUE`` (command lines).
_FLAG = re.compile(r"(?<![\w\-])--(?P<key>[A-Za-z][\w\-]{0,40})(?:=|\s{1,3})" + _VALUE)
#: ``tyntec SECRET VALUE``, ``zonkaTOKEN VALUE``: a credential word and, after a space, a
#: value in a token alphabet, with no operator between (a key pasted after its name). Only
#: with a token or key word, and with the strict check (:data:`JUXTAPOSED_MIN_LEN` more).
_JUXTAPOSED = re.compile(
    r"(?<![\w.\-$])(?P<key>[A-Za-z_][\w.\-]{0,63})[ \t]{1,3}"
    r"(?P<bare>[A-Za-z0-9+/_\-.]{16,256}={0,2})(?![\w+/=\-.:@])"
)
#: The shortest value the juxtaposed form accepts (a 16-character GPG key id is public).
JUXTAPOSED_MIN_LEN = 20
#: "the deploy token is VALUE", "my API key was: VALUE" (prose).
_PROSE = re.compile(
    r"(?<![\w\-])(?P<key>tokens?|secrets?|api[ _\-]?keys?|keys?|credentials?|passwords?)"
    r"\s{1,3}(?:is|was|are|were)\s{1,3}(?:now\s{1,3}|still\s{1,3})?:?\s{0,3}" + _VALUE,
    re.IGNORECASE,
)
#: ``machine HOST login USER password VALUE`` (.netrc).
_NETRC = re.compile(
    r"\blogin\s{1,3}[^\s]{1,128}\s{1,3}password\s{1,3}(?P<bare>[^\s\"'`]{1,128})", re.IGNORECASE
)
#: Cheap gates: one of these must occur (lower-cased) before any pattern runs.
#: lower-case words one of which every key the assignment finders accept contains (also the
#: prefilter's needles for them, with "password" for ``.netrc``)
GATES = ("key", "token", "secret", "pass", "pwd", "cred", "auth", "bearer", "pat", "dsn")
#: the Korean prose finder's words
KO_GATES = ("토큰", "시크릿", "키")
_GATES = GATES
_KO_GATES = KO_GATES
_DOTTED_REF = re.compile(r"[A-Za-z_]\w{0,63}(?:\.[A-Za-z_]\w{0,63}){1,8}")
_WORDY = re.compile(r"[a-z]{1,64}(?:[_\-. ][a-z]{1,64}){0,16}")
#: ``tenant.auth0.com``, ``api.example.io``: a host name, not a credential.
_HOSTNAME = re.compile(r"[\w\-]{1,63}(?:\.[\w\-]{1,63}){0,8}\.[a-z]{2,6}")
_REF_PREFIXES = ("$", "%", "@", "os.", "env.", "process.", "settings.", "config.", "self.")


def _key_words(key: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(key)]


def classify_key(key: str) -> KeyClass | None:
    """What a key name holds: a password, a token, a (maybe) key, or nothing secret."""
    v = _vocab()
    words = _key_words(key)
    if not words or any(w in v.meta_any for w in words) or words[-1] in v.meta_last:
        return None
    found: KeyClass | None = None
    for w in words:
        if w in v.password_words or w.endswith(v.password_suffixes):
            return "password"
        if w in v.token_words or w.endswith(v.token_suffixes):
            found = "token"
        elif found is None and (w in v.key_words or (len(w) > 3 and w.endswith("key"))):
            found = "key"
    return found


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )


def _is_reference(value: str) -> bool:
    """``$VAR``, ``%VAR%``, ``settings.db.password``, ``os.environ[...]``, a path or a URL."""
    low = value.lower()
    if low.startswith(_REF_PREFIXES) or "://" in value or "(" in value:
        return True
    if value.startswith(("/", "./", "../", "~/", "\\")) or value[1:3] in (":\\", ":/"):
        return True
    return bool(_DOTTED_REF.fullmatch(value)) and not any(c.isdigit() for c in value)


def value_ok(value: str, key_class: KeyClass, *, quoted: bool) -> bool:
    """Whether ``value`` under a key of ``key_class`` looks like a real credential."""
    v = _vocab()
    if not value or _is_reference(value) or is_placeholder(value):
        return False
    if key_class == "password":
        if len(value) < v.password_min_len or placeholder_reason(value, level="stated"):
            return False
        if " " in value and not quoted:
            return False
        if not any(c.isalnum() for c in value):  # punctuation only: a separator list, a mask
            return False
        if _WORDY.fullmatch(value) and not quoted:
            return False
        has_digit = any(c.isdigit() for c in value)
        has_symbol = any(not c.isalnum() and c != " " for c in value)
        inner_upper = any(c.isupper() for c in value[1:])
        if value.isdigit():
            return 4 <= len(value) <= 12
        return quoted or has_digit or has_symbol or inner_upper
    if " " in value or placeholder_reason(value) or _is_words(value) or _HOSTNAME.fullmatch(value):
        return False
    min_len, min_entropy = (
        (v.token_min_len, v.token_min_entropy)
        if key_class == "token"
        else (v.key_min_len, v.key_min_entropy)
    )
    if len(value) < min_len or _WORDY.fullmatch(value.lower()) and _classes(value) < 2:
        return False
    if _classes(value) < 2 and not _is_hex(value, 32):
        return False
    return _entropy(value) >= min_entropy


def _is_words(value: str) -> bool:
    """``ClearTextPassword``, ``MySecretValue``: a few capitalised words and nothing else."""
    if any(c.isdigit() for c in value) or not value.isalpha():
        return False
    words = _WORDS.findall(value)
    return len(words) <= 5 and all(len(w) >= 3 for w in words)


def _is_hex(value: str, min_len: int) -> bool:
    return len(value) >= min_len and all(c in "0123456789abcdefABCDEF" for c in value)


def _value_span(m: re.Match[str]) -> tuple[int, int, bool] | None:
    for group, quoted in (("dq", True), ("sq", True), ("bq", True), ("bare", False)):
        if m.re.groupindex.get(group) and m.group(group) is not None:
            start, end = m.span(group)
            if not quoted:
                while end > start and m.string[end - 1] in ".,:!?":
                    end -= 1
            return start, end, quoted
    return None


def _korean(text: str) -> Iterator[GenericFinding]:
    """``<Korean noun for token/key> (은|는|이|가|:) VALUE``."""
    for noun in _vocab().korean_token_words:
        pos = text.find(noun)
        while pos != -1:
            before = text[pos - 1] if pos else " "
            after = pos + len(noun)
            pos = text.find(noun, after)
            if noun == "키" and "\uac00" <= before <= "\ud7a3":
                continue  # a syllable inside another word ("스키", "인증키" has its own entry)
            m = _KO_TAIL.match(text, after)
            if m is None:
                continue
            span = _value_span(m)
            if span is None:
                continue
            start, end, quoted = span
            key_class: KeyClass = "token" if noun != "키" else "key"
            if value_ok(text[start:end], key_class, quoted=quoted):
                yield GenericFinding(start, end, key_class, "generic_korean", quoted)


_KO_TAIL = re.compile(r"\s{0,2}(?:은|는|이|가)?\s{0,2}(?:[:=]|->)?\s{0,2}" + _VALUE)


def _juxtaposed_ok(value: str, key_class: KeyClass) -> bool:
    """A value right after a credential word, without an operator: only a long, generated
    one (letters and digits) under a token or key word, read with the strict key check."""
    if key_class == "password" or len(value) < JUXTAPOSED_MIN_LEN:
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    return value_ok(value, "key", quoted=False)


#: a value that opens with a key and an operator ("box: ci_token = ...", "box: key=..."):
#: it is the next assignment
_NESTED_KEY = re.compile(r"[A-Za-z_][\w.\-]{0,63}[\"'\]]?\s{0,3}(?::=|=>|->|=|:)")


def _credential_keys(regex: re.Pattern[str], text: str) -> Iterator[tuple[re.Match[str], KeyClass]]:
    """The matches of ``regex`` whose key names a credential, with the key's class.

    A match whose key names nothing secret is not skipped whole: the search resumes where
    its value starts, since that "value" may be the next key (``staging box: api_token =
    VALUE`` first matches as the key ``box`` with the value ``api_token``).
    """
    pos = 0
    while (m := regex.search(text, pos)) is not None:
        key_class = classify_key(m.group("key").replace(" ", "_"))
        if key_class is not None:
            yield m, key_class
            pos = m.end()
            continue
        span = _value_span(m)
        # resume at the value when it may hold the next assignment: it opens with a key and
        # an operator, it holds an operator (a quoted config line), or the form is the
        # juxtaposed one (its value may be the next key); else past the match (most rejected
        # keys are a record's ordinary fields: "type": "mysql")
        if (
            span is not None
            and span[0] > m.start()
            and (
                regex is _JUXTAPOSED
                or _NESTED_KEY.match(text, span[0])
                or "=" in text[span[0] : span[1]]
                or ":" in text[span[0] : span[1]]
            )
        ):
            pos = span[0]
        else:
            pos = m.end()


def find_assignments(
    text: str, lower: str | None = None, *, prose: bool = False
) -> Iterator[GenericFinding]:
    """Values under credential-named keys in ``text`` (see the module docstring).

    Args:
        text: the memory text.
        lower: ``text.lower()`` when the caller has it.
        prose: also read "the deploy token is VALUE" and "토큰은 VALUE" (off by default: on
            the train / dev splits of the public corpora it found 2 secrets nothing else
            found and raised 9 false alarms, all on malformed vendor tokens).
    """
    low = text.lower() if lower is None else lower
    patterns: tuple[tuple[str, re.Pattern[str]], ...] = (
        ("generic_assignment", _ASSIGN),
        ("generic_cli_flag", _FLAG),
        ("generic_juxtaposed", _JUXTAPOSED),
    )
    if prose:
        patterns = (*patterns, ("generic_prose", _PROSE))
    if any(g in low for g in _GATES):
        for pattern, regex in patterns:
            for m, key_class in _credential_keys(regex, text):
                span = _value_span(m)
                if span is None:
                    continue
                start, end, quoted = span
                if pattern == "generic_juxtaposed" and not _juxtaposed_ok(
                    text[start:end], key_class
                ):
                    continue
                if value_ok(text[start:end], key_class, quoted=quoted):
                    yield GenericFinding(start, end, key_class, pattern, quoted)
        if "password" in low and "login" in low:
            for m in _NETRC.finditer(text):
                start, end = m.span("bare")
                if value_ok(text[start:end], "password", quoted=False):
                    yield GenericFinding(start, end, "password", "netrc_password", False)
    if prose and any(g in text for g in _KO_GATES):
        yield from _korean(text)
