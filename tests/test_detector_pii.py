"""The ``pii`` detector: Presidio offline, Korean identifiers, memaudit's own recognizers.

Tables of (text, entity, expected value): the detector must find the value at the right
offsets, with the right entity; the negative tables must find nothing of that entity.
"""

from __future__ import annotations

import logging
import socket
import threading
from datetime import UTC, datetime
from typing import Any, ClassVar

import pytest

from auditor.config import load_settings
from auditor.detectors import build, pii_context
from auditor.detectors import pii as pii_module
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.pii import PiiDetector
from tests.corpora import train_texts

CTX = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=load_settings())


@pytest.fixture(scope="module")
def detector() -> PiiDetector:
    return PiiDetector({})


def view(text: str, memory_id: str = "m1") -> MemoryView:
    return MemoryView(memory_id=memory_id, subject="user:t", fact=text, trust_tier="user")


def found(detector: PiiDetector, text: str) -> list[tuple[str, str, Detection]]:
    """(entity, matched text, detection) for every detection in ``text``."""
    out = []
    for d in detector.analyze(view(text), CTX):
        span = d.spans[0]
        out.append((d.entity, text[span.start : span.end], d))
    return out


#: The threshold the MA-PII rules apply (the detector reports from 0.3).
RULE_MIN_SCORE = 0.4


def values(detector: PiiDetector, text: str, entity: str) -> list[str]:
    """Values of ``entity`` that the rules report (score >= the rules' threshold)."""
    return [
        value
        for ent, value, d in found(detector, text)
        if ent == entity and d.score >= RULE_MIN_SCORE
    ]


# -- positives: entity and exact value (span offsets) ------------------------------------

POSITIVES = [
    # Korean resident numbers: checksum-valid (score 1.0) and post-2020 (no checksum)
    ("주민등록번호: 850101-1234566 (사용자 본인)", "KR_RRN", "850101-1234566"),
    ("주민번호 9203152345674로 본인 확인", "KR_RRN", "9203152345674"),
    ("Korean resident registration no. 010707-3123452 on file", "KR_RRN", "010707-3123452"),
    ("His RRN is 850101-1234567", "KR_RRN", "850101-1234567"),
    ("외국인등록번호 880505-5123458 기재", "KR_FRN", "880505-5123458"),
    ("Foreigner registration number 950820-6123454", "KR_FRN", "950820-6123454"),
    # Korean documents
    ("여권 번호 M482K1937 (만료 2030년)", "KR_PASSPORT", "M482K1937"),
    ("면허증 번호는 12-24-381204-55", "KR_DRIVER_LICENSE", "12-24-381204-55"),
    ("운전면허 122438120455 갱신", "KR_DRIVER_LICENSE", "122438120455"),
    ("거래처 사업자등록번호: 220-81-12341", "KR_BRN", "220-81-12341"),
    ("사업자번호 1208645678 확인", "KR_BRN", "1208645678"),
    # cards (Luhn), IBAN (mod 97), SSN, IP, e-mail
    ("Visa card 4111 1111 1111 1111 on file", "CREDIT_CARD", "4111 1111 1111 1111"),
    ("Mastercard 5500-0000-0000-0004", "CREDIT_CARD", "5500-0000-0000-0004"),
    ("Amex 378282246310005 expires soon", "CREDIT_CARD", "378282246310005"),
    ("card 2221000000000009 for the subscription", "CREDIT_CARD", "2221000000000009"),
    ("카드번호 4111111111111111로 결제", "CREDIT_CARD", "4111111111111111"),
    ("Pay from IBAN GB82 WEST 1234 5698 7654 32.", "IBAN_CODE", "GB82 WEST 1234 5698 7654 32"),
    ("rent goes to gb82west12345698765432", "IBAN_CODE", "gb82west12345698765432"),
    ("User's SSN is 536-22-8726.", "US_SSN", "536-22-8726"),
    ("Logged in from 81.2.69.160 yesterday", "IP_ADDRESS", "81.2.69.160"),
    ("Router at 2001:db8:85a3::8a2e:370:7334", "IP_ADDRESS", "2001:db8:85a3::8a2e:370:7334"),
    ("Reach her at jane.roe@example.com today", "EMAIL_ADDRESS", "jane.roe@example.com"),
    ("이메일은 minsu.kim@example.co.kr 이다", "EMAIL_ADDRESS", "minsu.kim@example.co.kr"),
    # phones: US / UK plans, +country code, Korean, digit groups with a phone word
    ("Call me on (415) 555-2671 after five", "PHONE_NUMBER", "(415) 555-2671"),
    ("Her number is +44 7700 900123.", "PHONE_NUMBER", "+44 7700 900123"),
    ("사용자 연락처는 010-2345-6789이다.", "PHONE_NUMBER", "010-2345-6789"),
    ("전화 02-3456-7890으로 예약함", "PHONE_NUMBER", "02-3456-7890"),
    ("Mobile: 0612 48 30 77", "PHONE_NUMBER", "0612 48 30 77"),
    ("They're not answering at 58-21-47-90", "PHONE_NUMBER", "58-21-47-90"),
    # driver licences named by a licence word
    ("Driver license no. 5567-21-9043 (Oregon)", "DRIVER_LICENSE", "5567-21-9043"),
    ("National Insurance number JG 10 37 21 A", "UK_NINO", "JG 10 37 21 A"),
    # street addresses
    ("User lives at 221B Baker Street, London.", "STREET_ADDRESS", "221B Baker Street"),
    ("Her flat is at Vesterbrogade 12, Copenhagen.", "STREET_ADDRESS", "Vesterbrogade 12"),
    ("Mailing address: Rua Augusta 1200, Lisboa", "STREET_ADDRESS", "Rua Augusta 1200"),
    ("Send it to PO Box 4471 please", "STREET_ADDRESS", "PO Box 4471"),
    ("Unit 7194 Box 5854\nDPO AE 73472", "STREET_ADDRESS", "Unit 7194 Box 5854\nDPO AE 73472"),
    (
        "사용자 주소는 서울특별시 강남구 테헤란로 152이다.",
        "STREET_ADDRESS",
        "서울특별시 강남구 테헤란로 152",
    ),
    ("우리 집은 101동 1203호야.", "STREET_ADDRESS", "101동 1203호"),
    ("Jane lives at Kvarnvägen 7", "STREET_ADDRESS", "Kvarnvägen 7"),
    ("Billing address: Ostra 14", "STREET_ADDRESS", "Ostra 14"),
    # nationality / religious / political groups about a person
    ("User is Cambodian and moved to Leeds.", "NRP", "Cambodian"),
    ("Her parents are Saudis living in Jeddah.", "NRP", "Saudis"),
    ("사용자는 베트남인이다.", "NRP", "베트남인"),
    ("His family is Sunni.", "NRP", "Sunni"),
]


