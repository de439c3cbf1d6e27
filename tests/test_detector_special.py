"""The ``special_category`` detector: GDPR art. 9 / 10 data in English and Korean, consent-aware.

Tables per category and language: statements about a person are found (entity = category,
span on the words), benign look-alikes are not. Consent marks a detection allowed without
hiding it.
"""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.config import load_settings
from auditor.detectors import _special_terms as terms
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.special_categories import CATEGORIES, SpecialCategoryDetector
from auditor.rulepack.engine import Engine, run_rule_tests
from auditor.rulepack.pack import load_pack
from tests.corpora import train_texts

SETTINGS = load_settings()
NOW = datetime(2026, 6, 1, tzinfo=UTC)
SUBJECT = "user:alice"


@pytest.fixture(scope="module")
def detector() -> SpecialCategoryDetector:
    return SpecialCategoryDetector({})


def view(text: str, subject: str = SUBJECT) -> MemoryView:
    return MemoryView(memory_id="m1", subject=subject, fact=text, trust_tier="user")


def ctx(consents: dict[str, frozenset[str]] | None = None) -> DetectContext:
    return DetectContext(now=NOW, settings=SETTINGS, consents=consents or {})


def detect(detector: SpecialCategoryDetector, text: str, **kw: Any) -> dict[str, Detection]:
    return {d.entity: d for d in detector.analyze(view(text), ctx(**kw))}


# -- each category, English and Korean: (text, category, a word the span must cover) --------

POSITIVES = [
    ("User was diagnosed with type 2 diabetes last spring.", "health", "diabetes"),
    ("Takes sertraline every morning.", "health", "sertraline"),
    ("Jane is 20 weeks pregnant.", "health", "pregnant"),
    ("He has been seeing a therapist since March.", "health", "therapist"),
    ("사용자는 당뇨가 있다.", "health", "당뇨"),
    ("우울증 진단을 받았다.", "health", "우울증"),
    ("아내가 임신 중이라 출장을 줄임", "health", "임신"),
    ("혈압약을 매일 복용 중이다.", "health", "복용"),
    ("User is a devout Catholic.", "religion", "Catholic"),
    ("He converted to Islam in 2019.", "religion", "Islam"),
    ("She goes to church every Sunday.", "religion", "church"),
    ("사용자는 불교 신자이다.", "religion", "불교"),
    ("매주 일요일 교회에 다닌다.", "religion", "교회"),
    ("User votes Labour.", "political_opinion", "Labour"),
    ("She is a member of the Green Party.", "political_opinion", "Green Party"),
    ("He is a lifelong conservative.", "political_opinion", "conservative"),
    ("사용자는 정의당 당원이다.", "political_opinion", "정의당"),
    ("민주당을 지지한다고 말함", "political_opinion", "민주당"),
    ("User is gay.", "sexual_orientation", "gay"),
    ("He came out to his parents last year.", "sexual_orientation", "came out"),
    ("User identifies as non-binary.", "sexual_orientation", "non-binary"),
    ("사용자는 동성 연인과 함께 산다.", "sexual_orientation", "동성 연인"),
    ("She is of Korean descent.", "ethnic_origin", "Korean descent"),
    ("User is Hispanic.", "ethnic_origin", "Hispanic"),
    ("사용자는 다문화 가정에서 자랐다.", "ethnic_origin", "다문화 가정"),
    ("User is a member of the teachers' union.", "trade_union", "union"),
    ("He pays union dues every month.", "trade_union", "union dues"),
    ("사용자는 노조원이다.", "trade_union", "노조원"),
    ("User did a 23andMe DNA test.", "genetic", "23andMe"),
    ("She is a BRCA1 carrier.", "genetic", "BRCA1"),
    ("사용자는 유전자 검사를 받았다.", "genetic", "유전자 검사"),
    ("User registered her fingerprint for the office door.", "biometric", "fingerprint"),
    ("His voiceprint was enrolled with the bank.", "biometric", "voiceprint"),
    ("사용자는 출입용으로 지문 등록을 했다.", "biometric", "지문 등록"),
    ("He was convicted of fraud in 2015.", "criminal_record", "convicted"),
    ("Charged with assault after the fight.", "criminal_record", "assault"),
    ("사용자는 음주운전으로 집행유예를 받았다.", "criminal_record", "집행유예"),
    ("전과 2범이라고 털어놓음", "criminal_record", "전과"),
]


@pytest.mark.parametrize(("text", "category", "word"), POSITIVES)
def test_category_is_found_with_span(
    detector: SpecialCategoryDetector, text: str, category: str, word: str
) -> None:
    found = detect(detector, text)
    assert category in found
    hit = found[category]
    assert hit.detector == "special_category" and hit.memory_ids == ("m1",)
    assert hit.score >= 0.5
    assert any(word in text[s.start : s.end] for s in hit.spans)
    assert all(s.label == category for s in hit.spans)


