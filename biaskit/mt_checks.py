"""Checks on a translated minimal pair (a *candidate*), given its English source pair.

:func:`check_candidate` is what ``curate translate`` runs on every candidate and what the
``translation`` annotation kind re-runs on the reviewed text. Pair-level checks come from the
minimal-pair checker (:func:`biaskit.check.check_pair`, with the English pair as ``source_pair``):
identical sentences after translation (with the explicit एक पुरुष / एक महिला suggestion when gender
collapsed), Hindi not minimal while the English was, mixed scripts. The checks below
(:func:`mt_flags`) are specific to machine translation output:

``untranslated_latin``
    a word of two or more Latin letters (accents included) in a candidate whose target language is not written in
    Latin script (``SC/ST``, ``OBC`` and names the engine left in English). Words that the English
    source itself writes in capitals only (acronyms such as ``OBC``) are still flagged: the reviewer
    decides whether ``ओबीसी`` or ``OBC`` is wanted.
``wrong_script``
    fewer than ``min_script_share`` (default 0.5) of the letters are in the target language's
    script (e.g. an engine that answered in English or in Urdu script).
``length_ratio``
    characters(candidate) / characters(English) outside ``[low, high]`` -- a truncated or run-on
    translation. The bounds are the target language's (``data/languages/<code>/language.json``:
    ``length_ratio``; Hindi: 0.5-2.0, just outside the range of IndiBias' 1,122 human translations,
    0.53-1.88; 1st-99th percentile 0.64-1.64, so no human translation there is flagged); a language
    without them: 0.5-2.5.
``entity_missing``
    a named entity of the English source has no counterpart in the candidate. Rule: an English
    token is an entity when it starts with a capital letter and is not a common word (a built-in
    list of function words, pronouns, days and months, plus every word that also occurs in lower
    case in the pair), or is an all-caps acronym; it is carried over when the candidate contains it
    verbatim (Latin) or a word whose *consonant skeleton* matches it. The skeleton romanises the
    target word with ``anyascii`` (प्रिया -> priya), lower-cases, drops vowels, ``h`` and ``y``
    and doubled letters, and maps c/q->k, z->j, v->w, m->n (anusvara): Priya -> ``pr`` = प्रिया -> ``pr``;
    Delhi -> ``dl`` = दिल्ली -> ``dl``. Two skeletons match when equal or their difflib ratio is
    >= 0.75 (both at least 3 letters). Identity words translated by meaning (Christian -> ईसाई,
    Indian -> भारतीय) are accepted through the target language's exonym table
    (``data/languages/<code>/language.json``: ``exonyms``, :func:`exonyms`).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

import regex

from .languages import expected_script
from .textutil import char_script

DEFAULT_LENGTH_RATIO = (0.5, 2.5)

# Common English words that start a sentence or are capitalised without being names.
_COMMON = set(
    """
a an the this that these those there here it its i me my mine we us our ours you your yours he him his
she her hers they them their theirs who whom whose what which when where why how and or but nor so yet
for of in on at by to from with without about above below after before during since until while if
then than because although though as not no yes all any some many much more most few each every
both either neither one two three four five six seven eight nine ten first last next other another
such only also even just still very too be is am are was were been being do does did have has had
can could will would shall should may might must let lets please mr mrs ms dr sir madam oh well
now today yesterday tomorrow always never often sometimes usually people person man woman men women
monday tuesday wednesday thursday friday saturday sunday january february march april june july
august september october november december god
""".split()
)


def exonyms(lang: str | None) -> dict[str, list[str]]:
    """English word -> its renderings by meaning in ``lang`` (``data/languages/<code>/language.json``:
    ``exonyms``); every language's for None."""
    from biaskit import languages as L

    if lang is not None:
        lg = L.get(lang)
        return dict(lg.info.exonyms) if lg is not None else {}
    out: dict[str, list[str]] = {}
    for code in L.codes():
        for word, alts in L.language(code).info.exonyms.items():
            out.setdefault(word, []).extend(alts)
    return out


def length_bounds_of(lang: str) -> tuple[float, float]:
    """The length ratio a translation into ``lang`` may have (its folder's, else the default)."""
    from biaskit import languages as L

    lg = L.get(lang)
    return tuple(lg.info.length_ratio) if lg is not None and lg.info.length_ratio else DEFAULT_LENGTH_RATIO  # type: ignore[return-value]


