"""Whether a process that left a mark (a scan run's owner, a scratch copy) is still alive.

A mark records the host, the pid and the process's start time (clock ticks since boot,
from ``/proc/<pid>/stat`` on Linux; empty elsewhere). A pid on this host is alive when a
process with that pid exists and, when a start time was recorded and can be read, started
then: a pid reused by a later process is not taken for the one that left the mark. A
process of another host cannot be checked from here: callers decide what to do with it.

Standard library only; no I/O beyond ``/proc`` and ``kill(pid, 0)``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

__all__ = ["alive_here", "host_name", "owner_record", "start_ticks"]


def host_name() -> str:
    """This machine's host name, as marks record it (at most 200 characters)."""
    return socket.gethostname()[:200]


def start_ticks(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), or "" when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    # the command name (field 2) is in parentheses and may hold spaces: split after it
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def owner_record() -> dict[str, str | int]:
    """Who this process is: ``host``, ``pid`` and ``started``, as written into a mark."""
    pid = os.getpid()
    return {"host": host_name(), "pid": pid, "started": start_ticks(pid)}


def alive_here(pid: int, started: str = "") -> bool:
    """Whether the process ``pid`` of this host (started at ``started``, when given) lives."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, and belongs to another user
    return not (started and start_ticks(pid) not in ("", started))
