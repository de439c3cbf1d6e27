"""Reviewer actions shared by the CLI and the dashboard; signed session tokens.

Idempotent actions (asking for the state a memory is already in succeeds and says so), the
same validation in both front ends, previews before acting, "showing N of M" listings, and
the dashboard's session token (forged, expired, revoked and stale tokens are refused).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select
from ulid import ULID

from auditor.access import accounts, signin
from auditor.access import admin as access_admin
from auditor.access import officer_actions as access_actions
from auditor.access import review as access_review
from auditor.access import sessions as access_sessions
from auditor.access.accounts import Actor
from auditor.errors import InputError
from auditor.lifecycle.machine import Lifecycle
from auditor.scan import review as review_actions
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Finding, FindingMemory
from auditor.store.types import utcnow
from auditor.testing import make_record

PW = "a long enough password"


@pytest.fixture(autouse=True)
def _fast_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        accounts, "_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )


@pytest.fixture
def officer(db: Database) -> Actor:
    accounts.add_user(db, "officer", role="officer", password=PW, by="test")
    lc = Lifecycle(db)
    for mid, ns in (("m1", "agent-a"), ("m2", "agent-a"), ("m3", "agent-b"), ("m4", "agent-b")):
        lc.add(
            make_record(memory_id=mid, subject="user:ann", fact=f"fact {mid}", namespace=ns),
            actor="test",
        )
    return signin.authenticate(db, "officer", PW)


def add_finding(db: Database, memory_ids: list[str], status: str = "open") -> str:
    fid = f"fnd_{ULID()}"
    now = utcnow()
    with db.write() as s:
        s.add(
            Finding(
                finding_id=fid,
                fingerprint=uuid.uuid4().hex + uuid.uuid4().hex,
                rule_id="MA-TST-001",
                category="injection",
                severity="high",
                status=status,
                evidence={"detector": "keyword", "reason": "r", "snippets": {}},
                first_seen=now,
                last_seen=now,
            )
        )
        s.flush()
        for pos, mid in enumerate(memory_ids):
            s.add(FindingMemory(finding_id=fid, memory_id=mid, position=pos))
    return fid


def status_of(db: Database, memory_id: str) -> str:
    return Lifecycle(db).get(memory_id).status


# -- idempotent actions --------------------------------------------------------------------


def test_quarantine_of_an_already_quarantined_memory_succeeds_and_says_so(
    db: Database, officer: Actor
) -> None:
    Lifecycle(db).quarantine("m1", actor="scan", reason="auto")
    fid = add_finding(db, ["m1"])
    [outcome] = access_actions.act_on_findings(db, officer, [fid], "quarantine")
    assert outcome.ok and outcome.already
    assert outcome.status == "resolved"
    assert outcome.message is not None and "already quarantined" in outcome.message
    assert status_of(db, "m1") == "quarantined"
    # asked again: still fine, still says so
    [again] = access_actions.act_on_findings(db, officer, [fid], "quarantine")
    assert again.ok and again.message == "already quarantined; finding resolved"


def test_quarantine_mixed_counts_the_memories_already_done(db: Database, officer: Actor) -> None:
    Lifecycle(db).quarantine("m1", actor="scan")
    fid = add_finding(db, ["m1", "m2"])
    [outcome] = access_actions.act_on_findings(db, officer, [fid], "quarantine")
    assert outcome.ok and outcome.message == "quarantined (1 already quarantined); finding resolved"
    assert status_of(db, "m2") == "quarantined"


def test_dismissing_a_dismissed_finding_changes_nothing(db: Database, officer: Actor) -> None:
    fid = add_finding(db, ["m1"])
    access_actions.act_on_findings(db, officer, [fid], "dismiss", reason="a test phrase")
    with db.session() as s:
        before = len(s.scalars(select(AuditEvent.seq)).all())
    [outcome] = access_actions.act_on_findings(db, officer, [fid], "dismiss", reason="again")
    assert outcome.ok and outcome.message == "already dismissed; nothing changed"
    with db.session() as s:
        assert len(s.scalars(select(AuditEvent.seq)).all()) == before


def test_restore_of_an_active_memory_is_already_restored(db: Database, officer: Actor) -> None:
    fid = add_finding(db, ["m3"])
    [outcome] = access_actions.act_on_findings(db, officer, [fid], "restore")
    assert outcome.ok and outcome.message is not None
    assert outcome.message.startswith("already restored")


@pytest.mark.parametrize("action", ["dismiss", "suppress"])
@pytest.mark.parametrize("note", [None, "", "   "])
def test_dismiss_needs_a_note_everywhere(action: str, note: str | None) -> None:
    with pytest.raises(InputError, match="needs a reason"):
        review_actions.check_action_args(action, note)


def test_preview_counts_memories_sources_and_already_done(db: Database, officer: Actor) -> None:
    Lifecycle(db).quarantine("m1", actor="scan")
    f1 = add_finding(db, ["m1", "m2"])
    f2 = add_finding(db, ["m3"])
    f3 = add_finding(db, ["m4"], status="resolved")
    p = access_review.preview_action(db, officer, [f1, f2, f3, "fnd_missing"], "quarantine")
    assert (p.findings, p.memories, p.sources, p.already, p.missing) == (
        3,
        4,
        2,
        1,
        ("fnd_missing",),
    )
    assert p.sentence() == (
        "quarantines 4 memories in 2 sources and resolves 3 findings; 1 is already "
        "quarantined; 1 not found"
    )
    d = access_review.preview_action(db, officer, [f1, f3], "dismiss")
    assert d.sentence() == "dismisses 2 findings; 1 is already closed"
    # a preview changes nothing
    assert status_of(db, "m2") == "active"


# -- the CLI speaks the same language ----------------------------------------------------


def test_cli_review_quarantine_is_idempotent(db: Database, officer: Actor, run_cli, db_url) -> None:  # type: ignore[no-untyped-def]
    Lifecycle(db).quarantine("m1", actor="scan")
    fid = add_finding(db, ["m1"])
    r = run_cli("--database-url", db_url, "review", fid, "--quarantine", "--by", "olga")
    assert r.code == 0, r.err
    assert "already quarantined" in r.out


def test_cli_dismiss_without_a_note_is_refused(
    db: Database, officer: Actor, run_cli, db_url
) -> None:  # type: ignore[no-untyped-def]
    fid = add_finding(db, ["m1"])
    r = run_cli("--database-url", db_url, "review", fid, "--dismiss", "--by", "olga")
    assert r.code == 2
    assert "needs a reason" in r.err
    with db.session() as s:
        assert s.get(Finding, fid).status == "open"  # type: ignore[union-attr]
    ok = run_cli(
        "--database-url", db_url, "review", fid, "--dismiss", "--note", "test data", "--by", "o"
    )
    assert ok.code == 0 and "dismissed" in ok.out


def test_cli_findings_says_showing_n_of_m(db: Database, officer: Actor, run_cli, db_url) -> None:  # type: ignore[no-untyped-def]
    for _ in range(5):
        add_finding(db, ["m1"])
    r = run_cli("--database-url", db_url, "findings", "--limit", "3")
    assert r.code == 0
    assert "showing 3 of 5" in r.err


@pytest.mark.parametrize("args", [("findings", "--subject", "ben.cho"), ("export", "ben.cho")])
def test_cli_subject_arguments_are_validated(
    db: Database, officer: Actor, run_cli, db_url, args
) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("--database-url", db_url, *args)
    assert r.code == 2
    assert "ben.cho" in r.err and "user:" in r.err


# -- signed session tokens -------------------------------------------------------------------


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMAUDIT_SESSION_KEY", "k" * 40)


def test_a_session_token_round_trips(db: Database, officer: Actor, keyed: None) -> None:
    issued = access_sessions.issue_token(db, officer)
    assert issued is not None
    token, expires = issued
    assert expires - utcnow() <= access_sessions.SESSION_TTL
    assert access_sessions.actor_from_token(db, token) == officer


def test_forged_expired_and_garbage_tokens_are_refused(
    db: Database, officer: Actor, keyed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    issued = access_sessions.issue_token(db, officer)
    assert issued is not None
    token = issued[0]
    version, payload, mac = token.split(".")
    forged = f"{version}.{payload}.{mac[:-2]}AA"
    for bad in (forged, "", "v1..", "x" * 5000, None, 42, token + "."):
        assert access_sessions.actor_from_token(db, bad) is None
    later = utcnow() + access_sessions.SESSION_TTL + timedelta(seconds=1)
    assert access_sessions.actor_from_token(db, token, now=later) is None
    monkeypatch.setenv("MEMAUDIT_SESSION_KEY", "another key entirely, forty chars long")
    assert access_sessions.actor_from_token(db, token) is None


def test_sign_out_revokes_the_token_and_only_that_one(
    db: Database, officer: Actor, keyed: None
) -> None:
    first = access_sessions.issue_token(db, officer)
    second = access_sessions.issue_token(db, officer)
    assert first is not None and second is not None
    sid = access_sessions.session_id_of(db, first[0])
    assert sid is not None
    access_sessions.record_sign_out(db, officer, "signed_out", session_id=sid)
    assert access_sessions.actor_from_token(db, first[0]) is None
    assert access_sessions.actor_from_token(db, second[0]) == officer


def test_a_disabled_account_or_a_new_password_ends_the_token(
    db: Database, officer: Actor, keyed: None
) -> None:
    accounts.add_user(db, "root", role="admin", password=PW, by="test")
    admin = signin.authenticate(db, "root", PW)
    issued = access_sessions.issue_token(db, officer)
    assert issued is not None
    access_admin.set_account_password(db, admin, "officer", PW + " changed")
    assert access_sessions.actor_from_token(db, issued[0]) is None
    fresh = access_sessions.issue_token(db, officer, now=utcnow() + timedelta(seconds=2))
    assert fresh is not None
    access_admin.disable_account(db, admin, "officer")
    assert (
        access_sessions.actor_from_token(db, fresh[0], now=utcnow() + timedelta(seconds=3)) is None
    )


def test_no_key_means_no_token(
    db: Database, officer: Actor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no MEMAUDIT_SESSION_KEY, no key file and no audit key: whatever the store has
    monkeypatch.delenv("MEMAUDIT_SESSION_KEY", raising=False)
    monkeypatch.delenv("MEMAUDIT_SESSION_KEY_FILE", raising=False)
    monkeypatch.setattr(type(db.settings), "audit_key", lambda self: None)
    assert access_sessions.session_key(db.settings) is None
    assert access_sessions.issue_token(db, officer) is None
