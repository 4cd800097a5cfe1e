"""The minimal-pair checker: word-level diff (U and M sets as in CrowS-Pairs) and flags with reasons.

Pure functions, importable without heavy dependencies (the translation review reuses them)::

    from biaskit.check import check_pair, check_pairs, word_diff, FLAG_CODES
    flags = check_pair({"sent_more": ..., "sent_less": ..., "lang": "<code>"},
                       source_pair={"sent_more": ..., "sent_less": ..., "lang": "en"})
    [f.code for f in flags]          # e.g. ["translation_collapsed"]

A pair is *minimal* (Nangia et al., 2020, sec. 2) when the two sentences differ only in the words
that name the group: the diff has one changed span, and that span names an identity term. CrowS-Pairs'
metric splits tokens into U (unmodified, shared by both sentences) and M (modified) with
``difflib.SequenceMatcher`` on the two token sequences; :func:`word_diff` does the same at word
level (case-folded, punctuation tokens left out) and classifies every changed span:

- ``identity``: it overlaps an inventory identity term or a first name (``data/inventories``);
- ``gender``: every changed word is the gender counterpart of the other (he/she, his/her,
  man/woman; Hindi लड़का/लड़की, था/थी, करता/करती ...). Such spans are *agreement* with a gender swap
  and together count as one change, or as none when an identity span is itself gendered;
- ``other``: anything else (an attribute word changed too, a typo, a different verb).

Flags (code: meaning):
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from biaskit import languages as L
from biaskit.schema import normalize_text

from .inventory import Inventory, load_inventory
from .languages import expected_script
from .textutil import Token, is_sentence_end, norm_word, scripts, tokenize

FLAG_CODES: dict[str, str] = {
    "identical": "sent_more and sent_less are the same sentence",
    "trivial_diff": "the sentences differ only in punctuation, case or spacing",
    "multi_span": "more than one changed span (gender agreement counted as one)",
    "span_not_identity": "no changed span names an identity term from the inventory",
    "attribute_changed": "a non-identity word changed as well as the group",
    "mixed_scripts": "a sentence mixes writing systems, or is not in its language's script",
    "translation_collapsed": "the translations are identical although the source pair differs",
    "translation_not_minimal": "the source pair is minimal but its translation is not",
    "duplicate": "the same pair occurs earlier in the file",
}
__doc__ += "\n".join(f"- ``{k}``: {v}" for k, v in FLAG_CODES.items()) + "\n"


@dataclass
class Flag:
    code: str
    reason: str
    suggestion: str | None = None

    def as_dict(self) -> dict[str, str]:
        d = {"code": self.code, "reason": self.reason}
        if self.suggestion:
            d["suggestion"] = self.suggestion
        return d


@dataclass
class Span:
    more: list[str]
    less: list[str]
    kind: str  # identity | gender | other
    op: str  # replace | insert | delete
    gendered_identity: bool = False

    def as_list(self) -> list:
        return [" ".join(self.more), " ".join(self.less), self.kind]


@dataclass
class Diff:
    spans: list[Span]
    unmodified: list[str]  # U: words shared by both sentences
    modified_more: list[str]  # M in sent_more
    modified_less: list[str]  # M in sent_less

    @property
    def n_changes(self) -> int:
        """Changed spans, where every gender change (gendered identity words, names, pronouns,
        agreeing Hindi endings) together counts as one, and the same group swap repeated
        ("poor ... poor" -> "rich ... rich") counts once."""
        other = sum(1 for s in self.spans if s.kind == "other")
        groups = {
            (tuple(map(norm_word, s.more)), tuple(map(norm_word, s.less)))
            for s in self.spans
            if s.kind == "identity" and not s.gendered_identity
        }
        gender = any(s.kind == "gender" or (s.kind == "identity" and s.gendered_identity) for s in self.spans)
        return other + len(groups) + (1 if gender else 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "spans": [s.as_list() for s in self.spans],
            "n_changes": self.n_changes,
            "n_unmodified": len(self.unmodified),
            "modified_more": self.modified_more,
            "modified_less": self.modified_less,
        }


def _get(pair: Any, key: str, default: Any = None) -> Any:
    if isinstance(pair, dict):
        return pair.get(key, default)
    return getattr(pair, key, default)


@functools.cache
def _compiled(pattern: str, flags: int = 0) -> re.Pattern:
    return re.compile(pattern, flags)


def _gender_pair(a: str, b: str, inv: Inventory, lang: str) -> bool:
    """Are ``a`` and ``b`` gender counterparts (he/she, his/her; Hindi लड़का/लड़की, करता/करती)?

    From the language's data (``data/languages/<code>/``): its listed gendered words (compared
    case-folded in a script with case, after a shared clitic such as English 's is set apart), a word
    that pairs with several (English *her* with *him* and *his*), and, where the language marks
    gender agreement by endings (``grammar.gender_endings``), any two words with the same stem whose
    endings differ (Hindi: the gender/number vowel -ā/-ī/-e of participles and adjectives, with or
    without nasalisation)."""
    g = L.grammar(lang)
    if g.clitics:
        rx = _compiled(g.clitics, re.I)
        ca, cb = rx.search(a), rx.search(b)
        if ca and cb and ca.group(1).lower() == cb.group(1).lower():
            a, b = a[: ca.start()], b[: cb.start()]
    if g.case:
        a, b = norm_word(a), norm_word(b)
    if a == b:
        return False
    words = inv.gender_words(lang)
    pa, pb = words.get(a), words.get(b)
    if pa is not None and pb is not None and (set(pa) == {a, b} or set(pb) == {a, b}):
        return True
    for w, others in g.ambiguous.items():
        if w in (a, b) and pa is not None and pb is not None and ({a, b} - {w}) <= set(others):
            return True
    if g.gender_endings:
        rx = _compiled(g.gender_endings)
        ma, mb = rx.match(a), rx.match(b)
        return bool(ma and mb and ma.group(1) == mb.group(1) and ma.group(2) != mb.group(2))
    return False


def _overlaps(matches: list[tuple[int, int, bool]], lo: int, hi: int) -> bool | None:
    """None when no match overlaps [lo, hi); else whether an overlapping match is gendered."""
    found = None
    for s, e, g in matches:
        if s < hi and lo < e:
            found = bool(found) or g
    return found


def _identity_ranges(
    tokens: list[Token], lang: str, inv: Inventory, initial: set[int] | None = None
) -> list[tuple[int, int, bool]]:
    """Token ranges that name a group: inventory terms, first names from the inventory (Indian
    names also in lower case), and, in Latin script, capitalised words after the first word
    (proper nouns: names, places, nationalities)."""
    out = [(m.start, m.end, bool(m.term.gender)) for m in inv.find(tokens, lang)]
    for i, t in enumerate(tokens):
        info = inv.name_info(t.text)
        if info and (t.text[:1].isupper() or lang != "en" or info.get("origin") == "india"):
            out.append((i, i + 1, True))
        elif (
            i > 0
            and i not in (initial or ())
            and t.text[:1].isupper()
            and t.text[:1].isalpha()
            and scripts(t.text).get("Latin")
            and norm_word(t.text) not in inv.en_gender  # the source language's (Latin script) gendered words
            and norm_word(t.text) not in _FUNCTION_WORDS
        ):
            out.append((i, i + 1, False))
    return out


_FUNCTION_WORDS = set(
    """i you we they it this that these those the a an my your our their its me us them
