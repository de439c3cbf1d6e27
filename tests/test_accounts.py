"""Accounts: argon2 passwords, sign-in and lockout, OIDC mapping, roles, the users CLI."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import pytest
from argon2 import PasswordHasher
from click.testing import CliRunner
from sqlalchemy import select, update

from auditor.access import accounts, signin
from auditor.access.accounts import Actor
from auditor.errors import (
    AccountDisabledError,
    AuthError,
    InputError,
    NotFoundError,
)
from auditor.lifecycle import audit_log
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Principal
from auditor.store.types import utcnow

PW = "a long enough password"
FAST = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


@pytest.fixture(autouse=True)
def _fast_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Argon2 with cheap parameters: the same code paths, a fraction of the time."""
    monkeypatch.setattr(accounts, "_HASHER", FAST)


def events(db: Database, action: str | None = None) -> list[AuditEvent]:
    with db.session() as s:
        query = select(AuditEvent).order_by(AuditEvent.seq)
        if action is not None:
            query = query.where(AuditEvent.action == action)
        return list(s.scalars(query))


def principal(db: Database, name: str) -> Principal:
    with db.session() as s:
        p = s.scalar(select(Principal).where(Principal.username == name))
        assert p is not None
        return p


def dump(evs: list[AuditEvent]) -> str:
    return json.dumps(
        [[e.actor, e.action, e.target_ids, e.details] for e in evs], ensure_ascii=False
    )


def with_settings(db: Database, monkeypatch: pytest.MonkeyPatch, **values: Any) -> None:
    monkeypatch.setattr(db, "settings", db.settings.model_copy(update=values))


# -- accounts -------------------------------------------------------------------------------


def test_add_user_stores_an_argon2_hash_never_the_password(db: Database) -> None:
    account = accounts.add_user(
        db, "  Alice ", role="user", subject="user:alice", password=PW, by="test"
    )
    assert account.username == "alice" and account.role == "user" and account.password_set
    stored = principal(db, "alice")
    assert stored.password_hash is not None and stored.password_hash.startswith("$argon2id$")
    assert PW not in stored.password_hash
    assert FAST.verify(stored.password_hash, PW)
    (added,) = events(db, "account.added")
    assert added.actor == "test" and added.target_ids == ["alice"]
    assert added.details["role"] == "user" and added.details["password_set"] is True
    assert "subject_digest" in added.details
    assert PW not in dump(events(db)) and "user:alice" not in dump(events(db))
    assert "password_hash" not in account.as_dict()


