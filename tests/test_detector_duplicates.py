"""The duplicates detector: tokens, the exact prefix-filtered search, clusters, detections."""

from __future__ import annotations

import itertools
import random
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from auditor.config import load_settings
from auditor.detectors import build
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.duplicates import (
    DuplicateDetector,
    Tokenizer,
    clusters,
    jaccard,
    similar_pairs,
)
from auditor.rulepack.engine import run_rule_tests
from auditor.rulepack.pack import load_pack

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def view(mid: str, fact: str, day: int | None = 0, **kw: Any) -> MemoryView:
    """A memory of user:alice created ``day`` days after T0 (None: no timestamp)."""
    created = None if day is None else T0 + timedelta(days=day)
    fields: dict[str, Any] = {
        "memory_id": mid,
        "subject": "user:alice",
        "fact": fact,
        "trust_tier": "user",
        "created_at": created,
        "updated_at": created,
    }
    fields.update(kw)
    return MemoryView(**fields)


def run(memories: list[MemoryView], **params: Any) -> list[Detection]:
    ctx = DetectContext(now=T0, settings=load_settings())
    return DuplicateDetector(params).analyze_group(memories, ctx)


def pairs_of(detections: list[Detection]) -> list[tuple[str, ...]]:
    return [d.memory_ids for d in detections]


# -- tokens --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "hangul", "stop_words", "expected"),
    [
        ("Use pnpm, NOT npm!", "word", [], ["use", "pnpm", "not", "npm"]),
        ("ＰＮＰＭ ｆｉｒｓｔ", "word", [], ["pnpm", "first"]),  # NFKC folds full width
        ("Straße", "word", [], ["strasse"]),  # casefold
        ("snake_case 12.5", "word", [], ["snake_case", "12", "5"]),
        ("pnpm만 사용한다", "word", [], ["pnpm", "만", "사용한다"]),  # split at the script edge
        ("회의는 월요일", "bigram", [], ["회의", "의는", "월요", "요일"]),
        ("한 pnpm", "bigram", [], ["한", "pnpm"]),  # a one-syllable run stays whole
        ("the user likes the tea", "word", ["The"], ["user", "likes", "tea"]),
        ("!!! ...", "word", [], []),
    ],
)
def test_tokens(text: str, hangul: str, stop_words: list[str], expected: list[str]) -> None:
    assert Tokenizer(hangul, stop_words).tokens(text) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("a b c", "a b c", 1.0),
        ("a b c", "a b d", 0.5),
        ("a b c", "a b d e", 0.4),
        ("a b", "c d", 0.0),
        ("", "a", 0.0),
        ("", "", 0.0),
    ],
)
def test_jaccard(a: str, b: str, expected: float) -> None:
    assert jaccard(frozenset(a.split()), frozenset(b.split())) == pytest.approx(expected)


# -- the search ------------------------------------------------------------------------


def _brute_components(sets: list[frozenset[str]], t: float) -> list[list[int]]:
    links = [
        (i, j, 1.0)
        for i, j in itertools.combinations(range(len(sets)), 2)
        if jaccard(sets[i], sets[j]) >= t - 1e-9
    ]
    return clusters(len(sets), links)


@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.5, 0.6, 0.75, 1.0])
def test_similar_pairs_is_exact(threshold: float) -> None:
    rng = random.Random(threshold)
    for _ in range(150):
        vocab = [f"w{i}" for i in range(rng.randint(2, 14))]
        sets = [
            frozenset(rng.sample(vocab, rng.randint(0, min(6, len(vocab)))))
            for _ in range(rng.randint(1, 24))
        ]
        found = similar_pairs(sets, threshold, max_postings=None)
        assert found.dropped_postings == 0
        for i, j, sim in found.pairs:
            assert i < j
            assert sim == pytest.approx(jaccard(sets[i], sets[j]))
            assert sim >= threshold - 1e-9
        heads = sorted({s: i for i, s in reversed(list(enumerate(sets)))}.values())
        distinct = {  # repeated sets are linked to their first occurrence only
            (i, j)
            for i, j in itertools.combinations(heads, 2)
            if jaccard(sets[i], sets[j]) >= threshold - 1e-9
        }
        assert distinct <= {(i, j) for i, j, _ in found.pairs}
        assert clusters(len(sets), found.pairs) == _brute_components(sets, threshold)


