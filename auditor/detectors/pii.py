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
* Presidio's country recognizers for other national ids (``data/pii_country_ids.yaml``:
  Spain, Finland, India, Italy, Poland, Sweden, Singapore, Thailand, Türkiye, Australia,
  Canada, Germany, UK, US MBI, South Africa), run only when the text names the id;
* personal data told in prose (:mod:`auditor.detectors.pii_prose`): ``DATE_OF_BIRTH`` after
  a birth word and ``PASSWORD`` (a person's password, PIN or door code), run without spaCy;
* context checks (:mod:`auditor.detectors.pii_filters`): identifiers glued into a longer
  token (hash, UUID, URL path, ``git@host:repo``) are dropped; a phone number needs a phone
  word or phone formatting and is never a date; product / order ids are not phones;
  addresses and phone numbers introduced as a business's or venue's (office, restaurant,
  본사, 매장, a tool's JSON record naming a hotel) do not count unless someone lives there;
  nationality words naming a cuisine, breed or product ("Korean food") are not ``NRP``.

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

Long and hostile texts: Presidio only ever sees chunks of ``chunk_chars``, so its cost per
character is bounded whatever the text's length. That bound matters for Presidio's India
PAN "low" pattern, whose look-aheads scan to the end of their input from every word
(quadratic within one call; it runs only when the text names a PAN). memaudit's own
recognizer patterns use bounded repetition (the street-word pattern reads at most 64
letters before its ending). ``benchmarks/linear_time_bench.py`` prints the cost per
character of every recognizer pattern on hostile inputs.

Prefilter: :meth:`PiiDetector.prefilter_needles` declares what :meth:`_candidates` needs
(a digit, ``@``, a group word, a password word; per country id and licence entity, its
gate words), so a text without any is never handed to Presidio
(:mod:`auditor.detectors.prefilter`).
"""

from __future__ import annotations

import bisect
import logging
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from auditor.detectors import _pii_terms as terms
from auditor.detectors._literals import min_digits
from auditor.detectors.base import (
    DetectContext,
    Detection,
    Detector,
    MemoryView,
    Span,
)
from auditor.detectors.pii_address import (
    ADDRESS_BLOCK_GAP,
    ADDRESS_BLOCK_SCORE,
    PARTS_KEY,
    StreetAddressRecognizer,
    WeakAddressRecognizer,
    merge_address_parts,
)
from auditor.detectors.pii_artifacts import LEMMA_COMPONENT, PreloadedSpacyNlpEngine
from auditor.detectors.pii_artifacts import LazyArtifacts as _LazyArtifacts
from auditor.detectors.pii_context import IndexedContextEnhancer
from auditor.detectors.pii_filters import drop_result
from auditor.detectors.pii_gate import entity_needles
from auditor.detectors.pii_nrp import (
    NRP_TOPIC_SCORE,
    NrpRecognizer,
    mentions_group,
)
from auditor.detectors.pii_presidio import (
    AnalyzerEngine,
    CreditCardRecognizer,
    CryptoRecognizer,
    Doc,
    EntityRecognizer,
    IpRecognizer,
    KrPassportRecognizer,
    Language,
    NhsRecognizer,
    OrderedRecognizerRegistry,
    PatternRecognizer,
    RecognizerResult,
    SpacyRecognizer,
    UkNinoRecognizer,
    UsBankRecognizer,
    UsItinRecognizer,
    UsLicenseRecognizer,
    UsPassportRecognizer,
    UsSsnRecognizer,
    alternation,
    predefined_recognizers,
    spacy,
)
from auditor.detectors.pii_prose import (
    PROSE_ENTITIES,
    PROSE_GATES,
    DateOfBirthRecognizer,
    PasswordRecognizer,
)
from auditor.detectors.pii_recognizers import (
    _TLD_EXTRACTOR,
    KR_TYPE_WINDOW,
    PHONE_TYPE_WINDOW,
    UNSEPARATED_SCORE,
    CardNumberRecognizer,
    CaseFoldingIbanRecognizer,
    ContextualKrBrnRecognizer,
    ContextualKrDriverLicenseRecognizer,
    ContextualPhoneRecognizer,
    DriverLicenceNumberRecognizer,
    GroupedPhoneRecognizer,
    KrBankAccountRecognizer,
    KrPhoneRecognizer,
    OfflineEmailRecognizer,
    TypedKrFrnRecognizer,
    TypedKrRrnRecognizer,
)
from auditor.detectors.prefilter import Needles
from auditor.logging import scrub

__all__ = [
    "ADDRESS_BLOCK_GAP",
    "ADDRESS_BLOCK_SCORE",
    "DEFAULT_ENTITIES",
    "KR_TYPE_WINDOW",
    "NER_ENTITIES",
    "NRP_TOPIC_SCORE",
    "PHONE_TYPE_WINDOW",
    "SUPPORTED_ENTITIES",
    "UNSEPARATED_SCORE",
    "_TLD_EXTRACTOR",
    "PiiDetector",
]

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

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_DIGIT = re.compile(r"\d")

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


# -- the analyzer (built once per configuration and process) --------------------------------


@dataclass(frozen=True)
class _EngineKey:
    ner_model: str | None
    phone_regions: tuple[str, ...]


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
    if not Language.has_factory(LEMMA_COMPONENT):
        Language.component(LEMMA_COMPONENT, func=_lower_lemma)
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
            nlp.add_pipe(LEMMA_COMPONENT, last=True)
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
        KrBankAccountRecognizer(language),
        *_country_recognizers(language),
        StreetAddressRecognizer(language),
        WeakAddressRecognizer(language),
        NrpRecognizer(language),
    ]


def _country_recognizers(language: str) -> list[EntityRecognizer]:
    """Presidio's country identifier recognizers (``data/pii_country_ids.yaml``)."""
    recognizers: list[EntityRecognizer] = []
    for class_name, entity in terms.COUNTRY_IDS:
        cls = getattr(predefined_recognizers, class_name)
        recognizer: EntityRecognizer = cls(supported_language=language)
        if entity not in recognizer.supported_entities:
            raise ValueError(f"pii_country_ids.yaml: {class_name} does not report {entity}")
        recognizers.append(recognizer)
    return recognizers


def _build_analyzer(key: _EngineKey) -> AnalyzerEngine:
    _guard_presidio_logging()
    pipelines = _pipelines(key.ner_model)
    nlp_engine = PreloadedSpacyNlpEngine(pipelines, with_ner=bool(key.ner_model))
    registry = OrderedRecognizerRegistry(supported_languages=list(LANGUAGES))
    for language in LANGUAGES:
        for recognizer in _recognizers(language, key.phone_regions):
            registry.add_recognizer(recognizer)
    if key.ner_model:
        registry.add_recognizer(
            SpacyRecognizer(supported_language="en", supported_entities=list(NER_ENTITIES))
        )
    _prepare(registry)
    return AnalyzerEngine(
        registry=registry,
        nlp_engine=nlp_engine,
        supported_languages=list(LANGUAGES),
        log_decision_process=False,
        context_aware_enhancer=IndexedContextEnhancer(
            context_prefix_count=CONTEXT_PREFIX_WORDS,
            context_suffix_count=CONTEXT_SUFFIX_WORDS,
        ),
    )


def _prepare(registry: OrderedRecognizerRegistry) -> None:
    """Do now what Presidio and tldextract would do on the first text: compile each
    pattern with the flags its recognizer matches with (as Presidio does on first use, with
    the same ``regex`` module) and build the e-mail check's suffix trie.

    The work is the same, only earlier: a scan worker forked after the detectors are built
    inherits it instead of paying it again (a fifth of a second here)."""
    for recognizer in registry.recognizers:
        if not isinstance(recognizer, PatternRecognizer):
            continue
        flags = recognizer.global_regex_flags
        if flags is None:
            continue  # no flags of its own: Presidio compiles with the caller's, on first use
        # Presidio types neither the list nor a Pattern's compiled fields (None until used)
        patterns: list[Any] = recognizer.patterns  # type: ignore[has-type]
        for pattern in patterns:
            if not pattern.compiled_regex or pattern.compiled_with_flags != flags:
                pattern.compiled_with_flags = flags
                pattern.compiled_regex = regex.compile(pattern.regex, flags=flags)
    _TLD_EXTRACTOR("example.com")  # the trie of the bundled public-suffix snapshot


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


def _country_gates() -> dict[str, re.Pattern[str]]:
    """Per country entity: one of its recognizer's context words, as a whole word.

    A bare digit run that passes a foreign checksum (one random 11-digit number in ten is a
    valid PESEL) is far more often an order or account number in an agent's memory than a
    foreign national id, and the country recognizers would add about 40% to the detector's
    cost on every text with digits: they run only when the id is named ("PESEL", "Aadhaar",
    "NIE", "national id", "Steuer-ID").
    """
    gates: dict[str, re.Pattern[str]] = {}
    stop = terms.COUNTRY_GATE_STOPWORDS
    for class_name, entity in terms.COUNTRY_IDS:
        words = getattr(predefined_recognizers, class_name)(supported_language="en").context
        kept = [w for w in words if w and w.lower() not in stop]
        _COUNTRY_WORDS.update(w.lower() for w in kept)
        _WORD_GATES[entity] = tuple(kept)
        named = alternation(kept)
        gates[entity] = re.compile(rf"(?<![^\W\d_])(?i:{named})(?![^\W\d_])")
    return gates


#: every word that names a foreign id (lower case): an ASCII text that contains none of
#: them cannot pass any country gate, so the 26 gate searches are skipped (exact: a gate
#: matches a word case-insensitively, and for ASCII text that is a substring of the lower
#: case text)
_COUNTRY_WORDS: set[str] = set()
#: entity -> the words its gate needs one of (case-insensitive): the prefilter's needles for
#: the entity's own part (country ids, licence numbers)
_WORD_GATES: dict[str, tuple[str, ...]] = {
    "US_DRIVER_LICENSE": tuple(terms.US_DRIVER_LICENSE_CONTEXT),
    "DRIVER_LICENSE": tuple(terms.DRIVER_LICENSE_CONTEXT),
}


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
    "KR_BANK_ACCOUNT": re.compile(r"\d{2}-\d{2}"),
    "UK_NINO": re.compile(r"[A-Za-z]{2} ?\d{2} ?\d{2}"),
    "US_PASSPORT": re.compile(r"\d{9}|[A-Z]\d{8}"),
    "US_BANK_NUMBER": re.compile(r"\d{8}"),
    "CRYPTO": re.compile(r"(?:bc1|[13])[a-zA-HJ-NP-Z0-9]{25}"),
    # weak shapes that only a licence word lifts to a rule's threshold
    "US_DRIVER_LICENSE": re.compile(rf"(?i:{alternation(terms.US_DRIVER_LICENSE_CONTEXT)})"),
    "DRIVER_LICENSE": re.compile(rf"(?i:{alternation(terms.DRIVER_LICENSE_CONTEXT)})"),
    **PROSE_GATES,
    **_country_gates(),
}
#: The fewest digits a match of each gate has: a text with fewer skips the gate's search.
_GATE_DIGITS = {entity: min_digits(gate.pattern, gate.flags) for entity, gate in _GATES.items()}
_COUNTRY_ENTITIES = frozenset(entity for _, entity in terms.COUNTRY_IDS)
#: Entities that need no digit (the others do).
_DIGITLESS = frozenset({"EMAIL_ADDRESS", "NRP", "PASSWORD", *NER_ENTITIES})


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
        self._prose = (DateOfBirthRecognizer("en"), PasswordRecognizer("en"))
        self._analyzer = _analyzer(_EngineKey(self.ner_model, tuple(r.upper() for r in regions)))

    def prefilter_needles(self) -> Mapping[str, Needles]:
        """What :meth:`_candidates` needs to keep an entity (exact, see there), as parts.

        ``identifiers``: a digit (every entity but e-mail, NRP and password), ``@`` / ``＠``
        (e-mail), a group word (NRP, :func:`auditor.detectors.pii_gate.group_needles`) or a
        password word; it alone decides whether the detector runs. ``word:<ENTITY>``: the
        words of an entity's word gate (country ids, licence numbers); without one of them
        the entity is not looked for (it needs a digit too).
        """
        parts = {
            f"word:{entity}": Needles.of(_WORD_GATES[entity])
            for entity in self.entities
            if entity in _WORD_GATES
        }
        return {"identifiers": entity_needles(self.entities), **parts}

    def analyze_parts(
        self, memory: MemoryView, ctx: DetectContext, parts: frozenset[str]
    ) -> list[Detection]:
        """:meth:`analyze`, entities with a word gate looked for only when the word occurs."""
        if "identifiers" not in parts:
            return []
        return self._analyze(memory, parts)

    def _candidates(self, text: str, parts: frozenset[str] | None = None) -> list[str]:
        """The configured entities that could occur in ``text`` (cheap checks first).

        ``parts``: the prefilter's decision (an entity whose ``word:`` part is missing is
        skipped: its gate word is not in the text).
        """
        has_digit = _DIGIT.search(text) is not None
        digits = len(_DIGIT.findall(text)) if has_digit else 0
        # None: unknown yet; only ASCII texts take the shortcut (exact, see _COUNTRY_WORDS)
        country_named: bool | None = None if text.isascii() else True
        if parts is not None:
            country_named = True  # the parts decide, per entity
        wanted: list[str] = []
        for entity in self.entities:
            if entity not in _DIGITLESS and not has_digit:
                continue
            if parts is not None and entity in _WORD_GATES and f"word:{entity}" not in parts:
                continue
            if entity in _COUNTRY_ENTITIES:
                if country_named is None:
                    low = text.lower()
                    country_named = any(w in low for w in _COUNTRY_WORDS)
                if not country_named:
                    continue
            gate = _GATES.get(entity)
            if gate is not None and (_GATE_DIGITS[entity] > digits or gate.search(text) is None):
                continue
            if entity == "NRP" and not mentions_group(text):
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
        return self._analyze(memory, None)

    def _analyze(self, memory: MemoryView, parts: frozenset[str] | None) -> list[Detection]:
        text = memory.fact
        candidates = self._candidates(text, parts)
        if not candidates:
            return []
        wanted = [e for e in candidates if e not in PROSE_ENTITIES]
        wanted_prose = [e for e in candidates if e in PROSE_ENTITIES]
        language = self._language(text)
        found: dict[tuple[str, int, int], RecognizerResult] = {}
        for offset, piece in _chunks(text, self.chunk_chars) if wanted else ():
            lazy = _LazyArtifacts(self._analyzer, piece, language)
            for r in self._analyzer.analyze(
                piece,
                language,
                entities=wanted,
                return_decision_process=True,
                nlp_artifacts=lazy,  # type: ignore[arg-type]
            ):
                if r.score < self.min_score:
                    continue
                r.start += offset
                r.end += offset
                key = (r.entity_type, r.start, r.end)
                if key not in found or found[key].score < r.score:
                    found[key] = r
        results = [r for r in found.values() if not drop_result(text, r)]
        for recognizer in self._prose:
            results.extend(
                r for r in recognizer.analyze(text, wanted_prose) if r.score >= self.min_score
            )
        kept = merge_address_parts(_resolve_overlaps(results), text)
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
        parts = int(r.recognition_metadata.get(PARTS_KEY, 1))
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
