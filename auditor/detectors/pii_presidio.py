"""Presidio and spaCy imported once, with PyTorch hidden; shared names of the pii modules.

Every ``auditor.detectors.pii*`` module imports Presidio through this one, so whichever is
imported first, thinc and Presidio never load PyTorch (see :func:`_torch_hidden`), spaCy
does not import its command line (:func:`_spacy_cli_deferred`) and Presidio does not
compile its built-in patterns only to check them (:class:`_PatternCheckDeferred`): together
about a third of the detectors' start-up.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import os
import re
import sys
import types
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

_HIDDEN = ("torch", "transformers")


@contextlib.contextmanager
def _torch_hidden() -> Iterator[None]:
    """Hide PyTorch and Transformers while spaCy and Presidio are first imported.

    thinc (under spaCy) and Presidio probe ``import torch`` / ``import transformers`` at
    import time; with them installed (the optional mem0 extra brings them) every memaudit
    process would load PyTorch, about 400 MB, for nothing: the pipelines here never use it.
    Hidden, they see neither and stay on the CPU code paths. The sentinels are removed
    afterwards, so a later import (the mem0 connector's embedder) loads the real modules;
    none of them was imported during the window, so none caches "torch missing".
    """
    hidden = [name for name in _HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment] # import -> ImportError
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]


def _spacy_info(*args: Any, **kwargs: Any) -> Any:
    """``spacy.info`` of the deferred CLI: imports spaCy's real command line, then runs it."""
    from spacy.cli.info import info  # noqa: PLC0415 - the point is to import it only now

    return info(*args, **kwargs)


@contextlib.contextmanager
def _spacy_cli_deferred() -> Iterator[None]:
    """Keep spaCy's command line out of the first ``import spacy``.

    spaCy's package ``__init__`` imports ``spacy.cli.info`` only to re-export ``spacy.info``,
    and importing it imports the whole command line (typer, requests, weasel, the training
    and download commands): about a third of a second of every scan's start-up, for code
    memaudit never runs (it never downloads a model). During the window ``spacy.cli`` and
    ``spacy.cli.info`` are stand-ins whose ``info`` imports the real one when called; they
    are removed afterwards, so a later ``import spacy.cli`` loads the real package as usual.
    Nothing is changed when spaCy is already imported.
    """
    if "spacy" in sys.modules:
        yield
        return
    cli = types.ModuleType("spacy.cli", "stand-in while spaCy is first imported")
    info = types.ModuleType("spacy.cli.info", "stand-in while spaCy is first imported")
    info.info = _spacy_info  # type: ignore[attr-defined]
    cli.info = info  # type: ignore[attr-defined]
    stand_ins = {"spacy.cli": cli, "spacy.cli.info": info}
    sys.modules.update(stand_ins)
    try:
        yield
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def _no_check(pattern: str) -> None:
    """Stands in for Presidio's regex check while Presidio is imported (see below)."""


class _PatternCheckDeferred(importlib.abc.MetaPathFinder):
    """Loads ``presidio_analyzer.pattern`` as usual, then turns its regex check off.

    Presidio's ``Pattern`` compiles its regex once without flags only to check it, and its
    recognizer classes build their ``Pattern`` lists when they are defined: importing
    Presidio compiles about 170 regexes (two thirds of its import time, a fifth of a
    second here), most of them of recognizers memaudit never runs, and those it runs are
    compiled again with their recognizer's flags before the first text (``pii._prepare``,
    which checks them the same way). Presidio's own, tested patterns are therefore not
    checked twice; every ``Pattern`` built after the import is checked as before.
    """

    def __init__(self) -> None:
        self.checker: Any = None  # Presidio's check, to put back after the import
        self.pattern_class: Any = None

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "presidio_analyzer.pattern":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = getattr(spec, "loader", None)
        if spec is None or not isinstance(loader, importlib.machinery.SourceFileLoader):
            return None  # an unusual install: import it as usual, checks and all
        run = loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            run(module)
            cls = getattr(module, "Pattern", None)
            checker = vars(cls).get("_Pattern__validate_regex") if cls else None
            if isinstance(checker, staticmethod):
                self.checker, self.pattern_class = checker, cls
                cls._Pattern__validate_regex = staticmethod(_no_check)  # type: ignore[union-attr]

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


@contextlib.contextmanager
def _presidio_pattern_check_deferred() -> Iterator[None]:
    """Import Presidio without checking its built-in patterns (:class:`_PatternCheckDeferred`)."""
    if "presidio_analyzer" in sys.modules:
        yield
        return
    finder = _PatternCheckDeferred()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)
        if finder.pattern_class is not None:
            finder.pattern_class._Pattern__validate_regex = finder.checker