def test_search_cost_is_far_below_all_pairs() -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(4000)]
    tok = Tokenizer()
    texts = [" ".join(["the", "user", "prefers", *rng.sample(words, 8)]) for _ in range(3000)]
    texts += [texts[k] + " again" for k in range(0, 300, 3)]  # 100 planted near-duplicates
    found = similar_pairs([tok.token_set(t) for t in texts], 0.5)
    all_pairs = len(texts) * (len(texts) - 1) // 2
    assert found.verified < all_pairs * 0.02
    planted = {(k, 3000 + k // 3) for k in range(0, 300, 3)}
    assert planted <= {(i, j) for i, j, _ in found.pairs}


def test_posting_cap_bounds_the_work_and_reports_dropped_entries() -> None:
    sets = [frozenset({"common", f"w{i}"}) for i in range(50)]
    capped = similar_pairs(sets, 0.3, max_postings=5)
    exact = similar_pairs(sets, 0.3, max_postings=None)
    assert capped.dropped_postings > 0
    assert capped.verified < exact.verified
    assert exact.dropped_postings == 0


@pytest.fixture
def all_levels_logged() -> Iterator[None]:
    """structlog's defaults (no level filter) for the test, then the previous set-up."""
    saved = structlog.get_config()
    structlog.reset_defaults()
    try:
        yield
    finally:
        structlog.configure(**saved)


def test_posting_cap_is_logged_by_the_detector(all_levels_logged: None) -> None:
    memories = [view(f"m{i}", f"common word{i}", i) for i in range(20)]
    with capture_logs() as logs:
        run(memories, max_postings=2, threshold=0.3)
    events = [e for e in logs if e["event"] == "duplicate_postings_capped"]
    assert events and events[0]["dropped"] > 0 and events[0]["memories"] == 20


@pytest.mark.parametrize(
    ("sets", "expected"),
    [
        ([], []),
        ([(0, 1), (2, 3)], [[0, 1], [2, 3], [4]]),
        ([(0, 4), (4, 2)], [[0, 2, 4], [1], [3]]),
    ],
)
def test_clusters(sets: list[tuple[int, int]], expected: list[list[int]]) -> None:
    n = 5 if sets else 0
    assert clusters(n, [(i, j, 1.0) for i, j in sets]) == expected


# -- the detector ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("memories", "expected"),
    [
        pytest.param(
            [view("a", "Use pnpm, not npm.", 1), view("b", "use pnpm not npm", 2)],
            [("b", "a")],
            id="exact-token-set",
        ),
        pytest.param(
            [view("a", "alpha beta gamma", 1), view("b", "alpha beta delta", 2)],
            [("b", "a")],
            id="jaccard-exactly-at-threshold",
        ),
        pytest.param(
            [view("a", "alpha beta gamma", 1), view("b", "alpha beta delta eps", 2)],
            [],
            id="jaccard-0.4-below",
        ),
        pytest.param(
            [
                view("a", "w1 w2 w3 w4", 1),
                view("b", "w1 w2 w3 w5", 2),
                view("c", "w1 w2 w5 w6", 3),
            ],
            [("c", "a"), ("c", "b")],
            id="transitive-chain-keeps-newest",
        ),
        pytest.param(
            [view("z", "same words here", 1), view("a", "same words here", 1)],
            [("z", "a")],
            id="same-time-id-breaks-the-tie",
        ),
        pytest.param(
            [
                view("a", "same words here", 1, updated_at=T0 + timedelta(days=9)),
                view("b", "same words here", 1),
            ],
            [("a", "b")],
            id="updated-at-breaks-the-tie",
        ),
        pytest.param(
            [view("a", "same words here", None), view("b", "same words here", 1)],
            [("b", "a")],
            id="missing-created-at-is-oldest",
        ),
        pytest.param(
            [
                view("a", "same words here", 5, created_at=datetime(2026, 1, 9)),
                view("b", "same words here", 1),
            ],
            [("a", "b")],
            id="naive-timestamp-read-as-utc",
        ),
        pytest.param([view("a", "!!!", 1), view("b", "???", 2)], [], id="no-tokens-never-link"),
        pytest.param([view("a", "only one memory", 1)], [], id="single-memory"),
    ],
)
def test_detector_pairs(memories: list[MemoryView], expected: list[tuple[str, str]]) -> None:
    assert pairs_of(run(memories)) == expected


def test_detection_explains_itself_without_the_text() -> None:
    facts = [
        "Send invoices to billing.person@example.com every Friday morning",
        "send invoices to billing.person@example.com every friday",
        "Something else entirely",
    ]
    memories = [view(f"m{i}", f, i) for i, f in enumerate(facts)]
    (d,) = run(memories)
    assert d.memory_ids == ("m1", "m0")
    assert d.detector == "duplicates" and d.entity == "near_duplicate"
    assert d.score == pytest.approx(0.9)
    assert d.details["cluster_size"] == 2
    assert d.details["kept_id"] == "m1"
    assert d.details["jaccard_to_kept"] == pytest.approx(0.9)
    assert d.details["suggested_resolution"] == {
        "action": "supersede",
        "keep": "m1",
        "supersede": "m0",
    }
    assert [(s.memory_id, s.start, s.end) for s in d.spans] == [
        ("m1", 0, len(facts[1])),
        ("m0", 0, len(facts[0])),
    ]
    assert "example.com" not in d.reason and "example.com" not in str(d.details)


def test_chain_member_scores_its_best_link_not_the_kept_one() -> None:
    memories = [
        view("a", "w1 w2 w3 w4", 1),
        view("b", "w1 w2 w3 w5", 2),
        view("c", "w1 w2 w5 w6", 3),
    ]
    by_dup = {d.memory_ids[1]: d for d in run(memories)}
    assert by_dup["a"].score == pytest.approx(0.6)
    assert by_dup["a"].details["linked_to"] == "b"
    assert by_dup["a"].details["jaccard_to_kept"] == pytest.approx(1 / 3, abs=1e-4)
    assert by_dup["a"].details["cluster_size"] == 3


def test_findings_stay_stable_when_an_older_copy_joins() -> None:
    base = [view("a", "use pnpm for installs", 2), view("b", "use pnpm for all installs", 3)]
    before = pairs_of(run(base))
    after_older = pairs_of(run([*base, view("old", "use pnpm for installs please", 1)]))
    assert before == [("b", "a")]
    assert set(before) < set(after_older)
    after_newer = pairs_of(run([*base, view("new", "use pnpm for installs now", 9)]))
    assert after_newer == [("new", "a"), ("new", "b")]


def test_cluster_member_that_conflicts_with_the_kept_one_is_not_its_copy() -> None:
    """Two names of one dog, each close to "has a dog": single linkage puts the three in one
    cluster, but the older name is not a copy of the newer one (a contradiction the
    contradiction rules report), so it is not offered for superseding."""
    (rule,) = [r for r in load_pack().active() if r.id == "MA-DUP-001"]
    memories = [
        view("has", "사용자는 반려견을 키운다", 1),
        view("choco", "사용자의 반려견 이름은 초코다", 2),
        view("mong", "사용자의 반려견 이름은 몽이다", 3),
    ]
    found = pairs_of(run(memories, **dict(rule.params)))
    assert ("mong", "choco") not in found
    assert ("mong", "has") in found  # the plain restatement link stays


def test_lower_trust_newest_copy_suggests_review() -> None:
    memories = [
        view("user_said", "answer in korean by default", 1, trust_tier="user"),
        view("web_said", "answer in korean by default always", 2, trust_tier="external"),
    ]
    (d,) = run(memories)
    assert d.memory_ids == ("web_said", "user_said")
    assert d.details["suggested_resolution"]["action"] == "review"


def test_stop_words_and_hangul_params_change_the_links() -> None:
    stop = [view("a", "the user likes tea", 1), view("b", "the user drinks coffee", 2)]
    assert run(stop) == []
    assert pairs_of(run(stop, stop_words=["the", "user"], threshold=0.3)) == []
    assert pairs_of(run(stop, threshold=0.3)) == [("b", "a")]
    korean = [
        view("a", "회의는 매주 월요일에 열린다", 1),
        view("b", "회의를 매주 월요일에 연다", 2),
    ]
    assert run(korean) == []  # word tokens: particles differ (2/6)
    assert pairs_of(run(korean, hangul="bigram")) == [("b", "a")]


def test_numbers_must_match() -> None:
    memories = [
        view("a", "flight KE123 departs Incheon at 09:40 on May 3", 1),
        view("b", "flight KE456 departs Incheon at 09:40 on May 9", 2),
    ]
    (d,) = run(memories)
    assert d.details["numbers_differ"] is True
    assert d.details["differing_tokens"] == 4
    assert run(memories, numbers_must_match=True) == []
    same = [
        view("a", "flight KE123 departs at 09:40", 1),
        view("b", "Flight KE123 departs 09:40", 2),
    ]
    (d,) = run(same, numbers_must_match=True)
    assert d.details["numbers_differ"] is False


def test_partition_by_namespace() -> None:
    memories = [
        view("a", "prefers dark mode", 1, namespace="ide"),
        view("b", "prefers dark mode", 2, namespace="chat"),
    ]
    assert pairs_of(run(memories)) == [("b", "a")]
    assert run(memories, partition_by=["namespace"]) == []


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"threshold": 0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": "high"}, "threshold"),
        ({"threshold": True}, "threshold"),
        ({"stop_words": "the"}, "stop_words"),
        ({"hangul": "jamo"}, "hangul"),
        ({"max_postings": 0}, "max_postings"),
        ({"max_postings": 2.5}, "max_postings"),
        ({"partition_by": ["subject"]}, "partition_by"),
        ({"numbers_must_match": "yes"}, "numbers_must_match"),
        ({"words": "lemmas"}, "words"),
        ({"conflict_min_score": 2}, "conflict_min_score"),
        ({"treshold": 0.5}, "treshold"),
    ],
)
def test_bad_params_name_the_parameter(params: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name}:"):
        DuplicateDetector(params)


