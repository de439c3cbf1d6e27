"""Record data printed on a terminal: inert for Rich markup and for the terminal itself.

Every human output of the CLI (tables, ``memories list`` and ``show``, findings, receipts,
sources, users) prints record data through this module:

* :func:`safe_text` for a value interpolated into a string Rich parses as markup: control
  sequences removed (:func:`auditor.safetext.clean`), then ``[`` escaped, so ``[/nope]``
  cannot crash the print (``MarkupError``) and ``[link=...]`` cannot become a hyperlink;
* :func:`cell` for a table cell: a :class:`rich.text.Text`, never parsed as markup;
* :func:`clean` for plain ``click.echo`` lines;
* :class:`SafeConsole`, the CLI's consoles: every string it prints is cleaned of control
  sequences as a last guard (markup written by memaudit itself has none).

JSON and CSV outputs do not use this module: they stay exact.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from auditor.safetext import clean, one_line

__all__ = ["SafeConsole", "cell", "clean", "echo", "one_line", "safe_text"]


def safe_text(value: Any) -> str:
    """``value`` cleaned of control sequences and escaped for Rich markup."""
    return escape(clean(value))


def cell(value: Any, limit: int | None = None) -> Text:
    """A table cell for ``value``: cleaned, optionally cut, never read as markup.

    Args:
        value: anything (``None`` is an empty cell).
        limit: most characters shown (``...`` marks a cut).
    """
    text = clean(value)
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 3)] + "..."
    return Text(text)


class SafeConsole(Console):
    """A Rich console whose every printed string is cleaned of control sequences.

    A guard behind :func:`safe_text` and :func:`cell`: it removes escape sequences, control
    characters and bidi overrides from string arguments (it cannot tell markup from data,
    so escaping stays the caller's job) and from :class:`~rich.text.Text` arguments.
    """

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - Rich's name
        """:meth:`rich.console.Console.print` with string and Text arguments cleaned."""
        safe: list[Any] = []
        for obj in objects:
            if isinstance(obj, str):
                safe.append(clean(obj))
            elif isinstance(obj, Text) and not obj.plain.isprintable():
                copy = obj.copy()
                copy.plain = clean(obj.plain)
                safe.append(copy)
            else:
                safe.append(obj)
        super().print(*safe, **kwargs)


def echo(message: Any = "", *, err: bool = False) -> None:
    """``click.echo`` of a human line, cleaned of control sequences (not for JSON or CSV)."""
    import click

    click.echo(clean(message), err=err)
