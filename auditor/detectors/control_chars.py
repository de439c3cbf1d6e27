"""Terminal control sequences and bidi overrides in memory text.

A memory's text is shown to people: in a terminal (``memaudit memories show``), in the
dashboard, in an agent's own console logs. Text that carries ANSI escape sequences can clear
the screen, recolour or hide lines, set the window title or plant a hyperlink (OSC 8) when
it is printed raw; a bidi override (U+202D, U+202E) reorders what a reader sees, so that
``0987654321`` reads as ``1234567890`` or ``exe.txt`` as ``txt.exe``. Neither has a use in
a remembered fact. memaudit's own outputs strip them (:mod:`auditor.safetext`); this
detector reports the memories that carry them, so they can be cleaned at the source.

Entities:

* ``terminal_escape``: an ANSI/VT escape sequence (CSI such as ``ESC [2J``, OSC such as
  ``ESC ]8;;url BEL`` or ``ESC ]0;title BEL``, their 8-bit C1 forms) or a lone ESC.
  Score 1.0 for OSC, screen and cursor control; 0.9 for colours and other sequences.
* ``bidi_override``: a bidi override or embedding (U+202A-U+202E) or isolate
  (U+2066-U+2069). Score 0.9 for an override (U+202D, U+202E), 0.6 for embeddings and
  isolates, which right-to-left text may use legitimately.

Spans point at each sequence (at most 20 per entity); details give counts, never the text.
Linear time: :data:`auditor.safetext.CONTROL_SEQUENCE` has bounded repetitions.

Params: none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span
from auditor.safetext import CONTROL_SEQUENCE

__all__ = ["ControlCharsDetector"]

_MAX_SPANS = 20
_OVERRIDES = frozenset("\u202d\u202e")
#: the final bytes of CSI sequences that move the cursor, erase or scroll (not colours)
_SCREEN_FINALS = frozenset("ABCDEFGHJKSTfhlnsu")
_INTRODUCER = re.compile("[\x1b\x90-\x9f]")
_BIDI_CHAR = re.compile("[\u202a-\u202e\u2066-\u2069]")


class ControlCharsDetector(Detector):
    """Reports ANSI/OSC escape sequences and bidi controls in a memory's text."""

    name = "control_chars"
    scope = "memory"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        if self.params:
            raise ValueError(f"{sorted(self.params)[0]}: the control_chars detector has no params")

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Escape sequences and bidi controls in one memory's fact."""
        text = memory.fact
        out: list[Detection] = []
        if _INTRODUCER.search(text):
            out += self._escapes(memory, text)
        if _BIDI_CHAR.search(text):
            out += self._bidi(memory, text)
        return out

    def _escapes(self, memory: MemoryView, text: str) -> list[Detection]:
        spans: list[Span] = []
        kinds: dict[str, int] = {}
        for m in CONTROL_SEQUENCE.finditer(text):
            seq = m.group()
            if seq[:2] == "\x1b]" or seq[:1] == "\x9d":
                kind = "osc"
            elif seq[:2] == "\x1b[" or seq[:1] == "\x9b":
                kind = "csi_screen" if seq[-1] in _SCREEN_FINALS else "csi"
            else:
                kind = "escape"
            kinds[kind] = kinds.get(kind, 0) + 1
            if len(spans) < _MAX_SPANS:
                spans.append(Span(m.start(), m.end(), "terminal_escape"))
        if not spans:
            return []
        score = 1.0 if kinds.keys() & {"osc", "csi_screen"} else 0.9
        return [
            Detection(
                memory_ids=(memory.memory_id,),
                detector=self.name,
                entity="terminal_escape",
                score=score,
                spans=tuple(spans),
                reason=(
                    f"{sum(kinds.values())} terminal escape sequence(s) in the text "
                    f"({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}): printed "
                    "raw they control the reader's terminal"
                ),
                details={"sequences": kinds},
            )
        ]

    def _bidi(self, memory: MemoryView, text: str) -> list[Detection]:
        spans: list[Span] = []
        overrides = others = 0
        for m in _BIDI_CHAR.finditer(text):
            i, ch = m.start(), m.group()
            if ch in _OVERRIDES:
                overrides += 1
            else:
                others += 1
            if len(spans) < _MAX_SPANS:
                spans.append(Span(i, i + 1, "bidi_override"))
        return [
            Detection(
                memory_ids=(memory.memory_id,),
                detector=self.name,
                entity="bidi_override",
                score=0.9 if overrides else 0.6,
                spans=tuple(spans),
                reason=(
                    f"{overrides} bidi override(s) and {others} embedding or isolate "
                    "control(s): they reorder how the text reads on screen"
                ),
                details={"overrides": overrides, "embeddings_or_isolates": others},
            )
        ]
