"""structlog set-up: JSON for daemons and pipes, console on a terminal, always redacted.

The :func:`redact` processor keeps memory text and obvious personal data out of every log
event: values under keys that carry text (``fact``, ``text``, ``content`` ...) are replaced
by their length, a ``subject`` is replaced by a digest, and every remaining string (event
text and rendered exceptions included) is scrubbed of e-mail addresses, phone and card
numbers, national ids, IBANs, IP addresses and credential-looking tokens. Logs carry ids,
counts, entity types and fingerprints, never values.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import IO, Any

import structlog

from auditor.hashing import subject_digest

__all__ = ["configure_logging", "redact", "scrub"]

_TEXT_KEYS = frozenset(
    {"fact", "text", "content", "value", "values", "snippet", "raw", "record", "body", "page"}
)
#: Every pattern runs in time linear in the text: repetitions are bounded, or can only start
#: where a run of their characters starts (a lookbehind), so a long run of word characters,
#: digits, dots or ``@`` cannot make a match attempt at every position scan to the run's end.
#: Private keys and e-mail addresses are found by :func:`_mask_keys` and :func:`_mask_emails`
#: (anchored on their fixed parts) before these run.
_HAS_DIGIT = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class _Scrub:
    """One replacement of :func:`scrub`, with what every match of it needs.

    It runs only on a text at least as long as its shortest match (read from the pattern)
    that holds one of ``needs`` (literal substrings, case-sensitive like the pattern; empty:
    no condition) and, with ``digit``, a decimal digit. Each is a condition every match
    meets, so skipping changes nothing; and no placeholder holds a digit or a needle, so one
    replacement never gives a later pattern what it lacked (``tests/test_logging.py``
    compares with the patterns run unconditionally).
    """

    pattern: re.Pattern[str]
    placeholder: str
    needs: tuple[str, ...] = ()
    digit: bool = False
    shortest: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shortest", _shortest_match(self.pattern))


def _shortest_match(pattern: re.Pattern[str]) -> int:
    """The fewest characters a match of ``pattern`` holds, read from CPython's parser of
    ``re`` (private: should it change, 0, so every text is scrubbed as before)."""
    try:
        low, _high = re._parser.parse(pattern.pattern, pattern.flags).getwidth()  # type: ignore[attr-defined]
        return max(0, int(low))
    except Exception:  # noqa: BLE001 - a missing or changed private parser: no length gate
        return 0


_PATTERNS: tuple[_Scrub, ...] = (
    _Scrub(
        re.compile(r"\b[a-z][a-z0-9+.-]{0,30}://[^/\s:@]{1,256}:[^@\s/]{1,256}@"),
        "[URL_WITH_CREDENTIALS]@",
        ("://",),
    ),
    _Scrub(re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), "[AWS_KEY]", ("AKIA", "ASIA")),
    _Scrub(
        re.compile(
            r"(?<![A-Za-z0-9_-])(gh[pousr]_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}"
            r"|xox[abpr]-[A-Za-z0-9-]{10,})\b"
        ),
        "[TOKEN]",
        ("gh", "sk-", "xox"),
    ),
    _Scrub(
        re.compile(r"\b[A-Z]{2}\d{2}[ ]?(?:[A-Z0-9]{4}[ ]?){2,7}[A-Z0-9]{1,4}\b"),
        "[IBAN]",
        digit=True,
    ),
    _Scrub(re.compile(r"\b\d{6}[- ]?[1-8]\d{6}\b"), "[NATIONAL_ID]", digit=True),
    _Scrub(re.compile(r"\b\d{3}-\d{2}-\d{4}\b"), "[NATIONAL_ID]", digit=True),
    _Scrub(re.compile(r"\b(?:\d[ -]?){13,19}\b"), "[NUMBER]", digit=True),
    _Scrub(re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "[IP]", digit=True),
    _Scrub(re.compile(r"(?<![\w-])\+?\d[\d ()-]{7,30}\d\b"), "[PHONE]", digit=True),
    _Scrub(  # case-insensitive (Unicode folding): no literal is necessary
        re.compile(
            r"(?i)\b(password|passwd|pwd|secret|token|api[_-]?key)[ \t]{0,8}[:=][ \t]{0,8}\S+"
        ),
        r"\1=[REDACTED]",
    ),
    _Scrub(re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{40,}={0,2}"), "[LONG_TOKEN]"),
)


_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")
_KEY_END = re.compile(r"-----END [A-Z ]{0,40}PRIVATE KEY-----")
#: an e-mail address is found from its ``@domain`` part, then its local part is read
#: backwards (at most 64 characters), so a run without ``@`` costs one pass
_EMAIL_DOMAIN = re.compile(r"@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
_EMAIL_LOCAL_REVERSED = re.compile(r"[\w.+-]{1,64}")
#: characters of a scrubbed prefix read beyond its end, so that a value crossing the cut
#: is scrubbed whole before it is cut away
_PREFIX_MARGIN = 512


def _mask_keys(text: str) -> str:
    """Mask PEM private keys: from a BEGIN line to its END line (or the end of the text)."""
    if "PRIVATE KEY-----" not in text:
        return text
    out: list[str] = []
    cursor = 0
    for begin in _KEY_BEGIN.finditer(text):
        if begin.start() < cursor:
            continue  # inside a key already masked
        end = _KEY_END.search(text, begin.end())
        out += [text[cursor : begin.start()], "[PRIVATE_KEY]"]
        cursor = end.end() if end is not None else len(text)
        if end is None:
            break
    out.append(text[cursor:])
    return "".join(out)


def _mask_emails(text: str) -> str:
    """Mask e-mail addresses (local part of at most 64 characters, then ``@domain.tld``)."""
    if "@" not in text:
        return text
    out: list[str] = []
    cursor = 0
    for domain in _EMAIL_DOMAIN.finditer(text):
        at = domain.start()
        floor = max(cursor, at - 64)
        local = _EMAIL_LOCAL_REVERSED.match(text[floor:at][::-1])
        if local is None:
            continue
        out += [text[cursor : at - local.end()], "[EMAIL]"]
        cursor = domain.end()
    out.append(text[cursor:])
    return "".join(out)


def scrub(text: str, limit: int | None = None) -> str:
    """Replace obvious personal data and credentials in ``text`` with placeholders.

    Every step runs in time linear in the text.

    Args:
        text: any text (memory text, a note, an exception message).
        limit: when given, only the first ``limit`` characters of the result are wanted:
            only a prefix of the text (plus a margin, so that a value crossing the cut is
            still recognised whole) is scrubbed, and the result is cut to ``limit``. A
            40,000-character note costs no more than a short one.
    """
    if limit is not None:
        text = text[: limit + _PREFIX_MARGIN]
    text = _mask_emails(_mask_keys(text))
    digit: bool | None = None  # whether the text holds a digit, once asked
    for step in _PATTERNS:
        if len(text) < step.shortest:
            continue
        if step.needs and not any(needle in text for needle in step.needs):
            continue
        if step.digit:
            if digit is None:
                digit = _HAS_DIGIT.search(text) is not None
            if not digit:
                continue
        text = step.pattern.sub(step.placeholder, text)
    return text if limit is None else text[:limit]


#: the audit HMAC key that subject digests in log lines are keyed with (set by
#: :func:`configure_logging`); without one they fall back to an unkeyed digest
_DIGEST_KEY: bytes | None = None


def _clean(key: str, value: Any) -> Any:
    if key in _TEXT_KEYS:
        size = len(value) if isinstance(value, (str, bytes, list, dict)) else None
        return f"[redacted {key}{f', {size} chars' if size is not None else ''}]"
    if key == "subject" and isinstance(value, str):
        return f"subject#{subject_digest(value, _DIGEST_KEY)[:12]}"
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _clean(str(k), v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean("", v) for v in value]
    return value


def redact(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: redact text-bearing keys and scrub every string value."""
    for key in list(event_dict):
        event_dict[key] = _clean(key, event_dict[key])
    return event_dict


