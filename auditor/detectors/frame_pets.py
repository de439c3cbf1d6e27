"""A pet told by two names: "Marta has one cat, a tabby named Biscoito" / "Marta's only pet
is a grey cat called Pastel", "Priya's greyhound is called Pepper", "고양이 이름은 나비다" /
"태윤의 고양이 이름은 치즈다", across the two languages too ("a golden retriever named
Mango" / "이름은 처트니다").

A fact names a pet when a name follows "named" / "called" (English) or "이름은" (Korean)
with a pet word before it in its sentence; the pet words and their kinds (dog, cat, ...)
are data (``pet_kinds`` of ``auditor/detectors/data/contradiction_frames.json``), and the
generic "pet" / "반려동물" goes with any kind. Two facts conflict when they give a pet of one
kind two names and at least one of them says the pet is the only one ("one cat", "only
pet", "한 마리뿐") or points at it as known ("Priya's greyhound", "her dog", "고양이 이름은");
a fact that speaks of several animals ("two cats", "another dog", "두 마리") says nothing
here. A name in Hangul and one in Latin letters are one name when their consonant
skeletons meet ("Mango" / "망고"). Read by :mod:`auditor.detectors.frame_reading`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_words import _data, _is_hangul, _tokens, ko_relative, relatives
from auditor.detectors.transliteration import same_name

__all__ = ["named_pets", "names_a_pet", "pet_keys", "two_pet_names"]

#: Facts whose pet names are remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000
#: How many words before "named" / "이름은" are read for the pet word.
_WINDOW = 8

_EN_NAMED = re.compile(r"\b(?:named|called)\s+[\"'“‘]?(?P<name>[A-Z][^\W\d_]+)")
_KO_NAMED = re.compile(r"이름은\s*[\"'“‘]?(?P<name>[가-힣A-Za-z]+)")  # a name may be quoted
#: "페퍼라는 이름의 보더콜리", "비스킷이라는 세 살짜리 스패니얼": a name before 라는
_KO_CALLED = re.compile(r"(?P<name>[가-힣A-Za-z]+?)(?:이)?라는(?=\s)")
#: how many words after "X라는" may come before the pet word
_CALLED_WINDOW = 4
#: copula endings after a Korean name ("나비다", "몽이에요", "처트니라고")
_KO_COPULA = ("이에요", "입니다", "이야", "이다", "예요", "라고", "야", "다")
#: words that make a pet the only one or a known one
_EN_UNIQUE = frozenset({"one", "only", "single", "sole"})
_EN_POINTING = frozenset({"his", "her", "their", "my", "our", "your"})
_KO_UNIQUE = ("뿐", "한 마리", "한마리")
#: words of several animals
_EN_SEVERAL = frozenset(
    {"two", "three", "four", "both", "another", "second", "other", "others", "several"}
)
_KO_SEVERAL = ("두 마리", "세 마리", "네 마리", "두마리", "세마리", "또 다른", "둘째", "다른 ")


@dataclass(frozen=True, slots=True)
class _PetName:
    kind: str  # "dog", "cat", ... or "" for a pet of any kind
    name: str  # folded: lower case, a Korean copula and final 이 off
    unique: bool


@functools.cache
def _kinds() -> tuple[dict[str, str], frozenset[str]]:
    """(pet word -> kind, generic pet words) from the data file."""
    d = _data()["pet_kinds"]
    by_word = {w: kind for kind, words in d.items() if kind != "any" for w in words}
    return by_word, frozenset(d["any"])


def _kind_of(words: list[str]) -> str | None:
    """The kind of the last pet word among ``words`` ("" for a generic one), or None."""
    by_word, generic = _kinds()
    for w in reversed(words):
        for word, kind in by_word.items():
            if w == word or (_is_hangul(w) and _ko_contains(w, word)):
                return kind
        if w in generic or any(_is_hangul(w) and w.startswith(g) for g in generic):
            return ""
    return None


def names_a_pet(text: str) -> bool:
    """Whether a fact names an animal ("a three-year-old corgi", "검은 고양이")."""
    return _kind_of([t.low for t in _tokens(text)]) is not None


def _ko_contains(w: str, word: str) -> bool:
    """A Korean pet word in a word: at its start, or inside it when two syllables or more
    ("보더콜리를" holds 콜리)."""
    return w.startswith(word) or (len(word) >= 2 and _is_hangul(word) and word in w)  # noqa: PLR2004


@functools.lru_cache(maxsize=_FACT_CACHE)
def _pet_names(text: str) -> tuple[_PetName, ...]:
    """The pets one fact names, or () when it speaks of several animals."""
    low = text.lower()
    if "named" not in low and "called" not in low and "이름은" not in text and "라는" not in text:
        return ()
    toks = _tokens(text)
    words = [t.low for t in toks]
    if not _EN_SEVERAL.isdisjoint(words) or any(s in text for s in _KO_SEVERAL):
        return ()
    out: list[_PetName] = []
    for m in _KO_CALLED.finditer(text):
        after = [t.low for t in toks if t.start > m.end()][:_CALLED_WINDOW]
        kind = _ko_called_kind(after)
        if kind is not None and not _someone_elses(words):
            out.append(_PetName(kind, _folded_name(m.group("name"), True), True))
    for m in (*_EN_NAMED.finditer(text), *_KO_NAMED.finditer(text)):
        before = [t for t in toks if t.end <= m.start()][-_WINDOW:]
        korean = m.group(0).startswith("이름")
        scope = words if korean else [t.low for t in before]
        kind = _kind_of(scope)
        if kind is None or _someone_elses(scope):
            continue  # no pet, or a pet of a person named with it ("her neighbour's dog")
        name = _folded_name(m.group("name"), korean)
        if not name:
            continue
        unique = korean or any(
            w in _EN_UNIQUE or w in _EN_POINTING or w.endswith("'s") for w in scope
        )
        unique = unique or any(u in text for u in _KO_UNIQUE)
        out.append(_PetName(kind, name, unique))
    return tuple(out)


def _ko_called_kind(after: list[str]) -> str | None:
    """The kind of the pet "X라는" names: "이름의" then a pet word, or a pet word within a few
    words with no place between ("코코라는 카페에서 강아지를": a café's name)."""
    for i, w in enumerate(after):
        if w.endswith(("에서", "에")) or (
            i == 0 and not w.startswith("이름") and _kind_of([w]) is None and not _ko_age(w)
        ):
            return None
        kind = _kind_of([w])
        if kind is not None:
            return kind
    return None


def _ko_age(word: str) -> bool:
    """An age or size before a pet ("세 살짜리", "두 살", "작은")."""
    return word in (
        "한",
        "두",
        "세",
        "네",
        "다섯",
        "작은",
        "큰",
        "하얀",
        "검은",
    ) or word.startswith(("살", "짜리"))


def _someone_elses(words: list[str]) -> bool:
    """Whether a relative or another person is named among ``words`` ("Jonas's neighbour
    has a dog named ...", "동생의 강아지 이름은 ...")."""
    en = relatives()[0]
    return any(
        stem(w.removesuffix("'s")) in en if not _is_hangul(w) else ko_relative(w) for w in words
    )


def _folded_name(raw: str, korean: bool) -> str:
    if not korean:
        return raw.lower()
    name = raw
    for ending in _KO_COPULA:
        if name.endswith(ending) and len(name) > len(ending):
            name = name[: -len(ending)]
            break
    if _is_hangul(name) and len(name) > 1 and name.endswith("이"):
        name = name[:-1]  # "몽이" and "몽이다": one name
    return name.lower()


def _same_name(a: str, b: str) -> bool:
    if a == b:
        return True
    if _is_hangul(a) == _is_hangul(b):
        return False
    return same_name(a, b) if _is_hangul(a) else same_name(b, a)


def two_pet_names(a_text: str, b_text: str) -> bool:
    """Whether two facts give one pet two names (see the module docstring)."""
    for x in _pet_names(a_text):
        for y in _pet_names(b_text):
            if x.kind and y.kind and x.kind != y.kind:
                continue  # a dog's name and a cat's
            if (x.unique or y.unique) and not _same_name(x.name, y.name):
                return True
    return False


def named_pets(text: str) -> tuple[str, ...]:
    """The names of the pets one fact names ("a beagle named Rosie": "rosie"), folded; ()
    when it names none or speaks of several animals."""
    return tuple(p.name for p in _pet_names(text))


def pet_keys(text: str) -> list[str]:
    """Blocking keys of the pets a fact names, one per kind ("pet:dog"), and "pet:" for
    every fact that names one, so that two names of one pet meet as candidates whatever
    language they are told in."""
    found = _pet_names(text)
    return sorted({"pet:" + p.kind for p in found} | ({"pet:"} if found else set()))