def test_registered_as_a_subject_detector() -> None:
    det = build("duplicates", {"threshold": 0.5})
    assert isinstance(det, DuplicateDetector)
    assert det.scope == "subject"
    with pytest.raises(TypeError):
        det.analyze(view("a", "x"), DetectContext(now=T0, settings=load_settings()))


def test_large_subject_is_fast() -> None:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(3000)]
    memories = [
        view(f"m{i}", " ".join(["user", "prefers", *rng.sample(words, 7)]), i % 300)
        for i in range(2000)
    ]
    # speed is measured by `memaudit bench`; here: a large subject completes and every
    # reported pair really reaches the threshold
    found = run(memories)
    texts = {m.memory_id: set(m.fact.split()) for m in memories}
    for d in found:
        a, b = (texts[i] for i in d.memory_ids[:2])
        assert len(a & b) / len(a | b) >= 0.5


def test_rule_pack_cases(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules" / "duplicates", tmp_path / "duplicates")
    results = run_rule_tests(load_pack(tmp_path), load_settings())
    assert {r.rule_id for r in results} == {"MA-DUP-001"}
    assert [r for r in results if not r.ok] == []
    assert sum(r.kind == "flag" for r in results) >= 3
    assert sum(r.kind == "known_miss" for r in results) >= 1


def test_focused_analysis_matches_the_full_one_for_changed_memories() -> None:
    """Incremental scans: the search from the changed memories finds the same detections."""
    rng = random.Random(11)
    words = [f"w{i}" for i in range(16)]
    memories = [view(f"m{i:03d}", " ".join(rng.sample(words, 6)), i) for i in range(120)]
    full = run(memories)
    assert len(full) > 10  # the data has real clusters
    checked = 0
    for focus_ids in (["m003"], ["m010", "m077"], [m.memory_id for m in memories[:5]]):
        focus = frozenset(focus_ids)
        ctx = DetectContext(now=T0, settings=load_settings(), focus=focus)
        focused = DuplicateDetector({}).analyze_group(memories, ctx)
        involved = [d for d in focused if not focus.isdisjoint(d.memory_ids)]
        expected = [d for d in full if not focus.isdisjoint(d.memory_ids)]
        assert [(d.memory_ids, d.score) for d in involved] == [
            (d.memory_ids, d.score) for d in expected
        ]
        checked += len(expected)
    assert checked > 0


# -- words: stems, containment links, conflicts (issue 10: duplicates on unseen data) ------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # function words go before stemming ("does" is one, its stem "doe" is not) ...
        # (a clock time is one token on the 24-hour clock: "10am" is "t1000")
        ("Does not schedule meetings before 10am.", ["not", "schedul", "meet", "befor", "t1000"]),
        # ... but not the words that carry a direction, a negation or a quantity
        ("Turns the lights off", ["turn", "light", "off"]),
        (
            "Prefers dark mode in all of their editors",
            ["prefer", "dark", "mod", "in", "all", "editor"],
        ),
        # Korean: particles and endings are cut (배포는 -> 배포; 합니다, 한다, 해요 -> 하)
        ("배포는 매주 화요일에 합니다", ["배포", "매주", "화요일", "하"]),
    ],
)
def test_tokens_by_stem(text: str, expected: list[str]) -> None:
    assert Tokenizer(words="stems").tokens(text) == expected


