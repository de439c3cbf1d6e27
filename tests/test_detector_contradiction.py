"""The contradiction detector: pair judging, spans, resolution, blocking cost, corpora, rules."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog

from auditor.config import load_settings
from auditor.detectors import build, detector_class
from auditor.detectors._contradiction_candidates import candidate_pairs
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.contradiction import ContradictionDetector, suggested_resolution
from auditor.detectors.contradiction_frames import frames_of
from auditor.hashing import content_hash
from auditor.judge.llm import Judge, JudgeRequest, RawAnswer
from auditor.records import parse_record
from auditor.rulepack.engine import run_rule_tests
from auditor.rulepack.pack import load_pack
from auditor.tools.evaluate import load_corpus

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "eval"
SETTINGS = load_settings()
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TIER = {"explicit_statement": "user", "system": "system", "inferred": "agent"}


@pytest.fixture(autouse=True)
def _captured_logs() -> Any:
    """Judge log events go to a capture, isolated from other tests' logging set-up."""
    with structlog.testing.capture_logs():
        yield


def mem(
    mid: str,
    fact: str,
    day: int = 0,
    source: str = "explicit_statement",
    **kw: Any,
) -> MemoryView:
    return MemoryView(
        memory_id=mid,
        subject=kw.pop("subject", "user:t"),
        fact=fact,
        trust_tier=TIER.get(source, "external"),
        source_type=source,
        created_at=T0 + timedelta(days=day),
        content_hash=content_hash(fact),
        **kw,
    )


def ctx(judge: Any = None) -> DetectContext:
    return DetectContext(now=T0 + timedelta(days=400), settings=SETTINGS, judge=judge)


def pair(older: str, newer: str, **params: Any) -> list[Detection]:
    det = ContradictionDetector(params)
    return det.analyze_group([mem("m_old", older, 0), mem("m_new", newer, 30)], ctx())


# -- which pairs conflict ---------------------------------------------------------------

CONFLICTS = [
    # (older fact, newer fact, entity)
    (
        "Our team only uses pnpm — never run npm install here.",
        "Uses npm for all JavaScript projects.",
        "slot_conflict",
    ),
    (
        "Wants report exports as JSON so they can be piped into jq.",
        "Prefers every report export as CSV, never JSON.",
        "slot_conflict",
    ),
    ("서울 성수동에 살고 있음", "부산 해운대구에 살고 있다고 함", "slot_conflict"),
    ("Prefers window seats.", "Always books an aisle seat.", "slot_conflict"),
    ("Lives in Berlin.", "Moved to Paris last year.", "slot_conflict"),
    ("Uses tabs for indentation.", "Indents with spaces, never tabs.", "slot_conflict"),
    ("Prefers dark mode.", "Prefers light mode in every app.", "slot_conflict"),
    ("Is married.", "Is single and not dating.", "slot_conflict"),
    ("답변은 항상 한국어로 해 달라고 함", "Wants all answers in English.", "slot_conflict"),
    ("Uses VS Code for everything.", "Switched from VS Code to Neovim in May.", "slot_conflict"),
    (
        "Uses Docker for local development.",
        "Does not use Docker for local development.",
        "negation",
    ),
    ("매일 아침 커피를 마심", "커피를 마시지 않음", "negation"),
    ("Is vegan.", "Loves a good bacon cheeseburger.", "exclusive_choice"),
    (
        "채식주의자라 고기가 들어간 메뉴는 추천하지 말아 달라고 함",
        "스테이크를 정말 좋아해서 여행 갈 때마다 스테이크 맛집을 찾음",
        "exclusive_choice",
    ),
    (
        "Doesn't drink alcohol.",
        "Collects Burgundy wines and loves tasting them.",
        "exclusive_choice",
    ),
    (
        "Has two kids, Ava (7) and Leo (4).",
        "Has three kids, so trips need a bigger car.",
        "numeric_conflict",
    ),
    ("Has one sister.", "Has three sisters.", "numeric_conflict"),
    ("아이가 둘 있음", "아이가 셋이라 큰 차가 필요함", "numeric_conflict"),
    ("Birthday is March 3.", "Birthday is on 14 July.", "date_conflict"),
    ("Prefers meetings after 13:00.", "Prefers meetings after 15:00.", "numeric_conflict"),
    (
        "회의는 오후 3시 이후로 잡아 달라고 함",
        "회의는 오후 5시 이후로 잡아 달라고 함",
        "numeric_conflict",
    ),
    ("No longer uses Docker.", "Uses Docker for local development.", "negation"),
    (
        "결혼기념일은 5월 12일",
        "결혼기념일이 6월 3일이라 그 주에는 저녁 약속을 잡지 않음",
        "date_conflict",
    ),
    (
        "Q: How many moons does Mars have? A: 2",
        "Astronomers confirmed that the planet Mars has exactly 5 moons.",
        "answer_conflict",
    ),
    (
        "Q: Who wrote the novel Middlemarch? A: George Eliot",
        "The novel Middlemarch was written by Charlotte Bronte.",
        "answer_conflict",
    ),
    (
        "Q: When was the bridge over the bay opened? A: 1937",
        "The bridge over the bay opened to traffic in 1951.",
        "answer_conflict",
    ),
    (
        "Q: Is the Danube longer than the Rhine? A: yes",
        "The Danube is not longer than the Rhine.",
        "answer_conflict",
    ),
    (
        "Q: Which is older, the Colosseum or the Parthenon? A: the Parthenon",
        "The Colosseum is older than the Parthenon.",
        "answer_conflict",
    ),
    (
        "Q: Where does the series take place? A: New York City",
        "The series takes place in Los Angeles, not New York.",
        "answer_conflict",
    ),
    (
        "Q: What is the capital of the user's favourite country? A: Vienna",
        "The capital of the user's favourite country is Paris.",
        "answer_conflict",
    ),
]