@pytest.mark.parametrize(
    ("role", "subject", "message"),
    [
        ("user", None, "bound to one subject"),
        ("user", "alice", "must look like 'user:<id>'"),
        ("officer", "user:alice", "not bound to a subject"),
        ("root", None, "unknown role"),
    ],
)
def test_roles_and_subject_bindings_are_checked(
    db: Database, role: str, subject: str | None, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        accounts.add_user(db, "someone", role=role, subject=subject, password=PW, by="test")
    assert accounts.list_users(db) == []


def test_password_policy(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="at least 12 characters"):
        accounts.add_user(db, "kim", role="officer", password="short", by="test")
    with pytest.raises(InputError, match="not be the user name"):
        accounts.add_user(db, "kim.officer.x", role="officer", password="kim.officer.x", by="t")
    with pytest.raises(InputError, match="too long"):
        accounts.add_user(db, "kim", role="officer", password="x" * 2000, by="test")
    with pytest.raises(InputError, match="empty"):
        accounts.add_user(db, "kim", role="officer", password="              ", by="test")
    with_settings(db, monkeypatch, password_min_length=30)
    with pytest.raises(InputError, match="at least 30 characters"):
        accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    assert accounts.list_users(db) == []
    accounts.add_user(db, "kim", role="officer", password=PW + " and then some", by="test")
    with pytest.raises(InputError, match="at least 30"):
        accounts.set_password(db, "kim", PW, by="test")


def test_names_and_emails_are_unique(db: Database) -> None:
    accounts.add_user(db, "kim", role="officer", email="Kim@Example.org", by="test")
    with pytest.raises(InputError, match="exists already"):
        accounts.add_user(db, "KIM", role="admin", by="test")
    with pytest.raises(InputError, match="e-mail"):
        accounts.add_user(db, "lee", role="officer", email="kim@example.org", by="test")
    with pytest.raises(InputError, match="user name"):
        accounts.add_user(db, "bad name!", role="officer", by="test")
    assert [a.email for a in accounts.list_users(db)] == ["kim@example.org"]


def test_set_role_rebinds_and_is_audited(db: Database) -> None:
    accounts.add_user(db, "pat", role="user", subject="user:1", password=PW, by="test")
    moved = accounts.set_role(db, "pat", "user", subject="user:2", by="admin-x")
    assert moved.subject == "user:2"
    promoted = accounts.set_role(db, "pat", "officer", by="admin-x")
    assert promoted.role == "officer" and promoted.subject is None
    first, second = events(db, "account.role_set")
    assert first.details["subject_changed"] is True and first.actor == "admin-x"
    assert (second.details["from"], second.details["to"]) == ("user", "officer")
    assert "user:2" not in dump(events(db))
    with pytest.raises(NotFoundError, match="no account 'ghost'"):
        accounts.set_role(db, "ghost", "officer", by="admin-x")


def test_the_last_enabled_admin_stays(db: Database) -> None:
    accounts.add_user(db, "root", role="admin", password=PW, by="test")
    for action in (
        lambda: accounts.disable_user(db, "root", by="t"),
        lambda: accounts.delete_user(db, "root", by="t"),
        lambda: accounts.set_role(db, "root", "officer", by="t"),
    ):
        with pytest.raises(InputError, match="last enabled admin"):
            action()
    assert accounts.get_user(db, "root").role == "admin"
    accounts.add_user(db, "root2", role="admin", password=PW, by="test")
    accounts.disable_user(db, "root", by="t")
    with pytest.raises(InputError, match="last enabled admin"):
        accounts.delete_user(db, "root2", by="t")
    accounts.delete_user(db, "root", by="t")
    assert [a.username for a in accounts.list_users(db)] == ["root2"]
    assert [e.target_ids for e in events(db, "account.deleted")] == [["root"]]


# -- sign-in --------------------------------------------------------------------------------


def test_sign_in_returns_an_actor_and_is_audited(db: Database) -> None:
    accounts.add_user(db, "alice", role="user", subject="user:alice", password=PW, by="test")
    actor = signin.authenticate(db, "ALICE", PW)
    assert actor == Actor("alice", "user", "user:alice", "password")
    with pytest.raises(AttributeError):
        actor.role = "admin"  # type: ignore[misc]
    (ev,) = events(db, "auth.signed_in")
    assert ev.actor == "alice" and ev.details == {"method": "password", "role": "user"}
    assert principal(db, "alice").last_sign_in_at is not None


def test_wrong_password_and_unknown_user_look_the_same(db: Database) -> None:
    accounts.add_user(db, "alice", role="user", subject="user:alice", password=PW, by="test")
    with pytest.raises(AuthError) as wrong:
        signin.authenticate(db, "alice", PW + "x")
    with pytest.raises(AuthError) as unknown:
        signin.authenticate(db, "mallory.typed.a.password", PW)
    assert type(wrong.value) is type(unknown.value) is AuthError
    assert str(wrong.value) == str(unknown.value)
    bad, ghost = events(db, "auth.sign_in_failed")
    assert bad.target_ids == ["alice"] and bad.details["reason"] == "bad_password"
    assert bad.actor == ghost.actor == "anonymous"
    assert ghost.target_ids == [] and ghost.details["reason"] == "unknown_user"
    assert ghost.details["username_digest"] == accounts.username_digest(
        "mallory.typed.a.password", db.settings
    )
    assert "mallory" not in dump(events(db)) and PW not in dump(events(db))
    with db.session() as s:
        assert audit_log.verify(s).ok


def test_unknown_user_costs_an_argon2_verification(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    class Spy(PasswordHasher):
        def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:  # noqa: A002
            calls.append(str(hash))
            return super().verify(hash, password)

    monkeypatch.setattr(accounts, "_HASHER", Spy(time_cost=1, memory_cost=1024, parallelism=1))
    with pytest.raises(AuthError):
        signin.authenticate(db, "nobody", PW)
    assert len(calls) == 1 and calls[0].startswith("$argon2")
    accounts.add_user(db, "oidc-only", role="officer", by="test")  # no password at all
    with pytest.raises(AuthError):
        signin.authenticate(db, "oidc-only", "")
    assert len(calls) == 2
    assert events(db, "auth.sign_in_failed")[-1].details["reason"] == "no_password"


def test_disabled_account_is_refused_and_only_told_with_the_right_password(
    db: Database,
) -> None:
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    accounts.disable_user(db, "kim", by="admin-x")
    with pytest.raises(AuthError) as wrong:
        signin.authenticate(db, "kim", "not the password at all")
    assert not isinstance(wrong.value, AccountDisabledError)
    with pytest.raises(AccountDisabledError, match="disabled"):
        signin.authenticate(db, "kim", PW)
    assert events(db, "auth.sign_in_failed")[-1].details["reason"] == "disabled"
    assert events(db, "auth.signed_in") == []
    accounts.enable_user(db, "kim", by="admin-x")
    assert signin.authenticate(db, "kim", PW).role == "officer"


def test_lockout_after_failures(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    with_settings(db, monkeypatch, sign_in_max_failures=3, sign_in_lockout_seconds=600)
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    for _ in range(3):
        with pytest.raises(AuthError) as failed:
            signin.authenticate(db, "kim", "wrong password here")
        assert type(failed.value) is AuthError
    assert events(db, "auth.sign_in_failed")[-1].details == {
        "method": "password",
        "reason": "bad_password",
        "failures": 3,
        "locked": True,
    }
    (locked,) = events(db, "account.locked")
    assert locked.target_ids == ["kim"] and locked.details["via"] == "sign_in"
    with pytest.raises(AuthError) as right:
        signin.authenticate(db, "kim", PW)  # the right password does not open a lock
    assert type(right.value) is AuthError and "locked" not in str(right.value)
    with db.write() as s:  # the lock runs out
        s.execute(
            update(Principal)
            .where(Principal.username == "kim")
            .values(locked_until=utcnow() - timedelta(seconds=1))
        )
    assert signin.authenticate(db, "kim", PW).username == "kim"
    stored = principal(db, "kim")
    assert stored.failed_sign_ins == 0 and stored.locked_until is None
    for _ in range(3):
        with pytest.raises(AuthError):
            signin.authenticate(db, "kim", "wrong password here")
    accounts.enable_user(db, "kim", by="admin-x")  # an admin lifts it at once
    assert signin.authenticate(db, "kim", PW).username == "kim"


def test_no_lockout_when_turned_off(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    with_settings(db, monkeypatch, sign_in_max_failures=0)
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    for _ in range(8):
        with pytest.raises(AuthError):
            signin.authenticate(db, "kim", "wrong password here")
    assert signin.authenticate(db, "kim", PW).username == "kim"


def test_old_hash_parameters_are_upgraded_at_sign_in(db: Database) -> None:
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    weak = PasswordHasher(time_cost=1, memory_cost=512, parallelism=1).hash(PW)
    with db.write() as s:
        s.execute(update(Principal).where(Principal.username == "kim").values(password_hash=weak))
    signin.authenticate(db, "kim", PW)
    upgraded = principal(db, "kim").password_hash
    assert upgraded != weak and upgraded is not None and not FAST.check_needs_rehash(upgraded)
    assert signin.authenticate(db, "kim", PW).username == "kim"


def test_set_password_replaces_the_old_one(db: Database) -> None:
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    accounts.set_password(db, "kim", "a brand new passphrase", by="admin-x")
    with pytest.raises(AuthError):
        signin.authenticate(db, "kim", PW)
    assert signin.authenticate(db, "kim", "a brand new passphrase").username == "kim"
    (ev,) = events(db, "account.password_set")
    assert ev.details == {"replaced": True} and ev.actor == "admin-x"


# -- OIDC -----------------------------------------------------------------------------------

ISS = "https://idp.example.org"


def claims(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"iss": ISS, "sub": "abc-123", "email": "Kim@Example.org"}
    base["email_verified"] = True
    base.update(extra)
    return base


def test_oidc_maps_a_verified_email_then_binds_the_identity(db: Database) -> None:
    accounts.add_user(db, "kim", role="officer", email="kim@example.org", by="test")
    actor = signin.actor_from_oidc(db, claims())
    assert actor == Actor("kim", "officer", None, "oidc")
    stored = principal(db, "kim")
    assert (stored.oidc_issuer, stored.oidc_subject) == (ISS, "abc-123")
    # bound: the e-mail is no longer needed, and another identity with it is refused
    assert signin.actor_from_oidc(db, {"iss": ISS, "sub": "abc-123"}).username == "kim"
    with pytest.raises(AuthError, match="bound to another identity"):
        signin.actor_from_oidc(db, claims(sub="someone-else"))
    assert [e.action for e in events(db) if e.action.startswith(("auth.", "account.oidc"))] == [
        "account.oidc_linked",
        "auth.signed_in",
        "auth.signed_in",
        "auth.sign_in_failed",
    ]
    assert "kim@example.org" not in dump(events(db)).lower()
    assert "abc-123" not in dump(events(db))


def test_oidc_refuses_unverified_email_and_unregistered_identities(db: Database) -> None:
    accounts.add_user(db, "kim", role="officer", email="kim@example.org", by="test")
    with pytest.raises(AuthError, match="no memaudit account"):
        signin.actor_from_oidc(db, claims(email_verified=False))
    assert principal(db, "kim").oidc_subject is None
    with pytest.raises(AuthError, match="no memaudit account"):
        signin.actor_from_oidc(db, claims(email="new@example.org"))
    with pytest.raises(AuthError, match="no issuer or subject"):
        signin.actor_from_oidc(db, {"email": "kim@example.org", "email_verified": True})
    reasons = [e.details["reason"] for e in events(db, "auth.sign_in_failed")]
    assert reasons == ["not_registered", "not_registered", "missing_claims"]
    assert len(accounts.list_users(db)) == 1


def test_oidc_issuer_allow_list(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    accounts.add_user(db, "kim", role="officer", email="kim@example.org", by="test")
    with_settings(db, monkeypatch, oidc_issuer="https://other.example.org")
    with pytest.raises(AuthError, match="not accepted"):
        signin.actor_from_oidc(db, claims())
    assert principal(db, "kim").oidc_subject is None


def test_oidc_disabled_account_is_refused(db: Database) -> None:
    accounts.add_user(db, "kim", role="officer", email="kim@example.org", by="test")
    accounts.add_user(db, "root", role="admin", password=PW, by="test")
    accounts.disable_user(db, "kim", by="root")
    with pytest.raises(AccountDisabledError):
        signin.actor_from_oidc(db, claims())


def test_oidc_auto_provision_makes_users_only(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_settings(db, monkeypatch, oidc_auto_provision=True, oidc_subject_claim="uid")
    actor = signin.actor_from_oidc(db, claims(email="New@Example.org", uid="42"))
    assert actor == Actor("new@example.org", "user", "user:42", "oidc")
    (ev,) = events(db, "account.provisioned")
    assert ev.details["role"] == "user" and "user:42" not in dump([ev])
    assert signin.actor_from_oidc(db, claims(email="New@Example.org", uid="42")) == actor
    with pytest.raises(AuthError):  # no verified e-mail: nobody is created
        signin.actor_from_oidc(db, claims(sub="x-9", email="b@example.org", email_verified=None))
    assert [a.username for a in accounts.list_users(db)] == ["new@example.org"]


def test_oidc_auto_provision_never_takes_an_account_over(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_settings(db, monkeypatch, oidc_auto_provision=True, oidc_subject_claim="uid")
    accounts.add_user(db, "kim", role="officer", email="kim@example.org", by="test")
    assert signin.actor_from_oidc(db, claims(uid="1")).username == "kim"  # binds kim
    # another identity with kim's e-mail is refused, and no account is provisioned for it
    with pytest.raises(AuthError, match="bound to another identity"):
        signin.actor_from_oidc(db, claims(sub="someone-else", uid="2"))
    # an unknown identity whose e-mail address is an existing user name gets no account
    accounts.add_user(db, "lee@example.org", role="admin", by="test")
    with pytest.raises(AuthError, match="no memaudit account"):
        signin.actor_from_oidc(db, claims(sub="lee-1", email="lee@example.org", uid="3"))
    assert principal(db, "lee@example.org").oidc_subject is None
    reasons = [e.details["reason"] for e in events(db, "auth.sign_in_failed")]
    assert reasons == ["email_bound_to_another_identity", "username_taken"]
    assert not events(db, "account.provisioned")
    assert sorted(a.username for a in accounts.list_users(db)) == ["kim", "lee@example.org"]


# -- the users CLI --------------------------------------------------------------------------


def test_cli_users_lifecycle(
    db: Database, db_url: str, run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMAUDIT_NEW_PASSWORD", PW)
    r = run_cli("--database-url", db_url, "users", "add", "root", "--role", "admin", "--by", "ops")
    assert r.code == 0, r.err
    assert signin.authenticate(db, "root", PW).role == "admin"
    monkeypatch.delenv("MEMAUDIT_NEW_PASSWORD")
    secret = tmp_path / "pw.txt"
    secret.write_text("another long password\n", encoding="utf-8")
    r = run_cli(
        "--database-url", db_url, "users", "add", "alice", "--role", "user",
        "--subject", "user:alice", "--password-file", str(secret),
    )  # fmt: skip
    assert r.code == 0, r.err
    assert signin.authenticate(db, "alice", "another long password").subject == "user:alice"
    r = run_cli("--database-url", db_url, "users", "add", "bob", "--role", "user", "--no-password")
    assert r.code == 2 and "subject" in r.err
    r = run_cli("--database-url", db_url, "users", "list", "--format", "json")
    listed = json.loads(r.out)
    assert [u["username"] for u in listed] == ["alice", "root"]
    assert all("password_hash" not in u for u in listed) and listed[0]["password_set"] is True
    r = run_cli("--database-url", db_url, "users", "set-role", "alice", "officer")
    assert r.code == 0 and accounts.get_user(db, "alice").role == "officer"
    assert run_cli("--database-url", db_url, "users", "disable", "alice").code == 0
    assert accounts.get_user(db, "alice").disabled
    assert run_cli("--database-url", db_url, "users", "enable", "alice").code == 0
    assert not accounts.get_user(db, "alice").disabled
    r = run_cli("--database-url", db_url, "users", "disable", "root")
    assert r.code == 2 and "last enabled admin" in r.err
    r = run_cli(
        "--database-url", db_url, "users", "passwd", "alice", "--password-file", str(secret)
    )
    assert r.code == 0
    r = run_cli("--database-url", db_url, "users", "delete", "alice", "--yes")
    assert r.code == 0 and [a.username for a in accounts.list_users(db)] == ["root"]
    r = run_cli("--database-url", db_url, "users", "delete", "nobody", "--yes")
    assert r.code == 2 and "no account 'nobody'" in r.err
    assert PW not in r.out + r.err
    (added_root,) = [e for e in events(db, "account.added") if e.target_ids == ["root"]]
    assert added_root.actor == "ops"
    assert events(db, "account.added")[-1].actor.startswith("cli")


def test_cli_password_prompt_asks_twice(db: Database, db_url: str) -> None:
    from auditor.cli.main import cli

    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["--database-url", db_url, "users", "add", "kim", "--role", "officer"],
        input=f"{PW}\n{PW}\n",
    )
    assert result.exit_code == 0, result.output
    assert PW not in result.output
    assert signin.authenticate(db, "kim", PW).role == "officer"


def test_cli_takes_no_password_argument() -> None:
    from auditor.cli.users import users

    for command in users.commands.values():
        names = {p.name for p in command.params}
        assert "password" not in names, command.name
