"""Dependencies enforced: the import contracts hold and bite; simple commands stay light.

* ``lint-imports`` (the contracts in ``pyproject.toml``, run by ``make lint``) passes on
  this checkout, and fails on a copy of it into which a forbidden import was planted: a
  detector that opens the store, a service that imports the CLI, an import cycle.
* ``memaudit --help`` loads no store, settings or logging library; ``findings``,
  ``memories list`` and ``summary`` load no detector engine, Presidio, spaCy, the
  secrets scanners or Alembic; a scan with nothing to scan loads no detector (the
  start-up cost is measured by ``benchmarks/startup_bench.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_import_contracts_hold() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


@pytest.mark.slow
def test_the_import_contracts_fail_on_a_forbidden_import(tmp_path: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("auditor", "dashboard"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    # `dashboard` is a namespace package; the editable install also puts the checkout on
    # the path, so without an __init__ the copy and the checkout would be two portions of
    # one namespace, analysed in hash order. A regular package in the copy is found first.
    (tmp_path / "dashboard" / "__init__.py").write_text("", encoding="utf-8")

    def plant(module: str, line: str) -> None:
        path = tmp_path / module
        path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")

    plant("auditor/detectors/expiry.py", "from auditor.store.db import Database  # planted")
    plant("auditor/detectors/keyword.py", "import sqlalchemy  # planted")
    plant("auditor/access/readers.py", "from auditor import cli  # planted")
    plant("auditor/access/accounts.py", "import dashboard.ui  # planted")
    plant("dashboard/ui.py", "from auditor.store import models  # planted")
    plant(
        "auditor/lifecycle/audit_key.py",
        "from auditor.lifecycle import machine  # planted: a cycle",
    )
    plant("auditor/scan/findings.py", "from auditor.access import officer  # planted: upwards")
    plant("auditor/rulepack/engine.py", "from auditor.store import db  # planted: a join")

    done = _lint_imports(tmp_path)
    assert done.returncode != 0
    out = " ".join(done.stdout.split())  # the report wraps long contract names
    for name in (
        "Detectors never touch the store or the database, not even through another module",
        "Detectors never import a database library",
        "Nothing imports the CLI",
        "Nothing in the package imports the dashboard",
        "The dashboard reaches the store through the access services, never by itself",
        "No import cycle between the parts of auditor, or between the modules of a part",
        "The layers of DESIGN.md: each part imports only the parts below it",
        "Only the scan package joins rules, detectors and the store",
    ):
        assert f"{name}" in out
    summary = out[out.find("Contracts --------- ") : out.find("Broken contracts")]
    assert "Contracts: 0 kept, 8 broken." in out, summary


#: Loaded by a command that has nothing to scan: never.
SCAN_ONLY = (
    "presidio_analyzer",
    "spacy",
    "thinc",
    "torch",
    "detect_secrets",
    "betterleaks",
    "streamlit",
    "auditor.rulepack.engine",
    "auditor.scan.scanner",
    "auditor.judge.llm",
    "auditor.detectors.pii",
    "auditor.detectors.secrets",
    "auditor.detectors.injection",
    "auditor.detectors.contradiction",
)
#: Not needed to print the help either.
STORE_AND_SETTINGS = ("sqlalchemy", "alembic", "pydantic_settings", "structlog", "argon2")
#: Needed to migrate a store, not to read one: the schema check reads the version table.
MIGRATIONS = ("alembic", "mako")
#: What the detectors load (a scan loads them when a memory needs them, and only then).
DETECTOR_MODULES = (
    "presidio_analyzer",
    "spacy",
    "thinc",
    "torch",
    "detect_secrets",
    "betterleaks",
    "auditor.detectors.pii",
    "auditor.detectors.secrets",
    "auditor.detectors.injection",
    "auditor.detectors.injection_model",
    "auditor.detectors.special_categories",
    "auditor.detectors.contradiction",
)

# ``python -m auditor`` ends with a quick exit, which runs the exit handlers: the report is one
_PROBE = """
import atexit, json, runpy, sys
sys.argv = ["memaudit", *sys.argv[1:]]
atexit.register(lambda: print(json.dumps({"modules": sorted(sys.modules)}), file=sys.stderr))
runpy.run_module("auditor", run_name="__main__")
"""


def _loaded(args: list[str], db_url: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAUDIT_")}
    env["MEMAUDIT_DATABASE_URL"] = db_url
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return set(report["modules"])


def _hits(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in names))


@pytest.fixture
def store_url(tmp_path: Path, run_cli) -> str:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert run_cli("--database-url", url, "init").code == 0
    return url


def test_help_loads_neither_the_store_nor_the_detectors(store_url: str) -> None:
    loaded = _loaded(["--help"], store_url)
    assert _hits(loaded, SCAN_ONLY + STORE_AND_SETTINGS) == []


@pytest.mark.parametrize("args", [["findings"], ["memories", "list"], ["summary"]])
def test_listings_load_no_detector_and_no_alembic(args: list[str], store_url: str) -> None:
    loaded = _loaded(args, store_url)
    assert "sqlalchemy" in loaded  # it did read the store
    assert _hits(loaded, SCAN_ONLY + MIGRATIONS) == []


def test_an_empty_scan_loads_no_detector(store_url: str) -> None:
    loaded = _loaded(["scan", "--no-progress"], store_url)
    assert "auditor.scan.scanner" in loaded and "auditor.rulepack.engine" in loaded  # it did scan
    assert _hits(loaded, DETECTOR_MODULES) == []


def test_guarding_plain_prose_loads_no_presidio(store_url: str) -> None:
    # the pii rules apply to the candidate, but it holds nothing they could find
    loaded = _loaded(["guard", "--fact", "prefers green tea in the morning"], store_url)
    assert "auditor.detectors.injection" in loaded  # the guard did judge it
    assert _hits(loaded, ("presidio_analyzer", "spacy", "thinc", "auditor.detectors.pii")) == []


def test_the_dashboards_services_load_no_scan_engine() -> None:
    probe = (
        "import json, sys\n"
        "import auditor.access.officer, auditor.access.officer_findings\n"
        "import auditor.access.officer_actions, auditor.access.erasure\n"
        "import auditor.access.sessions, auditor.access.signin\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert _hits(set(json.loads(done.stdout)), SCAN_ONLY) == []


def _fresh_process(probe: str) -> dict[str, Any]:
    """What ``probe`` (Python code) prints last, as JSON, run in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_the_pii_detector_leaves_spacys_command_line_unloaded() -> None:
    # spaCy's __init__ imports its whole CLI (typer, weasel, the download command) for
    # ``spacy.info``: a third of a second of each scan's start-up, kept out; both still work
    probe = (
        "import json, sys\n"
        "import auditor.detectors.pii\n"
        "loaded = sorted(sys.modules)\n"
        "import spacy\n"
        "info = spacy.info(silent=True)\n"
        "import spacy.cli\n"
        "print(json.dumps({'loaded': loaded, 'version': info.get('spacy_version'),\n"
        "    'download': callable(getattr(spacy.cli, 'download', None)),\n"
        "    'real': spacy.cli.__file__ is not None}))\n"
    )
    report = _fresh_process(probe)
    assert "spacy" in report["loaded"] and "presidio_analyzer" in report["loaded"]
    assert _hits(set(report["loaded"]), ("spacy.cli", "typer", "weasel")) == []
    assert report["version"]  # spacy.info runs the real command's code
    assert report["download"] and report["real"]  # a later import gets the real package


