"""What a value found by memaudit's own secret patterns must look like before it is
reported: a password's shape, a generated token's randomness, not a code lookup, not a
placeholder (:func:`value_checks`), and the helpers the finders share for quoted values in
prose ("the password is 'centipede'").
"""

from __future__ import annotations

import math
import re

from detect_secrets.filters import heuristic

from auditor.detectors.secrets_filters import placeholder_reason
from auditor.detectors.secrets_patterns import ExtraPattern, is_placeholder

__all__ = [
    "NO_PLAIN_WORDS",
    "TYPE_WORDS",
    "entropy",
    "is_quoted",
    "looks_random",
    "prose_link",
    "value_checks",
]


def entropy(value: str) -> float:
    """Shannon entropy (bits per character) of ``value``."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def value_checks(
    pat: ExtraPattern, value: str, text: str, end: int, quoted: bool
) -> list[str] | None:
    """The checks an extra pattern's value passed, or None when it fails one: not a
    placeholder, and for its ``check`` a password's shape or a generated token's."""
    checks: list[str] = []
    if pat.check in ("password", "token", "placeholder"):
        if (
            is_placeholder(value)
            or heuristic.is_templated_secret(value)
            or heuristic.is_prefixed_with_dollar_sign(value)
            or not any(c.isalnum() for c in value)
        ):
            return None
        checks.append("not_placeholder")
    if pat.check == "password":
        if not (_looks_like_password(value) or quoted and _quoted_password(value)):
            return None
        if _code_reference(value, text, end):
            return None  # password = os.environ["DB_PASSWORD"]: where it is kept
        if pat.id in NO_PLAIN_WORDS and any(c.isspace() for c in value):
            return None  # password "must contain a digit": a rule, not a password
        checks.append("password_shape")
    elif pat.check == "token":
        if not looks_random(value) or placeholder_reason(value, level="token"):
            return None  # a token must look generated, whatever entity it gets
        checks.append("random_token")
    return checks


def _looks_like_password(value: str) -> bool:
    """A stated password must not be an ordinary word ("is required", "is wrong")."""
    if len(value) < 4:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    inner_upper = any(c.isupper() for c in value[1:])
    has_alpha = any(c.isalpha() for c in value)
    if not (has_digit or has_symbol or (inner_upper and has_alpha)):
        return False
    # a bare number only counts as a password when it is PIN-like (4-12 digits)
    return not (value.isdigit() and not 4 <= len(value) <= 12)


#: An identifier or a dotted path of identifiers (``os.environ``, ``settings.DB``).
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _code_reference(value: str, text: str, end: int) -> bool:
    """Whether a value is code that looks a secret up rather than the secret: an identifier
    path indexed or called (``os.environ[``, ``config.get(``, ``getenv(``)."""
    body = value[:-1] if value.endswith(("[", "(")) else value
    opened = body != value or text[end : end + 1] in ("[", "(")
    return opened and _IDENTIFIER_PATH.fullmatch(body) is not None


#: Patterns whose quoted value must still look like a password (no link word such as "is"
#: says the quotes hold the password: ``password "must contain a digit"`` is a rule).
NO_PLAIN_WORDS = frozenset({"password_quoted_after_word"})

#: Quoted words that name a type in an API's example body (``"password": "string"``).
TYPE_WORDS = frozenset(
    {"string", "str", "text", "int", "integer", "number", "bool", "boolean", "object", "array"}
)


def is_quoted(text: str, start: int, end: int) -> bool:
    """Whether the matched value is one quoted string (``"centipede"``, ``'blooberry'``)."""
    return end - start >= 2 and text[start] in "\"'`" and text[end - 1] == text[start]


def prose_link(text: str, match_start: int, value_start: int) -> bool:
    """Whether the words before a value end in prose ("is", "set to"), not ``:`` / ``=``
    (``password: "required"`` is a schema or a validation rule more often than a password)."""
    link = text[match_start:value_start].rstrip(" \t\"'`")
    return bool(link) and link[-1] not in ":=>"


def _quoted_password(value: str) -> bool:
    """A quoted value after a password word: a plain word counts ("the password is
    'centipede'"); the quotes mark it as the literal value, not the sentence going on."""
    return len(value) >= 4 and any(c.isalpha() for c in value) and value.lower() not in TYPE_WORDS


def looks_random(value: str, min_len: int = 16) -> bool:
    """A token-like value: long enough, letters and digits, and not low-entropy."""
    return (
        len(value) >= min_len
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= 3.0
    )