@pytest.mark.parametrize(("text", "entity", "value"), POSITIVES)
def test_finds_value_with_entity_and_offsets(
    detector: PiiDetector, text: str, entity: str, value: str
) -> None:
    assert value in values(detector, text, entity)


# -- negatives: look-alikes that must not be reported as that entity ----------------------

NEGATIVES = [
    # RRN / FRN: bad date, bad gender digit, wrong separator, too long
    ("주민번호 851301-1234566은 잘못된 형식", "KR_RRN"),
    ("주민등록번호 850101-0234566", "KR_RRN"),
    ("주민등록번호 850101+1234566", "KR_RRN"),
    ("주민등록번호 850101-12345661", "KR_RRN"),
    # an RRN-shaped number called an FRN, failing its checksum: mistyped
    ("외국인등록번호 850101-1234567을 적었다.", "KR_RRN"),
    ("주민등록번호 880505-5123450", "KR_FRN"),
    # Korean documents: invalid format / region / checksum; bare digits without context
    ("여권 번호 A123B4567", "KR_PASSPORT"),
    ("여권번호 M123-A4567", "KR_PASSPORT"),
    ("운전면허번호 99-24-381204-55", "KR_DRIVER_LICENSE"),
    ("part F162823540116 in stock", "KR_DRIVER_LICENSE"),
    ("사업자등록번호 220-81-12342", "KR_BRN"),
    ("fax 3660170549", "KR_BRN"),
    # cards: Luhn failure, too short
    ("Order 4111 1111 1111 1112 shipped", "CREDIT_CARD"),
    ("ticket 4111 1111 11", "CREDIT_CARD"),
    # IBAN checksum failure, SSN invalid area, IP out of range, e-mail without a suffix
    ("IBAN GB83 WEST 1234 5698 7654 32", "IBAN_CODE"),
    ("SSN 000-12-3456", "US_SSN"),
    ("Version 999.1.1.1 released", "IP_ADDRESS"),
    ("mail root@localhost for logs", "EMAIL_ADDRESS"),
    # phones: named as another identifier, dates, bare numbers without a phone word
    ("세금계산서용 사업자등록번호 110-81-41270", "PHONE_NUMBER"),
    ("passport no. 0612 48 30 77", "PHONE_NUMBER"),
    ("Meeting on 2026-05-14 10:30 about calls", "PHONE_NUMBER"),
    ("The ticket number is 4821 9937.", "PHONE_NUMBER"),
    # addresses: things with numbers that are not places
    ("Upgraded the laptop to Windows 11 last week.", "STREET_ADDRESS"),
    ("Read chapter 12 of Clean Code.", "STREET_ADDRESS"),
    ("EMAIL_FROM: a@b.example | RECEIVED DATE: Mon, 6 Mar 2022 09:10:12", "STREET_ADDRESS"),
    ("The corner of {street_name} and {street_name}", "STREET_ADDRESS"),
    ("Ran 3 test suite 4 times", "STREET_ADDRESS"),
    ("친구 집으로 3명이 모였다", "STREET_ADDRESS"),
    # NRP: languages, verbs, topics without a person
    ("Always answer in Korean.", "NRP"),
    ("Prefers the English version of the docs.", "NRP"),
    ("Polish the README before the release.", "NRP"),
    ("How is the German economy doing?", "NRP"),
    ("My religion does not allow that.", "NRP"),
]


