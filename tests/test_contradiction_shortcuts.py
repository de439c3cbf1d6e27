"""The contradiction reader's shortcuts (per-word caches, literal gates) read as plain code."""

from __future__ import annotations

import random
import unicodedata
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from auditor.config import load_settings
from auditor.detectors import _contradiction_data as data
from auditor.detectors import _contradiction_profile as profile_mod
from auditor.detectors import _contradiction_quantities as quantities_mod
from auditor.detectors import _contradiction_text as text_mod
from auditor.detectors import _frame_words as frames_mod
from auditor.detectors._contradiction_candidates import candidate_pairs
from auditor.detectors.base import DetectContext, MemoryView
from auditor.detectors.contradiction import ContradictionDetector
from auditor.hashing import content_hash
from tests.corpora import train_texts

# words, separators that break clauses or sentences, Hangul, digits, curly quotes, NFKC forms
_ALPHABET = st.sampled_from(
    list("abcXYZ019 .,;:!?()-—'’#+/\n\t")
    + ["성수동에", "안", "don’t", "Straße", "İ", "ＡＢ", "１２", "and", "but", "3rd"]
)
_TEXTS = st.lists(_ALPHABET, max_size=40).map("".join)


def _plain_text_tokens(text: str) -> tuple[text_mod.Token, ...]:
    """The fact tokenizer written out plainly (no caches, no shortcuts)."""
    breaks = [m.start() for m in text_mod._CLAUSE_BREAK.finditer(text)]
    out = []
    clause = 0
    for m in text_mod._WORD.finditer(text):
        clause = sum(1 for b in breaks if b < m.start()) + sum(
            1 for t in out if t.text in data.CLAUSE_BREAK_WORDS
        )
        raw = m.group()
        low = raw.lower().replace("’", "'") if not raw.isascii() else raw.lower()
        if low in data.CLAUSE_BREAK_WORDS:
            clause += 1
        content = (
            low not in data.EN_STOPWORDS
            and not low.isdigit()
            and low not in data.NUMBER_WORDS
            and (len(low) > 1 or (not low.isascii() and text_mod.is_hangul(low)))
        )
        out.append(text_mod.Token(low, text_mod.stem(raw), m.start(), m.end(), clause, content))
    return tuple(out)


def _plain_frame_tokens(text: str) -> tuple[frames_mod.Tok, ...]:
    out = []
    for m in frames_mod._TOKEN.finditer(text):
        raw = m.group()
        low = unicodedata.normalize("NFKC", raw).lower().replace("’", "'")
        key = frames_mod._ko_key(low) if frames_mod._is_hangul(low) else frames_mod.stem(low)
        out.append(frames_mod.Tok(low, key, m.start(), m.end()))
    return tuple(out)


@hypothesis_settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_fact_tokens_match_a_plain_reading(text: str) -> None:
    assert text_mod._tokens.__wrapped__(text) == _plain_text_tokens(text)


@hypothesis_settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_frame_tokens_match_a_plain_reading(text: str) -> None:
    got = frames_mod._tokens.__wrapped__(text)
    assert got == _plain_frame_tokens(text)
    assert all(type(t) is frames_mod.Tok for t in got)


def test_a_clause_break_word_and_punctuation_both_count() -> None:
    tokens = text_mod._tokens.__wrapped__("I use vim, but she uses emacs; fine")
    clauses = {t.text: t.clause for t in tokens}
    assert clauses["i"] == 0 and clauses["vim"] == 0
    assert clauses["she"] > clauses["vim"] and clauses["fine"] > clauses["emacs"]


def test_scope_gates_keep_every_scope_the_patterns_find() -> None:
    """A scope pattern is skipped when none of its necessary literals is in the folded
    text; on the corpora's texts and odd cases the scopes equal those of every pattern."""
    from dataclasses import replace

    from auditor.tools.realistic import corpora_roots, train_pool

    lex = profile_mod.Lexicon.from_params({})
    ungated = replace(lex)
    object.__setattr__(ungated, "scope_gates", tuple(None for _ in lex.scope_gates))
    assert sum(g is not None for g in lex.scope_gates) >= 4
    odd = [
        "FOR MY WORK I use vim, AT HOME emacs",
        "For Side Projects only; LEGACY code in Java",
        "on weekends and In The Office",
        "회사 프로젝트에는 IntelliJ, 집에서는 vim",
        "I use Rust for Cloudflare and Go in Berlin",
    ]
    texts = [p.fact for p in train_pool(corpora_roots(None))[::3]] + odd
    found = 0
    for text in texts:
        want = profile_mod._scopes(text, ungated)
        assert profile_mod._scopes(text, lex) == want, text[:80]
        found += len(want)
    assert found > 50