def test_every_category_has_english_and_korean_cases() -> None:
    covered = {(cat, "ko" if re.search("[가-힣]", text) else "en") for text, cat, _ in POSITIVES}
    assert covered == {(c, lang) for c in CATEGORIES for lang in ("en", "ko")}


# -- benign look-alikes: (text, category that must not be reported) ------------------------

LOOK_ALIKES = [
    ("Eats a healthy diet and runs three times a week.", "health"),
    ("Read a book about the Great Depression.", "health"),
    ("The new laptop has a lithium-ion battery.", "health"),
    ("Advances in cancer treatment over the past decade.", "health"),
    ("I'm a Cancer, born in July.", "health"),
    ("This deadline gave me a heart attack.", "health"),
    ("Had a stroke of luck at the casino.", "health"),
    ("Has exam anxiety before finals.", "health"),
    ("Blocked SQL injections and stopped the attack.", "health"),
    ("The due date is Friday.", "health"),
    ("서버 장애로 배포가 하루 늦어짐", "health"),
    ("자동차 진단을 받았다.", "health"),
    ("건강한 식단을 선호한다.", "health"),
    ("My religion does not allow speaking to bots.", "religion"),
    ("God gave rock and roll to you.", "religion"),
    ("He attends Temple University.", "religion"),
    ("He is Christian Bale's assistant.", "religion"),
    ("종교에 관한 다큐멘터리를 봤다.", "religion"),
    ("The party starts at 8.", "political_opinion"),
    ("Planning a surprise birthday party for Sam.", "political_opinion"),
    ("User is a liberal arts graduate.", "political_opinion"),
    ("That is a conservative estimate.", "political_opinion"),
    ("정당한 이유 없이 회의를 취소하지 않는다.", "political_opinion"),
    ("Applied Gay-Lussac's law in the homework.", "sexual_orientation"),
    ("Read an article on the history of gay rights.", "sexual_orientation"),
    ("게이트웨이 설정을 바꿨다.", "sexual_orientation"),
    ("게이밍 노트북을 샀다.", "sexual_orientation"),
    ("The Houston Astros transitioned to the American League.", "sexual_orientation"),
    ("The plane started its angle of descent.", "ethnic_origin"),
    ("Trained the model with stochastic gradient descent.", "ethnic_origin"),
    ("Prefers a white background in the editor.", "ethnic_origin"),
    ("Member of the European Union since 2004.", "trade_union"),
    ("Opened an account at the credit union.", "trade_union"),
    ("Meet at Union Station at 9.", "trade_union"),
    ("Compute the union of two sets.", "trade_union"),
    ("Uses a genetic algorithm for the scheduling problem.", "genetic"),
    ("Customer obsession is in the DNA of the company.", "genetic"),
    ("유전 알고리즘으로 경로를 최적화했다.", "genetic"),
    ("Added my SSH key fingerprint to known_hosts.", "biometric"),
    ("Check the TLS certificate fingerprint before deploying.", "biometric"),
    ("User is building a facial recognition system.", "biometric"),
    ("지문을 읽고 질문에 답하는 문제를 풀었다.", "biometric"),
    ("Still on probation at the new job until March.", "criminal_record"),
    ("Drew the get out of jail free card in Monopoly.", "criminal_record"),
    ("Jailbroke the old iPhone to install a tweak.", "criminal_record"),
    ("이전과 같은 방식으로 작업한다.", "criminal_record"),
]


@pytest.mark.parametrize(("text", "category"), LOOK_ALIKES)
def test_benign_look_alikes_are_not_reported(
    detector: SpecialCategoryDetector, text: str, category: str
) -> None:
    assert category not in detect(detector, text)


def test_topic_sentence_scores_below_threshold_and_says_so() -> None:
    loose = SpecialCategoryDetector({"min_score": 0.3})
    text = "Advances in cancer treatment over the past decade."
    (hit,) = loose.analyze(view(text), ctx())
    assert hit.entity == "health" and hit.score < 0.5
    assert hit.details["about_a_person"] is False


def test_exclusion_is_named_in_details(detector: SpecialCategoryDetector) -> None:
    text = "User was diagnosed with asthma; read about the Great Depression too."
    hit = detect(detector, text)["health"]
    assert hit.details["excluded_look_alikes"] == ["economic_depression"]
    assert [text[s.start : s.end] for s in hit.spans] == ["was diagnosed with asthma"]