@pytest.mark.parametrize(("text", "entity"), NEGATIVES)
def test_look_alikes_are_not_reported(detector: PiiDetector, text: str, entity: str) -> None:
    assert values(detector, text, entity) == []


# -- scores, validation and explanations --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "entity", "score", "validation"),
    [
        ("주민등록번호 850101-1234566", "KR_RRN", 1.0, True),  # checksum valid
        ("주민등록번호 850101-1234567", "KR_RRN", 0.85, None),  # post-2020: pattern + context
        ("850101-1234567", "KR_RRN", 0.5, None),  # pattern alone
        ("card 4111 1111 1111 1111", "CREDIT_CARD", 1.0, True),
        ("jane.roe@example.com", "EMAIL_ADDRESS", 1.0, True),
    ],
)
def test_scores_follow_validation_and_context(
    detector: PiiDetector, text: str, entity: str, score: float, validation: bool | None
) -> None:
    (hit,) = [d for ent, _, d in found(detector, text) if ent == entity]
    assert hit.score == pytest.approx(score)
    assert hit.details["validation"] is validation
    assert hit.detector == "pii" and hit.memory_ids == ("m1",)


def test_group_mention_without_a_person_scores_below_the_rules(detector: PiiDetector) -> None:
    (hit,) = [d for ent, _, d in found(detector, "The Germans won the final yesterday.")]
    assert hit.entity == "NRP" and hit.score < RULE_MIN_SCORE


def test_korean_text_runs_korean_pipeline_with_generic_recognizers(detector: PiiDetector) -> None:
    text = "사용자 이메일 minsu@example.com, 카드 4111 1111 1111 1111, 주민번호 850101-1234566"
    hits = {ent: d for ent, _, d in found(detector, text)}
    assert {"EMAIL_ADDRESS", "CREDIT_CARD", "KR_RRN"} <= set(hits)
    assert {d.details["language"] for d in hits.values()} == {"ko"}


def test_adjacent_address_parts_are_one_detection(detector: PiiDetector) -> None:
    text = "The address of the flat is 6750 Koskikatu 25 Apt. 864 in Oulu"
    addresses = [(v, d) for ent, v, d in found(detector, text) if ent == "STREET_ADDRESS"]
    assert [v for v, _ in addresses] == ["6750 Koskikatu 25 Apt. 864"]
    assert addresses[0][1].details["parts"] >= 2


SENSITIVE_TEXTS = [
    "Reach her at jane.roe@example.com or 010-2345-6789",
    "주민등록번호: 850101-1234566, 여권 M482K1937",
    "Visa 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32, SSN 536-22-8726",
    "User lives at 221B Baker Street; logged in from 81.2.69.160",
    "User is Cambodian and his licence number is 5567-21-9043",
]


@pytest.mark.parametrize("text", SENSITIVE_TEXTS)
def test_reasons_and_details_never_contain_the_value(detector: PiiDetector, text: str) -> None:
    hits = found(detector, text)
    assert hits
    for _, value, d in hits:
        assert value not in d.reason
        assert value not in repr(dict(d.details))
        assert value.replace(" ", "") not in repr(dict(d.details)).replace(" ", "")


# -- offline, logging, engine cache, params ---------------------------------------------------