class _StreamLogger:
    """Writes each rendered event to a stream; standard error is looked up at each write,
    so a replaced or closed ``sys.stderr`` (tests, daemonisers) never breaks logging."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def msg(self, message: str) -> None:
        out = self._stream if self._stream is not None else sys.stderr
        with self._lock:
            try:
                out.write(message + "\n")
                out.flush()
            except (ValueError, OSError):
                pass  # a closed stream: drop the line rather than crash the caller

    log = debug = info = warn = warning = err = error = critical = exception = fatal = msg


_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def configure_logging(
    level: str = "info",
    fmt: str = "auto",
    stream: IO[str] | None = None,
    digest_key: bytes | None = None,
) -> None:
    """Configure structlog for the process.

    Args:
        level: lowest level written (debug, info, warning, error).
        fmt: ``json``, ``console`` or ``auto`` (console when the stream is a terminal).
        stream: where to write; standard error by default (standard output stays clean
            for ``--format json`` listings).
        digest_key: the audit HMAC key: subject ids in log lines become keyed digests, as
            in receipts and audit events (an unkeyed digest of an id can be reversed by
            guessing ids).
    """
    global _DIGEST_KEY
    _DIGEST_KEY = digest_key
    out: Any = stream if stream is not None else sys.stderr
    use_json = fmt == "json" or (fmt == "auto" and not (hasattr(out, "isatty") and out.isatty()))
    renderer: Any = (
        structlog.processors.JSONRenderer(ensure_ascii=False)
        if use_json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=lambda *_args: _StreamLogger(stream),
        cache_logger_on_first_use=False,
    )
