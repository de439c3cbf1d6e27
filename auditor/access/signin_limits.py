"""Sign-in bounds: at most K password checks at once, and sliding-window rate limits.

An argon2 verification (RFC 9106 defaults) allocates 64 MiB. Without a bound, 40
simultaneous failed sign-ins take a dashboard process past 2 GiB. This module gives the
account layer (:mod:`auditor.access.accounts`) two guards:

* :func:`hashing_slot`: a process-wide semaphore around every argon2 hash or verify; at
  most ``Settings.sign_in_max_concurrent`` run at once (default 2, so about 128 MiB). A
  caller that waits longer than ``Settings.sign_in_wait_seconds`` gets
  :class:`SignInBusyError`, with the same message whatever the account.
* :func:`check_rate`: sliding-window limits on sign-in *attempts*, per user name (as typed,
  normalised; an unknown name is limited like a known one) and for all names together.
  Over a limit, :class:`SignInBusyError` again, before any argon2 work.

Both live in the process's memory. Each dashboard process (each Streamlit server, each
replica behind a load balancer) has its own semaphore and its own windows: with N
processes the memory bound is N x K x 64 MiB and an attacker who reaches all N gets N
times the per-account rate. The account lockout (``Settings.sign_in_max_failures``) is
kept in the database and holds across processes. The per-name table keeps at most
:data:`MAX_TRACKED_NAMES` names (least recently seen dropped first), so a flood of made-up
names cannot grow it without bound; names are kept as digests, never in clear.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from auditor.config import Settings
from auditor.errors import AuthError

__all__ = [
    "BUSY_MESSAGE",
    "MAX_TRACKED_NAMES",
    "RATE_MESSAGE",
    "SignInBusyError",
    "check_rate",
    "hashing_slot",
    "reset",
]

BUSY_MESSAGE = "sign-in is busy right now; try again in a few seconds"
RATE_MESSAGE = "too many sign-in attempts; wait a minute and try again"
MAX_TRACKED_NAMES = 10_000
_DEFAULT_SLOTS = 2
_DEFAULT_WAIT = 5.0


class SignInBusyError(AuthError):
    """Too many sign-ins at once or in a short time: try again later (no argon2 work ran)."""


class _Slots:
    """A semaphore whose size follows the settings (rebuilt when the setting changes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._size = 0
        self._sem = threading.BoundedSemaphore(1)

    def get(self, size: int) -> threading.BoundedSemaphore:
        with self._lock:
            if size != self._size:
                # Callers holding the old semaphore release it; new callers use the new one.
                self._sem = threading.BoundedSemaphore(size)
                self._size = size
            return self._sem


class _Window:
    """Sliding-window counters: timestamps of recent attempts per key, and overall."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._by_key: OrderedDict[str, deque[float]] = OrderedDict()
        self._all: deque[float] = deque()

    @staticmethod
    def _trim(times: deque[float], horizon: float) -> None:
        while times and times[0] <= horizon:
            times.popleft()

    def hit(self, key: str, per_key: int, overall: int, window: float) -> bool:
        """Record an attempt for ``key``; False (and nothing recorded) when over a limit."""
        with self._lock:
            now = self._clock()
            horizon = now - window
            self._trim(self._all, horizon)
            times = self._by_key.get(key)
            if times is not None:
                self._trim(times, horizon)
                self._by_key.move_to_end(key)
            if len(self._all) >= overall or (times is not None and len(times) >= per_key):
                return False
            if times is None:
                times = deque()
                self._by_key[key] = times
                while len(self._by_key) > MAX_TRACKED_NAMES:
                    self._by_key.popitem(last=False)
            times.append(now)
            self._all.append(now)
            return True


_SLOTS = _Slots()
_WINDOW = _Window()


def reset(clock: Callable[[], float] | None = None) -> None:
    """Forget every rate window and rebuild the semaphore (tests; a clock to drive time)."""
    global _SLOTS, _WINDOW
    _SLOTS = _Slots()
    _WINDOW = _Window(clock or time.monotonic)


@contextmanager
def hashing_slot(settings: Settings | None) -> Iterator[None]:
    """Hold one of the ``sign_in_max_concurrent`` argon2 slots while the block runs.

    Args:
        settings: gives the slot count and the wait (None: the defaults, 2 slots, 5 s).

    Raises:
        SignInBusyError: no slot came free within ``sign_in_wait_seconds``.
    """
    size = settings.sign_in_max_concurrent if settings is not None else _DEFAULT_SLOTS
    wait = settings.sign_in_wait_seconds if settings is not None else _DEFAULT_WAIT
    sem = _SLOTS.get(size)
    if not sem.acquire(timeout=wait):
        raise SignInBusyError(BUSY_MESSAGE)
    try:
        yield
    finally:
        sem.release()


def check_rate(settings: Settings, username: str) -> None:
    """Count a sign-in attempt for ``username`` (as typed) against both sliding windows.

    Raises:
        SignInBusyError: the name or the process had too many attempts in the window.
    """
    key = hashlib.sha256(
        b"memaudit-signin:" + (username or "")[:256].strip().lower().encode("utf-8", "replace")
    ).hexdigest()
    if not _WINDOW.hit(
        key,
        settings.sign_in_account_rate,
        settings.sign_in_global_rate,
        float(settings.sign_in_rate_window_seconds),
    ):
        raise SignInBusyError(RATE_MESSAGE)
