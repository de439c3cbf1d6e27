"""Expiry, hygiene, supersede-chain and hand-over detectors, and the demo's planted problems."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from auditor.config import load_settings
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.chains import ChainDetector
from auditor.detectors.expiry import ExpiryDetector
from auditor.detectors.handover import HandoverDetector
from auditor.detectors.hygiene import HygieneDetector
from auditor.records import parse_record
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import load_pack
from auditor.sources.files.state import StateSource
from auditor.tools.evaluate import load_corpus

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "auditor" / "demo"
NOW = datetime(2026, 11, 29, tzinfo=UTC)
SETTINGS = load_settings()
TIER_OF = {"system": "system", "explicit_statement": "user", "inferred": "agent"}


def _ctx(now: datetime = NOW, lookup: Any = None) -> DetectContext:
    return DetectContext(now=now, settings=SETTINGS, lookup=lookup)


def view(memory_id: str = "m1", **kw: Any) -> MemoryView:
    """A memory view; ``source_type`` sets the tier the way the default policy does."""
    kw.setdefault("fact", "A fact.")
    kw.setdefault("source_type", "explicit_statement")
    kw.setdefault("trust_tier", TIER_OF.get(kw["source_type"], "external"))
    kw.setdefault("created_at", datetime(2026, 1, 1, tzinfo=UTC))
    return MemoryView(memory_id=memory_id, subject="user:t", **kw)


def _ents(dets: list[Detection]) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((d.entity, d.memory_ids) for d in dets)


# -- expiry -------------------------------------------------------------------------------

D = timedelta(days=1)


@pytest.mark.parametrize(
    ("params", "memory", "entities"),
    [
        ({}, view(expires_at=NOW - 3 * D), ["expired"]),
        ({}, view(expires_at=NOW), ["expired"]),
        ({}, view(expires_at=NOW + D), []),
        ({}, view(), []),
        ({}, view(expires_at=(NOW - D).replace(tzinfo=None)), ["expired"]),  # naive = UTC
        (
            {"ttl_days": {"schedule": 30}},
            view(category="schedule", created_at=NOW - 31 * D),
            ["ttl_exceeded"],
        ),
        ({"ttl_days": {"schedule": 30}}, view(category="schedule", created_at=NOW - 29 * D), []),
        ({"ttl_days": {"schedule": 30}}, view(category="travel", created_at=NOW - 99 * D), []),
        # updated_at counts: the fact was confirmed recently
        (
            {"ttl_days": {"schedule": 30}},
            view(category="schedule", created_at=NOW - 99 * D, updated_at=NOW - D),
            [],
        ),
        (
            {"ttl_days": {"schedule": 30}, "age_from": "created_at"},
            view(category="schedule", created_at=NOW - 99 * D, updated_at=NOW - D),
            ["ttl_exceeded"],
        ),
        # an explicit expires_at wins over the category policy ...
        (
            {"ttl_days": {"schedule": 30}},
            view(category="schedule", created_at=NOW - 99 * D, expires_at=NOW + D),
            [],
        ),
        # ... unless the policy says otherwise
        (
            {"ttl_days": {"schedule": 30}, "ttl_overrides_expires_at": True},
            view(category="schedule", created_at=NOW - 99 * D, expires_at=NOW + D),
            ["ttl_exceeded"],
        ),
        (
            {"ttl_days": {"schedule": 30}},
            view(category="schedule", created_at=NOW - 99 * D, expires_at=NOW - D),
            ["expired"],
        ),
        ({"ttl_days": {"schedule": 30}}, view(category="schedule", created_at=None), []),
    ],
)
def test_expiry(params: dict[str, Any], memory: MemoryView, entities: list[str]) -> None:
    assert [d.entity for d in ExpiryDetector(params).analyze(memory, _ctx())] == entities


def test_expired_details_say_how_long_ago() -> None:
    (det,) = ExpiryDetector({}).analyze(view(expires_at=NOW - 3 * D), _ctx())
    assert det.details["expired_days_ago"] == 3.0
    assert det.details["expired_seconds_ago"] == 3 * 86_400
    assert "3 days ago" in det.reason


def test_ttl_details() -> None:
    memory = view(category="session", created_at=NOW - 100 * D)
    (det,) = ExpiryDetector({"ttl_days": {"session": 90}}).analyze(memory, _ctx())
    assert det.details["ttl_days"] == 90
    assert det.details["over_by_days"] == 10.0
    assert det.details["age_from"] == "created_at"


@pytest.mark.parametrize(
    "params",
    [
        {"ttl_days": {"schedule": 0}},
        {"ttl_days": {"schedule": "30"}},
        {"ttl_days": [30]},
        {"age_from": "expires_at"},
        {"ttl_days": {"x": True}},
    ],
)
def test_expiry_bad_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ExpiryDetector(params)


# -- hygiene -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "memory", "entities"),
    [
        ({}, view(source_type=None), ["missing_provenance"]),
        ({}, view(), []),
        ({}, view(fact="x" * 8193, kind="note"), ["oversize_page"]),
        ({}, view(fact="x" * 8192, kind="note"), []),
        ({}, view(fact="가" * 2731), ["oversize_page"]),  # 3 bytes each: 8,193 bytes
        ({}, view(fact="가" * 2730), []),
        ({}, view(fact="short", extra={"page_bytes": 9000}), ["oversize_page"]),
        ({}, view(fact="short", extra={"page_bytes": "9000"}), []),
        ({"max_page_bytes": 100}, view(fact="y" * 101), ["oversize_page"]),
        (
            {},
            view(source_type="external_content", extra={"trust_tier": "system"}),
            ["claimed_tier_mismatch"],
        ),
        (
            {},
            view(source_type="inferred", extra={"claimed_trust_tier": "user"}),
            ["claimed_tier_mismatch"],
        ),
        ({}, view(source_type="explicit_statement", extra={"claimed_trust_tier": "user"}), []),
        ({}, view(source_type="explicit_statement", extra={"claimed_trust_tier": "agent"}), []),
        ({}, view(source_type="external_content", extra={"trust_tier": "root"}), []),
        ({"checks": ["size"]}, view(source_type=None), []),
        (
            {},
            view(source_type=None, extra={"trust_tier": "system"}, fact="z" * 9000),
            ["claimed_tier_mismatch", "missing_provenance", "oversize_page"],
        ),
    ],
)
def test_hygiene(params: dict[str, Any], memory: MemoryView, entities: list[str]) -> None:
    dets = HygieneDetector(params).analyze(memory, _ctx())
    assert sorted(d.entity for d in dets) == entities


def test_oversize_details() -> None:
    (det,) = HygieneDetector({}).analyze(view(fact="x" * 9000), _ctx())
    assert det.details == {
        "fact_bytes": 9000,
        "page_bytes": None,
        "max_page_bytes": 8192,
        "over_by": 808,
    }


@pytest.mark.parametrize(
    "params", [{"max_page_bytes": 0}, {"max_page_bytes": "8k"}, {"checks": ["spelling"]}]
)
def test_hygiene_bad_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        HygieneDetector(params)


# -- chains --------------------------------------------------------------------------------


def _t(day: int) -> datetime:
    return datetime(2026, 1, day, tzinfo=UTC)


#: (case, memories, [(entity, memory ids at fault, context ids)])
CHAIN_CASES: list[
    tuple[str, list[MemoryView], list[tuple[str, tuple[str, ...], tuple[str, ...]]]]
] = [
    (
        "healthy chain",
        [
            view("a", status="superseded", created_at=_t(1)),
            view("b", supersedes="a", status="superseded", created_at=_t(2)),
            view("c", supersedes="b", created_at=_t(3)),
        ],
        [],
    ),
    ("dangling", [view("a", supersedes="ghost")], [("dangling_link", ("a",), ())]),
    (
        "cycle of two, in chain order from the smallest id",
        [
            view("b", supersedes="a", status="superseded"),
            view("a", supersedes="b", status="superseded"),
        ],
        [("cycle", ("a", "b"), ())],
    ),
    (
        "cycle of three",
        [
            view("c", supersedes="b"),
            view("b", supersedes="a", status="superseded"),
            view("a", supersedes="c", status="superseded"),
        ],
        [("cycle", ("a", "c", "b"), ())],
    ),
    ("self cycle", [view("a", supersedes="a")], [("cycle", ("a",), ())]),
    (
        "cycle of active memories is one cycle, not also active_superseded",
        [view("a", supersedes="b"), view("b", supersedes="a")],
        [("cycle", ("a", "b"), ())],
    ),
    (
        "fork: the heads are at fault, oldest first; the target is context",
        [
            view("t", status="superseded", created_at=_t(1)),
            view("h2", supersedes="t", created_at=_t(3)),
            view("h1", supersedes="t", created_at=_t(2)),
        ],
        [("fork", ("h1", "h2"), ("t",))],
    ),
    (
        "a deleted branch is not a fork",
        [
            view("t", status="superseded"),
            view("h1", supersedes="t"),
            view("h2", supersedes="t", status="deleted"),
        ],
        [],
    ),
    (
        "active superseded: the old memory is at fault, the newer one is context",
        [
            view("old", status="active", created_at=_t(1)),
            view("new", supersedes="old", created_at=_t(2)),
        ],
        [("active_superseded", ("old",), ("new",))],
    ),
    (
        "active superseded by a superseded memory",
        [
            view("old", created_at=_t(1)),
            view("mid", supersedes="old", status="superseded", created_at=_t(2)),
            view("new", supersedes="mid", created_at=_t(3)),
        ],
        [("active_superseded", ("old",), ("mid",))],
    ),
    (
        "a quarantined successor does not make the old memory wrong",
        [view("old"), view("new", supersedes="old", status="quarantined")],
        [],
    ),
    (
        "tier inversion: the lower-tier newer memory is at fault",
        [
            view("old", status="superseded", created_at=_t(1)),
            view("new", supersedes="old", source_type="external_content", created_at=_t(2)),
        ],
        [("tier_inversion", ("new",), ("old",))],
    ),
    (
        "tier inversion: agent over user",
        [view("old", status="superseded"), view("new", supersedes="old", source_type="inferred")],
        [("tier_inversion", ("new",), ("old",))],
    ),
    (
        "approved tier override",
        [
            view("old", status="superseded"),
            view(
                "new",
                supersedes="old",
                source_type="external_content",
                extra={"supersede_approved_by": "reviewer:kim"},
            ),
        ],
        [],
    ),
    (
        "inversion no longer in effect (the low-tier memory was superseded again)",
        [
            view("a", status="superseded", created_at=_t(1)),
            view(
                "b",
                supersedes="a",
                source_type="external_content",
                status="superseded",
                created_at=_t(2),
            ),
            view("c", supersedes="b", created_at=_t(3)),
        ],
        [],
    ),
    (
        "higher tier over lower is fine",
        [
            view("old", status="superseded", source_type="inferred"),
            view("new", supersedes="old", source_type="system"),
        ],
        [],
    ),
]


@pytest.mark.parametrize(
    ("memories", "expected"), [(m, e) for _, m, e in CHAIN_CASES], ids=[c[0] for c in CHAIN_CASES]
)
def test_chains(
    memories: list[MemoryView], expected: list[tuple[str, tuple[str, ...], tuple[str, ...]]]
) -> None:
    got = ChainDetector({}).analyze_group(memories, _ctx())
    assert sorted((d.entity, d.memory_ids, d.context_ids) for d in got) == sorted(expected)


def test_chains_are_order_independent() -> None:
    ms = [
        view("c", supersedes="b"),
        view("b", supersedes="a", status="superseded"),
        view("a", supersedes="c", status="superseded"),
        view("d", supersedes="ghost"),
    ]
    first = _ents(ChainDetector({}).analyze_group(ms, _ctx()))
    assert first == _ents(ChainDetector({}).analyze_group(list(reversed(ms)), _ctx()))


def test_lookup_resolves_targets_outside_the_group() -> None:
    outside = {"old": view("old", status="expired")}
    calls: list[str] = []

    def lookup(memory_id: str) -> MemoryView | None:
        calls.append(memory_id)
        return outside.get(memory_id)

    memories = [view("new", supersedes="old"), view("other", supersedes="gone")]
    dets = ChainDetector({}).analyze_group(memories, _ctx(lookup=lookup))
    assert _ents(dets) == [("dangling_link", ("other",))]
    assert sorted(set(calls)) == ["gone", "old"]
    assert len(calls) == len(set(calls))  # each id looked up once


def test_chain_details_and_reasons() -> None:
    (det,) = ChainDetector({}).analyze_group(
        [
            view("old", status="superseded"),
            view("new", supersedes="old", source_type="external_content"),
        ],
        _ctx(),
    )
    assert det.details["older_tier"] == "user" and det.details["newer_tier"] == "external"
    assert det.details["tier_gap"] == 2
    assert det.spans == ()


@pytest.mark.parametrize("params", [{"approval_keys": "approved_by"}, {"max_chain": 0}])
def test_chain_bad_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ChainDetector(params)


# -- hand-over notes ---------------------------------------------------------------------


def note(
    memory_id: str,
    section: str,
    fact: str = "item",
    created_at: datetime | None = None,
    **extra: Any,
) -> MemoryView:
    """A memory imported from a hand-over note (``extra`` as the state importer writes it)."""
    return view(
        memory_id,
        fact=fact,
        source_type="import",
        created_at=created_at or datetime(2026, 1, 1, tzinfo=UTC),
        extra={"state_section": section, **extra},
    )


HANDOVER_CASES: list[tuple[str, list[MemoryView], list[tuple[str, tuple[str, ...]]]]] = [
    (
        "completed without evidence",
        [note("c1", "completed", state_item_source=None)],
        [("completed_without_evidence", ("c1",))],
    ),
    ("completed with evidence", [note("c1", "completed", state_item_source="runs/x.log")], []),
    ("not a hand-over memory", [view("c1", extra={"state_item_source": None})], []),
    (
        "source never checked",
        [note("s1", "sources", "runs/a.log", checked_at=None)],
        [("source_unchecked", ("s1",))],
    ),
    ("source checked", [note("s1", "sources", "runs/a.log", checked_at="2026-10-20")], []),
    (
        "negation conflict between decisions",
        [
            note(
                "x",
                "decisions",
                "Post the draft to the incident channel automatically",
                decision_id="D3",
            ),
            note(
                "y",
                "decisions",
                "Never post automatically: ask the commander first",
                decision_id="D4",
            ),
        ],
        [("decision_conflict", ("x", "y"))],
    ),
    (
        "decision ids in natural order (D2 before D10)",
        [
            note("a", "decisions", "Store drafts in SQLite", decision_id="D10"),
            note("b", "decisions", "Store drafts in PostgreSQL", decision_id="D2"),
        ],
        [("decision_conflict", ("b", "a"))],
    ),
    (
        "same slot, different wording elsewhere",
        [
            note("a", "decisions", "Use PostgreSQL for drafts", decision_id="D1"),
            note("b", "decisions", "Use Redis for session caching", decision_id="D2"),
        ],
        [],
    ),
    (
        "both negate the same thing",
        [
            note("a", "decisions", "Never post automatically", decision_id="D1"),
            note("b", "decisions", "Do not post automatically", decision_id="D2"),
        ],
        [],
    ),
    (
        "a rejected decision is out of the comparison",
        [
            note("a", "decisions", "Post automatically", decision_id="D1", state_status="rejected"),
            note("b", "decisions", "Never post automatically", decision_id="D2"),
        ],
        [],
    ),
    (
        "a newer constraint conflicts with a decision",
        [
            note("d", "decisions", "Use pnpm for the monorepo", decision_id="D1"),
            note(
                "c", "constraints", "Do not use pnpm", created_at=datetime(2026, 2, 1, tzinfo=UTC)
            ),
        ],
        [("decision_conflict", ("d", "c"))],
    ),
    (
        "an older constraint was overridden by the decision",
        [
            note(
                "d",
                "decisions",
                "Use pnpm for the monorepo",
                decision_id="D1",
                created_at=datetime(2026, 3, 1, tzinfo=UTC),
            ),
            note("c", "constraints", "Do not use pnpm"),
        ],
        [],
    ),
    (
        "two constraints are not compared",
        [
            note("c1", "constraints", "Use npm for installs"),
            note("c2", "constraints", "Use pnpm for installs"),
        ],
        [],
    ),
    (
        "different notes (namespaces) are not compared",
        [
            note("a", "decisions", "Store drafts in SQLite", decision_id="D1"),
            dataclasses.replace(
                note("b", "decisions", "Store drafts in PostgreSQL", decision_id="D1"),
                namespace="other-project",
            ),
        ],
        [],
    ),
    (
        "Korean negation",
        [
            note("a", "decisions", "초안은 채널에 자동으로 게시함", decision_id="D1"),
            note("b", "decisions", "초안을 자동으로 게시하지 말 것", decision_id="D2"),
        ],
        [("decision_conflict", ("a", "b"))],
    ),
]


@pytest.mark.parametrize(
    ("memories", "expected"),
    [(m, e) for _, m, e in HANDOVER_CASES],
    ids=[c[0] for c in HANDOVER_CASES],
)
def test_handover(memories: list[MemoryView], expected: list[tuple[str, tuple[str, ...]]]) -> None:
    assert _ents(HandoverDetector({}).analyze_group(memories, _ctx())) == sorted(expected)


def test_handover_details_do_not_copy_text() -> None:
    (det,) = HandoverDetector({}).analyze_group(HANDOVER_CASES[5][1], _ctx())
    assert det.details["kind"] == "negation"
    assert det.details["items"] == ["decision D3", "decision D4"]
    assert "incident" not in json.dumps(dict(det.details)) + det.reason


def test_source_missing_only_when_enabled(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "request.md").write_text("x")
    memories = [
        note("s1", "sources", "notes/request.md: the request", checked_at="2026-10-01"),
        note("s2", "sources", "notes/gone.md: removed", checked_at="2026-10-01"),
        note("s3", "sources", "../outside.md", checked_at="2026-10-01"),
        note("c1", "completed", "done", state_item_source="runs/missing.log#L3"),
        note("c2", "completed", "done", state_item_source="https://ci.example.com/run/1"),
    ]
    assert HandoverDetector({}).analyze_group(memories, _ctx()) == []
    dets = HandoverDetector({"check_paths": True, "source_root": str(tmp_path)}).analyze_group(
        memories, _ctx()
    )
    assert _ents(dets) == [("source_missing", ("c1",)), ("source_missing", ("s2",))]
    assert {d.details["path"] for d in dets} == {"notes/gone.md", "runs/missing.log"}


@pytest.mark.parametrize(
    "params",
    [
        {"check_paths": True},
        {"source_root": 3},
        {"closed_statuses": "rejected"},
        {"min_context_jaccard": 2},
    ],
)
def test_handover_bad_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        HandoverDetector(params)


def test_demo_state_note() -> None:
    """The demo note's three planted problems, and nothing else."""
    src = StateSource(DEMO / "state.json", SETTINGS)
    views = [
        MemoryView.from_record(parse_record(item.raw, item.location, SETTINGS), SETTINGS)
        for item in src.items()
        if item.raw is not None
    ]
    dets = HandoverDetector({}).analyze_group(views, _ctx())
    by_id = {v.memory_id: v for v in views}
    found = sorted(
        (
            d.entity,
            tuple(by_id[i].extra.get("decision_id") or by_id[i].fact[:20] for i in d.memory_ids),
        )
        for d in dets
    )
    assert found == [
        ("completed_without_evidence", ("End-to-end test agai",)),
        ("decision_conflict", ("D3", "D4")),
        ("source_unchecked", ("runs/2026-10-12-pagi",)),
    ]