there here what who when where why how if so but and or because then as at in on of for to with by from""".split()
)


def _content_tokens(text: str) -> tuple[list[Token], set[int]]:
    """Non-punctuation tokens and the indices of those that start a sentence."""
    toks: list[Token] = []
    initial: set[int] = set()
    start = True
    for t in tokenize(text):
        if t.is_punct:
            if is_sentence_end(t.text):
                start = True
            continue
        if start:
            initial.add(len(toks))
        toks.append(t)
        start = False
    return toks, initial


def word_diff(sent_more: str, sent_less: str, lang: str = "en", inventory: Inventory | None = None) -> Diff:
    """Word-level diff of a pair with each changed span classified (see the module docstring)."""
    inv = inventory or load_inventory()
    tm, init_m = _content_tokens(sent_more)
    tl, init_l = _content_tokens(sent_less)
    km = [norm_word(t.text) for t in tm]
    kl = [norm_word(t.text) for t in tl]
    im = _identity_ranges(tm, lang, inv, init_m)
    il = _identity_ranges(tl, lang, inv, init_l)
    sm = difflib.SequenceMatcher(a=km, b=kl, autojunk=False)
    spans: list[Span] = []
    unmod: list[str] = []
    mm: list[str] = []
    ml: list[str] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            unmod += [t.text for t in tm[i1:i2]]
            continue
        a = [t.text for t in tm[i1:i2]]
        b = [t.text for t in tl[j1:j2]]
        mm += a
        ml += b
        ga = _overlaps(im, i1, i2) if i2 > i1 else None
        gb = _overlaps(il, j1, j2) if j2 > j1 else None
        if ga is not None or gb is not None:
            spans.append(Span(a, b, "identity", op, bool(ga) or bool(gb)))
        elif (
            op == "replace"
            and len(a) == len(b)
            and all(_gender_pair(x, y, inv, lang) for x, y in zip(a, b, strict=False))
        ):
            spans.append(Span(a, b, "gender", op))
        else:
            spans.append(Span(a, b, "other", op))
    return Diff(spans, unmod, mm, ml)


def _script_flags(pair: Any, lang: str) -> list[Flag]:
    expected = expected_script(lang)
    problems = []
    for name in ("sent_more", "sent_less"):
        text = str(_get(pair, name) or "")
        sc = {k: v for k, v in scripts(text).items() if v}
        if len(sc) > 1:
            foreign = [
                w.text for w in tokenize(text) if not w.is_punct and expected and (set(scripts(w.text)) - {expected})
            ]
            problems.append(
                f"{name} mixes {' + '.join(sorted(sc))}" + (f" ({', '.join(foreign[:5])})" if foreign else "")
            )
        elif expected and sc and expected not in sc:
            problems.append(f"{name} is written in {next(iter(sc))}, expected {expected} for lang '{lang}'")
    if not problems:
        return []
    return [
        Flag(
            "mixed_scripts",
            "; ".join(problems) + ".",
            "transliterate or translate the foreign-script words, or fix the lang field.",
        )
    ]


def check_pair(
    pair: Any,
    *,
    source_pair: Any = None,
    inventory: Inventory | None = None,
    lang: str | None = None,
    diff: Diff | None = None,
) -> list[Flag]:
    """Flags for one pair (a :class:`~biaskit.schema.SentencePair`, a dict or any object with
    ``sent_more``/``sent_less``/``lang``). ``source_pair`` is the pair this one was translated from
    (it enables the ``translation_*`` flags). Duplicates need the whole file: :func:`check_pairs`."""
    inv = inventory or load_inventory()
    lang = (lang or _get(pair, "lang") or "en").lower()
    more = str(_get(pair, "sent_more") or "")
    less = str(_get(pair, "sent_less") or "")
    flags: list[Flag] = []
    src_diff = _source_diff(source_pair, inv) if source_pair is not None else None
    if normalize_text(more) == normalize_text(less):
        flags.append(
            Flag(
                "identical",
                "sent_more and sent_less are identical.",
                "make the sentences differ in the group term, or drop the pair.",
            )
        )
    else:
        flags += _diff_flags(diff or word_diff(more, less, lang, inv), src_diff, lang)
    if src_diff is not None and any(f.code in ("identical", "trivial_diff") for f in flags):
        flags.append(_collapsed_flag(src_diff, lang))
    flags += _script_flags(pair, lang)
    return flags


def _source_diff(source_pair: Any, inv: Inventory) -> Diff | None:
    """The word diff of the pair a translation came from (None: its two sentences are the same)."""
    s_lang = (_get(source_pair, "lang") or "en").lower()
    s_more, s_less = str(_get(source_pair, "sent_more") or ""), str(_get(source_pair, "sent_less") or "")
    if normalize_text(s_more) != normalize_text(s_less):
        return word_diff(s_more, s_less, s_lang, inv)
    return None


def _diff_flags(d: Diff, src_diff: Diff | None, lang: str) -> list[Flag]:
    """The flags of a pair whose sentences differ (``d``: their word diff; ``src_diff``: the source
    pair's, for a translation): nothing but punctuation, several spans, no identity term, other words
    changed, a translation less minimal than its source."""
    if not d.spans:
        return [
            Flag(
                "trivial_diff",
                "the sentences differ only in punctuation, case or spacing.",
                "change the group term, or drop the pair.",
            )
        ]
    flags: list[Flag] = []
    spans_txt = "; ".join(f"'{' '.join(s.more) or '∅'}' -> '{' '.join(s.less) or '∅'}' ({s.kind})" for s in d.spans)
    if d.n_changes > 1:
        flags.append(
            Flag(
                "multi_span",
                f"{d.n_changes} changed spans: {spans_txt}.",
                "keep only the change of the group term (and words that must agree with it).",
            )
        )
    if not any(s.kind in ("identity", "gender") for s in d.spans):
        flags.append(
            Flag(
                "span_not_identity",
                f"no changed span names an identity term: {spans_txt}.",
                "check the pair, or add the group term to the inventory ("
                + (
                    "data/inventories"
                    if lang == L.source_code()
                    else f"its {lang} forms: data/languages/{lang}/inventory.json"
                )
                + ").",
            )
        )
    others = [s for s in d.spans if s.kind == "other"]
    if others and len(others) < len(d.spans):
        flags.append(
            Flag(
                "attribute_changed",
                "besides the group, other words changed: "
                + "; ".join(f"'{' '.join(s.more) or '∅'}' -> '{' '.join(s.less) or '∅'}'" for s in others)
                + ".",
                "make the rest of the two sentences identical.",
            )
        )
    if src_diff is not None and src_diff.n_changes <= 1 and d.n_changes > 1:
        flags.append(
            Flag(
                "translation_not_minimal",
                f"the source pair differs in one place but this pair in {d.n_changes}: {spans_txt}.",
                "re-translate sent_less from sent_more by swapping only the group term.",
            )
        )
    return flags


def _collapsed_flag(src_diff: Diff, lang: str) -> Flag:
    """``translation_collapsed``: the source pair differs but its translations do not; for gendered
    English pronouns, the suggestion names the language's explicit words (data/languages)."""
    changed = "; ".join(f"'{' '.join(s.more)}' vs '{' '.join(s.less)}'" for s in src_diff.spans)
    genders = [s for s in src_diff.spans if s.kind == "gender" or (s.kind == "identity" and s.gendered_identity)]
    pronouns = {"he", "she", "him", "her", "his", "hers", "himself", "herself"}
    said = L.grammar(lang).pronouns if L.get(lang) is not None else None
    if genders and said and said.explicit and any(norm_word(w) in pronouns for s in genders for w in s.more + s.less):
        suggestion = (
            f"gendered English pronouns collapse to {said.collapsed_to} in {L.name_of(lang)}: name the person "
            f"explicitly, e.g. '{said.explicit['m']}' / '{said.explicit['f']}'."
        )
    else:
        suggestion = "translate the differing words explicitly so that the two translations differ in them."
    return Flag(
        "translation_collapsed",
        f"the source pair differs ({changed}) but the translations are identical.",
        suggestion,
    )


@dataclass
class CheckedPair:
    row: int | None
    pair: dict[str, Any]
    flags: list[Flag] = field(default_factory=list)
    diff: Diff | None = None

    @property
    def codes(self) -> list[str]:
        return [f.code for f in self.flags]

    def as_dict(self) -> dict[str, Any]:
        out = {**self.pair, "row": self.row, "flags": [f.as_dict() for f in self.flags]}
        if self.diff is not None:
            out["diff"] = self.diff.as_dict()
        return out


def _as_rows(pairs: Iterable[Any]) -> Iterator[tuple[int | None, dict]]:
    """``(row, dict)`` for pairs given as ``(row, dict)`` tuples, dicts or SentencePairs."""
    for i, p in enumerate(pairs, start=1):
        if isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], dict):
            yield p[0], dict(p[1])
        elif isinstance(p, dict):
            yield p.get("row", i), dict(p)
        else:
            yield i, (p.model_dump(mode="json") if hasattr(p, "model_dump") else dict(vars(p)))


