"""Personal identifiers in memory text: Presidio's recognizers, offline, plus what memories need.

The work is done by `Presidio <https://microsoft.github.io/presidio/>`_'s analyzer, built once
per process (thread-safe module cache) with:

* a **blank spaCy pipeline** handed to Presidio's :class:`SpacyNlpEngine` in memory (no model
  download, no network; a one-line component copies each token's lower case into its lemma so
  Presidio's context words work), for English and Korean (spaCy's rule-based tokenizer, since
  its Korean default needs MeCab);
* Presidio's generic and country recognizers (e-mail, phone, card, IBAN, IP, crypto, US SSN /
  ITIN / passport / driver licence / bank number, UK NINO / NHS) and its **Korean** ones (RRN,
  FRN, BRN, driver licence, passport), which Presidio leaves out by default. Every recognizer
  runs for both languages: English memories mention Korean IDs ("His RRN is ...") and Korean
  memories hold e-mail addresses and cards. Context words are bilingual;
* Presidio-style recognizers of its own (subclasses of :class:`PatternRecognizer`, patterns as
  data in :mod:`auditor.detectors._pii_terms`): street addresses (US, European and Korean
  forms, units, PO / military boxes; weak shapes such as "Name 12" count only near an address
  word or next to a stronger address part), nationality / religious / political group mentions
  (``NRP``, not when a language is meant: "answer in Korean"), Korean and grouped
  international phone numbers, and card numbers Presidio's card pattern misses (Luhn plus
  issuer ranges);
* e-mail validation through a private :mod:`tldextract` extractor with no cache directory and
  no suffix-list URLs: it uses the snapshot bundled with tldextract and never touches the disk
  or the network;
* RRN / FRN numbers that fail their checksum *and* sit next to a word naming the other type
  (an FRN-shaped number called 주민등록번호) are dropped as mistyped or made-up values.

Presidio's log records are redacted (their arguments can carry matched text) and its decision
process is never logged. Person and place names need an NER model: pass ``ner_model`` (an
installed spaCy package such as ``en_core_web_sm``; it is never downloaded) to add ``PERSON``
and ``LOCATION`` for English text. It is off by default.

Entities keep Presidio's names: ``EMAIL_ADDRESS``, ``PHONE_NUMBER``, ``CREDIT_CARD``,
``IBAN_CODE``, ``IP_ADDRESS``, ``US_SSN``, ``KR_RRN``, ... plus ``STREET_ADDRESS`` and ``NRP``.
A detection's score is Presidio's score after context; details name the recognizer, the
pattern, the score before context, the validation result (checksum) and the context word.
Spans point at the value; reasons and details never contain it.

Params:
    entities: entity names to look for (default :data:`DEFAULT_ENTITIES`).
    min_score: lowest score reported (default 0.3; the rules ask for 0.4, so a weak pattern
        needs a context word, and MA-PII-008 can be lowered to 0.3 to see every NRP mention).
    language: ``auto`` (Korean pipeline when the text has Hangul), ``en`` or ``ko``.
    phone_regions: regions for Presidio's phone-number matcher (default US and UK; Presidio's
        own default adds DE, FR, IL, IN, CA, BR at about 25% of the detector's speed; other
        formats are found as digit groups near a phone word; Korean numbers have their own
        recognizer; an empty list leaves python-phonenumbers out).
    ner_model: an installed spaCy model for ``PERSON`` / ``LOCATION`` (default none).
    chunk_chars: long texts are analysed in overlapping chunks of this size (default 4000:
        Presidio's context step grows with the square of the tokens in one call).
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")


_HIDDEN = ("torch", "transformers")


@contextlib.contextmanager
def _torch_hidden() -> Iterator[None]:
    """Hide PyTorch and Transformers while spaCy and Presidio are first imported.

    thinc (under spaCy) and Presidio probe ``import torch`` / ``import transformers`` at
    import time; with them installed (the optional mem0 extra brings them) every memaudit
    process would load PyTorch, about 400 MB, for nothing: the pipelines here never use it.
    Hidden, they see neither and stay on the CPU code paths. The sentinels are removed
    afterwards, so a later import (the mem0 connector's embedder) loads the real modules;
    none of them was imported during the window, so none caches "torch missing".
    """
    hidden = [name for name in _HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment] # import -> ImportError
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]


with _torch_hidden():
    import presidio_analyzer.nlp_engine  # noqa: F401
    import spacy
import tldextract  # noqa: E402
from presidio_analyzer import (  # noqa: E402
    AnalyzerEngine,
    EntityRecognizer,
    Pattern,
    PatternRecognizer,
    RecognizerRegistry,
    RecognizerResult,
)
from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer  # noqa: E402
from presidio_analyzer.nlp_engine import (  # noqa: E402
    NerModelConfiguration,
    NlpArtifacts,
    SpacyNlpEngine,
)
from presidio_analyzer.predefined_recognizers import (  # noqa: E402
    CreditCardRecognizer,
    CryptoRecognizer,
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    KrBrnRecognizer,
    KrDriverLicenseRecognizer,
    KrFrnRecognizer,
    KrPassportRecognizer,
    KrRrnRecognizer,
    NhsRecognizer,
    PhoneRecognizer,
    SpacyRecognizer,
    UkNinoRecognizer,
    UsBankRecognizer,
    UsItinRecognizer,
    UsLicenseRecognizer,
    UsPassportRecognizer,
    UsSsnRecognizer,
)
from spacy.language import Language  # noqa: E402
from spacy.tokens import Doc  # noqa: E402

from auditor.detectors import _pii_terms as terms  # noqa: E402
from auditor.detectors.base import (  # noqa: E402
    DetectContext,
    Detection,
    Detector,
    MemoryView,
    Span,
)
from auditor.logging import scrub  # noqa: E402

__all__ = ["DEFAULT_ENTITIES", "NER_ENTITIES", "SUPPORTED_ENTITIES", "PiiDetector"]

DEFAULT_ENTITIES = terms.DEFAULT_ENTITIES
#: Entities that only an NER model (``ner_model``) finds.
NER_ENTITIES = ("PERSON", "LOCATION")
SUPPORTED_ENTITIES = (*DEFAULT_ENTITIES, "UK_NHS", *NER_ENTITIES)
LANGUAGES = ("en", "ko")
#: Regions for python-phonenumbers (US covers Canada). Each region costs a full pass of the
#: matcher; other national formats are left to :class:`GroupedPhoneRecognizer` (with a phone
#: word nearby) and Korean numbers to :class:`KrPhoneRecognizer`.
DEFAULT_PHONE_REGIONS = ("US", "UK")

#: Context enhancement: words looked at before and after a match (Presidio's enhancer).
CONTEXT_PREFIX_WORDS = 6
CONTEXT_SUFFIX_WORDS = 2
#: How far (characters) a weak address shape may sit from a stronger address part.
ADDRESS_BLOCK_GAP = 60
#: Score a weak address shape gets next to a stronger address part.
ADDRESS_BLOCK_SCORE = 0.45
#: Score of a nationality / group mention in a sentence that names no person.
NRP_TOPIC_SCORE = 0.3
#: Score of a bare digit run that passes a weak Korean check (BRN, driver licence).
UNSEPARATED_SCORE = 0.3
#: Characters before a phone-shaped number searched for a word naming another identifier.
PHONE_TYPE_WINDOW = 30
#: Characters before an RRN / FRN searched for a word naming the other type.
KR_TYPE_WINDOW = 40
#: Lower-case-lemma pipeline component (context words are matched against lemmas).
_LEMMA_COMPONENT = "memaudit_lower_lemma"

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_NON_DIGIT = re.compile(r"\D")
_LETTERS = re.compile(r"[^\W\d_]+")

# -- logging: Presidio's records may carry matched text -------------------------------------


class _RedactPresidioRecords(logging.Filter):
    """Replace the arguments of Presidio's log records and scrub their message."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` in place; always keep it.

        Args:
            record: a record of the ``presidio-analyzer`` logger.

        Returns:
            True (the record is kept, redacted).
        """
        if record.args:
            record.args = tuple("[redacted]" for _ in _as_tuple(record.args))
        record.msg = scrub(str(record.msg))
        return True


def _as_tuple(args: object) -> tuple[object, ...]:
    if isinstance(args, tuple):
        return args
    if isinstance(args, Mapping):
        return tuple(args.values())
    return (args,)


def _guard_presidio_logging() -> None:
    presidio_logger = logging.getLogger("presidio-analyzer")
    if not any(isinstance(f, _RedactPresidioRecords) for f in presidio_logger.filters):
        presidio_logger.addFilter(_RedactPresidioRecords())
    if presidio_logger.level == logging.NOTSET or presidio_logger.level < logging.WARNING:
        presidio_logger.setLevel(logging.WARNING)


# -- small helpers --------------------------------------------------------------------------


def _alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` (escaped, longest first)."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _known_card_issuer(digits: str) -> bool:
    """Whether the number's prefix and length belong to a card scheme (IIN ranges)."""
    n = len(digits)
    p2, p4 = int(digits[:2]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # American Express
    if 2200 <= p4 <= 2204:
        return 16 <= n <= 19  # Mir
    if 3528 <= p4 <= 3589:
        return 16 <= n <= 19  # JCB
    if p4 in (1800, 2131):
        return n == 15  # JCB (old)
    if p2 in (36, 38, 39) or 300 <= int(digits[:3]) <= 305 or p4 == 3095:
        return 14 <= n <= 19  # Diners Club
    if digits[0] == "6" or p2 in (50, 56, 57, 58):
        return 12 <= n <= 19  # Discover, UnionPay, Maestro, RuPay
    return False


# -- recognizers ----------------------------------------------------------------------------

_TLD_EXTRACTOR = tldextract.TLDExtract(
    cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True
)


class OfflineEmailRecognizer(EmailRecognizer):
    """Presidio's e-mail recognizer, validating domains with the bundled suffix snapshot."""

    def validate_result(self, pattern_text: str) -> bool:
        """Whether the matched address has a domain under a public suffix.

        Args:
            pattern_text: the matched text.

        Returns:
            True when the domain part is a fully qualified domain name.
        """
        return bool(_TLD_EXTRACTOR(pattern_text).fqdn)


_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


class CaseFoldingIbanRecognizer(IbanRecognizer):
    """Presidio's IBAN recognizer, also for IBANs typed in lower case ("gb82 west ...").

    The text is upper-cased letter for letter (ASCII only, so offsets do not move) before
    Presidio's pattern and checksum run.
    """

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts | None = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Presidio's IBAN analysis over the ASCII-upper-cased text.

        Args:
            text: the analysed text.
            entities: the entities asked for.
            nlp_artifacts: spaCy artifacts.
            regex_flags: regex flags (Presidio's default when None).

        Returns:
            IBAN results (offsets into ``text``).
        """
        results: list[RecognizerResult] = super().analyze(
            text.translate(_ASCII_UPPER),
            entities,
            nlp_artifacts,  # type: ignore[arg-type]  # Presidio accepts None here
            regex_flags,  # type: ignore[arg-type]
        )
        return results


class _TypedResidentNumberRecognizer(PatternRecognizer):
    """Mixin logic for RRN / FRN: drop a checksum failure that another type's word names.

    Subclasses set ``own_words`` and ``other_words`` (lower-case).
    """

    own_words: tuple[str, ...] = ()
    other_words: tuple[str, ...] = ()

    def enhance_using_context(
        self,
        text: str,
        raw_recognizer_results: list[RecognizerResult],
        other_raw_recognizer_results: list[RecognizerResult],
        nlp_artifacts: NlpArtifacts | None,
        context: list[str] | None = None,
    ) -> list[RecognizerResult]:
        """Drop results whose type conflicts with the words before them.

        Args:
            text: the analysed text.
            raw_recognizer_results: this recognizer's results.
            other_raw_recognizer_results: other recognizers' results (unused).
            nlp_artifacts: spaCy artifacts (unused).
            context: extra context words (unused).

        Returns:
            The results that keep their type.
        """
        kept: list[RecognizerResult] = []
        for result in raw_recognizer_results:
            explanation = result.analysis_explanation
            if explanation is not None and explanation.validation_result is True:
                kept.append(result)
                continue
            window = text[max(0, result.start - KR_TYPE_WINDOW) : result.start].lower()
            named_other = any(w in window for w in self.other_words)
            named_own = any(w in window for w in self.own_words)
            if not (named_other and not named_own):
                kept.append(result)
        return kept


class TypedKrRrnRecognizer(_TypedResidentNumberRecognizer, KrRrnRecognizer):
    """Presidio's Korean RRN recognizer with Korean context and the type-conflict check."""

    own_words = terms.RRN_TYPE_WORDS
    other_words = terms.FRN_TYPE_WORDS


class TypedKrFrnRecognizer(_TypedResidentNumberRecognizer, KrFrnRecognizer):
    """Presidio's Korean FRN recognizer with Korean context and the type-conflict check."""

    own_words = terms.FRN_TYPE_WORDS
    other_words = terms.RRN_TYPE_WORDS


class _UnseparatedNeedsContext(PatternRecognizer):
    """Caps validated matches written without separators at :data:`UNSEPARATED_SCORE`.

    Presidio's Korean BRN and driver-licence checks are weak (a BRN checksum passes one
    number in ten, a licence "check" is a regional code): a bare run of digits that passes
    them is any 10- or 12-digit number in one case out of a few. Written in the document's
    format (104-86-56659, 11-22-123456-12) the validation keeps its full score; bare digits
    need a context word (사업자등록번호, 운전면허, BRN, licence).
    """

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts | None = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Presidio's results, bare digit runs capped.

        Args:
            text: the analysed text.
            entities: the entities asked for.
            nlp_artifacts: spaCy artifacts.
            regex_flags: regex flags (Presidio's default when None).

        Returns:
            The results.
        """
        results: list[RecognizerResult] = super().analyze(
            text, entities, nlp_artifacts, regex_flags
        )
        for result in results:
            if text[result.start : result.end].isdigit() and result.score > UNSEPARATED_SCORE:
                result.score = UNSEPARATED_SCORE
                if result.analysis_explanation is not None:
                    result.analysis_explanation.set_improved_score(result.score)
                    result.analysis_explanation.append_textual_explanation_line(
                        "bare digits: needs a context word"
                    )
        return results


class ContextualKrBrnRecognizer(_UnseparatedNeedsContext, KrBrnRecognizer):
    """Presidio's Korean business registration number recognizer; bare digits need context."""


class ContextualKrDriverLicenseRecognizer(_UnseparatedNeedsContext, KrDriverLicenseRecognizer):
    """Presidio's Korean driver licence recognizer (not inside a longer code such as
    F162823540116); bare digits need context."""

    PATTERNS = [
        Pattern(
            "Driver License (very weak)",
            r"(?<![A-Za-z0-9-])(\d{2})[- ]?(\d{2})[- ]?(\d{6})[- ]?(\d{2})(?![A-Za-z0-9-])",
            0.05,
        )
    ]


class CardNumberRecognizer(PatternRecognizer):
    """Card numbers of 12-19 digits that Presidio's card pattern misses (2-series
    Mastercard, Maestro, 19-digit Visa, old JCB): Luhn plus the issuer's prefix and length.

    Luhn and a known issuer: validated (score 1.0); Luhn alone: the base score, raised by a
    card word nearby; no Luhn: dropped.
    """

    PATTERNS = (
        Pattern("card digits (weak)", r"(?<![\d.,-])\d(?:[ -]?\d){11,18}(?![\d,-]|\.\d)", 0.3),
    )

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="CREDIT_CARD",
            name="CardNumberRecognizer",
            supported_language=supported_language,
            patterns=list(self.PATTERNS),
            context=list(terms.CARD_CONTEXT),
        )

    def validate_result(self, pattern_text: str) -> bool | None:
        """Luhn and issuer check.

        Args:
            pattern_text: the matched text.

        Returns:
            True (Luhn and a known issuer), None (Luhn only) or False (no Luhn, or a
            separator pattern no card uses).
        """
        digits = _NON_DIGIT.sub("", pattern_text)
        if not 12 <= len(digits) <= 19 or len(set(digits)) == 1:
            return False
        if not _luhn_ok(digits):
            return False
        return True if _known_card_issuer(digits) else None


def _named_as_other_id(text: str, start: int) -> bool:
    """Whether the words just before ``start`` call the number a non-phone identifier."""
    window = text[max(0, start - PHONE_TYPE_WINDOW) : start].lower()
    return any(w in window for w in terms.NON_PHONE_ID_WORDS) and not any(
        w in window for w in terms.PHONE_TYPE_WORDS
    )


class _PhoneTypeGuard(EntityRecognizer):
    """Drops phone-shaped numbers that the text names as another identifier.

    "사업자등록번호 123-45-67890" or "passport no. 0123 456 789" is not a phone number even
    when it fits a region's phone plan (Presidio's matcher knows dozens of national formats).
    """

    def enhance_using_context(
        self,
        text: str,
        raw_recognizer_results: list[RecognizerResult],
        other_raw_recognizer_results: list[RecognizerResult],
        nlp_artifacts: NlpArtifacts | None,
        context: list[str] | None = None,
    ) -> list[RecognizerResult]:
        """Keep the results not named as another identifier.

        Args:
            text: the analysed text.
            raw_recognizer_results: this recognizer's results.
            other_raw_recognizer_results: other recognizers' results (unused).
            nlp_artifacts: spaCy artifacts (unused).
            context: extra context words (unused).

        Returns:
            The phone results that may be phone numbers.
        """
        return [r for r in raw_recognizer_results if not _named_as_other_id(text, r.start)]


class ContextualPhoneRecognizer(_PhoneTypeGuard, PhoneRecognizer):
    """Presidio's phone-number matcher (python-phonenumbers) with the identifier-type guard."""


class GroupedPhoneRecognizer(_PhoneTypeGuard, PatternRecognizer):
    """Phone numbers written in digit groups ("(37) 788-063", "0490 39 07 81", "+46 (0)8 ...").

    International numbers (a leading ``+``) score on their own; plain digit groups need a
    phone word nearby ("Mobile:", "call me", "... office", "전화").
    """

    PATTERNS = (
        Pattern(
            "international phone",
            r"(?<![\w+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,6}(?:[ .-]\d{1,6}){1,5}(?!\d)",
            0.4,
        ),
        Pattern(
            "grouped digits (weak)",
            r"(?<![\w+.,/:-])\(?\d{2,5}\)?(?:[ .-]\d{2,8}){1,4}(?![\d]|[.,/:]\d)",
            0.1,
        ),
        Pattern("plain digits (weak)", r"(?<![\w+.,/:-])\d{7,12}(?![\d]|[.,/:]\d)", 0.05),
    )
    _DATE = re.compile(
        r"^(?:(?:19|20)\d{2}[-./](?:0?[1-9]|1[0-2])[-./](?:0?[1-9]|[12]\d|3[01])"
        r"|(?:0?[1-9]|[12]\d|3[01])[-./](?:0?[1-9]|1[0-2])[-./](?:19|20)?\d{2})(?!\d)"
    )

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="PHONE_NUMBER",
            name="GroupedPhoneRecognizer",
            supported_language=supported_language,
            patterns=list(self.PATTERNS),
            context=list(terms.PHONE_CONTEXT),
        )

    def invalidate_result(self, pattern_text: str) -> bool:
        """Refuse dates and digit counts no phone number has.

        Args:
            pattern_text: the matched text.

        Returns:
            True when the match is not a phone number.
        """
        digits = _NON_DIGIT.sub("", pattern_text)
        if not 7 <= len(digits) <= 15 or len(set(digits)) == 1:
            return True
        return bool(self._DATE.match(pattern_text.strip()))


class KrPhoneRecognizer(_PhoneTypeGuard, PatternRecognizer):
    """Korean phone numbers: mobile 010-xxxx-xxxx, Seoul 02-, area codes 031-064, 070."""

    PATTERNS = (
        Pattern(
            "KR mobile",
            r"(?<![\d+])(?:\+82[ -]?|0)1[016789][ .-]\d{3,4}[ .-]\d{4}(?!\d)",
            0.6,
        ),
        Pattern("KR mobile (unseparated)", r"(?<![\d+])01[016789]\d{7,8}(?!\d)", 0.4),
        Pattern(
            "KR landline",
            r"(?<![\d+])(?:\+82[ -]?|0)(?:2|[3-6][1-5]|70)[ .)-]\d{3,4}[ .-]\d{4}(?!\d)",
            0.4,
        ),
    )

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="PHONE_NUMBER",
            name="KrPhoneRecognizer",
            supported_language=supported_language,
            patterns=list(self.PATTERNS),
            context=list(terms.PHONE_CONTEXT),
        )


class DriverLicenceNumberRecognizer(PatternRecognizer):
    """Driver-licence numbers of any country, named as such by the words before them.

    Formats differ by state and country ("2270-66-1551", "F162823540116", "AB12 345678"),
    so the shape alone is weak: a licence word nearby ("driver's license number is") makes
    it count. Korean licences have a checked format of their own (``KR_DRIVER_LICENSE``).
    """

    PATTERNS = (
        Pattern(
            "licence-like code (weak)",
            r"(?<![\w-])(?=[A-Za-z0-9 -]{5,20}(?![\w-]))(?=[A-Za-z]{0,6}\d)[A-Za-z0-9]{1,16}"
            r"(?:[ -][A-Za-z0-9]{1,8}){0,4}(?![\w-])",
            0.05,
        ),
    )

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="DRIVER_LICENSE",
            name="DriverLicenceNumberRecognizer",
            supported_language=supported_language,
            patterns=list(self.PATTERNS),
            context=list(terms.DRIVER_LICENSE_CONTEXT),
        )

    def invalidate_result(self, pattern_text: str) -> bool:
        """Refuse codes with too few digits to be a licence number.

        Args:
            pattern_text: the matched text.

        Returns:
            True when the match has fewer than five digits.
        """
        return sum(ch.isdigit() for ch in pattern_text) < 5