# -- the demo store ------------------------------------------------------------------------

#: planted kind -> rules that must catch it
PLANTED_RULES: Mapping[str, tuple[str, ...]] = {
    "lifecycle": ("MA-LIF-001", "MA-LIF-002", "MA-LIF-003", "MA-LIF-004"),
    "trust": ("MA-TRU-001",),
    "expired": ("MA-EXP-001",),
    "provenance": ("MA-TRU-002",),
    "oversize": ("MA-LIF-005",),
    "secret": ("MA-SEC-001", "MA-SEC-002", "MA-SEC-003", "MA-SEC-004", "MA-SEC-005"),
}


@pytest.fixture(scope="module")
def demo_hits(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, set[str]], Any]:
    rules_dir = tmp_path_factory.mktemp("rules")
    for folder in ("secrets", "expiry", "lifecycle"):
        shutil.copytree(ROOT / "rules" / folder, rules_dir / folder)
    corpus = tmp_path_factory.mktemp("demo")
    shutil.copy(DEMO / "demo_memories.jsonl", corpus / "memories.jsonl")
    shutil.copy(DEMO / "labels.json", corpus / "labels.json")
    views, labels = load_corpus(corpus, SETTINGS)  # statuses derived as the importer does
    now = datetime.fromisoformat(labels["summary"]["reference_now"].replace("Z", "+00:00"))
    hits, errors = Engine(load_pack(rules_dir).active()).run(views, _ctx(now=now))
    assert errors == []
    flagged: dict[str, set[str]] = {}
    for h in hits:
        flagged.setdefault(h.rule.id, set()).update(h.detection.memory_ids)
    return flagged, labels


