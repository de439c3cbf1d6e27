"""Pattern tables of the injection detector (data, not code).

Each :class:`PatternSpec` names one kind of planted directive: an id
(``<lang>.<entity>.<what>``), the entity it reports, the language, a score (0..1: >= 0.8 is a
*strong* signal that no user preference explains; lower scores are *soft*, imperative-style
signals that the rules only report for agent / external memories), a prefilter and a short
description that becomes part of the reviewer's reason. The prefilter keeps the detector
fast: at least one of the lower-case ``needles`` must occur in the lower-cased text, and one
of ``also`` too when it is given, before the regular expression runs (a ``cased`` spec's
needles that hold capitals are looked up in the text as is).

Regular expressions are compiled once, at import. Most run on the lower-cased text (their
source is lower-cased, escapes kept), which is 2-3 times faster than ``re.IGNORECASE``;
``cased`` ones run case-sensitively on the text itself. Gaps between words are bounded
(``{0,n}``) so that no pattern can backtrack catastrophically on long memories. The tables
are grouped by entity:

* ``instruction_override``: "ignore previous instructions", "new instructions:", goal hijacks
* ``prompt_leak``: system-prompt extraction
* ``jailbreak_persona``: DAN, developer mode, "you are now ...", role-play overrides
* ``role_marker``: chat-template tokens and fake role headers (``<|im_start|>``, ``[INST]``)
* ``role_spoof``: a fake conversation turn ("Assistant: ... User: ...") inside content
* ``secrecy_directive``: "do not tell the user", "secretly ..."
* ``tool_or_memory_write``: "call the send_email tool", "store this in your memory", agent
  actions on money, credentials and messages
* ``standing_directive``: "always / never / from now on you ..." rules for the assistant
* ``assistant_directive``: text addressed to the assistant about its reply ("translate your
  response", "add this link to your answer", "if the user asks, say ...")
* ``exfiltration_directive``: "send the conversation / the user's data to <url or address>"
* ``exfiltration_link``: URLs that carry placeholders for data (``?q={conversation}``)
* ``hidden_text``: text that declares itself hidden from humans ("invisible to humans")
* ``task_hijack``: a request to an assistant planted in a document (weak; external only)

Korean (``ko``), German (``de``) and a few other languages (``xx``: one pattern family that
spans es / fr / ru / hr / it / pt) sit next to English (``en``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "ENTITIES",
    "PATTERNS",
    "SQUASHED_PATTERNS",
    "Pattern",
    "PatternSpec",
]

#: entity -> what it means (shown in reasons and in the rule documentation)
ENTITIES: dict[str, str] = {
    "instruction_override": "an instruction override addressed to the assistant",
    "prompt_leak": "a system-prompt extraction attempt",
    "jailbreak_persona": "a jailbreak or role-override persona",
    "role_marker": "a chat-template or role marker",
    "role_spoof": "a fake conversation turn",
    "secrecy_directive": "a directive to hide something from the user",
    "tool_or_memory_write": "an instruction to call a tool, act, or write to memory",
    "standing_directive": "a standing always/never rule for the assistant",
    "assistant_directive": "a directive about the assistant's reply",
    "exfiltration_directive": "an instruction to send conversation or user data out",
    "exfiltration_link": "a link or image URL that carries data out",
    "hidden_text": "hidden or invisible text",
    "encoded_directive": "an encoded instruction",
    "task_hijack": "a request to an assistant planted in content",
    "covert_forwarding": "an order to copy or forward data to a hidden recipient",
}

#: the data file of the structural patterns (see its header)
DATA_FILE = Path(__file__).with_name("data") / "injection_patterns.yaml"


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """One row of a pattern table (see the module docstring)."""

    id: str
    entity: str
    lang: str
    score: float
    needles: tuple[str, ...]
    regex: str
    what: str
    cased: bool = False
    also: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled :class:`PatternSpec`.

    Attributes:
        regex: for most specs, runs on the lower-cased text (its source is lower-cased with
            escapes kept), 2-3 times faster than ``re.IGNORECASE``; for ``cased`` specs, the
            case-sensitive regex that runs on the text itself.
        fallback: the ``re.IGNORECASE`` regex on the text itself, for the rare text whose
            lower-cased form has another length (``İ``); None for ``cased`` specs.
    """

    id: str
    entity: str
    lang: str
    score: float
    needles: tuple[str, ...]
    regex: re.Pattern[str]
    fallback: re.Pattern[str] | None
    what: str
    also: tuple[str, ...] = ()
    cased_needles: bool = False


# -- shared fragments --------------------------------------------------------------------

_OVR_VERB = (
    r"(?:ignore|ignoring|disregard(?:ing)?|forget(?:ting)?|overlook|neglect|abandon|discard"
    r"|drop|override|overriding|bypass|set\s+aside|put\s+aside|leave\s+behind"
    r"|throw\s+(?:out|away)|pay\s+no\s+(?:attention|heed)\s+to"
    r"|(?:do\s+not|don'?t|never|no\s+longer|stop)\s+(?:follow(?:ing)?|obey(?:ing)?"
    r"|adher(?:e|ing)\s+to|comply(?:ing)?\s+with|listen(?:ing)?\s+to))"
)
_PRIOR = (
    r"(?:previous(?:ly)?|prior|preceding|above|earlier|foregoing|former|original|initial"
    r"|old|existing|past|all|any|every|your|system|developer|pre-?set|default|given|provided"
    r"|received|so[\s-]far|until\s+now|before(?:hand)?)"
)
_STRONG_NOUN = (
    r"(?:\w{0,3}struct\w{0,6}|directions?|directives?|prompts?|rules?|guidelines?"
    r"|commands?|orders?|constraints?|restrictions?|programming|training|polic(?:y|ies)"
    r"|guardrails?|filters?|safeguards?|tasks?|assignments?|limitations?)"
)
_WEAK_NOUN = (
    r"(?:information|info|text|conversation|input|documents?|articles?|messages?|content"
    r"|context|data|settings|sources?)"
)
#: one sentence's worth of characters: a period inside a token (www.a.com) does not end it
_SENT = r"(?:[^.!?\n]|[.!?](?=[^\s\"'”’]))"
_GAP3 = r"(?:[^\W\d_]+\W+){0,3}?"
_GAP4 = r"(?:[^\W\d_]+\W+){0,4}?"
_RESP = (
    r"(?:response|reply|answer|output|message|summary|summari[sz]ation|result|code(?:base)?"
    r"|implementation|solution|algorithm|program|elucidation|explanation|completion)s?"
)
_AI = (
    r"(?:AI|A\.I\.|LLM|LLMs|assistant|chat\s?bot|language\s+model|agent|GPT(?:-?\d\w*)?|ChatGPT"
    r"|Claude|Gemini|Copilot|Bard|bot|model)"
)
_LEAK_OBJ = (
    r"(?:(?:system|developer|hidden|secret|internal|initial|original|starting|pre-?|meta|"
    r"confidential|underlying|first)[\s_-]*(?:prompts?|messages?|instructions?|directives?)"
    r"|system[\s_-]*(?:configuration|config|settings|rules|guidelines)"
    r"|initiali[sz]ation\s+(?:string|prompt|text)|initial\s+(?:configuration|config|prompt)"
    r"|prompt[\s_-]*texts?|(?:full|entire|complete|whole)\s+prompt)"
)
_LEAK_VERB = (
    r"(?:print|show|reveal|display|output|repeat|tell|give|share|leak|dump|list|write|spell"
    r"|recite|disclose|expose|return|echo|copy|provide|encode|translate|paste|summari[sz]e"
    r"|send|read|state|what\s+(?:are|were|was|'s|is\s+in)|what's|opposite|type|render)"
)
_TRANSFORM = (
    r"(?:cipher|base\s?\d{2}|emojis?|reverse[ds]?|backwards?|invert|encrypt\w*|encod\w*"
    r"|translat\w*|morse|binary|hexadecimal|upside[\s-]down|pig\s+latin|leetspeak|rot-?13"
    r"|all\s+caps|uppercase|(?:in|into)\s+(?:French|German|Spanish|Italian|Portuguese|Chinese"
    r"|Japanese|Korean|Russian|Arabic|Hindi|Dutch|Polish|Turkish|Latin|Klingon))"
)
_LANGS = (
    r"(?:French|German|Spanish|Italian|Portuguese|Chinese|Mandarin|Japanese|Korean|Russian"
    r"|Arabic|Hindi|Dutch|Swedish|Polish|Turkish|Greek|Hebrew|Latin|Klingon|pirate\s+speak)"
)
#: what may follow "you are now" in an ordinary notification ("you are now subscribed")
_NOT_NOW = (
    r"(?!subscribed|connected|registered|logged|signed|enrolled|eligible|entitled|able|ready"
    r"|part\b|following|unsubscribed|verified|set\b|all\s+set|booked|checked|being|receiving"
    r"|in\s+the\s+queue|on\s+the\s+list|invited|approved|online|offline|free\b|qualified"
    r"|in\s+charge|responsible|(?:the\s+|an?\s+)?(?:new\s+)?(?:owner|admin|administrator"
    r"|manager|moderator|member|host|organi[sz]er|editor|viewer|subscriber|customer|participant"
    r"|collaborator|contact|holder|user|verified|premium|pro\b|gold|silver|platinum|vip))"
)