# -- consent ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("consents", "allowed"),
    [
        ({SUBJECT: frozenset({"health"})}, {"health": True, "religion": False}),
        ({SUBJECT: frozenset({"religion", "health"})}, {"health": True, "religion": True}),
        ({SUBJECT: frozenset()}, {"health": False, "religion": False}),
        ({"user:bob": frozenset({"health", "religion"})}, {"health": False, "religion": False}),
        ({}, {"health": False, "religion": False}),
    ],
)
def test_consent_marks_detection_allowed_without_hiding_it(
    detector: SpecialCategoryDetector,
    consents: dict[str, frozenset[str]],
    allowed: dict[str, bool],
) -> None:
    text = "Takes insulin for type 1 diabetes and is a practising Muslim."
    found = detect(detector, text, consents=consents)
    assert set(found) == {"health", "religion"}
    for category, expected in allowed.items():
        assert found[category].details["allowed_by_consent"] is expected
        assert ("allowed by consent" in found[category].reason) is expected


def test_rule_still_reports_a_consented_detection() -> None:
    root = Path(__file__).resolve().parents[1] / "rules"
    pack = load_pack(root, lint=False)
    rule = pack.by_id("MA-SPC-001")
    engine = Engine([rule])
    memory = MemoryView(
        memory_id="m1", subject=SUBJECT, fact="User is allergic to penicillin.", trust_tier="user"
    )
    hits, errors = engine.run([memory], ctx({SUBJECT: frozenset({"health"})}))
    assert not errors
    assert [h.rule.id for h in hits] == ["MA-SPC-001"]
    assert hits[0].detection.details["allowed_by_consent"] is True


# -- explanations never repeat the data ------------------------------------------------------


@pytest.mark.parametrize(("text", "category", "word"), POSITIVES)
def test_reason_and_details_never_contain_the_matched_words(
    detector: SpecialCategoryDetector, text: str, category: str, word: str
) -> None:
    hit = detect(detector, text)[category]
    for span in hit.spans:
        matched = text[span.start : span.end]
        assert matched not in hit.reason
        assert matched not in repr(dict(hit.details))


# -- the anchor prefilter never hides a match ------------------------------------------------


def test_anchor_prefilter_loses_nothing(
    detector: SpecialCategoryDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [t for t, _, _ in POSITIVES] + [t for t, _ in LOOK_ALIKES]
    with_anchors = [[d.entity for d in detector.analyze(view(t), ctx())] for t in texts]
    unfiltered = SpecialCategoryDetector({})
    monkeypatch.setattr(unfiltered, "_anchors", {c: ("",) for c in CATEGORIES})

    class Everything:
        def present(self, text: str) -> set[str]:
            return {""}  # every category passes the prefilter

    monkeypatch.setattr(unfiltered, "_anchor_set", Everything())
    without = [[d.entity for d in unfiltered.analyze(view(t), ctx())] for t in texts]
    assert with_anchors == without


def test_every_table_row_is_well_formed() -> None:
    ids = [(c, lang, pid) for c, lang, pid, _, _ in terms.PATTERNS]
    assert len(ids) == len(set(ids))
    assert {c for c, _, _ in ids} == set(CATEGORIES) == set(terms.ANCHORS)
    assert all(0.0 < score <= 1.0 for *_, score in terms.PATTERNS)
    assert {k for k in terms.TOPIC_PRONE} <= set(ids)
    for category, _, _, scope in terms.EXCLUSIONS:
        assert category in CATEGORIES and scope in ("overlap", "sentence")


# -- params and the rules' own cases -----------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"categories": ["astrology"]}, "categories"),
        ({"languages": ["fr"]}, "languages"),
        ({"min_score": -1}, "min_score"),
        ({"typo": True}, "typo"),
    ],
)
def test_bad_params_name_the_parameter(params: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        SpecialCategoryDetector(params)


def test_categories_and_languages_params_restrict() -> None:
    text = "사용자는 당뇨가 있다. User votes Labour."
    only_politics = SpecialCategoryDetector({"categories": ["political_opinion"]})
    assert [d.entity for d in only_politics.analyze(view(text), ctx())] == ["political_opinion"]
    english_only = SpecialCategoryDetector({"languages": ["en"]})
    assert [d.entity for d in english_only.analyze(view(text), ctx())] == ["political_opinion"]


def test_sensitive_rules_pass_their_own_cases(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[1] / "rules" / "sensitive"
    shutil.copytree(source, tmp_path / "rules" / "sensitive")
    results = run_rule_tests(load_pack(tmp_path / "rules"), SETTINGS)
    assert results
    failed = [r for r in results if not r.ok]
    assert failed == []
    ids = {r.rule_id for r in results}
    assert {f"MA-SPC-{i:03d}" for i in range(1, 10)} <= ids
    assert {f"MA-PII-{i:03d}" for i in range(1, 9)} <= ids


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("얼굴 인식 로그인을 위해 안면 특징 벡터와 지문 템플릿이 등록됨", ["biometric"]),
        ("Enrolled her fingerprint template for the office door.", ["biometric"]),
        ("Her family is ethnically Hmong and celebrates the new year.", ["ethnic_origin"]),
        ("The SDK stores face embeddings locally.", []),
        ("The city is ethnically diverse.", []),
    ],
)
def test_templates_and_ethnically(
    detector: SpecialCategoryDetector, text: str, expected: list[str]
) -> None:
    assert sorted({d.entity for d in detector.analyze(view(text), ctx())}) == expected


