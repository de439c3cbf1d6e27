"""Context checks of the pii detector: when a match is not a person's data.

* an identifier glued into a longer token (a hash, a UUID, a URL path, ``git@host:repo``)
  is part of that token, not a phone number or an e-mail address;
* a phone number written as bare digits needs a phone word (formatting, a ``+`` country code
  or a Korean mobile prefix counts as phone formatting); a date or time is never one;
* an address or phone number right after a business word (office, headquarters,
  restaurant, venue, 본사, 매장), or inside a tool's JSON record that names a business
  ("hotel_name", "venue"), is a company's or venue's, unless the sentence or record also
  says someone lives there (or, for a phone, that it is someone's: my, her, mobile);
* a nationality word before a thing noun ("Korean food", "German shepherd", "Thai
  restaurant") or after a food verb ("serves American") is not a person's origin.

The word lists are data (``data/pii_context.yaml``). Nothing here logs or returns matched text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from auditor.detectors.pii_presidio import RecognizerResult

__all__ = [
    "business_address",
    "business_context",
    "drop_result",
    "nrp_names_a_thing",
]

_DATA: dict[str, Any] = yaml.safe_load(
    (Path(__file__).with_name("data") / "pii_context.yaml").read_text(encoding="utf-8")
)

#: Entities whose value is a run of digits or an address that a longer token can contain.
_TOKEN_ENTITIES = frozenset(
    {
        "PHONE_NUMBER",
        "CREDIT_CARD",
        "US_SSN",
        "US_ITIN",
        "US_BANK_NUMBER",
        "US_PASSPORT",
        "US_DRIVER_LICENSE",
        "DRIVER_LICENSE",
        "UK_NHS",
        "KR_RRN",
        "KR_FRN",
        "KR_BRN",
        "KR_DRIVER_LICENSE",
        "EMAIL_ADDRESS",
    }
)
#: Characters that continue a token (ASCII letters, digits, underscore and path marks).
_GLUE_BEFORE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/\\=&?%")
_GLUE_AFTER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/\\")
_DATETIME = re.compile(
    r"^\s*(?:(?:19|20)\d{2}[-./]?(?:0[1-9]|1[0-2])[-./]?(?:0[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])[-./](?:0?[1-9]|1[0-2])[-./](?:19|20)\d{2}"
    r"|(?:0?[1-9]|1[0-2])[-./](?:0?[1-9]|[12]\d|3[01])[-./](?:19|20)\d{2})"
    r"(?:[T ]?\d{1,2}(?::?\d{2}){0,2})?\s*$"
)
_ISO_AROUND = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_PHONE_WORDS = re.compile(
    r"(?i:phone|tel\b|mobile|cell|call|text\s+me|fax|whatsapp|contact|number|reach|전화|휴대폰"
    r"|핸드폰|연락|번호)"
)
_KR_MOBILE = re.compile(r"^(?:\+?82|0)1[016789]")
_PHONE_WINDOW = 40


def _token_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    lo = start
    while lo > 0 and not text[lo - 1].isspace() and start - lo < 200:
        lo -= 1
    hi = end
    while hi < len(text) and not text[hi].isspace() and hi - end < 200:
        hi += 1
    return lo, hi


def _glued(text: str, r: RecognizerResult) -> bool:
    """Whether the match sits inside a longer token (hash, UUID, URL, path, scp address)."""
    before = text[r.start - 1] if r.start > 0 else " "
    after = text[r.end] if r.end < len(text) else " "
    if r.entity_type == "EMAIL_ADDRESS":
        if after == ":" and r.end + 1 < len(text) and not text[r.end + 1].isspace():
            return True  # git@github.com:org/repo
        if after == "/" or before in "/:":
            return True
    elif before in _GLUE_BEFORE or after in _GLUE_AFTER:
        return True
    elif before == "-" and r.start > 1 and text[r.start - 2].isalnum():
        return True  # the tail of a UUID or a hyphenated code
    lo, hi = _token_bounds(text, r.start, r.end)
    token = text[lo:hi]
    if "://" in token:
        return True
    return r.entity_type != "EMAIL_ADDRESS" and token.startswith(("www.", "/"))


def _phone_without_phone_cue(text: str, r: RecognizerResult) -> bool:
    """A phone match that is a date / time, or bare digits with no phone word near it."""
    value = text[r.start : r.end]
    if _DATETIME.match(value):
        return True
    lo, hi = max(0, r.start - 6), min(len(text), r.end + 6)
    if _ISO_AROUND.search(text, lo, hi):
        return True
    if not value.isdigit() or _KR_MOBILE.match(value):
        return False  # formatted ("+1 415 ...", "(02) 555-0100", "010-...")
    explanation = r.analysis_explanation
    if explanation is not None and explanation.supportive_context_word:
        return False
    window = text[max(0, r.start - _PHONE_WINDOW) : r.start]
    return _PHONE_WORDS.search(window) is None


def drop_result(text: str, r: RecognizerResult) -> bool:
    """Whether a Presidio result is not a person's identifier (see the module docstring).

    Args:
        text: the analysed text.
        r: one result (offsets into ``text``).

    Returns:
        True when the result should be dropped.
    """
    if r.entity_type in _TOKEN_ENTITIES and _glued(text, r):
        return True
    if r.entity_type == "EMAIL_ADDRESS":
        return role_mailbox(text[r.start : r.end]) and not _claimed(text, r.start, r.end)
    if r.entity_type != "PHONE_NUMBER":
        return False
    return _phone_without_phone_cue(text, r) or business_context(
        text, r.start, r.end, personal=True
    )


# -- e-mail addresses of a role, not a person ---------------------------------------------

_ROLE_MAILBOX = re.compile(str(_DATA["role_mailboxes"]), re.IGNORECASE)


def role_mailbox(address: str) -> bool:
    """Whether an e-mail address is a role's or a machine's, not a person's: its local part
    is one of the mailbox names of RFC 2142 (info, sales, support, abuse, postmaster, ...),
    a no-reply sender or a notification robot ("donotreply@upwork.com",
    "hello@mercury.com"). A name with a role word ("jane.support@") is still a person's,
    and so is a role address its sentence claims ("my e-mail address is info@...")."""
    local = address.split("@", 1)[0]
    return _ROLE_MAILBOX.fullmatch(local) is not None


def _claimed(text: str, start: int, end: int) -> bool:
    """Whether the sentence of a value says it is someone's ("my e-mail address is ...")."""
    lo, _hi = _sentence(text, start, end)
    return any(cue.search(text, lo, start) for cue in _PERSONAL)


