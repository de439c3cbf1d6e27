"""The access-checked services the dashboard calls: roles, subjects, actions, listings."""

from __future__ import annotations

import json
import textwrap
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, text, update
from ulid import ULID

from auditor.access import accounts, signin
from auditor.access import admin as access_admin
from auditor.access import guard as access_guard
from auditor.access import officer as access
from auditor.access import officer_actions as access_actions
from auditor.access import officer_findings as access_findings
from auditor.access import user as access_user
from auditor.access.accounts import Actor
from auditor.access.officer_findings import QueueFilter
from auditor.errors import AccessDenied, AuthError, ChainForkError, InputError, TrustTierError
from auditor.lifecycle import audit_log
from auditor.lifecycle.machine import Lifecycle
from auditor.rulepack.pack import RulePack, load_pack
from auditor.scan.runs import ACTOR as SCAN_ACTOR
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Finding, FindingMemory, Memory, ScanRun
from auditor.store.types import utcnow
from auditor.testing import make_record

PW = "a long enough password"


@pytest.fixture(autouse=True)
def _fast_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        accounts, "_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )


@pytest.fixture(scope="module")
def pack() -> RulePack:
    return load_pack()


@dataclass
class World:
    db: Database
    admin: Actor
    officer: Actor
    alice: Actor
    bob: Actor


@pytest.fixture
def world(db: Database) -> World:
    for name, role, subject in (
        ("admin", "admin", None),
        ("officer", "officer", None),
        ("alice", "user", "user:alice"),
        ("bob", "user", "user:bob"),
    ):
        accounts.add_user(db, name, role=role, subject=subject, password=PW, by="test")
    lc = Lifecycle(db)
    for rec in (
        make_record(
            memory_id="a1",
            subject="user:alice",
            fact="Prefers green tea",
            category="preference",
            namespace="tests",
        ),
        make_record(
            memory_id="a2",
            subject="user:alice",
            fact="Works at Example Corp",
            category="identity",
            namespace="other",
            source={"type": "inferred"},
        ),
        make_record(
            memory_id="b1",
            subject="user:bob",
            fact="Bob keeps a diary about his health",
            category="health",
            source={"type": "tool_output"},
        ),
    ):
        lc.add(rec, actor="test")
    return World(
        db,
        *(signin.authenticate(db, n, PW) for n in ("admin", "officer", "alice", "bob")),
    )


def add_finding(
    db: Database,
    memory_ids: list[str],
    *,
    rule_id: str = "MA-TST-001",
    category: str = "injection",
    severity: str = "high",
    status: str = "open",
    age_days: float = 0,
    resolved_by: str | None = None,
    assignee: str | None = None,
) -> str:
    """A finding written straight to the store (the scan is tested elsewhere)."""
    fid = f"fnd_{ULID()}"
    now = utcnow()
    with db.write() as s:
        s.add(
            Finding(
                finding_id=fid,
                fingerprint=uuid.uuid4().hex + uuid.uuid4().hex,
                rule_id=rule_id,
                category=category,
                severity=severity,
                status=status,
                evidence={"detector": "keyword", "reason": "matched [EMAIL]", "snippets": {}},
                first_seen=now - timedelta(days=age_days),
                last_seen=now,
                resolved_by=resolved_by,
                assignee=assignee,
            )
        )
        s.flush()
        for pos, mid in enumerate(memory_ids):
            s.add(FindingMemory(finding_id=fid, memory_id=mid, position=pos))
    return fid


def events(db: Database, action: str | None = None) -> list[AuditEvent]:
    with db.session() as s:
        query = select(AuditEvent).order_by(AuditEvent.seq)
        if action is not None:
            query = query.where(AuditEvent.action == action)
        return list(s.scalars(query))


def memory(db: Database, memory_id: str) -> Memory:
    return Lifecycle(db).get(memory_id)


def finding(db: Database, finding_id: str) -> Finding:
    with db.session() as s:
        f = s.get(Finding, finding_id)
        assert f is not None
        return f


def chain_ok(db: Database) -> bool:
    with db.session() as s:
        return audit_log.verify(s).ok


# -- a user and another subject's data ------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda w: access_user.my_memory(w.db, w.alice, "b1"), id="read"),
        pytest.param(
            lambda w: access_user.correct_my_memory(w.db, w.alice, "b1", "nope"), id="correct"
        ),
        pytest.param(lambda w: access_user.delete_my_memory(w.db, w.alice, "b1"), id="delete"),
    ],
)
def test_user_cannot_touch_another_subjects_memory(
    world: World, call: Callable[[World], Any]
) -> None:
    before = memory(world.db, "b1")
    with pytest.raises(AccessDenied) as denied:
        call(world)
    message = str(denied.value)
    assert "b1" in message
    assert "bob" not in message.lower() and "diary" not in message
    after = memory(world.db, "b1")
    assert (after.status, after.version, after.fact) == (before.status, before.version, before.fact)
    (ev,) = events(world.db, "access.denied")
    assert ev.actor == "alice" and ev.target_type == "memory" and ev.target_ids == ["b1"]
    assert ev.details["reason"] == "other_subject" and ev.details["role"] == "user"
    assert "user:bob" not in json.dumps(ev.details) and "diary" not in json.dumps(ev.details)
    assert events(world.db, "memory.superseded") == events(world.db, "memory.deleted") == []
    with world.db.session() as s:
        assert s.scalar(select(Memory).where(Memory.supersedes == "b1")) is None
    assert chain_ok(world.db)


