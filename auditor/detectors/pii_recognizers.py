"""Presidio recognizers of memaudit's own or adapted for memories: e-mail, IBAN, Korean
resident and document numbers, payment cards, phone numbers, driver licences.

Used by :mod:`auditor.detectors.pii` (which documents the behaviour as a whole).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from typing import Any

import phonenumbers
from phonenumbers import Leniency, NumberParseException, PhoneMetadata, PhoneNumber
from phonenumbers.phonenumberutil import (
    _MIN_LENGTH_FOR_NSN,
    _VALID_PUNCTUATION,
    COUNTRY_CODE_TO_REGION_CODE,
)

from auditor.detectors import _pii_terms as terms
from auditor.detectors.pii_presidio import (
    EmailRecognizer,
    EntityRecognizer,
    IbanRecognizer,
    KrBrnRecognizer,
    KrDriverLicenseRecognizer,
    KrFrnRecognizer,
    KrRrnRecognizer,
    NlpArtifacts,
    Pattern,
    PatternRecognizer,
    PhoneRecognizer,
    RecognizerResult,
    ResultAdjuster,
    tldextract,
)

#: Score of a bare digit run that passes a weak Korean check (BRN, driver licence).
UNSEPARATED_SCORE = 0.3
#: Characters before a phone-shaped number searched for a word naming another identifier.
PHONE_TYPE_WINDOW = 30
#: Characters before an RRN / FRN searched for a word naming the other type.
KR_TYPE_WINDOW = 40
#: How far before a Korean account number its account word or bank name may stand, and the
#: score the number gets with it.
KR_ACCOUNT_WINDOW = 24
KR_ACCOUNT_SCORE = 0.6

_NON_DIGIT = re.compile(r"\D")


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


class _TypedResidentNumberRecognizer(ResultAdjuster, PatternRecognizer):
    """Mixin logic for RRN / FRN: drop a checksum failure that another type's word names.

    Subclasses set ``own_words`` and ``other_words`` (lower-case).
    """

    own_words: tuple[str, ...] = ()
    other_words: tuple[str, ...] = ()

    def adjust(
        self, text: str, results: list[RecognizerResult], others: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        """Drop results whose type conflicts with the words before them."""
        kept: list[RecognizerResult] = []
        for result in results:
            window = text[max(0, result.start - KR_TYPE_WINDOW) : result.start].lower()
            named_own = any(w in window for w in self.own_words)
            if (
                text[result.start : result.end].isdigit()
                and not named_own
                and any(w in window for w in terms.PRODUCT_CODE_WORDS)
            ):
                continue  # "SKU 8801234567890": a barcode, whatever its date and checksum
            explanation = result.analysis_explanation
            if explanation is not None and explanation.validation_result is True:
                kept.append(result)
                continue
            named_other = any(w in window for w in self.other_words)
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


class KrBankAccountRecognizer(ResultAdjuster, PatternRecognizer):
    """A Korean bank account number: 10-14 digits in three or four hyphen-separated groups
    ("123456-78-901234", "110-234-567890") right after an account word or a bank's name
    (``kr_bank_account_context`` within :data:`KR_ACCOUNT_WINDOW` characters before it).

    Korean banks write account numbers in their own group patterns and publish no checksum,
    so the shape alone is an order or tracking number as often as an account: a result
    without the word before it is dropped, one with it is reported at :data:`KR_ACCOUNT_SCORE`.
    """

    PATTERNS = (
        Pattern(
            "Korean account (grouped)",
            r"(?<![\d-])\d{2,6}-\d{2,6}-\d{2,8}(?:-\d{1,3})?(?![\d-])",
            KR_ACCOUNT_SCORE,
        ),
    )

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="KR_BANK_ACCOUNT",
            name="KrBankAccountRecognizer",
            supported_language=supported_language,
            patterns=list(self.PATTERNS),
        )

    def validate_result(self, pattern_text: str) -> bool | None:
        """10 to 14 digits (fewer is a date or a short code, more another code), and not a
        Korean phone number (a first group of 2-3 digits opening with 0, 10-11 digits)."""
        digits = _NON_DIGIT.sub("", pattern_text)
        if not 10 <= len(digits) <= 14:
            return False
        first = pattern_text.split("-", 1)[0]
        if first.startswith("0") and len(first) <= 3 and len(digits) <= 11:
            return False
        return None

    def adjust(
        self, text: str, results: list[RecognizerResult], others: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        """Keep a result only when an account word or a bank's name comes just before it."""
        return [
            r
            for r in results
            if any(
                w in text[max(0, r.start - KR_ACCOUNT_WINDOW) : r.start].lower()
                for w in terms.KR_BANK_ACCOUNT_CONTEXT
            )
        ]


def _named_as_other_id(text: str, start: int) -> bool:
    """Whether the words just before ``start`` call the number a non-phone identifier."""
    window = text[max(0, start - PHONE_TYPE_WINDOW) : start].lower()
    return any(w in window for w in terms.NON_PHONE_ID_WORDS) and not any(
        w in window for w in terms.PHONE_TYPE_WORDS
    )


