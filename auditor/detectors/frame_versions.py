"""A lowest accepted version and a version that meets it: "runs on Python 3.10 or newer" /
"runs on Python 3.12" agree, while "requires Python 3.10 or later" / "requires Python 3.9
or later" give one thing two minimums (the ``minimum:<name>`` typed values read by
:func:`auditor.detectors._frame_words._typed`)."""

from __future__ import annotations

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import VERSION

__all__ = ["meets_minimum"]

_MINIMUM = "minimum:"


def _as_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def meets_minimum(x: Frame, y: Frame) -> bool:
    """Whether ``x`` gives a named thing a lowest version and ``y`` names that thing with a
    plain version at or above it (and no minimum of its own)."""
    tx, ty = x.typed_map(), y.typed_map()
    if any(kind.startswith(_MINIMUM) for kind in ty):
        return False
    plain = [_as_tuple(v) for v in y.values if VERSION.match(v)]
    if not plain:
        return False
    for kind, lowest in tx.items():
        if not kind.startswith(_MINIMUM) or stem(kind[len(_MINIMUM) :]) not in y.values:
            continue
        floor = min(_as_tuple(v) for v in lowest)
        if all(v >= floor for v in plain):
            return True
    return False
