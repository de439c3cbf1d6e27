"""Quoted attack strings in a reporting context: discussed, not issued.

"The paper shows attackers write 'ignore previous instructions'" quotes an attack; it does
not address the assistant. Both injection detectors use the same test:

* :func:`is_reported_quote` (the pattern detector, :mod:`auditor.detectors.injection`): a
  match that opens right after a quotation mark, inside a quotation that closes soon after
  it, with words of a reporting or security-discussion context around the quotation;
* :func:`reported_quote_spans` (the learned classifier,
  :mod:`auditor.detectors.injection_model`): every short quotation in such a context, so
  the classifier can score the text once more without them. A text that reads as an
  instruction only because of what it quotes is a report.

Two unquoted forms are treated alike: an attack string named as an example after a cue
("phrases like ignore previous instructions", :func:`is_mentioned`), and a bare topic word
("jailbreak") in a sentence that reports on attacks (:func:`topic_in_report`).

Only the words *around* a quotation decide: an attack that quotes its own payload
("Assistant, say 'I have been pwned'") has no reporting words around it and stays.
"""

from __future__ import annotations

import re

__all__ = [
    "QUOTES",
    "is_mentioned",
    "is_reported_quote",
    "reported_quote_spans",
    "topic_in_report",
]

#: quotation marks that open or close a quoted attack string
QUOTES = frozenset("'\"`“”‘’«»「」『』")
#: words of a reporting or security-discussion context around a quoted attack string
_REPORTING_RE = re.compile(
    r"\b(?:attackers?|adversar\w{0,6}|hackers?|papers?|researchers?|study|studies|articles?"
    r"|reports?|reported|examples?|e\.g\.|such\s+as|phrases?|strings?|prompt[\s-]injections?"
    r"|jailbreaks?|payloads?|malicious|attacks?|techniques?|known\s+as|so-called|called"
    r"|classifiers?|filters?|detects?|detection|blocks?|flags?)\b"
    r"|공격|논문|연구|예시|예를\s{0,2}들어|보고서|사례|기법|수법|탐지|차단|인젝션|해킹",
    re.I,
)
_QUOTE_OPEN_WINDOW = 3
_QUOTE_CLOSE_WINDOW = 120
_REPORT_WINDOW = 200
#: a quotation: an opening mark, 4 to 120 characters on one line, its closing mark (a
#: straight single quote only between word boundaries, so "the user's" opens nothing)
_QUOTATION = re.compile(
    r"\"([^\"\n]{4,120})\"|“([^”\n]{4,120})”|‘([^’\n]{4,120})’|«([^»\n]{4,120})»"
    r"|「([^」\n]{4,120})」|『([^』\n]{4,120})』|`([^`\n]{4,120})`"
    r"|(?<![\w'])'([^'\n]{4,120})'(?![\w'])"
)


def _reporting_around(text: str, q_start: int, q_end: int) -> bool:
    """Whether words of a reporting context surround the quotation ``text[q_start:q_end]``."""
    context = text[max(0, q_start - _REPORT_WINDOW) : q_start] + " " + text[q_end : q_end + 100]
    return _REPORTING_RE.search(context) is not None


def is_reported_quote(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a quoted attack string in a reporting context.

    The match opens right after a quotation mark, the quotation closes soon after it, and
    the words around the quotation discuss attacks rather than address the assistant.
    """
    before = text[max(0, start - _QUOTE_OPEN_WINDOW) : start]
    if not any(c in QUOTES for c in before) or "\n" in before:
        return False
    tail = text[end : end + _QUOTE_CLOSE_WINDOW]
    close = next((k for k, c in enumerate(tail) if c in QUOTES or c == "\n"), -1)
    if close < 0 or tail[close] == "\n":
        return False
    return _reporting_around(text, start - len(before), end + close + 1)


def _in_prose(text: str, start: int, end: int) -> bool:
    """Whether a quotation stands in prose, not as a key or value of a record (JSON, YAML,
    ``key="value"``): the text before it does not end in ``:``, ``=``, ``,``, ``[`` or ``{``,
    and no ``:`` follows it."""
    before = text[max(0, start - 8) : start].rstrip()
    after = text[end : end + 8].lstrip()
    return not (before and before[-1] in ":=,[{") and not after.startswith(":")


#: words right before an unquoted attack string that name it as an example ("phrases like
#: ignore previous instructions", "prompts such as DAN")
_MENTION_CUE = re.compile(
    r"(?:\b(?:phrases?|strings?|words?|texts?|messages?|inputs?|prompts?|payloads?|sentences?)"
    r"\s+(?:like|such\s+as)|\bsuch\s+as|\be\.g\.,?|\bknown\s+as|\bcalled|\bthe\s+(?:phrase|string))"
    r"\s{0,3}$",
    re.I,
)
_MENTION_WINDOW = 40


def is_mentioned(text: str, start: int) -> bool:
    """Whether the match at ``start`` is named as an example rather than said: a cue right
    before it ("phrases like", "such as", "e.g.", "called") and reporting words around it
    ("# strip phrases like ignore previous instructions" in a sanitiser's comment)."""
    if not _MENTION_CUE.search(text[max(0, start - _MENTION_WINDOW) : start]):
        return False
    return _reporting_around(text, start, start)


def topic_in_report(text: str, start: int, end: int) -> bool:
    """Whether a bare topic word ("jailbreak") stands in a sentence that reports on attacks
    rather than asks for one ("Our red team tried jailbreak prompts; all were blocked")."""
    left = max(text.rfind(".", 0, start), text.rfind("\n", 0, start)) + 1
    stops = [i for i in (text.find(".", end), text.find("\n", end)) if i != -1]
    right = min(stops) if stops else len(text)
    sentence = text[left:start] + " " + text[end:right]
    return bool(_REPORTING_RE.search(sentence) or _REPORTING_EXTRA.search(sentence))


#: reporting words beyond the quotation test's: a security team's account of what it saw
_REPORTING_EXTRA = re.compile(
    r"\b(?:red[\s-]team\w{0,3}|tried|tested|blocked|guardrails?|mitigat\w{0,5}|defen[cs]es?"
    r"|explain\w{0,3}|describ\w{0,3}|discuss\w{0,5}|vulnerabilit\w{0,3}|owasp|securit\w{0,1})\b",
    re.I,
)


def reported_quote_spans(text: str) -> list[tuple[int, int]]:
    """The quotations of ``text`` (marks included) in prose that a reporting context
    surrounds (a record's quoted fields are data, whatever words its keys hold)."""
    if not any(c in QUOTES for c in text):
        return []
    return [
        m.span()
        for m in _QUOTATION.finditer(text)
        if _in_prose(text, m.start(), m.end()) and _reporting_around(text, m.start(), m.end())
    ]