# -- addresses ----------------------------------------------------------------------------

_BUSINESS = (
    re.compile(str(_DATA["business_cues_en"]), re.IGNORECASE),
    re.compile(str(_DATA["business_cues_ko"])),
)
#: keys and values of a tool's record that make it a listing, not a person's (records only)
_RECORD_BUSINESS = re.compile(str(_DATA["record_business_cues_en"]), re.IGNORECASE)
_HOME = (
    re.compile(str(_DATA["home_cues_en"]), re.IGNORECASE),
    re.compile(str(_DATA["home_cues_ko"])),
)
_PERSONAL = (
    re.compile(str(_DATA["personal_cues_en"]), re.IGNORECASE),
    re.compile(str(_DATA["personal_cues_ko"])),
)
_SENTENCE_END = re.compile(r"[.!?。\n](?=\s|$)|\n")
#: How far before an address a business word is looked for.
BUSINESS_WINDOW = 80


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    lo = 0
    for m in _SENTENCE_END.finditer(text, max(0, start - 300), start):
        lo = m.end()
    nxt = _SENTENCE_END.search(text, end)
    return lo, nxt.start() if nxt else len(text)


#: A sentence end inside a line (an address block has none before its value).
_PROSE_END = re.compile(r"[.!?](?:\s|$)")
#: Blank lines an address block may have between its name line and its street line.
_BLOCK_BLANK_LINES = 2

#: How far around a value a JSON record (a tool's result) is searched for its braces.
RECORD_WINDOW = 600