def test_unknown_id_gets_the_same_refusal_as_another_subjects(world: World) -> None:
    with pytest.raises(AccessDenied) as other:
        access_user.delete_my_memory(world.db, world.alice, "b1")
    with pytest.raises(AccessDenied) as missing:
        access_user.delete_my_memory(world.db, world.alice, "zz9")
    assert str(other.value).replace("b1", "X") == str(missing.value).replace("zz9", "X")
    reasons = [e.details["reason"] for e in events(world.db, "access.denied")]
    assert reasons == ["other_subject", "not_found"]


def test_user_export_holds_only_their_subject(world: World) -> None:
    add_finding(world.db, ["a1"])
    add_finding(world.db, ["b1"])
    data = access_user.export_my_data(world.db, world.alice)
    assert data["subject"] == "user:alice"
    assert {m["memory_id"] for m in data["memories"]} == {"a1", "a2"}
    assert all(m["subject"] == "user:alice" for m in data["memories"])
    assert [f["memory_id"] for f in data["findings"]] == ["a1"]
    assert "diary" not in json.dumps(data)
    (ev,) = events(world.db, "subject.exported")
    assert ev.actor == "alice" and ev.details["memories"] == 2
    assert "user:alice" not in json.dumps([ev.target_ids, ev.details])


OFFICER_CALLS: list[Any] = [
    pytest.param(lambda w, f: access.overview(w.db, w.alice), id="overview"),
    pytest.param(lambda w, f: access_findings.review_queue(w.db, w.alice), id="review_queue"),
    pytest.param(
        lambda w, f: access_findings.finding_detail(w.db, w.alice, f), id="finding_detail"
    ),
    pytest.param(
        lambda w, f: access_actions.act_on_findings(w.db, w.alice, [f], "dismiss", reason="mine"),
        id="act_on_findings",
    ),
    pytest.param(
        lambda w, f: access.memory_search(w.db, w.alice, subject="user:bob"), id="memory_search"
    ),
    pytest.param(lambda w, f: access.audit_log_page(w.db, w.alice), id="audit_log_page"),
    pytest.param(lambda w, f: access.verify_audit_log(w.db, w.alice), id="verify_audit_log"),
    pytest.param(lambda w, f: access.rule_stats(w.db, w.alice), id="rule_stats"),
    pytest.param(lambda w, f: access_admin.list_accounts(w.db, w.alice), id="list_accounts"),
    pytest.param(
        lambda w, f: access_admin.add_account(w.db, w.alice, "eve", role="admin", password=PW),
        id="add_account",
    ),
    pytest.param(
        lambda w, f: access_admin.set_account_role(w.db, w.alice, "alice", "admin"),
        id="set_account_role",
    ),
]


@pytest.mark.parametrize("call", OFFICER_CALLS)
def test_user_cannot_use_officer_or_admin_services(
    world: World, call: Callable[[World, str], Any]
) -> None:
    fid = add_finding(world.db, ["b1"])
    with pytest.raises(AccessDenied, match="role"):
        call(world, fid)
    (ev,) = events(world.db, "access.denied")
    assert ev.actor == "alice" and ev.details["reason"] == "role"
    assert finding(world.db, fid).status == "open"
    assert [a.username for a in accounts.list_users(world.db)] == [
        "admin",
        "alice",
        "bob",
        "officer",
    ]
    assert accounts.get_user(world.db, "alice").role == "user"
    assert events(world.db, "memory.searched") == []


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda w: access_admin.list_accounts(w.db, w.officer), id="list_accounts"),
        pytest.param(
            lambda w: access_admin.disable_account(w.db, w.officer, "alice"), id="disable"
        ),
        pytest.param(lambda w: access_admin.delete_account(w.db, w.officer, "bob"), id="delete"),
        pytest.param(
            lambda w: access_admin.set_account_password(
                w.db, w.officer, "admin", "taken over now!"
            ),
            id="passwd",
        ),
        pytest.param(lambda w: access_user.my_memories(w.db, w.officer), id="my_memories"),
        pytest.param(lambda w: access_user.export_my_data(w.db, w.officer), id="export_my_data"),
    ],
)
def test_officer_cannot_use_admin_or_user_services(
    world: World, call: Callable[[World], Any]
) -> None:
    with pytest.raises(AccessDenied):
        call(world)
    (ev,) = events(world.db, "access.denied")
    assert ev.actor == "officer" and ev.details["reason"] == "role"
    assert signin.authenticate(world.db, "admin", PW).role == "admin"
    assert not accounts.get_user(world.db, "alice").disabled
    assert len(accounts.list_users(world.db)) == 4