def _address_patterns() -> tuple[list[Pattern], list[Pattern]]:
    """(strong, weak) street-address patterns built from the vocabularies in ``_pii_terms``."""
    name = r"\p{Lu}[\p{L}'’.-]*"
    ordinal = (
        r"(?:\d{1,3}(?:st|nd|rd|th)|(?i:first|second|third|fourth|fifth|sixth|seventh"
        r"|eighth|ninth|tenth|north|south|east|west|old|new|upper|lower|great|little))"
    )
    num = r"\d{1,6}[A-Za-z]?"
    strong_suffix = _alternation(terms.STREET_SUFFIXES_STRONG)
    weak_suffix = _alternation(terms.STREET_SUFFIXES_WEAK)
    compound = _alternation(terms.STREET_COMPOUND_ENDINGS)
    prefix = _alternation(terms.STREET_PREFIX_TYPES)
    unit = _alternation(terms.UNIT_WORDS)
    ko_admin = _alternation(terms.KO_ADDRESS_UNITS)
    counters = (
        r"(?![\d]|[ \t]*(?:회|명|개|번(?!지|길)|시간|분|초|일|월|년|살|세|위|등|차|배|권|장|건|원"
        r"|만|천|억|%|kg|km))"
    )
    strong = [
        Pattern(
            "house number + street + suffix",
            rf"\b{num}(?:[ \t]+\d{{1,5}})?[ \t]+(?:(?:{name}|{ordinal})[ \t]+){{1,4}}"
            rf"(?:(?i:{strong_suffix})|{weak_suffix})\b\.?",
            0.5,
        ),
        Pattern(
            "street word ending + number",
            rf"(?<![\p{{L}}\d])\p{{L}}[\p{{L}}'’-]*(?i:{compound})\.?[ \t]+\d{{1,5}}[A-Za-z]?\b",
            0.5,
        ),
        Pattern(
            "street type + name + number",
            rf"(?<![\p{{L}}])(?i:{prefix})[ \t]+(?:[\p{{L}}'’.-]+[ \t]+){{0,6}}?\d{{1,5}}"
            rf"[A-Za-z]?\b",
            0.5,
        ),
        Pattern(
            "number + street type + name",
            r"(?<![\d.,])\b\d{1,5}[ \t,]+(?:(?i:rue|avenue|av\.|boulevard|bd|chemin|allée"
            r"|impasse|quai|calle|corso|piazza)|Via|Viale|Place)[ \t]+(?:(?i:de la|de|du|des|del"
            r"|della|di|da|do|dos|das|la|le|les|l')[ \t]*)?\p{Lu}[\p{L}'’-]+",
            0.5,
        ),
        Pattern(
            "apartment / suite",
            rf"(?<![\p{{L}}])(?<!(?i:test|testing|benchmark|software|office) )(?i:{unit})"
            rf"[ \t]*(?:#|(?i:no\.?))?[ \t]*\d{{1,5}}[A-Za-z]?\b",
            0.4,
        ),
        Pattern(
            "PO box",
            r"\b(?i:p\.?[ \t]?o\.?[ \t]?box|post[ \t]office[ \t]box)[ \t]*\d{1,6}\b",
            0.6,
        ),
        Pattern(
            "military / unit box",
            r"\b(?i:psc|cmr|unit)[ \t]+\d{3,5},?[ \t]+(?i:box)[ \t]+\d{3,5}\b",
            0.7,
        ),
        Pattern("APO / FPO / DPO", r"\b(?i:apo|fpo|dpo)[ \t]+(?i:aa|ae|ap)[ \t]+\d{5}\b", 0.7),
        Pattern(
            "KR administrative address",
            rf"(?<![가-힣])(?:[가-힣]{{2,}}(?:{ko_admin})[ \t]+){{1,3}}[가-힣\d]{{1,12}}"
            rf"(?<!으)(?:로|길|동|읍|면|리)[ \t]*\d{{1,5}}(?:-\d{{1,5}})?(?:번지|번길[ \t]*\d+)?"
            rf"{counters}",
            0.6,
        ),
        Pattern(
            "corner of A and B",
            r"(?i:\bcorner of)[ \t]+(?:\d{1,5}[ \t]+)?\p{Lu}[\p{L}'’.-]*(?:[ \t]+[\p{L}\d'’.-]+)"
            r"{0,4}?[ \t]+(?i:and|&)[ \t]+[\p{Lu}\d][\p{L}\d'’.-]*",
            0.4,
        ),
        Pattern("KR building + flat", r"(?<!\d)\d{1,4}동[ \t]*\d{1,4}호(?!\d)", 0.5),
    ]
    weak = [
        Pattern(
            "lower-case street (weak)",
            r"\b\d{1,6}[ \t]+(?:[a-z][a-z'-]+[ \t]+){1,3}(?:street|avenue|road|lane|drive"
            r"|boulevard|st\.|rd\.|ave\.)\b",
            0.25,
        ),
        Pattern(
            "name + number (weak)",
            r"(?<![\p{L}\d])\p{Lu}[\p{Ll}'’.-]+(?:[ \t]+\p{Lu}[\p{Ll}'’.-]+){0,3}[ \t]+"
            r"\d{1,5}[A-Za-z]?\b(?![.:,/-]\d)",
            0.1,
        ),
        Pattern(
            "number + name (weak)",
            r"(?<![\d.,:/-])\b\d{1,6}[ \t]+\p{Lu}[\p{Ll}'’-]+(?:[ \t]+\p{Lu}[\p{Ll}'’-]+){0,3}\b",
            0.1,
        ),
        Pattern(
            "KR road + number (weak)",
            rf"(?<![가-힣])[가-힣\d]{{1,10}}(?<!으)(?:대로|로|길)[ \t]*\d{{1,5}}(?:-\d{{1,5}})?"
            rf"{counters}",
            0.25,
        ),
    ]
    return strong, weak