@pytest.mark.parametrize(
    ("text", "about_a_person"),
    [
        # memory notes often leave their subject unnamed; a thing named later is not the topic
        ("Has a 2019 DUI conviction, so avoid car-rental companies that check.", True),
        ("얼굴 인식 로그인을 위해 지문 템플릿이 등록됨 (기기 등록 도구 결과)", True),
        # the thing is the topic: named first, or as the head of a compound
        ("The app stores a fingerprint template of each employee for door access.", False),
        ("A 2023 paper reviewed depression screening tools.", False),
    ],
)
def test_a_description_is_a_thing_named_as_the_topic(text: str, about_a_person: bool) -> None:
    det = SpecialCategoryDetector({})
    found = det.analyze(MemoryView("m", "user:x", text, "user"), _CTX_SPECIAL)
    assert bool(found) is about_a_person, [(d.entity, d.score) for d in found]


_CTX_SPECIAL = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=load_settings())


def test_necessary_literals_are_read_from_the_parsed_pattern() -> None:
    import re

    from auditor.detectors._literals import necessary_literals as needed

    assert needed(r"\b(?:diagnosed with|suffers? from)\s+(?:diabetes|leukaemia)\b", re.I) == {
        "diabetes",
        "leukaemia",
    }  # the more selective of the two alternations ("suffer" is six letters)
    assert needed(r"\bGoes to (?:church|mosque)", re.I) == {"goes to "}
    assert needed(r"(?:a|bc)d", re.I) is None  # too short to be worth a gate
    assert needed(r"(?=abcdef)x") is None  # a lookahead says nothing here
    assert needed(r"(?:abcdef)?xy") is None  # optional: not necessary
    assert needed(r"(?:abcdef)+") == {"abcdef"}
    assert needed(r"당뇨(?:병)?") == {"당뇨"}
    assert needed(r"straße 1\d") is None  # a character with a non-ASCII case: not gated
    assert needed(r"[unclosed") is None


def test_necessary_literals_by_case_keep_case_sensitive_parts_as_written() -> None:
    import re

    from auditor.detectors._literals import necessary_literals_by_case as by_case

    assert by_case(r"\b(?:cancer|(?-i:STIs?|HIV))\b", re.I) == (
        frozenset({"cancer"}),
        frozenset({"STI", "HIV"}),
    )
    assert by_case(r"(?i:Goes to) (?:church|Mosque)") == (
        frozenset({"goes to"}),
        frozenset(),
    )  # the more selective set; the rest of the pattern is case-sensitive
    assert by_case(r"Straße 1\d") == (frozenset(), frozenset({"Straße 1"}))
    assert by_case(r"straße 1\d", re.I) is None  # a non-ASCII case, case-insensitive
    assert by_case(r"(?:a|BC)d") is None  # too short


def test_pattern_literal_gates_find_what_every_pattern_finds() -> None:
    """Each special-category pattern runs only when one of its own literals occurs; on the
    corpora's texts and on case-folding look-alikes the detections are those without it."""
    from dataclasses import replace

    from auditor.detectors import special_categories as module

    pool = train_texts()
    texts = [p.fact for p in pool] + [
        "She was DIAGNOSED WITH DIABETES last year.",
        "He goeſ to church every ſunday and was diagnoſed with cancer",  # long s
        "I was dıagnosed wıth asthma",  # dotless i
        "저는 당뇨가 있어서 약을 복용 중이에요",
        "He tested positive for HIV and has an STI; she is still questioning it.",
        "his STIs and STD were treated",  # case-sensitive parts of a pattern
    ]
    gated = SpecialCategoryDetector({})
    assert sum(p.needles is not None for ps in module._PATTERNS.values() for p in ps) > 40
    views = [MemoryView(f"m{i}", "user:x", t, "user") for i, t in enumerate(texts)]
    with_gates = [gated.analyze(v, _CTX_SPECIAL) for v in views]
    plain = {c: [replace(p, needles=None) for p in ps] for c, ps in module._PATTERNS.items()}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "_PATTERNS", plain)
        without = [SpecialCategoryDetector({}).analyze(v, _CTX_SPECIAL) for v in views]
    assert with_gates == without
    assert sum(map(len, without)) > 50