with _torch_hidden(), _spacy_cli_deferred(), _presidio_pattern_check_deferred():
    import presidio_analyzer.nlp_engine  # noqa: F401
    import spacy
import regex  # noqa: E402
import tldextract  # noqa: E402
from presidio_analyzer import (  # noqa: E402
    AnalysisExplanation,
    AnalyzerEngine,
    EntityRecognizer,
    Pattern,
    PatternRecognizer,
    RecognizerRegistry,
    RecognizerResult,
    predefined_recognizers,  # noqa: E402
)
from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer  # noqa: E402
from presidio_analyzer.nlp_engine import (  # noqa: E402
    NerModelConfiguration,
    NlpArtifacts,
    SpacyNlpEngine,
)
from presidio_analyzer.predefined_recognizers import (  # noqa: E402
    CreditCardRecognizer,
    CryptoRecognizer,
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    KrBrnRecognizer,
    KrDriverLicenseRecognizer,
    KrFrnRecognizer,
    KrPassportRecognizer,
    KrRrnRecognizer,
    NhsRecognizer,
    PhoneRecognizer,
    SpacyRecognizer,
    UkNinoRecognizer,
    UsBankRecognizer,
    UsItinRecognizer,
    UsLicenseRecognizer,
    UsPassportRecognizer,
    UsSsnRecognizer,
)
from spacy.language import Language  # noqa: E402
from spacy.tokens import Doc  # noqa: E402

__all__ = [
    "AnalysisExplanation",
    "AnalyzerEngine",
    "CreditCardRecognizer",
    "CryptoRecognizer",
    "EmailRecognizer",
    "EntityRecognizer",
    "IbanRecognizer",
    "IpRecognizer",
    "KrBrnRecognizer",
    "KrDriverLicenseRecognizer",
    "KrFrnRecognizer",
    "KrPassportRecognizer",
    "KrRrnRecognizer",
    "Language",
    "LemmaContextAwareEnhancer",
    "NerModelConfiguration",
    "NhsRecognizer",
    "NlpArtifacts",
    "OrderedRecognizerRegistry",
    "Pattern",
    "PatternRecognizer",
    "PhoneRecognizer",
    "RecognizerRegistry",
    "RecognizerResult",
    "ResultAdjuster",
    "SpacyNlpEngine",
    "SpacyRecognizer",
    "UkNinoRecognizer",
    "UsBankRecognizer",
    "UsItinRecognizer",
    "UsLicenseRecognizer",
    "UsPassportRecognizer",
    "UsSsnRecognizer",
    "Doc",
    "alternation",
    "predefined_recognizers",
    "spacy",
    "tldextract",
]


