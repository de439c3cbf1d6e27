"""Nationality, religious and political group mentions (Presidio's ``NRP`` entity) from word
lists. Used by :mod:`auditor.detectors.pii`."""

from __future__ import annotations

import re

from auditor.detectors import _pii_terms as terms
from auditor.detectors.pii_filters import nrp_in_a_study, nrp_names_a_thing
from auditor.detectors.pii_presidio import (
    Pattern,
    PatternRecognizer,
    RecognizerResult,
    ResultAdjuster,
)
from auditor.detectors.pii_presidio import alternation as _alternation

#: Score of a nationality / group mention in a sentence that names no person.
NRP_TOPIC_SCORE = 0.3

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")


def _nrp_patterns() -> list[Pattern]:
    ambiguous = set(terms.AMBIGUOUS_DEMONYMS)
    name_like = set(terms.NAME_LIKE_GROUPS)
    no_plural = ("ese", "ish", "ch", "ss", "sh", "wi", "ic")
    plural_ok = [
        w for w in terms.DEMONYMS if w not in ambiguous and not w.lower().endswith(no_plural)
    ]
    singular_only = [
        w for w in terms.DEMONYMS if w not in ambiguous and w.lower().endswith(no_plural)
    ]
    nouns = [w for w in terms.DEMONYM_NOUNS if w not in ambiguous]
    groups = [w for w in (*terms.RELIGIOUS_GROUPS,) if w not in name_like]
    political = list(terms.POLITICAL_GROUPS)
    start, end = r"(?<![\p{L}'’])", r"(?![\p{L}'’])"
    ko_countries = _alternation(terms.KO_NRP_COUNTRIES)
    ko_follow = (
        r"(?=[ \t\n.,!?)\]]|$|이|은|는|을|를|과|와|의|도|으로|로|들|입|에게|한테|만|분|가족|여성"
        r"|남성|남자|여자|친구|노동자|근로자|관광객|유학생|학생|아내|남편|이민자)"
    )
    return [
        Pattern(
            "nationality",
            rf"{start}(?:(?i:{_alternation(plural_ok)})(?i:s)?|(?i:{_alternation(singular_only)})"
            rf"|(?i:{_alternation(nouns)})(?i:s)?|(?:{_alternation(ambiguous)})s?){end}",
            0.5,
        ),
        Pattern(
            "religious group",
            rf"{start}(?:(?i:{_alternation(groups)})(?i:s)?|(?:{_alternation(name_like)})s?"
            rf"(?![ \t]+\p{{Lu}}\p{{Ll}})){end}",
            0.5,
        ),
        Pattern("political group", rf"{start}(?:{_alternation(political)})s?{end}", 0.5),
        Pattern(
            "KR nationality",
            rf"(?<![가-힣])(?:(?:{ko_countries})(?:인|계){ko_follow}|(?:{ko_countries})[ \t]*국적"
            rf"|국적[은는이가:]?[ \t]*(?:{ko_countries}))",
            0.5,
        ),
        Pattern(
            "KR group word",
            rf"(?<![가-힣])(?:{_alternation(terms.KO_NRP_WORDS)})",
            0.5,
        ),
    ]


_NRP_PATTERNS = _nrp_patterns()
_LANGUAGE_BEFORE = re.compile(
    rf"(?:^|\W)(?:{_alternation(terms.LANGUAGE_USE_BEFORE)})[ \t]+(?:the[ \t]+)?$", re.IGNORECASE
)
_AMBIGUOUS = frozenset(terms.AMBIGUOUS_DEMONYMS)
#: What joins the items of a list of languages ("English, Spanish and French")
_LIST_LINK = re.compile(
    r"[ \t]*(?:,[ \t]*(?:and[ \t]+|or[ \t]+)?|and[ \t]+|or[ \t]+|&[ \t]*|/[ \t]*)"
)
#: After a demonym that is also a verb ("Polish"), an object means the verb.
_VERB_OBJECT = re.compile(
    r"^[ \t]+(?:the|a|an|my|your|our|his|her|their|this|that|these|those|it|up|off|them)\b",
    re.IGNORECASE,
)
_LANGUAGE_AFTER = re.compile(
    rf"^[ \t-]*(?:{_alternation(terms.LANGUAGE_USE_AFTER)})\b", re.IGNORECASE
)
#: Lower-case words that can open an NRP match (prefilter: no word, no Presidio call).
_NRP_WORDS = frozenset(
    w.split()[0].lower().replace("’", "'")
    for w in (
        *terms.DEMONYMS,
        *terms.DEMONYM_NOUNS,
        *terms.AMBIGUOUS_DEMONYMS,
        *terms.RELIGIOUS_GROUPS,
        *terms.POLITICAL_GROUPS,
    )
)
_NRP_KO_PREFILTER = re.compile(
    rf"{_alternation((*terms.KO_NRP_COUNTRIES, *terms.KO_NRP_WORDS, '국적'))}"
)


