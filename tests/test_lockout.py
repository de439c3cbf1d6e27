"""A lockout that locks: no oracle during a lock, attempts extend it, password changes count,
officers see lockouts in the audit log and in the daemon's /metrics."""

from __future__ import annotations

import urllib.request
from datetime import timedelta
from typing import Any, Literal

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update

from auditor.access import accounts, signin
from auditor.access import admin as access_admin
from auditor.daemon.runner import Daemon, Metrics
from auditor.errors import AuthError
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Principal
from auditor.store.types import utcnow

PW = "a long enough password"
WRONG = "not the password at all"


class CountingHasher(PasswordHasher):
    """Cheap argon2 that counts verifications (the timing class of an attempt)."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=1024, parallelism=1)
        self.verifications = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:  # noqa: A002
        self.verifications += 1
        return super().verify(hash, password)


@pytest.fixture
def hasher(monkeypatch: pytest.MonkeyPatch) -> CountingHasher:
    h = CountingHasher()
    monkeypatch.setattr(accounts, "_HASHER", h)
    return h


@pytest.fixture
def locking_db(db: Database, monkeypatch: pytest.MonkeyPatch, hasher: CountingHasher) -> Database:
    monkeypatch.setattr(
        db,
        "settings",
        db.settings.model_copy(update={"sign_in_max_failures": 3, "sign_in_lockout_seconds": 600}),
    )
    return db


def events(db: Database, action: str) -> list[AuditEvent]:
    with db.session() as s:
        return list(
            s.scalars(
                select(AuditEvent).where(AuditEvent.action == action).order_by(AuditEvent.seq)
            )
        )


def stored(db: Database, name: str) -> Principal:
    with db.session() as s:
        p = s.scalar(select(Principal).where(Principal.username == name))
        assert p is not None
        return p


def failure(db: Database, name: str, password: str) -> AuthError:
    with pytest.raises(AuthError) as caught:
        signin.authenticate(db, name, password)
    return caught.value


def lock(db: Database, name: str = "kim") -> None:
    for _ in range(3):
        failure(db, name, WRONG)
    assert stored(db, name).locked_until is not None


def test_a_locked_account_answers_like_a_wrong_password_whatever_the_password(
    locking_db: Database, hasher: CountingHasher
) -> None:
    db = locking_db
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    wrong_before = failure(db, "kim", WRONG)
    unknown = failure(db, "nobody-here", PW)
    lock(db)
    before = hasher.verifications
    right_during = failure(db, "kim", PW)
    assert hasher.verifications == before + 1  # the argon2 work still ran
    wrong_during = failure(db, "kim", WRONG)
    assert hasher.verifications == before + 2
    answers = {(type(e), str(e)) for e in (wrong_before, unknown, right_during, wrong_during)}
    assert answers == {(AuthError, "sign-in failed: unknown user name or wrong password")}
    # the officer still learns that the right password was tried during the lock
    locked = [
        e.details for e in events(db, "auth.sign_in_failed") if e.details["reason"] == "locked"
    ]
    assert [d["password_matched"] for d in locked][-2:] == [True, False]


def test_attempts_during_a_lock_are_counted_and_extend_it(locking_db: Database) -> None:
    db = locking_db
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    lock(db)
    earlier = utcnow() + timedelta(seconds=60)  # pretend the lock was set long ago
    with db.write() as s:
        s.execute(update(Principal).where(Principal.username == "kim").values(locked_until=earlier))
    failure(db, "kim", WRONG)
    after = stored(db, "kim")
    assert after.failed_sign_ins == 4
    assert after.locked_until is not None and after.locked_until > earlier + timedelta(seconds=500)
    failure(db, "kim", PW)
    assert stored(db, "kim").failed_sign_ins == 5
    assert len(events(db, "account.locked")) == 1  # one lock, extended, not a new one
    # once the (extended) lock runs out, the right password works again
    with db.write() as s:
        s.execute(
            update(Principal)
            .where(Principal.username == "kim")
            .values(locked_until=utcnow() - timedelta(seconds=1))
        )
    assert signin.authenticate(db, "kim", PW).username == "kim"


def test_the_lockout_is_in_the_audit_log(locking_db: Database) -> None:
    db = locking_db
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    lock(db)
    (ev,) = events(db, "account.locked")
    assert ev.actor == "anonymous" and ev.target_ids == ["kim"]
    assert ev.details["via"] == "sign_in" and ev.details["failures"] == 3
    assert ev.details["until"].endswith("Z")
    assert PW not in str(ev.details) and WRONG not in str(ev.details)


def test_change_my_password_counts_failures_and_locks(locking_db: Database) -> None:
    db = locking_db
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    actor = signin.authenticate(db, "kim", PW)
    new = "another long password"
    for _ in range(3):
        with pytest.raises(AuthError, match="current password is wrong"):
            access_admin.change_my_password(db, actor, WRONG, new)
    (ev,) = events(db, "account.locked")
    assert ev.details["via"] == "password_change" and ev.actor == "kim"
    # locked: even the right current password is refused, with the same message
    with pytest.raises(AuthError) as during:
        access_admin.change_my_password(db, actor, PW, new)
    assert str(during.value) == "the current password is wrong"
    assert stored(db, "kim").failed_sign_ins == 4
    reasons = [e.details["reason"] for e in events(db, "account.password_change_failed")]
    assert reasons == ["wrong_current_password"] * 3 + ["locked"]
    failure(db, "kim", PW)  # and sign-in is locked too
    assert accounts.verify_password(stored(db, "kim").password_hash, PW)  # nothing changed


def test_change_my_password_with_the_right_password_clears_the_count(
    locking_db: Database,
) -> None:
    db = locking_db
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    actor = signin.authenticate(db, "kim", PW)
    with pytest.raises(AuthError):
        access_admin.change_my_password(db, actor, WRONG, "another long password")
    assert stored(db, "kim").failed_sign_ins == 1
    access_admin.change_my_password(db, actor, PW, "another long password")
    assert stored(db, "kim").failed_sign_ins == 0
    assert signin.authenticate(db, "kim", "another long password").username == "kim"


def _metric(metrics: Metrics, name: str) -> Any:
    return metrics.registry.get_sample_value(name)


def test_metrics_show_lockouts(locking_db: Database) -> None:
    db = locking_db
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    accounts.add_user(db, "lee", role="officer", password=PW, by="test")
    metrics = Metrics()
    metrics.record_accounts(db)
    assert _metric(metrics, "memaudit_accounts_locked") == 0
    assert _metric(metrics, "memaudit_account_lockouts_total") == 0
    lock(db, "kim")
    lock(db, "lee")
    metrics.record_accounts(db)
    assert _metric(metrics, "memaudit_accounts_locked") == 2
    assert _metric(metrics, "memaudit_account_lockouts_total") == 2
    accounts.enable_user(db, "kim", by="admin-x")
    metrics.record_accounts(db)
    assert _metric(metrics, "memaudit_accounts_locked") == 1
    assert _metric(metrics, "memaudit_account_lockouts_total") == 2  # a counter never drops


def test_the_daemon_serves_lockouts_on_metrics(locking_db: Database) -> None:
    db = locking_db
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    lock(db)
    daemon = Daemon(db, db.settings)
    port = daemon.serve_health(0)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            body = resp.read().decode()
    finally:
        daemon._server.shutdown()
    assert "memaudit_accounts_locked 1.0" in body
    assert "memaudit_account_lockouts_total 1.0" in body
