"""Personal data told in prose: a date of birth attached to a person, a password or PIN a
person gave ("my password is ...", "비밀번호는 ... 이야").

Two small Presidio recognizers (``DATE_OF_BIRTH``, ``PASSWORD``) with their word lists in
``data/pii_prose.yaml``. The span covers the value only (the date, the password), never the
cue words; nothing here logs or repeats the value. The secrets detector owns credentials as
secrets (keys, tokens); this one reports a person's own password or PIN as personal data.

* ``DATE_OF_BIRTH``: a date (ISO, numeric, month name, Korean 년/월/일, compact digits) just
  after a birth word ("born on", "DOB:", "date of birth", "birthday is", "생년월일:",
  "생일은"). A date with a year scores 0.85, a birthday without a year 0.6.
* ``PASSWORD``: a value after a password / PIN / door-code word and "is", ":" or "=" (Korean
  은/는/이/가/:). Values that describe a password ("is required", "is stored in Vault"),
  placeholders (``****``, ``<password>``, ``${PW}``) and single words said of nobody are
  not values. Said of a person ("my", "the user's", Korean) or holding a digit or symbol:
  0.85; otherwise 0.6.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from auditor.detectors.pii_gate import PASSWORD_GATE_WORDS
from auditor.detectors.pii_presidio import (
    AnalysisExplanation,
    EntityRecognizer,
    NlpArtifacts,
    RecognizerResult,
)

__all__ = [
    "PROSE_ENTITIES",
    "PROSE_GATES",
    "DateOfBirthRecognizer",
    "PasswordRecognizer",
]

PROSE_ENTITIES = ("DATE_OF_BIRTH", "PASSWORD")

_DATA: dict[str, Any] = yaml.safe_load(
    (Path(__file__).with_name("data") / "pii_prose.yaml").read_text(encoding="utf-8")
)
_DOB = _DATA["date_of_birth"]
_CRED = _DATA["credential"]

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR = r"(?:19|20)\d{2}"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MON_NUM = r"(?:0?[1-9]|1[0-2])"
#: Dates with a year, in the forms people write them.
_DATE_WITH_YEAR = (
    rf"{_YEAR}[-./]{_MON_NUM}[-./]{_DAY}(?!\d)"
    rf"|{_DAY}[-./]{_DAY}[-./](?:{_YEAR}|\d{{2}})(?!\d)"
    rf"|{_MONTH}\s{{1,3}}{_DAY}(?:st|nd|rd|th)?,?\s{{1,3}}{_YEAR}(?!\d)"
    rf"|{_DAY}(?:st|nd|rd|th)?\s{{1,3}}(?:of\s{{1,3}})?{_MONTH},?\s{{1,3}}{_YEAR}(?!\d)"
    rf"|(?:{_YEAR}|\d{{2}})\s?년\s?{_MON_NUM}\s?월\s?{_DAY}\s?일"
    rf"|(?:19|20)?\d{{2}}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?!\d)"
)
#: Month and day only ("birthday is May 5", "생일은 5월 14일").
_DATE_NO_YEAR = (
    rf"{_MONTH}\s{{1,3}}{_DAY}(?:st|nd|rd|th)?(?![\dA-Za-z])"
    rf"|{_DAY}(?:st|nd|rd|th)?\s{{1,3}}(?:of\s{{1,3}})?{_MONTH}(?![\w,])"
    rf"|{_MON_NUM}\s?월\s?{_DAY}\s?일"
)
_DOB_RE = re.compile(
    rf"(?:(?i:{_DOB['cues_en']})|{_DOB['cues_ko']})"
    r"(?:\s{0,2}(?:is|was|:|=|-|은|는|이|가|은요)){0,2}\s{0,3}"
    rf"(?:(?P<year>(?i:{_DATE_WITH_YEAR}))|(?P<day>(?i:{_DATE_NO_YEAR})))"
    # Korean puts the date first: "1992년 7월 19일에 태어났다", "1990년 3월 5일생"
    rf"|(?<![\d가-힣])(?P<year_ko>{_YEAR}\s?년\s?{_MON_NUM}\s?월\s?{_DAY}\s?일)"
    rf"(?=(?:에|에서)?\s?(?:{_DOB['births_ko']}))"
    rf"|(?<![\d가-힣])(?P<day_ko>{_MON_NUM}\s?월\s?{_DAY}\s?일)(?=(?:에|에서)?\s?(?:{_DOB['births_ko']}))"
    # a year alone ("1995년생", "born in 1991") is an age, not a date of birth: not reported
)

#: The match groups of :data:`_DOB_RE`: score and explanation of each.
_DOB_GROUPS = {
    "year": (0.85, "birth word + date"),
    "day": (0.6, "birth word + day and month"),
    "year_ko": (0.85, "date + Korean birth word"),
    "day_ko": (0.6, "day and month + Korean birth word"),
}

_POSSESSIVE = r"(?:(?i:my|his|her|their|our|your|the\s+user'?s|user'?s)|[A-Z][a-z]{1,20}'s)"
_CRED_EN = re.compile(
    rf"(?P<cue>(?:\b{_POSSESSIVE}\s+(?:[\w-]{{1,20}}\s+){{0,2}}?)?"
    rf"\b(?i:{_CRED['nouns_en']}))"
    r"\s{0,2}(?i:is|was|will\s+be|:|=|->)\s{0,3}[\"'“‘`]?"
    r"(?P<value>[^\s\"'”’`]{3,64})"
)
_CRED_KO = re.compile(
    rf"(?P<cue>(?:(?:제|내|저의|나의|사용자의?|그의|그녀의)\s?(?:[가-힣]{{1,6}}\s?)?)?"
    rf"(?:{_CRED['nouns_ko']}))"
    r"\s{0,2}(?:은|는|이|가|:|=)?\s{0,3}[\"'“‘`]?"
    r"(?P<value>[A-Za-z0-9!@#$%^&*()_+=.?~\-]{3,64})"
)
_NOT_VALUES = frozenset(str(_CRED["not_values"]).split())
_PLACEHOLDER = re.compile(r"^(?:[*x•.#_-]{3,}|[<{\[$%].*|.*[>}\]]|(.)\1{3,})$", re.IGNORECASE)
_TRAILING = ".,;:!?)"
_DOB_NAME = "DateOfBirthRecognizer"
_PASSWORD_NAME = "PasswordRecognizer"

#: Cheap preconditions (no match: the recognizer is not run).
PROSE_GATES: dict[str, re.Pattern[str]] = {
    "DATE_OF_BIRTH": re.compile(r"(?i:born|birth|d\.?o\.?b|생년월일|생일|출생|태어|일\s?생)"),
    "PASSWORD": re.compile("(?i:" + "|".join(PASSWORD_GATE_WORDS) + ")"),
}


def _result(
    entity: str, start: int, end: int, score: float, recognizer: str, pattern: str
) -> RecognizerResult:
    explanation = AnalysisExplanation(
        recognizer=recognizer, original_score=score, pattern_name=pattern, pattern=""
    )
    return RecognizerResult(
        entity_type=entity,
        start=start,
        end=end,
        score=score,
        analysis_explanation=explanation,
        recognition_metadata={RecognizerResult.RECOGNIZER_NAME_KEY: recognizer},
    )


class _ProseRecognizer(EntityRecognizer):
    """One entity found by memaudit's own regexes: subclasses set ``ENTITY`` and ``NAME``
    and implement :meth:`find`."""

    ENTITY: str
    NAME: str

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entities=[self.ENTITY],
            name=self.NAME,
            supported_language=supported_language,
        )

    def load(self) -> None:
        """Nothing to load (the patterns are compiled at import)."""

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        """The values of ``ENTITY`` in ``text`` when it is asked for (spans: the value only).

        ``nlp_artifacts`` is unused: these recognizers need no tokens.
        """
        return self.find(text) if self.ENTITY in entities else []

    def find(self, text: str) -> list[RecognizerResult]:
        """One result per value in ``text``."""
        raise NotImplementedError


class DateOfBirthRecognizer(_ProseRecognizer):
    """A date right after a birth word ("born on", "DOB:", "생년월일:"); see the module."""

    ENTITY = "DATE_OF_BIRTH"
    NAME = _DOB_NAME

    def find(self, text: str) -> list[RecognizerResult]:
        """Dates of birth: a date with a year scores 0.85, a day and month 0.6."""
        results: list[RecognizerResult] = []
        for m in _DOB_RE.finditer(text):
            group = next(g for g in _DOB_GROUPS if m.group(g))
            score, pattern = _DOB_GROUPS[group]
            results.append(
                _result("DATE_OF_BIRTH", m.start(group), m.end(group), score, _DOB_NAME, pattern)
            )
        return results


def _credential_value(value: str, said_of_person: bool) -> str | None:
    """The value without trailing punctuation, or None when it is no password value."""
    value = value.rstrip(_TRAILING)
    if len(value) < 3 or value.lower() in _NOT_VALUES or _PLACEHOLDER.match(value):
        return None
    if not said_of_person and value.isalpha():
        return None  # "password is hunter" said of nobody: too often a word about passwords
    return value


class PasswordRecognizer(_ProseRecognizer):
    """A person's password, PIN or door code written in prose; see the module."""

    ENTITY = "PASSWORD"
    NAME = _PASSWORD_NAME

    def find(self, text: str) -> list[RecognizerResult]:
        """Passwords, PINs and codes told in ``text``."""
        results: list[RecognizerResult] = []
        for regex, korean in ((_CRED_EN, False), (_CRED_KO, True)):
            for m in regex.finditer(text):
                cue = m.group("cue")
                said_of_person = korean or cue.split()[0].lower() not in (
                    "password", "passcode", "passphrase", "pin", "secret",
                )  # fmt: skip
                value = _credential_value(m.group("value"), said_of_person)
                if value is None:
                    continue
                strong = said_of_person or not value.isalnum() or any(c.isdigit() for c in value)
                score = 0.85 if strong and said_of_person else 0.6
                start = m.start("value")
                results.append(
                    _result(
                        "PASSWORD",
                        start,
                        start + len(value),
                        score,
                        _PASSWORD_NAME,
                        "credential word + value",
                    )
                )
        return results