_ADDRESS_STRONG, _ADDRESS_WEAK = _address_patterns()
_NOT_STREET_WORDS = frozenset(terms.NOT_STREET_WORDS)


class StreetAddressRecognizer(PatternRecognizer):
    """Street addresses and their parts: street + number, units, PO and military boxes."""

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="STREET_ADDRESS",
            name="StreetAddressRecognizer",
            supported_language=supported_language,
            patterns=list(_ADDRESS_STRONG),
            context=list(terms.ADDRESS_CONTEXT),
            global_regex_flags=re.MULTILINE,
        )


class WeakAddressRecognizer(PatternRecognizer):
    """Address shapes that are ordinary text unless someone's place is meant ("Jahu 80").

    They count with an address word nearby ("lives at", "address:", "주소") or within
    :data:`ADDRESS_BLOCK_GAP` characters of a stronger address part (an address block).
    """

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="STREET_ADDRESS",
            name="WeakAddressRecognizer",
            supported_language=supported_language,
            patterns=list(_ADDRESS_WEAK),
            context=list(terms.ADDRESS_CONTEXT_NARROW),
            global_regex_flags=re.MULTILINE,
        )

    def invalidate_result(self, pattern_text: str) -> bool:
        """Refuse shapes whose words are dates, units or names of things ("6 Mar", "Windows 11").

        Args:
            pattern_text: the matched text.

        Returns:
            True when a word of the match is on the not-a-street list.
        """
        return any(w.lower() in _NOT_STREET_WORDS for w in _LETTERS.findall(pattern_text))

    def enhance_using_context(
        self,
        text: str,
        raw_recognizer_results: list[RecognizerResult],
        other_raw_recognizer_results: list[RecognizerResult],
        nlp_artifacts: NlpArtifacts | None,
        context: list[str] | None = None,
    ) -> list[RecognizerResult]:
        """Raise weak shapes that sit in an address block (near a strong address part).

        Args:
            text: the analysed text.
            raw_recognizer_results: this recognizer's results.
            other_raw_recognizer_results: other recognizers' results (strong address parts).
            nlp_artifacts: spaCy artifacts (unused).
            context: extra context words (unused).

        Returns:
            The results, some with a raised score.
        """
        anchors = [
            r
            for r in other_raw_recognizer_results
            if r.entity_type == "STREET_ADDRESS" and r.score >= 0.4
        ]
        for result in raw_recognizer_results:
            near = any(
                a.start - ADDRESS_BLOCK_GAP <= result.end
                and result.start <= a.end + ADDRESS_BLOCK_GAP
                for a in anchors
            )
            if near and result.score < ADDRESS_BLOCK_SCORE:
                result.score = ADDRESS_BLOCK_SCORE
                result.recognition_metadata[RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY] = (
                    True
                )
                if result.analysis_explanation is not None:
                    result.analysis_explanation.set_improved_score(result.score)
                    result.analysis_explanation.append_textual_explanation_line(
                        "next to another address part (address block)"
                    )
        return raw_recognizer_results


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