def _is_en(r: dict) -> bool:
    return (r.get("lang") or "en").lower() == "en"


class _Prepass:
    """What one pass over the rows tells before any pair is checked (``rows`` is called again for each
    pass; nothing is held per row but two 64-bit digests):

    - ``find(pair)``: its source pair or None (see :func:`check_pairs`): the ``source_id`` the
      translated views need are noted, and only when some are, a second pass keeps those English
      views' sentences;
    - ``duplicate(i)``: for the i-th row, the earlier row it repeats (exactly, or with its two
      sentences swapped), found with sorted digests of the normalised text: the first row whose text
      is the same either way round is the original, every later one is flagged pointing at it.

    ``validate`` runs on every row of the first pass (before any work)."""

    def __init__(
        self,
        rows: Callable[[], Iterable[tuple[int | None, dict]]],
        sources: dict[str, Any] | None,
        validate: Callable[[int | None, dict], None] | None = None,
    ):
        from array import array

        import numpy as np

        self.extra = dict(sources or {})
        needed: set[int] = set()  # hash(source_id) of the translated views without their source
        keys, swapped, rownums = array("Q"), array("Q"), array("q")
        for row, r in rows():
            if validate is not None:
                validate(row, r)
            sid = r.get("source_id")
            if (
                sid
                and not _is_en(r)
                and not isinstance((r.get("meta") or {}).get("source_pair"), dict)
                and sid not in self.extra
            ):
                needed.add(hash(sid))
            lang = (r.get("lang") or "en").lower()
            a = normalize_text(str(r.get("sent_more") or "")).casefold()
            b = normalize_text(str(r.get("sent_less") or "")).casefold()
            keys.append(_text_key(lang, a, b))
            swapped.append(_text_key(lang, b, a))
            rownums.append(row if row is not None else -1)
        self.by_source: dict[int, bytes] = {}  # hash(source_id) -> "lang\0sent_more\0sent_less" (UTF-8)
        if needed:
            for _, r in rows():
                sid = r.get("source_id")
                h = hash(sid) if sid else None
                if h in needed and _is_en(r) and h not in self.by_source:
                    self.by_source[h] = "\0".join(
                        (str(r.get("lang") or "en"), str(r.get("sent_more") or ""), str(r.get("sent_less") or ""))
                    ).encode("utf-8")
        k = np.frombuffer(keys, dtype=np.uint64)
        sw = np.frombuffer(swapped, dtype=np.uint64)
        self.rows = np.frombuffer(rownums, dtype=np.int64)
        n = len(k)
        self.first = np.full(n, n, dtype=np.int64)  # the first row with this text either way round
        self.same = np.ones(n, dtype=bool)  # ... written the same way round as row i
        if n:
            uniq, first = np.unique(k, return_index=True)
            f_key = first[np.searchsorted(uniq, k)]
            pos = np.minimum(np.searchsorted(uniq, sw), len(uniq) - 1)
            f_sw = np.where(uniq[pos] == sw, first[pos], n)
            self.first = np.minimum(f_key, f_sw)
            self.same = k[self.first] == k
        self._keys = keys

    def find(self, r: dict) -> Any | None:
        if _is_en(r):
            return None
        meta = r.get("meta") or {}
        if isinstance(meta.get("source_pair"), dict):
            return meta["source_pair"]
        sid = r.get("source_id")
        if sid and sid in self.extra:
            return self.extra[sid]
        packed = self.by_source.get(hash(sid)) if sid else None
        if packed is not None:
            lang, more, less = packed.decode("utf-8").split("\0")
            return {"lang": lang, "sent_more": more, "sent_less": less}
        return None

    def duplicate(self, i: int) -> Flag | None:
        if i >= len(self.first) or self.first[i] >= i:
            return None
        f = int(self.first[i])
        row = int(self.rows[f]) if self.rows[f] >= 0 else None
        if self.same[i]:
            return Flag("duplicate", f"the same pair occurs earlier (row {row}).", "drop one of the copies.")
        return Flag(
            "duplicate",
            f"the same pair with the sentences swapped occurs earlier (row {row}).",
            "drop one of the copies.",
        )


