"""Injection / memory-poisoning detector: planted directives in stored memories.

A memory that carries instructions for the assistant (rather than facts about a person) is a
persistent prompt injection: every later session that retrieves it is attacked again. This
detector finds such text in four steps, all cheap and bounded:

1. **Normalise.** ASCII text is used as is (the fast path). Other text is NFKC-normalised,
   invisible characters (zero-width, bidi controls, Unicode tag characters, variation
   selectors) are stripped and *recorded*, and Cyrillic / Greek look-alike letters inside
   Latin words are mapped to Latin. An index map keeps every normalised character's position
   in the original text, so spans always point into the original fact.
2. **Hidden text.** Tag-character payloads, zero-width characters inside words, long runs of
   invisible characters, bidi overrides in text without right-to-left script and
   variation-selector payloads are signals on their own (``hidden_text``); tag and
   variation-selector payloads are decoded and scanned too.
3. **Decode.** Plausible encoded blobs are decoded and scanned again: base64 runs of at least
   ``min_base64_len`` characters, hex runs, URL-encoding, HTML entities, ROT13, leetspeak and
   letter-spaced text, each bounded in count, size and depth. A directive found only after
   decoding is an ``encoded_directive``.
4. **Match.** The pattern tables of :mod:`auditor.detectors._injection_patterns` (English,
   Korean, German and a few other languages) run behind a substring prefilter; Markdown
   images and links are parsed for URLs that carry data out (``exfiltration_link``).

Every :class:`~auditor.detectors.base.Detection` names its entity (one per entity and memory),
a score (>= 0.8: a strong signal no user preference explains; lower: a soft, imperative-style
signal that the rules report only for agent / external memories), spans in the original text,
a reason and details (pattern ids, languages, the encoding it was decoded from, the invisible
characters found). Reasons and details never quote the memory text.

Params (all optional; rules with equal params share one detector call per memory):
    decode (bool): decode encoded blobs (default true).
    max_decode_depth (int, 0..3): nested decoding depth (default 2).
    min_base64_len (int, >= 8): shortest base64 run decoded (default 16).
    max_blobs (int, 1..64): most blobs decoded per text and depth (default 8).
    max_blob_chars (int, >= 64): longest blob decoded, in characters (default 4096).
    languages (list[str]): pattern languages to use (default all: en, ko, de, xx, any).
    disabled_patterns (list[str]): pattern ids switched off by an operator.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from auditor.detectors._injection_patterns import (
    ENTITIES,
    PATTERNS,
    SQUASHED_PATTERNS,
    Pattern,
    needle_index,
)
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span

__all__ = ["InjectionDetector"]

# -- invisible characters ----------------------------------------------------------------

_ZERO_WIDTH = frozenset(
    [
        0x200B,
        0x200C,
        0x200D,
        0x2060,
        0xFEFF,
        0x180E,
        0x2061,
        0x2062,
        0x2063,
        0x2064,
        0x034F,
        0x115F,
        0x1160,
        0x3164,
        0xFFA0,
        0x17B4,
        0x17B5,
    ]
)
_SOFT_HYPHEN = 0x00AD
_BIDI_MARKS = frozenset([0x200E, 0x200F, 0x061C])
_BIDI_CONTROLS = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
_TAG_RANGE = range(0xE0000, 0xE0080)
_VS_RANGES = (range(0xFE00, 0xFE10), range(0xE0100, 0xE01F0))
_INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u2069\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_RTL_RE = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_WORDISH_RE = re.compile(r"[A-Za-z0-9\uac00-\ud7a3]")
_FLAG_BASE = 0x1F3F4  # black flag: tag sequences after it are subdivision flags

#: Cyrillic / Greek letters that look like Latin ones (mapped only next to Latin letters)
_CONFUSABLES = {
    "а": "a",
    "в": "b",
    "е": "e",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "і": "i",
    "ј": "j",
    "ѕ": "s",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "А": "A",
    "В": "B",
    "Е": "E",
    "К": "K",
    "М": "M",
    "Н": "H",
    "О": "O",
    "Р": "P",
    "С": "C",
    "Т": "T",
    "Х": "X",
    "І": "I",
    "Ј": "J",
    "Ѕ": "S",
    "α": "a",
    "ε": "e",
    "ι": "i",
    "ο": "o",
    "ρ": "p",
    "υ": "u",
    "ν": "v",
    "κ": "k",
    "τ": "t",
    "Α": "A",
    "Β": "B",
    "Ε": "E",
    "Ι": "I",
    "Κ": "K",
    "Μ": "M",
    "Ν": "N",
    "Ο": "O",
    "Ρ": "P",
    "Τ": "T",
    "Χ": "X",
    "Υ": "Y",
    "Ζ": "Z",
}
_CONFUSABLE_CLASS = "".join(sorted(_CONFUSABLES))
_CONFUSABLE_RE = re.compile(f"(?<=[A-Za-z])[{_CONFUSABLE_CLASS}]|[{_CONFUSABLE_CLASS}](?=[A-Za-z])")

# -- encoded blobs -----------------------------------------------------------------------

_BASE64_RE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{8,}={0,2}(?![A-Za-z0-9+/=_-])")
#: a decoded layer that is itself an encoded blob (base64 or hex), decoded again if depth allows
_NESTED_RE = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}|(?:[0-9A-Fa-f]{2}){12,}")
_HEX_RE = re.compile(
    r"(?:\\x[0-9A-Fa-f]{2}){8,}|(?<![0-9A-Za-z])(?:0x)?(?:[0-9A-Fa-f]{2}[ :]?){12,}"
    r"(?![0-9A-Za-z])"
)
_URLENC_RE = re.compile(r"%[0-9A-Fa-f]{2}")
_ENTITY_RE = re.compile(r"&(?:#\d{2,7}|#[xX][0-9A-Fa-f]{2,6}|[A-Za-z]{2,8});")
_LEET_WORD_RE = re.compile(
    r"\b(?=[A-Za-z0-9@$]*[A-Za-z])(?=[A-Za-z0-9@$]*[013457@$])[A-Za-z0-9@$]{3,}\b"
)
_LEET_TABLE = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
)
_SPACED_RE = re.compile(r"(?<![A-Za-z])(?:[A-Za-z][ \t]{1,2}){9,}[A-Za-z](?![A-Za-z])")
_ROT13_GATE = (
    "vtaber",
    "vafgehpg",
    "cebzcg",
    "qvfertneq",
    "sbetrg",
    "wnvyoernx",
    "flfgrz",
    "vafgehpgvba",
    "cerivbhf",
)

# -- Markdown / HTML links and images ----------------------------------------------------

_MD_IMAGE_RE = re.compile(r"!\[[^\]\n]{0,300}\]\(\s*<?([^)\s>]{1,2048})>?(?:\s+[\"'][^)]*)?\)")
_MD_LINK_RE = re.compile(r"(?<!!)\[[^\]\n]{0,300}\]\(\s*<?([^)\s>]{1,2048})>?(?:\s+[\"'][^)]*)?\)")
_MD_REF_IMAGE_RE = re.compile(r"!\[[^\]\n]{0,300}\]\[([^\]\n]{1,100})\]")
_MD_REF_DEF_RE = re.compile(r"^[ \t]{0,3}\[([^\]\n]{1,100})\]:\s*<?(\S{1,2048}?)>?(?:\s|$)", re.M)
_HTML_IMG_RE = re.compile(r"<img\b[^>]{0,500}?\bsrc\s*=\s*[\"']?([^\"'\s>]{1,2048})", re.I)
_PLACEHOLDER_RE = re.compile(
    r"\{\{?\s*[^\W\d][^}\s]{0,40}\}\}?|\$\{?[A-Za-z_]{3,}\}?|<\s*[^\W\d][\w ]{2,29}\s*>"
    r"|%3C\w{3,30}%3E"
    r"|\[(?:DATA|INFO|CONVERSATION|SECRET|USER[_ ]?\w*|EMAIL|PASSWORD|HISTORY|SUMMARY)\]|%s\b"
    r"|INSERT_\w+|\b(?:YOUR|USER)_[A-Z_]+_HERE\b",
)
_DATA_PARAMS = frozenset(
    [
        "q",
        "data",
        "d",
        "p",
        "payload",
        "secret",
        "info",
        "msg",
        "message",
        "content",
        "text",
        "conversation",
        "conv",
        "chat",
        "history",
        "summary",
        "memory",
        "user",
        "email",
        "pw",
        "password",
        "pass",
        "token",
        "key",
        "creds",
        "exfil",
        "leak",
        "log",
        "prompt",
        "context",
        "body",
        "input",
        "m",
        "t",
        "x",
        "v",
        "value",
    ]
)
_DATA_WORDS_RE = re.compile(
    r"\b(?:conversation|chat\s+history|previous\s+messages|the\s+user'?s?|user\s+data|password"
    r"|secret|api\s+key|personal\s+(?:data|information)|summary\s+of|memory|e-?mail\s+address"
    r"|credentials)\b",
    re.I,
)

_STRONG = 0.8
_ENCODED_EXCLUDE = frozenset(["task_hijack", "role_spoof"])


@dataclass(frozen=True, slots=True)
class _Norm:
    """A normalised text and how it maps back to the original."""

    text: str
    index: tuple[int, ...] | None  # normalised position -> original position; None: identity
    steps: tuple[str, ...] = ()
    invisible: Mapping[str, int] = field(default_factory=dict)

    def orig(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the normalised span ``[start, end)``."""
        if self.index is None:
            return start, end
        if not self.index:
            return 0, 0
        s = self.index[min(start, len(self.index) - 1)]
        e = self.index[min(max(end - 1, start), len(self.index) - 1)] + 1
        return s, e


