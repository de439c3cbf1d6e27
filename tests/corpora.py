"""The labelled corpora's train texts for tests that compare a fast path with the plain one.

The corpora sit beside the checkout (``../shared``); a test that needs them fails, never
skips, when they are missing.
"""

from __future__ import annotations

import pytest

from auditor.tools.realistic import CorporaMissing, PoolText, corpora_roots, train_pool


def train_texts() -> list[PoolText]:
    """Every train-split memory of ``../shared/eval`` and ``../shared/train``."""
    try:
        return train_pool(corpora_roots(None))
    except CorporaMissing as exc:  # pragma: no cover - the corpora are beside the checkout
        pytest.fail(f"the labelled corpora are needed for this test: {exc}")