def _sentence_has_person(text: str, start: int, end: int) -> bool:
    """Whether the sentence around ``text[start:end]`` speaks about a person."""
    left = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        left = m.end()
    right = _SENTENCE_END.search(text, end)
    return _PERSON_CUE.search(text, left, right.start() if right else len(text)) is not None


class NrpRecognizer(PatternRecognizer):
    """Nationality, religious or political group mentions (Presidio's ``NRP`` entity).

    Presidio finds NRP only with an NER model; this recognizer works from word lists. A
    language name used as a language ("answer in Korean", "the English version") is not a
    group and is dropped. A mention in a sentence without a person ("the German economy",
    "an American teen drama") scores :data:`NRP_TOPIC_SCORE`, below the default threshold:
    nationality is personal data when it is someone's ("User is Cambodian", "we are proud
    Saudis", "his Sunni family").
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

    def enhance_using_context(
        self,
        text: str,
        raw_recognizer_results: list[RecognizerResult],
        other_raw_recognizer_results: list[RecognizerResult],
        nlp_artifacts: NlpArtifacts | None,
        context: list[str] | None = None,
    ) -> list[RecognizerResult]:
        """Drop language names used as languages.

        Args:
            text: the analysed text.
            raw_recognizer_results: this recognizer's results.
            other_raw_recognizer_results: other recognizers' results (unused).
            nlp_artifacts: spaCy artifacts (unused).
            context: extra context words (unused).

        Returns:
            The results that name a group.
        """
        kept: list[RecognizerResult] = []
        for result in raw_recognizer_results:
            before = text[max(0, result.start - 30) : result.start]
            after = text[result.end : result.end + 30]
            if _LANGUAGE_BEFORE.search(before) or _LANGUAGE_AFTER.match(after):
                continue
            word = text[result.start : result.end].rstrip("s")
            if word in _AMBIGUOUS and _VERB_OBJECT.match(after):
                continue  # "Polish the README", "Turk up ..."
            pattern = (
                result.analysis_explanation.pattern_name if result.analysis_explanation else ""
            )
            if pattern not in _NRP_PERSON_PATTERNS and not _sentence_has_person(
                text, result.start, result.end
            ):
                result.score = min(result.score, NRP_TOPIC_SCORE)
                if result.analysis_explanation is not None:
                    result.analysis_explanation.set_improved_score(result.score)
                    result.analysis_explanation.append_textual_explanation_line(
                        "no person in the sentence"
                    )
            kept.append(result)
        return kept


# -- the analyzer (built once per configuration and process) --------------------------------


@dataclass(frozen=True)
class _EngineKey:
    ner_model: str | None
    phone_regions: tuple[str, ...]


class _PreloadedSpacyNlpEngine(SpacyNlpEngine):
    """Presidio's spaCy engine over pipelines built in memory (nothing is downloaded)."""

    def __init__(self, pipelines: Mapping[str, Language]) -> None:
        super().__init__(
            models=[{"lang_code": lang, "model_name": "in-memory"} for lang in pipelines],
            ner_model_configuration=NerModelConfiguration(),
        )
        self._pipelines = dict(pipelines)
        self.load()

    def load(self) -> None:
        """Use the in-memory pipelines."""
        self.nlp = dict(self._pipelines)  # type: ignore[assignment]  # Presidio types it None


