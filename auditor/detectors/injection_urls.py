"""The exfiltration-link check of the injection detector: URLs that carry data out.

A memory that makes the assistant render a Markdown or HTML image whose URL holds a
placeholder for data ("?q={conversation}") or a query parameter that carries data leaks that
data the moment the image loads (a link with a placeholder, once it is followed).
:func:`_url_findings` parses Markdown images, links and reference-style images and HTML
``<img>`` tags in the normalised text and reports the risky ones as ``exfiltration_link``
hits, with spans in the original text; :func:`_url_risk` scores one URL.
"""

from __future__ import annotations

import re
import urllib.parse

from auditor.detectors.injection_text import _Hit, _Norm

__all__ = ["_url_findings"]

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
