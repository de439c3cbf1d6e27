"""Whether a process that left a mark (a scan run's owner, a scratch copy) is still alive.

A mark records the host, the pid and the process's start time (clock ticks since boot,
from ``/proc/<pid>/stat`` on Linux; empty elsewhere). A pid on this host is alive when a
process with that pid exists and, when a start time was recorded and can be read, started
then: a pid reused by a later process is not taken for the one that left the mark. A
process of another host cannot be checked from here: callers decide what to do with it.

Also :func:`quick_exit`: how a finished command or scan worker ends without tearing down
its heap.

Standard library only; no I/O beyond ``/proc`` and ``kill(pid, 0)``.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import NoReturn

__all__ = ["alive_here", "host_name", "owner_record", "quick_exit", "start_ticks"]


def quick_exit(code: int, *, run_atexit: bool = True) -> NoReturn:
    """End this process now with ``code``, its work done: what is buffered is written first.

    As at an ordinary exit, threads that are not daemons are waited for first (and thread
    pools told to finish), then the ``atexit`` handlers run (temporary folders removed,
    child processes reaped, log handlers flushed and closed); standard output and error are
    flushed, then the process
    exits without the interpreter's teardown: freeing a heap of detectors (Presidio,
    spaCy, compiled pattern tables) one object at a time takes about a second, and nothing
    in it is still to be written. Callers close their databases before (what was committed
    is on disk either way; SQLite checkpoints its log on the next open). A forked child
    passes ``run_atexit=False``: the handlers it has are its parent's.
    """
    try:
        if run_atexit:
            # the interpreter's own first step at exit (CPython's, private: looked up)
            wait_for_threads = getattr(threading, "_shutdown", None)
            if (
                wait_for_threads is not None
                and threading.current_thread() is threading.main_thread()
            ):
                wait_for_threads()
            atexit._run_exitfuncs()
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # closed or gone (a pipe whose reader left): nothing more to write
    finally:
        os._exit(code)


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