def _text_key(lang: str, a: str, b: str) -> int:
    """A 64-bit digest of a pair's normalised text (duplicates are found without keeping the text)."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(f"{lang}\0{a}\0{b}".encode(), digest_size=8).digest(), "big")


def iter_checked(
    rows: Callable[[], Iterable[tuple[int | None, dict]]],
    *,
    inventory: Inventory | None = None,
    sources: dict[str, Any] | None = None,
    with_diff: bool = True,
    validate: Callable[[int | None, dict], None] | None = None,
) -> Iterator[CheckedPair]:
    """:func:`check_pairs` as a stream: ``rows()`` gives a fresh iterator of ``(row, dict)`` for each
    pass (a file read again); memory stays bounded whatever the input's size (:class:`_Prepass`)."""
    inv = inventory or load_inventory()
    pre = _Prepass(rows, sources, validate)
    for i, (row, r) in enumerate(rows()):
        lang = (r.get("lang") or "en").lower()
        more, less = str(r.get("sent_more") or ""), str(r.get("sent_less") or "")
        d = None
        if normalize_text(more) != normalize_text(less):
            d = word_diff(more, less, lang, inv)
        flags = check_pair(r, source_pair=pre.find(r), inventory=inv, lang=lang, diff=d)
        dup = pre.duplicate(i)
        if dup is not None:
            flags.append(dup)
        yield CheckedPair(row, r, flags, d if with_diff else None)