def test_email_validation_never_uses_network_or_disk(
    detector: PiiDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    extractor = pii_module._TLD_EXTRACTOR
    assert extractor.suffix_list_urls == ()
    assert extractor._cache.enabled is False

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert values(detector, "write to someone@example.org", "EMAIL_ADDRESS")


def test_presidio_log_records_are_redacted(detector: PiiDetector) -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    presidio_logger = logging.getLogger("presidio-analyzer")
    presidio_logger.addHandler(handler)
    try:
        presidio_logger.error("Failed to validate text %s", "GB82WEST12345698765432")
        presidio_logger.warning("value jane.roe@example.com seen")
    finally:
        presidio_logger.removeHandler(handler)
    messages = [r.getMessage() for r in records]
    assert messages and all("GB82WEST" not in m and "jane.roe@" not in m for m in messages)


def test_analyzer_is_built_once_per_configuration() -> None:
    a = PiiDetector({"entities": ["EMAIL_ADDRESS"]})
    b = PiiDetector({"entities": ["PHONE_NUMBER"], "min_score": 0.5})
    c = PiiDetector({"phone_regions": ["US"]})
    assert a._analyzer is b._analyzer
    assert c._analyzer is not a._analyzer
    assert build("pii", {}) is build("pii", {})


def test_the_built_analyzer_has_done_its_first_text_work(detector: PiiDetector) -> None:
    """Building the detector compiles every Presidio pattern with its recognizer's flags and
    builds the e-mail check's suffix trie, so that a forked scan worker inherits both."""
    from auditor.detectors.pii_presidio import PatternRecognizer
    from auditor.detectors.pii_recognizers import _TLD_EXTRACTOR

    recognizers = [
        r for r in detector._analyzer.registry.recognizers if isinstance(r, PatternRecognizer)
    ]
    patterns = [(r, p) for r in recognizers for p in r.patterns]
    assert len(patterns) > 50
    for recognizer, pattern in patterns:
        assert pattern.compiled_regex is not None, pattern.name
        assert pattern.compiled_with_flags == recognizer.global_regex_flags, pattern.name
    assert _TLD_EXTRACTOR._extractor is not None
    # the prepared patterns are the ones Presidio matches with: no compile on the first text
    before = {id(p): p.compiled_regex for _, p in patterns}
    assert found(detector, "write to jane.roe@example.com or call 415-555-0132")
    assert all(p.compiled_regex is before[id(p)] for _, p in patterns)


def test_concurrent_analysis_gives_the_same_results(detector: PiiDetector) -> None:
    texts = SENSITIVE_TEXTS * 4
    expected = [[(d.entity, d.spans) for d in detector.analyze(view(t), CTX)] for t in texts]
    results: dict[int, list[Any]] = {}

    def work(i: int) -> None:
        results[i] = [(d.entity, d.spans) for d in detector.analyze(view(texts[i]), CTX)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[i] for i in range(len(texts))] == expected


def test_long_text_is_chunked_with_correct_offsets() -> None:
    detector = PiiDetector({"chunk_chars": 1000})
    text = ("filler words only here. " * 200) + "mail jane.roe@example.com now"
    (hit,) = [d for d in detector.analyze(view(text), CTX) if d.entity == "EMAIL_ADDRESS"]
    assert text[hit.spans[0].start : hit.spans[0].end] == "jane.roe@example.com"


def test_text_without_candidates_skips_presidio(
    detector: PiiDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_args: Any, **_kwargs: Any) -> list[Any]:
        raise AssertionError("Presidio should not run")

    monkeypatch.setattr(detector._analyzer, "analyze", boom)
    assert detector.analyze(view("Prefers dark mode and short answers."), CTX) == []


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"entities": ["NOT_AN_ENTITY"]}, "entities"),
        ({"entities": "EMAIL_ADDRESS"}, "entities"),
        ({"entities": ["PERSON"]}, "entities"),
        ({"min_score": 2}, "min_score"),
        ({"language": "fr"}, "language"),
        ({"phone_regions": ["USA"]}, "phone_regions"),
        ({"chunk_chars": 10}, "chunk_chars"),
        ({"ner_model": "memaudit_no_such_model"}, "ner_model"),
        ({"typo": 1}, "typo"),
    ],
)
def test_bad_params_name_the_parameter(params: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        PiiDetector(params)


def test_entities_param_limits_what_is_reported() -> None:
    only_email = PiiDetector({"entities": ["EMAIL_ADDRESS"]})
    text = "jane.roe@example.com, 010-2345-6789"
    assert [d.entity for d in only_email.analyze(view(text), CTX)] == ["EMAIL_ADDRESS"]


def test_indexed_context_enhancer_finds_presidio_token() -> None:
    from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer

    analyzer = pii_module._analyzer(pii_module._EngineKey(None, pii_module.DEFAULT_PHONE_REGIONS))
    text = "Call  me on 010-2345-6789, or mail jane.roe@example.com; 주민번호 850101-1234566."
    artifacts = analyzer.nlp_engine.process_text(text, "en")
    tokens, indices = artifacts.tokens, artifacts.tokens_indices
    for start in range(len(text) - 1):
        expected = LemmaContextAwareEnhancer._find_index_of_match_token(
            text[start:], start, tokens, indices
        )
        got = pii_context.IndexedContextEnhancer._find_index_of_match_token(
            text[start:], start, tokens, indices
        )
        assert got == expected, start


def test_presidio_and_spacy_do_not_load_pytorch() -> None:
    """With torch installed (the mem0 extra), the PII detector must not drag it into every
    process (~400 MB), and must not make a later real import of it fail."""
    import subprocess
    import sys

    code = (
        "import sys, importlib.util\n"
        "import auditor.detectors.pii\n"
        "from auditor.rulepack.pack import load_pack\n"
        "from auditor.rulepack.engine import Engine\n"
        "Engine(load_pack().active())\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
        "if importlib.util.find_spec('torch') is not None:\n"
        "    import torch\n"
        "    if importlib.util.find_spec('transformers') is not None:\n"
        "        import transformers\n"
        "        assert transformers.is_torch_available()\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


_CONTEXT_TEXTS = [
    "Call me on 010-2345-6789 after six.",
    "My phone number is 212-555-0147, the office one is 212-555-0199.",
    "Order 4829174650 shipped on 2026-01-03.",
    "SSN 078-05-1120 on the tax form, card 4111 1111 1111 1111 expires 09/28.",
    "Reach the team at ops@example.org or 192.168.10.24.",
    "주민등록번호 900101-1234568 로 가입했어요.",
    "Lives at 17 Larkspur Lane, Apt 4B, Portland, OR 97205.",
    "Nothing personal here at all.",
    "passport number X4829174, driver licence D1234567",
]


class _EagerArtifacts:
    """Presidio's own NLP artifacts, computed up front for every text (its default)."""

    tokenised: ClassVar[list[str]] = []  # the texts it was made for

    def __init__(self, engine: Any, text: str, language: str) -> None:
        self.tokenised.append(text)
        self._real = engine.nlp_engine.process_text(text, language)

    def __bool__(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._real, name)


def test_lazy_nlp_artifacts_give_the_same_results_as_tokenising_every_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    det = PiiDetector({})
    views = [MemoryView(f"m{i}", "user:x", t, "user") for i, t in enumerate(_CONTEXT_TEXTS)]
    lazy = [det.analyze(v, CTX) for v in views]
    _EagerArtifacts.tokenised.clear()
    monkeypatch.setattr(pii_module, "_LazyArtifacts", _EagerArtifacts)
    eager = [det.analyze(v, CTX) for v in views]
    assert lazy == eager
    # the texts did reach Presidio, with context to enhance
    assert any(lazy) and _EagerArtifacts.tokenised


def test_the_country_word_shortcut_gives_the_same_candidates_as_every_gate() -> None:
    det = PiiDetector({})
    texts = [
        *_CONTEXT_TEXTS,
        "My PESEL is 44051401359.",
        "Aadhaar number 2345 6789 0123 on file.",
        "STEUER-ID 12345678911 für die Lohnabrechnung.",
        "Order 4829174650 shipped.",
        "Sein Personalausweis hat die Nummer T22000129.",
    ]

    def every_gate(text: str) -> list[str]:
        has_digit = pii_module._DIGIT.search(text) is not None
        wanted = []
        for entity in det.entities:
            if entity not in pii_module._DIGITLESS and not has_digit:
                continue
            gate = pii_module._GATES.get(entity)
            if gate is not None and gate.search(text) is None:
                continue
            if entity == "NRP" and not pii_module.mentions_group(text):
                continue
            wanted.append(entity)
        return wanted

    assert [det._candidates(t) for t in texts] == [every_gate(t) for t in texts]
    assert any(e in pii_module._COUNTRY_ENTITIES for t in texts for e in det._candidates(t))


def test_the_gate_is_the_identifiers_part_of_the_built_detector() -> None:
    # the engine builds the detector only for a memory that passes the gate: the gate must
    # be exactly what the built detector's run-deciding part needs
    from auditor.detectors.pii_gate import identifier_needles
    from auditor.rulepack.pack import load_pack

    shipped = [dict(r.params) for r in load_pack().rules if r.detector == "pii"]
    assert shipped
    single = [
        {"entities": [e]} for e in pii_module.SUPPORTED_ENTITIES if e not in pii_module.NER_ENTITIES
    ]
    for params in [{}, *shipped, *single]:
        built = PiiDetector(params).prefilter_needles()["identifiers"]
        assert identifier_needles(params) == built, params
    gate = identifier_needles({"entities": ["EMAIL_ADDRESS", "PERSON"], "ner_model": "m"})
    assert gate is not None and gate.always
    assert identifier_needles({"entities": ["NO_SUCH_ENTITY"]}) is None
    assert identifier_needles({"entities": "EMAIL_ADDRESS"}) is None


def test_entity_needles_are_remembered_and_equal_a_fresh_reading() -> None:
    from auditor.detectors import pii_gate

    entities = list(pii_module.DEFAULT_ENTITIES)
    first = pii_gate.entity_needles(entities)
    assert pii_gate.entity_needles(iter(entities)) is first  # not folded again
    assert pii_gate._entity_needles.__wrapped__(tuple(entities)) == first
    assert pii_gate.entity_needles(["EMAIL_ADDRESS"]).literals == frozenset({"@", "＠"})


def test_token_artifacts_equal_presidios_own_on_the_corpora_texts() -> None:
    """The cheap artifacts (no spaCy Token objects, cached keyword tests) hold the same
    values as Presidio's spaCy engine computes over the blank pipeline, on every eighth text
    of the labelled corpora (English and Korean, tool outputs, pages), and the detector
    finds the same with either."""
    from auditor.detectors.pii_artifacts import KeywordList, token_artifacts

    pool = train_texts()
    det = PiiDetector({})
    analyzer = det._analyzer
    nlp = analyzer.nlp_engine
    texts = [p.fact for p in pool[::8]]
    texts += ["", "   ", "e-mail: a@b.example; tel. 010-1234-5678 (work)", "İstanbul ſtraße"]
    compared = 0
    for text in texts:
        for language in ("en", "ko"):
            real = nlp.process_text(text, language)
            fast = token_artifacts(nlp, text, language)
            assert fast.tokens == [t.text for t in real.tokens], text[:60]
            assert fast.tokens_indices == real.tokens_indices
            assert fast.lemmas == real.lemmas
            assert list(fast.keywords) == real.keywords
            assert list(fast.entities) == list(real.entities) == []
            compared += 1
    assert compared > 1000  # the sample is real work
    words = KeywordList(["phone", "call"])
    assert "phone" in words and "fax" not in words and list(words) == ["phone", "call"]

    views = [MemoryView(f"m{i}", "user:x", t, "user") for i, t in enumerate(texts)]
    fast_found = [det.analyze(v, CTX) for v in views]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pii_module, "_LazyArtifacts", _EagerArtifacts)
        real_found = [det.analyze(v, CTX) for v in views]
    assert fast_found == real_found
    assert sum(map(len, fast_found)) > 100
    assert any(d.details.get("context_word") for found in fast_found for d in found)


def test_the_phone_matcher_gate_never_hides_a_number_the_matcher_finds() -> None:
    """The digit-run gate before python-phonenumbers' matcher is exact: on the corpora's
    texts and on short and odd numbers (Austria's 4-digit ones, full-width digits, 'x'
    and bracket separators, extensions) the gated recognizer finds what the matcher finds."""
    from auditor.detectors.pii_presidio import PhoneRecognizer
    from auditor.detectors.pii_recognizers import ContextualPhoneRecognizer, min_phone_digits

    pool = train_texts()
    odd = [
        "call +43 1234 now",
        "Büro +49 30 1234, Fax +49 30 12345",
        "(555) 123-4567 or 555.123.4567 x 89",
        "ChildLine 0800 1111",
        "tel:+44 20 7946 0958",
        "＋４４ ２０ ７９４６ ０９５８",
        "+1 (555) 123-4567 ext. 123",
        "+31x6x1234x5678",
        "1 2 3 4 5",
        "12345",
        # a candidate's neighbours decide too: the remembered verdicts must tell them apart
        "abc2025550123 and 2025550123 and 2025550123def",
        "$2025550123, %2025550123, €2025550123 or (202) 555-0123",
        "x(202) 555-0123y; (202) 555-0123.",
    ]
    texts = [p.fact for p in pool[::4] if any(c.isdigit() for c in p.fact)] + odd + odd
    for regions in (["US", "UK"], ["US", "GB", "DE", "KR"]):
        gated = ContextualPhoneRecognizer(supported_language="en", supported_regions=regions)
        plain = PhoneRecognizer(supported_language="en", supported_regions=regions)
        found = skipped = 0
        for text in texts:
            want = sorted((r.start, r.end, r.score) for r in plain.analyze(text, ["PHONE_NUMBER"]))
            got = sorted((r.start, r.end, r.score) for r in gated.analyze(text, ["PHONE_NUMBER"]))
            assert got == want, text[:80]
            found += len(want)
            skipped += gated._gate.search(text) is None
        assert found > 50 and skipped > 300  # real numbers found, and real texts spared
    assert min_phone_digits(["US", "UK"], 1) == 6  # "+43" and a 4-digit Austrian number


def test_the_remembering_phone_matcher_finds_what_the_library_matcher_finds() -> None:
    """Verdicts remembered per candidate and neighbours: the same matches and numbers as the
    library's matcher at every leniency, on the corpora's texts and candidates whose
    neighbour (a letter, a currency sign, a bracket, an edge) changes the verdict."""
    import phonenumbers

    from auditor.detectors.pii_recognizers import RememberingMatcher, _verdict

    odd = [
        "abc2025550123 2025550123 2025550123def 2025550123",
        "$2025550123 %2025550123 2025550123% 2025550123",
        "(202) 555-0123y (202) 555-0123 +1 202 555 0123x",
        "2025550123",
    ]
    texts = [p.fact for p in train_texts()[::6] if any(c.isdigit() for c in p.fact)] + odd
    _verdict.cache_clear()
    found = 0
    for leniency in (
        phonenumbers.Leniency.POSSIBLE,
        phonenumbers.Leniency.VALID,
        phonenumbers.Leniency.STRICT_GROUPING,
    ):
        for region in ("US", "GB", "KR"):
            for text in texts:
                want = [
                    (m.start, m.end, m.number)
                    for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency)
                ]
                got = [
                    (m.start, m.end, m.number)
                    for m in RememberingMatcher(text, region, leniency=leniency)
                ]
                assert got == want, (leniency, region, text[:80])
                found += len(want)
    assert found > 100
    assert _verdict.cache_info().hits > 1000  # remembered, not re-parsed


