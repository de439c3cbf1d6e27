"""``memaudit`` with a trace of every memory evaluated, in the parent and its scan workers.

Used by tests only. A spawned worker runs this script again (as ``__mp_main__``), a forked
one inherits it: either way the trace and the settings below apply in every process of
the scan.

* ``MEMAUDIT_TEST_SUBJECT_BATCH``: subjects per batch (small: a shard holds several
  batches, so a worker killed in the middle of one has committed some already).
* ``MEMAUDIT_TEST_SLOW_MS``: milliseconds added to each memory's evaluation (so that a
  test can act while a shard is half done).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import trace_replica  # type: ignore[import-not-found]  # noqa: F401 - traces Engine.run_memory

from auditor.cli.main import main
from auditor.rulepack.engine import Engine
from auditor.scan import scanner as scan

if os.environ.get("MEMAUDIT_TEST_SUBJECT_BATCH"):
    scan.SUBJECT_BATCH = int(os.environ["MEMAUDIT_TEST_SUBJECT_BATCH"])
_SLOW = float(os.environ.get("MEMAUDIT_TEST_SLOW_MS") or 0) / 1000
_traced = Engine.run_memory


def _slowed(self: Engine, view: Any, ctx: Any) -> Any:
    time.sleep(_SLOW)
    return _traced(self, view, ctx)


if _SLOW:
    Engine.run_memory = _slowed  # type: ignore[method-assign]

if __name__ == "__main__":
    main(sys.argv[1:])