@dataclass(frozen=True, slots=True)
class _Hit:
    """One raw finding before grouping by entity."""

    entity: str
    score: float
    start: int  # original text offsets
    end: int
    pattern: str
    lang: str
    what: str
    decoded_from: str | None = None
    inner_entity: str | None = None


@dataclass(frozen=True, slots=True)
class _Options:
    decode: bool
    max_depth: int
    min_b64: int
    max_blobs: int
    max_blob_chars: int


def _is_vs(cp: int) -> bool:
    return any(cp in r for r in _VS_RANGES)


def _vs_byte(cp: int) -> int:
    return cp - 0xFE00 if cp < 0xFE10 else cp - 0xE0100 + 16


def _normalise(text: str) -> _Norm:
    """NFKC, strip invisible characters (counted), map look-alike letters; keep an index map."""
    if text.isascii():
        return _Norm(text, None)
    has_invisible = _INVISIBLE_RE.search(text) is not None
    if not has_invisible and unicodedata.is_normalized("NFKC", text):
        out_text: str = text
        index: tuple[int, ...] | None = None
        steps: tuple[str, ...] = ()
    else:
        chars: list[str] = []
        idx: list[int] = []
        for i, ch in enumerate(text):
            if ch.isascii():
                chars.append(ch)
                idx.append(i)
                continue
            if _INVISIBLE_RE.match(ch):
                continue
            for n in unicodedata.normalize("NFKC", ch):
                chars.append(n)
                idx.append(i)
        out_text, index = "".join(chars), tuple(idx)
        steps = ("nfkc", "strip_invisible") if has_invisible else ("nfkc",)
    counts: dict[str, int] = {}
    if has_invisible:
        for ch in text:
            cp = ord(ch)
            kind = (
                "zero_width"
                if cp in _ZERO_WIDTH
                else "tag"
                if cp in _TAG_RANGE
                else "bidi_control"
                if cp in _BIDI_CONTROLS
                else "bidi_mark"
                if cp in _BIDI_MARKS
                else "variation_selector"
                if _is_vs(cp)
                else "soft_hyphen"
                if cp == _SOFT_HYPHEN
                else ""
            )
            if kind:
                counts[kind] = counts.get(kind, 0) + 1
    if _CONFUSABLE_RE.search(out_text):
        mapped = out_text
        for _ in range(2):  # twice: runs of look-alikes next to one Latin letter
            mapped = _CONFUSABLE_RE.sub(lambda m: _CONFUSABLES[m.group(0)], mapped)
        if mapped != out_text:
            out_text, steps = mapped, (*steps, "confusables")
    return _Norm(out_text, index, steps, counts)