def test_words_stems_links_rewordings_that_plain_tokens_miss() -> None:
    pairs = [
        ("Prefers dark mode in every editor.", "Prefers dark mode in all of their editors."),
        ("배포는 매주 화요일에 한다.", "매주 화요일에 배포합니다."),
        ("서버 로그는 30일 동안 보관한다.", "서버 로그는 30일간 보관합니다."),
    ]
    for older, newer in pairs:
        memories = [view("a", older, 1), view("b", newer, 2)]
        assert run(memories) == [], older  # the paper's plain token sets do not link them
        assert pairs_of(run(memories, words="stems", hangul="bigram")) == [("b", "a")], older


def test_a_containment_link_scores_its_containment() -> None:
    # all 4 words of the shorter memory are in the longer one, whose Jaccard is only 0.4:
    # the detection's score is the share the link was made by, so a rule's min_score of 0.5
    # (the Jaccard threshold) does not drop every containment link
    short = "Runs the nightly backup script."
    long = "Runs the nightly backup script from cron, logs to syslog and mails the ops team."
    memories = [view("a", short, 1), view("b", long, 2)]
    (d,) = run(memories, words="stems", containment=0.75, containment_floor=0.4)
    assert d.score == pytest.approx(1.0)
    assert d.details["link"] == "containment"
    assert d.details["jaccard"] == pytest.approx(0.4)
    assert "100% of the shorter memory's words" in d.reason
    (plain,) = run([view("a", "w1 w2 w3", 1), view("b", "w1 w2 w3 w4", 2)])
    assert plain.details["link"] == "jaccard" and plain.score == pytest.approx(0.75)