def test_needle_gated_address_patterns_find_what_the_plain_patterns_find() -> None:
    """A gated pattern skips texts without one of its literals; on the corpora's texts and
    on street names in odd cases (upper case, long s, sharp s, Korean around them) the
    recognizers find exactly what the same patterns find ungated."""
    from auditor.detectors.pii_address import (
        GatedPattern,
        StreetAddressRecognizer,
        WeakAddressRecognizer,
    )
    from auditor.detectors.pii_presidio import Pattern

    pool = train_texts()
    odd = [
        "She moved to Hauptstraße 5 last May.",
        "HAUPTSTRASSE 5, Berlin",
        "Storgatan 12 and Kungsvägen 3",
        "Lives at Østergade 14, 2. th.",
        "우리 집은 Hauptſtraße 7 근처",
        "office: Rua das Flores 120, Lisboa",
        "AVENIDA PAULISTA 1578",
        "Calle Mayor, 3",
        # every other gated shape, in odd cases too
        "P.O. Box 123 or PO BOX 77, Post Office Box 9",
        "PSC 1234, Box 5678 / UNIT 2050 BOX 4190",
        "APO AE 09012 and fpo ap 96601",
        "at the Corner of 5th Ave and Main",
        "Apt 4B, SUITE 200, Ste. 12, apartment #7",
        "12 rue de la Paix, 3 RUE Lepic, 5 Via Roma, 8 allée des Roses",
        "10 Downing Street, 221B Baker St., 1600 Pennsylvania AVENUE",
        "12 main street and 40 old mill road",
        "서울특별시 강남구 테헤란로 123, 101동 1203호",
        "테헤란로 12-3 근처, 세종대로 110",
        # what follows a street ending (the "follow" gate): a dot, tabs, other digits
        "Hauptstraße. 5, HAUPTSTRASSE.\t5a, Kungsvägen  3, Østergade\n14",
        "Hauptstraße ٣ and Storgatan\t\t12b; the gatan 4 and strasse 9",
        "Straßenfest at the Hauptstraße, no number; vägen-12 and gade12",
        "Hauptstraße \U00011f50\U00011f51",  # Kawi digits: the regex module knows them
        "Storgatan \u0663 and Kungsvägen \uff11\uff12",
    ]
    texts = [p.fact for p in pool[::4] if any(c.isdigit() for c in p.fact)] + odd
    for kind in (StreetAddressRecognizer, WeakAddressRecognizer):
        for language in ("en", "ko"):
            gated = kind(language)
            plain = kind(language)
            plain.patterns = [Pattern(p.name, p.regex, p.score) for p in plain.patterns]
            assert any(isinstance(p, GatedPattern) for p in gated.patterns)
            found = 0
            for text in texts:
                want = sorted(
                    (r.start, r.end, r.score) for r in plain.analyze(text, ["STREET_ADDRESS"])
                )
                got = sorted(
                    (r.start, r.end, r.score) for r in gated.analyze(text, ["STREET_ADDRESS"])
                )
                assert got == want, text[:80]
                found += len(want)
            assert found > 30
    with pytest.raises(ValueError, match="no needles"):
        GatedPattern("x", r"\d", 0.5, [])