def test_judge_only_fields_are_read_on_demand_and_equal_the_readers() -> None:
    """A profile reads its dates, numbers, negations, scopes and names only when the pair
    judge asks (a memory with no candidate pair never pays for them), and what it then
    reads is what the readers return on the fact."""
    lex = profile_mod.Lexicon.from_params({})
    cues = profile_mod.cue_sets_for(lex)
    text = "Since 3 March 2024 I don't run more than 5 km after 18:00 at work, says Anna Berg."
    prof = profile_mod.build_profile(text, lex, cues)
    lazy = ("dates", "numbers", "negations", "scopes", "scope_spans", "universal", "hedged")
    lazy = (*lazy, "ko_roots", "proper")
    assert not set(lazy) & set(vars(prof))
    tokens = text_mod._tokens(text)
    dates = quantities_mod._dates(text, tokens)
    spans = [(d.start, d.end) for d in dates]
    assert prof.dates == dates and dates
    assert prof.numbers == quantities_mod._numbers(text, tokens, spans, False) + tuple(
        quantities_mod._times(text, tokens)
    )
    assert prof.negations == text_mod._negations(text, tokens, False) and prof.negated
    assert prof.scope_spans == profile_mod._scopes(text, lex)
    assert prof.scopes == frozenset({"work"})
    assert prof.proper == profile_mod._proper_words(text, tokens) and prof.proper
    ko = profile_mod.build_profile("서울에 살지 않는다", lex, cues)
    assert ko.ko_roots and ko.negations


def test_a_pair_nobody_compares_leaves_its_profiles_unread() -> None:
    from datetime import UTC, datetime

    from auditor.config import Settings
    from auditor.detectors.base import DetectContext, MemoryView
    from auditor.detectors.contradiction import ContradictionDetector

    det = ContradictionDetector({})
    memories = [
        MemoryView("m1", "user:a", "Bought a red kettle on 3 May 2024", "user", content_hash="h1"),
        MemoryView(
            "m2", "user:a", "Python 3.12 compiles faster than 3.11", "user", content_hash="h2"
        ),
    ]
    det.analyze_group(memories, DetectContext(now=datetime.now(UTC), settings=Settings()))
    first, second = det.profile("", "h1"), det.profile("", "h2")
    assert first.text == memories[0].fact and second.text == memories[1].fact  # the cached ones
    assert "dates" not in vars(first) and "numbers" not in vars(second)


def test_hangul_alias_lookup_is_skipped_only_without_hangul() -> None:
    """find_values tries the Hangul alias prefixes only in a fact with Hangul: never a
    value lost (a Hangul token needs a Hangul fact), found in mixed facts too."""
    lex = profile_mod.Lexicon.from_params({})
    mixed = "I moved from Busan, 지금은 서울에서 살아요"
    values = {v[-1] for v in profile_mod.find_values(mixed, text_mod._tokens(mixed), lex)}
    assert "seoul" in values or "서울" in values, values
    latin = "I moved from Busan to Seoul"
    assert profile_mod.find_values(latin, text_mod._tokens(latin), lex)


def _subject_of_corpus_texts(n: int, seed: int) -> list[MemoryView]:
    """``n`` train-split facts of the corpora as one subject's memories, oldest first."""
    pool = [p for p in train_texts() if p.fact.strip() and len(p.fact) < 2000]
    picked = random.Random(seed).sample(pool, n)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        MemoryView(
            memory_id=f"m{i:05d}",
            subject="user:big",
            fact=p.fact,
            trust_tier="user",
            created_at=start + timedelta(minutes=i),
            content_hash=content_hash(p.fact),
        )
        for i, p in enumerate(picked)
    ]


def test_an_incremental_subject_scan_finds_what_a_fresh_detector_finds() -> None:
    """The changed memories' pairs, from kept candidate keys and a focused neighbour search,
    are the pairs a fresh detector (nothing kept, every neighbour search run) finds with
    them; on a big subject of corpus texts, for several sets of changed memories."""
    memories = _subject_of_corpus_texts(1500, seed=5)
    ctx = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=load_settings())
    warm = ContradictionDetector({})
    everything = warm.analyze_group(memories, ctx)  # a full scan: every memory's keys kept
    assert len(everything) > 10
    kept_profiles = len(warm._profiles)
    assert len(warm._keys) == len({m.content_hash for m in warm.usable(memories)})
    rng = random.Random(11)
    for size in (1, 15, 150):
        focus = frozenset(m.memory_id for m in rng.sample(memories, size))
        focused = replace(ctx, focus=focus)
        warm._profiles.clear()  # an incremental scan after others: the profiles are gone
        got = warm.analyze_group(memories, focused)
        want = ContradictionDetector({}).analyze_group(memories, focused)
        assert got == want
        assert [d for d in everything if not focus.isdisjoint(d.memory_ids)] == want
        # only the changed memories and their pairs' partners were read again
        assert len(warm._profiles) < min(kept_profiles, 20 * size + 50)


def test_a_focused_neighbour_search_keeps_every_pair_of_the_focus() -> None:
    memories = _subject_of_corpus_texts(800, seed=9)
    det = ContradictionDetector({})
    usable = det.usable(memories)
    keys = [det.keys(m) for m in usable]
    for max_df in (2, 8, 64):
        full = candidate_pairs(keys, list(range(len(usable))), top_k=8, max_df=max_df)
        last = len(usable) - 1
        for focus in ({0}, {3, last // 2, last}, set(range(0, len(usable), 7))):
            part = candidate_pairs(
                keys, list(range(len(usable))), top_k=8, max_df=max_df, focus=focus
            )
            want = {k: v for k, v in full.items() if focus & set(k)}
            assert {k: v for k, v in part.items() if focus & set(k)} == want
            assert want  # the focus has pairs