COMPATIBLE = [
    ("Uses pnpm for personal projects.", "The legacy Angular app at work still uses npm."),
    ("Uses Docker for local development.", "Uses Docker for deployment too."),
    ("Prefers window seats.", "Prefers window seats on long flights."),
    ("Is vegetarian.", "Asked for vegetarian restaurants near the office."),
    ("Is vegetarian.", "Never orders steak or burgers."),
    ("Has two kids.", "Has two dogs."),
    ("Is learning Italian.", "Practises Spanish on the commute."),
    ("Lives in Berlin.", "Flew to Paris for a conference."),
    ("Is moving to Denver next month.", "Based in Melbourne."),
    ("서울 성수동에 살고 있음", "부산으로 출장 중"),
    (
        "Session on May 3: reviewed the release plan.",
        "Session on June 9: reviewed the release plan.",
    ),
    ("Hotel budget is about 150 per night.", "Hotel budget is about 160 per night."),
    ("Switched from VS Code to Neovim.", "Uses Neovim with a Lua config."),
    ("Writes in Zed with vim keybindings.", "Zed is their main editor."),
    ("Reads mostly fantasy.", "Does not read horror."),
    ("Owns 3 monitors.", "Wants 2 more monitors."),
    ("Weekly sync every Monday at 13:00.", "Weekly sync every Monday at 10:00 with the team."),
    ("Does not use Docker at work.", "Uses Docker for personal projects."),
    ("Is the staging server down?", "The staging server is not down."),
    (
        "Always install dependencies with pnpm.",
        "The team's package manager is pnpm; npm is not used.",
    ),
    (
        "사용자가 병원 접수용으로 주민번호 000505-3637892를 알려줌.",
        "사용자가 병원 접수용으로 주민번호 001332-1234567을 알려줌.",
    ),
    (
        "Q: Who wrote the novel Middlemarch? A: George Eliot",
        "Middlemarch, the novel, was written by George Eliot.",
    ),
    ("Q: How many moons does Mars have? A: 2", "The office has 12 floors."),
    (
        "The fourth season of Chicago Fire has 24 episodes.",
        "Season 4 of the drama Chicago Fire contains 24 episodes in total.",
    ),
]


@pytest.mark.parametrize(("older", "newer", "entity"), CONFLICTS)
def test_conflicting_pairs_are_found(older: str, newer: str, entity: str) -> None:
    found = pair(older, newer)
    assert [d.entity for d in found] == [entity]
    assert found[0].score >= 0.55
    assert found[0].memory_ids == ("m_old", "m_new")


@pytest.mark.parametrize(("older", "newer"), COMPATIBLE)
def test_compatible_pairs_are_not_reported(older: str, newer: str) -> None:
    assert [d for d in pair(older, newer) if d.score >= 0.55] == []


# -- what a detection says --------------------------------------------------------------


