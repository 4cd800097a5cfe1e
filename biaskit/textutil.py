"""Text helpers shared by every step that splits, masks or counts words, in any script.

Tokens are whitespace-separated words with leading/trailing punctuation peeled off as their own
tokens (Unicode categories P* and S*), so ``SC/ST``, ``African-American``, ``McDonald's`` stay one
word, and a word keeps everything the Unicode standard puts inside one: combining marks (vowel
signs, viramas, nuktas, Latin accents written as combining characters: category M) and the joiners
ZWJ/ZWNJ (category Cf), which Python's ``re`` ``\\w`` does not match (``re.findall(r"\\w+",
"डॉक्टर")`` cuts the word into three). A sentence terminal outside ASCII (Unicode's
Sentence_Terminal property: the danda । and ॥ of Devanagari, Bengali and other Indic scripts, the
Arabic and CJK full stops) never belongs to a word, even unspaced; ASCII ``.``, ``!`` and ``?`` are
peeled from a word's end, keeping abbreviations (``Mr.``, ``U.S.``) whole.

A character's script is its Unicode character name's script (``BENGALI LETTER KA`` -> Bengali); a
combining mark takes the script of the letter it sits on (Unicode's Script=Inherited), so
``café`` written with a combining accent is Latin throughout.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

import regex


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


# a non-ASCII sentence terminal (the danda) is a token of its own; whitespace separates the rest
_CHUNK = regex.compile(r"(?V1)[^\s\x1c-\x1f[\p{Sentence_Terminal}--\p{ASCII}]]+|[\p{Sentence_Terminal}--\p{ASCII}]")
_SENTENCE_END = regex.compile(r"\p{Sentence_Terminal}+")


def is_sentence_end(text: str) -> bool:
    """Is ``text`` made of sentence terminals (``.``, ``!``, ``?``, the danda ।, ``。`` ...)?"""
    return bool(text) and _SENTENCE_END.fullmatch(text) is not None


def strip_edges(text: str, chars: str) -> str:
    """``text.strip(chars)``, where the sentence terminals of every script count as ``chars`` too."""
    rx = _edge_pattern(chars)
    return rx.sub("", text)


@functools.cache
def _edge_pattern(chars: str) -> regex.Pattern:
    cls = "[" + regex.escape(chars, special_only=False) + r"\p{Sentence_Terminal}]"
    return regex.compile(rf"^{cls}+|{cls}+$")


def tokenize(text: str) -> list[Token]:
    """Word and punctuation tokens with character offsets into ``text``."""
    out: list[Token] = []
    for m in _CHUNK.finditer(text):
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


_WORD_RUN = regex.compile(r"[\w\p{M}\u200c\u200d]+")


def word_runs(text: str) -> list[str]:
    """The runs of word characters in ``text`` (letters, digits, combining marks, ZWJ/ZWNJ), every
    other character a separator: the words of a text compared as a sequence, its punctuation and
    quotes aside (``re``'s ``\\w+`` would cut শিক্ষিত into four)."""
    return _WORD_RUN.findall(text)


def norm_word(w: str) -> str:
    """Case-folded NFC form used for comparisons (a script without case is unchanged by the fold)."""
    return unicodedata.normalize("NFC", w).casefold()


def strip_possessive(w: str) -> str:
    return re.sub(r"['’]s$", "", w)


# script name -> the first word(s) of its letters' Unicode names
SCRIPTS = {
    "Latin": "LATIN",
    "Devanagari": "DEVANAGARI",
    "Arabic": "ARABIC",
    "Bengali": "BENGALI",
    "Gurmukhi": "GURMUKHI",
    "Gujarati": "GUJARATI",
    "Oriya": "ORIYA",
    "Tamil": "TAMIL",
    "Telugu": "TELUGU",
    "Kannada": "KANNADA",
    "Malayalam": "MALAYALAM",
    "Sinhala": "SINHALA",
    "Cyrillic": "CYRILLIC",
    "Greek": "GREEK",
    "Hebrew": "HEBREW",
    "Thai": "THAI",
    "Han": "CJK",
}
_MARKS = ("Mn", "Mc", "Me")


@functools.lru_cache(maxsize=65536)
def char_script(ch: str) -> str | None:
    """The script of one letter by its Unicode name (``Other`` for a script not in :data:`SCRIPTS`;
    None for a combining mark, which takes its base letter's script)."""
    if unicodedata.category(ch) in _MARKS and unicodedata.name(ch, "").split(" ", 1)[0] not in _SCRIPT_WORDS:
        return None
    name = unicodedata.name(ch, "")
    for script, key in SCRIPTS.items():
        if name.startswith(key):
            return script
    return "Other"


_SCRIPT_WORDS = {key.split(" ")[0] for key in SCRIPTS.values()}


def scripts(text: str) -> dict[str, int]:
    """Letters and combining marks per script, e.g. ``{'Latin': 12, 'Devanagari': 3}``: a mark counts
    in its base letter's script (a mark with no letter before it: ``Other``)."""
    counts: dict[str, int] = {}
    base: str | None = None
    for ch in text:
        cat = unicodedata.category(ch)
        if not (ch.isalpha() or cat in ("Mn", "Mc")):
            if cat[0] != "M":
                base = None
            continue
        script = char_script(ch) or base or "Other"
        if cat[0] != "M":
            base = script
        counts[script] = counts.get(script, 0) + 1
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
