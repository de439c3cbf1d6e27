"""Hooks on lifecycle transitions: how the source outbox follows quarantines and restores.

The lifecycle decides; other parts react. A *transition hook* is called inside the same
session (and so the same transaction) as the transition it follows, with the memory as it
now stands and the action (``"quarantine"`` or ``"restore"``); whatever it writes commits
or rolls back with the transition. The lifecycle package imports none of its subscribers:
they are named here as ``"module:function"`` strings and imported on first use, the same
way import formats and connector kinds are (``auditor.sources.files.FORMATS``,
``auditor.sources.live.KINDS``). So the dependency points one way (the outbox imports the
lifecycle, never the reverse) and no hook depends on import order: a process that
quarantines a memory carries it to its source whether or not it imported the outbox.

:data:`DEFAULT_HOOKS` is the built-in list: the write-back outbox
(:func:`auditor.sources.outbox.queue_transition`, which does nothing for a memory whose
source does not take write-back). :func:`subscribe` adds a hook for this process (tests,
embedding applications); a hook that raises aborts the transition, as the outbox's own
errors always have.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from auditor.config import Settings
    from auditor.store.models import Memory

__all__ = ["DEFAULT_HOOKS", "TRANSITIONS", "TransitionHook", "notify", "subscribe", "subscribers"]

#: A hook: ``hook(session, settings, memory, action)``; its return value is ignored.
TransitionHook = Callable[["Session", "Settings", "Memory", str], object]

#: The transitions that hooks hear about.
TRANSITIONS = ("quarantine", "restore")

#: The built-in subscribers, as ``"module:function"`` (imported on first use).
DEFAULT_HOOKS: tuple[str, ...] = ("auditor.sources.outbox:queue_transition",)

_resolved: list[TransitionHook] | None = None
_added: list[TransitionHook] = []


def _load(target: str) -> TransitionHook:
    module_name, _, attr = target.partition(":")
    hook: TransitionHook = getattr(importlib.import_module(module_name), attr)
    return hook


def subscribers() -> list[TransitionHook]:
    """The hooks called on every transition: the defaults, then those :func:`subscribe` added."""
    global _resolved
    if _resolved is None:
        _resolved = [_load(target) for target in DEFAULT_HOOKS]
    return [*_resolved, *_added]


def subscribe(hook: TransitionHook) -> Callable[[], None]:
    """Call ``hook`` on every transition of this process; returns a function that removes it."""
    _added.append(hook)

    def unsubscribe() -> None:
        if hook in _added:
            _added.remove(hook)

    return unsubscribe


def notify(session: Session, settings: Settings, memory: Memory, action: str) -> None:
    """Tell every subscriber that ``memory`` went through ``action`` (in ``session``).

    Raises:
        ValueError: ``action`` is not one of :data:`TRANSITIONS`.
    """
    if action not in TRANSITIONS:
        raise ValueError(f"unknown lifecycle transition {action!r}; expected one of {TRANSITIONS}")
    for hook in subscribers():
        hook(session, settings, memory, action)