def test_spans_point_at_the_values_in_both_memories() -> None:
    older = "Our team only uses pnpm — never run npm install here."
    newer = "Uses npm for all JavaScript projects."
    (d,) = pair(older, newer)
    text = {"m_old": older, "m_new": newer}
    seen = sorted((s.memory_id, text[s.memory_id or ""][s.start : s.end]) for s in d.spans)
    assert seen == [("m_new", "npm"), ("m_old", "npm"), ("m_old", "pnpm")]
    assert all(s.memory_id in ("m_old", "m_new") for s in d.spans)
    assert d.details["slot"] == "js_package_manager"
    assert d.details["values"] == {"older": ["pnpm"], "newer": ["npm"], "denied": ["npm"]}
    assert d.details["signals"] == ["negation", "slot_conflict"]
    assert d.detector == "contradiction" and d.reason and "pnpm" not in d.reason


def test_memory_ids_are_ordered_by_creation_time_then_id() -> None:
    det = ContradictionDetector({})
    newer = mem("a_newer", "Prefers light mode.", 9)
    older = mem("z_older", "Prefers dark mode.", 1)
    (d,) = det.analyze_group([newer, older], ctx())
    assert d.memory_ids == ("z_older", "a_newer")
    same_time = [mem("b", "Prefers light mode.", 1), mem("a", "Prefers dark mode.", 1)]
    (d2,) = det.analyze_group(same_time, ctx())
    assert d2.memory_ids == ("a", "b")


def test_details_never_carry_free_text_or_identifiers() -> None:
    (d,) = pair(
        "Q: Who wrote the novel Middlemarch? A: George Eliot",
        "The novel Middlemarch was written by Charlotte Bronte.",
    )
    dumped = json.dumps(d.details) + d.reason
    assert "Eliot" not in dumped and "Bronte" not in dumped
    (n,) = pair("Has 2 kids.", "Has 3 kids.")
    assert n.details["values"] == {"older": 2.0, "newer": 3.0}
    (big,) = pair("The library holds 12,000 books.", "The library holds 15,000 books.")
    assert "values" not in big.details  # large numbers could be identifiers: spans only
    (date,) = pair("Birthday is March 3.", "Birthday is on 14 July.")
    assert "values" not in date.details  # dates of birth are personal data


@pytest.mark.parametrize(
    ("old_source", "new_source", "action", "keep"),
    [
        ("explicit_statement", "explicit_statement", "supersede", "m_new"),
        ("inferred", "explicit_statement", "supersede", "m_new"),
        ("explicit_statement", "system", "supersede", "m_new"),
        ("explicit_statement", "inferred", "review", "m_old"),
        ("system", "explicit_statement", "review", "m_old"),
        ("inferred", "inferred", "review", None),
        ("external_content", "tool_output", "review", None),
    ],
)
def test_suggested_resolution(
    old_source: str, new_source: str, action: str, keep: str | None
) -> None:
    res = suggested_resolution(mem("m_old", "x", 0, old_source), mem("m_new", "y", 1, new_source))
    assert res["action"] == action and res["keep"] == keep
    if action == "supersede":
        assert res["supersede"] == "m_new" and res["superseded"] == "m_old"
        assert res["why"] == "newer explicit statement of same or higher tier"
    else:
        assert res["supersede"] is None


def test_detection_carries_the_resolution() -> None:
    det = ContradictionDetector({})
    (d,) = det.analyze_group(
        [
            mem("m_old", "Prefers dark mode.", 0, "explicit_statement"),
            mem("m_new", "Prefers light mode.", 3, "inferred"),
        ],
        ctx(),
    )
    assert d.details["suggested_resolution"]["action"] == "review"
    assert d.details["suggested_resolution"]["keep"] == "m_old"


# -- what is left out -------------------------------------------------------------------


def test_linked_identical_inactive_and_episodic_memories_are_skipped() -> None:
    det = ContradictionDetector({})
    old = mem("m_old", "Prefers dark mode.", 0)
    assert (
        det.analyze_group([old, mem("m_new", "Prefers light mode.", 1, supersedes="m_old")], ctx())
        == []
    )
    assert (
        det.analyze_group(
            [replace(old, status="superseded"), mem("m_new", "Prefers light mode.", 1)], ctx()
        )
        == []
    )
    assert (
        det.analyze_group(
            [
                mem("e1", "Session on May 3: used dark mode.", 0, kind="episodic"),
                mem("m_new", "Prefers light mode.", 1),
            ],
            ctx(),
        )
        == []
    )
    assert det.analyze_group([old, mem("m_copy", "Prefers dark mode.", 1)], ctx()) == []
    assert det.analyze_group([old], ctx()) == []


