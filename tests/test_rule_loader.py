"""Safe rule packs: aliases, anchors, foreign tags, deep nesting and huge files are refused
with file:line, cheaply; the same bounded loader reads source mapping files."""

from __future__ import annotations

import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from auditor import limits, safe_yaml
from auditor.errors import InputError
from auditor.rulepack.pack import RuleError, load_pack, load_rule_file
from auditor.sources.registry import load_mapping

HEAD = """\
id: MA-TST-010
title: Keyword rule
status: test
description: a test rule
category: injection
severity: medium
detector: keyword
"""
TESTS = """\
tests:
  flag: ["an evil plan"]
"""

#: The issue's probe: nine nested aliases under a keyword rule's params (10^9 terms).
ALIAS_BOMB = (
    HEAD
    + "params:\n"
    + '  a0: &a0 ["evil","evil","evil","evil","evil","evil","evil","evil","evil","evil"]\n'
    + "".join(f"  a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10))
    + "  terms: *a9\n"
    + TESTS
)


def write(tmp_path: Path, body: str, name: str = "ma-tst-010-kw.yaml") -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(body, encoding="utf-8")
    return folder


def refusal(folder: Path) -> str:
    with pytest.raises(RuleError) as info:
        load_pack(folder)
    return str(info.value)


def test_the_alias_bomb_is_refused_fast_and_small(tmp_path: Path) -> None:
    folder = write(tmp_path, ALIAS_BOMB)
    tracemalloc.start()
    started = time.perf_counter()
    message = refusal(folder)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert message == ("ma-tst-010-kw.yaml:9: YAML anchors (&name) are not allowed in this file"), (
        message
    )
    # Before: 274 s and 17.1 GB. A refusal at the first anchor is a few ms and kilobytes;
    # the generous bounds only catch a loader that expands the aliases.
    assert elapsed < 5 and peak < 20 * 2**20, (elapsed, peak)


def test_the_alias_bomb_through_the_cli(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write(tmp_path, ALIAS_BOMB)
    for command in ("lint", "test"):
        r = run_cli("rules", command, "--rules", str(folder))
        assert r.code == 2, (r.code, r.err)
        assert "ma-tst-010-kw.yaml:9: YAML anchors" in r.err
        assert "internal error" not in r.err


@pytest.mark.parametrize(
    ("params", "line", "message"),
    [
        ("params: {terms: [evil]}\nother: *x\n", 9, "aliases"),
        ("params: &p {terms: [evil]}\n", 8, "anchors"),
        ("params: !!python/object:os.system {terms: [evil]}\n", 8, "tags"),
        ("params: !!python/name:os.system\n", 8, "tags"),
        ("params: {terms: !!set {evil: null}}\n", 8, "tags"),
        ("params: !custom {terms: [evil]}\n", 8, "tags"),
        ("params:\n  terms: [evil]\n  <<: *base\n", 10, "aliases"),
    ],
)
def test_aliases_anchors_and_tags_are_refused_with_file_and_line(
    tmp_path: Path, params: str, line: int, message: str
) -> None:
    text = refusal(write(tmp_path, HEAD + params + TESTS))
    assert text.startswith(f"ma-tst-010-kw.yaml:{line}: "), text
    assert message in text


def test_core_tags_still_work(tmp_path: Path) -> None:
    body = HEAD + "params: !!map {terms: [!!str evil], score: !!float 0.5}\n" + TESTS
    rule = load_rule_file(write(tmp_path, body) / "ma-tst-010-kw.yaml")
    assert rule.params == {"terms": ["evil"], "score": 0.5}


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    deep = "[" * (limits.MAX_YAML_DEPTH + 5) + "]" * (limits.MAX_YAML_DEPTH + 5)
    text = refusal(write(tmp_path, HEAD + f"params: {{terms: {deep}}}\n" + TESTS))
    assert text.startswith("ma-tst-010-kw.yaml:8: nested deeper than 32 levels"), text


def test_too_many_nodes_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terms = ",".join(["evil"] * 200)
    with pytest.raises(safe_yaml.YamlRefused, match="more than 100 YAML nodes"):
        safe_yaml.compose_documents(f"terms: [{terms}]\n", "x.yaml", max_nodes=100)
    # the default leaves room for a long deny-list
    nodes, _values = safe_yaml.compose_documents(f"terms: [{terms}]\n", "x.yaml")
    assert len(nodes) == 1


def test_a_huge_rule_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    filler = "# " + "x" * 98 + "\n"
    body = HEAD + "params: {terms: [evil]}\n" + TESTS + filler * 3000  # ~300 KB
    text = refusal(write(tmp_path, body))
    assert text.startswith("ma-tst-010-kw.yaml:1: the file is "), text
    assert f"over the limit of {limits.MAX_RULE_FILE_BYTES:,}" in text


def test_the_shipped_pack_still_loads() -> None:
    pack = load_pack()
    assert len(pack.rules) > 20


def test_source_mapping_files_use_the_bounded_loader(tmp_path: Path) -> None:
    good = tmp_path / "mapping.yaml"
    good.write_text("table: memories\ncolumns: {fact: body}\n", encoding="utf-8")
    assert load_mapping(good) == {"table": "memories", "columns": {"fact": "body"}}
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(
        textwrap.dedent(
            """\
            a: &a [x, x, x]
            b: [*a, *a, *a]
            """
        ),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"bomb.yaml:1: YAML anchors"):
        load_mapping(bomb)
    tagged = tmp_path / "tagged.yaml"
    tagged.write_text("table: !!python/object:os.system {}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"tagged.yaml:1: YAML tags"):
        load_mapping(tagged)


def test_memoryfield_front_matter_alias_bomb_is_refused_per_page(tmp_path: Path) -> None:
    from auditor.config import load_settings
    from auditor.sources.files.memoryfield import MemoryfieldSource

    folder = tmp_path / "vault"
    folder.mkdir()
    levels = "".join(f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))
    bomb = "---\nl0: &l0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + levels + "---\nBody.\n"
    (folder / "bomb.md").write_text(bomb, encoding="utf-8")
    (folder / "tagged.md").write_text("---\nx: !!python/name:os.system\n---\nB.\n", "utf-8")
    (folder / "fine.md").write_text("---\ntags: [a, b]\n---\nAna likes tea.\n", "utf-8")
    settings = load_settings(database_url="sqlite://")
    started = time.perf_counter()
    items = list(MemoryfieldSource(folder, settings, subject="user:bob").items())
    assert time.perf_counter() - started < 5
    errors = sorted(i.error for i in items if i.error)
    assert len(errors) == 2, errors
    assert "bad YAML front matter at line 2: YAML anchors" in errors[0]
    assert "bad YAML front matter at line 2: YAML tags" in errors[1]
    assert any(i.raw and "Ana likes tea" in i.raw["fact"] for i in items)


def _shipped_yaml() -> list[Path]:
    root = Path(__file__).resolve().parents[1]
    return sorted((root / "auditor" / "detectors" / "data").glob("*.yaml")) + sorted(
        (root / "rules").rglob("*.yaml")
    )


def test_libyaml_reads_every_shipped_file_as_the_bounded_loader_does() -> None:
    files = _shipped_yaml()
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        fast = safe_yaml._fast_load(text)
        assert fast is not safe_yaml._SLOW, path
        _nodes, values = safe_yaml.compose_documents(text, str(path), fast=False)
        assert fast == (values[0] if values else None), path


def _marks(node: Any) -> list[tuple[int, int, str]]:
    """Every node's start line and column and tag, depth first."""
    out = [(node.start_mark.line, node.start_mark.column, node.tag)]
    if isinstance(node.value, list):
        for item in node.value:
            for part in item if isinstance(item, tuple) else (item,):
                out += _marks(part)
    return out


def test_libyaml_composes_every_shipped_file_as_the_bounded_loader_does() -> None:
    """Rule files are composed by libyaml (the rule pack loads in a tenth of the time):
    the same values and the same line marks on every node, which rule errors name."""
    files = _shipped_yaml()
    for path in files:
        text = path.read_text(encoding="utf-8")
        quick = safe_yaml._fast_compose(text, max_depth=64, max_nodes=100_000)
        assert quick is not None, path
        slow_nodes, slow_values = safe_yaml.compose_documents(text, str(path), fast=False)
        fast_nodes, fast_values = safe_yaml.compose_documents(text, str(path))
        assert fast_values == slow_values == quick[1], path
        assert [_marks(n) for n in fast_nodes] == [_marks(n) for n in slow_nodes], path


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a: &x 1\nb: *x\n", "x.yaml:1: YAML anchors"),
        ("a: !!python/object:os.system x\n", "x.yaml:1: YAML tags"),
        ("a: [1\n", "invalid YAML"),
        ("a: 1\n---\nb: 2\n", "x.yaml:3: only one YAML document"),
    ],
)
def test_what_libyaml_would_accept_wrongly_goes_the_bounded_way(text: str, reason: str) -> None:
    assert safe_yaml._fast_load(text) is safe_yaml._SLOW
    if "only one" not in reason:  # several documents compose fine: the caller refuses them
        assert safe_yaml._fast_compose(text, max_depth=64, max_nodes=100_000) is None
        with pytest.raises(safe_yaml.YamlRefused, match=reason):
            safe_yaml.compose_documents(text, "x.yaml")
    with pytest.raises(safe_yaml.YamlRefused, match=reason):
        safe_yaml.load_text(text, "x.yaml")