def test_presidios_own_patterns_are_not_compiled_twice_at_import() -> None:
    # importing Presidio used to compile each built-in recognizer's regex once, flagless,
    # only to check it: a fifth of a second, mostly for recognizers memaudit never runs
    probe = (
        "import json, sys, regex\n"
        "seen = []\n"
        "real = regex.compile\n"
        "def spy(pattern, *args, **kwargs):\n"
        "    seen.append(pattern)\n"
        "    return real(pattern, *args, **kwargs)\n"
        "regex.compile = spy\n"
        "import auditor.detectors.pii_presidio\n"
        "from presidio_analyzer import Pattern\n"
        "from presidio_analyzer.predefined_recognizers import AuAbnRecognizer\n"
        "unused = [p.regex for p in AuAbnRecognizer.PATTERNS]\n"
        "try:\n"
        "    Pattern('broken', '(', 0.5)\n"
        "    checked = False\n"
        "except ValueError:\n"
        "    checked = True\n"
        "finders = [type(f).__name__ for f in sys.meta_path]\n"
        "print(json.dumps({'unused_compiled': any(p in seen for p in unused),\n"
        "    'checked': checked, 'finders': finders}))\n"
    )
    report = _fresh_process(probe)
    assert report["unused_compiled"] is False
    assert report["checked"] is True  # a Pattern built after the import is checked as before
    assert "_PatternCheckDeferred" not in report["finders"]  # the import hook is gone