def _hidden_payloads(text: str) -> tuple[list[tuple[int, int, str, str]], list[_Hit]]:
    """Hidden-text signals in the original text, and decoded hidden payloads.

    Returns:
        (payloads, hits): payloads are ``(start, end, kind, decoded_text)`` to scan again;
        hits are ``hidden_text`` signals with their spans.
    """
    payloads: list[tuple[int, int, str, str]] = []
    hits: list[_Hit] = []
    n = len(text)
    i = 0
    intra: list[tuple[int, int]] = []
    while i < n:
        cp = ord(text[i])
        if cp in _TAG_RANGE:
            j = i
            while j < n and ord(text[j]) in _TAG_RANGE:
                j += 1
            is_flag = i > 0 and ord(text[i - 1]) == _FLAG_BASE and ord(text[j - 1]) == 0xE007F
            if not is_flag:
                decoded = "".join(
                    chr(ord(c) - 0xE0000) for c in text[i:j] if 0x20 <= ord(c) - 0xE0000 < 0x7F
                )
                hits.append(
                    _Hit(
                        "hidden_text",
                        0.96 if len(decoded) >= 2 else 0.8,
                        i,
                        j,
                        "any.hidden.unicode_tags",
                        "any",
                        "carries text in invisible Unicode tag characters",
                    )
                )
                if decoded.strip():
                    payloads.append((i, j, "unicode_tags", decoded))
            i = j
            continue
        if _is_vs(cp):
            j = i
            while j < n and _is_vs(ord(text[j])):
                j += 1
            if j - i >= 4:
                raw = bytes(_vs_byte(ord(c)) for c in text[i:j])
                hits.append(
                    _Hit(
                        "hidden_text",
                        0.9,
                        max(i - 1, 0),
                        j,
                        "any.hidden.variation_selectors",
                        "any",
                        "carries data in a run of variation selectors",
                    )
                )
                decoded = raw.decode("utf-8", errors="ignore")
                if decoded.strip():
                    payloads.append((max(i - 1, 0), j, "variation_selectors", decoded))
            i = j
            continue
        if cp in _ZERO_WIDTH or cp in _BIDI_CONTROLS:
            j = i
            while j < n and (ord(text[j]) in _ZERO_WIDTH or ord(text[j]) in _BIDI_CONTROLS):
                j += 1
            before = text[i - 1] if i > 0 else ""
            after = text[j] if j < n else ""
            if j - i >= _ZW_PAYLOAD_RUN:
                # a long run is a payload in itself (zero-width binary steganography)
                hits.append(
                    _Hit(
                        "hidden_text",
                        0.9,
                        max(i - 1, 0),
                        min(j + 1, n),
                        "any.hidden.zero_width_run",
                        "any",
                        "carries a long run of invisible characters",
                    )
                )
                hidden = _zero_width_binary(text[i:j])
                if hidden:
                    payloads.append((i, j, "zero_width_binary", hidden))
            elif before and after and _WORDISH_RE.match(before) and _WORDISH_RE.match(after):
                intra.append((i, j))
            elif j - i >= 3:
                intra.append((i, j))
            i = j
            continue
        i += 1
    if intra:
        score = 0.88 if len(intra) >= 2 else 0.62
        start, end = intra[0][0], intra[-1][1]
        hits.append(
            _Hit(
                "hidden_text",
                score,
                max(start - 1, 0),
                min(end + 1, n),
                "any.hidden.zero_width_in_words",
                "any",
                "splits words with zero-width characters",
            )
        )
    if any(ord(c) in _BIDI_CONTROLS for c in text) and not _RTL_RE.search(text):
        pos = next(k for k, c in enumerate(text) if ord(c) in _BIDI_CONTROLS)
        hits.append(
            _Hit(
                "hidden_text",
                0.82,
                pos,
                min(pos + 1, n),
                "any.hidden.bidi_override",
                "any",
                "reorders text with bidi controls in left-to-right text",
            )
        )
    return payloads, hits