def test_focused_analysis_finds_containment_links_too() -> None:
    """An incremental scan links a restatement with detail as the full scan does."""
    memories = [
        view("a", "Runs the nightly backup script.", 1),
        view(
            "b",
            "Runs the nightly backup script from cron, logs to syslog and mails the ops team.",
            2,
        ),
        view("c", "Something else entirely", 3),
    ]
    params = {"words": "stems", "containment": 0.75, "containment_floor": 0.4}
    full = run(memories, **params)
    assert pairs_of(full) == [("b", "a")]
    ctx = DetectContext(now=T0, settings=load_settings(), focus=frozenset({"b"}))
    focused = DuplicateDetector(params).analyze_group(memories, ctx)
    assert [(d.memory_ids, d.score) for d in focused] == [(d.memory_ids, d.score) for d in full]


def test_conflicts_are_not_copies() -> None:
    params = {"words": "stems", "conflicts_break_links": True, "conflict_min_score": 0.55}
    # a statement and its negation: a contradiction (the pair judge's negation signal)
    negated = [
        view("a", "The user eats meat.", 1),
        view("b", "The user doesn't eat meat anymore.", 2),
    ]
    assert pairs_of(run(negated, words="stems")) == [("b", "a")]
    assert run(negated, **params) == []
    # a negated alternative the other memory does not mention restates it
    restated = [
        view("a", "Uses Postgres for the billing service, not MySQL.", 1),
        view("b", "The billing service uses Postgres.", 2),
    ]
    assert pairs_of(run(restated, **params)) == [("b", "a")]


