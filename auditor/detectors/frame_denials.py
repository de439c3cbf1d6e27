"""A negated alternative that rules out what another memory states: "Daniel's team stores
all models in MLflow" / "... tracks models with Weights & Biases, not MLflow", "Grace sells
her work on Etsy" / "Grace's shop runs on Shopify, not Etsy", "회의록을 노션에 정리한다" /
"노션이 아니라 컨플루언스에 작성한다", "keeps her notes in Evernote" / "no longer uses
Evernote", and a thing one is said not to have against a memory that has it: "Daniel
bikes to work" / "doesn't own a bike", "수아의 차는 흰색 아반떼다" / "차가 없어서 버스로
출퇴근한다" (in Korean only a thing had after a possessive, as existing, or driven or kept:
"시간이 없다" says nothing of "출근 시간은"; a relative's thing is another person's). A
one-letter alternative ("Python, never R") has no candidate-index key, so in a store it
meets the other memory only through other shared words (a known miss).

"X, not Y" names Y only to deny it. Against a memory that says nothing of Y it adds detail
(a restatement, "Uses Vite" / "Uses Vite, not Webpack"); against a memory that gives Y as
its value it is a conflict, whatever the relation's words. The check reads the alternative's
words after ", not" / ", never" (or Korean "Y가 아니라", "Y 말고", "Y 대신") and looks for
all of them among the other memory's words, not right after a negation of its own ("was
not known as the Army of ..."); a plan or a past state ("used to") and another person's
fact ("Minji's sister uses Python") are left out, and so is a text past a short fact
(``_MAX_CHARS``, ``_MAX_TOKENS``: a review page or a tool result).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.detectors._frame_words import Tok, _data, _is_hangul, _tokens, ko_key, relatives
from auditor.detectors.contradiction_frames import frames_of, text_modality
from auditor.detectors.frame_people import another_person
from auditor.detectors.transliteration import hangul_skeleton, latin_skeletons

__all__ = ["Denial", "denied_alternative", "denied_index_keys", "on_occasion", "skeleton_keys"]

#: ", not Y" / ", never Y" / "instead of Y" / "rather than Y", and a tool given up: "no
#: longer uses Y", "stopped using Y", "switched away from Y" (a preposition and an article
#: may stand before Y: "never as PDFs", "not on Etsy"); Y is the group. Linear time.
_EN_ALTERNATIVE = re.compile(
    r"(?:,\s*(?:but\s+)?(?:not|never)|\binstead\s+of|\brather\s+than"
    r"|\bno\s+longer\s+(?:uses|use|using|works\s+(?:in|with|on|at)|keeps\s+\w+\s+(?:in|on))"
    r"|\bstopped\s+using|\bswitched\s+away\s+from|\bmoved\s+away\s+from"
    # a thing one is said not to have: "doesn't own a bike", "has no car"
    r"|\b(?:does|do|did)(?:n't|\s+not)\s+(?:own|have)|\bhas\s+no|\bno\s+longer\s+(?:owns|has)"
    r"|\b(?:(?:has|have)\s+)?never\s+(?:owned|had)"
    # a tool one does not use: "doesn't use Excel", "never uses Slack"
    r"|\b(?:does|do|did)(?:n't|\s+not)\s+use|\bnever\s+(?:uses|used))"
    r"\s+(?:(?:as|in|on|with|via|through|at|for|to|from|by)\s+)?(?:(?:an?|the|any)\s+)?"
    r"([^\W_][\w.+#&'-]{0,40})",
    re.IGNORECASE,
)
#: a tool dropped or shunned: "the team dropped Datadog last year", "ditched Jira", "moved
#: off Heroku", "avoids Python"
#: (only a capitalised name: "dropped the kids at school" drops nothing)
_EN_DROPPED = re.compile(
    r"\b(?:[Dd]ropped|[Dd]itched|[Aa]bandoned|[Mm]oved\s+off(?:\s+of)?"
    r"|[Mm]igrated\s+(?:away\s+)?from|[Dd]eleted|[Uu]ninstalled"
    r"|[Aa]void(?:s|ed|ing)?)\s+([A-Z][\w.+#&'-]{0,40})"  # "avoids Python entirely"
)
#: Korean: "Y가 아니라" / "Y이 아니고", "Y 말고", "Y 대신(에)"
_KO_ALTERNATIVE = re.compile(
    r"([^\s,.]{1,20}?)(?:이|가)?\s*아니(?:라|고)|([^\s,.]{1,20}?)\s*(?:말고|대신)"
)
#: Korean: a tool not used ("Y는 안 쓰고", "Y를 아예 안 쓴다", "Y는 쓰지 않는다"; a request,
#: "Y를 사용하지 마세요", is none); Y is also looked for in Latin letters by its consonant
#: skeleton ("픽시셋" / "Pixieset")
_KO_UNUSED = re.compile(
    r"([^\s,.'\"]{1,20}?)(?:은|는|을|를|도)?\s+(?:아예\s+|전혀\s+|절대\s+)?"
    # ("열지도 않는다": not even opened)
    r"(?:안\s*(?:쓰|쓴|써|씀|사용)|쓰지\s*않|사용하지\s*않|열지도\s*않"
    r"|(?:써|사용해)\s*본\s*적(?:이|은|도)?\s*없)"  # "써 본 적이 없다": never used
)
#: Korean: a thing one is said not to have ("차가 없어서", "차가 없다"): the noun
_KO_LACKS = re.compile(r"(?<![가-힣])([가-힣]{1,6}?)(?:이|가)\s*없(?:다|어|고|음|는|으|습)")
#: the particles a Korean noun takes in a candidate index key ("w:차는")
_KO_PARTICLES = ("", "은", "는", "이", "가", "을", "를", "도", "의", "로")


#: the longest fact read (characters, then tokens): one or two sentences of a memory
_MAX_CHARS = 300
_MAX_TOKENS = 40
#: the Korean words an alternative needs ("아니라", "말고", "대신"): a cheap test first
_KO_CUES = (
    "아니",
    "말고",
    "대신",
    "안 쓰",
    "안 쓴",
    "안 써",
    "안 씀",
    "쓰지 않",
    "사용하지 않",
    "열지도 않",
    "본 적",
)
#: a cheap test before the English pattern runs
_EN_CUE = re.compile(
    r"\b(?:not|never|instead|rather|longer|stopped|away|no|dropped|ditched|abandoned|off"
    r"|migrated|deleted|uninstalled|avoids?|avoided|avoiding)\b|n't",
    re.IGNORECASE,
)
#: the most words of an alternative read ("the Army of Northern Virginia")
_PHRASE_WORDS = 5
_PHRASE_CHARS = 80
#: what ends an alternative's phrase: punctuation, or a word of time or cause after it
_PHRASE_END = re.compile(r"[,.;:!?()\[\]\n]")
_PHRASE_STOPS = frozenset(
    {
        "last",
        "next",
        "this",
        "since",
        "because",
        "when",
        "after",
        "before",
        "until",
        "ago",
        "anymore",
        "yet",
        "so",
        "in",  # "dropped Sentry in March": when, not part of the name
        "during",
        "completely",  # "avoids MATLAB completely": how, not part of the name
        "entirely",
        "altogether",
        "whenever",  # "avoids Python whenever she can"
        "wherever",
    }
)
#: how many tokens before a stated alternative are searched for a negation of its own
_NEGATION_REACH = 5
_NEGATIONS = frozenset({"not", "never", "no", "nor", "neither", "without"})
_KO_NEGATION = re.compile(r"아니|않|말고|없")


@dataclass(frozen=True, slots=True)
class Denial:
    """Which memory denies which word of the other.

    Attributes:
        newer_denies: the newer memory holds the negated alternative.
        denying_span: offsets of the denied word in the denying memory.
        stated_span: offsets of the same word in the memory that states it.
    """

    newer_denies: bool
    denying_span: tuple[int, int]
    stated_span: tuple[int, int]


def denied_alternative(older: str, newer: str) -> Denial | None:
    """The first alternative one memory denies and the other states, or None."""
    if _long(older) or _long(newer):
        return None
    if text_modality(older) != "current" or text_modality(newer) != "current":
        return None
    for neg_text, pos_text, newer_denies in ((newer, older, True), (older, newer, False)):
        if on_occasion(neg_text):
            continue  # "비 오는 날에는 지하철 대신 택시": an exception, not a denial
        pos = _tokens(pos_text)
        own = {keys[0] for keys, _span in _alternatives(pos_text)}  # both deny it: agreed
        unused = _ko_unused(neg_text)
        for keys, span in _alternatives(neg_text):
            if keys[0] in own:
                continue
            stated = _stated(pos, keys, pos_text, across=keys[0] in unused)
            if stated is not None and not _other_person(older, newer):
                return Denial(newer_denies, span, stated)
        for noun, span in _ko_lacks(neg_text):
            had = _ko_possessed(pos_text, noun)
            if had is not None and not _ko_lacks(pos_text) and not _other_person(older, newer):
                return Denial(newer_denies, span, had)
    return None


#: words that limit a statement to an occasion or a condition ("on rainy days", "비 오는
#: 날에는", "when it snows")
_OCCASION_EN = re.compile(
    r"(?:^|[,;:]\s*|\b(?:but|except|only)\s+)(?:when|whenever|if|unless)\b"
    r"|\bon (?:rainy|snowy|busy|hot|cold|wet) days\b"
    # "when it rains hard", "whenever it's snowing": weather, a condition in the present
    r"|\bwhen(?:ever)? it(?:'s| is)? (?:rains|pours|snows|storms|freezes|raining|pouring|snowing)\b"
)  # a clause that opens with "when" / "if" (not "stopped when she was 20")
_OCCASION_KO = re.compile(r"(?:날에는|날엔|때는|때엔|경우에는|(?<![가-힣])[가-힣]*면\s)")


@functools.lru_cache(maxsize=8192)
def on_occasion(text: str) -> bool:
    """Whether a fact limits what it says to an occasion or a condition (cached: a fact
    meets several others)."""
    if _OCCASION_EN.search(text.lower()):
        return True
    # (the Korean pattern only where one of its closing syllables is)
    return any(c in text for c in _OCCASION_KO_CUES) and _OCCASION_KO.search(text) is not None


#: a syllable every match of ``_OCCASION_KO`` holds
_OCCASION_KO_CUES = ("날", "때", "경우", "면")


def _ko_lacks(text: str) -> list[tuple[str, tuple[int, int]]]:
    """The nouns a Korean text says its person does not have ("차가 없어서"), with offsets."""
    if "없" not in text:
        return []
    return [(m.group(1), m.span(1)) for m in _KO_LACKS.finditer(text)]


def _ko_possessed(text: str, noun: str) -> tuple[int, int] | None:
    """Where a Korean text speaks of its person's ``noun`` as had: after a possessive ("수아의
    차는", "내 차"), as existing ("차가 있다"), or driven or kept ("차를 몬다"); else None.
    ("출근 시간은" against "시간이 없다" is no possession.)"""
    n = re.escape(noun)
    _people_en, people_ko = relatives()
    for m in re.finditer(
        rf"(?:([가-힣]*)의\s*|(?<![가-힣])(?:내|제|우리)\s+)({n})(?:은|는|이|가|를|을|도|로|의)?"
        rf"(?![가-힣])|(?<![가-힣])({n})(?:이|가)\s*있"
        rf"|(?<![가-힣])({n})(?:를|을)\s*(?:타|탄|몰|몬|운전|키우|키운|키워|가지|가진|갖)",
        text,
    ):
        if m.group(1) and m.group(1).endswith(tuple(people_ko)):
            continue  # "남편의 차는": another person's
        group = next(g for g in (2, 3, 4) if m.group(g) is not None)
        return m.span(group)
    return None


def denied_index_keys(text: str) -> list[str]:
    """The candidate-index keys (``w:`` and a key) of the first word of each alternative a
    text denies, so that it meets the facts that state them (one-letter words have none)."""
    if len(text) > _MAX_CHARS:
        return []
    lacks = [f"w:{noun}{p}" for noun, _span in _ko_lacks(text) for p in _KO_PARTICLES]
    cue = (_is_hangul(text) and any(c in text for c in _KO_CUES)) or _EN_CUE.search(text)
    if not (cue or lacks) or _long(text):  # (the cheap tests first: no tokens without a cue)
        return []
    if not cue:
        return lacks
    denied = [keys[0] for keys, _span in _alternatives(text) if len(keys[0]) > 1]
    # a Korean tool not used also by its consonant skeleton ("tr:PKST" of "픽시셋"), to
    # meet the facts that write it in Latin letters (see ``skeleton_keys``)
    skeletons = [
        "tr:" + sk
        for word in _ko_unused(text)
        if (sk := hangul_skeleton(word)) is not None and len(sk) >= _LOANWORD_CHARS
    ]
    # (the index holds stems: "QuickBooks" is "quickbook", so "퀵북스" also without its S)
    skeletons += [k[:-1] for k in skeletons if k.endswith("S") and len(k[3:]) > _LOANWORD_CHARS]
    return [*lacks, *("w:" + word for word in denied), *skeletons]


@functools.lru_cache(maxsize=8192)
def _ko_unused(text: str) -> frozenset[str]:
    """The keys of the tools a Korean fact says are not used ("엑셀은 안 쓴다" -> 엑셀)."""
    if not _is_hangul(text) or not any(c in text for c in _KO_UNUSED_CUES):
        return frozenset()
    return frozenset(ko_key(m.group(1)) for m in _KO_UNUSED.finditer(text) if ko_key(m.group(1)))


#: words every match of ``_KO_UNUSED`` holds
_KO_UNUSED_CUES = ("쓰", "쓴", "써", "씀", "사용", "열지도")  # ("써 본 적": 써)


def skeleton_keys(index_key: str) -> list[str]:
    """The "tr:" keys of a Latin word of a fact's candidate index ("w:pixieset" ->
    "tr:PKST", ...): where a Korean denial of the same word (see ``denied_index_keys``)
    looks for it."""
    word = index_key[2:]
    if not (index_key.startswith("w:") and word.isascii() and word.isalpha()):
        return []
    if len(word) < _LOANWORD_CHARS:
        return []
    return ["tr:" + sk for sk in latin_skeletons(word)]


def _long(text: str) -> bool:
    """Whether a text is past a short fact (a review page, a tool result): not read here."""
    return len(text) > _MAX_CHARS or len(_tokens(text)) > _MAX_TOKENS


def _stated(
    pos: tuple[Tok, ...], keys: tuple[str, ...], text: str, *, across: bool = False
) -> tuple[int, int] | None:
    """Where a text states the alternative: its first word followed closely by the others,
    not right after a negation of its own ("was not known as the Army of ..."), or None."""
    reach = 2 * len(keys) + 2
    for k, t in enumerate(pos):
        if t.key != keys[0] and not (
            across and text[t.start : t.start + 1].isupper() and _transliterated(keys[0], t.low)
        ):
            continue  # (across scripts only a tool's capitalised name: "Pixieset", "Excel")
        near = {u.key for u in pos[k : k + reach]}
        if any(key not in near for key in keys[1:]):
            continue
        before = pos[max(0, k - _NEGATION_REACH) : k]
        if not any(_negation(u.low) for u in before) and not _ko_negated_after(pos, k):
            return t.start, t.end
    return None


def _transliterated(key: str, low: str) -> bool:
    """Whether a Korean word and a Latin one are one loanword or name, by their consonant
    skeletons ("픽시셋" / "Pixieset", "엑셀" / "Excel"); a skeleton too short to tell is
    no match here."""
    if not (_is_hangul(key) and low.isascii() and low.isalpha() and len(low) >= _LOANWORD_CHARS):
        return False
    skeleton = hangul_skeleton(key)
    return (
        skeleton is not None
        and len(skeleton) >= _LOANWORD_CHARS
        and (skeleton in latin_skeletons(low))
    )


#: the fewest letters, and skeleton consonants, of a loanword matched across scripts
_LOANWORD_CHARS = 3


def _ko_negated_after(pos: Sequence[Tok], k: int) -> bool:
    """Whether the Korean word at ``k`` is negated by the verb after it ("쉼표를 사용하지 않고",
    "쉼표를 사용하지 마시고"): a negation within two words, or a "-지" verb and then "마"."""
    if not _is_hangul(pos[k].low):
        return False
    after = pos[k + 1 : k + 3]
    for i, u in enumerate(after):
        if _negation(u.low):
            return True
        if i and after[i - 1].low.endswith("지") and u.low.startswith("마"):
            return True
    return False


def _negation(low: str) -> bool:
    return low in _NEGATIONS or low.endswith("n't") or _KO_NEGATION.search(low) is not None


@functools.lru_cache(maxsize=8192)
def _alternatives(text: str) -> tuple[tuple[tuple[str, ...], tuple[int, int]], ...]:
    """The alternatives a text denies: their content keys (the first word's first; up to
    ``_PHRASE_WORDS`` words before a comma or a clause word) and the first word's offsets."""
    d = _data()
    skip = d["determiners_set"] | d["qualifiers_set"] | d["prepositions_set"]
    stops = d["conjunctions_set"] | d["clause_stops_set"]
    out: list[tuple[tuple[str, ...], tuple[int, int]]] = []
    if _is_hangul(text):
        for m in (*_KO_ALTERNATIVE.finditer(text), *_KO_UNUSED.finditer(text)):
            group = 1 if m.group(1) is not None else 2  # (the unused tool: group 1)
            word = m.group(group)
            key = ko_key(word) if _is_hangul(word) else word.lower()
            if key:
                out.append(((key,), (m.start(group), m.end(group))))
    for m in (*_EN_ALTERNATIVE.finditer(text), *_EN_DROPPED.finditer(text)):
        phrase = _PHRASE_END.split(text[m.start(1) : m.start(1) + _PHRASE_CHARS], maxsplit=1)[0]
        toks = _tokens(phrase)
        if not toks or toks[0].low in skip:
            continue
        keys: list[str] = []
        for t in toks[:_PHRASE_WORDS]:
            if not t.low[:1].isalnum() or t.low in stops or t.low in _PHRASE_STOPS:
                break
            if t.low not in skip and t.key:
                keys.append(t.key)
        if keys:
            out.append((tuple(keys), (m.start(1), m.start(1) + toks[0].end)))
    return tuple(out)


def _other_person(older: str, newer: str) -> bool:
    """Whether the two facts speak of different people ("her sister" / "her")."""
    return any(another_person(a, b) for a in frames_of(older) for b in frames_of(newer))