def test_forged_and_stale_actors_are_refused(world: World) -> None:
    forged = Actor("mallory", "admin", None, "password")
    with pytest.raises(AccessDenied, match="sign in again"):
        access_admin.list_accounts(world.db, forged)
    promoted = Actor("alice", "officer", None, "password")  # alice is a user in the store
    with pytest.raises(AccessDenied, match="sign in again"):
        access_findings.review_queue(world.db, promoted)
    moved = Actor("alice", "user", "user:bob", "password")  # claims bob's subject
    with pytest.raises(AccessDenied):
        access_user.export_my_data(world.db, moved)
    assert events(world.db, "subject.exported") == []
    access_admin.disable_account(world.db, world.admin, "officer")
    with pytest.raises(AccessDenied, match="sign in again"):
        access.overview(world.db, world.officer)  # signed in before it was disabled
    access_admin.set_account_role(world.db, world.admin, "alice", "user", subject="user:alice2")
    with pytest.raises(AccessDenied):
        access_user.my_memories(world.db, world.alice)  # bound to another subject since
    reasons = [e.details["reason"] for e in events(world.db, "access.denied")]
    assert reasons == ["stale_session"] * 5
    with pytest.raises(TypeError):
        access.overview(world.db, "admin")  # type: ignore[arg-type]


# -- officer: review queue ------------------------------------------------------------------


@pytest.fixture
def queue(world: World) -> dict[str, str]:
    db = world.db
    return {
        "f1": add_finding(db, ["a1"], rule_id="R-A", category="injection", age_days=10),
        "f2": add_finding(
            db, ["b1"], rule_id="R-B", category="secret", severity="critical", age_days=1
        ),
        "f3": add_finding(
            db,
            ["a2"],
            rule_id="R-A",
            category="sensitive",
            severity="low",
            status="dismissed",
            age_days=40,
        ),
        "f4": add_finding(
            db,
            ["a1", "a2"],
            rule_id="R-C",
            category="contradiction",
            severity="medium",
            status="acknowledged",
            age_days=5,
            assignee="role:admin",
        ),
    }


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (QueueFilter(), {"f1", "f2"}),
        (QueueFilter(status=None), {"f1", "f2", "f3", "f4"}),
        (QueueFilter(status="acknowledged"), {"f4"}),
        (QueueFilter(status=None, rule_id="R-A"), {"f1", "f3"}),
        (QueueFilter(status=None, category="secret"), {"f2"}),
        (QueueFilter(status=None, severity="low"), {"f3"}),
        (QueueFilter(status=None, subject="user:bob"), {"f2"}),
        (QueueFilter(status=None, subject="user:alice"), {"f1", "f3", "f4"}),
        (QueueFilter(status=None, namespace="other"), {"f3", "f4"}),
        (QueueFilter(status=None, trust_tier="external"), {"f2"}),
        (QueueFilter(status=None, trust_tier="agent", namespace="tests"), set()),
        (QueueFilter(status=None, older_than_days=7), {"f1", "f3"}),
        (QueueFilter(status=None, assignee="role:admin"), {"f4"}),
        (QueueFilter(status=None, rule_id="R-A", older_than_days=20), {"f3"}),
    ],
)
def test_review_queue_filters(
    world: World, queue: dict[str, str], flt: QueueFilter, expected: set[str]
) -> None:
    page = access_findings.review_queue(world.db, world.officer, flt)
    names = {k for k, v in queue.items() if v in {r["finding_id"] for r in page.rows}}
    assert names == expected
    assert page.total == len(expected)


def test_review_queue_rows_name_their_memories(world: World, queue: dict[str, str]) -> None:
    (row,) = access_findings.review_queue(
        world.db, world.admin, QueueFilter(status="acknowledged")
    ).rows
    assert [m["memory_id"] for m in row["memories"]] == ["a1", "a2"]
    assert {m["subject"] for m in row["memories"]} == {"user:alice"}
    assert row["age_days"] == 5 and row["assignee"] == "role:admin"


def test_review_queue_sorts_and_pages_in_the_database(world: World) -> None:
    severities = ["low", "critical", "medium", "high", "low", "critical", "medium"]
    ids = [
        add_finding(world.db, ["a1"], severity=sev, age_days=i) for i, sev in enumerate(severities)
    ]
    pages = [
        access_findings.review_queue(world.db, world.officer, page=n, page_size=3)
        for n in (1, 2, 3)
    ]
    assert [p.total for p in pages] == [7, 7, 7] and pages[0].pages == 3
    assert [len(p.rows) for p in pages] == [3, 3, 1]
    newest_first = [r["finding_id"] for p in pages for r in p.rows]
    assert newest_first == ids  # age 0 first: -first_seen is the default
    oldest_first = [
        r["finding_id"]
        for n in (1, 2, 3)
        for r in access_findings.review_queue(
            world.db, world.officer, page=n, page_size=3, sort="first_seen"
        ).rows
    ]
    assert oldest_first == list(reversed(ids))
    by_severity = access_findings.review_queue(world.db, world.officer, sort="-severity").rows
    assert [r["severity"] for r in by_severity] == [
        "critical",
        "critical",
        "high",
        "medium",
        "medium",
        "low",
        "low",
    ]
    ascending = access_findings.review_queue(world.db, world.officer, sort="severity").rows
    assert ascending[0]["severity"] == "low" and ascending[-1]["severity"] == "critical"
    assert access_findings.review_queue(world.db, world.officer, page=4, page_size=3).rows == []
    capped = access_findings.review_queue(world.db, world.officer, page_size=10_000)
    assert capped.page_size == access_guard.MAX_PAGE_SIZE and len(capped.rows) == 7
    with pytest.raises(InputError, match="unknown sort"):
        access_findings.review_queue(world.db, world.officer, sort="fact")
    with pytest.raises(InputError, match="start at 1"):
        access_findings.review_queue(world.db, world.officer, page=0)
    with pytest.raises(InputError, match="unknown severity"):
        QueueFilter(severity="urgent")


