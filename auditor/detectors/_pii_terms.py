"""Data for :mod:`auditor.detectors.pii`: context words, street vocabularies, group names.

The word lists live in data files beside this module: ``data/pii_terms.yaml`` (context
words, street vocabularies, nationality, religious and political groups; its header gives
the rules) and ``data/pii_country_ids.yaml`` (the country identifier recognizers). Both are
read once, at import, with the bounded YAML loader; a malformed file stops the import with a
:class:`ValueError` that names the file and the entry. The detector modules compile them.
The lists are built from public conventions (USPS Publication 28 street suffixes, European
street-name endings, ISO country demonyms, Korean address and ID vocabulary), not from any
evaluation corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from auditor import safe_yaml

__all__ = [
    "COUNTRY_GATE_STOPWORDS",
    "COUNTRY_IDS",
    "COUNTRY_ID_ENTITIES",
    "ADDRESS_CONTEXT",
    "ADDRESS_CONTEXT_NARROW",
    "AMBIGUOUS_DEMONYMS",
    "CARD_CONTEXT",
    "DEFAULT_ENTITIES",
    "DEMONYMS",
    "DEMONYM_NOUNS",
    "DRIVER_LICENSE_CONTEXT",
    "NOT_STREET_WORDS",
    "EMAIL_CONTEXT",
    "FRN_TYPE_WORDS",
    "IBAN_CONTEXT",
    "KO_ADDRESS_UNITS",
    "KO_NRP_COUNTRIES",
    "KO_NRP_WORDS",
    "KR_BRN_CONTEXT",
    "KR_DRIVER_LICENSE_CONTEXT",
    "KR_FRN_CONTEXT",
    "KR_BANK_ACCOUNT_CONTEXT",
    "KR_PASSPORT_CONTEXT",
    "KR_RRN_CONTEXT",
    "LANGUAGE_USE_AFTER",
    "LANGUAGE_USE_BEFORE",
    "NAME_LIKE_GROUPS",
    "NON_PHONE_ID_WORDS",
    "NRP_CONTEXT",
    "NRP_PERSON_CUES",
    "PHONE_CONTEXT",
    "PHONE_TYPE_WORDS",
    "POLITICAL_GROUPS",
    "RELIGIOUS_GROUPS",
    "RRN_TYPE_WORDS",
    "STREET_COMPOUND_ENDINGS",
    "STREET_PREFIX_TYPES",
    "STREET_SUFFIXES_STRONG",
    "STREET_SUFFIXES_WEAK",
    "UNIT_WORDS",
    "US_DRIVER_LICENSE_CONTEXT",
]

_DATA_DIR = Path(__file__).with_name("data")
#: the word lists (see the file's header)
TERMS_FILE = _DATA_DIR / "pii_terms.yaml"
#: the country identifier recognizers and the context words too common to gate them
COUNTRY_IDS_FILE = _DATA_DIR / "pii_country_ids.yaml"


def _read(path: Path) -> dict[str, Any]:
    doc = safe_yaml.load_file(path, where=path.name)
    if not isinstance(doc, dict):
        raise ValueError(f"{path.name}: a mapping expected at the top level")
    return doc


def _get(doc: dict[str, Any], path: Path, key: str) -> Any:
    if key not in doc:
        raise ValueError(f"{path.name}: {key} is missing")
    return doc[key]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: a non-empty string expected, got {value!r}")
    return value


def _words(doc: dict[str, Any], path: Path, key: str) -> tuple[str, ...]:
    """The list of strings under ``key`` (a word YAML reads as a boolean or null is refused)."""
    value = _get(doc, path, key)
    if not isinstance(value, list) or not value:
        raise ValueError(f"{path.name}: {key}: a non-empty list of strings expected")
    return tuple(_text(v, f"{path.name}: {key}[{i}]") for i, v in enumerate(value))


def _country_ids(doc: dict[str, Any], path: Path) -> tuple[tuple[str, str], ...]:
    """(Presidio recognizer class, entity) rows of ``data/pii_country_ids.yaml``."""
    rows = _get(doc, path, "recognizers")
    if not isinstance(rows, list):
        raise ValueError(f"{path.name}: recognizers: a list expected")
    out: list[tuple[str, str]] = []
    for i, row in enumerate(rows):
        where = f"{path.name}: recognizers[{i}]"
        if not isinstance(row, dict) or set(row) != {"recognizer", "entity"}:
            raise ValueError(f"{where}: a mapping of recognizer and entity expected")
        out.append((_text(row["recognizer"], where), _text(row["entity"], where)))
    return tuple(out)


_IDS = _read(COUNTRY_IDS_FILE)
#: Presidio's country identifier recognizers run beside the US / UK / Korean ones.
COUNTRY_IDS = _country_ids(_IDS, COUNTRY_IDS_FILE)
COUNTRY_ID_ENTITIES = tuple(entity for _, entity in COUNTRY_IDS)
#: Presidio context words too common to decide whether a country recognizer runs.
COUNTRY_GATE_STOPWORDS = frozenset(
    w.lower() for w in _words(_IDS, COUNTRY_IDS_FILE, "gate_stopwords")
)

_TERMS = _read(TERMS_FILE)


def _term(key: str) -> tuple[str, ...]:
    """The word list ``key`` of ``data/pii_terms.yaml``."""
    return _words(_TERMS, TERMS_FILE, key)


#: Entities the ``pii`` detector looks for when a rule does not name its own.
DEFAULT_ENTITIES: tuple[str, ...] = (
    *_term("default_entities"),
    *COUNTRY_ID_ENTITIES,
)

# -- context words (English and Korean; matched as substrings of lower-cased tokens) --------

EMAIL_CONTEXT = _term("email_context")
PHONE_CONTEXT = _term("phone_context")
CARD_CONTEXT = _term("card_context")
IBAN_CONTEXT = _term("iban_context")
US_DRIVER_LICENSE_CONTEXT = _term("us_driver_license_context")
#: English licence words only: Korean licence numbers have a checked format of their own.
DRIVER_LICENSE_CONTEXT = _term("driver_license_context")
KR_RRN_CONTEXT = _term("kr_rrn_context")
KR_FRN_CONTEXT = _term("kr_frn_context")
KR_BRN_CONTEXT = _term("kr_brn_context")
KR_DRIVER_LICENSE_CONTEXT = _term("kr_driver_license_context")
KR_PASSPORT_CONTEXT = _term("kr_passport_context")
KR_BANK_ACCOUNT_CONTEXT = _term("kr_bank_account_context")
#: Words that name the *type* of a Korean resident number (see the data file).
RRN_TYPE_WORDS = _term("rrn_type_words")
PRODUCT_CODE_WORDS = _term("product_code_words")
FRN_TYPE_WORDS = _term("frn_type_words")
#: Words naming a number as a phone number, and words naming it as another identifier.
PHONE_TYPE_WORDS = _term("phone_type_words")
NON_PHONE_ID_WORDS = _term("non_phone_id_words")
ADDRESS_CONTEXT = _term("address_context")
#: Stronger cues for weak address shapes ("Name 12", "12 Name"): someone's place is meant.
ADDRESS_CONTEXT_NARROW = _term("address_context_narrow")
#: Words that make a sentence about a person (for NRP mentions): a regular expression whose
#: lines in the data file are stripped and joined.
NRP_PERSON_CUES = "".join(
    line.strip()
    for line in _text(_get(_TERMS, TERMS_FILE, "nrp_person_cues"), "nrp_person_cues").splitlines()
)
NRP_CONTEXT = _term("nrp_context")

# -- street addresses ----------------------------------------------------------------------

#: Street suffixes that are not ordinary words (any case): USPS Pub. 28 C1 common forms.
STREET_SUFFIXES_STRONG = _term("street_suffixes_strong")
#: Suffixes that are also ordinary words: only capitalised after capitalised names.
STREET_SUFFIXES_WEAK = _term("street_suffixes_weak")
#: Endings of one-word street names in European languages, followed by a house number.
STREET_COMPOUND_ENDINGS = _term("street_compound_endings")
#: Street-type words written before the name (Rua X 12, ul. X 5, 31 rue de X).
STREET_PREFIX_TYPES = _term("street_prefix_types")
#: Words that make a weak "Name 12" / "12 Name" shape something else.
NOT_STREET_WORDS = _term("not_street_words")
#: Apartment / suite designators (a unit number alone is a strong address part).
UNIT_WORDS = _term("unit_words")
#: Korean address units: road (로, 길), neighbourhood (동), building / flat (동 ... 호).
KO_ADDRESS_UNITS = _term("ko_address_units")

# -- nationality, religious and political groups (NRP) --------------------------------------

#: Nationality adjectives; the plural "-s" form is added by the detector where English uses it.
DEMONYMS = _term("demonyms")
#: Person nouns for nationalities (a Brit, two Swedes, an Englishman).
DEMONYM_NOUNS = _term("demonym_nouns")
#: Demonyms that are also common words or names: matched only when capitalised.
AMBIGUOUS_DEMONYMS = _term("ambiguous_demonyms")
#: Words before a language name that make it a language, not a group ("answer in Korean").
LANGUAGE_USE_BEFORE = _term("language_use_before")
#: Words after a language name that make it a language ("English translation").
LANGUAGE_USE_AFTER = _term("language_use_after")
RELIGIOUS_GROUPS = _term("religious_groups")
POLITICAL_GROUPS = _term("political_groups")
#: Group words that are also first names: not matched before another capitalised word.
NAME_LIKE_GROUPS = _term("name_like_groups")
#: Korean country names that take -인 (person), -계 (descent) or 국적 (nationality).
KO_NRP_COUNTRIES = _term("ko_nrp_countries")
#: Korean words for a national, ethnic, religious or political group.
KO_NRP_WORDS = _term("ko_nrp_words")
del _IDS