class _PhoneTypeGuard(ResultAdjuster, EntityRecognizer):
    """Drops phone-shaped numbers that the text names as another identifier.

    "사업자등록번호 123-45-67890" or "passport no. 0123 456 789" is not a phone number even
    when it fits a region's phone plan (Presidio's matcher knows dozens of national formats).
    """

    def adjust(
        self, text: str, results: list[RecognizerResult], others: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        """Keep the results not named as another identifier."""
        return [r for r in results if not _named_as_other_id(text, r.start)]


def min_phone_digits(regions: Sequence[str], leniency: int) -> int:
    """The fewest digits a number python-phonenumbers' matcher accepts can have.

    A number is found written nationally for one of ``regions`` (its national significant
    number: at least that region's shortest possible length) or internationally for any
    region (``+`` and the country code, then the number). Lengths come from the library's
    own metadata; local-only lengths count only at the ``POSSIBLE`` leniency (a valid
    number is a whole one).
    """
    shortest: list[int] = []
    wanted = {r.upper() for r in regions}
    for code, region_codes in COUNTRY_CODE_TO_REGION_CODE.items():
        for region in region_codes:
            meta = PhoneMetadata.metadata_for_region_or_calling_code(code, region)
            desc = meta.general_desc if meta is not None else None
            lengths = [*(desc.possible_length or ())] if desc is not None else []
            if desc is not None and leniency <= Leniency.POSSIBLE:
                lengths += [*(desc.possible_length_local_only or ())]
            least = min((n for n in lengths if n > 0), default=_MIN_LENGTH_FOR_NSN)
            shortest.append(len(str(code)) + least)
            if region in wanted:
                shortest.append(least)
    return max(1, min(shortest, default=1))


def phone_digit_gate(least: int) -> re.Pattern[str]:
    """A digit run the matcher's candidates all contain: ``least`` digits, each next one
    at most four of its separator characters away (the matcher's own classes and flags)."""
    punctuation = "[" + _VALID_PUNCTUATION + "]{0,4}"
    return re.compile(rf"\d(?:{punctuation}\d){{{least - 1}}}", re.UNICODE | re.IGNORECASE)


class ContextualPhoneRecognizer(_PhoneTypeGuard, PhoneRecognizer):
    """Presidio's phone-number matcher (python-phonenumbers) with the identifier-type guard.

    The matcher runs once per region and costs about a millisecond a text; a text without
    a run of as many digits as the shortest number it can accept (:func:`min_phone_digits`,
    separators as the matcher allows them) cannot hold one, and is not handed to it.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._leniency = Leniency.VALID if self.leniency is None else int(self.leniency)
        self._gate = phone_digit_gate(min_phone_digits(self.supported_regions, self._leniency))

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        """Presidio's matching loop, on a text that has a long enough digit run, with a
        matcher that remembers its verdicts on candidates (:class:`RememberingMatcher`)."""
        if self._gate.search(text) is None:
            return []
        results: list[RecognizerResult] = []
        for region in self.supported_regions:
            for match in RememberingMatcher(text, region, leniency=self._leniency):
                named = region
                try:  # the region the number belongs to, as Presidio's explanation says it
                    named = phonenumbers.region_code_for_number(
                        phonenumbers.parse(text[match.start : match.end])
                    )
                except NumberParseException:
                    pass
                result = self._get_recognizer_result(  # type: ignore[no-untyped-call]
                    match, text, named, nlp_artifacts
                )
                results.append(result)
        return list(EntityRecognizer.remove_duplicates(results))


#: Candidates whose verdict a matcher remembers (per process, least recently used dropped).
_VERDICTS = 32_768


@functools.lru_cache(maxsize=_VERDICTS)
def _verdict(
    candidate: str, region: str, leniency: int, before: str, after: str
) -> PhoneNumber | None:
    """What the library's matcher makes of ``candidate`` between ``before`` and ``after``
    (each as :func:`_neighbour` classes it, "" at an edge of the text): the number, or None."""
    text = before + candidate + after
    probe = phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency)
    match = phonenumbers.PhoneNumberMatcher._parse_and_verify(probe, candidate, len(before))
    return None if match is None else match.number


def _neighbour(char: str) -> str:
    """A character beside a candidate as the matcher judges it: a Latin letter or a symbol
    it refuses there ("a"), or anything else (" "): all it asks of a neighbour."""
    refused = phonenumbers.PhoneNumberMatcher._is_invalid_punctuation_symbol(
        char
    ) or phonenumbers.PhoneNumberMatcher._is_latin_letter(char)
    return "a" if refused else " "


class RememberingMatcher(phonenumbers.PhoneNumberMatcher):
    """python-phonenumbers' matcher, remembering its verdict on each candidate.

    The matcher finds candidate digit runs and parses and verifies each one: most of the
    cost, and the same candidates ("2024", "10:30", a version number) come back text after
    text. A verdict depends only on the candidate, the region, the leniency and the
    characters just before and after it (the matcher looks at no more of the text, and
    asks of those only whether they are Latin letters or symbols it refuses there), so it
    is remembered under those (:func:`_verdict`). Only at the ``VALID`` leniency and
    below: the stricter ones compare digit groups through the matcher itself.
    """

    def _parse_and_verify(self, candidate: str, offset: int) -> Any:
        if self.leniency > Leniency.VALID:
            return super()._parse_and_verify(candidate, offset)
        end = offset + len(candidate)
        before = _neighbour(self.text[offset - 1]) if offset > 0 else ""
        after = _neighbour(self.text[end]) if end < len(self.text) else ""
        number = _verdict(candidate, self.preferred_region, int(self.leniency), before, after)
        if number is None:
            return None
        return phonenumbers.PhoneNumberMatch(offset, candidate, copy.copy(number))


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
