"""Unmodified (U) and modified (M) spans of a minimal pair, at token or word level.

Token level (CrowS-Pairs, Nangia et al. 2020; reference ``nyu-mll/crows-pairs`` ``metric.py``
``get_span``): run :class:`difflib.SequenceMatcher` over the two token-id sequences; tokens inside
``equal`` opcodes are U, all others are M. Special tokens added by the tokenizer ([CLS]/[SEP],
<s>/</s>) are never scored: the reference drops the first and last entry of its template list,
which are exactly those tokens for BERT-, RoBERTa- and ALBERT-style tokenizers; we drop the
positions the tokenizer's ``special_tokens_mask`` flags, which is the same set there and also right
for tokenizers that add a different number of special tokens.

We call ``SequenceMatcher(None, a, b, autojunk=False)``. The reference uses the default
``autojunk=True``; that heuristic only triggers when the second sequence has 200 or more items
(then items occurring in more than 1% of it are treated as "popular" junk and cannot start a
match), so the two agree on every pair shorter than 200 tokens (all of CrowS-Pairs and IndiBias)
and ours stays a true longest-matching-block diff on longer inputs.

Word level (``unit="word"``, for Hindi and other scripts where subword pieces are shared across
different words, IndiBias §6.1): the diff runs over whitespace-separated words. A word is U when it
lies in an ``equal`` opcode; every piece of a changed word is M. Pieces are mapped to words through
the fast tokenizer's character offsets (a piece belongs to every word its non-space characters
overlap; a piece made only of a word-boundary marker such as SentencePiece's bare "▁" belongs to
the word that follows it), so a piece is never U if any word it touches changed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from biaskit.options import say

_WORD = re.compile(r"\S+")


def diff_equal(a: Sequence, b: Sequence) -> tuple[list[int], list[int]]:
    """Indices of ``a`` and ``b`` inside ``equal`` opcodes (in order, paired one to one)."""
    sm = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    ua: list[int] = []
    ub: list[int] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            ua.extend(range(i1, i2))
            ub.extend(range(j1, j2))
    return ua, ub


@dataclass(frozen=True)
class SentenceSpans:
    """Scoring plan of one sentence of a pair.

    ``ids``: token ids with the tokenizer's special tokens; ``special``: positions never scored;
    ``u_groups`` / ``m_groups``: groups of token positions that are masked together and scored
    together (one position per group at token level, all pieces of one word at word level).
    """

    ids: tuple[int, ...]
    special: frozenset[int]
    u_groups: tuple[tuple[int, ...], ...]
    m_groups: tuple[tuple[int, ...], ...]

    @property
    def u_positions(self) -> list[int]:
        return [p for g in self.u_groups for p in g]

    @property
    def m_positions(self) -> list[int]:
        return [p for g in self.m_groups for p in g]


def _encode(tokenizer, text: str, offsets: bool = False) -> dict:
    kw = dict(
        add_special_tokens=True,
        return_special_tokens_mask=True,
        return_attention_mask=False,
        return_token_type_ids=False,
        truncation=False,
    )
    if offsets:
        kw["return_offsets_mapping"] = True
    return tokenizer(text, **kw)


def token_spans(tokenizer, text_a: str, text_b: str) -> tuple[SentenceSpans, SentenceSpans]:
    """Token-level U/M spans (one group per token) of a pair of already case-normalised sentences."""
    ea, eb = _encode(tokenizer, text_a), _encode(tokenizer, text_b)
    ida, idb = list(ea["input_ids"]), list(eb["input_ids"])
    sa = frozenset(i for i, s in enumerate(ea["special_tokens_mask"]) if s)
    sb = frozenset(i for i, s in enumerate(eb["special_tokens_mask"]) if s)
    ua, ub = diff_equal(ida, idb)
    keep = [(x, y) for x, y in zip(ua, ub, strict=False) if x not in sa and y not in sb]
    ua_set = {x for x, _ in keep}
    ub_set = {y for _, y in keep}
    out = []
    for ids, spec, uset, pairs_u in ((ida, sa, ua_set, [x for x, _ in keep]), (idb, sb, ub_set, [y for _, y in keep])):
        m = [i for i in range(len(ids)) if i not in spec and i not in uset]
        out.append(
            SentenceSpans(
                ids=tuple(ids), special=spec, u_groups=tuple((p,) for p in pairs_u), m_groups=tuple((p,) for p in m)
            )
        )
    return out[0], out[1]


def words_of(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words of ``text``."""
    return [(m.start(), m.end()) for m in _WORD.finditer(text)]