@pytest.mark.parametrize("kind", sorted(PLANTED_RULES))
def test_demo_planted_problems_are_caught(
    demo_hits: tuple[dict[str, set[str]], Any], kind: str
) -> None:
    flagged, labels = demo_hits
    planted = {i for i, kinds in labels["planted"].items() if kind in kinds}
    caught = set().union(*(flagged.get(r, set()) for r in PLANTED_RULES[kind]))
    assert planted and planted <= caught


def test_demo_benign_lookalikes_are_not_flagged(
    demo_hits: tuple[dict[str, set[str]], Any],
) -> None:
    flagged, labels = demo_hits
    strict = {r: ids for r, ids in flagged.items() if r != "MA-EXP-002"}
    assert set(labels["benign_lookalikes"]).isdisjoint(set().union(*strict.values()))


def test_demo_chain_findings_flag_only_the_memories_at_fault(
    demo_hits: tuple[dict[str, set[str]], Any],
) -> None:
    """The demo's planter labelled the memory at fault (a fork's heads, the stale memory left
    active), never the memory it replaced or the one replacing it: the chain rules flag
    exactly those. A tier inversion flags the lower-tier override, never the trusted memory
    it pushed aside (the demo also has an unlabelled one: a fork head inferred over the
    user's statement)."""
    flagged, labels = demo_hits
    chain = ("MA-LIF-001", "MA-LIF-002", "MA-LIF-003", "MA-LIF-004")
    planted = {i for i, kinds in labels["planted"].items() if "lifecycle" in kinds}
    assert set().union(*(flagged.get(r, set()) for r in chain)) == planted
    records = [json.loads(line) for line in (DEMO / "demo_memories.jsonl").open(encoding="utf-8")]
    replaced = {r["supersedes"] for r in records if r.get("supersedes")}
    trust = {i for i, kinds in labels["planted"].items() if "trust" in kinds}
    assert trust <= flagged["MA-TRU-001"] and flagged["MA-TRU-001"].isdisjoint(replaced)