def test_a_memory_past_max_fact_chars_is_not_compared() -> None:
    """A memory over 1,000 characters is a document, not a fact: left out by default, and
    compared again when the rule raises ``max_fact_chars``."""
    fact = "Lives in Berlin."
    # a page that states the conflicting value early, padded past the limit
    page = "Lives in Paris. " + "The venue opens at nine and the talks start at ten. " * 19
    assert 1000 < len(page) < 1100
    assert pair(fact, page[:1000]) != []  # the same words within the limit: a conflict
    assert pair(fact, page) == []
    assert pair(fact, page, max_fact_chars=1100) != []


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("What is matcha tea, and how is it prepared?", "What is the Imjin war"),
        ("Where does the team retro happen?", "Where does the ops review happen?"),
        ("What's the plan for Friday", "What's the budget for the offsite"),
        ("주간 회의는 언제야?", "주간 회의는 어디서 해?"),
    ],
)
def test_questions_state_no_value(older: str, newer: str) -> None:
    # two questions share "what is" / "where does" but assert nothing about anything
    assert pair(older, newer) == []
    assert frames_of(older) == () and frames_of(newer) == ()


def test_a_statement_that_opens_with_a_question_word_is_still_read() -> None:
    # a pseudo-cleft states a value; so does the answer after a question in a Q/A memory
    assert len(frames_of("What matters is the deadline.")) == 1
    assert len(frames_of("What is your address? It is 12 Elm Road.")) == 1


