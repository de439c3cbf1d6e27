"""What the pii detector needs in a text to find anything, known without loading Presidio.

The rule engine builds a detector when the first memory that needs it arrives
(:mod:`auditor.rulepack.engine`). The pii detector's prefilter needles come from the built detector
(its ``identifiers`` part alone decides whether it runs: a digit, an ``@``, a group word or
a password word, see :meth:`auditor.detectors.pii.PiiDetector.prefilter_needles`), and
building it loads Presidio and spaCy: seconds. This module owns those ``identifiers``
needles, computed from the word tables alone (:mod:`auditor.detectors._pii_terms`): the
built detector takes them from here, and the engine asks here first, so that a memory
without any of them does not make it build the detector. A test keeps the two equal, for
every entity and for the shipped rules' params.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from auditor.detectors import _pii_terms as terms
from auditor.detectors.prefilter import Needles, unicode_digits

__all__ = ["PASSWORD_GATE_WORDS", "entity_needles", "group_needles", "identifier_needles"]

#: as in :mod:`auditor.detectors.pii` (the entities that need an NER model)
_NER_ENTITIES = ("PERSON", "LOCATION")
_SUPPORTED = frozenset((*terms.DEFAULT_ENTITIES, "UK_NHS", *_NER_ENTITIES))
#: The words of the ``PASSWORD`` gate (the prose recognizer runs only on a text with one).
PASSWORD_GATE_WORDS = (
    "pass",
    "pin",
    "code",
    "secret",
    "비밀번호",
    "비번",
    "패스워드",
    "암호",
    "번호",
)


@functools.cache
def group_needles() -> frozenset[str]:
    """Literals one of which occurs (lower case) in every text that mentions a group (NRP).

    An English group word is a whole word whose lower case (with ``’`` read as ``'``) or
    singular is in the word list, so the listed word (or its ``’`` spelling) occurs; a
    Korean mention needs one of the Korean words
    (:func:`auditor.detectors.pii_nrp.mentions_group`).
    """
    english = {
        w.split()[0].lower().replace("’", "'")
        for w in (
            *terms.DEMONYMS,
            *terms.DEMONYM_NOUNS,
            *terms.AMBIGUOUS_DEMONYMS,
            *terms.RELIGIOUS_GROUPS,
            *terms.POLITICAL_GROUPS,
        )
    }
    english.discard("")
    curly = {w.replace("'", "’") for w in english if "'" in w}
    korean = {*terms.KO_NRP_COUNTRIES, *terms.KO_NRP_WORDS, "국적"}
    return frozenset(english | curly | korean)


def identifier_needles(params: Mapping[str, Any]) -> Needles | None:
    """The ``identifiers`` needles of a pii detector with these params.

    None when the params name no valid entity list: then only building the detector can
    tell (and report the error).
    """
    entities = params.get("entities", list(terms.DEFAULT_ENTITIES))
    if not isinstance(entities, list) or not all(
        isinstance(e, str) and e in _SUPPORTED for e in entities
    ):
        return None
    return entity_needles(entities)


def entity_needles(entities: Iterable[str]) -> Needles:
    """What a text needs for the pii detector to look for any of ``entities``: anything for
    the NER entities, ``@`` for e-mail, a group word for NRP, a password word for passwords,
    a digit for every other identifier.

    Remembered per entity list (the needles are immutable): every rule engine asks for
    them, and folding the digit and group words again took about a tenth of a second, a
    quarter of a small incremental scan.
    """
    return _entity_needles(tuple(entities))


@functools.lru_cache(maxsize=64)
def _entity_needles(entities: tuple[str, ...]) -> Needles:
    needles = Needles()
    for entity in entities:
        if entity in _NER_ENTITIES:
            needles |= Needles.anything()
        elif entity == "EMAIL_ADDRESS":
            needles |= Needles.of(("@", "＠"))
        elif entity == "NRP":
            needles |= Needles.of(group_needles())
        elif entity == "PASSWORD":
            needles |= Needles.of(PASSWORD_GATE_WORDS)
        else:
            needles |= Needles.of(unicode_digits())
    return needles