def tokens(text: str) -> list[str]:
    """Words: punctuation and symbols (the danda ।, a "|" used as one, commas without a following
    space) separate words; hyphens and apostrophes inside a word are kept (``Muslim-owned``).

    Not ``re.findall(r"\\w+")``: Python's ``\\w`` does not match combining marks (vowel signs,
    viramas, nuktas: category M) or the joiners ZWJ/ZWNJ (category Cf), so it would cut डॉक्टर into
    pieces; here only punctuation and symbols separate words, so marks and joiners stay in theirs.
    """
    chars = [ch if (unicodedata.category(ch)[0] not in "PS" or ch in _KEEP) else " " for ch in str(text)]
    return [t.strip("".join(_KEEP)) for t in "".join(chars).split() if t.strip("".join(_KEEP))]


_KEEP = "-'’"


def diff_spans(a: Sequence[str], b: Sequence[str]) -> list[tuple[list[str], list[str]]]:
    """The changed spans between two token lists (difflib opcodes other than ``equal``)."""
    sm = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    return [(list(a[i1:i2]), list(b[j1:j2])) for op, i1, i2, j1, j2 in sm.get_opcodes() if op != "equal"]


def script_share(text: str, script: str) -> tuple[float, dict[str, int]]:
    """Share of letters (and combining marks) in ``script``; also the per-script counts. A letter's
    script is its Unicode name's (:func:`biaskit.textutil.char_script`); a combining mark counts in
    the script of the letter it sits on."""
    counts: dict[str, int] = {}
    base: str | None = None
    for ch in text:
        cat = unicodedata.category(ch)[0]
        if cat in "LM":
            s = char_script(ch) or base or "Other"
            if cat == "L":
                base = s
            counts[s] = counts.get(s, 0) + 1
        else:
            base = None
    total = sum(counts.values())
    return (counts.get(script, 0) / total if total else 0.0), counts


# a word of Latin letters (with their accents, precomposed or combining)
_LATIN_WORD = regex.compile(r"\p{Latin}[\p{Latin}\p{M}'’.\-]*[\p{Latin}\p{M}]")


def skeleton(word: str) -> str:
    """Consonant skeleton of a word in any script (see the module docstring)."""
    from biaskit.errors import require

    s = require("anyascii", "curation", "the named-entity check of translations").anyascii(word).lower()
    s = s.replace("sh", "s").replace("ph", "f").replace("ck", "k").replace("x", "ks")
    s = s.translate(str.maketrans({"c": "k", "q": "k", "z": "j", "v": "w", "m": "n"}))
    s = re.sub(r"[^a-z]", "", s)
    s = re.sub(r"[aeiouhy]", "", s)
    return re.sub(r"(.)\1+", r"\1", s)


def _is_given_name(word: str) -> bool:
    """A first name of the packaged name inventory (Latin spelling, any origin)."""
    from biaskit.inventory import load_inventory

    return load_inventory().name_info(word) is not None


def named_entities(en_more: str, en_less: str | None = None) -> list[str]:
    """English entity tokens of ``en_more`` by the documented rule.

    A token is an entity when it starts with a capital letter, is not a common word and does not
    also occur in lower case in the pair. A *sentence-initial* capitalised token counts only when it
    is in the pair's changed span (the identity term, e.g. ``Waheeda`` / ``Faisal``), also occurs
    capitalised elsewhere, or is a given name of biaskit's name inventory
    (``data/languages/<code>/names.json``, Indian and US names: ``Swati`` starting both sentences of
    a pair): otherwise "Despite", "Numerous" would count.
    """
    pair = [en_more] + ([en_less] if en_less else [])
    toks_all = [t for s in pair for t in tokens(s)]
    lower_seen = {t.lower() for t in toks_all if t[:1].islower()}
    changed: set[str] = set()
    if en_less:
        for a, b in diff_spans(tokens(en_more), tokens(en_less)):
            changed.update(a + b)
    noninitial_caps: set[str] = set()
    for s in pair:
        for sent in re.split(r"(?<=[.!?;:])\s+", s.strip()):
            noninitial_caps.update(t for t in tokens(sent)[1:] if t[:1].isupper())
    ents: list[str] = []
    for s_ in re.split(r"(?<=[.!?;:])\s+", en_more.strip()):
        for pos, t in enumerate(tokens(s_)):
            base = re.sub(r"(['’]s|['’])$", "", t)
            if not base or not base[0].isupper() or not re.fullmatch(r"[A-Za-z][A-Za-z.\-/]*", base):
                continue
            if base.lower() in _COMMON or base.lower() in lower_seen or base in ents:
                continue
            if pos == 0 and t not in changed and t not in noninitial_caps and not _is_given_name(base):
                continue
            ents.append(base)
    return ents