class ResultAdjuster:
    """A recognizer that adjusts its own results after matching (drops, caps or raises them).

    Presidio calls ``enhance_using_context`` of each recognizer in its context step; this
    mixin (put it first among the bases) hands the recognizer's results, and the other
    recognizers' results, to :meth:`adjust`. The NLP artifacts are never needed, so they
    are never computed for it.
    """

    def adjust(
        self, text: str, results: list[RecognizerResult], others: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        """The results to keep, changed where needed (``others``: other recognizers')."""
        raise NotImplementedError

    def enhance_using_context(
        self,
        text: str,
        raw_recognizer_results: list[RecognizerResult],
        other_raw_recognizer_results: list[RecognizerResult],
        nlp_artifacts: NlpArtifacts | None,
        context: list[str] | None = None,
    ) -> list[RecognizerResult]:
        """Presidio's hook: :meth:`adjust` this recognizer's results."""
        return self.adjust(text, raw_recognizer_results, other_raw_recognizer_results)


class OrderedRecognizerRegistry(RecognizerRegistry):
    """Presidio's registry, answering in the order the recognizers were added, and cached.

    Presidio gathers the recognizers of a request in a ``set``, so their order (and with it
    which of two equal results survives its de-duplication) changed from one process to
    the next: a card number's finding named one pattern in one run and another in the
    next. Here the answer is in registration order, computed once per language and entity
    list and remembered while the recognizer list stays the same (Presidio appends to it
    or replaces it; either changes the key).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._answers: dict[tuple[Any, ...], list[EntityRecognizer]] = {}

    def get_recognizers(
        self,
        language: str,
        entities: list[str] | None = None,
        all_fields: bool = False,
        ad_hoc_recognizers: list[EntityRecognizer] | None = None,
    ) -> list[EntityRecognizer]:
        """The recognizers Presidio would return, in registration order."""
        held = list(self.recognizers)
        key: tuple[Any, ...] = (id(self.recognizers), len(held), language, all_fields)
        key += tuple(entities or ())
        if not ad_hoc_recognizers and key in self._answers:
            return list(self._answers[key])
        found = super().get_recognizers(language, entities, all_fields, ad_hoc_recognizers)
        order = [*held, *(ad_hoc_recognizers or ())]
        position = {id(r): i for i, r in enumerate(order)}
        found.sort(key=lambda r: position.get(id(r), len(order)))
        if not ad_hoc_recognizers:
            self._answers[key] = list(found)
        return found


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` (escaped), factored by common prefix: a trie.

    It matches what the flat alternation ``longest|...|shortest`` matches, preferring the
    same word at each position: two words can both match at one position only if one is a
    prefix of the other (or they are equal but for case, under ``(?i)``), and in the trie a
    longer continuation is tried before the word ends there, as longest-first would. The
    engine no longer tries every word at every position: a word list of hundreds of
    demonyms or street types costs a few character tests per position instead of one per
    word (``tests/test_pii_alternation.py`` checks both forms match the same spans).
    """
    root: dict[str, dict[str, Any]] = {}
    for word in sorted(set(words)):
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}  # a word ends here
    return _trie_regex(root)


def _trie_regex(node: dict[str, dict[str, Any]]) -> str:
    chars = sorted(ch for ch in node if ch)
    ends_here = "" in node
    if _case_clash(chars):
        # "B" and "bA" both match "BA" under (?i): branches that are not exclusive would
        # not keep longest-first, so the words below this node stay a flat alternation
        rest = sorted(_suffixes(node), key=lambda w: (-len(w), w))
        body = "|".join(re.escape(w) for w in rest if w)
        return f"(?:{body})?" if ends_here else f"(?:{body})"
    branches = [re.escape(ch) + _trie_regex(node[ch]) for ch in chars]
    if not branches:
        return ""
    if len(branches) == 1 and not ends_here:
        return branches[0]
    body = "|".join(branches)
    return f"(?:{body})?" if ends_here else f"(?:{body})"


def _suffixes(node: dict[str, dict[str, Any]]) -> Iterator[str]:
    """The words of a trie node, without the node's prefix ("" for a word ending there)."""
    for ch, child in node.items():
        if not ch:
            yield ""
            continue
        for rest in _suffixes(child):
            yield ch + rest


def _case_clash(chars: Sequence[str]) -> bool:
    """Whether two of these characters are one under case-insensitive matching (either
    regex engine: ``B``/``b``, ``K``/Kelvin sign, ``s``/``ſ``)."""
    return any(_same_but_case(a, b) for i, a in enumerate(chars) for b in chars[i + 1 :])


@functools.lru_cache(maxsize=4096)
def _same_but_case(a: str, b: str) -> bool:
    return any(
        engine.fullmatch(engine.escape(x), y, engine.IGNORECASE) is not None
        for engine in (re, regex)
        for x, y in ((a, b), (b, a))
    )
