"""The NLP artifacts Presidio's context step reads, computed only when it reads them, and cheaply.

Presidio tokenises every text before its recognizers run (spaCy's pipeline, then an
:class:`NlpArtifacts` with the tokens, their offsets, their lemmas and the "keywords": the
lemmas that are neither stop words nor punctuation). The pattern recognizers never look
at them; only the context enhancer does, for a text on which a recognizer fired (and a
spaCy NER recognizer, when a model is configured). So:

* :class:`LazyArtifacts` stands in for them and computes them on first use, or never;
* without a NER model, :func:`token_artifacts` computes what the enhancer reads from
  spaCy's tokenizer alone, with the same values as Presidio's own path over the blank
  pipeline, whose one component sets each token's lemma to its lower case
  (:data:`LEMMA_COMPONENT`): offsets and lengths come from one array call instead of
  spaCy ``Token`` objects, lemmas from the token texts, and the stop-word and punctuation
  test of each distinct word is remembered (:class:`PreloadedSpacyNlpEngine`). The tokens
  are handed over as their texts: the enhancer only takes their length.

``tests/test_detector_pii.py`` compares both paths field by field on the labelled corpora's
texts, and the detections of the detector with either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spacy.attrs import IDX, LENGTH  # type: ignore[import-not-found]  # Cython, no stub

from auditor.detectors.pii_presidio import (
    AnalyzerEngine,
    Language,
    NerModelConfiguration,
    SpacyNlpEngine,
)

__all__ = [
    "LEMMA_COMPONENT",
    "KeywordList",
    "LazyArtifacts",
    "PreloadedSpacyNlpEngine",
    "TokenArtifacts",
    "token_artifacts",
]

#: Lower-case-lemma pipeline component (context words are matched against lemmas).
LEMMA_COMPONENT = "memaudit_lower_lemma"
#: Distinct words whose stop-word / punctuation test is remembered, per engine.
KEYWORD_CACHE_SIZE = 200_000


class PreloadedSpacyNlpEngine(SpacyNlpEngine):
    """Presidio's spaCy engine over pipelines built in memory (nothing is downloaded).

    Args:
        pipelines: language code -> spaCy pipeline.
        with_ner: a pipeline recognises entities (then the full pipeline must run).
    """

    def __init__(self, pipelines: Mapping[str, Language], *, with_ner: bool = False) -> None:
        super().__init__(
            models=[{"lang_code": lang, "model_name": "in-memory"} for lang in pipelines],
            ner_model_configuration=NerModelConfiguration(),
        )
        self._pipelines = dict(pipelines)
        self.with_ner = with_ner
        self._keep: dict[tuple[str, str], bool] = {}
        self.load()

    def load(self) -> None:
        """Use the in-memory pipelines."""
        self.nlp = dict(self._pipelines)  # type: ignore[assignment]  # Presidio types it None

    def is_keyword(self, lemma: str, language: str) -> bool:
        """Presidio's keyword test of one lemma (:meth:`NlpArtifacts.set_keywords`), cached."""
        key = (language, lemma)
        kept = self._keep.get(key)
        if kept is None:
            kept = (
                not self.is_stopword(lemma, language)
                and not self.is_punct(lemma, language)
                and lemma != "-PRON-"
                and lemma != "be"
            )
            if len(self._keep) >= KEYWORD_CACHE_SIZE:
                self._keep.clear()
            self._keep[key] = kept
        return kept


class KeywordList(list[str]):
    """Presidio's keyword list, whose membership test is a set lookup.

    The enhancer asks ``lemma in keywords`` for every token it walks past; on a list that
    is a scan of the whole list each time.
    """

    __slots__ = ("_members",)

    def __init__(self, words: Iterable[str]) -> None:
        super().__init__(words)
        self._members = frozenset(self)

    def __contains__(self, item: object) -> bool:
        return item in self._members


@dataclass
class TokenArtifacts:
    """The fields of Presidio's :class:`NlpArtifacts` that its context step reads."""

    tokens: list[str]
    tokens_indices: list[int]
    lemmas: list[str]
    keywords: KeywordList
    nlp_engine: PreloadedSpacyNlpEngine
    language: str
    entities: list[Any] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)


def token_artifacts(engine: PreloadedSpacyNlpEngine, text: str, language: str) -> TokenArtifacts:
    """What Presidio's spaCy engine would compute for ``text`` over the blank pipeline."""
    doc = engine.nlp[language].make_doc(text)  # type: ignore[index]
    spans = doc.to_array([IDX, LENGTH]).tolist()
    tokens = [text[start : start + length] for start, length in spans]
    lemmas = [token.lower() for token in tokens]  # LEMMA_COMPONENT: lemma = lower case
    keywords = [k.lower() for k in lemmas if engine.is_keyword(k, language)]
    return TokenArtifacts(
        tokens=tokens,
        tokens_indices=[start for start, _ in spans],
        lemmas=lemmas,
        keywords=KeywordList(part for k in keywords for part in k.split(":")),
        nlp_engine=engine,
        language=language,
    )


class LazyArtifacts:
    """The NLP artifacts of one text, computed on first use (or never).

    Handing the analyzer this proxy keeps its results identical while texts on which no
    recognizer fires (most of them) are never tokenised.
    """

    def __init__(self, engine: AnalyzerEngine, text: str, language: str) -> None:
        self._engine, self._text, self._language = engine, text, language
        self._real: Any = None

    def __bool__(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._real is None:
            nlp = self._engine.nlp_engine
            if isinstance(nlp, PreloadedSpacyNlpEngine) and not nlp.with_ner:
                self._real = token_artifacts(nlp, self._text, self._language)
            else:
                self._real = nlp.process_text(self._text, self._language)
        return getattr(self._real, name)