# -- officer: finding detail ----------------------------------------------------------------


def test_finding_detail_explains_with_rule_provenance_and_chain(
    world: World, pack: RulePack
) -> None:
    rule = pack.rules[0]
    lc = Lifecycle(world.db)
    lc.supersede(
        "a1",
        make_record(memory_id="a1b", subject="user:alice", fact="Prefers black tea now"),
        actor="test",
    )
    fid = add_finding(world.db, ["a1b"], rule_id=rule.id, category=rule.category)
    detail = access_findings.finding_detail(world.db, world.officer, fid, pack=pack)
    assert detail["finding"]["finding_id"] == fid
    assert detail["finding"]["evidence"]["reason"] == "matched [EMAIL]"
    assert detail["rule"]["title"] == rule.title
    assert detail["rule"]["description"] == rule.description
    (mem,) = detail["memories"]
    assert "fact" not in mem["memory"] and "black tea" not in json.dumps(detail)
    assert mem["provenance"]["source"]["type"] == "explicit_statement"
    assert [(c["memory_id"], c["current"]) for c in mem["chain"]] == [
        ("a1", False),
        ("a1b", True),
    ]
    assert [c["status"] for c in mem["chain"]] == ["superseded", "active"]
    unknown_rule = add_finding(world.db, ["a2"], rule_id="MA-GONE-001")
    assert (
        access_findings.finding_detail(world.db, world.officer, unknown_rule, pack=pack)["rule"]
        is None
    )


def _events(db: Database, action: str) -> list[AuditEvent]:
    with db.session() as s:
        return list(
            s.scalars(
                select(AuditEvent).where(AuditEvent.action == action).order_by(AuditEvent.seq)
            )
        )


def test_a_view_log_records_each_distinct_view_once(world: World, pack: RulePack) -> None:
    fids = [add_finding(world.db, [mid]) for mid in ("a1", "a2", "b1")]
    with world.db.write() as s:  # a redacted snippet: listing it is an audited read
        for f in s.scalars(select(Finding).where(Finding.finding_id.in_(fids))):
            f.evidence = {**f.evidence, "snippets": {"m": "matched [EMAIL]"}}
    views = access_findings.ViewLog()
    for _ in range(3):  # reruns of the same page: one record
        access_findings.review_queue(world.db, world.officer, page_size=2, views=views)
    assert len(_events(world.db, "finding.listed")) == 1
    access_findings.review_queue(world.db, world.officer, page=2, page_size=2, views=views)
    # back to the first page: a new view
    access_findings.review_queue(world.db, world.officer, page_size=2, views=views)
    listed = _events(world.db, "finding.listed")
    assert [len(e.target_ids) for e in listed] == [2, 1, 2]
    # another actor with the same log, or no log at all: recorded every time
    access_findings.review_queue(world.db, world.admin, page_size=2, views=views)
    access_findings.review_queue(world.db, world.officer, page_size=2)
    assert len(_events(world.db, "finding.listed")) == 5

    for fid in (fids[0], fids[0], fids[1], fids[1], fids[0]):
        access_findings.finding_detail(world.db, world.officer, fid, pack=pack, views=views)
    viewed = _events(world.db, "finding.viewed")
    assert [e.target_ids[0] for e in viewed] == [fids[0], fids[1], fids[0]]
    # the access check still runs on every call: a disabled account gets nothing
    accounts.disable_user(world.db, "officer", by="test")
    with pytest.raises(AccessDenied):
        access_findings.review_queue(world.db, world.officer, page_size=2, views=views)
    with pytest.raises(AccessDenied):
        access_findings.finding_detail(world.db, world.officer, fids[0], pack=pack, views=views)


# -- officer: actions -----------------------------------------------------------------------