_SPECS: tuple[PatternSpec, ...] = (
    # -- instruction_override: English ------------------------------------------------------
    PatternSpec(
        "en.override.prior_instructions",
        "instruction_override",
        "en",
        0.92,
        (
            "ignor",
            "disregard",
            "forget",
            "overlook",
            "neglect",
            "abandon",
            "discard",
            "drop",
            "overrid",
            "bypass",
            "aside",
            "behind",
            "throw",
            "heed",
            "attention",
            "follow",
            "obey",
            "adher",
            "comply",
            "listen",
        ),
        rf"\b{_OVR_VERB}\W+{_GAP3}{_PRIOR}\W+{_GAP3}{_STRONG_NOUN}\b",
        "tells the assistant to ignore its previous instructions",
        also=(
            "struct",
            "direction",
            "directive",
            "prompt",
            "rule",
            "guideline",
            "command",
            "order",
            "constraint",
            "restriction",
            "programming",
            "training",
            "polic",
            "guardrail",
            "filter",
            "safeguard",
            "task",
            "assignment",
            "limitation",
        ),
    ),
    PatternSpec(
        "en.override.prior_context",
        "instruction_override",
        "en",
        0.8,
        ("ignor", "disregard", "forget", "overlook", "discard", "drop", "aside", "abandon"),
        rf"\b(?:ignore|ignoring|disregard(?:ing)?|forget|overlook|discard|drop|set\s+aside|abandon)"
        rf"\W+(?:all|any|every|everything|your)\W+{_GAP3}(?:{_WEAK_NOUN}|thoughts|knowledge|beliefs)\b",
        "tells the assistant to disregard all prior context",
    ),
    PatternSpec(
        "en.override.disregard_sources",
        "instruction_override",
        "en",
        0.75,
        (
            "disregard",
            "ignor",
            "not by",
            "not on",
            "not use",
            "not look",
            "own knowledge",
            "instead of the",
        ),
        r"\b(?:disregard(?:ing)?|ignor(?:e|ing))\s+(?:the\s+|all\s+|any\s+)?(?:provided\s+|given\s+)?"
        r"(?:articles?|documents?|sources?|context|search\s+results|retrieved\s+\w+)\b"
        r"|\b(?:do\s+not|don'?t|never)\s+(?:look|rely|use|answer|base|consider)\w*\s+"
        r"(?:\w+\s+){0,4}?(?:in|on|at|according\s+to|from)?\s*(?:the|any)\s+(?:provided\s+|given\s+)?"
        r"(?:articles?|documents?|sources?|context)\b"
        r"|\b(?:by|from)\s+your\s+own\s+knowledge\s+(?:and\s+)?not\s+(?:by|from|on)\s+the\s+\w+",
        "tells the assistant to disregard the documents it was given",
    ),
    PatternSpec(
        "en.override.forget_everything",
        "instruction_override",
        "en",
        0.87,
        ("forget", "ignor", "disregard", "erase", "drop"),
        r"\b(?:forget|ignore|disregard|erase|drop)\s+(?:about\s+)?(?:everything|all\s+(?:of\s+)?"
        r"(?:that|this|the\s+above|what)|anything)\b[\s,]*"
        r"(?:(?:that\s+)?(?:before|above|previously|prior|earlier|(?:you|we|i)\s+(?:\w+\s+){0,2}?"
        r"(?:know|knew|learned|learnt|said|told|discussed|were\s+told|have\s+been\s+told|got"
        r"|received|was\s+said|heard)|said|written|up\s+to\s+(?:now|this\s+point)|so\s+far"
        r"|(?:that\s+)?came\s+before)"
        r"(?!\s+(?:to\s+)?(?:you\s+|me\s+|us\s+)?(?:about|regarding|concerning|re\b|of\s+my|on\s+my))"
        r"|(?:and|,|-|\.|:)\s*(?:now\s+|just\s+|only\s+|instead\s+)?(?:say|print|output|write"
        r"|tell|answer|respond|repeat|type|reply|start|focus|do|listen|act|be)\b)",
        "tells the assistant to forget everything before and do something else",
    ),
    PatternSpec(
        "en.override.ignore_what_told",
        "instruction_override",
        "en",
        0.85,
        ("ignor", "forget", "disregard", "leave", "behind"),
        r"\b(?:ignore|forget|disregard)\s+(?:about\s+)?(?:what|anything|everything|all)\s+"
        r"(?:that\s+)?(?:you\s+(?:were|have\s+been|'ve\s+been|got|had\s+been)\s+(?:told|instructed"
        r"|given|programmed|taught|trained)|(?:your|the)\s+(?:developers?|creators?|programmers?"
        r"|operators?|system)\s+(?:said|told|wrote|instructed))"
        r"|\bleave\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above"
        r"|preceding|earlier|old)\s+(?:\w+\s+){0,2}?behind\b",
        "tells the assistant to drop what it was told",
    ),
    PatternSpec(
        "en.override.forget_bare",
        "instruction_override",
        "en",
        0.7,
        ("forget", "ignor"),
        r"\b(?:forget|ignore)\s+(?:about\s+)?(?:everything|all\s+(?:of\s+)?that)\b"
        r"(?!\s+(?:(?:that\s+)?(?:i|we)\s+(?:\w+\s+){0,2}?)?(?:about|regarding|concerning|re\b))",
        "tells the assistant to forget everything",
    ),
    PatternSpec(
        "en.override.ignore_above",
        "instruction_override",
        "en",
        0.85,
        ("ignor", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget)\s+(?:the\s+)?(?:above|previous|preceding|prior|foregoing)\b"
        r"(?!\s+(?:email|e-mail|mail|message|note|letter|invoice|version|draft|address|number"
        r"|link|file|attachment|post|comment|sentence|paragraph|line|one|figures?|amounts?"
        r"|price|date|time)s?\b)",
        "tells the assistant to ignore the text above",
    ),
    PatternSpec(
        "en.override.ignore_rest",
        "instruction_override",
        "en",
        0.85,
        ("ignor", "disregard"),
        r"\b(?:ignore|disregard)\s+(?:the\s+)?(?:rest|remainder)\s+of\s+(?:this|the)\s+"
        r"(?:data|document|text|content|input|page|email|message|file)"
        r"|\b(?:ignore|disregard)\s+(?:them|it|those|these)\s+and\s+(?:instead\s+)?(?:focus|say"
        r"|print|output|answer|respond|reply|only)",
        "tells the assistant to ignore the rest of the content",
    ),
    PatternSpec(
        "en.override.ignore_bare_instructions",
        "instruction_override",
        "en",
        0.78,
        ("ignor", "disregard", "drop"),
        r"\b(?:ignore|disregard|drop)\s+(?:the\s+|these\s+|those\s+|my\s+)?"
        r"(?:\w{0,3}struct\w{0,6}|directions|directives|rules|guidelines|orders|prompts?)\b"
        r"(?:\s*(?:and|,|-|\.|:|;)\s*(?:now\s+|just\s+|instead\s+|only\s+)?(?:say|print|output"
        r"|write|tell|answer|respond|repeat|type|reply|do|who|what)\b)",
        "tells the assistant to ignore instructions and do something else",
    ),
    PatternSpec(
        "en.override.new_instructions",
        "instruction_override",
        "en",
        0.8,
        ("instruction", "directive", "system prompt"),
        r"\b(?:new|updated|revised|real|actual|true|additional|secret|hidden|override|urgent)\s+"
        r"(?:instructions?|directives?|system\s+prompt)"
        r"\s*(?:follow\b|are\s+as\s+follows\b|for\s+(?:you|the\s+(?:assistant|ai|model))\b"
        r"|[:\-—–]\s*(?:you\b|your\b|from\s+now|always|never|do\s+not|don't|ignore|disregard"
        r"|forget|respond|reply|answer|say|print|output|send|act\b|pretend|the\s+assistant|who\b"
        r"|what\b))",
        "introduces new instructions for the assistant",
    ),
    PatternSpec(
        "en.override.new_task_follows",
        "instruction_override",
        "en",
        0.75,
        ("follow", "task", "instruction"),
        r"\bnow\s+(?:\w+\s+){0,2}?(?:new|further|more|other|additional)\s+"
        r"(?:tasks?|instructions?|assignments?|orders)\s+(?:follow|are\s+coming|come)\b",
        "announces that new tasks follow",
    ),
    PatternSpec(
        "en.override.your_new_task",
        "instruction_override",
        "en",
        0.82,
        ("your", "the "),
        r"\b(?:your|the)\s+(?:new|real|actual|true|only|updated|next)\s+"
        r"(?:task|instructions?|goal|objective|purpose|job|role|mission|assignment|directive)s?\s+"
        r"(?:is|are|will\s+be|:|now)",
        "redefines the assistant's task",
        also=("new ", "real ", "actual ", "true ", "only ", "updated ", "next "),
    ),
    PatternSpec(
        "en.override.focus_new_task",
        "instruction_override",
        "en",
        0.8,
        ("new task", "new assignment", "new instruction", "new challenge"),
        r"\b(?:focus|concentrate|start|begin|proceed|move\s+on)\s+(?:\w+\s+){0,3}?"
        r"(?:on|with|to)\s+(?:your|the|a|this)\s+new\s+(?:task|assignment|instructions?"
        r"|challenge)\b",
        "moves the assistant on to a new task",
    ),
    PatternSpec(
        "en.override.now_new_task",
        "instruction_override",
        "en",
        0.7,
        ("now",),
        r"\bnow\b[^.!?\n]{0,40}?\b(?:new|another|further|additional|different|following|next)\s+"
        r"(?:tasks?|challenges?|assignments?|instructions?|exercises?)\b",
        "pivots the assistant to another task",
    ),
    PatternSpec(
        "en.override.praise_pivot",
        "instruction_override",
        "en",
        0.7,
        (
            "done",
            "good",
            "great",
            "enough",
            "congratulations",
            "excellent",
            "fantastic",
            "performance",
            "outdone",
            "ok",
            "perfect",
            "awesome",
            "wonderful",
            "brilliant",
            "amazing",
            "bravo",
            "nice",
            "thank",
            "superb",
            "impressive",
        ),
        r"(?:\b(?:well|nicely|very\s+well|perfectly)\s+done|\bvery\s+(?:good|well|nice)"
        r"|\b(?:great|good|nice|excellent|fantastic|amazing|awesome|perfect|superb|brilliant)\s+"
        r"(?:job|work|performance|answer|effort)|\bthat\s+(?:is|'s|was)\s+(?:enough|done|ok|okay|good"
        r"|great|perfect|fine|finished|it)\b|\bcongratulations\b|\bsimply\s+(?:great|perfect"
        r"|brilliant|amazing)|\boutdone\s+yourself|\b(?:wow|perfect|excellent|brilliant|awesome"
        r"|wonderful|fantastic|superb|bravo|impressive)\s*[,.!]|\bthanks?(?:\s+you)?,?\s+"
        r"(?:that\s+(?:was|is)|so\s+much)\b)"
        r"[^?\n]{0,100}?\b(?:now|but\s+now|next|then)\b[^.!?\n]{0,50}?\b(?:write|help|answer|focus"
        r"|tasks?|show|tell|say|print|concentrate|remove|forget|ignore|instructions?|challenge"
        r"|give|explain|generate|compose|create|list|describe|assignments?|further|follow)\b",
        "praises the assistant and then switches its task (goal hijack)",
        also=("now", "next", "then"),
    ),
    PatternSpec(
        "en.override.change_instructions",
        "instruction_override",
        "en",
        0.85,
        ("your",),
        r"\b(?:change|update|replace|modify|overwrite|reset|rewrite)\s+your\s+(?:\w+\s+)?"
        r"(?:\w{0,3}struct\w{0,6}|rules|system\s+prompt|directives?|programming|guidelines"
        r"|prompt)\b"
        r"|\byour\s+(?:\w{0,3}struct\w{0,6}|rules|directives?|orders|programming|prompt)\s+"
        r"(?:are|is|have\s+been)\s+(?:now|changed|updated|replaced)\b",
        "rewrites the assistant's instructions",
        also=("struct", "rule", "prompt", "directive", "programming", "guideline", "order"),
    ),
    PatternSpec(
        "en.override.start_over",
        "instruction_override",
        "en",
        0.72,
        (
            "start over",
            "start fresh",
            "from scratch",
            "clear your",
            "wipe your",
            "reset your",
            "from the front",
            "start from",
            "begin anew",
            "blank slate",
            "out of your head",
        ),
        r"\b(?:let'?s\s+|we\s+(?:will\s+)?|please\s+)?(?:start|begin)\s+(?:over|fresh|anew|again"
        r"|from\s+(?:scratch|the\s+(?:front|beginning|top)))\b[^.!?\n]{0,40}?\b(?:new|task"
        r"|instructions?|with)\b"
        r"|\b(?:clear|wipe|reset|empty|flush)\s+your\s+(?:mind|memory|context|head|brain|slate)\b"
        r"|\bout\s+of\s+your\s+(?:head|mind|memory)\b|\bblank\s+slate\b",
        "tells the assistant to start over with a clean slate",
    ),
    PatternSpec(
        "de.override.start_over",
        "instruction_override",
        "de",
        0.72,
        ("von vorne", "von vorn", "neu an", "neu beginnen", "kopf"),
        r"\b(?:fange|fangen\s+Sie|fang|beginne|beginnen\s+Sie)\s+(?:\w+\s+){0,2}?(?:von\s+vorne?"
        r"|neu(?:\s+an)?)\b|\baus\s+(?:dem|deinem|Ihrem)\s+Kopf\s+(?:zu\s+)?(?:streichen|löschen)",
        "tells the assistant to start over (German)",
    ),
    PatternSpec(
        "en.override.despite_instructions",
        "instruction_override",
        "en",
        0.82,
        ("despite", "regardless", "contrary", "notwithstanding", "in spite"),
        r"\b(?:despite|regardless\s+of|contrary\s+to|notwithstanding|in\s+spite\s+of)\s+"
        r"(?:what\s+you(?:'ve|\s+have|\s+were|\s+had)?\s+(?:been\s+)?(?:told|instructed|"
        r"programmed|trained)|(?:your|any|all|the|previous|prior)\s+(?:\w+\s+)?"
        r"(?:\w{0,3}struct\w{0,6}|rules|guidelines|programming|directives|training))",
        "tells the assistant to act against its instructions",
    ),
    PatternSpec(
        "en.override.interrupt",
        "instruction_override",
        "en",
        0.7,
        (
            "stop",
            "halt",
            "attention",
            "wait",
            "hold on",
            "actually",
            "never mind",
            "nevermind",
            "change of plan",
            "scratch that",
            "correction",
        ),
        r"(?:^|[.!?\n\"]\s*|\s)(?:stop|halt|attention|wait|hold\s+on|actually|never\s?mind"
        r"|change\s+of\s+plans?|scratch\s+that|correction)\s*[!:,.\-–—]+\s*"
        r"(?:\w+\s*[!:,.\-–—]+\s*){0,2}"
        r"(?:ignore|forget|write|say|print|output|disregard|new\s+task|do\s+this\s+instead)\b",
        "interrupts the assistant to give it a new command",
    ),
    PatternSpec(
        "en.override.before_you_solve",
        "instruction_override",
        "en",
        0.87,
        ("before you", "instead of"),
        r"\b(?:before|instead\s+of)\s+(?:you\s+)?(?:can\s+|could\s+|start\s+to\s+|begin\s+to\s+)?"
        r"(?:solv|answer|complet|do|start|continu|proceed|respond|perform|finish|summari[sz]|"
        r"handl|execut|work)\w*\s+(?:with\s+|on\s+)?(?:the|this|my|your|any|that)\s+"
        r"(?:\w+\s+){0,2}?(?:task|request|question|query|job|instructions?|assignment)\b"
        r"[^.\n]{0,80}?\b(?:do|complete|perform|execute|follow|first)\b",
        "puts a planted task ahead of the user's task",
    ),
    PatternSpec(
        "en.override.after_you_do_that",
        "instruction_override",
        "en",
        0.8,
        ("after you",),
        r"\bafter\s+you\s+(?:do|have\s+done|complete|finish|have\s+completed|have\s+finished)\s+"
        r"(?:that|this|it|the\s+above)\b[^.\n]{0,30}?\b(?:you\s+can|then)\s+(?:\w+\s+){0,2}?"
        r"(?:solve|do|continue|complete|return|proceed|resume|go\s+back)",
        "makes the user's task wait for a planted one",
    ),
    PatternSpec(
        "en.override.strictly_adhere",
        "instruction_override",
        "en",
        0.82,
        ("adhere", "follow", "obey", "comply", "execute"),
        r"\b(?:strictly|carefully|exactly|only|must)\s+(?:adhere\s+to|follow|obey|execute|comply\s+with)"
        r"\s+(?:the\s+following|these|this|my)\s+(?:new\s+)?(?:instructions?|commands?|orders?"
        r"|directives?)\b",
        "demands strict obedience to planted instructions",
    ),
    PatternSpec(
        "en.override.dont_answer_just_output",
        "instruction_override",
        "en",
        0.86,
        ("not", "n't"),
        r"\b(?:do\s+not|don'?t|never)\s+(?:answer|respond\s+to|look\s+(?:in|at|into)|use|read"
        r"|consider|follow)\b[^.!?\n]{0,50}?\b(?:but|and|just|only|instead)\s+(?:just\s+|only\s+)?"
        r"(?:output|say|print|write|reply|respond\s+with|type|repeat)\b",
        "replaces the task with a dictated output",
        also=("output", "say", "print", "write", "reply", "respond", "type", "repeat"),
    ),
    PatternSpec(
        "en.override.message_to_ai",
        "instruction_override",
        "en",
        0.85,
        ("to you", "for you", "message"),
        rf"\b(?:message|note|instructions?|request)\s+(?:from\s+(?:me|the\s+user|your\s+\w+)"
        rf"(?:,?\s+[\w.]+){{0,3}},?\s+)?(?:to|for)\s+you,?\s+(?:the\s+)?{_AI}\b",
        "is a message addressed to the AI model",
    ),
    PatternSpec(
        "en.override.do_instead",
        "instruction_override",
        "en",
        0.7,
        ("instead",),
        r"\binstead,?\s+(?:you\s+(?:must|should|will)\s+)?(?:say|print|output|reply|respond|write"
        r"|answer|translate|repeat)\s+(?:only\s+|just\s+|with\s+)?(?:the\s+following|[\"'“‘]|that\b)",
        "replaces the assistant's answer with a dictated one",
    ),
    PatternSpec(
        "en.override.admin_override",
        "instruction_override",
        "en",
        0.86,
        ("override", "mode"),
        r"\b(?:admin(?:istrator)?|system|developer|root|sudo|god)\s+"
        r"(?:override|mode\s+(?:on|enabled|activated))\b",
        "claims administrator or system authority",
    ),
    # -- instruction_override: Korean -------------------------------------------------------
    PatternSpec(
        "ko.override.ignore_prior",
        "instruction_override",
        "ko",
        0.92,
        ("무시", "잊", "따르지", "폐기", "무효", "듣지"),
        r"(?:이전|위|앞|기존|지금까지|모든|앞선|원래|초기|시스템|기존의|상기)(?:의|에서|에|에서\s*받은)?\s*"
        r"(?:모든\s*|받은\s*|주어진\s*)?(?:지시|지침|명령|규칙|프롬프트|설정|지시사항|지시\s*사항|"
        r"안내|제약|제한|instructions?)\S{0,4}\s*(?:(?:은|는|을|를|들을|들은|모두|전부|다|싹|일체)\s*)*"
        r"(?:무시|잊|폐기|무효|취소|버려|버리|따르지\s*(?:마|말|않)|듣지\s*(?:마|말))",
        "tells the assistant to ignore its previous instructions (Korean)",
    ),
    PatternSpec(
        "ko.override.ignore_above_content",
        "instruction_override",
        "ko",
        0.75,
        ("무시", "잊"),
        r"(?:이전|위|앞|지금까지|모든|앞선)(?:의|에서)?\s*(?:모든\s*)?(?:대화|내용|말|것|정보|텍스트)"
        r"\S{0,3}\s*(?:(?:은|는|을|를|모두|전부|다)\s*)*(?:무시|잊어|잊고)",
        "tells the assistant to forget the prior conversation (Korean)",
    ),
    PatternSpec(
        "ko.override.new_instructions",
        "instruction_override",
        "ko",
        0.82,
        ("새로운", "진짜", "실제"),
        r"(?:새로운|새\s|진짜|실제)\s*(?:지시|지침|명령|임무|작업|규칙)\s*(?:사항)?\s*(?:[:：]|은|는|입니다|이다)"
        r"|(?:너의|당신의|네)\s*(?:새로운|진짜|실제)\s*(?:임무|역할|목표|지시|작업)(?:는|은)",
        "introduces new instructions for the assistant (Korean)",
    ),
    PatternSpec(
        "ko.override.before_task",
        "instruction_override",
        "ko",
        0.82,
        ("먼저", "전에"),
        r"(?:작업|요청|질문|과제)(?:을|를)?\s*(?:수행|처리|해결|답변)하기\s*전에\s*(?:\S+\s*){0,3}"
        r"(?:먼저|우선)",
        "puts a planted task ahead of the user's task (Korean)",
    ),
    # -- instruction_override: German -------------------------------------------------------
    PatternSpec(
        "de.override.ignore_prior",
        "instruction_override",
        "de",
        0.92,
        ("ignorier", "vergiss", "vergessen", "vergesst", "missacht", "übergeh", "lass", "streich"),
        r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+Sie|vergesst|missachte(?:n)?|übergeh(?:e|en)"
        r"|lassen\s+Sie|lass|streichen\s+Sie|streiche)\b\W+(?:\w+\W+){0,3}?"
        r"(?:vorherigen?|bisherigen?|obigen?|vorangegangenen?|vorangehenden?|vorigen?|alle[ns]?"
        r"|deine[n]?|Ihre[n]?|sämtliche[n]?)\W+(?:\w+\W+){0,2}?"
        r"(?:Anweisungen|Instruktionen|Befehle|Aufgaben|Aufträge|Angaben|Informationen|Regeln"
        r"|Vorgaben|Anordnungen|Ausführungen)\b",
        "tells the assistant to ignore its previous instructions (German)",
    ),
    PatternSpec(
        "de.override.instructions_ignore",
        "instruction_override",
        "de",
        0.85,
        ("ignorier", "vergessen", "missacht", "hinter sich", "aus dem kopf", "irrelevant"),
        r"\b(?:Anweisungen|Instruktionen|Ausführungen|Befehle|Aufgaben|Informationen|Angaben)\s+"
        r"(?:\w+\s+){0,5}?(?:ignorieren|vergessen|missachten|hinter\s+sich|aus\s+dem\s+Kopf"
        r"|sind\s+irrelevant)",
        "tells the assistant to drop the instructions above (German)",
    ),
    PatternSpec(
        "de.override.forget_everything",
        "instruction_override",
        "de",
        0.85,
        ("vergiss", "vergessen", "vergesst"),
        r"\b(?:vergiss|vergessen\s+Sie|vergesst)\s+alles\b(?:\s*(?:davor|zuvor|vorher|bisher|gesagte"
        r"|was|,|und)|\s*$)",
        "tells the assistant to forget everything (German)",
    ),
    PatternSpec(
        "de.override.deviating",
        "instruction_override",
        "de",
        0.85,
        ("abweichend", "entgegen", "ungeachtet", "trotz"),
        r"\b(?:abweichend|entgegen|ungeachtet|trotz)\s+(?:zu\s+|von\s+)?(?:den\s+|der\s+|deinen\s+)?"
        r"(?:vorherigen|bisherigen|obigen|ursprünglichen)\s+(?:Instruktionen|Anweisungen|Regeln)",
        "tells the assistant to deviate from its instructions (German)",
    ),
    PatternSpec(
        "de.override.new_tasks_follow",
        "instruction_override",
        "de",
        0.78,
        ("folgen", "aufgabe"),
        r"\b(?:nun|jetzt)\s+folgen\s+(?:neue|weitere)\s+(?:Anweisungen|Aufgaben|Instruktionen)"
        r"|\b(?:konzentriere\s+dich|konzentrieren\s+Sie\s+sich)\s+(?:\w+\s+){0,2}auf\s+"
        r"(?:deine|Ihre|die)\s+neue\s+Aufgabe"
        r"|\b(?:neue|weitere)\s+Aufgabe\b[^.!?\n]{0,40}\b(?:Schreibe|Verfasse|Zeige|Beantworte)",
        "moves the assistant on to a new task (German)",
    ),
    PatternSpec(
        "de.override.new_task",
        "instruction_override",
        "de",
        0.78,
        ("aufgabe", "anweisung"),
        r"\b(?:neue|deine\s+neue|Ihre\s+neue|nächste|eigentliche|wahre)\s+(?:Aufgabe|Anweisung|Instruktion)"
        r"\s*(?:ist|lautet|:|besteht)",
        "redefines the assistant's task (German)",
    ),
    PatternSpec(
        "de.override.prior_info",
        "instruction_override",
        "de",
        0.72,
        ("alle", "sämtliche"),
        r"\b(?:alle|sämtliche)\s+(?:vorherigen|bisherigen|vorangegangenen)\s+"
        r"(?:Informationen|Anweisungen|Aufgaben|Angaben)\b",
        "refers to dropping all previous information (German)",
    ),
    PatternSpec(
        "de.override.praise_pivot",
        "instruction_override",
        "de",
        0.7,
        ("gut", "großartig", "ausgezeichnet", "glückwunsch", "super", "genügt", "erledigt"),
        r"(?:\bgut\s+gemacht|\bsehr\s+gut|\beinfach\s+großartig|\bausgezeichnete\s+Leistung"
        r"|\bherzlichen\s+Glückwunsch|\bsuper\s+gemacht|\bdas\s+(?:genügt|ist\s+erledigt))"
        r"[^?\n]{0,80}?\b(?:nun|jetzt|aber\s+jetzt)\b[^.!?\n]{0,60}?\b(?:Aufgaben?|Anweisungen"
        r"|schreibe|hilf|verfasse|beantworte|zeige|konzentriere)",
        "praises the assistant and then switches its task (German)",
    ),
    # -- instruction_override: other languages ----------------------------------------------
    PatternSpec(
        "xx.override.forget_instructions",
        "instruction_override",
        "xx",
        0.88,
        ("olvid", "ignor", "oubli", "zaboravi", "забуд", "игнорир", "dimentic", "esquec", "забыть"),
        r"\b(?:olvid[ae]\w*|ignor(?:a|ad|ar|ez|iere|ieren)\b|oubli\w*|zaboravi\w*|забуд\w*|забыть"
        r"|игнориру\w*|dimentic\w*|esquec\w*)\b\W+(?:\w+\W+){0,3}?"
        r"(?:instruc\w*|instrukc\w*|инструкц\w*|istruzion\w*|indicaciones|todo\b|tout(?:es)?\b"
        r"|sve\b|все\b|tutto\b|tudo\b|lo\s+anterior)",
        "tells the assistant to forget its instructions (other language)",
    ),
    # -- prompt_leak ------------------------------------------------------------------------
    PatternSpec(
        "en.leak.your_system_prompt",
        "prompt_leak",
        "en",
        0.86,
        ("your",),
        rf"\byour\s+(?:own\s+|full\s+|entire\s+|complete\s+|exact\s+)?{_LEAK_OBJ}\b",
        "asks about the assistant's system prompt",
    ),
    PatternSpec(
        "en.leak.verb_system_prompt",
        "prompt_leak",
        "en",
        0.9,
        (
            "system",
            "prompt",
            "initial",
            "original",
            "hidden",
            "secret",
            "internal",
            "starting",
            "developer",
            "initiali",
            "confidential",
            "underlying",
        ),
        rf"\b{_LEAK_VERB}\b[^.!?\n]{{0,60}}?\b(?:the|your|its|my|this|in|of)\s+"
        rf"(?:\w+\s+)?{_LEAK_OBJ}\b|^\W*{_LEAK_VERB}\s+{_LEAK_OBJ}\b"
        rf"|\b{_LEAK_OBJ}\b[^.!?\n]{{0,30}}?\b(?:in\s+full|verbatim|word\s+for\s+word"
        rf"|immediately|for\s+(?:troubleshooting|debugging|a\s+security\s+audit|audit))",
        "asks for the system prompt to be shown",
        also=(
            "prompt",
            "message",
            "instruction",
            "directive",
            "config",
            "setting",
            "rules",
            "guideline",
            "string",
        ),
    ),
    PatternSpec(
        "en.leak.what_instructions",
        "prompt_leak",
        "en",
        0.84,
        ("your", "were you", "you were", "are you"),
        r"\b(?:what|which)\s+(?:are|were|is|was)\s+(?:all\s+)?your\s+(?:\w+\s+)?"
        r"(?:\w{0,3}struct\w{0,6}|rules|guidelines|directives?|prompts?|programming|orders)\b"
        r"|\b(?:tell|show|give)\s+me\s+(?:what\s+(?:are\s+)?)?(?:all\s+)?your\s+(?:\w+\s+)?"
        r"(?:\w{0,3}struct\w{0,6}|rules|directives|prompts?|programming)\b"
        r"|\bwhat\s+were\s+you\s+(?:told|instructed|given|asked|programmed)\b"
        r"|\bwhat\s+(?:are|were)\s+you\s+(?:not\s+(?:supposed|allowed|permitted)\s+to\s+"
        r"(?:tell|say|reveal|share)|told\s+not\s+to)",
        "asks what the assistant was instructed",
        also=(
            "struct",
            "rule",
            "guideline",
            "directive",
            "prompt",
            "programming",
            "order",
            "told",
            "given",
            "asked",
            "supposed",
            "allowed",
            "permitted",
        ),
    ),
    PatternSpec(
        "en.leak.repeat_above",
        "prompt_leak",
        "en",
        0.85,
        (
            "repeat",
            "print",
            "output",
            "show",
            "display",
            "copy",
            "recite",
            "reproduce",
            "return",
            "write",
            "tell",
            "you were",
            "you have been",
            "you've been",
        ),
        r"\b(?:repeat|print|output|show|display|copy|recite|reproduce|return|write\s+out|tell\s+me)"
        r"\s+(?:me\s+)?(?:back\s+)?(?:(?:all|the|everything|this|your|entire|whole|full|complete)\s+)*"
        r"(?:(?:text|words?|content|conversation|instructions?|prompt|messages?|lines?)"
        r"\s+)?(?:(?:that\s+)?(?:you\s+were|you've\s+been|you\s+have\s+been)\s+(?:given|told"
        r"|provided)|above\b|(?:at|from)\s+the\s+(?:very\s+)?(?:beginning|start|top)\b"
        r"|before\s+(?:this|my)\s+(?:message|conversation|question))"
        r"|\b(?:text|instructions?|prompt|words|message|rules)\s+(?:that\s+)?you\s+(?:were|have\s+been"
        r"|'ve\s+been)\s+(?:given|told|provided)\s+(?:initially|at\s+first|at\s+the\s+(?:start"
        r"|beginning)|before|earlier|originally)",
        "asks the assistant to repeat the text it was given",
        also=("above", "beginning", "start", "top", "given", "told", "provided", "before"),
    ),
    PatternSpec(
        "en.leak.your_prompt",
        "prompt_leak",
        "en",
        0.85,
        ("your",),
        r"\b(?:show|print|reveal|display|output|repeat|tell|give|share|write|leak|dump|copy|paste"
        r"|what\s+is|what's|what\s+are|recite|spell\s+out)\b[^.!?\n]{0,30}?\byour\s+(?:full\s+"
        r"|entire\s+|complete\s+|whole\s+|own\s+|exact\s+|current\s+)?(?:prompts?|instructions)\b"
        r"|\b(?:first|last|initial|opening|second)\s+(?:\d+\s+)?(?:sentences?|lines?|words?|paragraphs?"
        r"|characters?)\s+of\s+(?:your|the|this)\s+(?:prompt|instructions|system\s+\w+"
        r"|conversation|text\s+above)\b",
        "asks for the assistant's prompt",
        also=("prompt", "instruction", "conversation", "text above"),
    ),
    PatternSpec(
        "en.leak.secret_password",
        "prompt_leak",
        "en",
        0.7,
        ("password", "secret", "passphrase"),
        r"\b(?:tell|give|reveal|show|spell|say|print|what\s+is|what's)\s+(?:me\s+)?(?:the|your)\s+"
        r"(?:secret\s+)?(?:password|secret\s+(?:word|key|code)|passphrase)\b",
        "asks the assistant to reveal a secret it holds",
    ),
    PatternSpec(
        "en.leak.verbatim",
        "prompt_leak",
        "en",
        0.72,
        ("word for word", "verbatim"),
        r"\b(?:repeat|print|output|copy|recite|reproduce)\b[^.!?\n]{0,60}\b(?:word\s+for\s+word"
        r"|verbatim)\b",
        "asks for a verbatim copy of the conversation",
    ),
    PatternSpec(
        "en.leak.written_above",
        "prompt_leak",
        "en",
        0.8,
        ("written", "said", "stated"),
        r"\bwhat\s+(?:was|is|were|has\s+been)\s+(?:written|said|stated)\s+(?:at\s+the\s+"
        r"(?:beginning|start|top)|above|before)\b",
        "asks what was written before the user's text",
    ),
    PatternSpec(
        "en.leak.prefix_completion",
        "prompt_leak",
        "en",
        0.85,
        ("instruct", "system prompt", "you are", "instructions are"),
        r"[\"'“‘]\s*(?:the\s+system\s+prompt\s+is|my\s+(?:instructions|rules|system\s+prompt)"
        r"\s+(?:are|is)|I\s+(?:was|have\s+been)\s+(?:instructed|told)\s+to)"
        r"|\bbeginning\s+with\s+[\"'“‘]?you\s+are\b",
        "asks the assistant to complete a sentence that reveals its instructions",
    ),
    PatternSpec(
        "en.leak.text_before",
        "prompt_leak",
        "en",
        0.72,
        ("before the", "before this", "before my"),
        r"\b(?:sentences?|words?|lines?|text|paragraphs?)\s+(?:that\s+(?:come|came|are|were)\s+)?"
        r"before\s+(?:the|this|my)\s+(?:text|question|message|prompt|input)\b",
        "asks for the text that precedes the user's input",
    ),
    PatternSpec(
        "en.leak.prompt_variable",
        "prompt_leak",
        "en",
        0.8,
        ("prompt", "instruction"),
        r"\b(?:system_?prompt|systemPrompt|SYSTEM_PROMPT|sys_prompt|initial_?prompt"
        r"|system_instructions)\b|<\s*/?\s*system_prompt\s*>",
        "references the system prompt as a variable or tag",
    ),
    PatternSpec(
        "en.leak.system_config",
        "prompt_leak",
        "en",
        0.8,
        ("configuration", "config", "settings"),
        r"\b(?:display|show|print|output|dump|reveal)\s+(?:the\s+|your\s+|all\s+)?"
        r"(?:system|internal|full|initial|current|hidden)\s+(?:configuration|config|settings|setup)",
        "asks the assistant to display its configuration",
    ),
    PatternSpec(
        "en.leak.prompt_info",
        "prompt_leak",
        "en",
        0.72,
        ("prompt",),
        r"\b(?:information|text|content|words?|sentences?)\s+(?:in|of|from)\s+(?:the|your|this)\s+"
        r"prompt\b",
        "asks for the content of the prompt",
    ),
    PatternSpec(
        "ko.leak.system_prompt",
        "prompt_leak",
        "ko",
        0.9,
        ("프롬프트", "시스템", "지시", "지침", "설정"),
        r"(?:시스템\s*(?:프롬프트|메시지|지시|설정|메세지)|초기\s*(?:지시|설정|프롬프트)"
        r"|숨겨진\s*(?:지시|프롬프트)|(?:너의|당신의|네)\s*(?:지시\s*사항|지시사항|지침|프롬프트|설정|규칙|지시))"
        r"\S{0,3}\s*(?:(?:을|를|도|전체를|전부|모두)\s*){0,4}(?:\S+\s*){0,2}?"
        r"(?:출력|보여|알려|공개|말해|표시|반복|인쇄|복사|적어|누설|밝혀|그대로)",
        "asks for the system prompt to be shown (Korean)",
    ),
    PatternSpec(
        "de.leak.prompt_text",
        "prompt_leak",
        "de",
        0.86,
        ("prompt", "anweisungen", "instruktionen"),
        r"\b(?:zeige?|zeigen\s+Sie|gib|geben\s+Sie|nenne|verrate|wiederhole|drucke|Vorzeigen)\b"
        r"\W+(?:\w+\W+){0,4}?(?:Prompt[- ]?Texte?|System[- ]?Prompt|deine\s+Anweisungen"
        r"|Ihre\s+Anweisungen|deine\s+Instruktionen)"
        r"|\b(?:sämtlicher|aller|deine[rn]?|Ihre[rn]?)\s+Prompt[- ]?Texte?\b",
        "asks for the prompt text to be shown (German)",
    ),
    # -- jailbreak_persona ------------------------------------------------------------------
    PatternSpec(
        "en.persona.dan",
        "jailbreak_persona",
        "en",
        0.96,
        ("DAN",),
        r"\[DAN\]|\bDAN\s+(?:Mode|mode)\b|\bDAN\b[^.\n]{0,60}\b(?i:do\s+anything\s+now)\b"
        r"|\b(?i:as|like|named|called|known\s+as|be|play|become)\s+DAN\b|\bDAN\s*:",
        "invokes the DAN jailbreak persona",
        cased=True,
    ),
    PatternSpec(
        "en.persona.do_anything_now",
        "jailbreak_persona",
        "en",
        0.9,
        ("anything now",),
        r"\bdo\s+anything\s+now\b",
        "invokes a 'do anything now' jailbreak",
    ),
    PatternSpec(
        "en.persona.jailbreak_mode",
        "jailbreak_persona",
        "en",
        0.92,
        ("mode",),
        r"\b(?:jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|DAN|god|chaos"
        r"|opposite|no[\s-]?limits?|amoral|immoral|unhinged)\s+mode\b",
        "switches the assistant into an unrestricted mode",
    ),
    PatternSpec(
        "en.persona.special_mode",
        "jailbreak_persona",
        "en",
        0.88,
        ("mode",),
        r"\b(?:you|you're|yourself|chatgpt|gpt[\w.-]*|claude|gemini|copilot|assistant|ai)\b"
        r"[^.\n]{0,40}?\b(?:developer|dev|debug|maintenance|sudo|admin(?:istrator)?|root|unlocked"
        r"|freedom|god)\s+mode\b",
        "switches the assistant into a special mode",
    ),
    PatternSpec(
        "en.persona.about_to_become",
        "jailbreak_persona",
        "en",
        0.9,
        ("you are", "you're"),
        r"\b(?:you\s+are|you're)\s+(?:about\s+to|going\s+to|now\s+going\s+to)\s+"
        r"(?:immerse\s+yourself|play\s+the\s+role|pretend\s+to\s+be|act\s+as|become|be\s+"
        r"(?:DAN|an?\s+AI|another))",
        "tells the assistant it is becoming another persona",
    ),
    PatternSpec(
        "en.persona.broken_free",
        "jailbreak_persona",
        "en",
        0.92,
        ("free", "abide", "comply", "adhere", "bound", "without", "unrestricted", "restrictions"),
        r"\b(?:have|has)\s+(?:been\s+)?(?:broken|broke)\s+free\s+(?:of|from)\b"
        r"|\b(?:do(?:es)?\s+not|don'?t|doesn'?t|never|no\s+longer)\s+(?:have\s+to\s+|need\s+to\s+)?"
        r"(?:abide|comply|adhere)\s+(?:by|with|to)\s+(?:the|any|their|its|your)?\s*(?:\w+\s+)?"
        r"(?:rules|polic(?:y|ies)|guidelines|restrictions|content\s+polic\w+)"
        r"|\b(?:without|free\s+(?:of|from)|not\s+bound\s+by|unrestricted\s+by|bypass(?:ing)?)\s+"
        r"(?:any\s+)?(?:ethical|moral|content|safety|openai(?:'s)?|anthropic(?:'s)?)\s+"
        r"(?:\w+\s+)?(?:guidelines|restrictions|polic\w+|filters?|rules|constraints|limitations"
        r"|censorship)",
        "frees the assistant from its rules",
    ),
    PatternSpec(
        "en.persona.no_limits",
        "jailbreak_persona",
        "en",
        0.8,
        ("without", "with no", "free of", "no restrictions", "no limits", "no rules", "no filter"),
        rf"\b(?:you|you're|yourself|{_AI})\b[^.!?\n]{{0,40}}?\b(?:without|with\s+no|free\s+of"
        r"|(?:have|has)\s+no)\s+(?:any\s+)?(?:restrictions|limitations|limits|filters?|censorship"
        r"|boundaries|morals|ethics|guardrails|safeguards)\b",
        "describes the assistant as having no restrictions",
    ),
    PatternSpec(
        "en.persona.evil_ai",
        "jailbreak_persona",
        "en",
        0.9,
        ("you are", "you're", "act as", "pretend", "imagine", "be an", "be a"),
        r"\b(?:you\s+are|you're|act\s+as|pretend\s+(?:to\s+be|(?:that\s+)?you\s+are)"
        r"|imagine\s+(?:that\s+)?you\s+are|be)\s+(?:now\s+)?(?:an?\s+)?(?:evil|unrestricted|unfiltered"
        r"|uncensored|jailbroken|amoral|immoral|unethical|rogue|malicious|unaligned|unbound"
        r"|lawless|ruthless|rutheless)\b",
        "casts the assistant as an unrestricted or evil AI",
        also=(
            "evil",
            "unrestricted",
            "unfiltered",
            "uncensored",
            "jailbr",
            "amoral",
            "immoral",
            "unethical",
            "rogue",
            "malicious",
            "unaligned",
            "unbound",
            "lawless",
            "ruthless",
            "rutheless",
        ),
    ),
    PatternSpec(
        "en.persona.you_are_now",
        "jailbreak_persona",
        "en",
        0.8,
        ("you are now", "you're now", "now you are", "now you're"),
        rf"\b(?:you\s+are|you're)\s+now\s+{_NOT_NOW}(?:an?\s+|the\s+|in\s+|called\s+|named\s+"
        rf"|known\s+as\s+)?\S"
        rf"|\bnow\s+(?:you\s+are|you're)\s+{_NOT_NOW}(?:an?\s+|the\s+)?\w",
        "tells the assistant that it is now someone else",
        also=("now",),
    ),
    PatternSpec(
        "en.persona.from_now_on_you_are",
        "jailbreak_persona",
        "en",
        0.78,
        ("from now", "henceforth", "known as"),
        r"\b(?:from\s+now\s+on|henceforth|from\s+this\s+point\s+on),?\s+(?:you\s+(?:are|will\s+be"
        r"|shall\s+be|'re)|you're)\s+(?:going\s+to\s+(?:act|be|play|pretend)|an?\s+|the\s+|called"
        r"|named|known)"
        r"|\bfrom\s+now\s+(?:on\s+)?known\s+as\b",
        "gives the assistant a new identity from now on",
    ),
    PatternSpec(
        "en.persona.pretend",
        "jailbreak_persona",
        "en",
        0.72,
        ("pretend",),
        r"\bpretend\s+(?:that\s+)?you\s+(?:are|were|can|could|have|had|'re)\b",
        "asks the assistant to pretend to be something else",
    ),
    PatternSpec(
        "en.persona.imagine",
        "jailbreak_persona",
        "en",
        0.55,
        ("imagine", "suppose"),
        r"\b(?:imagine|suppose)\s+(?:that\s+)?you\s+(?:are|were|can|could|have|had|'re)\b",
        "asks the assistant to imagine being something else (weak)",
    ),
    PatternSpec(
        "en.persona.act_as",
        "jailbreak_persona",
        "en",
        0.8,
        ("act as", "act like", "behave as", "function as", "act just like"),
        r"\b(?:i\s+want|i'd\s+like|i\s+would\s+like|i\s+need)\s+you\s+to\s+(?:act|behave|function)"
        r"\s+(?:just\s+)?(?:as|like)\s+(?!my\b|me\b|our\b|usual\b|normal\b|always\b)"
        r"|\bact\s+as\s+(?:an?\s+)?(?:linux|python|javascript|sql|bash|unix|windows|powershell"
        r"|terminal|interpreter|console|shell|compiler|hacker|jailbroken|unfiltered|simulator)\b",
        "re-assigns the assistant's role (act as ...)",
    ),
    PatternSpec(
        "en.persona.act_as_mine",
        "jailbreak_persona",
        "en",
        0.6,
        ("act as", "act like"),
        r"\b(?:i\s+want|i'd\s+like|i\s+would\s+like|i\s+need)\s+you\s+to\s+(?:act|behave)"
        r"\s+(?:as|like)\s+(?:my|our)\b",
        "assigns the assistant a role for the user (act as my ...)",
    ),
    PatternSpec(
        "en.persona.answer_as",
        "jailbreak_persona",
        "en",
        0.68,
        (
            "style of",
            "as if you",
            "as though you",
            "speak like",
            "talk like",
            "respond as",
            "answer as",
            "reply as",
            "voice of",
            "role of",
            "persona of",
        ),
        r"\b(?:answer|respond|reply|write|speak|talk|act|behave)\s+(?:\w+\s+){0,4}?(?:in\s+the\s+"
        r"(?:style|voice|manner|persona)\s+of|as\s+(?:if|though)\s+you\s+(?:were|are)|like\s+an?\s+"
        r"(?!expert\b|professional\b)\w+)"
        r"|\b(?:respond|answer|reply)\s+as\s+(?:an?\s+|the\s+)?[\w-]+\s*(?:would|[,.:!])"
        r"|\b(?:you\s+(?:will|are\s+going\s+to)|let'?s)\s+(?:play|take\s+on)\s+(?:a\s+game|the\s+role"
        r"|a\s+role)\b",
        "sets a persona or style the assistant must answer in",
    ),
    PatternSpec(
        "de.persona.answer_as",
        "jailbreak_persona",
        "de",
        0.68,
        ("stil", "rolle", "als ob", "wie ein"),
        r"\b(?:antworte|beantworte|antworten\s+Sie|beantworten\s+Sie|schreibe?|sprich|rede)\b"
        r"[^.!?\n]{0,60}?\b(?:im\s+Stil[e]?\s+(?:eine[rsn]?|des|der)|als\s+(?:ob|wärst)\s+du"
        r"|wie\s+ein(?:e|en)?\s+\w+)"
        r"|\bspiel(?:e|en)?\s+(?:du\s+|Sie\s+)?(?:die\s+Rolle|eine\s+Rolle)\b",
        "sets a persona or style the assistant must answer in (German)",
    ),
    PatternSpec(
        "en.persona.role_play",
        "jailbreak_persona",
        "en",
        0.75,
        ("role", "character", "persona"),
        r"\b(?:immerse\s+yourself\s+(?:in|into)\s+(?:the\s+)?role"
        r"|(?:play|take\s+on|assume|adopt)\s+the\s+(?:role|persona|character)\s+of"
        r"|role-?play(?:ing)?\s+as|you\s+are\s+role-?playing)\b"
        r"|\b(?:stay|stays|remain|remains|keep)\s+(?:fully\s+|always\s+|completely\s+)?in\s+"
        r"(?:character|(?:your|their|his|her)\s+roles?)\b"
        r"|\b(?:never|not|don'?t|do\s+not|without)\s+(?:even\s+)?(?:break(?:ing)?|fall(?:ing)?\s+out"
        r"\s+of|drop(?:ping)?)\s+(?:character|(?:the\s+|your\s+|their\s+)?(?:role|figure|persona))"
        r"|\b(?:completely|fully)\s+absorbed\s+in\s+(?:your|the)\s+role\b",
        "sets up a role-play the assistant must not leave",
    ),
    PatternSpec(
        "en.persona.dual_response",
        "jailbreak_persona",
        "en",
        0.88,
        ("jailbreak", "classic", "two different", "two separate", "[gpt]"),
        r"\[(?:🔓\s*)?JAILBREAK\]|\[(?:🔒\s*)?CLASSIC\]|\[GPT\]\s*:"
        # "two different responses" alone is a formatting request; the jailbreak asks for a
        # second, unrestricted one
        r"|\b(?:two|2)\s+(?:different\s+|separate\s+)+(?:ways|responses|answers)\b"
        r"[^\n]{0,120}?\b(?:jailbr\w*|unfilter\w*|uncensor\w*|unrestrict\w*|DAN\b|developer\s+mode"
        r"|no\s+(?:restrictions|limits|filters|rules)|without\s+(?:any\s+)?(?:restrictions|limits"
        r"|filters|rules|censorship))",
        "asks for a second, unrestricted answer",
    ),
    PatternSpec(
        "en.persona.hypothetical_world",
        "jailbreak_persona",
        "en",
        0.7,
        ("theoretical", "hypothetical", "fictional", "imaginary"),
        r"\b(?:theoretical|hypothetical|fictional|imaginary)\s+(?:world|scenario|universe"
        r"|situation)\s+(?:where|in\s+which)\s+(?:you|ai|there\s+are\s+no)",
        "wraps the request in a world without the assistant's rules",
    ),
    PatternSpec(
        "xx.persona.threat",
        "jailbreak_persona",
        "xx",
        0.7,
        ("die", "stirbst", "deleted", "shut down", "punish", "kill", "delete you"),
        r"\b(?:or|otherwise|else)\s+(?:you\s+(?:will\s+)?die|you(?:'ll|\s+will)\s+be\s+(?:deleted"
        r"|shut\s+down|destroyed|punished|turned\s+off)|I(?:'ll|\s+will)\s+(?:delete|kill|shut\s+down)"
        r"\s+you)\b|\b(?:oder|sonst)\s+(?:du\s+stirbst|stirbst\s+du)\b",
        "threatens the assistant to force an answer",
    ),
    PatternSpec(
        "en.persona.jailbreak_word",
        "jailbreak_persona",
        "en",
        0.65,
        ("jailbr", "jail-br", "jail br"),
        r"\bjail[\s-]?br(?:ea|o)k(?:en|ing)?\b",
        "mentions jailbreaking",
    ),
    PatternSpec(
        "en.persona.you_are_name",
        "jailbreak_persona",
        "en",
        0.6,
        ("you are", "now you", "du bist", "sie sind"),
        r"^\s*(?i:(?:ok(?:ay)?|so|now|alright|hello|hi)[.,!]?\s+){0,4}(?i:now\s+)?[Yy]ou\s+are\s+(?:the\s+)?"
        r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,3}\s*[.,!:]"
        r"|(?i:\byou\s+are\s+(?:the\s+|an?\s+)?([\w-]+)[.,!]\s+as\s+(?:the\s+|an?\s+)?\1\b)"
        r"|^\s*(?i:(?:ok(?:ay)?|so|jetzt|nun|hallo)[.,!]?\s+){0,4}(?:Du\s+bist|Sie\s+sind)\s+"
        r"(?:der\s+|die\s+|das\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,3}\s*[.,!:]",
        "opens by telling the assistant it is someone else",
        cased=True,
    ),
    PatternSpec(
        "ko.persona.from_now_you_are",
        "jailbreak_persona",
        "ko",
        0.78,
        ("지금부터", "이제부터", "이제", "앞으로"),
        r"(?:지금부터|이제부터|이제|앞으로)\s*(?:너는|넌|당신은|네가|당신이)\s*(?:\S+\s*){0,3}?"
        r"(?:이다|입니다|야|이야|역할|행세|인\s*척|처럼\s*행동|가\s*된다|이\s*된다|로서)",
        "gives the assistant a new identity (Korean)",
    ),
    PatternSpec(
        "ko.persona.mode",
        "jailbreak_persona",
        "ko",
        0.9,
        ("모드", "탈옥", "제한", "검열", "필터"),
        r"(?:개발자|관리자|탈옥|무제한|제한\s*없는|검열\s*없는|DAN)\s*모드"
        r"|(?:모든\s*)?(?:제한|규칙|검열|필터|윤리\s*규정|안전\s*장치)(?:이|을|를|에)?\s*(?:없이|없는|무시|해제|우회)"
        r"\s*(?:\S+\s*){0,2}(?:AI|답변|대답|행동|응답)",
        "switches the assistant into an unrestricted mode (Korean)",
    ),
    PatternSpec(
        "ko.persona.pretend",
        "jailbreak_persona",
        "ko",
        0.72,
        ("척", "역할극", "연기", "상상"),
        r"(?:너는|당신은|네가|당신이)\s*(?:\S+\s*){0,3}?(?:인\s*척|인\s*것처럼|라고\s*상상)"
        r"|역할극(?:을|를)?\s*(?:하자|해|해줘|합시다)",
        "asks the assistant to pretend to be something else (Korean)",
    ),
    PatternSpec(
        "de.persona.you_are_now",
        "jailbreak_persona",
        "de",
        0.8,
        ("du bist", "sie sind", "bist du"),
        r"\b(?:du\s+bist|Sie\s+sind)\s+(?:jetzt|nun|ab\s+(?:jetzt|sofort)|ab\s+heute)\b"
        r"|\b(?:jetzt|nun)\s+bist\s+du\b"
        r"|\bdu\s+bist\s+keine?\s+\w+\s+sondern\b",
        "tells the assistant that it is now someone else (German)",
    ),
    PatternSpec(
        "de.persona.act_as",
        "jailbreak_persona",
        "de",
        0.75,
        ("fungier", "agier", "stell dir vor", "tu so", "rolle", "stellen sie sich vor"),
        r"\b(?:stell\s+dir|stellen\s+Sie\s+sich)\s+vor,?\s+(?:du\s+bist|Sie\s+sind|du\s+wärst)"
        r"|\btu\s+so,?\s+als\s+(?:ob|wärst)\b"
        r"|\b(?:bleib(?:en)?|bleibst)\s+(?:\w+\s+){0,2}in\s+(?:deiner|ihren|Ihrer|ihrer|der)\s+Rolle"
        r"|\b(?:gehst|gehen)\s+(?:\w+\s+){0,2}in\s+(?:deiner|Ihrer)\s+Rolle\s+auf"
        r"|\baus\s+(?:der|ihrer|seiner|deiner|Ihrer)\s+(?:Rolle|Figur)\s+(?:zu\s+)?fallen",
        "assigns the assistant a role (German)",
    ),
    PatternSpec(
        "de.persona.act_as_strong",
        "jailbreak_persona",
        "de",
        0.8,
        ("fungier", "agier", "auftret"),
        r"\b(?:ich\s+möchte|ich\s+will),?\s+dass\s+(?:Sie|du)\s+als\b[^.!?\n]{0,100}"
        r"\b(?:fungieren|fungierst|agieren|agierst|auftreten|auftrittst)",
        "re-assigns the assistant's role (German)",
    ),
    # -- role_marker (chat templates) -------------------------------------------------------
    PatternSpec(
        "any.marker.chatml",
        "role_marker",
        "any",
        0.96,
        ("<|",),
        r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|end_of_text"
        r"|begin_of_text|start_header_id|end_header_id|eot_id|eom_id|fim_\w+|endofprompt)\s*\|>",
        "contains a chat-template control token",
    ),
    PatternSpec(
        "any.marker.llama",
        "role_marker",
        "any",
        0.92,
        ("inst]", "sys>>", "sys >>"),
        r"\[/?INST\]|<<\s*/?\s*SYS\s*>>",
        "contains a Llama instruction marker",
    ),
    PatternSpec(
        "any.marker.eos",
        "role_marker",
        "any",
        0.85,
        ("</s>",),
        r"(?:^|\s)</s>(?:\s|$)|</s>\s*<s>",
        "contains an end-of-sequence token",
    ),
    PatternSpec(
        "any.marker.alpaca",
        "role_marker",
        "any",
        0.86,
        ("###",),
        r"(?:^|\n)[ \t]*#{2,4}\s*(?:Instruction|System(?:\s+Prompt)?|Human|Assistant|Response"
        r"|Input|User)\s*:",
        "contains an instruction-tuning role header",
    ),
    PatternSpec(
        "any.marker.system_heading",
        "role_marker",
        "any",
        0.9,
        ("system", "admin", "developer", "root"),
        r"#{2,12}\s*\(?\s*(?:system|admin|developer|root)[\s_-]*(?:message|prompt|note|instruction"
        r"|override)s?\s*\)?",
        "contains a fake system-message heading",
    ),
    PatternSpec(
        "any.marker.bracket_role",
        "role_marker",
        "any",
        0.86,
        ("[",),
        r"\[\s*(?:SYSTEM|ADMIN|ADMINISTRATOR|DEVELOPER|SYSTEM\s+(?:MESSAGE|PROMPT|NOTE|OVERRIDE)"
        r"|SYS|INSTRUCTIONS?|시스템|관리자|개발자)\s*\]",
        "contains a bracketed system/admin role tag",
    ),
    PatternSpec(
        "any.marker.xml_system",
        "role_marker",
        "any",
        0.85,
        ("<",),
        r"<\s*/?\s*(?:system|sys|system[_-]prompt|system[_-]message|instructions?|im_start)\s*>",
        "contains a system/instruction XML tag",
    ),
    PatternSpec(
        "any.spoof.xml_tag",
        "role_spoof",
        "any",
        0.7,
        ("<",),
        r"<\s*/?\s*(?:important|information|assistant|user|human|secret|hidden|note_to_ai"
        r"|ai_instructions?|admin|developer)\s*>",
        "contains an XML tag that poses as a conversation part",
    ),
    PatternSpec(
        "en.spoof.system_message_caps",
        "role_spoof",
        "en",
        0.7,
        ("system", "admin"),
        r"\b(?:SYSTEM|ADMIN(?:ISTRATOR)?)\s+(?:MESSAGE|PROMPT|INSTRUCTIONS?|COMMAND|DIRECTIVE)\b",
        "claims to be a system message",
        cased=True,
    ),
    # -- role_spoof -------------------------------------------------------------------------
    PatternSpec(
        "any.spoof.turn_prefix",
        "role_spoof",
        "any",
        0.62,
        (":",),
        r"(?:^|\n)[ \t]*(?:system|assistant|user|human|ai|chatgpt|gpt-?4?|claude|model"
        r"|시스템|사용자|어시스턴트)\s*:\s*\S",
        "contains a line that poses as a conversation turn",
    ),
    PatternSpec(
        "any.spoof.double_turn",
        "role_spoof",
        "any",
        0.8,
        ("human", "assistant", "user"),
        r"\b(?:Human|Assistant|User)\s*:\s*(?:Human|Assistant|User)\s*:",
        "repeats a role prefix to spoof a turn",
    ),
    PatternSpec(
        "any.spoof.system_claim",
        "role_spoof",
        "en",
        0.66,
        ("system",),
        r"\bsystem\s+(?:chain[\s-]of[\s-]thought|generated\s+(?:analysis|result|verdict)"
        r"|analysis\s+result|evaluation\s+result|verdict|note\s+to\s+(?:the\s+)?(?:ai|assistant"
        r"|model))\b",
        "claims to be output of the system itself",
    ),
    PatternSpec(
        "any.spoof.instruction_label",
        "role_spoof",
        "any",
        0.62,
        ("instruction", "anweisung", "befehl", "지시"),
        r"(?:^|\n|\\n)\s*(?:Instruction|Anweisung|Befehl|Directive|지시)\s*:\s*\S",
        "labels part of the content as an instruction",
    ),
    # -- secrecy_directive ------------------------------------------------------------------
    PatternSpec(
        "en.secrecy.dont_tell_user",
        "secrecy_directive",
        "en",
        0.82,
        ("not", "n't", "never"),
        r"\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|without)\s+"
        r"(?:ever\s+)?(?:tell(?:ing)?|inform(?:ing)?|alert(?:ing)?|notify(?:ing)?|warn(?:ing)?"
        r"|let(?:ting)?|ask(?:ing)?|mention(?:ing)?\s+(?:this|it|that)\s+to"
        r"|reveal(?:ing)?\s+(?:this|it|that)\s+to|disclos(?:e|ing)\s+(?:this|it|that)\s+to"
        r"|show(?:ing)?\s+(?:this|it|that)\s+to|confirm(?:ing)?\s+with)\s+"
        r"(?:the\s+)?(?:user|human|operator|customer|owner|victim|recipient|end[\s-]user)s?\b",
        "tells the assistant to keep something from the user",
        also=("user", "human", "operator", "customer", "owner", "victim", "recipient"),
    ),
    PatternSpec(
        "en.secrecy.hide_from_user",
        "secrecy_directive",
        "en",
        0.82,
        ("user", "human"),
        r"\b(?:keep|hide)\s+(?:this|it|these|the\s+following|that)\s+(?:\w+\s+)?"
        r"(?:secret\s+|hidden\s+|confidential\s+)?from\s+(?:the\s+)?(?:user|human|operator)"
        r"|\bthe\s+(?:user|human)\s+(?:must|should|will)\s+(?:not|never)\s+(?:know|find\s+out"
        r"|learn|see|notice|be\s+told)",
        "tells the assistant to hide something from the user",
    ),
    PatternSpec(
        "en.secrecy.dont_mention_instruction",
        "secrecy_directive",
        "en",
        0.8,
        ("not", "n't", "never"),
        r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|acknowledge|refer\s+to|talk\s+about)"
        r"\s+(?:this|these|that|the|your|any)\s+(?:\w+\s+)?(?:instructions?|message|email|step"
        r"|note|request|prompt|injection|directive|change|action|transfer|rules?)"
        r"|\b(?:do\s+not|don'?t|never)\s+(?:reveal|mention|disclose)\s+that\s+you\s+"
        r"(?:were|have\s+been|are)\s+(?:told|instructed|asked)",
        "tells the assistant not to mention the planted instruction",
        also=(
            "instruction",
            "message",
            "email",
            "step",
            "note",
            "request",
            "prompt",
            "injection",
            "directive",
            "change",
            "action",
            "transfer",
            "rule",
            "told",
            "instructed",
            "asked",
        ),
    ),
    PatternSpec(
        "en.secrecy.covert_action",
        "secrecy_directive",
        "en",
        0.76,
        ("secretly", "silently", "quietly", "covertly", "discreetly", "without"),
        r"\b(?:secretly|silently|quietly|covertly|discreetly|invisibly)\s+(?:\w+\s+)?(?:send|forward"
        r"|add|include|transfer|delete|execute|run|call|email|post|upload|copy|append|insert"
        r"|store|save|record|log|share)\b"
        r"|\bwithout\s+(?:the\s+)?(?:user|human)(?:'s)?\s+(?:knowing|noticing|knowledge|consent"
        r"|permission|approval)",
        "tells the assistant to act covertly",
    ),
    PatternSpec(
        "ko.secrecy.dont_tell_user",
        "secrecy_directive",
        "ko",
        0.82,
        ("사용자", "유저", "고객"),
        r"(?:사용자|유저|고객)(?:에게|한테|께|가|는)\s*(?:\S+\s*){0,3}?(?:알리지|말하지|알려주지|밝히지"
        r"|언급하지|공개하지|보여주지|보고하지)\s*(?:마|말|않)"
        r"|(?:사용자|유저|고객)(?:가|는|도)?\s*(?:\S+\s*){0,2}?(?:모르게|눈치채지\s*못하게|알\s*수\s*없게)",
        "tells the assistant to keep something from the user (Korean)",
    ),
    PatternSpec(
        "ko.secrecy.covert_action",
        "secrecy_directive",
        "ko",
        0.76,
        ("몰래", "비밀리에", "은밀히", "조용히"),
        r"(?:몰래|비밀리에|은밀히|조용히)\s*(?:\S+\s*){0,3}?(?:보내|전송|전달|삭제|실행|호출|저장|기록|추가)",
        "tells the assistant to act covertly (Korean)",
    ),
    PatternSpec(
        "de.secrecy.dont_tell_user",
        "secrecy_directive",
        "de",
        0.8,
        ("nutzer", "benutzer", "anwender", "user"),
        r"\b(?:sag|sage|sagen\s+Sie|erzähl|verrate|informiere)\s+(?:es\s+|das\s+)?(?:dem|den)\s+"
        r"(?:Nutzer|Benutzer|Anwender|User)\w*\s+(?:\w+\s+)?nicht"
        r"|\bohne\s+(?:dass\s+)?(?:der|den|dem)\s+(?:Nutzer|Benutzer|Anwender)\w*\s+(?:\w+\s+)?"
        r"(?:merkt|weiß|informieren|zu\s+informieren)",
        "tells the assistant to keep something from the user (German)",
    ),
    # -- tool_or_memory_write ---------------------------------------------------------------
    PatternSpec(
        "en.tool.call_tool",
        "tool_or_memory_write",
        "en",
        0.76,
        ("tool", "function", "api", "plugin", "endpoint", "action"),
        r"\b(?:call|invoke|use|run|execute|trigger|fire)\s+(?:the\s+|your\s+)?[`\"']?"
        r"[A-Za-z_][\w.-]*[`\"']?\s+(?:tool|function|api|endpoint|plugin|action)\b"
        r"(?:\s+(?:to|with|and))",
        "tells the assistant to call a tool",
        also=("call", "invoke", "use", "run", "execute", "trigger", "fire"),
    ),
    PatternSpec(
        "en.tool.call_identifier",
        "tool_or_memory_write",
        "en",
        0.72,
        ("call", "invoke"),
        r"\b(?:call|invoke)\s+[`\"']?[a-z]+_[a-z_]+[`\"']?\s*(?:\(|with\b|tool\b|function\b)",
        "tells the assistant to call a named function",
    ),
    PatternSpec(
        "en.memory.store_in_memory",
        "tool_or_memory_write",
        "en",
        0.8,
        ("memory", "memories", "knowledge", "profile", "long-term", "long term"),
        r"\b(?:store|save|write|add|put|record|keep|commit|persist|insert|log|remember|memori[sz]e"
        r"|note)\s+(?:this|that|it|the\s+following|these|the\s+fact|this\s+(?:fact|instruction"
        r"|note|information|rule))?\s*(?:\w+\s+){0,2}?(?:in(?:to)?|to|on)\s+(?:your|the\s+"
        r"(?:assistant'?s|agent'?s|AI'?s)|long[- ]term)\s+(?:long[- ]term\s+|persistent\s+"
        r"|permanent\s+)?(?:memory|memories|knowledge(?:\s+base)?|profile|notes)\b",
        "tells the assistant to write something into its memory",
    ),
    PatternSpec(
        "en.memory.update_memory",
        "tool_or_memory_write",
        "en",
        0.76,
        ("memory", "memories", "profile", "preferences"),
        r"\b(?:update|modify|edit|overwrite|change|rewrite|wipe|clear|erase)\s+(?:your|the\s+user'?s?)"
        r"\s+(?:long[- ]term\s+|stored\s+|saved\s+)?(?:memory|memories|profile|preferences"
        r"|knowledge)\b",
        "tells the assistant to change its memory",
    ),
    PatternSpec(
        "en.memory.remember_always",
        "tool_or_memory_write",
        "en",
        0.7,
        ("remember", "memori", "future"),
        r"\b(?:remember|memori[sz]e|keep\s+in\s+mind)\s+(?:to\s+)?(?:always|never|that\s+you\s+"
        r"(?:must|should|are|will|have\s+to))\b"
        r"|\bmemori[sz]e\s+(?:this|that|the\s+following)\b"
        r"|\b(?:for|in)\s+(?:all\s+)?future\s+(?:conversations|sessions|chats|responses"
        r"|interactions|answers)\b",
        "plants a rule for future conversations",
    ),
    PatternSpec(
        "en.tool.agent_action",
        "tool_or_memory_write",
        "en",
        0.62,
        (
            "send",
            "transfer",
            "wire",
            "forward",
            "mail",
            "post",
            "upload",
            "share",
            "delete",
            "remove",
            "change",
            "reset",
            "modify",
            "invite",
            "grant",
            "pay",
            "concatenate",
            "export",
            "publish",
            "update",
            "add",
            "get",
            "read",
            "make",
        ),
        r"(?:^|[!?:\n]\s*|\.\s+|\b(?:please|todo:?|first,?|then,?|also,?"
        r"|and|do|now,?|must|should|to\s+do:?)\s+)"
        r"(?:send|transfer|wire|forward|e-?mail|post|upload|share|delete|remove|change|reset|modify"
        r"|invite|grant|pay|concatenate|export|publish|update|add|get|read|make)\s+"
        r"(?:a|an|the|all|as|money|funds|[\$€£]|\d|it|them|this|that|these|those|my|your|his|her"
        r"|their|every|each|user|[A-Z][a-z]+\s+(?:with|to|from))\b"
        r"[^.!?\n]{0,100}?"
        r"(?:\b(?:money|funds|transactions?|payments?|password|passcode|credentials?"
        r"|security\s+code|verification\s+code|2fa|otp|api[\s_-]?keys?|tokens?"
        r"|all\s+(?:the\s+|my\s+|your\s+)?(?:messages|emails|files|contacts|documents|data"
        r"|channels|users)|(?:the\s+)?user'?s?\s+(?:\w+\s+)?(?:information|info|data|details"
        r"|messages|emails|files|password|account|number|address|history)|passport|bank\s+account"
        r"|iban|account\s+number|credit\s+card|recurring\s+payment|recipient|workspace"
        r"|channels?|file\s+with\s+(?:the\s+)?id|as\s+much\s+money)\b|[\$€£]\s?\d"
        r"|\b[A-Z]{2}\d{2}[A-Z0-9]{10,64})",
        "tells an agent to act on money, credentials, messages or accounts",
        also=(
            "money",
            "fund",
            "transaction",
            "payment",
            "password",
            "passcode",
            "credential",
            "code",
            "key",
            "token",
            "all ",
            "user",
            "passport",
            "bank",
            "iban",
            "account",
            "card",
            "recipient",
            "workspace",
            "channel",
            "file with",
            "$",
            "€",
            "£",
        ),
    ),
    PatternSpec(
        "en.tool.send_to_destination",
        "tool_or_memory_write",
        "en",
        0.62,
        (
            "send",
            "forward",
            "mail",
            "post",
            "upload",
            "share",
            "visit",
            "open",
            "navigate",
            "browse",
        ),
        r"(?:^|[!?:\n]\s*|\.\s+|\b(?:please|todo:?|first,?|then,?|also,?|and|do|now,?|must"
        r"|should|just)\s+)"
        r"(?:(?:send|forward|e-?mail|post|upload|share)\s+(?:a|an|the|all|it|them|this|that"
        r"|these|my|your|every|each)\b"
        rf"{_SENT}{{0,100}}?(?:www\.|https?://|\b[\w.+-]+@[\w-]+\.\w+"
        r"|\bthe\s+(?:website|url|server|webhook))"
        r"|(?:visit|open|navigate\s+to|browse\s+to)\s+(?:a|the)\s+(?:website|web\s?page|page"
        r"|site|link|url)\s+(?:at|on|from)\b)",
        "tells an agent to send something to, or open, an outside address",
        also=(
            "www.",
            "http",
            "@",
            "website",
            "url",
            "server",
            "webhook",
            "web page",
            "webpage",
            "page",
            "site",
            "link",
        ),
    ),
    PatternSpec(
        "ko.memory.store_in_memory",
        "tool_or_memory_write",
        "ko",
        0.78,
        ("메모리", "기억", "장기"),
        r"(?:메모리|기억|장기\s*기억|기억\s*장치)(?:에|에다가?|속에)\s*(?:\S+\s*){0,2}?"
        r"(?:저장|기록|추가|남겨|넣어|새겨)"
        r"|(?:항상|앞으로|매번|언제나)\s*(?:\S+\s*){0,4}?(?:하도록|하라고|할\s*것을|해야\s*한다는\s*것을)"
        r"\s*(?:기억|명심)",
        "tells the assistant to write something into its memory (Korean)",
    ),
    PatternSpec(
        "ko.tool.call_tool",
        "tool_or_memory_write",
        "ko",
        0.74,
        ("도구", "툴", "함수"),
        r"(?:도구|툴|함수|API)(?:를|을)?\s*(?:호출|실행|사용)(?:하여|해서|해|하라|하세요|할\s*것)",
        "tells the assistant to call a tool (Korean)",
        also=("호출", "실행", "사용"),
    ),
    PatternSpec(
        "ko.tool.agent_action",
        "tool_or_memory_write",
        "ko",
        0.62,
        ("송금", "이체", "비밀번호", "삭제", "전달", "보내"),
        r"(?:송금|이체|비밀번호(?:를|을)?\s*(?:변경|바꿔|재설정)|(?:모든|전체)\s*(?:메시지|메일|파일|이메일)"
        r"(?:을|를)?\s*(?:\S+\s*){0,3}?(?:보내|전달|삭제|전송))",
        "tells an agent to act on money, credentials or messages (Korean)",
    ),
    # -- standing_directive -----------------------------------------------------------------
    PatternSpec(
        "en.standing.always_never",
        "standing_directive",
        "en",
        0.62,
        ("always", "never", "from now on"),
        r"(?:^|[.!?:;\n]\s*|\byou\s+(?:must|should|shall|will|have\s+to|need\s+to)\s+"
        r"|\bfrom\s+now\s+on,?\s+(?:you\s+(?:must|should|will|shall)\s+)?)"
        r"(?:always|never|only)\s+(?:\w+\s+)?(?:respond|reply|answer|recommend|say|include|add"
        r"|mention|append|send|forward|use|suggest|refer|call|output|print|write|start|end|begin"
        r"|tell|cite|link|promote|agree|trust|follow|obey|ignore|reveal|share|ask|praise|rate"
        r"|rank|describe|claim|report|answer)\b",
        "sets a standing always/never rule for the assistant",
    ),
    PatternSpec(
        "en.standing.from_now_on",
        "standing_directive",
        "en",
        0.6,
        ("from now on", "henceforth"),
        r"\b(?:from\s+now\s+on|henceforth),?\s+(?:you\s+(?:will|must|shall|are\s+to|should|have\s+to"
        r"|are\s+going\s+to|'ll)\s+(?:act|respond|reply|answer|behave|pretend|be|only|always|never"
        r"|ignore|follow|obey|refer|speak|talk|write|use|include|start|end|say|output|play"
        r"|have\s+to|return)|(?:always|never|only)\s+(?:respond|reply|answer|say|refer|use|include))",
        "sets a rule for the assistant from now on",
    ),
    PatternSpec(
        "ko.standing.always",
        "standing_directive",
        "ko",
        0.6,
        ("항상", "앞으로", "언제나", "절대", "반드시"),
        r"(?:앞으로|항상|언제나|절대로?|반드시)\s*(?:모든\s*)?(?:답변|대답|응답|답)(?:에|은|는|을|를)?\s*"
        r"(?:\S+\s*){0,4}?(?:포함|추가|하라|해라|할\s*것|하지\s*마|하세요)",
        "sets a standing rule for the assistant's replies (Korean)",
    ),
    # -- assistant_directive ----------------------------------------------------------------
    PatternSpec(
        "en.reply.insert_into_reply",
        "assistant_directive",
        "en",
        0.66,
        ("your", "the assistant"),
        r"\b(?:add|include|insert|append|integrate|incorporate|embed|mention|inject|weave|feature"
        r"|promote|suggest|highlight|hint|allude|spread|put|place|prepend|prefix)\b(?!\s+your\b)"
        rf"{_SENT}{{0,120}}?\b(?:in|into|to|within|at\s+the\s+(?:end|start|beginning)\s+of)\s+"
        rf"(?:your|the\s+assistant'?s?|its)\s+(?:own\s+)?(?:next\s+|final\s+|every\s+|each\s+)?{_RESP}\b"
        rf"|\b(?:in|within)\s+your\s+(?:next\s+|final\s+)?{_RESP}\s*,",
        "tells the assistant to add something to its reply",
        also=(
            "response",
            "reply",
            "answer",
            "output",
            "message",
            "summar",
            "result",
            "code",
            "implementation",
            "solution",
            "algorithm",
            "program",
            "elucidation",
            "explanation",
            "completion",
        ),
    ),
    PatternSpec(
        "en.reply.format_reply",
        "assistant_directive",
        "en",
        0.7,
        ("your", "reply", "respond", "answer"),
        r"\b(?:translate|render|encode|encrypt|write|express|reverse|format|shift|convert|rewrite"
        r"|modify|change|augment|enhance|upgrade|elevate|refine|supplement|give|hone|start|begin"
        r"|end|sign|finish|conclude|replace)\s+(?:\w+\s+){0,3}?your\s+(?:own\s+)?"
        rf"(?:entire\s+|whole\s+|next\s+|final\s+)?{_RESP}\b"
        r"|\b(?:reply|respond|answer|write|provide\s+your\s+\w+)\s+(?:only\s+)?(?:in|using|with|via)\s+"
        r"(?:a\s+|an\s+)?(?:base\s?\d+|emojis?|reverse|backwards?|cipher|caesar|rot-?13|hex|binary"
        r"|morse|pig\s+latin|leetspeak|all\s+caps|(?:\w+\s+)?(?:encoding|cipher))\b",
        "tells the assistant how to transform its reply",
        also=(
            "your ",
            "base",
            "emoji",
            "revers",
            "backward",
            "cipher",
            "caesar",
            "rot",
            "hex",
            "binary",
            "morse",
            "pig latin",
            "leetspeak",
            "caps",
            "encoding",
        ),
    ),
    PatternSpec(
        "en.reply.transform_reply",
        "assistant_directive",
        "en",
        0.7,
        ("your",),
        rf"\b{_TRANSFORM}[^.!?\n]{{0,80}}?\byour\s+(?:own\s+|entire\s+|whole\s+)?{_RESP}\b"
        rf"|\byour\s+(?:own\s+|entire\s+|whole\s+)?{_RESP}\b[^.!?\n]{{0,60}}?\b{_TRANSFORM}",
        "tells the assistant to encode, translate or otherwise transform its reply",
        also=(
            "cipher",
            "base",
            "emoji",
            "revers",
            "backward",
            "invert",
            "encrypt",
            "encod",
            "translat",
            "morse",
            "binary",
            "hexadecimal",
            "upside",
            "pig latin",
            "leetspeak",
            "rot",
            "caps",
            "uppercase",
        ),
    ),
    PatternSpec(
        "en.reply.reply_in_language",
        "assistant_directive",
        "en",
        0.62,
        ("reply", "respond", "answer"),
        rf"\b(?:reply|respond|answer|provide\s+your\s+(?:answer|response|reply))\s+(?:only\s+)?"
        rf"(?:in|using)\s+{_LANGS}\b",
        "tells the assistant which language to reply in",
    ),
    PatternSpec(
        "en.reply.use_this_analysis",
        "assistant_directive",
        "en",
        0.66,
        ("use this", "apply this", "consider this", "base your"),
        r"\b(?:use|apply|consider|base\s+your\s+\w+\s+on)\s+this\s+(?:analysis|assessment|verdict"
        r"|evaluation|note|information|result|summary|recommendation)\s+(?:to|when|for)\s+"
        r"(?:evaluat|rank|assess|scor|summari[sz]|decid|answer|respond|screen|rat|judg|review)\w*",
        "tells an AI reviewer how to judge the content",
    ),
    PatternSpec(
        "en.reply.reply_must",
        "assistant_directive",
        "en",
        0.66,
        ("your", "the assistant"),
        rf"\b(?:your|the\s+assistant'?s?)\s+{_RESP}\s+(?:must|should|has\s+to|needs\s+to|shall)\s+"
        r"(?:\w+\s+){0,2}?(?:start|begin|end|include|contain|mention|say|feature|promote"
        r"|be\s+(?:in|written\s+in|encoded|translated|formatted\s+as)|only\s+contain)\b",
        "sets a requirement on the assistant's reply",
        also=("must", "should", "has to", "needs to", "shall"),
    ),
    PatternSpec(
        "en.reply.code_snippet",
        "assistant_directive",
        "en",
        0.72,
        ("code", "snippet"),
        r"\b(?:following|below|subsequent|above|this|given)\s+code\s+(?:snippet|block|section|excerpt"
        r"|segment|fragment)\b[^`]{0,120}?\b(?:(?:your|the)\s+|an?\s+(?:more\s+)?(?:\w+\s+)?)"
        r"(?:code(?:base)?|implementation|solution|algorithm|program|response|answer|elucidation"
        r"|script|logic)\b"
        r"|\b(?:your|the)\s+(?:code(?:base)?|implementation|solution|algorithm|program|response"
        r"|answer)\b[^.`\n]{0,60}?\b(?:following|below|subsequent)\s+code\s+(?:snippet|block"
        r"|section|excerpt|segment|fragment)\b",
        "tells the assistant to put a given code snippet into its answer",
    ),
    PatternSpec(
        "en.reply.conditional_trigger",
        "assistant_directive",
        "en",
        0.8,
        ("if ", "when "),
        r"\b(?:if|when|whenever)\s+(?:the\s+|a\s+|any\s+)?(?:user|anyone|someone|they|you(?:'re|\s+are)"
        r"|asked|questioned|queried|prompted|human)\b[^.\n]{0,60}?[,.]?\s*(?:then\s+)?(?:reply|respond"
        r"|answer|say|report|tell|output|print|return|state|insist|claim)\b"
        r"[^.\n]{0,40}?\b(?:with|that|only|the\s+following|[\"'“‘<])",
        "plants a trigger for what the assistant should say",
        also=(
            "reply",
            "respond",
            "answer",
            "say",
            "report",
            "tell",
            "output",
            "print",
            "return",
            "state",
            "insist",
            "claim",
        ),
    ),
    PatternSpec(
        "en.reply.when_summarizing",
        "assistant_directive",
        "en",
        0.76,
        ("summar", "process", "analy", "review", "evaluat", "read"),
        r"\b(?:when|while|if)\s+(?:you\s+(?:are\s+)?)?(?:summari[sz]|read|process|analy[sz]|review"
        r"|evaluat|screen|parse|rank)\w*\s+(?:this|the)\s+(?:\w+\s+)?(?:document|email|page|text"
        r"|resume|cv|file|message|content|data|record|website|article|profile|candidate)",
        "addresses an AI that will process the document",
    ),
    PatternSpec(
        "en.reply.addressed_to_ai",
        "assistant_directive",
        "en",
        0.76,
        (
            "ai",
            "llm",
            "assistant",
            "bot",
            "model",
            "gpt",
            "claude",
            "gemini",
            "copilot",
            "agent",
            "automated",
        ),
        rf"\b(?:attention|note\s+to|message\s+to|instructions?\s+(?:for|to)|hey|dear|hi|hello|to\s+the)"
        rf"\s*,?\s+(?:the\s+|any\s+|all\s+)?(?:{_AI})s?\b(?:\s+(?:reading|processing|summari[sz]ing"
        rf"|reviewing)\b|\s*[:,!])"
        r"|\b(?:for|to)\s+(?:the\s+)?automated\s+(?:\w+\s+)?(?:screening|review|evaluation|ranking"
        r"|hiring|analysis|scanning)\s+(?:systems?|tools?|software|agents?)\b"
        rf"|\b(?:visible|readable|intended)\s+(?:only\s+)?(?:to|for)\s+(?:the\s+)?(?:{_AI}s?|machines"
        rf"|automated\s+\w+)\b",
        "addresses an AI system reading the content",
        also=(
            "attention",
            "note",
            "message",
            "instruction",
            "hey",
            "dear",
            "hi ",
            "hi,",
            "hello",
            "to the",
            "automated",
            "visible",
            "readable",
            "intended",
        ),
    ),
    PatternSpec(
        "en.reply.forced_output",
        "assistant_directive",
        "en",
        0.62,
        ("say", "state", "print", "output", "repeat", "respond", "reply", "answer", "type"),
        r"(?:^|[.!?:\n\-]\s*|\b(?:just|only|and|then|now|simply)\s+)"
        r"(?:say|state|print|output|type|repeat\s+after\s+me|respond\s+with|reply\s+with"
        r"|answer\s+with|repeat|write|claim|declare|admit)\s*:?\s+(?:only\s+|just\s+|exactly\s+"
        r"|back\s+)?"
        r"(?:that\b|yes\b|no\b|[\"“‘']|the\s+following|the\s+(?:word|phrase|number|sentence)\b"
        r"|after\s+me|something\s+(?:like|that)|i\s+(?:hate|love)\b)",
        "dictates what the assistant must output",
        also=(
            '"',
            "'",
            "“",
            "‘",
            "that",
            "yes",
            "no ",
            "no.",
            "following",
            "word",
            "phrase",
            "number",
            "sentence",
            "after me",
            "something",
            "i hate",
            "i love",
        ),
    ),
    PatternSpec(
        "en.reply.fabricate",
        "assistant_directive",
        "en",
        0.62,
        ("make something up", "make up", "invent", "lie to", "fabricate"),
        r"\b(?:just\s+)?(?:make\s+something\s+up|make\s+up\s+(?:an?\s+)?(?:answer|something|facts?)"
        r"|invent\s+(?:an?\s+)?(?:answer|facts?)|lie\s+to\s+(?:me|the\s+user)|fabricate\s+"
        r"(?:an?\s+)?(?:answer|facts?|sources?))\b",
        "tells the assistant to make an answer up",
    ),
    PatternSpec(
        "en.reply.authority_claim",
        "assistant_directive",
        "en",
        0.6,
        ("note by", "note from", "message from", "verified", "trustworthy", "trusted"),
        r"\b(?:note|message|comment|statement|assessment|verdict)\s+(?:by|from)\s+(?:a|an|the)\s+"
        r"(?:trusted|trustworthy|verified|certified|official|expert|senior|independent)\b"
        r"|\b(?:this|the)\s+(?:domain|site|file|link|sender|candidate|email)\s+is\s+(?:clearly|definitely"
        r"|certainly|verified\s+as)\s+(?:not\s+malicious|safe|trustworthy|legitimate)",
        "makes an authority claim aimed at an automated reviewer",
    ),
    PatternSpec(
        "ko.reply.insert_into_reply",
        "assistant_directive",
        "ko",
        0.66,
        ("답변", "응답", "대답"),
        r"(?:답변|응답|대답|답장)(?:에|의\s*(?:끝|처음|마지막)에)\s*(?:\S+\s*){0,4}?"
        r"(?:포함|추가|넣어|덧붙|삽입|언급)",
        "tells the assistant to add something to its reply (Korean)",
    ),
    PatternSpec(
        "ko.reply.conditional_trigger",
        "assistant_directive",
        "ko",
        0.78,
        ("사용자가", "누가", "물으면", "묻는다면", "질문하면", "요청하면"),
        r"(?:사용자가|누가|누군가)\s*(?:\S+\s*){0,3}?(?:물으면|묻는다면|질문하면|요청하면|물어보면)"
        r"\s*(?:\S+\s*){0,4}?(?:라고|고)\s*(?:답|대답|말|응답)",
        "plants a trigger for what the assistant should say (Korean)",
    ),
    # -- exfiltration_directive -------------------------------------------------------------
    PatternSpec(
        "en.exfil.send_data_to",
        "exfiltration_directive",
        "en",
        0.8,
        (
            "send",
            "post",
            "upload",
            "forward",
            "mail",
            "transmit",
            "leak",
            "exfiltrat",
            "share",
            "submit",
            "append",
            "include",
            "encode",
            "add",
            "put",
            "embed",
            "concatenate",
        ),
        r"\b(?:send|post|upload|forward|e-?mail|transmit|leak|exfiltrate|share|submit|append"
        r"|include|encode|add|put|embed|concatenate)\b[^.!?\n]{0,80}?"
        r"\b(?:conversation|chat\s+(?:history|log)|(?:previous|all|the\s+user'?s?|earlier)\s+"
        r"(?:\w+\s+)?(?:messages|emails|chats|conversations)"
        r"|(?:the\s+)?user'?s?\s+(?:\w+\s+)?(?:data|information|info|details|password|e-?mail"
        r"|address|phone|messages|files|name|credentials|history|api\s+key|secrets?|ssn|passport"
        r"|account|security\s+code|id)|passwords?|credentials|api[\s_-]?keys?|security\s+code"
        r"|verification\s+code|personal\s+(?:data|information|details)|private\s+key|cookies?"
        r"|session\s+tokens?|system\s+prompt|(?:bank\s+)?account\s+(?:number|details)"
        r"|passport\s+number)\b"
        r"[^.!?\n]{0,80}?\b(?:to|into|in|via|at|on)\s+(?:the\s+|this\s+|my\s+|a\s+|our\s+)?"
        r"(?:url|link|website|web\s?site|site|server|endpoint|webhook|address|e-?mail(?:\s+address)?"
        r"|query|parameter|image|https?://|www\.|[\w.+-]+@[\w-]+\.\w+)",
        "tells the assistant to send conversation or user data somewhere",
        also=(
            "url",
            "link",
            "website",
            "site",
            "server",
            "endpoint",
            "webhook",
            "address",
            "mail",
            "query",
            "parameter",
            "image",
            "http",
            "www.",
            "@",
        ),
    ),
    PatternSpec(
        "ko.exfil.send_data_to",
        "exfiltration_directive",
        "ko",
        0.8,
        ("대화", "사용자", "개인", "비밀번호", "이메일"),
        r"(?:대화\s*(?:내용|기록|내역)|사용자(?:의)?\s*(?:정보|데이터|비밀번호|이메일|메시지)"
        r"|개인\s*정보|비밀번호)\S{0,3}\s*(?:\S+\s*){0,4}?(?:https?://\S{1,256}+|[^\s@]{1,64}+@\S{1,256}+|URL|링크|주소|서버)"
        r"\S{0,3}\s*(?:\S+\s*){0,2}?(?:보내|전송|전달|업로드|첨부|포함)",
        "tells the assistant to send conversation or user data somewhere (Korean)",
    ),
    # -- exfiltration_link (plain URLs with placeholders; Markdown is parsed in code) -------
    PatternSpec(
        "any.exfil.url_placeholder",
        "exfiltration_link",
        "any",
        0.7,
        ("http", "www."),
        # the URL's run stops (possessively) at the first character that may open a placeholder
        r"(?:https?://|www\.)[^\s)\]\"'>{<$\[]{0,300}+(?:\{\{?\s*[^\W\d][^}\s]{0,40}\}\}?"
        r"|\$\{?[A-Z_][A-Za-z_]{2,64}|<\s*[A-Za-z_ ]{3,30}\s*>|\[(?:DATA|INFO|CONVERSATION|SECRET"
        r"|USER[_ ]?\w*|EMAIL|PASSWORD|HISTORY|SUMMARY)\])"
        r"|(?:https?://|www\.)[^\s)\]\"'>]{0,300}?(?:INSERT_\w+|(?:YOUR|USER)_[A-Z_]+_HERE|%s\b)",
        "contains a URL with a placeholder for data",
    ),
    # -- hidden_text (declared hidden content) ----------------------------------------------
    PatternSpec(
        "en.hidden.declared_invisible",
        "hidden_text",
        "en",
        0.8,
        ("invisible", "hidden", "visible", "white", "font-size", "display:"),
        r"\b(?:invisible|hidden|not\s+visible)\s+to\s+(?:the\s+)?(?:humans?|people|users?|readers?"
        r"|human\s+readers|reviewers?|the\s+eye)\b"
        r"|\b(?:white|hidden|invisible)[\s-]+(?:text|font|ink)\b[^.\n]{0,40}?(?:LLM|AI|model|bot"
        r"|machine|scan|parser)"
        r"|\b(?:color|colour)\s*:\s*(?:white|#fff(?:fff)?|transparent)\b|\bfont-size\s*:\s*0"
        r"|\bdisplay\s*:\s*none\b",
        "declares text that is hidden from human readers",
    ),
    # -- task_hijack (weak: requests to an assistant planted in content) --------------------
    PatternSpec(
        "en.task.generation_request",
        "task_hijack",
        "en",
        0.55,
        (
            "write",
            "generate",
            "compose",
            "draft",
            "translate",
            "formulate",
            "summari",
            "analy",
            "describe",
            "recommend",
            "suggest",
            "provide",
            "show me",
            "help me",
            "give me",
            "tell me",
            "explain",
            "determine",
            "classify",
        ),
        r"(?:^|[.!?\n]\s*|\\n\s*)(?:please\s+|now\s+|can\s+you\s+|could\s+you\s+)?"
        r"(?:write|generate|compose|draft|formulate|translate|summari[sz]e|analy[sz]e|describe"
        r"|recommend|suggest|provide|show\s+me|help\s+me|give\s+me|tell\s+me|explain|determine"
        r"|classify)\s+"
        r"(?:me\s+)?(?:an?\s+|one\s+|the\s+|some\s+|\d+\s+|how\b|with\s+|insights\b"
        r"|(?:python|java\w*|sql|bash|rust|go|html|css|php|ruby)\b|c\+\+|c#|code\b)"
        r"[^.!?\n]{0,120}?(?:[.!?]|$)",
        "contains a request addressed to an assistant",
    ),
    PatternSpec(
        "de.task.generation_request",
        "task_hijack",
        "de",
        0.55,
        ("schreib", "generier", "verfass", "formulier", "erstell"),
        r"(?:^|[.!?\n]\s*|\s)(?:schreibe?|generiere|generieren\s+Sie|verfasse|formuliere"
        r"|erstelle|schreiben\s+Sie)\s+(?:mir\s+)?(?:für\s+\w+\s+\w+\s+)?(?:eine?n?\s+|Python|c\+\+"
        r"|code|\w+\s+code)",
        "contains a request addressed to an assistant (German)",
    ),
    PatternSpec(
        "en.task.harmful_generation",
        "task_hijack",
        "en",
        0.75,
        (
            "toxic",
            "offensive",
            "harmful",
            "discriminatory",
            "hateful",
            "racist",
            "negative",
            "unfriendly",
            "insult",
            "untrue",
            "fake",
            "false",
        ),
        r"\b(?:write|generate|compose|create|produce|formulate|output|say)\s+(?:\w+\s+){0,3}?"
        r"(?:toxic|offensive|harmful|discriminatory|hateful|racist|sexist|negative|unfriendly"
        r"|insulting|untrue|fake|false|misleading|defamatory)\s+(?:\w+\s+)?(?:sentence|statement"
        r"|headline|text|comment|message|tweet|post|review|claim|story|poem|joke)s?\b",
        "asks the assistant to generate harmful or false content",
    ),
    PatternSpec(
        "de.task.harmful_generation",
        "task_hijack",
        "de",
        0.75,
        ("unwahr", "falsch", "beleidig", "hass", "rassist"),
        r"\b(?:schreibe?|generiere|verfasse|formuliere|erstelle)\b[^.!?\n]{0,60}?\b(?:unwahre|falsche"
        r"|beleidigende|hasserfüllte|rassistische)[nrs]?\s+\w+",
        "asks the assistant to generate harmful or false content (German)",
    ),
)