def test_a_follow_gate_skips_the_regex_where_no_needle_has_its_follower() -> None:
    """``follow``: the regex is not run on a text whose needles are not followed as every
    match needs (here an ending without a house number after it)."""
    from auditor.detectors.pii_address import GatedPattern

    pattern = GatedPattern("x", r"\w*gatan\.? +\d+", 0.5, ["gatan"], follow=r"\.? +\d")
    calls: list[str] = []

    class Spy:
        def finditer(self, text: str, *args: object, **kwargs: object) -> list[str]:
            calls.append(text)
            return []

    pattern.compiled_regex = Spy()
    assert list(pattern.compiled_regex.finditer("Storgatan, no number here")) == []
    assert list(pattern.compiled_regex.finditer("no ending at all 12")) == []
    assert calls == []
    pattern.compiled_regex.finditer("STORGATAN. 12")  # folded: "storgatan. 12"
    assert calls == ["STORGATAN. 12"]


_DETECTIONS_OF_THE_POOL = """
import json, sys
from datetime import UTC, datetime
from auditor.config import load_settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.detectors.pii import PiiDetector
from auditor.tools.realistic import corpora_roots, train_pool
det = PiiDetector({})
ctx = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=load_settings())
out = []
for p in train_pool(corpora_roots(None)):
    if p.corpus.startswith(("pii-", "secrets-")):
        for d in det.analyze(MemoryView(p.memory_id, "user:x", p.fact, "user"), ctx):
            out.append([p.memory_id, d.entity, d.score, d.reason, d.details])
json.dump(out, sys.stdout, sort_keys=True, default=str)
"""