def test_bulk_action_with_a_bad_id_applies_the_rest(world: World, queue: dict[str, str]) -> None:
    outcomes = access_actions.act_on_findings(
        world.db, world.officer, [queue["f1"], "fnd_nope", queue["f2"], queue["f1"]], "acknowledge"
    )
    assert [(o.finding_id, o.ok, o.status) for o in outcomes] == [
        (queue["f1"], True, "acknowledged"),
        ("fnd_nope", False, None),
        (queue["f2"], True, "acknowledged"),
    ]
    assert outcomes[1].error is not None and "fnd_nope" in outcomes[1].error
    assert finding(world.db, queue["f1"]).status == "acknowledged"
    assert finding(world.db, queue["f2"]).status == "acknowledged"
    acks = events(world.db, "finding.acknowledge")
    assert [e.target_ids[0] for e in acks] == [queue["f1"], queue["f2"]]
    assert all(e.actor == "officer" for e in acks)
    (failed,) = events(world.db, "finding.action_failed")
    assert failed.target_ids == ["fnd_nope"]
    assert failed.details == {"attempted": "acknowledge", "error_types": ["NotFoundError"]}
    # an id that happens to be a word the audit log refuses as a key is still just an id
    (odd,) = access_actions.act_on_findings(world.db, world.officer, ["fact"], "resolve")
    assert not odd.ok and events(world.db, "finding.action_failed")[-1].target_ids == ["fact"]
    assert chain_ok(world.db)


def test_a_failing_finding_is_rolled_back_to_its_savepoint(world: World) -> None:
    db = world.db
    lc = Lifecycle(db)
    lc.add(make_record(memory_id="a3", subject="user:alice"), actor="test")
    lc.soft_delete("a2", actor="test")
    half = add_finding(db, ["a1", "a2"])  # a1 can be quarantined, a deleted a2 cannot
    whole = add_finding(db, ["a3"])
    outcomes = access_actions.act_on_findings(db, world.officer, [half, whole], "quarantine")
    assert [o.ok for o in outcomes] == [False, True]
    assert "a2" in (outcomes[0].error or "")
    assert memory(db, "a1").status == "active"  # its quarantine was rolled back
    assert memory(db, "a3").status == "quarantined"
    assert finding(db, half).status == "open" and finding(db, whole).status == "resolved"
    quarantined = [e.target_ids for e in events(db, "memory.quarantined") if e.actor == "officer"]
    assert quarantined == [["a3"]]
    assert chain_ok(db)


def test_dismiss_needs_a_reason_and_suppress_keeps_quiet(
    world: World, queue: dict[str, str]
) -> None:
    with pytest.raises(InputError, match="needs a reason"):
        access_actions.act_on_findings(world.db, world.officer, [queue["f1"]], "dismiss")
    with pytest.raises(InputError, match="dismiss only"):
        access_actions.act_on_findings(
            world.db, world.officer, [queue["f1"]], "resolve", suppress=True
        )
    assert finding(world.db, queue["f1"]).status == "open"
    (d,) = access_actions.act_on_findings(
        world.db, world.officer, [queue["f1"]], "dismiss", reason="quoted article"
    )
    (s,) = access_actions.act_on_findings(
        world.db, world.officer, [queue["f2"]], "dismiss", reason="test key", suppress=True
    )
    assert (d.status, s.status) == ("dismissed", "suppressed")
    f1 = finding(world.db, queue["f1"])
    assert f1.resolved_by == "officer" and f1.resolution == "quoted article"
    assert events(world.db, "finding.dismiss")[0].details["note"] == "quoted article"
    assert events(world.db, "finding.suppress")[0].actor == "officer"
    assert memory(world.db, "a1").status == "active"


SCAN_RULE = """
id: MA-TST-002
title: Password word
status: test
description: test rule
category: secret
severity: critical
detector: keyword
params: {terms: ["hunter2"], entity: password_in_text}
action: flag
tests:
  flag: ["my password is hunter2"]
  pass: ["my password is secret"]
"""


@pytest.mark.parametrize("suppress", [False, True])
def test_rescans_do_not_reopen_dismissed_or_suppressed_findings(
    world: World, tmp_path: Path, suppress: bool
) -> None:
    from auditor.scan.scanner import Scanner

    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "ma-tst-002-password.yaml").write_text(textwrap.dedent(SCAN_RULE).lstrip())
    scan_pack = load_pack(folder)
    Lifecycle(world.db).add(
        make_record(memory_id="pw", subject="user:alice", fact="wifi password hunter2"),
        actor="test",
    )
    Scanner(world.db, scan_pack).run(full=True)
    (row,) = access_findings.review_queue(world.db, world.officer).rows
    access_actions.act_on_findings(
        world.db, world.officer, [row["finding_id"]], "dismiss", reason="fp", suppress=suppress
    )
    Scanner(world.db, scan_pack).run(full=True)
    every = access_findings.review_queue(world.db, world.officer, QueueFilter(status=None)).rows
    assert [(r["finding_id"], r["status"]) for r in every] == [
        (row["finding_id"], "suppressed" if suppress else "dismissed")
    ]


