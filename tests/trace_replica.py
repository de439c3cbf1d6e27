"""Run ``memaudit`` with a trace of every memory a scan evaluates (used by tests only).

Each evaluation appends the memory id to ``$MEMAUDIT_TEST_TRACE_DIR/<pid>.txt``, so a test
can count, across processes, how often each memory was scanned in a run.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from auditor.cli.main import main
from auditor.rulepack.engine import Engine

_TRACES = os.environ["MEMAUDIT_TEST_TRACE_DIR"]
_run_memory = Engine.run_memory


def _traced(self: Engine, view: Any, ctx: Any) -> Any:
    # the pid now, not at import: a forked scan worker inherits this module from its parent
    with open(os.path.join(_TRACES, f"{os.getpid()}.txt"), "a", encoding="utf-8") as fh:
        fh.write(view.memory_id + "\n")
    return _run_memory(self, view, ctx)


Engine.run_memory = _traced  # type: ignore[method-assign]

if __name__ == "__main__":
    main(sys.argv[1:])
