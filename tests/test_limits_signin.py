"""Sign-ins cannot exhaust memory: bounded argon2 concurrency, per-name and global rates."""

from __future__ import annotations

import threading
import time
from typing import Literal

import pytest
from argon2 import PasswordHasher

from auditor.access import accounts, signin, signin_limits
from auditor.access.signin_limits import BUSY_MESSAGE, RATE_MESSAGE, SignInBusyError
from auditor.errors import AuthError
from auditor.store.db import Database

PW = "a long enough password"


class GaugedHasher(PasswordHasher):
    """Cheap argon2 that records how many verifications run at the same moment."""

    def __init__(self, hold: float) -> None:
        super().__init__(time_cost=1, memory_cost=1024, parallelism=1)
        self.hold = hold
        self.running = 0
        self.peak = 0
        self.calls = 0
        self._lock = threading.Lock()

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:  # noqa: A002
        with self._lock:
            self.running += 1
            self.calls += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(self.hold)  # a real verification holds its 64 MiB about this long
            return super().verify(hash, password)
        finally:
            with self._lock:
                self.running -= 1


def tune(db: Database, monkeypatch: pytest.MonkeyPatch, **values: object) -> None:
    monkeypatch.setattr(db, "settings", db.settings.model_copy(update=values))


def storm(db: Database, names: list[str]) -> list[BaseException | None]:
    """Sign in with a wrong password under every name at once, in threads."""
    results: list[BaseException | None] = [None] * len(names)
    start = threading.Barrier(len(names))

    def one(i: int) -> None:
        start.wait()
        try:
            signin.authenticate(db, names[i], "wrong password, many times")
        except BaseException as exc:  # noqa: BLE001 - collected and checked below
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(names))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_concurrent_failed_sign_ins_never_run_more_than_k_verifications(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    hasher = GaugedHasher(hold=0.05)
    monkeypatch.setattr(accounts, "_HASHER", hasher)
    tune(
        db,
        monkeypatch,
        sign_in_max_concurrent=2,
        sign_in_wait_seconds=30,
        sign_in_max_failures=0,
        sign_in_account_rate=100,
    )
    names = ["kim"] * 8 + [f"nobody{i}" for i in range(8)]
    results = storm(db, names)
    assert all(type(r) is AuthError for r in results), results  # all waited, none refused
    assert hasher.calls >= 16
    assert hasher.peak == 2  # concurrency happened, and the bound held it at K


def test_a_caller_that_waits_too_long_is_told_busy_the_same_for_every_account(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    hasher = GaugedHasher(hold=0.5)
    monkeypatch.setattr(accounts, "_HASHER", hasher)
    tune(db, monkeypatch, sign_in_max_concurrent=1, sign_in_wait_seconds=0.05)
    results = storm(db, ["kim", "kim", "nobody", "nobody"])
    busy = [r for r in results if isinstance(r, SignInBusyError)]
    assert busy, results
    assert {str(r) for r in busy} == {BUSY_MESSAGE}
    assert hasher.peak == 1
    # a busy answer is not a failed password: it does not count towards the lockout
    assert accounts.get_user(db, "kim").locked_until is None


def test_per_name_rate_limit_refuses_before_any_argon2_work(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    hasher = GaugedHasher(hold=0)
    monkeypatch.setattr(accounts, "_HASHER", hasher)
    tune(db, monkeypatch, sign_in_account_rate=3, sign_in_max_failures=0)
    for _ in range(3):
        with pytest.raises(AuthError) as wrong:
            signin.authenticate(db, "Kim", "wrong password here")
        assert type(wrong.value) is AuthError
    calls = hasher.calls
    for name in ("kim", " KIM "):  # the name as typed, normalised
        with pytest.raises(SignInBusyError, match=RATE_MESSAGE):
            signin.authenticate(db, name, PW)
    assert hasher.calls == calls
    # an unknown name is limited the same way, and other names still get through
    for _ in range(3):
        with pytest.raises(AuthError):
            signin.authenticate(db, "ghost", PW)
    with pytest.raises(SignInBusyError, match=RATE_MESSAGE):
        signin.authenticate(db, "ghost", PW)
    accounts.add_user(db, "lee", role="officer", password=PW, by="test")
    assert signin.authenticate(db, "lee", PW).username == "lee"


def test_global_rate_limit_and_the_window_slides(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    signin_limits.reset(clock=lambda: now[0])
    monkeypatch.setattr(accounts, "_HASHER", GaugedHasher(hold=0))
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    tune(db, monkeypatch, sign_in_global_rate=4, sign_in_rate_window_seconds=60)
    for i in range(4):
        with pytest.raises(AuthError):
            signin.authenticate(db, f"name{i}", PW)
    with pytest.raises(SignInBusyError, match=RATE_MESSAGE):
        signin.authenticate(db, "kim", PW)  # even the right password waits
    now[0] += 61
    assert signin.authenticate(db, "kim", PW).username == "kim"


def test_change_my_password_is_rate_limited_too(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(accounts, "_HASHER", GaugedHasher(hold=0))
    accounts.add_user(db, "kim", role="officer", password=PW, by="test")
    tune(db, monkeypatch, sign_in_account_rate=2, sign_in_max_failures=0)
    for _ in range(2):
        with pytest.raises(AuthError):
            signin.check_current_password(db, "kim", "wrong password here")
    with pytest.raises(SignInBusyError):
        signin.check_current_password(db, "kim", PW)


def test_the_name_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signin_limits, "MAX_TRACKED_NAMES", 5)
    window = signin_limits._Window(clock=lambda: 0.0)
    for i in range(50):
        assert window.hit(f"name{i}", 3, 1000, 60)
    assert len(window._by_key) == 5