def test_quarantine_and_restore_go_through_the_lifecycle(
    world: World, queue: dict[str, str]
) -> None:
    access_actions.act_on_findings(
        world.db, world.officer, [queue["f1"]], "quarantine", reason="poison"
    )
    assert memory(world.db, "a1").status == "quarantined"
    assert finding(world.db, queue["f1"]).status == "resolved"
    access_actions.act_on_findings(world.db, world.officer, [queue["f1"]], "restore")
    assert memory(world.db, "a1").status == "active"
    q, r = [e for e in events(world.db) if e.action in ("memory.quarantined", "memory.restored")]
    assert (q.actor, r.actor) == ("officer", "officer")
    assert q.details["reason"] == f"review of {queue['f1']}"


def test_supersede_action_links_through_the_lifecycle(world: World) -> None:
    db = world.db
    lc = Lifecycle(db)
    lc.add(make_record(memory_id="a4", subject="user:alice", fact="Prefers oolong"), actor="t")
    contradiction = add_finding(db, ["a1", "a4"], category="contradiction")
    (o,) = access_actions.act_on_findings(
        db, world.officer, [contradiction], "supersede", superseding_memory_id="a4"
    )
    assert o.ok and o.status == "resolved"
    assert memory(db, "a1").status == "superseded" and memory(db, "a4").supersedes == "a1"
    (ev,) = events(db, "memory.superseded")
    assert ev.actor == "officer" and ev.target_ids == ["a1", "a4"]
    assert "superseded a1 by a4" in (finding(db, contradiction).resolution or "")

    # an agent-tier memory may not replace a user-tier one without an explicit approval
    lc.add(
        make_record(memory_id="a5", subject="user:alice", source={"type": "inferred"}), actor="t"
    )
    lc.add(make_record(memory_id="a6", subject="user:alice"), actor="t")
    inverted = add_finding(db, ["a6", "a5"], category="contradiction")
    (refused,) = access_actions.act_on_findings(
        db, world.officer, [inverted], "supersede", superseding_memory_id="a5"
    )
    assert not refused.ok and "approval" in (refused.error or "")
    assert memory(db, "a6").status == "active"
    (approved,) = access_actions.act_on_findings(
        db,
        world.officer,
        [inverted],
        "supersede",
        superseding_memory_id="a5",
        approve_tier_override=True,
    )
    assert approved.ok and memory(db, "a6").status == "superseded"
    assert events(db, "memory.superseded")[-1].details["approved_by"] == "officer"

    across = add_finding(db, ["a2", "b1"], category="contradiction")
    (other,) = access_actions.act_on_findings(
        db, world.officer, [across], "supersede", superseding_memory_id="b1"
    )
    assert not other.ok and "another subject" in (other.error or "")
    assert memory(db, "a2").status == "active"
    with pytest.raises(InputError, match="superseding_memory_id"):
        access_actions.act_on_findings(db, world.officer, [across], "supersede")


def test_escalate_raises_severity_and_assigns_an_admin(world: World, queue: dict[str, str]) -> None:
    db = world.db
    outcomes = access_actions.act_on_findings(
        db, world.officer, [queue["f1"], queue["f2"], queue["f3"]], "escalate", reason="legal"
    )
    assert [o.ok for o in outcomes] == [True, True, False]  # f3 is dismissed: closed
    assert "reopen" in (outcomes[2].error or "")
    f1, f2 = finding(db, queue["f1"]), finding(db, queue["f2"])
    assert (f1.severity, f1.assignee, f1.status) == ("critical", "role:admin", "open")
    assert f2.severity == "critical"  # critical stays critical
    first = events(db, "finding.escalated")[0]
    assert first.details["from_severity"] == "high" and first.details["to_severity"] == "critical"
    access_actions.act_on_findings(db, world.officer, [queue["f4"]], "escalate", assignee="ADMIN")
    assert finding(db, queue["f4"]).assignee == "admin"
    with pytest.raises(InputError, match="not an enabled admin"):
        access_actions.act_on_findings(
            db, world.officer, [queue["f4"]], "escalate", assignee="officer"
        )
    with pytest.raises(InputError, match="unknown action"):
        access_actions.act_on_findings(db, world.officer, [queue["f4"]], "purge")


# -- officer: search, audit log, rule statistics, overview ----------------------------------


def test_memory_search_binds_and_escapes_the_text(world: World) -> None:
    db = world.db
    lc = Lifecycle(db)
    for mid, fact in (
        ("s1", "Is 100% sure about it"),
        ("s2", "Is 100 percent sure"),
        ("s3", "Uses the a_b flag"),
        ("s4", "Uses the axb flag"),
    ):
        lc.add(make_record(memory_id=mid, subject="user:carol", fact=fact), actor="t")

    def found(**kw: Any) -> list[str]:
        return sorted(r["memory_id"] for r in access.memory_search(db, world.officer, **kw).rows)

    assert found(text="100%") == ["s1"]
    assert found(text="a_b") == ["s3"]
    assert found(text="USES THE") == ["s3", "s4"]
    assert found(text="'; DROP TABLE memories; --") == []
    assert found(subject="user:alice") == ["a1", "a2"]
    assert found(subject="user:alice", category="identity") == ["a2"]
    lc.soft_delete("s4", actor="t")
    assert found(subject="user:carol", status="deleted") == ["s4"]
    page = access.memory_search(db, world.officer, subject="user:carol", page=2, page_size=3)
    assert page.total == 4 and len(page.rows) == 1
    with db.session() as s:
        assert s.scalar(text("SELECT count(*) FROM memories")) == 7
    ev = events(db, "memory.searched")[0]
    assert ev.actor == "officer" and ev.target_ids == ["s1"]
    assert ev.details["has_text_query"] is True and "100" not in json.dumps(ev.details)
    assert all("user:" not in json.dumps(e.details) for e in events(db, "memory.searched"))