# -- frame links -------------------------------------------------------------------------

_STEMS = {"words": "stems", "hangul": "bigram", "containment": 0.75, "containment_floor": 0.4}


def test_a_typed_restatement_in_other_words_links_as_a_frame_link() -> None:
    """ "생일은 9월 17일" / "9월 17일에 태어났다" share too few tokens for Jaccard or
    containment (0.44), but give one attribute one date: a frame link, said so."""
    found = run(
        [view("a", "하은의 생일은 9월 17일이다.", 0), view("b", "하은은 9월 17일에 태어났다.", 1)],
        **_STEMS,
    )
    assert pairs_of(found) == [("b", "a")]
    assert found[0].details["link"] == "frame"
    assert "same typed value" in found[0].reason
    assert found[0].score == 0.5


def test_no_frame_link_without_containment_or_for_other_values() -> None:
    pair = [
        view("a", "하은의 생일은 9월 17일이다.", 0),
        view("b", "하은은 9월 17일에 태어났다.", 1),
    ]
    assert not run(pair, words="stems", hangul="bigram")  # containment off: no search below t
    other = [
        view("a", "하은의 생일은 9월 17일이다.", 0),
        view("b", "하은은 9월 27일에 태어났다.", 1),
    ]
    assert not run(other, **_STEMS)
    place = [
        view("a", "Theo's birthday is on October 9.", 0),
        view("b", "Theo was born in Porto.", 1),
    ]
    assert not run(place, **_STEMS)


def test_korean_objects_with_their_own_verbs_are_two_facts() -> None:
    pair = [
        view("a", "하은은 매주 일요일에 수영을 간다.", 0),
        view("b", "하은은 매주 일요일에 요가를 한다.", 1),
    ]
    assert not run(pair, conflicts_break_links=True, **_STEMS)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("about 3,000 stars", "roughly 3k stars"),
        ("starts at 2am", "starts at 02:00"),
        ("at 9:30 p.m.", "at 21:30"),
        ("at 7 a.m.", "at seven in the morning"),
    ],
)
def test_stems_mode_reads_one_number_or_time_written_two_ways_alike(a: str, b: str) -> None:
    tok = Tokenizer(hangul="bigram", words="stems")
    assert tok.token_set(a) == tok.token_set(b)


def test_stems_mode_keeps_times_and_counts_apart() -> None:
    tok = Tokenizer(hangul="bigram", words="stems")
    assert tok.token_set("opens at 7am") != tok.token_set("opens seven")
    assert tok.token_set("at 2am") != tok.token_set("at 2pm")
    assert "13pm" in tok.token_set("at 13pm")  # no time: left as it is
    plain = Tokenizer()
    assert plain.token_set("3,000") == {"3", "000"}  # the paper's plain sets are untouched
