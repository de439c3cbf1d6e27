"""Exit codes: one documented contract, mapped in one place.

=====  ==============  ==========================================================
code   name            meaning
=====  ==============  ==========================================================
0      OK              the command did its job (a scan that found problems too)
1      CHECK_FAILED    a check failed: ``verify-erasure``, ``audit-log verify``,
                       ``--fail-on``
2      USAGE           usage or input errors; an import that skipped bad records
                       (after keeping the good ones)
3      INTERNAL        internal errors: the database is unreachable, a bug
=====  ==============  ==========================================================
"""

from __future__ import annotations

import enum

from auditor import errors

__all__ = ["ExitCode", "exit_code_for"]


class ExitCode(enum.IntEnum):
    """The process exit codes of the ``memaudit`` command."""

    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    INTERNAL = 3


def exit_code_for(exc: BaseException) -> ExitCode:
    """Map an exception to the exit code the command contract promises.

    Args:
        exc: the exception that ended the command.

    Returns:
        The exit code: input, lookup, lifecycle, sign-in and permission errors are the
        caller's (USAGE), a broken audit chain is a failed check, everything else is
        INTERNAL.
    """
    if isinstance(exc, errors.AuditChainError):
        return ExitCode.CHECK_FAILED
    if isinstance(
        exc,
        (
            errors.InputError,
            errors.NotFoundError,
            errors.LifecycleError,
            errors.ConcurrencyError,
            errors.ConfigError,
            errors.AuthError,
            errors.AccessDenied,
        ),
    ):
        return ExitCode.USAGE
    return ExitCode.INTERNAL