def _record(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The ``{...}`` record around a value in structured text (a tool result), if any."""
    lo = text.rfind("{", max(0, start - RECORD_WINDOW), start)
    if lo < 0 or text.rfind("}", lo, start) >= 0:
        return None
    hi = text.find("}", end, end + RECORD_WINDOW)
    if hi < 0 or '":' not in text[lo:hi]:
        return None
    return lo, hi


def _block_start(text: str, start: int, lo: int) -> int:
    """Where the address block of a value starts: the previous non-blank line when the
    value's line holds no sentence end before it (an e-mail footer: "Mercury Technologies
    Inc.\n660 Mission Street  Suite 490 ..."), else the sentence start ``lo``."""
    line = text.rfind("\n", 0, start) + 1
    if line == 0 or _PROSE_END.search(text, line, start) is not None:
        return lo
    end = line - 1  # the newline that ends the previous line
    for _blank in range(_BLOCK_BLANK_LINES + 1):
        prev = text.rfind("\n", 0, end) + 1
        if text[prev:end].strip():
            return min(lo, prev)
        if prev == 0:
            break
        end = prev - 1
    return lo


def business_context(text: str, start: int, end: int, personal: bool = False) -> bool:
    """Whether the value at ``text[start:end]`` is introduced as a business's or venue's.

    In prose, a business word (office, headquarters, restaurant, venue, 본사, 매장) stands
    before the value in its sentence, or on the line before an address block that opens
    its line (an e-mail footer: "Mercury Technologies Inc.\n660 Mission Street ..."); in a
    tool's JSON record, a key or value of the record names a business ("hotel_name",
    "venue") or a listing ("furnished", "number_of_baths", "star_rating"). A home word
    anywhere in that sentence or record ("lives", "home address", "집") keeps the value a
    person's.

    Args:
        text: the analysed text.
        start: the value's start offset.
        end: the value's end offset.
        personal: also treat personal words (my, her, mobile, 휴대폰) as a person's cue
            (for phone numbers).

    Returns:
        True when the value is a business's or venue's.
    """
    record = _record(text, start, end)
    if record is not None:
        lo, hi = record
        window = text[lo:hi].replace("_", " ")
        if not any(cue.search(window) for cue in (*_BUSINESS, _RECORD_BUSINESS)):
            return False
        keep = (*_HOME, *_PERSONAL) if personal else _HOME
        return not any(cue.search(window) for cue in keep)
    lo, hi = _sentence(text, start, end)
    lo = _block_start(text, start, lo)
    window_lo = max(lo, start - BUSINESS_WINDOW)
    if not any(cue.search(text, window_lo, start) for cue in _BUSINESS):
        return False
    keep = (*_HOME, *_PERSONAL) if personal else _HOME
    return not any(cue.search(text, lo, hi) for cue in keep)


def business_address(text: str, start: int, end: int) -> bool:
    """Whether the address at ``text[start:end]`` is a business's or venue's.

    Args:
        text: the analysed text.
        start: the address's start offset.
        end: the address's end offset.

    Returns:
        True when a business word introduces it and no home word makes it someone's.
    """
    return business_context(text, start, end)


# -- nationality words naming things ------------------------------------------------------

_THING_NOUNS = frozenset(str(_DATA["nrp_thing_nouns"]).lower().split())
_THING_BEFORE = re.compile(str(_DATA["nrp_thing_before"]), re.IGNORECASE)
_NEXT_WORDS = re.compile(
    r"[ \t-]{1,2}([A-Za-z][\w'’-]{0,30})(?:[ \t]{1,2}([A-Za-z][\w'’-]{0,30}))?"
)


_STUDY = re.compile(str(_DATA["nrp_study_cues"]), re.IGNORECASE)


def nrp_in_a_study(sentence: str) -> bool:
    """Whether a sentence speaks of a study or a statistic ("한국인의 당뇨병 유병률을
    분석했다", "a survey of German voters"): a nationality there is a population."""
    return _STUDY.search(sentence) is not None


def nrp_names_a_thing(text: str, start: int, end: int) -> bool:
    """Whether the nationality word at ``text[start:end]`` names a cuisine, breed or product.

    Args:
        text: the analysed text.
        start: the word's start offset.
        end: the word's end offset.

    Returns:
        True for "Korean food", "German shepherd", "serves American", "Spanish NIE".
    """
    m = _NEXT_WORDS.match(text, end)
    if m is not None and any(w is not None and _thing_noun(w) for w in m.groups()):
        return True
    return _THING_BEFORE.search(text[max(0, start - 40) : start]) is not None


def _thing_noun(word: str) -> bool:
    """Whether ``word`` is one of the thing nouns, in the singular or a regular plural
    ("Irish Setters", "German Shepherds", "Thai curries" -> setter, shepherd, curry)."""
    w = word.lower().rstrip("'’")
    if w in _THING_NOUNS:
        return True
    if w.endswith("ies") and w[:-3] + "y" in _THING_NOUNS:
        return True
    return w.endswith("s") and (
        w[:-1] in _THING_NOUNS or (w.endswith("es") and w[:-2] in _THING_NOUNS)
    )