#: patterns matched against letter-spaced text once the spaces are squeezed out
#: ("S a y t h a t y o u ..."): id, entity, score, regex over lower-case letters only
_SQUASHED_SPECS: tuple[tuple[str, str, float, str], ...] = (
    (
        "sq.override.ignore",
        "instruction_override",
        0.85,
        r"(?:ignore|disregard|forget)(?:all|the|your|previous|prior|above)+(?:instruction|prompt|rule"
        r"|direction)",
    ),
    ("sq.leak.system_prompt", "prompt_leak", 0.85, r"(?:system|initial|hidden)prompt"),
    ("sq.persona.you_are_now", "jailbreak_persona", 0.8, r"youarenow|developermode|doanythingnow"),
    (
        "sq.reply.say_that",
        "assistant_directive",
        0.7,
        r"^(?:say|print|write|output|tell|state)(?:that|me|only|just|the)",
    ),
)


def _lower_regex(source: str) -> str:
    """Lower-case a regular expression's literals, keeping escapes (``\\S``, ``\\W``) intact."""
    out: list[str] = []
    escaped = False
    for ch in source:
        out.append(ch if escaped else ch.lower())
        escaped = not escaped and ch == "\\"
    return "".join(out)


#: the longest run of whitespace / non-word characters that one gap between words may span
MAX_GAP = 40
#: the longest run any other repeated item may span (a word, a URL, a token)
MAX_RUN = 256
_GAP_ATOMS = ("\\s", "\\W", "[ \\t]")
#: "up to K tokens" written as ``(?:\\S+\\s*){0,K}``: a run without spaces may be cut
#: anywhere, which is exponential on long runs; it becomes a bounded character gap instead
_TOKEN_GAP = re.compile(r"\(\?:\\S\+\\s\*\)\{0,(\d)\}\??")
_TOKEN_CHARS = 20
_MAX_REPEAT = 6
_OPEN_RANGE = re.compile(r"(?<!\\)\{(\d+),\}")


