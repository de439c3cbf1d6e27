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

from auditor.cli import cli
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
    unit = (DEPLOY / "systemd" / "memaudit-daemon.service").read_text()
    for line in unit.splitlines():
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
    assert {"ConfigMap", "Secret", "Deployment", "PodDisruptionBudget"} <= set(kinds)


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