#: NRP patterns that name people by construction (베트남인 = a Vietnamese person).
_NRP_PERSON_PATTERNS = frozenset({"KR nationality", "KR group word"})
_PERSON_CUE = re.compile(terms.NRP_PERSON_CUES, re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?\n]")


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        left = m.end()
    right = _SENTENCE_END.search(text, end)
    return left, right.start() if right else len(text)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around ``text[start:end]``."""
    left, right = _sentence_bounds(text, start, end)
    return text[left:right]


def _sentence_has_person(text: str, start: int, end: int) -> bool:
    """Whether the sentence around ``text[start:end]`` speaks about a person."""
    left, right = _sentence_bounds(text, start, end)
    return _PERSON_CUE.search(text, left, right) is not None


class NrpRecognizer(ResultAdjuster, PatternRecognizer):
    """Nationality, religious or political group mentions (Presidio's ``NRP`` entity).

    Presidio finds NRP only with an NER model; this recognizer works from word lists. A
    language name used as a language ("answer in Korean", "the English version") is not a
    group and is dropped. A mention in a sentence without a person ("the German economy",
    "an American teen drama") scores :data:`NRP_TOPIC_SCORE`, below the default threshold:
    nationality is personal data when it is someone's ("User is Cambodian", "we are proud
    Saudis", "his Sunni family"). So does a group word naming a population in a sentence
    about a study or a statistic ("한국인의 당뇨병 유병률", "a survey of German voters").
    """

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="NRP",
            name="NrpRecognizer",
            supported_language=supported_language,
            patterns=list(_NRP_PATTERNS),
            context=list(terms.NRP_CONTEXT),
            global_regex_flags=re.MULTILINE,
        )

    def adjust(
        self, text: str, results: list[RecognizerResult], others: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        """Drop language names used as languages (and the names listed after one: "speaks
        English and Spanish") and cuisines or breeds; lower topics and populations to
        :data:`NRP_TOPIC_SCORE`."""
        kept: list[RecognizerResult] = []
        language_end = -1  # where the last name read as a language ended
        for result in sorted(results, key=lambda r: r.start):
            before = text[max(0, result.start - 30) : result.start]
            after = text[result.end : result.end + 30]
            if (
                _LANGUAGE_BEFORE.search(before)
                or _LANGUAGE_AFTER.match(after)
                or (language_end >= 0 and _LIST_LINK.fullmatch(text, language_end, result.start))
            ):
                language_end = result.end  # "speaks English and Spanish": both languages
                continue
            if nrp_names_a_thing(text, result.start, result.end):
                continue  # "Korean food", "a German shepherd", "serves American"
            word = text[result.start : result.end].rstrip("s")
            if word in _AMBIGUOUS and _VERB_OBJECT.match(after):
                continue  # "Polish the README", "Turk up ..."
            pattern = (
                result.analysis_explanation.pattern_name if result.analysis_explanation else ""
            )
            person = _sentence_has_person(text, result.start, result.end)
            population = not person and nrp_in_a_study(_sentence(text, result.start, result.end))
            if population or (pattern not in _NRP_PERSON_PATTERNS and not person):
                result.score = min(result.score, NRP_TOPIC_SCORE)
                if result.analysis_explanation is not None:
                    result.analysis_explanation.set_improved_score(result.score)
                    result.analysis_explanation.append_textual_explanation_line(
                        "no person in the sentence"
                    )
            kept.append(result)
        return kept


def mentions_group(text: str) -> bool:
    """Cheap NRP prefilter: a group word (English) or a Korean group / country word."""
    for word in _WORD.findall(text):
        w = word.lower().replace("’", "'")
        if w in _NRP_WORDS or (w.endswith("s") and w[:-1] in _NRP_WORDS):
            return True
    return bool(_HANGUL.search(text) and _NRP_KO_PREFILTER.search(text))