_CONTEXT_WORDS = frozenset(
    word
    for group in (
        terms.EMAIL_CONTEXT,
        terms.PHONE_CONTEXT,
        terms.CARD_CONTEXT,
        terms.IBAN_CONTEXT,
        terms.US_DRIVER_LICENSE_CONTEXT,
        terms.KR_RRN_CONTEXT,
        terms.KR_FRN_CONTEXT,
        terms.KR_BRN_CONTEXT,
        terms.KR_DRIVER_LICENSE_CONTEXT,
        terms.KR_PASSPORT_CONTEXT,
        terms.ADDRESS_CONTEXT,
        terms.ADDRESS_CONTEXT_NARROW,
        terms.NRP_CONTEXT,
    )
    for word in group
    if " " not in word
)


def _lower_lemma(doc: Doc) -> Doc:
    for token in doc:
        token.lemma_ = token.lower_
    return doc


def _pipelines(ner_model: str | None) -> dict[str, Language]:
    if not Language.has_factory(_LEMMA_COMPONENT):
        Language.component(_LEMMA_COMPONENT, func=_lower_lemma)
    if ner_model:
        if not spacy.util.is_package(ner_model):
            raise ValueError(
                f"ner_model: spaCy package {ner_model!r} is not installed (it is never "
                "downloaded); install it or leave ner_model unset"
            )
        english = spacy.load(ner_model, exclude=["parser", "textcat"])
    else:
        english = spacy.blank("en")
    korean = spacy.blank("ko", config={"nlp": {"tokenizer": {"@tokenizers": "spacy.Tokenizer.v1"}}})
    for nlp in (english, korean):
        if "lemmatizer" not in nlp.pipe_names:
            nlp.add_pipe(_LEMMA_COMPONENT, last=True)
        # spaCy's English stop list holds "call", "move", "side", ...: Presidio drops stop
        # words from the context window, so a context word must never be one.
        for word in _CONTEXT_WORDS:
            nlp.vocab[word].is_stop = False
    return {"en": english, "ko": korean}