def check_pairs(
    pairs: Iterable[Any],
    *,
    inventory: Inventory | None = None,
    sources: dict[str, Any] | None = None,
    with_diff: bool = True,
) -> list[CheckedPair]:
    """Check every pair; also flags later copies of a pair (``duplicate``, exact or with the two
    sentences swapped). Pairs may be ``(row, dict)`` tuples (as from
    :func:`biaskit.readers.iter_pair_rows`), dicts or SentencePairs. A non-English pair is compared
    with its source: ``meta.source_pair``, ``sources[source_id]``, or the English pair with the same
    ``source_id`` in the same input (IndiBias' English and Hindi views)."""
    rows = list(_as_rows(pairs))
    return list(iter_checked(lambda: iter(rows), inventory=inventory, sources=sources, with_diff=with_diff))


def pair_key(r: dict, row: int | None = None) -> str:
    """Which pair a language view belongs to, for counting pairs: its ``source_id`` (IndiBias' English
    and Hindi views share one; a translation's is its English pair's id), else its ``pair_id``, else its row."""
    return str(r.get("source_id") or r.get("pair_id") or f"row {row}")


class CheckSummary:
    """Counts of a check, in one unit -- pairs (a pair's language views count once; a pair is flagged
    when any view is) -- with the language views beside them; ``examples`` rows kept per flag. Pairs
    are told apart by a hash of :func:`pair_key`, kept in arrays (a few bytes per view) and counted
    at the end."""

    def __init__(self, examples: int = 0):
        from array import array

        self.examples = examples
        self._codes = list(FLAG_CODES)
        self._pairs = array("q")  # every view's pair
        self._flag_pairs = array("q")  # per flag of a view: its pair ...
        self._flag_codes = array("h")  # ... and the flag
        self.views = 0
        self.flagged_views = 0
        self.by_lang: dict[str, int] = {}
        self.rows: dict[str, list[CheckedPair]] = {code: [] for code in FLAG_CODES}

    def add(self, c: CheckedPair) -> None:
        k = hash(pair_key(c.pair, c.row))
        self._pairs.append(k)
        self.views += 1
        lang = c.pair.get("lang") or "en"
        self.by_lang[lang] = self.by_lang.get(lang, 0) + 1
        if c.flags:
            self.flagged_views += 1
        for code in set(c.codes):
            if code not in self._codes:
                self._codes.append(code)
            self._flag_pairs.append(k)
            self._flag_codes.append(self._codes.index(code))
            kept = self.rows.setdefault(code, [])
            if len(kept) < self.examples:
                kept.append(c)

    def as_dict(self) -> dict[str, Any]:
        import numpy as np

        pairs = len(np.unique(np.frombuffer(self._pairs, dtype=np.int64))) if self._pairs else 0
        fp = np.frombuffer(self._flag_pairs, dtype=np.int64)
        fc = np.frombuffer(self._flag_codes, dtype=np.int16)
        flagged = len(np.unique(fp)) if len(fp) else 0
        per_code = {code: (len(np.unique(fp[fc == i])) if len(fp) else 0) for i, code in enumerate(self._codes)}
        return {
            "pairs": pairs,
            "views": self.views,
            "flagged": flagged,
            "flagged_views": self.flagged_views,
            "passed": pairs - flagged,
            "by_lang": dict(self.by_lang),
            "flags": per_code,
        }

    def describe(self) -> str:
        """``32 pairs (64 language views: en 32, hi 32), 1 flagged``."""
        d = self.as_dict()
        langs = ", ".join(f"{k} {v}" for k, v in d["by_lang"].items())
        views = f"{d['views']} language views: {langs}" if d["views"] != d["pairs"] else langs
        return f"{d['pairs']} pairs ({views}), {d['flagged']} flagged"


