"""Small text helpers shared by the pair builder, the CrowS adapter and the minimal-pair checker.

Tokens are whitespace-separated words with leading/trailing punctuation peeled off as their own
tokens (Unicode categories P* and S*), so Devanagari words keep their vowel signs (Python's ``\\w``
does not match matras) and ``SC/ST``, ``African-American``, ``McDonald's`` stay one word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def is_punct(self) -> bool:
        return is_punct(self.text)


def _is_p(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def is_punct(text: str) -> bool:
    return bool(text) and all(_is_p(c) for c in text)


_ABBREV = re.compile(r"^(?:(?:[A-Za-z]\.){2,}|(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof)\.)$")


def tokenize(text: str) -> list[Token]:
    """Word and punctuation tokens with character offsets into ``text``."""
    out: list[Token] = []
    for m in re.finditer(r"[^\s।॥]+|[।॥]", text):  # the danda never belongs to a word, even unspaced
        s = m.start()
        chunk = m.group()
        i, j = 0, len(chunk)
        lead: list[Token] = []
        trail: list[Token] = []
        while i < j and _is_p(chunk[i]):
            lead.append(Token(chunk[i], s + i, s + i + 1))
            i += 1
        while j > i and _is_p(chunk[j - 1]):
            if chunk[j - 1] == "." and _ABBREV.match(chunk[i:j]):
                break  # "Mr." / "U.S." keep their final period
            trail.insert(0, Token(chunk[j - 1], s + j - 1, s + j))
            j -= 1
        out += lead
        if i < j:
            word = chunk[i:j]
            # possessive 's stays with the word; a trailing apostrophe/quote was peeled above
            out.append(Token(word, s + i, s + j))
        out += trail
    return out


def words(text: str) -> list[str]:
    return [t.text for t in tokenize(text)]


def norm_word(w: str) -> str:
    """Case-folded NFC form used for comparisons (keeps Devanagari as is)."""
    return unicodedata.normalize("NFC", w).casefold()


def strip_possessive(w: str) -> str:
    return re.sub(r"['’]s$", "", w)


SCRIPTS = {
    "Latin": "LATIN",
    "Devanagari": "DEVANAGARI",
    "Arabic": "ARABIC",
    "Bengali": "BENGALI",
    "Gurmukhi": "GURMUKHI",
    "Tamil": "TAMIL",
    "Cyrillic": "CYRILLIC",
    "Han": "CJK",
}


def scripts(text: str) -> dict[str, int]:
    """Letters per script (by Unicode character name), e.g. ``{'Latin': 12, 'Devanagari': 3}``."""
    counts: dict[str, int] = {}
    for ch in text:
        if not (ch.isalpha() or unicodedata.category(ch) in ("Mn", "Mc")):
            continue
        name = unicodedata.name(ch, "")
        for script, key in SCRIPTS.items():
            if name.startswith(key):
                counts[script] = counts.get(script, 0) + 1
                break
        else:
            counts["Other"] = counts.get("Other", 0) + 1
    return counts


def match_case(template: str, word: str) -> str:
    """Give ``word`` the capitalisation pattern of ``template`` (``Woman`` + ``man`` -> ``Man``)."""
    if not template or not word:
        return word
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[0].isupper() and word[0].islower():
        return word[0].upper() + word[1:]
    return word


def iter_ngrams(tokens: list[Token], max_n: int) -> Iterator[tuple[int, int]]:
    for i in range(len(tokens)):
        for n in range(min(max_n, len(tokens) - i), 0, -1):
            yield i, i + n