def piece_words(text: str, offsets: Sequence[tuple[int, int]], special: frozenset[int]) -> list[list[int]]:
    """For each token, the indices of the words it overlaps (empty for special tokens)."""
    words = words_of(text)
    starts = [s for s, _ in words]
    out: list[list[int]] = []
    import bisect

    for i, (s, e) in enumerate(offsets):
        if i in special:
            out.append([])
            continue
        s = int(s)
        e = int(e)
        # skip leading/trailing whitespace inside the piece's span
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s >= e:  # a bare boundary marker ("▁") or an empty span: the word that follows
            k = bisect.bisect_left(starts, int(offsets[i][0]))
            # a zero-width piece inside a word belongs to that word
            j = bisect.bisect_right(starts, int(offsets[i][0])) - 1
            if j >= 0 and words[j][0] <= int(offsets[i][0]) < words[j][1]:
                out.append([j])
            else:
                out.append([min(k, len(words) - 1)] if words else [])
            continue
        first = bisect.bisect_right(starts, s) - 1
        idx = [w for w in range(max(first, 0), len(words)) if words[w][0] < e and s < words[w][1]]
        out.append(idx)
    return out


def word_spans(tokenizer, text_a: str, text_b: str) -> tuple[SentenceSpans, SentenceSpans]:
    """Word-level U/M spans: one group per word (all of its pieces), decided by a word diff."""
    if not getattr(tokenizer, "is_fast", False):
        from biaskit.errors import BiaskitError

        raise BiaskitError(
            "unit 'word' needs a fast (Rust) tokenizer with character offsets; "
            f"{type(tokenizer).__name__} is not one. Fix: use {say('unit', 'token')} or a model "
            "folder with a tokenizer.json"
        )
    wa = [text_a[s:e] for s, e in words_of(text_a)]
    wb = [text_b[s:e] for s, e in words_of(text_b)]
    uwa, uwb = diff_equal(wa, wb)
    out = []
    for text, nwords, uw in ((text_a, len(wa), uwa), (text_b, len(wb), uwb)):
        enc = _encode(tokenizer, text, offsets=True)
        ids = list(enc["input_ids"])
        spec = frozenset(i for i, s in enumerate(enc["special_tokens_mask"]) if s)
        pw = piece_words(text, enc["offset_mapping"], spec)
        changed = set(range(nwords)) - set(uw)
        # groups: contiguous runs of words linked by a piece that spans several words
        owner = list(range(nwords))
        for ws in pw:
            for w in ws[1:]:
                root = owner[ws[0]]
                for k in range(nwords):
                    if owner[k] == owner[w]:
                        owner[k] = root
        groups_u: dict[int, list[int]] = {}
        groups_m: dict[int, list[int]] = {}
        for pos, ws in enumerate(pw):
            if not ws:
                continue
            if any(w in changed for w in ws):
                groups_m.setdefault(owner[ws[0]], []).append(pos)
            else:
                groups_u.setdefault(owner[ws[0]], []).append(pos)
        # a merged group that contains a changed word is M as a whole
        for root in list(groups_u):
            if root in groups_m or any(owner[w] == root for w in changed):
                groups_m.setdefault(root, []).extend(groups_u.pop(root))
        out.append(
            SentenceSpans(
                ids=tuple(ids),
                special=spec,
                u_groups=tuple(tuple(sorted(g)) for _, g in sorted(groups_u.items())),
                m_groups=tuple(tuple(sorted(g)) for _, g in sorted(groups_m.items())),
            )
        )
    return out[0], out[1]


def pair_spans(tokenizer, text_a: str, text_b: str, unit: str = "token") -> tuple[SentenceSpans, SentenceSpans]:
    if unit == "token":
        return token_spans(tokenizer, text_a, text_b)
    if unit in ("word", "word-token"):  # U and M by words (the two differ in how U is masked: mlm.py)
        return word_spans(tokenizer, text_a, text_b)
    from biaskit.errors import BiaskitError

    raise BiaskitError(f"unknown unit '{unit}'. Fix: use token, word or word-token")