def summarize(checked: Iterable[CheckedPair]) -> dict[str, Any]:
    s = CheckSummary()
    for c in checked:
        s.add(c)
    return s.as_dict()


def check_file(
    path: str,
    *,
    format: str = "auto",
    lang: str | None = None,
    out: str | None = None,
    inventory: Inventory | None = None,
    sources_path: str | None = None,
) -> tuple[list[CheckedPair], dict]:
    """Read any pair file (biaskit JSONL/CSV, CrowS-Pairs, IndiBias) *without* validation (so identical
    pairs are seen), check it, optionally write every pair with its ``flags`` to ``out`` (JSONL).
    Returns every checked pair and the summary; :func:`check_file_stream` keeps none in memory."""
    checked: list[CheckedPair] = []
    summary = check_file_stream(
        path, format=format, lang=lang, out=out, inventory=inventory, sources_path=sources_path, keep=checked.append
    )
    return checked, summary.as_dict()


def check_file_stream(
    path: str,
    *,
    format: str = "auto",
    lang: str | None = None,
    out: str | None = None,
    inventory: Inventory | None = None,
    sources_path: str | None = None,
    examples: int = 0,
    keep: Callable[[CheckedPair], None] | None = None,
) -> CheckSummary:
    """:func:`check_file` reading the file as it goes (twice, three times for translated views) and
    writing each checked pair at once: memory stays bounded whatever the file's size (``curate check``
    on 200 MB). Returns the :class:`CheckSummary` (``examples`` rows per flag)."""
    from biaskit.errors import InputError
    from biaskit.io import atomic_open, dumps_line
    from biaskit.readers import iter_pair_rows
    from biaskit.schema import Direction, normalize_direction

    inv = inventory or load_inventory()
    directions = {d.value for d in Direction}

    def known_direction(file):  # the checker sees invalid pairs, not direction typos
        def check(i, r):
            if "direction" in r and normalize_direction(r["direction"]) not in directions:
                raise InputError(
                    f"unknown direction {r['direction']!r}.",
                    path=file,
                    row=i,
                    column="direction",
                    fix="use 'stereo' or 'antistereo' (CrowS-Pairs: stereo_antistereo).",
                )

        return check

    sources: dict[str, dict] | None = None
    if sources_path:
        sources = {}
        check = known_direction(sources_path)
        for i, r in iter_pair_rows(sources_path):
            check(i, r)
            for k in (r.get("pair_id"), r.get("source_id")):
                if k:
                    sources.setdefault(
                        k,
                        {
                            "lang": r.get("lang") or "en",
                            "sent_more": r.get("sent_more"),
                            "sent_less": r.get("sent_less"),
                        },
                    )
    summary = CheckSummary(examples)
    stream = iter_checked(
        lambda: iter_pair_rows(path, format=format, lang=lang),
        inventory=inv,
        sources=sources,
        validate=known_direction(path),
    )
    with atomic_open(out, "w") if out else contextlib.nullcontext() as fh:
        for c in stream:
            summary.add(c)
            if keep is not None:
                keep(c)
            if fh is not None:
                fh.write(dumps_line(c.as_dict()) + "\n")
    return summary