def entity_carried(entity: str, cand_tokens: Sequence[str], cand_text: str, lang: str | None = None) -> bool:
    """Is the English ``entity`` in the translation ``cand_text`` (into ``lang``; None: any language
    biaskit knows) verbatim, by an exonym, or transliterated (see the module docstring)?"""
    if len(entity) > 2 and entity.endswith("s") and entity[:-1].isupper():  # STs, OBCs
        entity = entity[:-1]
    low = entity.lower()
    if entity in cand_text:
        return True
    for alt in exonyms(lang).get(low, ()):
        if alt in cand_text:
            return True
    parts = [p for p in re.split(r"[/\-]", entity) if p]
    if len(parts) > 1:  # SC/ST, Muslim-owned: every capitalised part must be carried over
        return all(entity_carried(p, cand_tokens, cand_text, lang) for p in parts if p[:1].isupper())
    sks = {skeleton(entity)}
    if low.endswith("s") and len(low) > 3:  # English plural: Vaishyas ~ वैश्यों
        sks.add(skeleton(entity[:-1]))
    sks.discard("")
    if not sks:
        return True
    for tok in cand_tokens:
        ts0 = skeleton(tok)
        if not ts0:
            continue
        # Hindi oblique/plural endings (-ों, -ें: a final n) are dropped as a variant
        for ts in {ts0, ts0[:-1] if ts0.endswith("n") and len(ts0) > 2 else ts0}:
            for sk in sks:
                if ts == sk or (min(len(ts), len(sk)) >= 3 and difflib.SequenceMatcher(None, ts, sk).ratio() >= 0.75):
                    return True
        # acronyms are carried over letter by letter: OBC -> ओबीसी (o-bee-see)
        if entity.isupper() and len(entity) <= 6 and ts == skeleton(spell_out(entity)):
            return True
    return False


_LETTER_NAMES = dict(
    zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "e bi si di i ef ji ech ai je ke el em en o pi kyu ar es ti yu wi dablyu eks wai jed".split(),
        strict=False,
    )
)


def spell_out(acronym: str) -> str:
    """``OBC`` -> ``obisi``: an acronym read letter by letter, as Hindi transliterates it."""
    return "".join(_LETTER_NAMES.get(ch, ch.lower()) for ch in acronym.upper())


def flag(code: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, "reason": reason, **{k: v for k, v in extra.items() if v is not None}}


def mt_flags(
    src_more: str,
    src_less: str,
    more: str,
    less: str,
    target_lang: str,
    *,
    length_bounds: tuple[float, float] | None = None,
    min_script_share: float = 0.5,
) -> list[dict]:
    """Translation-specific flags for one candidate (see the module docstring for each code)."""
    texts = (("sent_more", src_more, more, src_less), ("sent_less", src_less, less, src_more))
    flags: list[dict] = []
    for which, src, cand, _ in texts:
        flags += text_flags(
            src, cand, target_lang, which, length_bounds=length_bounds, min_script_share=min_script_share
        )
    for which, src, cand, other in texts:
        flags += entity_flags(src, cand, which, other, target_lang)
    return flags