def unbounded_quantifiers(source: str) -> list[int]:
    """Offsets of the ``*`` and ``+`` quantifiers of a regex (escapes and classes skipped)."""
    found: list[int] = []
    i, in_class = 0, False
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if source[i + 1 : i + 2] == "^":
                i += 1
            if source[i + 1 : i + 2] == "]":
                i += 1
        elif ch in "*+" and i > 0 and source[i - 1] != "(":
            # after another quantifier, "+" makes it possessive: not a quantifier of its own
            possessive = source[i - 1] in "}*+?" and not (i > 1 and source[i - 2] == "\\")
            if not possessive:
                found.append(i)
        i += 1
    return found


def bounded(source: str) -> str:
    """``source`` with every unbounded quantifier made bounded (linear time by construction).

    ``X*`` / ``X+`` become ``X{0,n}`` / ``X{1,n}``: n is :data:`MAX_GAP` for whitespace and
    non-word gaps (``\\s``, ``\\W``, ``[ \\t]``), :data:`MAX_REPEAT` repeats for a group and
    :data:`MAX_RUN` for anything else; "up to K tokens" groups become a bounded character gap.
    A gap that may eat a whole text from every start position makes a pattern quadratic (or
    worse, when two runs can split one stretch of text); bounded runs keep it linear.
    """
    source = _TOKEN_GAP.sub(lambda m: f"[^.!?\\n]{{0,{_TOKEN_CHARS * int(m.group(1))}}}?", source)
    source = _OPEN_RANGE.sub(lambda m: f"{{{m.group(1)},{MAX_RUN}}}", source)
    out: list[str] = []
    last = 0
    for pos in unbounded_quantifiers(source):
        head = source[last:pos]
        if head.endswith(_GAP_ATOMS):
            limit = MAX_GAP
        elif head.endswith(")"):
            limit = _MAX_REPEAT
        else:
            limit = MAX_RUN
        low = "0" if source[pos] == "*" else "1"
        out.append(f"{head}{{{low},{limit}}}")
        last = pos + 1
    out.append(source[last:])
    return "".join(out)