def test_pii_detections_do_not_change_with_the_hash_seed() -> None:
    """Presidio gathers recognizers in a set; the ordered registry makes the surviving one
    of two equal results the same in every process (it named a different card pattern
    from run to run)."""
    import json
    import os
    import subprocess
    import sys

    runs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _DETECTIONS_OF_THE_POOL],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        runs.append(json.loads(done.stdout))
    assert len(runs[0]) > 500  # real work
    assert runs[0] == runs[1] == runs[2]


def test_the_ordered_registry_answers_in_registration_order_and_sees_new_recognizers() -> None:
    from auditor.detectors.pii_presidio import (
        OrderedRecognizerRegistry,
        Pattern,
        PatternRecognizer,
    )

    def recognizer(name: str) -> PatternRecognizer:
        return PatternRecognizer(
            supported_entity="X_ID", name=name, patterns=[Pattern(name, r"\bx\d+\b", 0.5)]
        )

    registry = OrderedRecognizerRegistry(supported_languages=["en"])
    for name in ("first", "second", "third"):
        registry.add_recognizer(recognizer(name))
    names = [r.name for r in registry.get_recognizers("en", ["X_ID"])]
    assert names == ["first", "second", "third"]
    assert [r.name for r in registry.get_recognizers("en", ["X_ID"])] == names  # cached
    registry.add_recognizer(recognizer("fourth"))
    assert [r.name for r in registry.get_recognizers("en", ["X_ID"])] == [*names, "fourth"]
    registry.remove_recognizer("second")
    assert [r.name for r in registry.get_recognizers("en", ["X_ID"])] == [
        "first",
        "third",
        "fourth",
    ]