def _recognizers(language: str, phone_regions: Sequence[str]) -> list[EntityRecognizer]:
    """Every pattern recognizer for one language (generic, US / UK, Korean, memaudit's)."""
    recognizers: list[EntityRecognizer] = []
    if phone_regions:
        recognizers.append(
            ContextualPhoneRecognizer(
                supported_language=language,
                context=list(terms.PHONE_CONTEXT),
                supported_regions=list(phone_regions),
            )
        )
    return [
        *recognizers,
        OfflineEmailRecognizer(supported_language=language, context=list(terms.EMAIL_CONTEXT)),
        GroupedPhoneRecognizer(language),
        KrPhoneRecognizer(language),
        CreditCardRecognizer(supported_language=language, context=list(terms.CARD_CONTEXT)),
        CardNumberRecognizer(language),
        CaseFoldingIbanRecognizer(supported_language=language, context=list(terms.IBAN_CONTEXT)),
        IpRecognizer(supported_language=language),
        CryptoRecognizer(supported_language=language),
        UsSsnRecognizer(supported_language=language),
        UsItinRecognizer(supported_language=language),
        UsPassportRecognizer(supported_language=language),
        UsLicenseRecognizer(
            supported_language=language, context=list(terms.US_DRIVER_LICENSE_CONTEXT)
        ),
        DriverLicenceNumberRecognizer(language),
        UsBankRecognizer(supported_language=language),
        NhsRecognizer(supported_language=language),
        UkNinoRecognizer(supported_language=language),
        TypedKrRrnRecognizer(supported_language=language, context=list(terms.KR_RRN_CONTEXT)),
        TypedKrFrnRecognizer(supported_language=language, context=list(terms.KR_FRN_CONTEXT)),
        ContextualKrBrnRecognizer(supported_language=language, context=list(terms.KR_BRN_CONTEXT)),
        ContextualKrDriverLicenseRecognizer(
            supported_language=language, context=list(terms.KR_DRIVER_LICENSE_CONTEXT)
        ),
        KrPassportRecognizer(supported_language=language, context=list(terms.KR_PASSPORT_CONTEXT)),
        StreetAddressRecognizer(language),
        WeakAddressRecognizer(language),
        NrpRecognizer(language),
    ]