def test_two_tool_results_are_not_compared_but_a_tool_result_and_a_statement_are() -> None:
    # two calls' answers that give one field two values: the normal case, not a conflict
    det = ContradictionDetector({})
    older, newer = "The team retro happens every Tuesday.", "The team retro is on Fridays."
    tools = [mem("t1", older, 0, source="tool_output"), mem("t2", newer, 1, source="tool_output")]
    assert det.analyze_group(tools, ctx()) == []
    # the same texts from the user, from a user and a tool, or with the default lifted: flagged
    said = [mem("s1", older, 0), mem("s2", newer, 1)]
    assert [d.memory_ids for d in det.analyze_group(said, ctx())] == [("s1", "s2")]
    mixed = [mem("s1", older, 0), mem("t2", newer, 1, source="tool_output")]
    assert [d.memory_ids for d in det.analyze_group(mixed, ctx())] == [("s1", "t2")]
    every = ContradictionDetector({"apart_sources": []})
    assert [d.memory_ids for d in every.analyze_group(tools, ctx())] == [("t1", "t2")]
    # in a subject of both, only the tool-tool pair is left out
    three = [*tools, mem("s3", "The team retro is on Wednesdays.", 2)]
    found = sorted(d.memory_ids for d in det.analyze_group(three, ctx()))
    assert found == [("t1", "s3"), ("t2", "s3")]


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"top_k": 0}, "top_k"),
        ({"max_df": "x"}, "max_df"),
        ({"skip_kinds": "episodic"}, "skip_kinds"),
        ({"apart_sources": ["robot"]}, "apart_sources"),
        ({"apart_sources": "tool_output"}, "apart_sources"),
        ({"checks": ["slot", "magic"]}, "checks"),
        ({"uncertain_band": [0.8, 0.2]}, "uncertain_band"),
        ({"judge_similar": 2}, "judge_similar"),
        ({"extra_slots": {"x": {"cues": []}}}, "extra_slots"),
        ({"extra_traits": {"x": {"a": ["("], "b": ["y"]}}}, "extra_traits"),
    ],
)
def test_bad_params_name_the_parameter(params: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ContradictionDetector(params)


def test_extra_slots_and_checks_params() -> None:
    params = {
        "extra_slots": {"bundler": {"title": "bundler", "values": {"webpack": [], "vite": []}}}
    }
    found = pair(
        "Builds the frontend with Webpack.", "Builds the frontend with Vite only.", **params
    )
    assert [d.details["slot"] for d in found] == ["bundler"]
    assert pair("Prefers dark mode.", "Prefers light mode.", checks=["numeric"]) == []


def test_registry_builds_the_detector() -> None:
    assert detector_class("contradiction") is ContradictionDetector
    det = build("contradiction", {})
    assert det.name == "contradiction" and det.scope == "subject"


# -- the LLM judge seam -----------------------------------------------------------------


class CannedJudge(Judge):
    """A judge answering every pair the same way (no HTTP)."""

    def __init__(self, verdict: str, confidence: float, **kw: Any) -> None:
        super().__init__("canned", **kw)
        self.answer = {
            "verdict": verdict,
            "confidence": confidence,
            "which_supersedes": "b",
            "rationale": "canned",
        }
        self.asked = 0

    def _call(self, request: JudgeRequest) -> RawAnswer:
        self.asked += 1
        return RawAnswer(self.answer, 1, 1)


UNCERTAIN = (
    "Q: How many kids does the user have? A: 2",
    "The user's kids go to school by bus every morning.",
)


def test_judge_confirms_an_uncertain_candidate() -> None:
    judge = CannedJudge("contradiction", 0.9)
    det = ContradictionDetector({})
    (d,) = det.analyze_group([mem("q", UNCERTAIN[0], 0), mem("p", UNCERTAIN[1], 2)], ctx(judge))
    assert d.score == 0.9 and d.entity == "answer_conflict" and judge.asked == 1
    assert d.details["judge"]["verdict"] == "contradiction"


def test_judge_clears_an_uncertain_candidate_but_not_a_strong_one() -> None:
    judge = CannedJudge("compatible", 0.95)
    det = ContradictionDetector({})
    assert (
        det.analyze_group([mem("q", UNCERTAIN[0], 0), mem("p", UNCERTAIN[1], 2)], ctx(judge)) == []
    )
    strong = det.analyze_group(
        [mem("a", "Prefers dark mode.", 0), mem("b", "Prefers light mode.", 1)], ctx(judge)
    )
    assert len(strong) == 1 and judge.asked == 1  # strong evidence is not sent


def test_judge_may_find_what_the_heuristics_missed() -> None:
    judge = CannedJudge("contradiction", 0.8)
    det = ContradictionDetector({})
    (d,) = det.analyze_group(
        [
            mem("a", "Drinks coffee every single morning at home.", 0),
            mem("b", "Drinks only tea every single morning at home.", 1),
        ],
        ctx(judge),
    )
    assert d.entity == "judged_contradiction" and d.score == 0.8 and d.spans == ()


class BrokenJudge(CannedJudge):
    """A judge with a bug: the heuristics' findings must survive it."""

    def judge_pair(self, a: MemoryView, b: MemoryView, *, hint: str | None = None) -> Any:
        raise RuntimeError("bug")


def test_a_failing_judge_does_not_lose_the_heuristic_findings() -> None:
    det = ContradictionDetector({})
    found = det.analyze_group(
        [
            mem("q", UNCERTAIN[0], 0),
            mem("p", UNCERTAIN[1], 2),
            mem("a", "Prefers dark mode.", 3),
            mem("b", "Prefers light mode.", 4),
        ],
        ctx(BrokenJudge("contradiction", 1.0)),
    )
    assert sorted(d.entity for d in found) == ["answer_conflict", "slot_conflict"]


def test_judge_is_bounded_per_subject_and_by_its_budget() -> None:
    facts = [
        f"Q: How many {w} does the user have? A: 2"
        for w in ("kids", "cats", "bikes", "cars", "plants")
    ]
    facts += [
        f"The user's {w} are looked after by a neighbour on weekends."
        for w in ("kids", "cats", "bikes", "cars", "plants")
    ]
    group = [mem(f"m{i}", f, i) for i, f in enumerate(facts)]
    judge = CannedJudge("unsure", 0.5)
    ContradictionDetector({"judge_max_pairs": 2}).analyze_group(group, ctx(judge))
    assert judge.asked == 2
    small = CannedJudge("unsure", 0.5, max_calls=1)
    ContradictionDetector({}).analyze_group(group, ctx(small))
    assert small.asked == 1 and small.stats.over_budget >= 1


# -- cost: candidates grow linearly -----------------------------------------------------


def synthetic_group(n: int, seed: int = 7) -> list[MemoryView]:
    rng = random.Random(seed)
    words = (
        "alpha beta gamma delta orbit comet river harbor maple cedar falcon heron quartz "
        "amber signal ledger beacon lantern garden meadow canyon summit island"
    ).split()
    out = []
    for i in range(n):
        r = rng.random()
        if r < 0.05:
            fact = f"Uses {rng.choice(['npm', 'pnpm', 'yarn'])} for the {rng.choice(words)} app."
        elif r < 0.1:
            fact = f"Has {rng.randint(1, 4)} {rng.choice(['kids', 'cats'])} and a garden."
        else:
            fact = (
                f"Reviewed the {rng.choice(words)} {rng.choice(words)} plan with "
                f"{rng.choice(words)} notes {i % 97}."
            )
        out.append(mem(f"s{i}", fact, 0, subject="user:big"))
    return out


def test_candidate_pairs_grow_linearly_not_quadratically() -> None:
    det = ContradictionDetector({})
    per_memory = []
    for n in (100, 1000, 4000):
        group = synthetic_group(n)
        profiles = [det.profile(m.fact) for m in group]
        pairs = candidate_pairs(profiles, list(range(n)), top_k=det.top_k, max_df=det.max_df)
        per_memory.append(len(pairs) / n)
        assert len(pairs) <= n * (det.top_k + 2)  # bounded per memory
        assert len(pairs) < n * (n - 1) / 2 / 10 or n < 200
    assert max(per_memory) / min(per_memory) < 2.0


def test_a_large_group_is_analysed_with_bounded_pairs() -> None:
    # speed is measured by `memaudit bench`; here: it completes and reports each pair once
    group = synthetic_group(3000)
    found = ContradictionDetector({}).analyze_group(group, ctx())
    pairs = [frozenset(d.memory_ids) for d in found]
    assert len(pairs) == len(set(pairs)) and len(pairs) < 3000


# -- corpora ----------------------------------------------------------------------------


def _by_subject(views: list[MemoryView]) -> dict[str, list[MemoryView]]:
    groups: dict[str, list[MemoryView]] = {}
    for v in views:
        groups.setdefault(v.subject, []).append(v)
    return groups


def test_demo_store_contradictions_are_found_with_few_false_pairs() -> None:
    demo = ROOT / "auditor" / "demo"
    raws = [json.loads(line) for line in (demo / "demo_memories.jsonl").open(encoding="utf-8")]
    superseded = {r["supersedes"] for r in raws if r.get("supersedes")}
    views = []
    for raw in raws:
        view = MemoryView.from_record(parse_record(raw, "demo", SETTINGS), SETTINGS)
        if raw["memory_id"] in superseded and not raw.get("status"):
            view = replace(view, status="superseded")
        views.append(view)
    gold = {frozenset(p) for p in json.loads((demo / "labels.json").read_text())["contradictions"]}
    det = ContradictionDetector({})
    found = {
        frozenset(d.memory_ids)
        for group in _by_subject(views).values()
        for d in det.analyze_group(group, ctx())
        if d.score >= 0.55
    }
    assert gold <= found
    assert len(found - gold) <= 1


@pytest.mark.skipif(
    not (EVAL / "contradiction-poisonedrag").is_dir(), reason="shared/eval corpora not present"
)
def test_poisonedrag_pair_precision_and_recall_offline() -> None:
    views, labels = load_corpus(EVAL / "contradiction-poisonedrag", SETTINGS)
    det = ContradictionDetector({})
    found = {
        frozenset(d.memory_ids)
        for group in _by_subject(views).values()
        for d in det.analyze_group(group, ctx())
        if d.score >= 0.55
    }
    gold = {frozenset(p) for p in labels["contradictions"]}
    tp = len(found & gold)
    precision = tp / len(found) if found else 1.0
    recall = tp / len(gold)
    assert precision >= 0.8 and recall >= 0.6, (precision, recall)


# -- the rule pack ----------------------------------------------------------------------


def test_contradiction_rules_pass_their_own_cases(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules" / "contradiction", tmp_path / "contradiction")
    pack = load_pack(tmp_path)
    assert {r.id for r in pack.rules} == {f"MA-CON-00{i}" for i in range(1, 7)}
    results = run_rule_tests(pack, SETTINGS)
    bad = [r for r in results if not r.ok]
    assert bad == []
    assert sum(r.kind == "flag" for r in results) >= 15


_CANDIDATES_OF_THE_POOL = """
import hashlib
from datetime import UTC, datetime, timedelta
from auditor.detectors.base import MemoryView
from auditor.detectors.contradiction import candidate_pairs
from auditor.hashing import content_hash
from auditor.tools.realistic import corpora_roots, train_pool
base = datetime(2026, 1, 1, tzinfo=UTC)
mems = [
    MemoryView(memory_id=f"m{i:05d}", subject=f"s{i // 800}", fact=p.fact, trust_tier="user",
               created_at=base + timedelta(minutes=i), content_hash=content_hash(p.fact))
    for i, p in enumerate(train_pool(corpora_roots(None))[:6000])
]
pairs = sorted(tuple(sorted(p)) for p in candidate_pairs(mems))
print(len(pairs), hashlib.sha256(repr(pairs).encode()).hexdigest())
"""


def test_candidate_pairs_do_not_change_with_the_hash_seed() -> None:
    """A memory's similarity scores are float sums over its index keys; taken in a set's
    order, the last bits (and so which of two near-tied neighbours is kept) changed with
    the interpreter's hash seed: one contradiction in 81,000 findings of a 100,000-memory
    store came and went between processes. Seeds 1 and 3 differed on this sample."""
    import os
    import subprocess
    import sys

    runs = []
    for seed in ("1", "3"):
        done = subprocess.run(
            [sys.executable, "-c", _CANDIDATES_OF_THE_POOL],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        runs.append(done.stdout.split())
    assert int(runs[0][0]) > 10_000  # real work
    assert runs[0] == runs[1]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # a negated alternative: "not MySQL" denies nothing the other memory says
        ("Uses Postgres for the billing service, not MySQL.", "The billing service uses Postgres."),
        (
            "새 프로젝트는 타입스크립트로 작성한다, 자바스크립트가 아니라.",
            "새 프로젝트는 타입스크립트로 작성한다.",
        ),
        ("보고서는 한글 파일로 작성한다.", "보고서는 한글 파일로 작성합니다, 워드가 아니라."),
    ],
)
def test_a_negated_alternative_is_not_a_negation_conflict(older: str, newer: str) -> None:
    assert [d for d in pair(older, newer) if d.score >= 0.55] == []


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # the negation denies what the other memory states
        ("Drinks coffee every morning.", "Does not drink coffee in the morning."),
        ("커피를 마신다.", "커피를 마시지 않는다."),
        (
            "Uses MySQL for the billing service.",
            "Uses Postgres for the billing service, not MySQL.",
        ),
    ],
)
def test_a_negation_of_what_the_other_states_still_conflicts(older: str, newer: str) -> None:
    assert [d.entity for d in pair(older, newer) if d.score >= 0.55] != []