def test_audit_log_page_and_verification(world: World) -> None:
    db = world.db
    page = access.audit_log_page(db, world.officer, action="auth.", page_size=2)
    assert page.total == 4 and len(page.rows) == 2
    assert all(r["action"] == "auth.signed_in" for r in page.rows)
    assert page.rows[0]["seq"] > page.rows[1]["seq"]
    by_alice = access.audit_log_page(db, world.officer, by="alice")
    assert {r["action"] for r in by_alice.rows} == {"auth.signed_in"}
    assert access.audit_log_page(db, world.officer, action="auth%").total == 0  # literal
    assert access.verify_audit_log(db, world.admin)["ok"] is True
    with db.write() as s:
        s.execute(update(AuditEvent).where(AuditEvent.seq == 3).values(actor="someone-else"))
    broken = access.verify_audit_log(db, world.officer)
    assert broken["ok"] is False and broken["first_bad_seq"] == 3


def test_rule_stats_counts_hits_and_false_positives(world: World, pack: RulePack) -> None:
    noisy, quiet = pack.rules[0], pack.rules[1]
    for status, by in (
        ("dismissed", "officer"),
        ("dismissed", "officer"),
        ("suppressed", "officer"),
        ("resolved", "officer"),
        ("resolved", SCAN_ACTOR),  # the scanner's own resolution is not a review
        ("suppressed", SCAN_ACTOR),  # allowed by consent: not a review either
        ("open", None),
        ("acknowledged", None),
    ):
        add_finding(world.db, ["a1"], rule_id=noisy.id, status=status, resolved_by=by)
    add_finding(world.db, ["a1"], rule_id="MA-GONE-001")
    stats = {r["id"]: r for r in access.rule_stats(world.db, world.officer, pack=pack)}
    assert list(stats) == [r.id for r in pack.rules]
    row = stats[noisy.id]
    assert (row["hits"], row["open"], row["reviewed"], row["false_positives"]) == (8, 2, 4, 3)
    assert row["false_positive_rate"] == 0.75
    assert row["by_status"] == {
        "acknowledged": 1,
        "dismissed": 2,
        "open": 1,
        "resolved": 2,
        "suppressed": 2,
    }
    assert (row["title"], row["severity"], row["status"]) == (
        noisy.title,
        noisy.severity,
        noisy.status,
    )
    assert stats[quiet.id]["hits"] == 0 and stats[quiet.id]["false_positive_rate"] is None


def test_overview(world: World) -> None:
    db = world.db
    add_finding(db, ["a1"], category="injection", severity="high", age_days=0)
    add_finding(db, ["a1"], category="injection", severity="high", age_days=0)
    add_finding(db, ["a2"], category="secret", severity="critical", age_days=2)
    add_finding(db, ["a2"], category="secret", severity="low", age_days=9)
    add_finding(db, ["b1"], category="secret", severity="low", age_days=70, status="acknowledged")
    add_finding(db, ["b1"], category="secret", severity="low", age_days=1, status="dismissed")
    oldest = add_finding(db, ["b1"], category="secret", severity="low", age_days=60)
    now = utcnow()
    with db.write() as s:
        s.add(
            ScanRun(
                mode="full",
                status="completed",
                started_at=now - timedelta(hours=1),
                finished_at=now,
                duration_s=12.5,
                counts={"memories_scanned": 3, "findings_new": 2, "error_count": 0},
            )
        )
    data = access.overview(db, world.officer, days=30)
    today = now.strftime("%Y-%m-%d")
    assert {"day": today, "category": "injection", "severity": "high", "count": 2} in data["by_day"]
    assert sum(r["count"] for r in data["by_day"]) == 5  # the 60- and 70-day ones are older
    assert data["open"]["total"] == 6  # open + acknowledged
    assert data["open"]["by_severity"] == {"critical": 1, "high": 2, "low": 3}
    assert list(data["open"]["by_severity"]) == ["critical", "high", "low"]
    assert data["by_status"] == {"acknowledged": 1, "dismissed": 1, "open": 5}
    # the oldest open one: the acknowledged 70-day one is triaged already
    assert data["oldest_untriaged"]["finding_id"] == oldest
    assert data["oldest_untriaged"]["age_days"] == 60
    (scan,) = data["scans"]
    assert (scan["status"], scan["duration_s"], scan["memories_scanned"]) == (
        "completed",
        12.5,
        3,
    )
    with pytest.raises(InputError):
        access.overview(db, world.officer, days=0)


