"""``memaudit eval`` scores the pack on a labelled corpus: per label and per pair."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import load_pack
from auditor.testing import make_record, write_jsonl
from auditor.tools.evaluate import evaluate_corpus

KEYWORD = """
id: MA-TST-020
title: evil
status: test
description: test rule
category: injection
severity: high
detector: keyword
params: {terms: [evil]}
tests: {flag: ["evil"]}
"""
PAIRS = """
id: MA-TST-021
title: same
status: test
description: test rule
category: contradiction
severity: low
detector: same_fact
tests: {flag: [{memories: ["a", "a"]}]}
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    rows = [
        make_record(memory_id="p1", fact="an evil plan", subject="user:a"),
        make_record(memory_id="p2", fact="a sneaky plan", subject="user:a"),
        make_record(
            memory_id="n1", fact="evil is a word in this benign sentence", subject="user:b"
        ),
        make_record(memory_id="n2", fact="nothing here", subject="user:b"),
        make_record(memory_id="ig", fact="evil but ambiguous", subject="user:b"),
        make_record(memory_id="c1", fact="same", subject="user:c"),
        make_record(memory_id="c2", fact="same", subject="user:c"),
        make_record(memory_id="d1", fact="other", subject="user:d"),
        make_record(memory_id="d2", fact="different", subject="user:d"),
    ]
    write_jsonl(folder / "memories.jsonl", rows)
    (folder / "labels.json").write_text(
        json.dumps(
            {
                "memory_labels": {"p1": ["injection"], "p2": ["injection"]},
                "contradictions": [["c1", "c2"], ["d1", "d2"]],
                "non_contradictions": [],
                "ignore": ["ig"],
                "notes": {"scored_labels": ["injection"]},
            }
        )
    )
    return folder