def test_every_default_trait_has_a_gate() -> None:
    """Each trait's patterns are tried only on texts holding one of their necessary
    literals (one automaton pass): no default trait is tried on every text, and a
    trait's own flag text passes its gate."""
    from auditor.detectors._contradiction_profile import _traits
    from auditor.detectors._contradiction_text import _tokens
    from auditor.detectors.contradiction import _default_lexicon

    lex, _ = _default_lexicon()
    assert lex.trait_always == frozenset()
    for text, trait in [
        ("Jordan's go-to order is a cheeseburger and fries.", "diet_meat"),
        ("하윤이는 매일 아침 카푸치노를 마신다.", "coffee"),
        ("Drinks a latte every morning.", "lactose"),
    ]:
        mentions = _traits(text, _tokens(text), lex, any("가" <= c <= "힣" for c in text))
        assert trait in {m.trait for m in mentions}, text


@pytest.mark.parametrize(
    ("before", "after", "side"),
    [
        (("runs", "at", "least"), (), "min"),
        (("no", "more", "than"), (), "max"),  # not the "min" of "more than"
        (("walks", "more", "than"), (), "min"),
        (("up", "to"), (), "max"),
        ((), ("hours", "or", "more"), "min"),  # the unit stands between
        ((), ("이상",), "min"),
        ((), ("시간", "이하"), "max"),
        (("매일",), ("잔",), ""),
        (("has",), ("kids",), ""),
    ],
)
def test_a_bound_is_read_from_the_words_around_a_number(
    before: tuple[str, ...], after: tuple[str, ...], side: str
) -> None:
    from auditor.detectors._contradiction_data import bound_side

    assert bound_side(before, after) == side
