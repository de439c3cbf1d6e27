"""The dashboard's "Erase a subject now" form refuses a typo with near matches (issue 14.1).

Runs the real Streamlit page (``AppTest``) on the demo store built by
``tests/test_dashboard.py``: "Erase now" for ``user:olivai.w`` must not say "Erased", must
offer ``user:olivia.w`` and must leave olivia's data in place.
"""

from __future__ import annotations

from tests import test_dashboard as dash
from tests.test_dashboard import OLIVIA, Store, errors, messages, open_view, sign_in

# the demo store and its accounts, built once per module as in tests/test_dashboard.py
template = dash.template
store = dash.store
_fast_hashes = dash._fast_hashes


def test_erase_now_refuses_a_typo_and_offers_the_subject(store: Store) -> None:
    before = store.memory_ids(OLIVIA)
    assert before
    at = open_view(sign_in("off"), "erasure_requests")
    at.text_input(key="erasure_now_subject").input("user:olivai.w")
    at.text_input(key="erasure_now_confirm").input("user:olivai.w")
    at.button(key="erasure_now_submit").click().run()
    shown = errors(at)
    assert any(
        "no data held for user:olivai.w" in e and "did you mean user:olivia.w?" in e for e in shown
    ), shown
    assert not any("Erased" in s for s in messages(at.success))
    assert store.memory_ids(OLIVIA) == before


def test_erase_now_refuses_a_word_that_is_not_a_subject(store: Store) -> None:
    at = open_view(sign_in("off"), "erasure_requests")
    at.text_input(key="erasure_now_subject").input("olivia")
    at.text_input(key="erasure_now_confirm").input("olivia")
    at.button(key="erasure_now_submit").click().run()
    assert any("not a subject id" in e for e in errors(at)), errors(at)
    assert store.memory_ids(OLIVIA)