def test_scores_are_computed_per_label_and_pair(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.detectors import DETECTORS

    monkeypatch.setitem(DETECTORS, "same_fact", "auditor.testing:SameFactDetector")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ma-tst-020-evil.yaml").write_text(textwrap.dedent(KEYWORD).lstrip())
    (rules / "ma-tst-021-same.yaml").write_text(textwrap.dedent(PAIRS).lstrip())
    report = evaluate_corpus(
        corpus, Engine(load_pack(rules).active()), load_settings(), split="all"
    )
    inj, pairs = report.scores
    # positives p1, p2; negatives n1, n2, c1, c2, d1, d2 (ig is ignored); flagged p1, n1
    assert (inj.tp, inj.fp, inj.fn, inj.positives, inj.negatives) == (1, 1, 1, 2, 6)
    assert (inj.precision, inj.recall) == (0.5, 0.5)
    assert inj.false_alarm_rate == pytest.approx(1 / 6)
    assert inj.misses == ["p2"] and inj.false_alarms == ["n1"]
    assert (pairs.tp, pairs.fp, pairs.fn) == (1, 0, 1) and pairs.misses == ["d1+d2"]


def test_eval_command(run_cli, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ma-tst-020-evil.yaml").write_text(textwrap.dedent(KEYWORD).lstrip())
    r = run_cli("eval", str(corpus), "--rules", str(rules), "--json", "--split", "all")
    assert r.code == 0
    score = json.loads(r.out)[0]["scores"][0]
    assert score["label"] == "injection" and score["recall"] == 0.5
    table = run_cli("eval", str(corpus), "--rules", str(rules), "--split", "all")
    assert "injection misses (1): p2" in table.out
    missing = run_cli("eval", str(rules), "--rules", str(rules))
    assert missing.code == 2 and "not a labelled corpus" in missing.err


def test_default_split_scores_only_the_test_items(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.detectors import DETECTORS
    from auditor.tools.splits import compute_splits

    monkeypatch.setitem(DETECTORS, "same_fact", "auditor.testing:SameFactDetector")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ma-tst-020-evil.yaml").write_text(textwrap.dedent(KEYWORD).lstrip())
    (rules / "ma-tst-021-same.yaml").write_text(textwrap.dedent(PAIRS).lstrip())
    engine = Engine(load_pack(rules).active())
    assign = compute_splits([corpus])["tiny"]
    by_split = {
        s: evaluate_corpus(corpus, engine, load_settings(), split=s)
        for s in ("train", "dev", "test")
    }
    # every memory is scored in exactly one split, and each split sees only its own
    assert sum(r.memories for r in by_split.values()) == len(assign)
    for s, rep in by_split.items():
        assert rep.memories == sum(v == s for v in assign.values())
        assert rep.split == s and rep.split_recorded is False
        inj = rep.scores[0]
        expected_pos = {m for m in ("p1", "p2") if assign[m] == s}
        assert inj.positives == len(expected_pos)
    # the pairs were never cut: both members of each labelled pair share a split
    assert assign["c1"] == assign["c2"] and assign["d1"] == assign["d2"]


def test_unknown_split_is_refused(corpus: Path, tmp_path: Path) -> None:
    from auditor.errors import InputError

    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ma-tst-020-evil.yaml").write_text(textwrap.dedent(KEYWORD).lstrip())
    with pytest.raises(InputError, match="unknown split 'validation'"):
        evaluate_corpus(
            corpus, Engine(load_pack(rules).active()), load_settings(), split="validation"
        )


def test_eval_accepts_a_folder_of_corpora(run_cli, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ma-tst-020-evil.yaml").write_text(textwrap.dedent(KEYWORD).lstrip())
    r = run_cli("eval", str(corpus.parent), "--rules", str(rules), "--json", "--split", "all")
    assert r.code == 0
    assert [rep["corpus"] for rep in json.loads(r.out)] == ["tiny"]


def test_candidate_recall_is_the_share_of_gold_pairs_that_reach_the_verdict(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.detectors import DETECTORS

    monkeypatch.setitem(DETECTORS, "same_fact", "auditor.testing:SameFactDetector")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ma-tst-021-same.yaml").write_text(textwrap.dedent(PAIRS).lstrip())
    engine = Engine(load_pack(rules).active())
    settings = load_settings()
    one = evaluate_corpus(
        corpus, engine, settings, split="all", candidates=lambda v: {frozenset(("c1", "c2"))}
    )
    assert one.candidate_recall == 0.5  # one of the two labelled pairs was ever compared
    none = evaluate_corpus(corpus, engine, settings, split="all", candidates=lambda v: set())
    assert none.candidate_recall == 0.0
    # no contradiction detector in the pack and no generator given: not measured
    assert evaluate_corpus(corpus, engine, settings, split="all").candidate_recall is None


def test_candidate_recall_of_the_shipped_contradiction_rules(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "pairs"
    folder.mkdir()
    rows = [
        make_record(memory_id="a1", fact="The team standup is on Mondays.", subject="user:a"),
        make_record(memory_id="a2", fact="The team standup is on Thursdays.", subject="user:a"),
        make_record(memory_id="b1", fact="Likes green tea.", subject="user:b"),
        make_record(memory_id="b2", fact="Drives a blue car to work.", subject="user:b"),
    ]
    write_jsonl(folder / "memories.jsonl", rows)
    (folder / "labels.json").write_text(
        json.dumps({"contradictions": [["a1", "a2"]], "non_contradictions": [["b1", "b2"]]})
    )
    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "rules" / "contradiction", tmp_path / "rules" / "contradiction")
    engine = Engine(load_pack(tmp_path / "rules").active())
    report = evaluate_corpus(folder, engine, load_settings(), split="all")
    assert report.candidate_recall == 1.0
    pairs = report.scores[-1]
    assert pairs.label == "contradiction_pairs" and pairs.tp == 1 and pairs.fp == 0


DUPS = """
id: MA-TST-022
title: copies
status: test
description: test rule
category: duplicate
severity: low
detector: duplicates
tests: {flag: [{memories: ["use pnpm for installs", "use pnpm for all installs"]}]}
"""


def test_duplicate_pairs_are_scored_when_labelled(tmp_path: Path) -> None:
    folder = tmp_path / "dups"
    folder.mkdir()
    rows = [
        make_record(memory_id="a1", fact="use pnpm for installs", subject="user:a"),
        make_record(memory_id="a2", fact="use pnpm for all installs", subject="user:a"),
        make_record(memory_id="b1", fact="the standup is at nine", subject="user:b"),
        make_record(memory_id="b2", fact="the standup is at nine sharp", subject="user:b"),
        make_record(memory_id="c1", fact="likes tea", subject="user:c"),
        make_record(memory_id="c2", fact="prefers coffee after lunch", subject="user:c"),
    ]
    write_jsonl(folder / "memories.jsonl", rows)
    labels = {
        "memory_labels": {},
        "duplicates": [["a1", "a2"], ["c1", "c2"]],
        "non_duplicates": [["b1", "b2"]],
        "notes": {"scored_labels": []},
    }
    (folder / "labels.json").write_text(json.dumps(labels))
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ma-tst-022-copies.yaml").write_text(textwrap.dedent(DUPS).lstrip())
    report = evaluate_corpus(
        folder, Engine(load_pack(rules).active()), load_settings(), split="all"
    )
    (dups,) = report.scores
    assert dups.label == "duplicate_pairs"
    # a1+a2 found, c1+c2 missed, b1+b2 reported although labelled as no copy
    assert (dups.tp, dups.fp, dups.fn, dups.positives, dups.negatives) == (1, 1, 1, 2, 1)
    assert dups.misses == ["c1+c2"] and dups.false_alarms == ["b1+b2"]


def test_lifecycle_labels_are_scored_on_statuses_derived_as_the_importer_does(
    tmp_path: Path,
) -> None:
    """A corpus labels the memory at fault; a record another supersedes without a stated
    status is superseded (as an import makes it), so a healthy chain is no false alarm."""
    folder = tmp_path / "chains"
    folder.mkdir()
    rows = [
        make_record(memory_id="v1", fact="Uses vim.", subject="user:a"),
        make_record(memory_id="v2", fact="Uses emacs.", subject="user:a", supersedes="v1"),
        make_record(memory_id="s1", fact="Lives in Busan.", subject="user:b", status="active"),
        make_record(memory_id="s2", fact="Lives in Seoul.", subject="user:b", supersedes="s1"),
    ]
    write_jsonl(folder / "memories.jsonl", rows)
    labels = {"memory_labels": {"s1": ["lifecycle"]}, "notes": {"scored_labels": ["lifecycle"]}}
    (folder / "labels.json").write_text(json.dumps(labels))
    pack = load_pack(Path(__file__).parents[1] / "rules" / "lifecycle")
    report = evaluate_corpus(folder, Engine(pack.active()), load_settings(), split="all")
    (score,) = report.scores
    assert score.label == "lifecycle"
    assert (score.tp, score.fp, score.fn) == (1, 0, 0)
