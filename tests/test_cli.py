"""The command contract of DESIGN.md: commands, formats and exit codes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from auditor import errors
from auditor.exitcodes import ExitCode, exit_code_for
from auditor.testing import make_record, write_jsonl


@pytest.fixture
def cli(run_cli, db_url: str):  # type: ignore[no-untyped-def]
    """memaudit bound to a fresh, initialised store."""

    def run(*args: str):  # type: ignore[no-untyped-def]
        return run_cli("--database-url", db_url, *args)

    assert run("init").code == 0
    return run


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    rows = [
        make_record(memory_id=f"m{i}", subject="user:alice" if i % 2 else "user:bob")
        for i in range(7)
    ]
    rows.append(make_record(memory_id="m7", subject="user:alice", status="deleted"))
    return write_jsonl(tmp_path / "store.jsonl", rows)


def test_init_is_idempotent(cli) -> None:  # type: ignore[no-untyped-def]
    again = cli("init")
    assert again.code == 0 and "up to date" in again.err


def test_uninitialised_store_is_a_clear_error(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("--database-url", f"sqlite:///{tmp_path / 'empty.db'}", "memories", "list")
    assert r.code == ExitCode.INTERNAL and "run `memaudit init` first" in r.err


def test_unreachable_database_exits_3_without_password(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("--database-url", "postgresql+psycopg://u:hunter2@127.0.0.1:1/x", "init")
    assert r.code == ExitCode.INTERNAL and "cannot reach database" in r.err
    assert "hunter2" not in r.err + r.out


def test_bad_url_and_bad_config_are_usage_errors(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("--database-url", "mysql://x/y", "init").code == ExitCode.USAGE
    assert run_cli("--config", str(tmp_path / "none.toml"), "init").code == ExitCode.USAGE
    bad = tmp_path / "bad.toml"
    bad.write_text("import_batch_size = -4\n")
    r = run_cli("--config", str(bad), "init")
    assert r.code == ExitCode.USAGE and "import_batch_size" in r.err


def test_import_list_formats(cli, store_file: Path) -> None:  # type: ignore[no-untyped-def]
    r = cli("import", str(store_file))
    assert r.code == 0 and "8 new" in r.out
    data = json.loads(cli("memories", "list", "--format", "json").out)
    assert [m["memory_id"] for m in data] == [f"m{i}" for i in range(7)]  # active only
    assert set(data[0]) >= {
        "memory_id",
        "subject",
        "fact",
        "source",
        "trust_tier",
        "status",
        "supersedes",
        "content_hash",
        "created_at",
    }
    everything = json.loads(cli("memories", "list", "--status", "all", "--format", "json").out)
    assert len(everything) == 8
    alice = json.loads(
        cli(
            "memories", "list", "--subject", "user:alice", "--status", "all", "--format", "json"
        ).out
    )
    assert {m["memory_id"] for m in alice} == {"m1", "m3", "m5", "m7"}
    limited = json.loads(cli("memories", "list", "--limit", "2", "--format", "json").out)
    assert len(limited) == 2
    rows = list(csv.DictReader(io.StringIO(cli("memories", "list", "--format", "csv").out)))
    assert len(rows) == 7 and rows[0]["source_type"] == "explicit_statement"
    table = cli("memories", "list", "--limit", "3")
    assert table.code == 0 and "m0" in table.out and "showing 3 of 7" in table.err
    assert (
        json.loads(cli("memories", "list", "--subject", "user:nobody", "--format", "json").out)
        == []
    )


def test_import_with_bad_records_exits_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_jsonl(tmp_path / "bad.jsonl", [make_record(memory_id="ok"), "{broken"])
    r = cli("import", str(path))
    assert r.code == ExitCode.USAGE and "line 2: invalid JSON" in r.err and "1 new" in r.out
    listed = json.loads(cli("memories", "list", "--format", "json").out)
    assert [m["memory_id"] for m in listed] == ["ok"]
    report = json.loads(cli("import", str(path), "--json").out)
    assert report["unchanged"] == 1 and report["skipped"] == 1


def test_import_missing_file_exits_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = cli("import", str(tmp_path / "missing.jsonl"))
    assert r.code == ExitCode.USAGE and "no such file" in r.err
    r = cli("import", str(tmp_path / "file.txt"))
    assert r.code == ExitCode.USAGE


def test_show_prints_chain_and_provenance(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [
        make_record(memory_id="old", fact="uses pnpm"),
        make_record(memory_id="new", fact="uses npm", supersedes="old"),
        make_record(memory_id="dang", supersedes="ghost"),
    ]
    cli("import", str(write_jsonl(tmp_path / "c.jsonl", rows)))
    text = cli("memories", "show", "old")
    assert text.code == 0 and "superseded" in text.out and "new" in text.out
    assert "imported by run 1 (jsonl)" in text.out
    detail = json.loads(cli("memories", "show", "new", "--format", "json").out)
    assert detail["chain"]["older"][0]["memory_id"] == "old"
    assert detail["provenance"]["source"]["type"] == "explicit_statement"
    dangling = cli("memories", "show", "dang")
    assert "dangling link to ghost" in dangling.out
    missing = cli("memories", "show", "nope")
    assert missing.code == ExitCode.USAGE and "no memory with id 'nope'" in missing.err


def test_lifecycle_from_the_command_line(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli(
        "memories",
        "add",
        "--id",
        "a",
        "--subject",
        "user:kim",
        "--fact",
        "uses pnpm",
        "--by",
        "alice",
    )
    assert r.code == 0 and "added a: status active, user tier" in r.out
    low = cli(
        "memories",
        "supersede",
        "a",
        "--id",
        "b",
        "--fact",
        "uses npm",
        "--source-type",
        "external_content",
        "--by",
        "agent",
    )
    assert low.code == ExitCode.USAGE and "reviewer's approval" in low.err
    ok = cli(
        "memories",
        "supersede",
        "a",
        "--id",
        "b",
        "--fact",
        "uses npm",
        "--source-type",
        "external_content",
        "--by",
        "agent",
        "--approved-by",
        "officer",
    )
    assert ok.code == 0 and "a superseded by b" in ok.out
    fork = cli("memories", "supersede", "a", "--id", "c", "--fact", "uses yarn", "--by", "x")
    assert fork.code == ExitCode.USAGE and "not the active head" in fork.err
    dangling = cli("memories", "supersede", "ghost", "--fact", "x", "--by", "x")
    assert dangling.code == ExitCode.USAGE and "no such memory" in dangling.err
    assert cli("memories", "quarantine", "b", "--by", "officer", "--reason", "check").code == 0
    again = cli("memories", "quarantine", "b", "--by", "officer")
    assert again.code == ExitCode.USAGE and "cannot become quarantined" in again.err
    assert "restored b: status active" in cli("memories", "restore", "b", "--by", "o").out
    stale = cli("memories", "delete", "b", "--by", "o", "--expected-version", "1")
    assert stale.code == ExitCode.USAGE and "changed since it was read" in stale.err
    assert cli("memories", "delete", "b", "--by", "o").code == 0
    assert cli("memories", "expire", "b", "--by", "o").code == ExitCode.USAGE
    no_actor = cli("memories", "delete", "a")
    assert no_actor.code == ExitCode.USAGE and "--by" in no_actor.err
    assert "events verified" in cli("audit-log", "verify").out


def test_add_from_record_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(make_record(memory_id="r1")))
    assert cli("memories", "add", "--record", str(path), "--by", "x").code == 0
    path.write_text("{nope")
    bad = cli("memories", "add", "--record", str(path), "--by", "x")
    assert bad.code == ExitCode.USAGE and "--record: invalid JSON" in bad.err


def test_export_subject_includes_every_status(cli, store_file: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli("import", str(store_file))
    data = json.loads(cli("export", "user:alice").out)
    assert data["subject"] == "user:alice" and data["counts"]["memories"] == 4
    assert data["counts"]["by_status"] == {"active": 3, "deleted": 1}
    assert {m["subject"] for m in data["memories"]} == {"user:alice"}
    out = tmp_path / "alice.json"
    assert cli("export", "user:alice", "-o", str(out)).code == 0
    assert json.loads(out.read_text())["counts"]["memories"] == 4
    assert (out.stat().st_mode & 0o777) == 0o600  # it holds personal data
    nobody = cli("export", "user:nobody")
    assert nobody.code == ExitCode.USAGE and "no data held for user:nobody" in nobody.err
    typo = cli("export", "user:alcie")
    assert typo.code == ExitCode.USAGE and "user:alice" in typo.err  # the near match
    bare = cli("export", "alice")
    assert bare.code == ExitCode.USAGE and "user:alice" in bare.err  # the subject form


def test_summary(cli, store_file: Path) -> None:  # type: ignore[no-untyped-def]
    cli("import", str(store_file))
    data = json.loads(cli("summary", "--format", "json").out)
    assert data["memories"] == 8 and data["subjects"] == 2
    assert data["by_status"] == {"active": 7, "deleted": 1}
    assert cli("summary").code == 0


def test_exit_code_mapping_is_one_place() -> None:
    assert exit_code_for(errors.AuditChainError("x")) == ExitCode.CHECK_FAILED
    assert exit_code_for(errors.RecordError("line 1", "bad")) == ExitCode.USAGE
    assert exit_code_for(errors.TrustTierError("x")) == ExitCode.USAGE
    assert exit_code_for(errors.StoreError("x")) == ExitCode.INTERNAL
    assert exit_code_for(RuntimeError("x")) == ExitCode.INTERNAL


def test_usage_errors_exit_2(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("memories", "list", "--status", "bogus").code == ExitCode.USAGE
    assert run_cli("no-such-command").code == ExitCode.USAGE
    assert run_cli("--version").code == 0


def test_a_write_back_that_has_not_reached_its_source_shows(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [
        make_record(
            memory_id="held",
            fact="uses pnpm",
            status="quarantined",
            write_back={"action": "quarantine", "state": "failed", "attempts": 5},
        ),
        make_record(memory_id="fine", fact="uses npm"),
    ]
    cli("import", str(write_jsonl(tmp_path / "w.jsonl", rows)))
    shown = cli("memories", "show", "held")
    assert "held in memaudit, still live in the source (failed)" in shown.out
    assert "write-back" not in cli("memories", "show", "fine").out
    listed = cli("memories", "list", "--status", "all").out
    assert "still live in the source" in listed
    exact = json.loads(cli("memories", "list", "--status", "all", "--format", "json").out)
    assert {m["status"] for m in exact} == {"quarantined", "active"}  # JSON stays exact


def test_init_creates_the_audit_key_and_a_private_store(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'm.db'}"
    env = {**os.environ, "MEMAUDIT_DATABASE_URL": url}
    env.pop("MEMAUDIT_AUDIT_HMAC_KEY", None)
    env.pop("MEMAUDIT_SECRETS_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "init"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert done.returncode == 0, done.stderr
    assert "audit HMAC key: created" in done.stderr
    for name in ("m.db", "m.db.audit-hmac-key"):
        assert ((tmp_path / name).stat().st_mode & 0o777) == 0o600, name