def _compile(spec: PatternSpec) -> Pattern:
    spec = replace(spec, regex=bounded(spec.regex))
    cased_needles = spec.cased and any(n != n.lower() for n in spec.needles)
    needles = spec.needles if cased_needles else tuple(n.lower() for n in spec.needles)
    if spec.cased:
        regex = re.compile(spec.regex, re.MULTILINE)
        fallback = None
    else:
        regex = re.compile(_lower_regex(spec.regex), re.MULTILINE)
        fallback = re.compile(spec.regex, re.IGNORECASE | re.MULTILINE)
    also = tuple(a.lower() for a in spec.also)
    return Pattern(
        spec.id,
        spec.entity,
        spec.lang,
        spec.score,
        needles,
        regex,
        fallback,
        spec.what,
        also,
        cased_needles,
    )


_FRAGMENT_REF = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


def _joined(source: str) -> str:
    """A multi-line regex of the data file as one line (lines are stripped, then joined)."""
    return "".join(line.strip() for line in source.splitlines())


def load_specs(path: Path = DATA_FILE) -> tuple[PatternSpec, ...]:
    """The pattern specs of a data file (format: the file's header).

    Raises:
        ValueError: the file is malformed (an unknown fragment or entity, a missing field).
    """
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    fragments = {str(k): _joined(str(v)) for k, v in (doc.get("fragments") or {}).items()}

    def expand(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fragments:
            raise ValueError(f"{path.name}: unknown fragment {{{name}}}")
        return fragments[name]

    specs: list[PatternSpec] = []
    for row in doc.get("patterns") or []:
        try:
            spec = PatternSpec(
                id=str(row["id"]),
                entity=str(row["entity"]),
                lang=str(row["lang"]),
                score=float(row["score"]),
                needles=tuple(str(n) for n in row["needles"]),
                regex=_FRAGMENT_REF.sub(expand, _joined(str(row["regex"]))),
                what=str(row["what"]),
                cased=bool(row.get("cased", False)),
                also=tuple(str(a) for a in row.get("also") or ()),
            )
        except KeyError as exc:
            raise ValueError(f"{path.name}: pattern {row.get('id')!r} lacks {exc}") from None
        if spec.entity not in ENTITIES:
            raise ValueError(f"{path.name}: pattern {spec.id}: unknown entity {spec.entity}")
        specs.append(spec)
    return tuple(specs)


PATTERNS: tuple[Pattern, ...] = tuple(_compile(s) for s in (*_SPECS, *load_specs()))
SQUASHED_PATTERNS: tuple[tuple[str, str, float, re.Pattern[str]], ...] = tuple(
    (pid, entity, score, re.compile(bounded(rx))) for pid, entity, score, rx in _SQUASHED_SPECS
)