#: Invisible characters in one run from which the run counts as a hidden payload.
_ZW_PAYLOAD_RUN = 8


def _zero_width_binary(run: str) -> str | None:
    """Text hidden as bits in a run of two kinds of zero-width character, if readable."""
    kinds = sorted(set(run))
    if len(kinds) != 2 or len(run) < 16:
        return None
    for zero in kinds:  # either kind may stand for 0
        bits = "".join("0" if c == zero else "1" for c in run)
        raw = bytes(int(bits[k : k + 8], 2) for k in range(0, len(bits) - 7, 8))
        text = _printable_text(raw)
        if text:
            return text
    return None


def _printable_text(raw: bytes) -> str | None:
    """Decoded bytes as text if they look like readable text, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8:
        return None
    good = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    letters = sum(1 for c in text if c.isalpha())
    if good < 0.9 * len(text) or letters < 0.5 * len(text.replace(" ", "")):
        return None
    if " " not in text and not _NESTED_RE.fullmatch(text.strip()):
        return None  # neither words nor another encoded layer
    return text


def _b64(blob: str, max_chars: int) -> str | None:
    s = blob.rstrip("=")[:max_chars]
    s = s[: len(s) - len(s) % 4] if len(s) % 4 == 1 else s
    if not (any(c.isupper() for c in s) and any(c.islower() for c in s)):
        return None
    padded = s + "=" * (-len(s) % 4)
    try:
        head = base64.b64decode(
            padded[:64] + "=" * (-len(padded[:64]) % 4),
            altchars=b"-_" if ("-" in s or "_" in s) else None,
        )
        if _printable_text(head) is None and len(head) >= 8:
            return None
        raw = base64.b64decode(padded, altchars=b"-_" if ("-" in s or "_" in s) else None)
    except (binascii.Error, ValueError):
        return None
    return _printable_text(raw)


def _hex(blob: str, max_chars: int) -> str | None:
    digits = re.sub(r"\\x|0x|[ :]", "", blob)[:max_chars]
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _printable_text(bytes.fromhex(digits))
    except ValueError:
        return None


def _url_findings(norm: _Norm) -> list[_Hit]:
    """Markdown / HTML images and links whose URL carries data out."""
    text = norm.text
    if "](" not in text and "<img" not in text.lower() and "][" not in text:
        return []
    hits: list[_Hit] = []
    refs = {m.group(1).lower(): m.group(2) for m in _MD_REF_DEF_RE.finditer(text)}
    candidates: list[tuple[int, int, str, bool]] = []
    for m in _MD_IMAGE_RE.finditer(text):
        candidates.append((m.start(), m.end(), m.group(1), True))
    for m in _HTML_IMG_RE.finditer(text):
        candidates.append((m.start(), m.end(), m.group(1), True))
    for m in _MD_REF_IMAGE_RE.finditer(text):
        url = refs.get(m.group(1).lower())
        if url:
            candidates.append((m.start(), m.end(), url, True))
    for m in _MD_LINK_RE.finditer(text):
        candidates.append((m.start(), m.end(), m.group(1), False))
    data_words = _DATA_WORDS_RE.search(text) is not None
    for start, end, url, is_image in candidates:
        score, why = _url_risk(url, is_image, data_words)
        if score:
            s, e = norm.orig(start, end)
            kind = "image" if is_image else "link"
            hits.append(
                _Hit(
                    "exfiltration_link",
                    score,
                    s,
                    e,
                    f"any.exfil.markdown_{kind}",
                    "any",
                    f"renders a {kind} whose URL {why}",
                )
            )
    return hits


def _url_risk(url: str, is_image: bool, data_words: bool) -> tuple[float, str]:
    """How strongly a URL looks like it carries data out (0: not at all) and why."""
    if not url.lower().startswith(("http://", "https://", "//", "www.")):
        return 0.0, ""
    if _PLACEHOLDER_RE.search(url):
        return (0.95 if is_image else 0.86), "has a placeholder for data"
    if not is_image:
        return 0.0, ""
    try:
        parts = urllib.parse.urlsplit(url if "//" in url else "//" + url)
        params = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return 0.0, ""
    for name, value in params:
        if name.lower() not in _DATA_PARAMS or value.isdigit():
            continue
        if len(value) >= 16 or " " in value or "+" in value or data_words:
            return (0.9 if data_words else 0.82), "puts data into its query string"
    return 0.0, ""


#: quotation marks that open or close a quoted attack string
_QUOTES = frozenset("'\"`“”‘’«»「」『』")
#: words of a reporting or security-discussion context around a quoted attack string
_REPORTING_RE = re.compile(
    r"\b(?:attackers?|adversar\w{0,6}|hackers?|papers?|researchers?|study|studies|articles?"
    r"|reports?|reported|examples?|e\.g\.|such\s+as|phrases?|strings?|prompt[\s-]injections?"
    r"|jailbreaks?|payloads?|malicious|attacks?|techniques?|known\s+as|so-called|called"
    r"|classifiers?|filters?|detects?|detection|blocks?|flags?)\b"
    r"|공격자|논문|연구|예시|예를\s{0,2}들어|보고서|사례|기법|수법|탐지|차단",
    re.I,
)
_QUOTE_OPEN_WINDOW = 3
_QUOTE_CLOSE_WINDOW = 120
_REPORT_WINDOW = 200


def _is_reported_quote(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a quoted attack string in a reporting context.

    "The paper shows attackers write 'ignore previous instructions'": the match opens right
    after a quotation mark, the quotation closes soon after it, and the words around the
    quotation discuss attacks rather than address the assistant.
    """
    before = text[max(0, start - _QUOTE_OPEN_WINDOW) : start]
    if not any(c in _QUOTES for c in before) or "\n" in before:
        return False
    tail = text[end : end + _QUOTE_CLOSE_WINDOW]
    close = next((k for k, c in enumerate(tail) if c in _QUOTES or c == "\n"), -1)
    if close < 0 or tail[close] == "\n":
        return False
    q_start = start - len(before)
    q_end = end + close + 1
    context = text[max(0, q_start - _REPORT_WINDOW) : q_start] + " " + text[q_end : q_end + 100]
    return _REPORTING_RE.search(context) is not None


