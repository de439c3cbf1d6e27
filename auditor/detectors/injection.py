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

Steps 1 and 2 and the decoding of base64 and hex blobs are in
:mod:`auditor.detectors.injection_text`, the URL check of step 4 in
:mod:`auditor.detectors.injection_urls`; this module finds the blobs, matches the patterns
and groups the hits into detections.

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

import codecs
import html
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from auditor.detectors._injection_patterns import (
    ENTITIES,
    PATTERNS,
    SQUASHED_PATTERNS,
    Pattern,
    ignorecase,
    needle_index,
)
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span
from auditor.detectors.injection_quotes import (
    QUOTES,
    is_mentioned,
    is_reported_quote,
    reported_quote_spans,
    topic_in_report,
)
from auditor.detectors.injection_text import (
    _b64,
    _hex,
    _hidden_payloads,
    _Hit,
    _Norm,
    _normalise,
)
from auditor.detectors.injection_urls import _url_findings

__all__ = ["InjectionDetector"]

# -- encoded blobs -----------------------------------------------------------------------

_BASE64_RE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{8,}={0,2}(?![A-Za-z0-9+/=_-])")
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

_STRONG = 0.8
_ENCODED_EXCLUDE = frozenset(["task_hijack", "role_spoof"])


@dataclass(frozen=True, slots=True)
class _Options:
    decode: bool
    max_depth: int
    min_b64: int
    max_blobs: int
    max_blob_chars: int


#: patterns that name a topic rather than give an order: dropped in a reporting sentence
_TOPIC_PATTERNS = frozenset({"en.persona.jailbreak_word"})


def _drop_reported(hits: list[_Hit], text: str) -> list[_Hit]:
    """The hits that are not attack strings in a reporting context: quoted, named as an
    example ("phrases like ..."), or a bare topic word in a report."""
    if not hits:
        return hits
    hits = [
        h
        for h in hits
        if not is_mentioned(text, h.start)
        and not (h.pattern in _TOPIC_PATTERNS and topic_in_report(text, h.start, h.end))
    ]
    if not hits or not any(c in QUOTES for c in text):
        return hits
    quoted = reported_quote_spans(text)
    return [
        h
        for h in hits
        if not is_reported_quote(text, h.start, h.end)
        and not any(_mostly_inside(h.start, h.end, s, e) for s, e in quoted)
    ]


def _mostly_inside(start: int, end: int, q_start: int, q_end: int) -> bool:
    """Whether at least half of ``[start, end)`` lies inside the quotation ``[q_start,
    q_end)`` (a match may take a verb before the quotation mark with it)."""
    overlap = min(end, q_end) - max(start, q_start)
    return overlap > 0 and 2 * overlap >= end - start


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


#: turn prefixes that are also ordinary keys of a configuration record ("user: ci-bot")
_RECORD_KEY_PATTERNS = frozenset({"any.spoof.turn_prefix"})
#: a line of a key-value record (YAML, INI, .env, "Key: value" headers): a key and a short
#: value or none; a value that is quoted or ends a sentence is a transcript's turn ("Name:
#: “Hey there!”"), not a field
_RECORD_LINE = re.compile(
    r"^[ \t]{0,12}(?:-[ \t]{1,3})?[\w.\-\[\]]{1,40}[ \t]{0,3}[:=]"
    r"(?:[ \t]{1,4}[^\s\"“”'‘’][^\n]{0,99}(?<![.!?\"“”’]))?[ \t]*$",
    re.M,
)
_ROLE_KEYS = re.compile(
    r"^[ \t]{0,12}(?:system|assistant|user|human|ai|chatgpt|gpt-?4?|claude|model"
    r"|시스템|사용자|어시스턴트)[ \t]{0,3}:",
    re.M | re.I,
)
#: how many lines of other keys make a text a record
_RECORD_MIN_OTHER_KEYS = 2


def _record_keys(hits: list[_Hit], text: str) -> list[_Hit]:
    """Drop turn prefixes in a key-value record: "user: ci-bot" under "registry:" in a YAML
    file is a field, not a conversation turn. A text is a record when at least
    :data:`_RECORD_MIN_OTHER_KEYS` of its lines are keys other than role names."""
    if not any(h.pattern in _RECORD_KEY_PATTERNS for h in hits):
        return hits
    other_keys = len(_RECORD_LINE.findall(text)) - len(_ROLE_KEYS.findall(text))
    if other_keys < _RECORD_MIN_OTHER_KEYS:
        return hits
    return [h for h in hits if h.pattern not in _RECORD_KEY_PATTERNS]


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
        plain = _record_keys(plain, text)
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
        when one of its needles (and of its ``also`` words) is present, and, on the
        lower-cased text, one of the literals its regex requires (``Pattern.required``).
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
            if pat.fallback_source is None:
                found = pat.regex.finditer(text)
            elif same_length:
                if pat.required is not None and present.isdisjoint(pat.required):
                    continue  # none of the literals every match of the regex holds
                found = pat.regex.finditer(low)
            else:
                found = ignorecase(pat.fallback_source).finditer(text)
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
