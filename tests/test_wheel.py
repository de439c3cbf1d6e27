"""The wheel is a working memaudit on its own: the rule pack inside, the demo data, no generator.

The test builds the wheel from this checkout (hatchling, no network), installs it with
``--no-deps`` into a new virtual environment in a temporary folder, and runs the installed
``memaudit`` there: ``init --demo``, then ``scan``. The new environment gets the third-party
libraries from the development environment's ``site-packages`` through a ``.pth`` line (a
path line adds that folder to ``sys.path`` after the new environment's own; the editable
install's hook there is not run, so the checkout is never importable): installing every
dependency again from the network would make the test slow and flaky, and the point is the
wheel's own files. The test checks that those are the files used: ``auditor`` is imported
from the new environment, the rule pack is the one inside the package (``auditor/_rules``)
and the checkout's ``rules/`` is never read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(args: list[str], *, cwd: Path, env: dict[str, str], timeout: int = 600) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    env = {**os.environ, "PIP_NO_INPUT": "1"}
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        cwd=out,
        env=env,
    )  # fmt: skip
    (built,) = out.glob("memaudit-*.whl")
    return built


def test_the_wheel_carries_the_rule_pack_and_the_demo_data_but_not_the_generator(
    wheel: Path,
) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    packed_rules = {n for n in names if n.startswith("auditor/_rules/")}
    source_rules = {
        "auditor/_rules/" + p.relative_to(ROOT / "rules").as_posix()
        for p in (ROOT / "rules").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert packed_rules == source_rules
    for data in ("demo_memories.jsonl", "labels.json", "state.json"):
        assert f"auditor/demo/{data}" in names
    assert any(n.startswith("auditor/demo/memoryfield/") for n in names)
    for generator in ("generate.py", "_pools.py", "_longtext.py"):
        assert f"auditor/demo/{generator}" not in names
    assert "auditor/_dashboard/app.py" in names


def test_the_installed_wheel_scans_the_demo_store(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
            env=dict(os.environ),
        ).strip()
    )
    # the development environment's libraries, after the new environment's own packages
    (site / "zz_dev_libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMAUDIT_", "PYTHON"))}
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "-q", str(wheel)],
        cwd=tmp_path,
        env={**base_env, "PIP_NO_INPUT": "1"},
    )  # fmt: skip

    work = tmp_path / "work"
    work.mkdir()
    env = {
        **base_env,
        "MEMAUDIT_DATABASE_URL": f"sqlite:///{work / 'demo.db'}",
        "MEMAUDIT_LOG_LEVEL": "warning",
    }
    where = json.loads(
        _run(
            [str(python), "-c",
             "import json, auditor, auditor.rulepack.pack as r; "
             "print(json.dumps([auditor.__file__, str(r.DEFAULT_RULES_DIR)]))"],
            cwd=work,
            env=env,
        )
    )  # fmt: skip
    package = Path(where[0]).parent
    assert package.is_relative_to(env_dir), f"auditor imported from {package}, not the wheel"
    assert Path(where[1]) == package / "_rules"
    assert not (package / "demo" / "generate.py").exists()

    memaudit = str(env_dir / "bin" / "memaudit")
    out = _run([memaudit, "init", "--demo"], cwd=work, env=env)
    assert "407 new" in out
    summary = json.loads(_run([memaudit, "scan", "--json", "--no-progress"], cwd=work, env=env))
    assert summary["memories_scanned"] > 400
    assert summary["findings_new"] > 0
    assert summary["error_count"] == 0
    rules = json.loads(_run([memaudit, "rules", "list", "--format", "json"], cwd=work, env=env))
    assert {r["category"] for r in rules} >= {"injection", "secret", "sensitive"}