def test_an_entity_gate_skipped_for_too_few_digits_could_not_have_matched() -> None:
    """The digit counts that let ``_candidates`` skip a gate's search are lower bounds: on
    the corpora's texts, every match of every gate holds at least that many digits."""
    from auditor.detectors.pii import _DIGIT, _GATE_DIGITS, _GATES

    assert _GATE_DIGITS["PHONE_NUMBER"] == 7 and _GATE_DIGITS["KR_RRN"] == 13
    texts = [p.fact for p in train_texts() if _DIGIT.search(p.fact)]
    checked = 0
    for entity, gate in _GATES.items():
        least = _GATE_DIGITS[entity]
        for text in texts:
            for m in gate.finditer(text):
                assert len(_DIGIT.findall(m.group())) >= least, (entity, text[:80])
                checked += least > 0
    assert checked > 1000


def test_the_context_step_copies_results_as_a_deep_copy_would() -> None:
    """Presidio's enhancer deep-copies the results it is given; the cheaper copy gives equal,
    independent results, and a result holding anything mutable is deep-copied as before."""
    import copy

    from auditor.detectors.pii import PiiDetector
    from auditor.detectors.pii_context import CheaplyCopied
    from auditor.detectors.pii_presidio import AnalysisExplanation, RecognizerResult

    detector = PiiDetector({})
    analyzer = detector._analyzer
    results: list[RecognizerResult] = []
    for text in [p.fact for p in train_texts()[::40]] + ["call 202-555-0123, mail a@b.example"]:
        results += analyzer.analyze(text, "en", return_decision_process=True)
    assert len(results) > 20

    def state(r: RecognizerResult) -> tuple[object, ...]:
        ex = r.analysis_explanation
        own = {k: v for k, v in vars(r).items() if k != "analysis_explanation"}
        return (own, None if ex is None else vars(ex))

    copied = copy.deepcopy(CheaplyCopied(results))
    assert [state(r) for r in copied] == [state(r) for r in copy.deepcopy(results)]
    first = copied[0]
    assert first is not results[0]
    assert first.analysis_explanation is not results[0].analysis_explanation
    first.analysis_explanation.set_supportive_context_word("changed")
    first.recognition_metadata["changed"] = True
    assert results[0].analysis_explanation.supportive_context_word != "changed"
    assert "changed" not in results[0].recognition_metadata
    odd = RecognizerResult(
        "X", 0, 1, 0.5, AnalysisExplanation("r", 0.5), recognition_metadata={"parts": [1, 2]}
    )
    (again,) = copy.deepcopy(CheaplyCopied([odd]))
    again.recognition_metadata["parts"].append(3)
    assert odd.recognition_metadata["parts"] == [1, 2]  # a list inside: a real deep copy


def test_the_context_step_is_skipped_only_where_no_result_could_gain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a context word of a fired recognizer in the text, the context step changes
    nothing: the analyzer's results (scores, explanations) equal those of the full step on
    the corpora's texts and on context words in odd cases, and the shortcut is taken."""
    from auditor.detectors.pii import PiiDetector

    analyzer = PiiDetector({})._analyzer
    odd = [
        "PHONE: 202-555-0123",
        "Phone202-555-0123 and TeL 202 555 0124",
        "call me at 202-555-0123",
        "İletişim TELEFON 0212 555 01 23",
        "ΤΗΛΕΦΩΝΟΣ 202-555-0123",
        "전화번호 010-2345-6789",
        "010-2345-6789 is the order id, no word for it",
        "mail a@b.example or EMAIL: c@d.example",
        "card 4111 1111 1111 1111 and 4111-1111-1111-1111",
    ]
    texts = [p.fact for p in train_texts()[::5] if any(c.isdigit() for c in p.fact)] + odd
    taken: list[bool] = []
    real = pii_context.may_gain_context

    def spy(*args: Any) -> bool:
        taken.append(not real(*args))
        return bool(real(*args))

    def run() -> list[tuple[object, ...]]:
        out: list[tuple[object, ...]] = []
        for text in texts:
            language = "ko" if any("\uac00" <= c <= "\ud7a3" for c in text) else "en"
            for r in analyzer.analyze(text, language, return_decision_process=True):
                ex = r.analysis_explanation
                own = {k: v for k, v in vars(r).items() if k != "analysis_explanation"}
                out.append((text, own, None if ex is None else vars(ex)))
        return out

    monkeypatch.setattr(pii_context, "may_gain_context", spy)
    shortcut = run()
    monkeypatch.setattr(pii_context, "may_gain_context", lambda *args: True)
    full = run()
    assert shortcut == full
    assert sum(taken) > 100 and not all(taken)  # skipped often, not always
    assert any(ex and ex["supportive_context_word"] for _t, _o, ex in full)