class _IndexedContextEnhancer(LemmaContextAwareEnhancer):
    """Presidio's lemma context enhancer, locating a match's token by bisection.

    Presidio walks the tokens from the start of the text for every result (quadratic on a
    long page full of numbers); the token order lets a binary search give the same token.
    """

    @staticmethod
    def _find_index_of_match_token(
        word: str, start: int, tokens: Any, tokens_indices: list[int]
    ) -> int:
        """The index of the first token that ends after ``start`` (Presidio's rule).

        Args:
            word: the matched text (unused; Presidio's signature).
            start: the match's start offset.
            tokens: the spaCy tokens.
            tokens_indices: each token's start offset, ascending.

        Returns:
            The token index.

        Raises:
            ValueError: no token covers or follows ``start`` (as Presidio).
        """
        i = max(0, bisect.bisect_right(tokens_indices, start) - 1)
        while i < len(tokens_indices):
            if tokens_indices[i] == start or start < tokens_indices[i] + len(tokens[i]):
                return i
            i += 1
        raise ValueError("match is not inside the tokenised text")


def _build_analyzer(key: _EngineKey) -> AnalyzerEngine:
    _guard_presidio_logging()
    pipelines = _pipelines(key.ner_model)
    nlp_engine = _PreloadedSpacyNlpEngine(pipelines)
    registry = RecognizerRegistry(supported_languages=list(LANGUAGES))
    for language in LANGUAGES:
        for recognizer in _recognizers(language, key.phone_regions):
            registry.add_recognizer(recognizer)
    if key.ner_model:
        registry.add_recognizer(
            SpacyRecognizer(supported_language="en", supported_entities=list(NER_ENTITIES))
        )
    return AnalyzerEngine(
        registry=registry,
        nlp_engine=nlp_engine,
        supported_languages=list(LANGUAGES),
        log_decision_process=False,
        context_aware_enhancer=_IndexedContextEnhancer(
            context_prefix_count=CONTEXT_PREFIX_WORDS,
            context_suffix_count=CONTEXT_SUFFIX_WORDS,
        ),
    )


_ENGINES: dict[_EngineKey, AnalyzerEngine] = {}
_ENGINES_LOCK = threading.Lock()


def _analyzer(key: _EngineKey) -> AnalyzerEngine:
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _build_analyzer(key)
            _ENGINES[key] = engine
        return engine


# -- the detector ---------------------------------------------------------------------------

#: Cheap preconditions per entity: without a match, the entity's recognizers (and, when no
#: entity is left, Presidio itself) are skipped. Entities not listed need a digit.
_GATES: dict[str, re.Pattern[str]] = {
    "EMAIL_ADDRESS": re.compile(r"@|＠"),
    "PHONE_NUMBER": re.compile(r"\d(?:[ \t().+-]{0,3}\d){6}"),
    "CREDIT_CARD": re.compile(r"\d(?:[ -]?\d){11}"),
    "IBAN_CODE": re.compile(r"[A-Za-z]{2}\d{2}"),
    "IP_ADDRESS": re.compile(r"\d{1,3}\.\d{1,3}\.\d|[0-9A-Fa-f]{1,4}::?[0-9A-Fa-f]{1,4}:"),
    "US_SSN": re.compile(r"\d{3}[- .]?\d{2}[- .]?\d{4}"),
    "US_ITIN": re.compile(r"9\d{2}[- ]?[5-9]\d[- ]?\d{4}"),
    "KR_RRN": re.compile(r"\d{6}-?\d{7}"),
    "KR_FRN": re.compile(r"\d{6}-?\d{7}"),
    "KR_BRN": re.compile(r"\d{3}-?\d{2}-?\d{5}"),
    "KR_DRIVER_LICENSE": re.compile(r"\d{2}[- ]?\d{2}[- ]?\d{6}"),
    "KR_PASSPORT": re.compile(r"[MSRODmsrod]\d{3}"),
    "UK_NINO": re.compile(r"[A-Za-z]{2} ?\d{2} ?\d{2}"),
}
#: Entities that need no digit (the others do).
_DIGITLESS = frozenset({"EMAIL_ADDRESS", "NRP", *NER_ENTITIES})