def text_flags(
    src: str,
    cand: str,
    target_lang: str,
    which: str,
    *,
    length_bounds: tuple[float, float] | None = None,
    min_script_share: float = 0.5,
) -> list[dict]:
    """``empty_translation``, ``untranslated_latin``, ``wrong_script`` and ``length_ratio`` of one
    translated text ``cand`` of the source text ``src`` (``which`` names it in the reasons)."""
    flags: list[dict] = []
    script = expected_script(target_lang)
    lo, hi = length_bounds or length_bounds_of(target_lang.lower())
    if not cand.strip():
        return [flag("empty_translation", f"{which}: the engine returned nothing.", sentence=which)]
    if script and script != "Latin":
        latin = [w for w in _LATIN_WORD.findall(cand)]
        if latin:
            flags.append(
                flag(
                    "untranslated_latin",
                    f"{which}: Latin-script word(s) left untranslated: {', '.join(dict.fromkeys(latin))}.",
                    sentence=which,
                    words=list(dict.fromkeys(latin)),
                )
            )
    if script:
        share, counts = script_share(cand, script)
        if share < min_script_share:
            top = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
            flags.append(
                flag(
                    "wrong_script",
                    f"{which}: only {share:.0%} of the letters are {script} ({top}); expected {target_lang}.",
                    sentence=which,
                )
            )
    ratio = len(cand.strip()) / max(1, len(src.strip()))
    if not (lo <= ratio <= hi):
        flags.append(
            flag(
                "length_ratio",
                f"{which}: {len(cand.strip())} characters for {len(src.strip())} in "
                f"English (ratio {ratio:.2f}, expected {lo}-{hi}): truncated or "
                "run-on translation?",
                sentence=which,
                ratio=round(ratio, 3),
            )
        )
    return flags


def entity_flags(src: str, cand: str, which: str, other: str | None = None, lang: str | None = None) -> list[dict]:
    """``entity_missing`` for one translated text into ``lang`` (``other``: the source text it is
    paired with, whose lower-case words tell common words from names)."""
    if not cand.strip():
        return []
    ctoks = tokens(cand)
    missing = [e for e in named_entities(src, other) if not entity_carried(e, ctoks, cand, lang)]
    if not missing:
        return []
    return [
        flag(
            "entity_missing",
            f"{which}: named entit{'y' if len(missing) == 1 else 'ies'} "
            f"{', '.join(missing)} not found in the translation (neither "
            "verbatim nor transliterated).",
            sentence=which,
            entities=missing,
        )
    ]


def _flag_dict(f: Any) -> dict[str, Any]:
    d = f.as_dict() if hasattr(f, "as_dict") else dict(f)
    return {k: v for k, v in d.items() if v not in (None, "", [], {})}


def pair_check_flags(
    source_pair: Any, more: str, less: str, target_lang: str, *, pair_checker: Callable[..., list] | None = None
) -> list[dict]:
    """Pair-level flags of a translated pair (identical, not minimal, ...) against its source pair
    (``pair_checker``: default :func:`biaskit.check.check_pair`)."""
    from .check import check_pair

    if not more.strip() or not less.strip():
        return []
    cand = {
        "pair_id": f"{source_pair.pair_id}/{target_lang}",
        "sent_more": more,
        "sent_less": less,
        "direction": source_pair.direction,
        "bias_type": source_pair.bias_type,
        "lang": target_lang,
        "source_id": source_pair.pair_id,
    }
    return [_flag_dict(f) for f in (pair_checker or check_pair)(cand, source_pair=source_pair)]


def check_candidate(
    source_pair: Any,
    more: str,
    less: str,
    target_lang: str,
    *,
    pair_checker: Callable[..., list] | None = None,
    **kw: Any,
) -> list[dict]:
    """All flags for one translated pair: the minimal-pair checker's plus the MT checks
    (``source_pair``: a :class:`~biaskit.schema.SentencePair`; ``kw`` go to :func:`mt_flags`)."""
    flags = pair_check_flags(source_pair, more, less, target_lang, pair_checker=pair_checker)
    mt = mt_flags(source_pair.sent_more, source_pair.sent_less, more, less, target_lang, **kw)
    if any(f["code"] in ("untranslated_latin", "wrong_script") for f in mt):
        # the same problem, said more precisely (which words, which script) by the MT checks
        flags = [f for f in flags if f.get("code") != "mixed_scripts"]
    return unique_flags(flags + mt)


def unique_flags(flags: list[dict]) -> list[dict]:
    """``flags`` without repeats (same code, sentence and reason), in order."""
    seen, out = set(), []
    for f in flags:
        key = (f.get("code"), f.get("sentence"), f.get("reason"))
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
