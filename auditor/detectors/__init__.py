"""Detector registry: an explicit table of names to classes, imported on first use.

``build(name, params)`` returns a detector instance; equal (name, params) pairs share one
instance, so heavy engines (Presidio, detect-secrets) are built once per process. What an
engine must know before it builds anything (a detector's scope, what its loading involves)
is recorded here, so planning a run imports no detector module.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span

if TYPE_CHECKING:
    from auditor.detectors.prefilter import Needles

__all__ = [
    "DETECTORS",
    "GATES",
    "DetectContext",
    "Detection",
    "Detector",
    "MemoryView",
    "Span",
    "LOADS",
    "SCOPES",
    "build",
    "build_gate",
    "detector_class",
    "detector_scope",
]

#: detector name -> "module:class"
DETECTORS: dict[str, str] = {
    "injection": "auditor.detectors.injection:InjectionDetector",
    "pii": "auditor.detectors.pii:PiiDetector",
    "special_category": "auditor.detectors.special_categories:SpecialCategoryDetector",
    "secrets": "auditor.detectors.secrets:SecretsDetector",
    "expiry": "auditor.detectors.expiry:ExpiryDetector",
    "hygiene": "auditor.detectors.hygiene:HygieneDetector",
    "chains": "auditor.detectors.chains:ChainDetector",
    "duplicates": "auditor.detectors.duplicates:DuplicateDetector",
    "contradiction": "auditor.detectors.contradiction:ContradictionDetector",
    "handover": "auditor.detectors.handover:HandoverDetector",
    "keyword": "auditor.detectors.keyword:KeywordDetector",
    "injection_model": "auditor.detectors.injection_model:InjectionModelDetector",
    "source_hygiene": "auditor.detectors.source_hygiene:SourceHygieneDetector",
    "control_chars": "auditor.detectors.control_chars:ControlCharsDetector",
}

#: the ``scope`` of each detector above (``"subject"``: it judges the memories of one
#: subject together), so that an engine can plan without importing them; a test keeps it
#: equal to the classes' own ``scope``
SCOPES: dict[str, str] = {
    name: "subject" if name in ("chains", "duplicates", "contradiction", "handover") else "memory"
    for name in DETECTORS
}
#: the same, by class ("module:class"): what a name is registered as may change (tests)
_SCOPE_OF_TARGET = {DETECTORS[name]: scope for name, scope in SCOPES.items()}
#: the classes registered at first (a gate below holds for these only)
_SHIPPED = dict(DETECTORS)

#: what building a detector loads, where it takes noticeably long (for progress lines)
LOADS: dict[str, str] = {
    "pii": "Presidio, spaCy",
    "secrets": "detect-secrets, Betterleaks",
    "injection": "pattern tables",
    "injection_model": "the n-gram classifier",
    "contradiction": "frame and pair tables",
    "special_category": "pattern tables",
}

#: detectors whose build can wait for a memory that may hold what they look for: a function
#: ``params -> Needles | None`` (a light module, no engine loaded) giving what a text must
#: contain for the detector to find anything (None: the params leave it open)
GATES: dict[str, str] = {
    "pii": "auditor.detectors.pii_gate:identifier_needles",
}

_cache: dict[str, Detector] = {}
_lock = threading.Lock()


def detector_class(name: str) -> type[Detector]:
    """The class registered under ``name``.

    Raises:
        KeyError: no such detector.
    """
    target = DETECTORS[name]
    module_name, _, class_name = target.partition(":")
    cls: type[Detector] = getattr(importlib.import_module(module_name), class_name)
    return cls


def detector_scope(name: str) -> str:
    """``"memory"`` or ``"subject"``: the scope of the detector registered under ``name``
    (from :data:`SCOPES`, without importing it; a class registered otherwise, e.g. by a
    test, is imported to ask it).

    Raises:
        KeyError: no such detector.
    """
    found = _SCOPE_OF_TARGET.get(DETECTORS[name])
    return found if found is not None else detector_class(name).scope


def build_gate(name: str, params: Mapping[str, Any] | None = None) -> Needles | None:
    """What a text must contain for the detector ``name`` with ``params`` to find anything,
    known without building it (None: nothing known, build it to see)."""
    target = GATES.get(name)
    if target is None or DETECTORS.get(name) != _SHIPPED.get(name):
        return None
    module_name, _, function_name = target.partition(":")
    needles: Needles | None = getattr(importlib.import_module(module_name), function_name)(
        params or {}
    )
    return needles


def build(name: str, params: Mapping[str, Any] | None = None) -> Detector:
    """A (shared) detector instance for ``name`` and ``params``.

    Raises:
        KeyError: unknown detector.
        ValueError: invalid params (the message names the parameter).
    """
    key = name + "\0" + json.dumps(params or {}, sort_keys=True, default=str)
    with _lock:
        found = _cache.get(key)
        if found is None:
            found = detector_class(name)(params or {})
            _cache[key] = found
        return found
