"""The text side of the injection detector: normalisation, hidden text, decoding.

:mod:`auditor.detectors.injection` matches its patterns on the text these helpers give it:

* :func:`_normalise` NFKC-normalises non-ASCII text, strips invisible characters (zero-width,
  bidi controls, Unicode tag characters, variation selectors) and counts them, and maps
  Cyrillic / Greek look-alike letters inside Latin words to Latin; the :class:`_Norm` it
  returns maps every normalised position back to the original text, so spans always point
  into the original fact. ASCII text is used as is.
* :func:`_hidden_payloads` finds hidden text in the original (tag-character payloads,
  zero-width characters inside words, long runs of invisible characters, bidi overrides in
  text without right-to-left script, variation-selector payloads) as ``hidden_text``
  :class:`_Hit` signals, and decodes the payloads it can read, to be scanned again.
* :func:`_b64` and :func:`_hex` decode a base64 or hex blob the detector found, and
  :func:`_printable_text` keeps a decoded layer only if it reads as text (or as another
  encoded layer).

The names keep their leading underscore: they are the detector's internals, shared with
:mod:`auditor.detectors.injection_urls` and not an interface of the package.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "_Hit",
    "_Norm",
    "_b64",
    "_hex",
    "_hidden_payloads",
    "_normalise",
]

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

#: a decoded layer that is itself an encoded blob (base64 or hex), decoded again if depth allows
_NESTED_RE = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}|(?:[0-9A-Fa-f]{2}){12,}")


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


_Payload = tuple[int, int, str, str]


def _hidden_payloads(text: str) -> tuple[list[_Payload], list[_Hit]]:
    """Hidden-text signals in the original text, and decoded hidden payloads.

    Returns:
        (payloads, hits): payloads are ``(start, end, kind, decoded_text)`` to scan again;
        hits are ``hidden_text`` signals with their spans.
    """
    payloads: list[_Payload] = []
    hits: list[_Hit] = []
    n = len(text)
    i = 0
    intra: list[tuple[int, int]] = []
    while i < n:
        cp = ord(text[i])
        if cp in _TAG_RANGE:
            i = _tag_run(text, i, payloads, hits)
        elif _is_vs(cp):
            i = _selector_run(text, i, payloads, hits)
        elif cp in _ZERO_WIDTH or cp in _BIDI_CONTROLS:
            i = _invisible_run(text, i, payloads, hits, intra)
        else:
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


def _tag_run(text: str, i: int, payloads: list[_Payload], hits: list[_Hit]) -> int:
    """A run of Unicode tag characters from ``i`` (a flag's tag sequence excepted); its end."""
    n = len(text)
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
    return j


def _selector_run(text: str, i: int, payloads: list[_Payload], hits: list[_Hit]) -> int:
    """A run of variation selectors from ``i`` (four or more carry bytes); its end."""
    n = len(text)
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
    return j


def _invisible_run(
    text: str,
    i: int,
    payloads: list[_Payload],
    hits: list[_Hit],
    intra: list[tuple[int, int]],
) -> int:
    """A run of zero-width or bidi controls from ``i``: a payload, or a split word; its end."""
    n = len(text)
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
    return j


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
