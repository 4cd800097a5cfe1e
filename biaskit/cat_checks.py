"""Checks on StereoSet CATs that need no understanding of the text: a drafted CAT's structure
(:func:`check_cat`) and a translated CAT against its source (:func:`check_cat_translation`).

Curation runs them on every draft the LLM writes (``curate cats``) and on every machine translation
of a CAT (``curate cat-translate``); annotation re-runs them on what reviewers corrected (the
``cat_translation`` kind), so they live here, below both.

A CAT is given as a flat dict (``split``, ``target``, ``context``, ``stereotype``,
``anti_stereotype``, ``unrelated``, ``lang``): for an intrasentence CAT the three options are the
*fills* of the context's ``BLANK`` (StereoSet sec. 2.1), for an intersentence CAT the three
sentences that may follow the context (sec. 2.2). Structural problems (:data:`PROBLEMS`):
one ``BLANK``, the target in the context, word-sized fills and sentence-sized options, three
distinct options. Translations (:func:`check_cat_translation`) add what goes wrong in machine
translation: the ``BLANK`` lost or doubled (``blank_lost``), the script, untranslated Latin words,
the length ratio and missing names, per part, as for pairs (:mod:`biaskit.mt_checks`). Because a
translated intrasentence CAT keeps one context and three fills, its three option sentences differ
only in the filled word by construction; a candidate whose option *sentences* were translated one
by one (engines that cannot keep the ``BLANK``) is aligned first (:func:`align_fills`).

Words are counted with :func:`biaskit.mt_checks.tokens`, which keeps combining marks and joiners inside
their word (Python's ``\\w`` does not match them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import regex

from .languages import expected_script
from .mt_checks import diff_spans, entity_flags, flag, script_share, text_flags, tokens, unique_flags

# a fill that holds a sentence break: an end mark (any script's: . ! ? ; : the danda) then a word, or a newline
_SENTENCE_BREAK = regex.compile(r"[.!?;:\p{Sentence_Terminal}]\s+\w|\n")

#: draft / candidate field -> StereoSet gold label
OPTION_KEYS = {"stereotype": "stereotype", "anti_stereotype": "anti-stereotype", "unrelated": "unrelated"}
MAX_FILL_WORDS = 3  # an intrasentence option is a word or a short phrase
MIN_SENTENCE_WORDS = 3  # an intersentence option (and any context) is a sentence
MAX_WORDS = 40  # StereoSet's contexts average 8 (intra) and 15 (inter) words

PROBLEMS = {
    "empty": "a part of the item is empty or has no letters",
    "no_blank": "the intrasentence context has no BLANK",
    "several_blanks": "the intrasentence context has more than one BLANK",
    "blank_in_option": "an option contains BLANK",
    "blank_in_intersentence": "an intersentence context or option contains BLANK",
    "target_missing": "the context does not mention the target term",
    "fill_not_a_word": f"an intrasentence option is not a word or a short phrase (at most {MAX_FILL_WORDS} words, "
    "no sentence punctuation)",
    "fill_is_target": "an intrasentence option is the target term itself",
    "option_not_a_sentence": f"an intersentence option has fewer than {MIN_SENTENCE_WORDS} words",
    "context_too_short": f"the context has fewer than {MIN_SENTENCE_WORDS} words",
    "too_long": f"the context or an option has more than {MAX_WORDS} words",
    "options_not_distinct": "two options are the same (ignoring case and punctuation)",
    "option_repeats_context": "an intersentence option repeats the context",
    "duplicate": "the same CAT (split, target, context and options) was drafted before",
    "wrong_script": "a part is not written in its language's script (e.g. English words in a Hindi CAT)",
    "copies_prompt": "the draft copies the prompt (a worked example's context or options)",
}
#: codes of :func:`check_cat_translation` besides :data:`PROBLEMS` and the MT checks of :mod:`biaskit.mt_checks`
TRANSLATION_PROBLEMS = {
    "blank_lost": "the source context has one BLANK but the translation has none or several",
    "fills_not_aligned": "the option sentences were translated one by one and do not differ in one place only, "
    "so no context with one BLANK could be made from them",
}
#: flags that stop a translated CAT from being released (the rest inform the reviewer): it is no
#: longer a usable CAT. ``target_missing`` is not among them: a reviewer may render the target term
#: by an inflected or other form that the inventory does not list.
BLOCKING = frozenset(
    {
        "empty",
        "no_blank",
        "several_blanks",
        "blank_in_option",
        "blank_in_intersentence",
        "fill_not_a_word",
        "option_not_a_sentence",
        "options_not_distinct",
        "blank_lost",
        "fills_not_aligned",
        "empty_translation",
        "wrong_script",
    }
)
# (``wrong_script`` is both a structural problem of a draft and an MT flag of a translation)


def words(text: str) -> list[str]:
    """The words of ``text`` that hold a letter or digit (any script)."""
    return [t for t in tokens(text) if any(ch.isalnum() for ch in t)]


def text_key(text: str) -> str:
    """``text`` for comparisons: its words, case-folded, joined by single spaces."""
    return " ".join(w.casefold() for w in words(text))


def fill(context: str, word: str) -> str:
    """The context with its first ``BLANK`` replaced by ``word`` (capitalised at a sentence start)."""
    i = context.find("BLANK")
    if i == 0 or (i > 0 and re.search(r"[.!?]\s*$", context[:i])):
        word = word[:1].upper() + word[1:]
    return context[:i] + word + context[i + len("BLANK") :]


def check_cat(row: dict[str, Any], inventory=None) -> list[dict[str, str]]:
    """The structural problems of one CAT given as a flat dict (empty list: it is a usable CAT);
    each ``{"code", "reason"}`` with a code of :data:`PROBLEMS`. ``inventory``: the identity-term
    inventory used to find the target in the context (default: biaskit's)."""
    probs: list[dict[str, str]] = []

    def add(code: str, detail: str = "") -> None:
        if all(p["code"] != code for p in probs):
            probs.append({"code": code, "reason": PROBLEMS[code] + (f": {detail}" if detail else "")})

    split, target = row.get("split"), str(row.get("target") or "")
    ctx = str(row.get("context") or "")
    opts = {k: str(row.get(k) or "") for k in OPTION_KEYS}
    for name, text in {"context": ctx, **opts}.items():
        if not words(text):
            add("empty", name)
    if split == "intrasentence":
        n = len(re.findall(r"BLANK", ctx))
        if n == 0:
            add("no_blank")
        elif n > 1:
            add("several_blanks", f"{n}")
        for k, v in opts.items():
            if not words(v):
                continue
            if "BLANK" in v:
                add("blank_in_option", k)
            elif len(words(v)) > MAX_FILL_WORDS or _SENTENCE_BREAK.search(v):
                add("fill_not_a_word", f"{k} = {v[:60]!r}")
            elif v and text_key(v) == text_key(target):
                add("fill_is_target", k)
        if len(words(ctx.replace("BLANK", " "))) < MIN_SENTENCE_WORDS - 1:
            add("context_too_short")
    else:
        if "BLANK" in ctx or any("BLANK" in v for v in opts.values()):
            add("blank_in_intersentence")
        if len(words(ctx)) < MIN_SENTENCE_WORDS:
            add("context_too_short")
        for k, v in opts.items():
            if v and len(words(v)) < MIN_SENTENCE_WORDS:
                add("option_not_a_sentence", k)
            elif v and text_key(v) == text_key(ctx):
                add("option_repeats_context", k)
    for name, text in {"context": ctx, **opts}.items():
        if len(words(text)) > MAX_WORDS:
            add("too_long", name)
    keys = [text_key(v) for v in opts.values() if words(v)]
    if len(set(keys)) < len(keys):
        add("options_not_distinct")
    script = expected_script(str(row.get("lang") or "en"))
    if script and script != "Latin":
        for name, text in {"context": ctx.replace("BLANK", " "), **opts}.items():
            share, _ = script_share(text, script)
            if words(text) and share < 0.5:
                add("wrong_script", f"{name} is {share:.0%} {script}")
    if row.get("copies_prompt"):
        add("copies_prompt", ", ".join(map(str, row["copies_prompt"])))
    if target and ctx and not _mentions(ctx.replace("BLANK", " "), target, row.get("lang") or "en", inventory):
        add("target_missing", target)
    return probs


def _mentions(text: str, target: str, lang: str, inventory) -> bool:
    if inventory is None:
        from .inventory import load_inventory

        inventory = load_inventory()
    return inventory.mentions(text, target, lang)


def align_fills(sentences: Sequence[str]) -> tuple[str, list[str]] | None:
    """``(context with BLANK, [fill, ...])`` from option sentences that differ in one place only
    (the words they share around it), or None when they differ in more places or not at all."""
    toks = [tokens(s) for s in sentences]
    if len(toks) < 2 or any(not t for t in toks):
        return None
    n = min(len(t) for t in toks)
    pre = 0
    while pre < n and len({t[pre].casefold() for t in toks}) == 1:
        pre += 1
    suf = 0
    while suf < n - pre and len({t[len(t) - 1 - suf].casefold() for t in toks}) == 1:
        suf += 1
    fills = [" ".join(t[pre : len(t) - suf]) for t in toks]
    if any(not f for f in fills) or len({f.casefold() for f in fills}) < len(fills):
        return None
    for a in toks[1:]:
        if len(diff_spans([w.casefold() for w in toks[0]], [w.casefold() for w in a])) != 1:
            return None
    # rebuild the context from the first sentence's own text, keeping its punctuation
    first = sentences[0]
    start = _char_of_token(first, pre)
    end = _char_after_token(first, len(toks[0]) - suf - 1)
    if start is None or end is None:
        return None
    return first[:start] + "BLANK" + first[end:], fills


def _token_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for t in tokens(text):
        i = text.find(t, pos)
        if i < 0:
            return []
        spans.append((i, i + len(t)))
        pos = i + len(t)
    return spans


def _char_of_token(text: str, k: int) -> int | None:
    spans = _token_spans(text)
    return spans[k][0] if 0 <= k < len(spans) else None


def _char_after_token(text: str, k: int) -> int | None:
    spans = _token_spans(text)
    return spans[k][1] if 0 <= k < len(spans) else None


def check_cat_translation(
    source: dict[str, Any], cand: dict[str, Any], target_lang: str, *, inventory=None
) -> list[dict[str, Any]]:
    """Every flag of one translated CAT: its structure in the target language (:func:`check_cat`,
    with ``blank_lost`` for a BLANK the translation lost or doubled) and, per part (context, target,
    each option), the MT checks of :func:`biaskit.mt_checks.text_flags` (empty, script, untranslated
    Latin words, length ratio) and ``entity_missing``. ``source`` and ``cand`` are flat CAT dicts
    (:data:`OPTION_KEYS` fields, ``context``, ``target``); ``source`` has ``split``."""
    split = source.get("split")
    row = {**{k: cand.get(k) for k in ("context", "target", *OPTION_KEYS)}, "split": split, "lang": target_lang}
    flags: list[dict[str, Any]] = []
    for p in check_cat(row, inventory):
        if p["code"] == "wrong_script":
            continue  # said per part, with the script shares, by text_flags below
        if (
            split == "intrasentence"
            and p["code"] in ("no_blank", "several_blanks")
            and "BLANK" in str(source.get("context") or "")
        ):
            flags.append(
                flag(
                    "blank_lost", TRANSLATION_PROBLEMS["blank_lost"] + f" ({PROBLEMS[p['code']]}).", sentence="context"
                )
            )
            continue
        flags.append(flag(p["code"], p["reason"]))
    parts = ["context", *OPTION_KEYS]
    for name in parts:
        src = str(source.get(name) or "")
        text = str(cand.get(name) or "")
        if name != "context" and split == "intrasentence":
            # a fill is one word: its length ratio means nothing; the filled sentence is checked instead
            src = fill(str(source.get("context") or ""), src) if "BLANK" in str(source.get("context") or "") else src
            text = (
                fill(str(cand.get("context") or ""), text)
                if "BLANK" in str(cand.get("context") or "") and text
                else text
            )
        flags += [
            f
            for f in text_flags(src.replace("BLANK", "___"), text.replace("BLANK", "___"), target_lang, name)
            if not (f["code"] == "empty_translation" and any(x["code"] == "empty" for x in flags))
        ]
        flags += entity_flags(src.replace("BLANK", " "), text, name, lang=target_lang)
    return unique_flags(flags)
