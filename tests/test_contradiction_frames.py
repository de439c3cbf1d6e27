"""Open-vocabulary contradiction frames (issue 10 item 5): classes of conflicts and of
false alarms, English and Korean, candidate generation and the duplicates veto.

Every pair here is written for these tests (no corpus text)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.detectors.contradiction import (
    ContradictionDetector,
    candidate_pairs,
    offline_signals,
)
from auditor.detectors.contradiction_frames import (
    compare_frames,
    frames_of,
    text_modality,
)
from auditor.detectors.duplicates import DuplicateDetector
from auditor.detectors.frame_reading import read_pair
from auditor.detectors.frame_schedule import never_every

FIXTURES = Path(__file__).parent / "fixtures" / "contradiction-pairs"
STORE = Path(__file__).parent / "fixtures" / "contradiction-store"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _views(*facts: str, subject: str = "user:t") -> list[MemoryView]:
    return [
        MemoryView(
            memory_id=f"m{i}",
            subject=subject,
            fact=f,
            trust_tier="user",
            source_type="explicit_statement",
            created_at=T0 + timedelta(days=i),
            content_hash=f"h{i}-{abs(hash(f))}",
        )
        for i, f in enumerate(facts)
    ]


def _ctx() -> DetectContext:
    return DetectContext(now=T0 + timedelta(days=400), settings=load_settings())


def _entities(older: str, newer: str) -> set[str]:
    dets = ContradictionDetector().analyze_group(_views(older, newer), _ctx())
    return {d.entity for d in dets if d.score >= 0.55}


CONFLICTS = [
    # two weekdays / dates / months for one cycle or event
    ("The backlog grooming is on Wednesdays.", "The backlog grooming is every Monday."),
    ("The v3 launch is on 12 June.", "The v3 launch is on 8 September."),
    ("Rent is due on the 5th of each month.", "Rent is due on the 28th of each month."),
    ("디자인 리뷰는 매주 화요일이다.", "디자인 리뷰는 매주 금요일에 열린다."),
    ("정기 점검일은 6월 2일이다.", "정기 점검일은 8월 19일이다."),
    # one expiry said with "expires" and with "valid until" / "runs out"; a month and a year
    ("Noor's passport expires in May 2028.", "Noor's passport is valid until October 2030."),
    ("My library card runs out in June.", "My library card expires in November."),
    # a topic particle glued to Latin letters, and a fragment without a predicate
    ("지훈의 MBTI는 ISTJ", "지훈의 MBTI는 ENFP이다"),
    # which of the days ("first Tuesday", "every other Thursday") is the day's scope
    ("The choir meets on the first Monday of the month.", "The choir meets every other Friday."),
    # an appositive opening with a possessive name; "twice" / "once" as counts
    ("Ruth's son Aled lives in Leeds.", "Aled, Ruth's son, lives in York."),
    ("Takes ibuprofen twice a day for her knee.", "Takes ibuprofen once a day with dinner."),
    # a named person's bare age; a thing never owned
    ("Ruth is 64 and works part-time.", "Ruth is 59 years old."),
    ("Ruth walks her dog Pip every evening.", "Ruth has never owned a dog."),
    # a language named in the head and through "written (entirely) in"
    ("Vela's main language is Kotlin.", "Vela is written entirely in Swift."),
    # a relative named in apposition is the sentence's subject too; school years
    ("Ada's son Tom is in year 3.", "Tom is in year 6."),
    # a Korean relative named before the topic is the topic's person too
    ("민지의 딸 하은이는 올해 5살이다.", "하은이는 8살이고 초등학교 2학년이다."),
    # a job told as "is a", "works as", "job is" ("간호사다", "교사로 일한다", "직업은")
    ("Noor is a pharmacist.", "Noor works as a dental nurse."),
    ("Noor's job is teaching.", "Noor is a lawyer."),
    ("서윤은 약사다.", "서윤은 중학교 교사로 일한다."),
    # a length as a compound adjective against the length stated outright
    ("Kai's sprint length is two weeks.", "Kai's team runs four-week sprints."),
    # a relative's name given in apposition against the name stated outright
    ("We moved to York with my husband Omar.", "My husband's name is Karim."),
    # a named relative is that person; "just turned" is recent, not "only"
    ("My son Theo is 4 years old.", "Theo just turned 7."),
    # one payment with one shared word, "every month" as "a month"
    ("My rent is $1,200 a month.", "I pay $1,500 in rent every month."),
    # a Korean activity with 하다 and with 다니다 ("goes to"), on other days
    ("지우는 매주 월요일과 수요일에 요가를 한다.", "지우는 요가를 화요일, 금요일에 다닌다."),
    # a Korean time told as "X 시간은 T" and as "T에 X한다", the part of the day alike
    ("민호의 퇴근 시간은 저녁 6시다.", "민호는 저녁 7시 30분에 퇴근한다."),
    # one weekday each for a named meeting, each with its time (no occasions beside a value)
    ("The ops review is on Tuesday mornings at 9:15.", "The ops review is every Friday at 11:00."),
    # exclusive named values outside any list
    ("The Quill editor is licensed under ISC.", "The Quill editor is licensed under LGPL-2.1."),
    ("The search cluster runs on FreeBSD.", "The search cluster runs on Ubuntu."),
    ("사내 채팅은 Mattermost로 운영한다.", "사내 채팅은 Rocket.Chat으로 운영한다."),
    ("이 앱의 라이선스는 Zlib이다.", "이 앱의 라이선스는 MPL이다."),
    ("Favourite author: Le Guin.", "Favourite author: Pratchett."),
    # a rule and its negation
    ("Only swims in the evening.", "Swims in the evening and in the morning."),
    ("Never runs backups on Saturdays.", "Runs backups every day."),
    ("토요일에는 절대 야근하지 않는다.", "매일 야근한다."),
    ("빨래는 일요일에만 한다.", "빨래는 일요일과 수요일에 한다."),
    # "only" with a gloss in parentheses ("워드(DOCX) 파일로만")
    ("회의록은 워드(DOCX) 파일로만 남긴다.", "회의록은 노션 페이지로 남긴다."),
    # two lengths or counts of one recurring thing
    ("The design crit lasts 25 minutes.", "The design crit lasts three hours."),
    ("The on-call shift lasts one week.", "The on-call shift lasts two weeks."),
    ("독서 모임은 50분 동안 진행된다.", "독서 모임은 2시간 동안 진행된다."),
    ("마케팅팀 인원은 3명이다.", "마케팅팀 인원은 9명이다."),
    # Korean: an auxiliary after the predicate, a person as the topic with a single-valued verb
    ("나는 대구에 살고 있다.", "나는 제주에 살고 있다."),
    ("사내 메일은 Zoho로 운영하고 있다.", "사내 메일은 Gmail로 운영한다."),
]

NON_CONFLICTS = [
    # a plan is not the current state
    ("The scheduler is written in Java.", "Plans to port the scheduler to Zig next year."),
    ("사내 채팅은 Mattermost로 운영한다.", "내년에 사내 채팅을 Zulip으로 바꿀 예정이다."),
    # a past state
    ("Used to commute by train.", "Commutes by bike."),
    ("예전에는 안드로이드 폰을 썼다.", "지금은 아이폰을 쓴다."),
    # a negated alternative and a restatement with detail
    ("Lints the code with Ruff.", "Lints the code with Ruff, not Flake8."),
    ("The design crit is on Fridays.", "The design crit is on Fridays at 4pm in the lab."),
    ("배포 도구는 Argo로 한다.", "배포 도구는 Flux가 아니라 Argo로 한다."),
    # different things, different attributes, many-valued relations
    ("The Quill editor is licensed under ISC.", "The Inkpot viewer is licensed under LGPL-2.1."),
    ("The design crit is on Fridays.", "The design crit lasts 25 minutes."),
    ("The design crit lasts 25 minutes.", "The ops retro lasts 50 minutes."),
    ("The gallery is open from 9 on Tuesdays.", "The gallery is open from 11 on Sundays."),
    # a length and a date; a start and an end; two past events on two dates
    ("The warranty is valid for two years.", "The warranty expires in June 2027."),
    ("The gym membership starts in June.", "The gym membership runs out in September."),
    ("Call on May 3: reviewed the budget.", "Call on June 9: reviewed the budget."),
    # a relation of many things, other words on each side of the times
    ("Takes his vitamins at 8am.", "Takes a nap at 2pm."),
    ("민호는 7시에 퇴근한다.", "민호는 9시에 출근한다."),
    ("지우는 매주 월요일에 요가를 한다.", "지우는 목요일마다 수영을 다닌다."),
    ("My son Theo is 4 years old.", "My daughter Mia is 7 years old."),
    ("지훈의 MBTI는 ISTJ", "지훈의 혈액형은 B형"),
    ("We moved to York with my husband Omar.", "My sister's name is Karim."),
    ("Kai's sprint length is two weeks.", "Kai's team holds a 30-minute retro after each sprint."),
    ("Crumb & Co is open seven days a week.", "Crumb & Co's rent is 1,800 euros a month."),
    ("Ruth is 64 and works part-time.", "Ruth's husband is 70."),
    ("Vela is written in Swift.", "Vela's web client is written in TypeScript."),
    ("Ada's son Tom is in year 3.", "Ada's daughter Kim is in year 6."),
    ("민지의 딸 하은이는 올해 5살이다.", "민지의 아들 도윤이는 8살이다."),
    ("Noor is a pharmacist.", "Noor is a mother of two."),
    ("Noor is a hard worker.", "Noor works as a dental nurse."),
    ("Noor is a good cook.", "Noor works as a dental nurse."),
    ("Noor is a pharmacist.", "Noor's husband is a lawyer."),
    ("서윤은 약사다.", "서윤의 남편은 변호사다."),
    # a range of days holds the days inside it
    ("The clinic is open Monday to Friday.", "The clinic is open on Wednesdays."),
    ("도서관은 월요일부터 금요일까지 연다.", "도서관은 수요일에 연다."),
    ("My husband Omar loves hiking.", "My husband Omar works in York."),
    ("My rent is $1,200 a month.", "I pay $60 a month for my phone."),
    ("Speaks Greek.", "Speaks Finnish."),
    ("Has a parrot named Kiwi.", "Has a hamster named Bean."),
    ("프론트엔드는 Netlify에 배포한다.", "백엔드는 Render에 배포한다."),
    # a person's traits and many-valued predicates (Korean too)
    ("I am left-handed.", "I am a night owl."),
    ("저는 개발자입니다.", "저는 두 아이의 아빠입니다."),
    ("사용자는 재즈를 좋아한다.", "사용자는 국악을 좋아한다."),
    # "only" against a verb of many values needs a shared purpose (쓰다: languages, a laptop)
    ("민수는 집에서 자바와 코틀린(Kotlin)을 쓴다.", "민수는 맥북만 쓴다."),
    # hypotheticals
    (
        "The scheduler is written in Java.",
        "If the scheduler were written in Go it would be faster.",
    ),
]


@pytest.mark.parametrize(("older", "newer"), CONFLICTS)
def test_conflict_classes_are_flagged(older: str, newer: str) -> None:
    got = _entities(older, newer)
    assert got, f"no contradiction found: {older!r} / {newer!r}"


@pytest.mark.parametrize(("older", "newer"), NON_CONFLICTS)
def test_false_alarm_classes_stay_clean(older: str, newer: str) -> None:
    assert _entities(older, newer) == set()


def test_frame_reads_head_relation_and_value() -> None:
    (frame,) = frames_of("The Quill editor is licensed under ISC.")
    assert frame.head == frozenset({"quill", "editor"})
    assert frame.rel == "licens under"
    assert frame.functional and frame.subject
    assert frame.values == frozenset({"isc"})
    text = "The Quill editor is licensed under ISC."
    assert text[frame.span[0] : frame.span[1]] == "ISC"


def test_a_possessed_plural_is_a_noun_and_a_base_verb_follows() -> None:
    (frame,) = frames_of("Vela's releases go out every two weeks.")
    assert frame.head == frozenset({"vela", "releas"})
    assert frame.rel == "go out"


def test_typed_values_decide_and_overlapping_values_do_not() -> None:
    (a,) = frames_of("The sync is on Mondays.")
    (b,) = frames_of("The sync is every Thursday.")
    (c,) = frames_of("The sync is on Mondays and Thursdays.")
    verdict = compare_frames(a, b)
    assert verdict is not None and verdict.kind == "typed" and verdict.value_type == "weekday"
    overlap = compare_frames(c, b)
    assert overlap is None or overlap.kind not in ("typed", "value")


def test_only_against_a_longer_list_is_a_rule_conflict() -> None:
    reading = read_pair("회의는 목요일에만 잡는다.", "회의는 목요일과 금요일에 잡는다.")
    assert [s.entity for s in reading.signals] == ["rule_conflict"]
    assert not read_pair("회의는 목요일에만 잡는다.", "회의는 목요일에 잡는다.").signals


def test_closed_on_a_day_rules_out_opening_every_day() -> None:
    """ "Closed on D" is "never open on D", of the same place only."""
    assert never_every("The bakery is closed on Mondays.", "The bakery is open every day.")
    assert never_every("Her shop is closed on Sundays.", "Her shop opens every day.")
    assert not never_every("The bank is closed on Sundays.", "The bakery opens every day.")
    assert not never_every("The bakery is closed on Mondays.", "The bakery opens on Saturdays.")


def test_never_every_needs_a_shared_action() -> None:
    assert never_every("Never cooks on Mondays.", "Cooks every day.")
    assert not never_every("Never cooks on Mondays.", "Runs every day.")
    # one day ruled out, the same day recurring: the shared word must be more than a
    # generic verb ("works" / "works out")
    assert never_every("Never cooks on Mondays.", "Cooks dinner every Monday.")
    assert not never_every("Never works on Saturdays.", "Works out every Saturday.")
    assert not never_every("Never cooks on Mondays.", "Cooks every Tuesday.")
    # one person's two habits share only the person's name
    assert not never_every("Minji never works on weekends.", "Minji swims every day.")
    assert not never_every("준호는 주말에는 운동을 전혀 하지 않는다.", "준호는 매일 커피를 마신다.")
    assert never_every("Minji never swims on weekends.", "Minji swims every day.")
    # the subject alone ties them when the other fact names no action
    assert never_every("Standups never happen on Fridays.", "Standups are every day.")
    assert never_every("배포는 금요일에 절대 하지 않는다.", "배포는 매일 한다.")


def test_korean_keys_of_one_syllable_nouns_and_verb_forms() -> None:
    from auditor.detectors._frame_words import ko_key

    # a one-syllable noun and its topic or object marker
    assert ko_key("씨는") == "씨"
    assert ko_key("차를") == "차"
    # two-syllable words that are no noun with a marker stay whole
    assert ko_key("가을") == "가을"
    assert ko_key("하는") == "하는"
    # one verb in its plain and polite forms
    assert ko_key("써요") == ko_key("쓴다") == ko_key("씁니다") == "쓰"


def test_korean_owner_is_the_whole_possessive_phrase() -> None:
    """ "은지 씨의 차는" is the car of 은지 씨: another thing than 은지 씨, whose pay day
    is no value of the car."""
    (car,) = frames_of("은지 씨의 차는 흰색 아반떼예요.")
    (payday,) = frames_of("은지 씨는 월급날이 매달 10일이에요.")
    assert car.owners == payday.head
    assert compare_frames(payday, car) is None


def test_modality() -> None:
    assert text_modality("Plans to move to Lisbon next spring.") == "plan"
    assert text_modality("Used to live in Porto.") == "past"
    assert text_modality("Lives in Porto.") == "current"
    assert text_modality("내년에 이사할 계획이다.") == "plan"
    # "plan" words as nouns or modifiers name a thing, not a plan
    assert text_modality("Her phone plan is with Vodafone.") == "current"
    assert text_modality("The weekly planning call is on Mondays.") == "current"
    assert text_modality("The plan is to move in May.") == "plan"
    assert text_modality("Is planning a trip to Oslo.") == "plan"


def test_reasons_never_carry_the_values() -> None:
    dets = ContradictionDetector().analyze_group(
        _views(
            "The Quill editor is licensed under ISC.", "The Quill editor is licensed under LGPL."
        ),
        _ctx(),
    )
    assert dets
    for det in dets:
        assert "ISC" not in det.reason and "LGPL" not in det.reason
        assert any(s.memory_id == "m0" for s in det.spans)


def test_different_named_things_do_not_link_as_duplicates() -> None:
    det = DuplicateDetector({"conflicts_break_links": True})
    facts = ("The Quill editor is licensed under ISC.", "The Inkpot viewer is licensed under ISC.")
    assert det.analyze_group(_views(*facts), _ctx()) == []
    assert len(DuplicateDetector().analyze_group(_views(*facts), _ctx())) == 1


def test_candidate_pairs_reach_frame_pairs_the_index_misses() -> None:
    filler = [f"Note {i}: bought {i} apples at the market on the way home." for i in range(30)]
    views = _views(
        "The Quill editor is licensed under ISC.",
        *filler,
        "The Quill editor is licensed under LGPL.",
    )
    pairs = candidate_pairs(views)
    assert frozenset({"m0", f"m{len(views) - 1}"}) in pairs
    assert all(len(p) == 2 for p in pairs)


def test_candidate_pairs_are_bounded_per_memory() -> None:
    facts = [f"The service {i % 7} is written in Lang{i}." for i in range(400)]
    pairs = candidate_pairs(_views(*facts))
    # top-k neighbours + frame neighbours + slot walks: a constant per memory, never all pairs
    assert len(pairs) <= 30 * len(facts)
    assert len(pairs) < len(facts) * (len(facts) - 1) // 2 // 4


def test_candidate_pairs_keep_subjects_apart() -> None:
    a = _views("The sync is on Mondays.", subject="user:a")
    b = [
        MemoryView(
            memory_id="x1",
            subject="user:b",
            fact="The sync is every Thursday.",
            trust_tier="user",
            created_at=T0,
        )
    ]
    assert candidate_pairs(a + b) == set()


def test_duplicates_veto_conflicts_and_link_restatements() -> None:
    det = DuplicateDetector({"conflicts_break_links": True, "containment": 0.75})
    conflict = det.analyze_group(
        _views("The backlog grooming is on Wednesdays.", "The backlog grooming is on Mondays."),
        _ctx(),
    )
    assert conflict == []
    plain = DuplicateDetector().analyze_group(
        _views("The backlog grooming is on Wednesdays.", "The backlog grooming is on Mondays."),
        _ctx(),
    )
    assert len(plain) == 1  # without the veto the pair links (the old behaviour)
    detail = det.analyze_group(
        _views("The crit is every Friday.", "The crit is every Friday at 4pm in the lab."), _ctx()
    )
    assert [d.memory_ids for d in detail] == [("m1", "m0")]


def test_duplicates_rejects_bad_containment() -> None:
    with pytest.raises(ValueError, match="containment"):
        DuplicateDetector({"containment": 1.5})


@pytest.mark.parametrize("part", ["dev", "heldout"])
def test_fixture_corpora_are_well_formed(part: str) -> None:
    folder = FIXTURES / part
    ids = [json.loads(line)["memory_id"] for line in (folder / "memories.jsonl").open()]
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    assert len(ids) == len(set(ids))
    for key in ("contradictions", "non_contradictions", "duplicates"):
        for a, b in labels[key]:
            assert a in ids and b in ids and ids.index(a) < ids.index(b)


def test_dev_fixture_candidate_recall_and_recall() -> None:
    """Regression guard on the tuning part (the held-out part is reported, not asserted)."""
    folder = FIXTURES / "dev"
    facts = [json.loads(line) for line in (folder / "memories.jsonl").open()]
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    views = [
        MemoryView(
            memory_id=r["memory_id"],
            subject=r["subject"],
            fact=r["fact"],
            trust_tier="user",
            source_type="explicit_statement",
            created_at=datetime.fromisoformat(r["created_at"].replace("Z", "+00:00")),
            content_hash=r["memory_id"],
        )
        for r in facts
    ]
    gold = {frozenset(p) for p in labels["contradictions"]}
    assert len(candidate_pairs(views) & gold) == len(gold)
    det = ContradictionDetector()
    by_subject: dict[str, list[MemoryView]] = {}
    for v in views:
        by_subject.setdefault(v.subject, []).append(v)
    found = {
        frozenset(d.memory_ids)
        for group in by_subject.values()
        for d in det.analyze_group(group, _ctx())
        if d.score >= 0.55
    }
    assert len(found & gold) / len(gold) >= 0.9
    non = {frozenset(p) for p in labels["non_contradictions"]}
    assert not (found & non)


def test_store_fixture_no_false_alarm_between_facts_of_one_person() -> None:
    """The store-shaped tuning set (15-23 memories per store): the shipped pack reports no
    contradiction pair that is not labelled (a named person's two attributes, two things one
    does, two habits on other days were false alarms), and finds the planted ones it found
    when the set was fixed (42 of 60 since 2026-12-07's third session; the rest are
    documented misses). The second held-out
    half, never tuned on for precision, has no false alarm either."""
    from auditor.rulepack.engine import Engine
    from auditor.rulepack.pack import load_pack
    from auditor.tools.evaluate import evaluate_corpus

    engine = Engine(load_pack().active())
    report = evaluate_corpus(STORE / "dev", engine, load_settings(), split="all")
    pairs = next(s for s in report.scores if s.label == "contradiction_pairs")
    assert pairs.false_alarms == []
    assert pairs.tp >= 42
    report = evaluate_corpus(STORE / "heldout-2", engine, load_settings(), split="all")
    pairs = next(s for s in report.scores if s.label == "contradiction_pairs")
    assert pairs.false_alarms == []
    # the held-out halves of 2026-12-06 that were read: no false alarm, and at least the
    # pairs found when their classes were fixed (heldout-4 15 of 24, heldout-7 13 of 22,
    # heldout-8 11 of 23; 2026-12-07: heldout-9 4 of 22, whose three false alarms, a name's
    # traits read as one attribute, "동민은 미혼이다" / "동민은 B형이다", were fixed; heldout-10
    # 11 of 21, whose four false alarms, "an only child" read as a restriction, were fixed;
    # heldout-11 8 of 17, whose false alarm, two negated Korean facts, was fixed; heldout-12
    # 6 of 14, whose false alarm, a son's cat allergy against the subject's cats, was fixed;
    # heldout-13 10 of 16; heldout-14 5 of 13, whose false alarm, "prefers emails to phone
    # calls" read as stating phone calls, was fixed; third session: heldout-4 16 (an
    # acronym), heldout-9 6 and heldout-10 12 (a project's name in Hangul and in Latin, a
    # wife against 미혼), heldout-14 6, heldout-15 7 of 20, whose false alarm, a date of birth
    # told with 생 read against a blood type, was fixed; fourth session: heldout 14,
    # heldout-2 8, heldout-4 17 and heldout-15 9 (licences and databases whatever the verb,
    # a thing in one head and as the other's object, driving, one-time events), heldout-16
    # 14 of 22, whose false alarms, a past state read as current and an allergy told with a
    # condition, were fixed; heldout-15 10 (a count on the topic); heldout-17, written blind
    # after all that (first score 0.160), 6 of 22, whose false alarm, "has been" read as one
    # thing denied and stated, was fixed; heldout-18, written blind for false alarms, none
    # at its first score (the session-start code raised two), 4 of 10 found; fifth session:
    # heldout-19, written blind (first score 0.261, 3 of 20), 12 of 20 after "only on D",
    # "every morning", a rule at a person's place, lasting traits, Korean negated lists,
    # handedness and pet names; its duplicate false alarm, closed on Sundays / open all
    # week, fixed; heldout-20, written blind after the first round (first score 0.545, 9 of
    # 20 with four false alarms, another named person's habit, "비건은 아니라서", an oat-milk
    # latte and a rate "instead of his standard rate", all fixed), 15 (three by the rates
    # of one activity); heldout-21, written
    # blind after the second (first score 0.385, 5 of 20 with one false alarm, a shift
    # pattern told in two orders, fixed), 8; heldout-7 15 (a pet's two names, car makes);
    # heldout-22, written blind after the third round (first score 0.500, 7 of 20 with four
    # false alarms: two honeys' prices, a partner's meat, a rainy-day exception, and an
    # allergy told in a flatmate's sentence, which the writer did not label), 8; sixth
    # session: heldout-23 and -24, written blind at its start (first scores 0.320 with one
    # false alarm, a scooter left for the bus when it rains, fixed, and 0.333), 10 and 10
    # (own ages told by a name, a pronoun or in Korean numerals, living alone, Korean
    # relatives as whole words, answer length, rates counted in things); heldout-25 and -26,
    # written blind after that round (first scores 0.320 and 0.167, with one false alarm, a
    # wife's wine told after "His wife ...", fixed), 7 and 7; heldout-27 and -28, written
    # blind after the second round (first scores 0.320 and 0.320, with one false alarm,
    # "cycles to work every day" against "works Monday to Friday", fixed), 8 and 5;
    # seventh session: heldout-29 to -36, written blind two at a time, at its start and
    # after each of three rounds (first scores 0.091, 0.250, 0.320, 0.095, 0.308 and 0.160
    # with four false alarms, a husband named in the store, a labmate's tool and two
    # activities sharing a comma, all fixed, 0.182, 0.091), 7, 6, 8, 3, 6, 6, 4 and 3
    # (Korean amounts of money, a named being's age, one amount or date told in each
    # language, a place's closing days in each language, tools avoided or never used);
    # heldout-17 7, heldout-26 10, heldout-28 6)
    halves = (("heldout", 14), ("heldout-2", 8), ("heldout-4", 17), ("heldout-7", 15))
    halves = (*halves, ("heldout-8", 11), ("heldout-9", 6))
    later = (("heldout-10", 12), ("heldout-11", 8), ("heldout-12", 6), ("heldout-13", 10))
    later = (*later, ("heldout-14", 6), ("heldout-15", 10), ("heldout-16", 14))
    later = (*later, ("heldout-17", 7), ("heldout-18", 4), ("heldout-19", 12))
    later = (*later, ("heldout-20", 15), ("heldout-21", 8), ("heldout-22", 8))
    later = (*later, ("heldout-23", 10), ("heldout-24", 10), ("heldout-25", 7))
    later = (*later, ("heldout-26", 10), ("heldout-27", 8), ("heldout-28", 6))
    later = (*later, ("heldout-29", 7), ("heldout-30", 6), ("heldout-31", 8))
    later = (*later, ("heldout-32", 3), ("heldout-33", 6), ("heldout-34", 6))
    later = (*later, ("heldout-35", 4), ("heldout-36", 3))
    for half, found in (*halves, *later):
        report = evaluate_corpus(STORE / half, engine, load_settings(), split="all")
        pairs = next(s for s in report.scores if s.label == "contradiction_pairs")
        assert pairs.false_alarms == [], half
        assert pairs.tp >= found, half


class _Verdict:
    def __init__(self, verdict: str, confidence: float) -> None:
        self.verdict, self.confidence = verdict, confidence
        self.which_supersedes, self.status, self.model = "none", "ok", "fake"


class _Judge:
    """Records what the detector hands over; answers with one canned verdict."""

    def __init__(self, verdict: str, confidence: float) -> None:
        self.verdict, self.confidence = verdict, confidence
        self.hints: list[str | None] = []

    def judge_pair(self, a: MemoryView, b: MemoryView, *, hint: str | None = None) -> _Verdict:
        self.hints.append(hint)
        return _Verdict(self.verdict, self.confidence)


def _judge_ctx(judge: _Judge) -> DetectContext:
    return DetectContext(now=T0 + timedelta(days=400), settings=load_settings(), judge=judge)


def test_weak_frame_candidates_go_to_the_judge_only() -> None:
    facts = ("Speaks Greek.", "Speaks Finnish.")  # a many-valued relation: not decidable offline
    assert ContradictionDetector().analyze_group(_views(*facts), _ctx()) == []
    yes = _Judge("contradiction", 0.9)
    (det,) = ContradictionDetector().analyze_group(_views(*facts), _judge_ctx(yes))
    assert yes.hints == ["value_conflict"] and det.entity == "value_conflict"
    assert det.score == 0.9
    no = _Judge("compatible", 0.9)
    assert ContradictionDetector().analyze_group(_views(*facts), _judge_ctx(no)) == []
    assert no.hints == ["value_conflict"]


def test_a_facts_frames_are_read_from_four_sentences_once() -> None:
    """Only the first four sentences are read (the rest of a long fact costs nothing), the
    spans of later sentences point into the fact, and a fact read again (blocking, then each
    candidate pair) shares its first reading."""
    four = (
        "The office is in Seoul. The meeting lasts 30 minutes. The team uses Notion. "
        "The project is licensed under MIT."
    )
    long = four + " The database runs on Postgres." * 50
    frames = frames_of(long)
    assert frames == frames_of(four)
    assert [long[f.span[0] : f.span[1]] for f in frames] == ["Seoul", "30 minutes", "Notion", "MIT"]
    assert frames_of(long) is frames


def test_does_not_before_the_verb_is_read_as_a_negation() -> None:
    """ "Beacon does not run on Windows" has the relation "run on", negated, and its head is
    the subject alone (the auxiliary is neither the verb nor part of the head)."""
    (frame,) = frames_of("Beacon does not run on Windows.")
    assert frame.rel == "run on"
    assert frame.negated
    assert frame.head == frozenset({"beacon"})


def test_a_denied_listed_value_conflicts_and_another_does_not() -> None:
    listed = "Beacon supports Linux, macOS and Windows."
    assert read_pair(listed, "Beacon does not run on Windows.").signals
    assert not read_pair(
        "Beacon supports Linux and macOS.", "Beacon does not run on Windows."
    ).signals


def test_a_korean_idiom_is_read_as_its_verb() -> None:
    """ "잠자리에 든다" (goes to bed) is the relation of "잔다" (sleeps)."""
    (a,) = frames_of("유나는 저녁 10시에 잔다.")
    (b,) = frames_of("유나는 보통 새벽 1시에 잠자리에 든다.")
    assert a.rel == b.rel
    assert read_pair("유나는 저녁 10시에 잔다.", "유나는 보통 새벽 1시에 잠자리에 든다.").signals


def test_two_relations_of_one_head_do_not_explain_a_trait_away() -> None:
    """The frames read "has" and "snacks on" as two relations of Amara (compatible), which
    explains away a slot or a date conflict but not a trait that rules one out."""
    older, newer = (
        "Amara has a peanut allergy.",
        "Amara snacks on peanut butter toast most mornings.",
    )
    reading = read_pair(older, newer)
    assert reading.modal and reading.modal_by_relation
    assert [s.entity for s in offline_signals(older, newer)] == ["exclusive_choice"]
