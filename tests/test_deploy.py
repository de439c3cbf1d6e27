"""deploy/: every file parses, every memaudit command is valid, every setting exists.

Docker cannot run on the development machines; this is what can be checked here.
"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.cli.main import cli
from auditor.config import Settings

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
EXTRA_VARIABLES = {"MEMAUDIT_CONFIG", "MEMAUDIT_SECRETS_DIR"}


def _yaml_documents() -> Iterator[tuple[str, Any]]:
    for path in sorted(DEPLOY.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            yield path.name, doc


def _check_command(args: list[str]) -> None:
    """Parse ``memaudit ARGS`` as the CLI would (types, choices, unknown options)."""
    ctx = cli.make_context("memaudit", list(args))
    with ctx, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # click 8.2 renamed the split
        rest = [*ctx.protected_args, *ctx.args]
        name, command, sub_args = cli.resolve_command(ctx, rest)
        assert command is not None, f"unknown command in {args}"
        command.make_context(str(name), list(sub_args), parent=ctx).close()


def _check_variable(name: str) -> None:
    if name in EXTRA_VARIABLES:
        return
    assert name.startswith("MEMAUDIT_"), name
    field = name[len("MEMAUDIT_") :].split("__")[0].lower()
    assert field in Settings.model_fields, f"{name} is not a memaudit setting"


def _commands_and_variables() -> tuple[list[list[str]], list[str]]:
    commands: list[list[str]] = []
    variables: list[str] = []
    for _name, doc in _yaml_documents():
        if not isinstance(doc, dict):
            continue
        for service in (doc.get("services") or {}).values():
            if "command" in service and "image" in service and "memaudit" in service["image"]:
                commands.append(list(service["command"]))
            variables += [k for k in (service.get("environment") or {}) if k.startswith("MEM")]
        if doc.get("kind") in ("ConfigMap", "Secret"):
            for key in {**doc.get("data", {}), **doc.get("stringData", {})}:
                variables.append(key.upper() if key.startswith("memaudit_") else key)
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for container in spec.get("initContainers", []) + spec.get("containers", []):
            commands.append(list(container.get("args", [])))
            variables += [e["name"] for e in container.get("env", [])]
    for unit_path in sorted((DEPLOY / "systemd").glob("*.service")):
        for line in unit_path.read_text().splitlines():
            if line.startswith(("ExecStart=", "ExecStartPre=")):
                commands.append(shlex.split(line.split("=", 1)[1])[1:])
            if line.startswith("Environment=") and "MEMAUDIT_" in line:
                variables.append(line.split("=", 2)[1])
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.M)
    assert cmd is not None
    commands.append(json.loads(cmd.group(1)))
    variables += re.findall(r"\b(MEMAUDIT_[A-Z_]+)=", dockerfile)
    return commands, variables


def test_yaml_files_parse() -> None:
    kinds = [doc.get("kind") for _n, doc in _yaml_documents() if isinstance(doc, dict)]
    assert {"ConfigMap", "Secret", "Deployment", "PodDisruptionBudget", "Service"} <= set(kinds)
    names = {
        doc["metadata"]["name"]
        for _n, doc in _yaml_documents()
        if isinstance(doc, dict) and doc.get("kind") == "Deployment"
    }
    assert names == {"memaudit-daemon", "memaudit-dashboard"}


def test_every_memaudit_command_is_valid() -> None:
    commands, _ = _commands_and_variables()
    assert len(commands) >= 6
    for args in commands:
        _check_command(args)


def test_a_wrong_command_would_be_caught() -> None:
    import click

    with pytest.raises(click.NoSuchOption):
        _check_command(["daemon", "--health-prt", "9464"])
    with pytest.raises(click.BadParameter):
        _check_command(["daemon", "--health-port", "nine"])


def test_every_setting_named_exists() -> None:
    _, variables = _commands_and_variables()
    assert "MEMAUDIT_DATABASE_URL" in variables
    for name in variables:
        _check_variable(name)
    with pytest.raises(AssertionError):
        _check_variable("MEMAUDIT_DATABSE_URL")


def test_dockerfile_copies_what_exists() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source


# -- what can run here: the Dockerfile's install, the compose file's services --------------


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def _start_and_check(
    runs: dict[str, tuple[list[str], dict[str, str]]], cwd: Path, timeout: float = 180
) -> None:
    """Start each long-running command, wait until its health URL answers, SIGTERM all."""
    import signal
    import subprocess
    import time

    procs: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for name, (cmd, env) in runs.items():
            port = _free_port()
            cmd = list(cmd)
            for flag in ("--health-port", "--port"):
                if flag in cmd:
                    cmd[cmd.index(flag) + 1] = str(port)  # one network per container there
            if "--host" in cmd:
                cmd[cmd.index("--host") + 1] = "127.0.0.1"
            path = "/_stcore/health" if "dashboard" in cmd else "/healthz"
            proc = subprocess.Popen(
                cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            procs[name] = (proc, f"http://127.0.0.1:{port}{path}")
        deadline = time.monotonic() + timeout
        waiting = set(procs)
        while waiting and time.monotonic() < deadline:
            for name in sorted(waiting):
                proc, url = procs[name]
                assert proc.poll() is None, f"{name} exited with {proc.returncode}"
                if _answers(url):
                    waiting.discard(name)
            time.sleep(0.5)
        assert not waiting, f"no answer from {sorted(waiting)}"
    finally:
        for proc, _url in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        codes = {name: proc.wait(timeout=120) for name, (proc, _url) in procs.items()}
    assert codes == dict.fromkeys(procs, 0), codes  # SIGTERM: a clean stop


@pytest.mark.pg
@pytest.mark.slow
def test_compose_services_start_against_postgresql(pg_schema_url: str, tmp_path: Path) -> None:
    """Every memaudit service of compose.yaml, with its own command and environment, run
    against the local PostgreSQL (the database URL and secrets folder pointed here)."""
    import os
    import subprocess
    import sys

    doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    services = {
        name: svc
        for name, svc in doc["services"].items()
        if "memaudit" in str(svc.get("image", ""))
    }
    assert {"migrate", "daemon-a", "daemon-b", "dashboard"} <= set(services)
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    for secret in doc.get("secrets", {}):
        (secrets / secret).write_text("test-only-key-" + "k" * 32, encoding="utf-8")

    def env_for(svc: dict[str, Any]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAUDIT_")}
        env.update({k: str(v) for k, v in (svc.get("environment") or {}).items()})
        env["MEMAUDIT_DATABASE_URL"] = pg_schema_url
        env["MEMAUDIT_SECRETS_DIR"] = str(secrets)
        env["HOME"] = str(tmp_path)
        return env

    for name, svc in services.items():  # the one-shot services first (depends_on)
        if svc.get("restart") == "no":
            done = subprocess.run(
                [sys.executable, "-m", "auditor", *svc["command"]],
                cwd=ROOT,
                env=env_for(svc),
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"{name}: {done.stderr[-1500:]}"
    _start_and_check(
        {
            name: ([sys.executable, "-m", "auditor", *svc["command"]], env_for(svc))
            for name, svc in services.items()
            if svc.get("restart") != "no"
        },
        ROOT,
    )


@pytest.mark.slow
def test_dockerfile_install_in_a_clean_venv(tmp_path: Path) -> None:
    """The Dockerfile's COPY and pip lines, replayed into a fresh virtual environment (no
    system packages), give a memaudit whose CMD (the daemon) and dashboard start."""
    import os
    import shutil
    import subprocess
    import sys

    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    app = tmp_path / "app"

    def here(path: str) -> Path:
        assert path.startswith("/app"), path
        return app / path[len("/app") :].lstrip("/")

    extras = re.search(r"^ARG EXTRAS=(\S*)$", dockerfile, re.M)
    assert extras is not None
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            *sources, dest = line.split()[1:]
            target = here(dest)
            for source in sources:
                if (ROOT / source).is_dir():
                    # a folder's contents land in the destination, as Docker does
                    shutil.copytree(
                        ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__")
                    )
                else:
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy(ROOT / source, target / Path(source).name)
    install = re.search(
        r'^RUN pip install "(/app/src)\$\{EXTRAS:\+\[\$EXTRAS\]\}"', dockerfile, re.M
    )
    assert install is not None, "the Dockerfile's pip line changed: update this test"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    spec = str(here(install.group(1))) + (f"[{extras.group(1)}]" if extras.group(1) else "")
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", spec],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMAUDIT_", "PYTHON"))}
    for key, value in re.findall(r"(MEMAUDIT_[A-Z_]+)=(\S+)", dockerfile):
        env[key] = str(here(value)) if value.startswith("/app") else value
    env["HOME"] = str(app)
    env["MEMAUDIT_DATABASE_URL"] = f"sqlite:///{tmp_path / 'store.db'}"
    memaudit = str(venv / "bin" / "memaudit")
    work = tmp_path / "work"  # no source checkout around: the wheel's own files only
    work.mkdir()
    for args in (["--version"], ["init"], ["rules", "lint"], ["dashboard", "--dry-run"]):
        done = subprocess.run(
            [memaudit, *args], cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{args}: {done.stderr[-1500:]}"
        if args[0] == "dashboard":
            assert "auditor/_dashboard/app.py" in done.stdout  # shipped inside the wheel
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.M)
    assert cmd is not None
    _start_and_check(
        {
            "daemon": ([memaudit, *json.loads(cmd.group(1))], env),
            "dashboard": ([memaudit, "dashboard", "--port", "8501"], env),
        },
        work,
    )
