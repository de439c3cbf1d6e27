"""Untrusted text made inert for display: no terminal control sequences, no bidi overrides.

Memory text and every field of a record come from outside (an agent, an import, a live
store). Shown as they are, they could drive the terminal or the reader's eye: clear the
screen (``ESC [2J``), set the window title or plant a hyperlink (OSC 0/2/8), recolour text,
or reorder characters with a right-to-left override so that ``0987654321`` reads as
``1234567890``. :func:`clean` removes all of that and keeps the printable text:

* ANSI escape sequences: CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL`` or ``ESC \\``,
  hyperlinks and titles), other two-character escapes, and their 8-bit C1 forms;
* every other C0 control except tab and newline (``\\r`` can overwrite a line: a CR LF
  becomes a newline, a lone CR a space), DEL and every C1 control (U+0080-U+009F);
* bidirectional overrides, embeddings and isolates (U+202A-U+202E, U+2066-U+2069) and the
  invisible direction marks (U+200E, U+200F, U+061C).

:data:`CONTROL_SEQUENCE` and :data:`BIDI` are the patterns the ``control_chars`` detector
flags. Every pattern runs in linear time (bounded repetitions, disjoint classes).
JSON and CSV outputs never go through this module: they stay exact.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["BIDI", "CONTROL_SEQUENCE", "clean", "one_line"]

#: an ANSI/VT escape sequence (7-bit or 8-bit introducer); an OSC string runs to BEL or ST,
#: at most 4096 characters (longer, the introducer alone is matched and removed)
CONTROL_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]{0,64}[\x20-\x2f]{0,16}[\x40-\x7e]"  # CSI: colours, clear
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]{0,4096}(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[\x20-\x2f]{0,4}[\x30-\x7e]?"  # other escapes (and a lone ESC)
)
#: bidirectional embeddings, overrides and isolates, and the invisible direction marks
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
#: controls left once sequences are gone: C0 (not tab, newline), DEL, C1
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_WHITE = re.compile(r"\s+")


def clean(value: Any) -> str:
    """``value`` as text with control sequences, control characters and bidi marks removed.

    Args:
        value: anything; ``None`` becomes the empty string, others go through ``str``.

    Returns:
        The printable text (tabs and newlines kept).
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text  # the common case: nothing to remove (and no tab or newline either)
    text = text.replace("\r\n", "\n").replace("\r", " ")
    text = CONTROL_SEQUENCE.sub("", text)
    text = BIDI.sub("", text)
    return _CONTROL.sub("", text)


def one_line(value: Any, limit: int | None = None) -> str:
    """:func:`clean`, with every run of white space (newlines too) made one space.

    Args:
        value: anything.
        limit: most characters kept (an ellipsis marks a cut).
    """
    text = _WHITE.sub(" ", clean(value)).strip()
    if limit is not None and len(text) > limit:
        return text[: max(0, limit - 1)] + "…"
    return text
