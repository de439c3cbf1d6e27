"""What the pii detector needs in a text to find anything, known without loading Presidio.

The rule engine builds a detector when the first memory that needs it arrives
(:mod:`auditor.rulepack.engine`). The pii detector's prefilter needles come from the built detector
(its ``identifiers`` part alone decides whether it runs: a digit, an ``@``, a group word or
a password word, see :meth:`auditor.detectors.pii.PiiDetector.prefilter_needles`), and
building it loads Presidio and spaCy: seconds. This module computes the same ``identifiers``
needles from the word tables alone (:mod:`auditor.detectors._pii_terms`), so that a memory
without any of them does not make the engine build the detector. A test keeps them equal to
the built detector's, for every entity and for the shipped rules' params.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.detectors import _pii_terms as terms
from auditor.detectors.prefilter import Needles, unicode_digits

__all__ = ["identifier_needles"]

#: as in :mod:`auditor.detectors.pii` (the entities that need an NER model)
_NER_ENTITIES = ("PERSON", "LOCATION")
_SUPPORTED = frozenset((*terms.DEFAULT_ENTITIES, "UK_NHS", *_NER_ENTITIES))
#: as :data:`auditor.detectors.pii_prose.PASSWORD_GATE_WORDS`
_PASSWORD_GATE_WORDS = (
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


def _group_needles() -> frozenset[str]:
    """As :func:`auditor.detectors.pii_nrp.group_needles`."""
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
    needles = Needles()
    for entity in entities:
        if entity in _NER_ENTITIES:
            needles |= Needles.anything()
        elif entity == "EMAIL_ADDRESS":
            needles |= Needles.of(("@", "＠"))
        elif entity == "NRP":
            needles |= Needles.of(_group_needles())
        elif entity == "PASSWORD":
            needles |= Needles.of(_PASSWORD_GATE_WORDS)
        else:
            needles |= Needles.of(unicode_digits())
    return needles