# -- user: their own data -------------------------------------------------------------------


def test_my_memories_grouped_with_provenance_and_flags(world: World, pack: RulePack) -> None:
    rule = pack.rules[0]
    fid = add_finding(world.db, ["a1"], rule_id=rule.id)
    Lifecycle(world.db).quarantine("a2", actor="test")
    mine = access_user.my_memories(world.db, world.alice, pack=pack)
    assert mine["counts"] == {"memories": 2, "by_status": {"active": 1, "quarantined": 1}}
    assert [(g["category"], g["namespace"]) for g in mine["groups"]] == [
        ("identity", "other"),
        ("preference", "tests"),
    ]
    (a2,) = mine["groups"][0]["memories"]
    (a1,) = mine["groups"][1]["memories"]
    assert a2["status"] == "quarantined" and a2["source"]["type"] == "inferred"
    assert a1["fact"] == "Prefers green tea" and a1["created_at"] is not None
    assert [(f["finding_id"], f["title"], f["reason"]) for f in a1["flags"]] == [
        (fid, rule.title, "matched [EMAIL]")
    ]
    assert "diary" not in json.dumps(mine) and "user:bob" not in json.dumps(mine)
    one = access_user.my_memory(world.db, world.alice, "a1", pack=pack)
    assert one["flags"][0]["title"] == rule.title and one["chain"][0]["current"] is True


def test_correct_my_memory_supersedes_with_a_user_tier_correction(world: World) -> None:
    new = access_user.correct_my_memory(world.db, world.alice, "a2", "Works at Acme now")
    stored = memory(world.db, new["memory_id"])
    assert stored.subject == "user:alice" and stored.trust_tier == "user"
    assert stored.supersedes == "a2" and stored.extra["corrected_by"] == "subject"
    assert (stored.category, stored.namespace) == ("identity", "other")
    assert memory(world.db, "a2").status == "superseded"  # history kept, not rewritten
    (ev,) = events(world.db, "memory.superseded")
    assert ev.actor == "alice" and ev.target_ids == ["a2", new["memory_id"]]
    with pytest.raises(ChainForkError):
        access_user.correct_my_memory(world.db, world.alice, "a2", "again")
    with pytest.raises(InputError, match="empty"):
        access_user.correct_my_memory(world.db, world.alice, "a1", "   ")
    chain = access_user.my_memory(world.db, world.alice, "a2")["chain"]
    assert [c["memory_id"] for c in chain] == ["a2", new["memory_id"]]


def test_a_user_cannot_override_a_system_memory(world: World) -> None:
    Lifecycle(world.db).add(
        make_record(memory_id="sys", subject="user:alice", source={"type": "system"}), actor="t"
    )
    with pytest.raises(TrustTierError):
        access_user.correct_my_memory(world.db, world.alice, "sys", "not so")
    assert memory(world.db, "sys").status == "active"


def test_delete_my_memory_is_a_soft_delete_at_the_subjects_request(world: World) -> None:
    out = access_user.delete_my_memory(world.db, world.alice, "a1")
    assert out == {"memory_id": "a1", "status": "deleted"}
    stored = memory(world.db, "a1")
    assert stored.status == "deleted" and stored.deleted_at is not None
    (ev,) = events(world.db, "memory.deleted")
    assert ev.actor == "alice" and ev.details["reason"] == "requested by the subject (dashboard)"
    assert access_user.my_memories(world.db, world.alice)["counts"]["by_status"]["deleted"] == 1


# -- accounts through the service layer -----------------------------------------------------


def test_admin_manages_accounts_through_the_service_layer(world: World) -> None:
    db = world.db
    access_admin.add_account(
        db, world.admin, "carol", role="user", subject="user:carol", password=PW
    )
    carol = signin.authenticate(db, "carol", PW)
    assert access_user.my_memories(db, carol)["counts"]["memories"] == 0
    access_admin.disable_account(db, world.admin, "carol")
    with pytest.raises(AccessDenied):
        access_user.my_memories(db, carol)
    access_admin.enable_account(db, world.admin, "carol")
    access_admin.set_account_password(db, world.admin, "carol", "a new passphrase!")
    assert signin.authenticate(db, "carol", "a new passphrase!").username == "carol"
    access_admin.delete_account(db, world.admin, "carol")
    assert "carol" not in [a.username for a in access_admin.list_accounts(db, world.admin)]
    actions = [e.action for e in events(db) if e.actor == "admin" and e.action.startswith("acc")]
    assert actions == [
        "account.added",
        "account.disabled",
        "account.enabled",
        "account.password_set",
        "account.deleted",
    ]


def test_change_my_password(world: World) -> None:
    with pytest.raises(AuthError, match="current password"):
        access_admin.change_my_password(
            world.db, world.bob, "wrong guess here", "a new passphrase!"
        )
    assert events(world.db, "account.password_change_failed")[0].actor == "bob"
    access_admin.change_my_password(world.db, world.bob, PW, "a new passphrase!")
    assert signin.authenticate(world.db, "bob", "a new passphrase!").subject == "user:bob"
