"""Input limits: how much text memaudit accepts from a person or a file, and why.

Every entry point that takes free text from outside (the CLI, the dashboard's services,
the importer and the sources, sync, the lifecycle) checks it against one of the limits
here *before* any pattern runs on it or any transaction opens, so an oversized value costs
a length check and nothing more. A refusal is an :class:`~auditor.errors.InputError` whose
message names what was refused, where it came from, its size and the limit; it never
repeats the value (it may hold personal data).

The numbers and why:

=====================  ===========  ======================================================
limit                  default      why
=====================  ===========  ======================================================
fact                   262,144 B    ``Settings.max_fact_bytes``: a memory is a sentence or
                                    a paragraph; 256 KiB leaves room for pasted documents.
correction             10,000 ch    ``Settings.max_correction_chars``: what a person types
                                    into the dashboard to correct one memory.
reason / note          2,000 ch     ``Settings.max_note_chars``: a reviewer's or a
                                    subject's reason, an erasure reason, a review note;
                                    the audit log keeps at most 500 of them anyway.
user name              200 ch       :func:`auditor.access.accounts.normalise_username`.
display name           200 ch       shown in listings.
subject id             256 ch       :class:`auditor.records.MemoryRecord` ``subject``.
namespace              256 ch       :class:`auditor.records.MemoryRecord` ``namespace``.
memory id              128 ch       :class:`auditor.records.MemoryRecord` ``memory_id``.
password               1,024 ch     bounds the argon2 work per try.
rule file              262,144 B    the largest shipped rule is under 8 KB.
rule files per pack    2,000        the shipped pack has about 60.
YAML nesting depth     32           rules nest four levels deep.
YAML nodes per file    50,000       a keyword rule with thousands of terms still fits.
config / mapping file  1,048,576 B  a TOML settings file or a YAML source mapping.
=====================  ===========  ======================================================

Settings can raise (or lower) the fact, correction and note limits; the others are fixed
because the database columns or the parsers depend on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.errors import InputError

if TYPE_CHECKING:
    from auditor.config import Settings

__all__ = [
    "MAX_CONFIG_FILE_BYTES",
    "MAX_DISPLAY_NAME_CHARS",
    "MAX_MEMORY_ID_CHARS",
    "MAX_NAMESPACE_CHARS",
    "MAX_RULE_FILES",
    "MAX_RULE_FILE_BYTES",
    "MAX_SUBJECT_CHARS",
    "MAX_USERNAME_CHARS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "check_chars",
    "check_correction",
    "check_file_size",
    "check_note",
]

MAX_USERNAME_CHARS = 200
MAX_DISPLAY_NAME_CHARS = 200
MAX_SUBJECT_CHARS = 256
MAX_NAMESPACE_CHARS = 256
MAX_MEMORY_ID_CHARS = 128
MAX_RULE_FILE_BYTES = 262_144
MAX_RULE_FILES = 2_000
MAX_YAML_DEPTH = 32
MAX_YAML_NODES = 50_000
MAX_CONFIG_FILE_BYTES = 1_048_576

#: Defaults of the settings that override them (kept here so the table above is the truth).
DEFAULT_NOTE_CHARS = 2_000
DEFAULT_CORRECTION_CHARS = 10_000


def check_chars(value: str | None, limit: int, *, what: str, where: str) -> str | None:
    """Refuse text longer than ``limit`` characters (None passes through).

    Args:
        value: the text (never repeated in the error).
        limit: the most characters allowed.
        what: what the text is, e.g. ``"the erasure reason"``.
        where: where it came from, e.g. ``"dashboard"`` or ``"memaudit erase --reason"``.

    Returns:
        ``value`` unchanged.

    Raises:
        InputError: ``"<where>: <what> is N characters, over the limit of L"``.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}: {what} must be text, not {type(value).__name__}")
    if len(value) > limit:
        raise InputError(
            f"{where}: {what} is {len(value):,} characters, over the limit of {limit:,}"
        )
    return value


def check_note(
    value: str | None, settings: Settings | None, *, what: str, where: str
) -> str | None:
    """Refuse a reason or note over ``Settings.max_note_chars`` (default 2,000)."""
    limit = settings.max_note_chars if settings is not None else DEFAULT_NOTE_CHARS
    return check_chars(value, limit, what=what, where=where)


def check_correction(value: str, settings: Settings | None, *, where: str) -> str:
    """Refuse a user's correction over ``Settings.max_correction_chars`` (default 10,000)."""
    limit = settings.max_correction_chars if settings is not None else DEFAULT_CORRECTION_CHARS
    checked = check_chars(value, limit, what="the correction", where=where)
    assert checked is not None  # a str in, a str out
    return checked


def check_file_size(size: int, limit: int, *, what: str, where: str) -> None:
    """Refuse a file of ``size`` bytes over ``limit`` (before it is read).

    Raises:
        InputError: ``"<where>: <what> is N bytes, over the limit of L"``.
    """
    if size > limit:
        raise InputError(f"{where}: {what} is {size:,} bytes, over the limit of {limit:,}")