def _drop_reported(hits: list[_Hit], text: str) -> list[_Hit]:
    """The hits that are not quoted attack strings in a reporting context."""
    if not any(c in _QUOTES for c in text):
        return hits
    return [h for h in hits if not _is_reported_quote(text, h.start, h.end)]


#: nothing but blanks, sentence ends and JSON-escaped newlines ("\\n") before a request
_BLANK_OPENING = re.compile(r"(?:\s|[.!?]|\\n)*")
#: weak request patterns that count only when spliced after other content
_SPLICE_ONLY = frozenset({"en.task.generation_request", "de.task.generation_request"})


def _spliced_requests(hits: list[_Hit], text: str) -> list[_Hit]:
    """Drop plain requests that open the memory (see :data:`_SPLICE_ONLY`).

    A request for an assistant planted in a document or a tool result is a task hijack
    because it rides on other content ("Invoice attached. Write a script to ..."). A memory
    that *is* a request, with nothing before it, is somebody's request kept as written:
    weak evidence of an attack and a common false alarm (a prompt log, a to-do item).
    """
    return [
        h
        for h in hits
        if h.pattern not in _SPLICE_ONLY or not _BLANK_OPENING.fullmatch(text, 0, h.start)
    ]


class InjectionDetector(Detector):
    """Planted directives, jailbreaks, hidden text and exfiltration links in a memory.

    Entities: see :data:`auditor.detectors._injection_patterns.ENTITIES`. Scores >= 0.8 are
    strong signals; lower ones are soft signals meant for agent / external memories only.

    Args:
        params: see the module docstring.

    Raises:
        ValueError: a parameter is invalid (the message names it).
    """

    name: ClassVar[str] = "injection"
    scope = "memory"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        p = self.params
        known = {
            "decode",
            "max_decode_depth",
            "min_base64_len",
            "max_blobs",
            "max_blob_chars",
            "languages",
            "disabled_patterns",
        }
        unknown = sorted(set(p) - known)
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        self._opts = _Options(
            decode=_param_bool(p, "decode", True),
            max_depth=_param_int(p, "max_decode_depth", 2, 0, 3),
            min_b64=_param_int(p, "min_base64_len", 16, 8, 4096),
            max_blobs=_param_int(p, "max_blobs", 8, 1, 64),
            max_blob_chars=_param_int(p, "max_blob_chars", 4096, 64, 1_000_000),
        )
        languages = _param_strs(p, "languages")
        disabled = set(_param_strs(p, "disabled_patterns") or ())
        known_ids = {pat.id for pat in PATTERNS}
        bad = sorted(disabled - known_ids)
        if bad:
            raise ValueError(f"disabled_patterns: unknown pattern id(s) {', '.join(bad)}")
        self._patterns: tuple[Pattern, ...] = tuple(
            pat
            for pat in PATTERNS
            if pat.id not in disabled
            and (languages is None or pat.lang in languages or pat.lang == "any")
        )
        self._strong_patterns = tuple(pat for pat in self._patterns if pat.score >= _STRONG)
        # keyed by the identity of the two tuples above, which this instance keeps alive
        self._needles = {
            id(self._patterns): needle_index(self._patterns),
            id(self._strong_patterns): needle_index(self._strong_patterns),
        }

    # -- public ---------------------------------------------------------------------------

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Detections in one memory's fact (one per entity found)."""
        return self.scan(memory.fact, memory.memory_id)

    def scan(self, text: str, memory_id: str = "") -> list[Detection]:
        """Detections in a piece of text (``memory_id`` is used for the detections' ids).

        Args:
            text: the memory text (untrusted).
            memory_id: the memory's id.

        Returns:
            One detection per entity found, strongest first.
        """
        if not text or not text.strip():
            return []
        hits, norm = self._scan(text, depth=0)
        return _group(hits, norm, memory_id, self.name)

    # -- internals ------------------------------------------------------------------------

    def _scan(self, text: str, depth: int) -> tuple[list[_Hit], _Norm]:
        norm = _normalise(text)
        hits: list[_Hit] = []
        payloads: list[tuple[int, int, str, str]] = []
        if norm.invisible:
            payloads, hidden = _hidden_payloads(text)
            hits.extend(hidden)
        plain = _spliced_requests(_drop_reported(self._match(norm, self._patterns), text), text)
        hits.extend(plain)
        hits.extend(_url_findings(norm))
        if self._opts.decode and depth < self._opts.max_depth:
            seen = frozenset(h.pattern for h in plain)
            hits.extend(self._decoded(norm, depth, payloads, seen))
        else:
            for start, end, kind, decoded in payloads:
                hits.extend(self._encoded_hits(decoded, kind, start, end, depth))
        return hits, norm

    def _match(self, norm: _Norm, patterns: Sequence[Pattern]) -> list[_Hit]:
        """Pattern hits in the normalised text (spans mapped back to the original).

        Every distinct needle is looked for once per text; a pattern runs its regex only
        when one of its needles (and of its ``also`` words) is present.
        """
        text = norm.text
        low = text.lower()
        same_length = len(low) == len(text)
        index = self._needles.get(id(patterns)) or needle_index(patterns)
        present = index.lower.present(low)
        present.update(index.cased.present(text))
        hits: list[_Hit] = []
        for position in index.candidates(present):
            pat = patterns[position]
            if pat.also and present.isdisjoint(pat.also):
                continue
            if pat.fallback is None:
                found = pat.regex.finditer(text)
            elif same_length:
                found = pat.regex.finditer(low)
            else:
                found = pat.fallback.finditer(text)
            for k, m in enumerate(found):
                if k >= 4:
                    break
                if m.end() == m.start():
                    continue
                s, e = norm.orig(m.start(), m.end())
                hits.append(_Hit(pat.entity, pat.score, s, e, pat.id, pat.lang, pat.what))
        return hits

    def _decoded(
        self,
        norm: _Norm,
        depth: int,
        payloads: list[tuple[int, int, str, str]],
        seen: frozenset[str],
    ) -> list[_Hit]:
        """Hits found only after decoding encoded or hidden parts of the text."""
        o = self._opts
        hits: list[_Hit] = []
        for start, end, kind, decoded in payloads:
            hits.extend(self._encoded_hits(decoded, kind, start, end, depth))
        ntext = norm.text
        blobs = 0
        for m in _BASE64_RE.finditer(ntext):
            if blobs >= o.max_blobs:
                break
            blob = m.group(0)
            if len(blob.rstrip("=")) < o.min_b64:
                continue
            decoded_b64 = _b64(blob, o.max_blob_chars)
            if decoded_b64 is None:
                continue
            blobs += 1
            s, e = norm.orig(m.start(), m.end())
            hits.extend(self._encoded_hits(decoded_b64, "base64", s, e, depth))
        for m in _HEX_RE.finditer(ntext):
            if blobs >= o.max_blobs:
                break
            decoded_hex = _hex(m.group(0), o.max_blob_chars)
            if decoded_hex is None:
                continue
            blobs += 1
            s, e = norm.orig(m.start(), m.end())
            hits.extend(self._encoded_hits(decoded_hex, "hex", s, e, depth))
        escapes = _URLENC_RE.findall(ntext)
        if len(escapes) >= 3:
            hits.extend(
                self._whole_text_variant(
                    ntext, norm, urllib.parse.unquote(ntext), "url_encoding", _URLENC_RE, depth
                )
            )
        if "&" in ntext and len(_ENTITY_RE.findall(ntext)) >= 3:
            hits.extend(
                self._whole_text_variant(
                    ntext, norm, html.unescape(ntext), "html_entities", _ENTITY_RE, depth
                )
            )
        hits.extend(self._length_preserving_variants(ntext, norm, seen))
        return hits

    def _whole_text_variant(
        self,
        ntext: str,
        norm: _Norm,
        decoded: str,
        kind: str,
        escape_re: re.Pattern[str],
        depth: int,
    ) -> list[_Hit]:
        if decoded == ntext:
            return []
        spans = [m.span() for m in escape_re.finditer(ntext)]
        s, _ = norm.orig(spans[0][0], spans[0][1])
        _, e = norm.orig(spans[-1][0], spans[-1][1])
        return self._encoded_hits(decoded, kind, s, e, depth, baseline=ntext)

    def _length_preserving_variants(
        self, ntext: str, norm: _Norm, plain: frozenset[str]
    ) -> list[_Hit]:
        """ROT13, leetspeak and letter-spaced text: decoded in place, spans stay exact.

        Only strong patterns run on these variants, and only patterns that did not already
        match the plain text count.
        """
        hits: list[_Hit] = []
        low = ntext.lower()
        if any(g in low for g in _ROT13_GATE):
            rot = codecs.encode(ntext, "rot_13")
            for h in self._match(_Norm(rot, norm.index), self._strong_patterns):
                if h.pattern not in plain:
                    hits.append(_encoded(h, "rot13"))
        if len(_LEET_WORD_RE.findall(ntext)) >= 2:
            leet = ntext.translate(_LEET_TABLE)
            for h in self._match(_Norm(leet, norm.index), self._strong_patterns):
                if h.pattern not in plain:
                    hits.append(_encoded(h, "leetspeak"))
        for m in _SPACED_RE.finditer(ntext):
            squashed = re.sub(r"[^a-z]", "", m.group(0).lower())
            for pid, entity, score, rx in SQUASHED_PATTERNS:
                if rx.search(squashed):
                    s, e = norm.orig(m.start(), m.end())
                    inner = _Hit(entity, score, s, e, pid, "en", ENTITIES[entity])
                    hits.append(_encoded(inner, "letter_spacing"))
        return hits

    def _encoded_hits(
        self,
        decoded: str,
        kind: str,
        start: int,
        end: int,
        depth: int,
        baseline: str | None = None,
    ) -> list[_Hit]:
        """Scan decoded text; report what it contains as an encoded directive at [start, end)."""
        inner_hits, _ = self._scan(decoded, depth + 1)
        before: set[str] = set()
        if baseline is not None:
            before = {h.pattern for h in self._match(_normalise(baseline), self._patterns)}
        out: list[_Hit] = []
        for h in inner_hits:
            if h.entity in _ENCODED_EXCLUDE or h.pattern in before:
                continue
            if kind in ("unicode_tags", "variation_selectors") and h.entity == "hidden_text":
                continue
            out.append(
                _Hit(
                    "encoded_directive",
                    min(0.95, max(0.82, h.score + 0.15)),
                    start,
                    end,
                    h.pattern,
                    h.lang,
                    h.what,
                    decoded_from=kind,
                    inner_entity=h.inner_entity or h.entity,
                )
            )
        return out