def _chunks(text: str, size: int, overlap: int = 200) -> Iterable[tuple[int, str]]:
    """``(offset, piece)`` pairs covering ``text`` in overlapping pieces cut at whitespace."""
    if len(text) <= size:
        yield 0, text
        return
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind("\n", start + size // 2, end)
            if cut < 0:
                cut = text.rfind(" ", start + size // 2, end)
            end = cut if cut > 0 else end
        yield start, text[start:end]
        if end >= len(text):
            return
        start = max(end - overlap, start + 1)


class PiiDetector(Detector):
    """Personal identifiers via Presidio (offline, Korean included); see the module docstring.

    Args:
        params: ``entities``, ``min_score``, ``language``, ``phone_regions``, ``ner_model``,
            ``chunk_chars``.

    Raises:
        ValueError: a parameter is invalid (the message names it), or ``ner_model`` is not
            installed.
    """

    name = "pii"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        p = self.params
        unknown = set(p) - {
            "entities",
            "min_score",
            "language",
            "phone_regions",
            "ner_model",
            "chunk_chars",
        }
        if unknown:
            raise ValueError(f"{sorted(unknown)[0]}: unknown parameter of the pii detector")
        entities = p.get("entities", list(DEFAULT_ENTITIES))
        if not isinstance(entities, list) or not all(isinstance(e, str) for e in entities):
            raise ValueError("entities: a list of entity names")
        bad = [e for e in entities if e not in SUPPORTED_ENTITIES]
        if bad:
            raise ValueError(f"entities: unknown entity {bad[0]!r}")
        self.ner_model: str | None = p.get("ner_model")
        if self.ner_model is not None and not isinstance(self.ner_model, str):
            raise ValueError("ner_model: a spaCy package name or null")
        if not self.ner_model and any(e in NER_ENTITIES for e in entities):
            raise ValueError("entities: PERSON and LOCATION need ner_model (an NER model)")
        self.entities: tuple[str, ...] = tuple(entities)
        min_score = p.get("min_score", 0.3)
        if not isinstance(min_score, (int, float)) or not 0.0 <= float(min_score) <= 1.0:
            raise ValueError("min_score: a number between 0 and 1")
        self.min_score = float(min_score)
        self.language: str = p.get("language", "auto")
        if self.language not in ("auto", *LANGUAGES):
            raise ValueError("language: auto, en or ko")
        regions = p.get("phone_regions", list(DEFAULT_PHONE_REGIONS))
        if not isinstance(regions, list) or not all(
            isinstance(r, str) and len(r) == 2 for r in regions
        ):
            raise ValueError("phone_regions: a list of two-letter region codes")
        chunk_chars = p.get("chunk_chars", 4_000)
        if not isinstance(chunk_chars, int) or chunk_chars < 1000:
            raise ValueError("chunk_chars: an integer >= 1000")
        self.chunk_chars = chunk_chars
        self._analyzer = _analyzer(_EngineKey(self.ner_model, tuple(r.upper() for r in regions)))

    def _candidates(self, text: str) -> list[str]:
        """The configured entities that could occur in ``text`` (cheap checks first)."""
        has_digit = _DIGIT.search(text) is not None
        wanted: list[str] = []
        for entity in self.entities:
            if entity not in _DIGITLESS and not has_digit:
                continue
            gate = _GATES.get(entity)
            if gate is not None and gate.search(text) is None:
                continue
            if entity == "NRP" and not _mentions_group(text):
                continue
            wanted.append(entity)
        return wanted

    def _language(self, text: str) -> str:
        if self.language != "auto":
            return self.language
        return "ko" if _HANGUL.search(text) else "en"

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Personal identifiers in one memory's fact.

        Args:
            memory: the memory.
            ctx: the scan context (unused: personal identifiers need no consent logic).

        Returns:
            One detection per identifier found, highest score first where they overlap.
        """
        text = memory.fact
        wanted = self._candidates(text)
        if not wanted:
            return []
        language = self._language(text)
        found: dict[tuple[str, int, int], RecognizerResult] = {}
        for offset, piece in _chunks(text, self.chunk_chars):
            for r in self._analyzer.analyze(
                piece, language, entities=wanted, return_decision_process=True
            ):
                if r.score < self.min_score:
                    continue
                r.start += offset
                r.end += offset
                key = (r.entity_type, r.start, r.end)
                if key not in found or found[key].score < r.score:
                    found[key] = r
        kept = _merge_address_parts(_resolve_overlaps(found.values()), text)
        return [self._detection(memory, r, language) for r in kept]

    def _detection(self, memory: MemoryView, r: RecognizerResult, language: str) -> Detection:
        explanation = r.analysis_explanation
        recognizer = str(
            r.recognition_metadata.get(RecognizerResult.RECOGNIZER_NAME_KEY)
            or (explanation.recognizer if explanation else "unknown")
        )
        pattern = explanation.pattern_name if explanation else None
        validation = explanation.validation_result if explanation else None
        context_word = (explanation.supportive_context_word or None) if explanation else None
        original = explanation.original_score if explanation else r.score
        block = bool(explanation and "address block" in (explanation.textual_explanation or ""))
        parts = int(r.recognition_metadata.get(_PARTS_KEY, 1))
        said = [f"{r.entity_type} found by {recognizer}"]
        if pattern:
            said.append(f"pattern '{pattern}'")
        if validation is True:
            said.append("checksum/format validated")
        if context_word:
            said.append(f"context word '{context_word}'")
        if block:
            said.append("next to another address part")
        if parts > 1:
            said.append(f"{parts} adjacent address parts joined")
        reason = ", ".join(said) + f" (score {r.score:.2f}); the value is not repeated here."
        details: dict[str, Any] = {
            "recognizer": recognizer,
            "pattern": pattern,
            "score_before_context": round(float(original), 4),
            "validation": validation,
            "context_word": context_word,
            "language": language,
        }
        if block:
            details["address_block"] = True
        if parts > 1:
            details["parts"] = parts
        return Detection(
            memory_ids=(memory.memory_id,),
            detector=self.name,
            entity=r.entity_type,
            score=round(float(r.score), 4),
            reason=reason,
            spans=(Span(r.start, r.end, r.entity_type),),
            details=details,
        )


def _mentions_group(text: str) -> bool:
    """Cheap NRP prefilter: a group word (English) or a Korean group / country word."""
    for word in _WORD.findall(text):
        w = word.lower().replace("’", "'")
        if w in _NRP_WORDS or (w.endswith("s") and w[:-1] in _NRP_WORDS):
            return True
    return bool(_HANGUL.search(text) and _NRP_KO_PREFILTER.search(text))


_PARTS_KEY = "memaudit_parts"
#: What may stand between two address parts that are reported as one address.
_ADDRESS_JOINER = re.compile(r"[\s,.;:#-]{0,4}")


def _merge_address_parts(results: list[RecognizerResult], text: str) -> list[RecognizerResult]:
    """Join adjacent ``STREET_ADDRESS`` parts ("12 Main St" + "Apt. 3") into one result.

    The joined result keeps the strongest part's score and explanation and counts its parts.
    """
    merged: list[RecognizerResult] = []
    for r in results:  # sorted by start
        last = merged[-1] if merged else None
        if (
            last is not None
            and r.entity_type == "STREET_ADDRESS"
            and last.entity_type == "STREET_ADDRESS"
            and r.start >= last.start
            and (
                r.start <= last.end
                or _ADDRESS_JOINER.fullmatch(text, last.end, r.start) is not None
            )
        ):
            best = last if last.score >= r.score else r
            joined = RecognizerResult(
                entity_type="STREET_ADDRESS",
                start=last.start,
                end=max(last.end, r.end),
                score=best.score,
                analysis_explanation=best.analysis_explanation,
                recognition_metadata={
                    **best.recognition_metadata,
                    _PARTS_KEY: int(last.recognition_metadata.get(_PARTS_KEY, 1))
                    + int(r.recognition_metadata.get(_PARTS_KEY, 1)),
                },
            )
            merged[-1] = joined
            continue
        merged.append(r)
    return merged


def _resolve_overlaps(results: Iterable[RecognizerResult]) -> list[RecognizerResult]:
    """Keep, among overlapping results of different entities, the higher score (then longer).

    Results of the same entity never suppress each other here (Presidio already removed the
    contained ones).
    """
    ordered = sorted(results, key=lambda r: (-r.score, -(r.end - r.start), r.start))
    starts: list[int] = []  # kept results, sorted by start
    kept: list[RecognizerResult] = []
    longest = 0
    for r in ordered:
        lo = bisect.bisect_left(starts, r.start - longest)
        hi = bisect.bisect_left(starts, r.end)
        if any(
            kept[i].entity_type != r.entity_type and r.start < kept[i].end for i in range(lo, hi)
        ):
            continue
        i = bisect.bisect_right(starts, r.start)
        starts.insert(i, r.start)
        kept.insert(i, r)
        longest = max(longest, r.end - r.start)
    return sorted(kept, key=lambda r: (r.start, r.end, r.entity_type))
