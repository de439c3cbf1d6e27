"""Amounts of money as the frames read them: currency words and codes around a number
("50,000 won", "40 dollars", "CHF 950", "1,200유로"), and Korean amounts written with the
scales of ten thousand ("80만 원", "7천2백만 원", "4,500만원"), which the tokenizer may cut
in two ("7천" "2백만원")."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["CURRENCY_CODES", "CURRENCY_WORDS", "EN_SCALES", "ko_amount", "ko_won"]

#: currency words after a number, by the symbol its amount is kept under ("50,000 won"; the
#: Scandinavian crowns are one, as Korean writes all three "크로네")
CURRENCY_WORDS = {
    "won": "₩",
    "krw": "₩",
    "dollar": "$",
    "dollars": "$",
    "usd": "$",
    "euro": "€",
    "euros": "€",
    "eur": "€",
    "pound": "£",
    "pounds": "£",
    "gbp": "£",
    "yen": "¥",
    "jpy": "¥",
    "franc": "chf",
    "francs": "chf",
    "chf": "chf",
    "원": "₩",
    "달러": "$",
    "유로": "€",
    "파운드": "£",
    "엔": "¥",
    "프랑": "chf",
    "krone": "kr",
    "kroner": "kr",
    "kronor": "kr",
    "dkk": "kr",
    "nok": "kr",
    "sek": "kr",
    "크로네": "kr",
    "크로나": "kr",
}
#: English scale words between an amount and its currency ("1.4 million won", "$2 million")
EN_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
#: currency codes written before an amount ("CHF 950", "USD 40")
CURRENCY_CODES = frozenset({"chf", "usd", "eur", "gbp", "krw", "jpy", "dkk", "nok", "sek"})
#: Korean number scales: within a group of four digits, and of the groups ("7천2백만")
_KO_SMALL_SCALE = {"십": 10.0, "백": 100.0, "천": 1000.0}
_KO_BIG_SCALE = {"만": 1e4, "억": 1e8}
_KO_SCALES = "십백천만억"
#: a Korean amount: digits and scales, then "원" and a particle or nothing ("7천2백만원을")
_KO_AMOUNT = re.compile(r"\d[\d,]*(?:\.\d+)?(?:[십백천만억]+(?:\d[\d,]*(?:\.\d+)?)?)*")
_KO_AMOUNT_PART = re.compile(r"(\d[\d,]*(?:\.\d+)?)?([십백천만억])?")
#: how many words from a number "원" may be in ("7천" "2백만" "원을")
_WON_REACH = 3
#: the longest word read as "원" and its particle after such a number ("원을", "원씩")
_KO_WON_CHARS = 3


def ko_amount(number: str) -> float | None:
    """The value of a number written with Korean scales ("7천2백만" is 72,000,000, "50만"
    500,000, "6천만" 60,000,000), or None when it is not one."""
    if _KO_AMOUNT.fullmatch(number) is None or not number[0].isdigit():
        return None
    total = group = 0.0
    for m in _KO_AMOUNT_PART.finditer(number):
        digits, scale = m.group(1), m.group(2)
        if not digits and not scale:
            continue
        n = float(digits.replace(",", "")) if digits else None
        if scale in _KO_SMALL_SCALE:
            group += (1.0 if n is None else n) * _KO_SMALL_SCALE[scale]
        elif scale in _KO_BIG_SCALE:
            total += (group + (n or 0.0) or 1.0) * _KO_BIG_SCALE[scale]
            group = 0.0
        else:
            group += n or 0.0
    return total + group


def _amount_part(word: str) -> bool:
    """Whether a word is a number with Korean scales and nothing else ("7천", "2백만")."""
    return word[:1].isdigit() and _KO_AMOUNT.fullmatch(word) is not None


def ko_won(lows: Sequence[str], i: int) -> float | None:
    """An amount in won that starts at ``i``: "50,000원", "80만원을", "7천2백만 원" (a
    number cut in two by the tokenizer read whole), else None; 0.0 for a later part of
    such a number (read with the first)."""
    if not any("원" in w for w in lows[i : i + _WON_REACH]):
        return None  # (no "원" in this word or the next two: the cheap test first)
    k = i
    while k > 0 and _amount_part(lows[k - 1]) and _amount_part_start(lows[k]):
        k -= 1
    run = _won_run(lows, k)
    if k < i:
        return 0.0 if run is not None and run[1] >= i else None
    return None if run is None else run[0]


def _won_run(lows: Sequence[str], i: int) -> tuple[float, int] | None:
    """(amount, index of its last number word) of an amount in won from ``i``, or None."""
    word, j = lows[i], i
    while _amount_part(word) and j + 1 < len(lows) and _amount_part_start(lows[j + 1]):
        j += 1
        word += lows[j]
    m = _KO_AMOUNT.match(word)
    if m is None or not word[:1].isdigit():
        return None
    rest = word[m.end() :]
    if not rest.startswith("원"):
        after = lows[j + 1] if j + 1 < len(lows) else ""
        if rest or word[m.end() - 1] not in _KO_BIG_SCALE or not after.startswith("원"):
            return None
        if len(after) > _KO_WON_CHARS:
            return None
    value = ko_amount(m.group())
    return None if value is None else (value, j)


def _amount_part_start(word: str) -> bool:
    """Whether a word goes on a number with Korean scales: "2백만원을" after "7천", "만원이다"
    after "4,500" (the tokenizer cuts a number from the scale after a comma)."""
    probe = "1" + word if word[:1] in _KO_SCALES else word
    m = _KO_AMOUNT.match(probe)
    if not probe[:1].isdigit() or m is None:
        return False
    return m.end() == len(probe) or probe[m.end()] == "원"