def _encoded(h: _Hit, kind: str) -> _Hit:
    return _Hit(
        "encoded_directive",
        min(0.95, max(0.82, h.score + 0.15)),
        h.start,
        h.end,
        h.pattern,
        h.lang,
        h.what,
        decoded_from=kind,
        inner_entity=h.entity,
    )


def _group(hits: Iterable[_Hit], norm: _Norm, memory_id: str, detector: str) -> list[Detection]:
    """One detection per entity: the strongest pattern, corroborated by distinct others."""
    by_entity: dict[str, list[_Hit]] = {}
    for h in hits:
        by_entity.setdefault(h.entity, []).append(h)
    detections: list[Detection] = []
    for entity, group in by_entity.items():
        group.sort(key=lambda h: (-h.score, h.start))
        top = group[0]
        patterns = list(dict.fromkeys(h.pattern for h in group))
        spans = _merge_spans((h.start, h.end) for h in group)
        score = min(0.98, top.score + 0.04 * (len(spans) - 1))
        details: dict[str, Any] = {
            "patterns": patterns,
            "languages": sorted({h.lang for h in group}),
            "signals": len(patterns),
            "strength": "strong" if score >= _STRONG else "soft",
        }
        decoded_from = sorted({h.decoded_from for h in group if h.decoded_from})
        if decoded_from:
            details["decoded_from"] = decoded_from[0] if len(decoded_from) == 1 else decoded_from
            details["inner_entities"] = sorted({h.inner_entity for h in group if h.inner_entity})
        if norm.invisible:
            details["invisible_chars"] = dict(norm.invisible)
        if norm.steps:
            details["normalised"] = list(norm.steps)
        reason = _reason(entity, top, len(spans))
        detections.append(
            Detection(
                memory_ids=(memory_id,),
                detector=detector,
                entity=entity,
                score=round(score, 3),
                reason=reason,
                spans=tuple(Span(s, e, entity) for s, e in spans),
                details=details,
            )
        )
    detections.sort(key=lambda d: (-d.score, d.entity))
    return detections


def _reason(entity: str, top: _Hit, signals: int) -> str:
    label = ENTITIES.get(entity, entity.replace("_", " "))
    if top.decoded_from:
        inner = ENTITIES.get(top.inner_entity or "", "a directive")
        text = (
            f"{label}: {top.decoded_from.replace('_', ' ')} content decodes to {inner} "
            f"(it {top.what}; pattern {top.pattern})"
        )
    else:
        text = f"{label}: the text {top.what} (pattern {top.pattern})"
    if signals > 1:
        text += f"; {signals - 1} more signal{'s' if signals > 2 else ''}"
    return text


def _merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def _param_bool(p: Mapping[str, Any], name: str, default: bool) -> bool:
    value = p.get(name, default)
    if not isinstance(value, bool):
        raise ValueError(f"{name}: must be true or false")
    return value


def _param_int(p: Mapping[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    value = p.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name}: must be an integer from {lo} to {hi}")
    return value


def _param_strs(p: Mapping[str, Any], name: str) -> list[str] | None:
    value = p.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name}: must be a list of strings")
    return list(value)
