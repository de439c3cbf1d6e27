"""What every ``memaudit`` command module shares: the per-invocation context and the output.

:mod:`auditor.cli.main` (the root group) and the modules that add command groups to it
(memories, audit_log, rules, scanning, tools, users, dashboard, erasure, keys, sources)
import from here, and from no other command module but :mod:`auditor.cli.memories` (its
record options serve ``guard`` too), so there is no import cycle between them and no copied
protocol of the context. Shared here too: the ``--rules`` option, loading the rule pack, and
the progress line of detectors that take a while to build.

Contract: this module is cheap to import (click, rich and the standard library; the store
is imported when a command first asks for it), because ``memaudit --help`` and the listing
commands must start fast. Listings go to standard output (``out_console``, or plain JSON/CSV
streamed); progress, notes and errors go to standard error (``err_console``).
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from auditor.cli.terminal import SafeConsole, cell

if TYPE_CHECKING:
    from auditor.config import Settings
    from auditor.rulepack.pack import RulePack
    from auditor.store.db import Database

__all__ = [
    "TABLE_DEFAULT_LIMIT",
    "Ctx",
    "emit_rows",
    "err_console",
    "limit_option",
    "listing_format",
    "load_rule_pack",
    "loading_line",
    "out_console",
    "pass_ctx",
    "rules_option",
]

TABLE_DEFAULT_LIMIT = 50

err_console = SafeConsole(stderr=True, highlight=False, soft_wrap=True)
# Piped output is not cut to 80 columns: tables stay readable in logs and files.
out_console = SafeConsole(
    highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 200
)


class Ctx:
    """Per-invocation state: settings and a lazily opened store."""

    def __init__(self, settings: Settings, explicit_log_level: bool = False) -> None:
        self.settings = settings
        self.explicit_log_level = explicit_log_level
        self._db: Database | None = None

    def db(self, *, require_schema: bool = True) -> Database:
        """The store (opened on first use); ``require_schema`` checks it is migrated."""
        if self._db is None:
            from auditor.store.db import Database

            self._db = Database(self.settings)
        if require_schema:
            self._db.require_schema()
        return self._db

    def close(self) -> None:
        """Close the store's connections (the command is over; called by click)."""
        if self._db is not None:
            self._db.dispose()
            self._db = None


pass_ctx = click.make_pass_decorator(Ctx)

#: ``--format table|json|csv`` of every listing (JSON and CSV are complete and streamed).
listing_format = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="table for people; json (an array) or csv for scripts.",
)


def _flat(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in d.items():
        if key == "source":
            for sk, sv in value.items():
                out[f"source_{sk}"] = sv
        elif isinstance(value, (dict, list)):
            out[key] = json.dumps(value, ensure_ascii=False, sort_keys=True)
        else:
            out[key] = value
    return out


def emit_rows(
    rows: Iterable[dict[str, Any]],
    fmt: str,
    columns: list[str],
    total: int | None = None,
    limit: int | None = None,
) -> None:
    """Print rows as a table, a JSON array (streamed, complete) or CSV."""
    if fmt == "json":
        out = sys.stdout
        out.write("[")
        first = True
        for row in rows:
            out.write("\n  " if first else ",\n  ")
            out.write(json.dumps(row, ensure_ascii=False))
            first = False
        out.write("\n]\n" if not first else "]\n")
        return
    if fmt == "csv":
        writer: Any = None
        for row in rows:
            flat = _flat(row)
            if writer is None:
                writer = csv.DictWriter(sys.stdout, fieldnames=list(flat), extrasaction="ignore")
                writer.writeheader()
            writer.writerow(flat)
        if writer is None:
            csv.writer(sys.stdout).writerow(columns)
        return
    table = Table(show_edge=False)
    for col in columns:
        table.add_column(col, overflow="fold", max_width=60 if col == "fact" else None)
    shown = 0
    for row in rows:
        flat = {
            k: ", ".join(v) if isinstance(v, list) and all(isinstance(i, str) for i in v) else v
            for k, v in row.items()
        }
        flat = _flat(flat)
        table.add_row(*(cell(flat.get(col), 60 if col == "fact" else None) for col in columns))
        shown += 1
    out_console.print(table)
    if total is not None and total > shown:
        err_console.print(f"showing {shown} of {total}; use --limit N or --format json for all")


rules_option = click.option(
    "--rules",
    "rules_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Rule pack folder (default: MEMAUDIT_RULES_DIR or the shipped rules/).",
)


def loading_line(command: str) -> Callable[[str], None]:
    """An engine's ``on_load``: a line on standard error for each detector that takes a
    while to build (``scan: loading detectors: pii (Presidio, spaCy) ...``)."""
    from auditor.detectors import LOADS

    def say(name: str) -> None:
        if name in LOADS:
            err_console.print(
                f"{command}: loading detectors: {name} ({LOADS[name]}) ...",
                markup=False,
                highlight=False,
            )

    return say


def load_rule_pack(c: Ctx, rules_dir: Path | None) -> RulePack:
    """The pack in ``rules_dir``, else the configured one."""
    from auditor.rulepack.pack import load_pack

    return load_pack(rules_dir or c.settings.rules_dir)


#: ``--limit N`` of the listings: a table shows TABLE_DEFAULT_LIMIT rows unless told,
#: JSON and CSV are complete unless told (DESIGN.md's command contract).
limit_option = click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=None,
    help=f"At most N (table default {TABLE_DEFAULT_LIMIT}; JSON/CSV default: all).",
)
