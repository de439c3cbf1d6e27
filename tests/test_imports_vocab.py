"""The closed vocabularies are written once (auditor/vocab.py) and everything else agrees.

Each check fails when a copy drifts: a status added to the store's enum but not to the
vocabulary, a reviewer action the dashboard offers that the vocabulary does not name, a
rule field accepting a tier the trust policy does not know.
"""

from __future__ import annotations

from typing import get_args

from auditor import config, records, vocab
from auditor.access import accounts
from auditor.rulepack import pack as rules
from auditor.scan import review as review_actions
from auditor.store import models


def test_the_store_enums_hold_the_vocabulary() -> None:
    assert tuple(s.value for s in models.MemoryStatus) == vocab.MEMORY_STATUSES
    assert tuple(k.value for k in models.MemoryKind) == vocab.MEMORY_KINDS
    assert tuple(s.value for s in models.FindingStatus) == vocab.FINDING_STATUSES


def test_the_modules_that_name_a_vocabulary_take_it_from_vocab() -> None:
    assert records.KINDS is vocab.MEMORY_KINDS
    assert records.STATUSES is vocab.MEMORY_STATUSES
    assert records.SOURCE_TYPES is vocab.SOURCE_TYPES
    assert config.TIERS is vocab.TRUST_TIERS
    assert rules.CATEGORIES is vocab.CATEGORIES
    assert rules.SEVERITIES is vocab.SEVERITIES
    assert accounts.ROLES is vocab.ROLES


def test_the_trust_policy_maps_every_source_type_to_a_known_tier() -> None:
    policy = config.Settings().trust_policy
    assert set(vocab.SOURCE_TYPES) <= set(policy)
    assert set(policy.values()) <= set(vocab.TRUST_TIERS)


def test_rule_fields_accept_exactly_the_vocabulary() -> None:
    applies = rules.Applies.model_fields
    (tier,) = get_args(applies["tiers"].annotation)
    (kind,) = get_args(applies["kinds"].annotation)
    assert get_args(tier) == vocab.TRUST_TIERS
    assert get_args(kind) == vocab.MEMORY_KINDS


def test_every_reviewer_action_is_in_the_vocabulary() -> None:
    assert set(review_actions.ACTIONS) == set(vocab.REVIEW_ACTIONS)
    assert set(review_actions.MEMORY_ACTIONS) == set(vocab.MEMORY_ACTIONS)
    from auditor.scan.findings import REVIEW_ACTIONS as finding_level

    # the finding-level review takes the reviewer actions it can apply itself, plus assign
    assert set(finding_level) - {"assign"} <= set(vocab.REVIEW_ACTIONS)


def test_the_scanner_signs_as_the_vocabulary_says() -> None:
    from auditor.scan import runs as scan

    assert scan.ACTOR == vocab.SCAN_ACTOR
