"""The detectors' data files (issue 13): a few compiled entries pinned, malformed entries named.

The pattern and word tables of the injection, special-category, PII and contradiction
detectors live in ``auditor/detectors/data/*.yaml``. These tests pin a few representative
entries as compiled (so a change to the loaders or a careless edit of the files shows), and
check that a malformed entry stops the load with an error naming the file and the entry.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from auditor import safe_yaml
from auditor.detectors import _contradiction_data as contradiction
from auditor.detectors import _injection_patterns as injection
from auditor.detectors import _pii_terms as pii
from auditor.detectors import _special_terms as special

DATA = Path(injection.__file__).with_name("data")


# -- pinned entries ------------------------------------------------------------------------


def test_injection_entries_compile_as_pinned() -> None:
    by_id = {p.id: p for p in injection.PATTERNS}
    # {GAP3} and {WEAK_NOUN} expanded, every + bounded, lower-cased, MULTILINE
    source = (
        r"\b(?:ignore|ignoring|disregard(?:ing)?|forget|overlook|discard|drop|set\s{1,40}aside"
        r"|abandon)\W{1,40}(?:all|any|every|everything|your)\W{1,40}"
        r"(?:[^\W\d_]{1,256}\W{1,40}){0,3}?(?:(?:information|info|text|conversation|input"
        r"|documents?|articles?|messages?|content|context|data|settings|sources?)|thoughts"
        r"|knowledge|beliefs)\b"
    )
    p = by_id["en.override.prior_context"]
    assert (p.entity, p.lang, p.score) == ("instruction_override", "en", 0.8)
    assert p.needles == (
        "ignor",
        "disregard",
        "forget",
        "overlook",
        "discard",
        "drop",
        "aside",
        "abandon",
    )
    assert (p.regex.pattern, p.regex.flags) == (source, re.MULTILINE | re.UNICODE)
    assert p.fallback is not None
    assert p.fallback.flags == re.IGNORECASE | re.MULTILINE | re.UNICODE
    # a cased pattern keeps its capitals and has no fallback
    dan = by_id["en.persona.dan"]
    assert dan.fallback is None and dan.cased_needles and dan.needles == ("DAN",)
    assert dan.regex.pattern.startswith(r"\[DAN\]|\bDAN\s{1,40}(?:Mode|mode)\b")
    # the order of the tables: the patterns by entity, then the structural ones
    assert injection.PATTERNS[0].id == "en.override.prior_instructions"
    assert by_id["en.fish.user_data_request"].entity == "exfiltration_directive"
    assert [p.id for p in injection.PATTERNS].index("en.fish.user_data_request") > [
        p.id for p in injection.PATTERNS
    ].index("de.task.harmful_generation")
    assert injection.SQUASHED_PATTERNS[3][:3] == ("sq.reply.say_that", "assistant_directive", 0.7)
    assert injection.SQUASHED_PATTERNS[3][3].pattern == (
        "^(?:say|print|write|output|tell|state)(?:that|me|only|just|the)"
    )
    assert injection.ENTITIES["covert_forwarding"] == (
        "an order to copy or forward data to a hidden recipient"
    )


def test_special_category_entries_load_as_pinned() -> None:
    row = (
        "health",
        "en",
        "condition_loose",
        r"\b(?:depression|anxiety|insomnia|migraines?|burnout)\b",
    )
    assert (*row, 0.6) in special.PATTERNS
    assert row[:3] in special.TOPIC_PRONE
    assert ("health", "en", "diagnosed") not in special.TOPIC_PRONE
    assert ("sexual_orientation", "gay_lussac", r"\bgay[- ]lussac\b", "overlap") in (
        special.EXCLUSIONS
    )
    assert special.ANCHORS["trade_union"][:4] == ("union", "steward", "picket", "strike")
    # the rows of special_terms.yaml come first, then those of special_patterns.yaml
    ids = [r[:3] for r in special.PATTERNS]
    assert ids[0] == ("health", "en", "diagnosis")
    assert ids.index(("health", "en", "mental_state")) > ids.index(
        ("criminal_record", "ko", "record")
    )
    assert special.PERSON_CUES_KO.startswith("사용자|유저|저는|")


def test_pii_words_load_as_pinned() -> None:
    assert pii.PHONE_CONTEXT[:3] == ("phone", "telephone", "tel")
    # words YAML would read as something else stay strings
    assert "on" in pii.NOT_STREET_WORDS
    assert {"#", "ref:", "ref.", "dl#"} <= {*pii.NON_PHONE_ID_WORDS, *pii.US_DRIVER_LICENSE_CONTEXT}
    assert pii.DEFAULT_ENTITIES[:2] == ("EMAIL_ADDRESS", "PHONE_NUMBER")
    assert pii.DEFAULT_ENTITIES[-len(pii.COUNTRY_ID_ENTITIES) :] == pii.COUNTRY_ID_ENTITIES
    assert pii.COUNTRY_IDS[0] == ("EsNieRecognizer", "ES_NIE")
    assert pii.NRP_PERSON_CUES.startswith(r"\b(?:i|i'm|im|me|")
    assert "\n" not in pii.NRP_PERSON_CUES


def test_contradiction_words_load_as_pinned() -> None:
    assert contradiction.SLOTS["flight_seat"] == {
        "title": "seat preference",
        "values": {"window": ["window", "창가", "창측"], "aisle": ["aisle", "통로"]},
        "cues": ["seat", "seats", "좌석", "자리", "쪽"],
        "window": 3,
        "shared_context": False,
        "any_relation": True,
    }
    assert "window" not in contradiction.SLOTS["colour_theme"]
    assert "any_relation" not in contradiction.SLOTS["city_of_residence"]
    assert contradiction.TRAITS["alcohol"]["a"][1] == r"\bdoes(?:n't| not) drink(?: alcohol)?\b"
    assert contradiction.KO_NEGATION_PATTERN == (
        r"^(?:안$|안(?=하|해|했|돼|되|됐|마시|마셔|먹|가|와|써|쓰|봐|보|탄|타|키우)|않|못|없|말고|말아"
        r"|아니|아님|대신|싫|끊|그만|금지)"
        r"|(?:지\s*않|지않|지\s*말|지말|지\s*못|지못)"
    )
    assert {"~", "약"} <= contradiction.APPROX_WORDS
    assert {"no", "n't"} <= contradiction.NEGATION_WORDS
    lengths = [len(p) for p in contradiction.KO_PARTICLES]
    assert lengths == sorted(lengths, reverse=True)
    assert contradiction.COMPARATIVES["fewer"] == -1 and contradiction.MONTHS["sept"] == 9
    assert contradiction.TYPE_SETS["season"] == frozenset(
        ["spring", "summer", "autumn", "fall", "winter", "봄", "여름", "가을", "겨울"]
    )


# -- malformed entries ---------------------------------------------------------------------


def _broken_copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of a data file with one entry broken (``old`` must occur once)."""
    text = (DATA / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_injection_data_names_the_file_and_pattern(tmp_path: Path) -> None:
    def load(old: str, new: str) -> None:
        path = _broken_copy(tmp_path, "injection_specs.yaml", old, new)
        injection._specs(injection._read(path), path)

    with pytest.raises(
        ValueError, match=r"injection_specs\.yaml: pattern 'en\.override\.prior_context'"
    ):
        load(
            "    score: 0.8\n    needles: [ignor, disregard, forget, overlook, discard",
            "    scor: 0.8\n    needles: [ignor, disregard, forget, overlook, discard",
        )
    with pytest.raises(ValueError, match=r"prior_context'.*needles\[1\]: a non-empty string"):
        load(
            "needles: [ignor, disregard, forget, overlook, discard",
            "needles: [ignor, 7, forget, overlook, discard",
        )
    with pytest.raises(ValueError, match=r"prior_context': unknown fragment \{WEAK_NOUNS\}"):
        load("{GAP3}(?:{WEAK_NOUN}|thoughts", "{GAP3}(?:{WEAK_NOUNS}|thoughts")
    with pytest.raises(ValueError, match=r"fragment GAP3 refers to \{PRIOR\}"):
        load("  GAP3: (?:[^\\W\\d_]+\\W+){0,3}?", "  GAP3: (?:[^\\W\\d_]+\\W+){0,3}?{PRIOR}")
    with pytest.raises(ValueError, match=r"prior_context': unknown entity instruction_overide"):
        load(
            "- id: en.override.prior_context\n    entity: instruction_override",
            "- id: en.override.prior_context\n    entity: instruction_overide",
        )
    # the bounded loader refuses YAML anchors and aliases, with the file and line
    with pytest.raises(safe_yaml.YamlRefused, match=r"injection_specs\.yaml:\d+: YAML anchors"):
        load(
            "- id: en.override.prior_context\n",
            "- id: &x en.override.prior_context\n    alias: *x\n",
        )


def test_an_injection_regex_that_does_not_compile_is_named(tmp_path: Path) -> None:
    spec = injection.PatternSpec("en.x.broken", "prompt_leak", "en", 0.9, ("a",), "(a", "w")
    with pytest.raises(
        ValueError, match=r"injection_specs\.yaml: pattern en\.x\.broken: invalid regex"
    ):
        injection._compile(spec, injection.SPECS_FILE)


def test_special_data_names_the_file_and_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("special_patterns.yaml", "special_frames.yaml"):
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.setattr(special, "_DATA_DIR", tmp_path)
    _broken_copy(
        tmp_path,
        "special_terms.yaml",
        "id: diagnosed\n    score: 0.8",
        "id: diagnosed\n    score: high",
    )
    with pytest.raises(
        ValueError, match=r"special_terms\.yaml: pattern 'diagnosed': score must be"
    ):
        special._terms()
    _broken_copy(
        tmp_path,
        "special_terms.yaml",
        "(?:{CONDITIONS}|{CONDITIONS_LOOSE})",
        "(?:{CONDITIONS}|{CONDITION_LOOSE})",
    )
    with pytest.raises(
        ValueError, match=r"pattern 'diagnosis': unknown fragment \{CONDITION_LOOSE\}"
    ):
        special._terms()
    _broken_copy(tmp_path, "special_terms.yaml", r"\bgay[- ]lussac\b", r"\bgay[- lussac\b")
    with pytest.raises(ValueError, match=r"exclusion 'gay_lussac': invalid regex"):
        special._terms()
    _broken_copy(
        tmp_path, "special_patterns.yaml", "id: therapy\n", "id: therapy\n    anchor: [x]\n"
    )
    with pytest.raises(ValueError, match=r"special_patterns\.yaml: pattern 'therapy': unknown key"):
        special._extra_patterns()


def test_pii_data_refuses_a_word_yaml_reads_as_a_boolean(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path, "pii_terms.yaml", "in, 'on', at, to,", "in, on, at, to,")
    doc = pii._read(path)
    with pytest.raises(ValueError, match=r"pii_terms\.yaml: not_street_words\[\d+\]: .*True"):
        pii._words(doc, path, "not_street_words")
    with pytest.raises(ValueError, match=r"pii_terms\.yaml: no_such_words is missing"):
        pii._words(doc, path, "no_such_words")


def test_contradiction_data_names_the_file_and_entry(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path, "contradiction_words.yaml", "circa, '~', 약", "circa, ~, 약")
    data = contradiction._File(path)
    with pytest.raises(ValueError, match=r"contradiction_words\.yaml: approx_words\[\d+\]: .*None"):
        data.word_list("approx_words")
    path = _broken_copy(
        tmp_path, "contradiction_words.yaml", "cues: [seat, seats", "cue: [seat, seats"
    )
    data = contradiction._File(path)
    with pytest.raises(
        ValueError, match=r"contradiction_words\.yaml: slots\.flight_seat: title, values"
    ):
        contradiction._slot(data, "flight_seat", data.get("slots")["flight_seat"])
    path = _broken_copy(tmp_path, "contradiction_words.yaml", "fewer: -1,", "fewer: less,")
    with pytest.raises(
        ValueError, match=r"contradiction_words\.yaml: comparatives\.fewer: a whole"
    ):
        contradiction._File(path).numbers("comparatives")


def test_a_slot_flag_that_is_not_a_boolean_is_named(tmp_path: Path) -> None:
    from auditor.detectors._contradiction_data import _File, _slot

    path = tmp_path / "words.yaml"
    path.write_text("slots: {}\n", encoding="utf-8")
    file = _File(path)
    row = {"title": "CI service", "values": {"jenkins": ["jenkins"]}, "any_relation": "yes"}
    with pytest.raises(ValueError, match=r"slots\.ci\.any_relation: true or false expected"):
        _slot(file, "ci", row)
    assert _slot(file, "ci", {**row, "any_relation": True})["any_relation"] is True


def test_a_trait_flag_that_is_not_a_boolean_is_named(tmp_path: Path) -> None:
    """``lasting`` (a past ``b`` still holds) is optional and must be true or false; any other
    key is named with the keys a trait takes."""
    from auditor.detectors._contradiction_data import _File, _trait

    path = tmp_path / "words.yaml"
    path.write_text("traits: {}\n", encoding="utf-8")
    file = _File(path)
    row = {"title": "siblings", "a": ["only child"], "b": ["sister"], "b_cues": [], "reason": "r"}
    assert "lasting" not in _trait(file, "only_child", row)
    assert _trait(file, "only_child", {**row, "lasting": True})["lasting"] is True
    with pytest.raises(ValueError, match=r"traits\.only_child\.lasting: true or false expected"):
        _trait(file, "only_child", {**row, "lasting": "yes"})
    with pytest.raises(ValueError, match=r"traits\.only_child: title, a, b, b_cues, reason"):
        _trait(file, "only_child", {**row, "forever": True})
