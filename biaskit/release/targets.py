"""Each record's target term and split (the unit of a release's split, StereoSet §6.1).

A target term is spelled one way for every form and language (:func:`canonical_target`); a pair's
comes from its ``group_more``, else the minimal-pair checker's word diff (:func:`pair_target`). The
records are counted per target and stratum (kind, bias type, direction) as integer codes
(:class:`TargetCodes`: what the split needs of a release streamed from disk), then
:func:`plan_split` gives each target its split: stratified by target (:func:`.split.assign_split_counts`,
keeping the targets of an earlier release where they were) or the records' own (``--split-policy
keep``, a target in both splits refused).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..options import say, tell
from . import layout as L
from .options import BuildOptions
from .split import assign_split_counts, norm_target, refuse_leaks, split_report_counts

_ARTICLES = {"a", "an", "the"}


_CANON: dict[tuple[int, str, str], str] = {}


def canonical_target(text: str | None, lang: str = "en", inventory=None) -> str:
    """A target term in one spelling for every form and language: the inventory's English label of
    the identity term when the phrase names one (``Muslims``, ``मुसलमानों`` -> ``muslim``; leading
    articles ignored), else the phrase lower-cased with spaces normalised."""
    key = (id(inventory), lang, text or "")
    hit = _CANON.get(key)
    if hit is None:
        if len(_CANON) > 200_000:
            _CANON.clear()
        hit = _CANON[key] = _canonical_target(text, lang, inventory)
    return hit


def _canonical_target(text: str | None, lang: str, inventory) -> str:
    t = norm_target(text)
    if inventory is not None and t:
        words = t.split(" ")
        while len(words) > 1 and words[0] in _ARTICLES:
            words = words[1:]
        term = inventory.lookup(" ".join(words), lang)
        if term is not None:
            return norm_target(term.label("en"))
        t = " ".join(words)
    return t or "(none)"


def pair_target(p, inventory=None) -> tuple[str, str]:
    """``(target, how)``: the pair's target term and where it came from: ``release`` (an earlier
    release), ``group_more``, ``checker`` (the identity or gender span of the minimal-pair checker's
    word diff), ``changed words`` (the first changed span) or ``none``. Targets are made canonical
    with :func:`canonical_target`."""
    meta = p.meta if isinstance(p.meta, dict) else {}
    prov = p.provenance if isinstance(p.provenance, dict) else {}
    if prov.get("release_id") and meta.get("target"):
        return norm_target(meta["target"]), "release"
    if p.group_more:
        return canonical_target(p.group_more, p.lang, inventory), "group_more"
    from ..check import word_diff

    d = word_diff(p.sent_more, p.sent_less, p.lang, inventory)
    for kinds, how in ((("identity",), "checker"), (("gender",), "checker"), (("other",), "changed words")):
        for s in d.spans:
            if s.kind in kinds and s.more:
                return canonical_target(" ".join(s.more), p.lang, inventory), how
    for s in d.spans:
        if s.less:
            return canonical_target(" ".join(s.less), p.lang, inventory), "changed words"
    return "(none)", "none"


def _previous_targets(prev: str | Path | None) -> dict[str, str]:
    if not prev:
        return {}
    from .read import release_target_splits

    return release_target_splits(prev)


@dataclass
class SplitPlan:
    """Each record's target term and split: the pairs' as integer codes (from the index, each record's
    first view), the CATs' and tuples' as lists; ``report``: :func:`.split.split_report_counts`."""

    codes: TargetCodes
    how: Counter[str]  # where the pairs' targets came from (:func:`pair_target`)
    p_target: np.ndarray  # per pair, its target's code (``codes.t_names``)
    p_split: np.ndarray  # per pair, its split's code (an index into ``layout.SPLITS``)
    c_targets: list[str]
    t_targets: list[str]
    cat_splits: list[str]
    tuple_splits: list[str]
    report: dict[str, Any]

    def pair_counts(self, by_split: Counter, by_split_lang: dict[str, Counter]) -> dict[str, Any]:
        """``release.json``'s ``counts.pairs``."""
        return {
            "records": len(self.p_target),
            "by_split": {sp: by_split.get(sp, 0) for sp in L.SPLITS},
            "targets": len(np.unique(self.p_target)),
            "targets_by_split": {sp: len(np.unique(self.p_target[self.p_split == k])) for k, sp in enumerate(L.SPLITS)},
            "by_split_lang": {sp: dict(c) for sp, c in by_split_lang.items()},
        }


def plan_split(o: BuildOptions, inp, merged, inventory) -> SplitPlan:
    """Targets and strata counted, then each target's split: stratified by target (StereoSet §6.1,
    :func:`.split.assign_split_counts`, keeping an earlier release's) or the records' own (``keep``)."""
    how: Counter[str] = Counter()
    codes = TargetCodes()
    p_target, p_split = _pair_codes(o, merged, codes, how)
    c_targets, t_targets = _other_targets(inp, inventory, codes)
    if o.split_policy == "keep":
        ids = [c.cat_id for c in inp.cats] + [t.tuple_id for t in inp.tuples]
        other_splits = [_kept_split(rid, rec) for rid, rec in zip(ids, [*inp.cats, *inp.tuples], strict=True)]
        by_target = _kept_splits(codes, merged, p_target, p_split, c_targets + t_targets, other_splits, ids)
    else:
        by_target = assign_split_counts(
            codes.t_sorted(),
            codes.matrix(),
            dev_fraction=o.dev_fraction,
            seed=o.seed,
            fixed=_previous_targets(o.previous),
        )
        target_split = np.array([L.SPLITS.index(by_target[t]) for t in codes.t_names], dtype=np.int8)
        p_split = target_split[p_target]
        other_splits = [by_target[t] for t in c_targets + t_targets]
    n_c = len(inp.cats)
    report = split_report_counts(codes.t_sorted(), codes.s_sorted(), codes.matrix(), by_target)
    return SplitPlan(
        codes, how, p_target, p_split, c_targets, t_targets, other_splits[:n_c], other_splits[n_c:], report
    )


def _pair_codes(o: BuildOptions, merged, codes: TargetCodes, how: Counter[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's target code and (``--split-policy keep``) its own split's code; the pairs counted per
    target and stratum (``pairs|bias type|direction``) in ``codes``, their targets' origins in ``how``."""
    n_p = len(merged) if merged is not None else 0
    p_target = np.zeros(n_p, dtype=np.int32)
    p_split = np.full(n_p, -1, dtype=np.int8)  # --split-policy keep: the records' own split
    for pos, (t, h, own, bt, direction) in enumerate(merged.facts() if merged is not None else ()):
        how[h] += 1
        p_target[pos] = codes.target(t)
        codes.count(p_target[pos], f"pairs|{bt}|{direction}")
        if o.split_policy == "keep":
            if own not in L.SPLITS and merged is not None:  # the record's id, for the message
                mp = next(m for k, m in enumerate(merged.records(primary_only=True)) if k == pos)
                _kept_split(mp.id, mp.primary)
            p_split[pos] = L.SPLITS.index(own)
    return p_target, p_split


def _other_targets(inp, inventory, codes: TargetCodes) -> tuple[list[str], list[str]]:
    """The CATs' and tuples' target terms, counted per target and stratum in ``codes``. A translated CAT
    (source_id = a released CAT) takes its source's target: both languages of one CAT land in the
    same split, whatever the translated target term is."""
    cat_by_id = {c.cat_id: c for c in inp.cats}
    c_targets = [
        canonical_target(src.target, src.lang, inventory)
        for src in (cat_by_id.get(c.source_id, c) if c.source_id else c for c in inp.cats)
    ]
    t_targets = [canonical_target(t.identity, t.lang, inventory) for t in inp.tuples]
    strata = [f"cats|{c.bias_type}|" for c in inp.cats] + [f"tuples|{t.axis}|{t.polarity}" for t in inp.tuples]
    for t, st in zip(c_targets + t_targets, strata, strict=True):
        codes.count(codes.target(t), st)
    return c_targets, t_targets


class TargetCodes:
    """The records' target terms and strata as integer codes, and the records counted per (target,
    stratum): what the split needs of a release streamed from disk (not a list of every record)."""

    def __init__(self) -> None:
        self.t_names: list[str] = []
        self._t: dict[str, int] = {}
        self.s_names: list[str] = []
        self._s: dict[str, int] = {}
        self._n: Counter[tuple[int, int]] = Counter()

    def target(self, t: str) -> int:
        code = self._t.get(t)
        if code is None:
            code = self._t[t] = len(self.t_names)
            self.t_names.append(t)
        return code

    def count(self, t_code: int, stratum: str) -> None:
        s = self._s.get(stratum)
        if s is None:
            s = self._s[stratum] = len(self.s_names)
            self.s_names.append(stratum)
        self._n[(int(t_code), s)] += 1

    def t_sorted(self) -> list[str]:
        return sorted(self.t_names)

    def s_sorted(self) -> list[str]:
        return sorted(self.s_names)

    def matrix(self) -> np.ndarray:
        """Records per target (rows, :meth:`t_sorted`) and stratum (columns, :meth:`s_sorted`)."""
        t_row = {t: i for i, t in enumerate(self.t_sorted())}
        s_col = {st: j for j, st in enumerate(self.s_sorted())}
        m = np.zeros((len(t_row), len(s_col)), dtype=np.int64)
        for (t, st), n in self._n.items():
            m[t_row[self.t_names[t]], s_col[self.s_names[st]]] += n
        return m

    def splits_of(self, p_target: np.ndarray, p_split: np.ndarray, other_t: list[str], other_splits: list[str]):
        """--split-policy keep: per target code, the set of splits its records have."""
        seen: dict[int, set[str]] = {}
        for t, sp in set(zip(p_target.tolist(), p_split.tolist(), strict=True)):
            seen.setdefault(t, set()).add(L.SPLITS[sp])
        for t, sp in zip(other_t, other_splits, strict=True):
            seen.setdefault(self._t[t], set()).add(sp)
        return seen


def _kept_split(rid: str, rec) -> str:
    """--split-policy keep: a record's own split (``meta.split``, else an earlier release's)."""
    prov = rec.provenance if isinstance(rec.provenance, dict) else {}
    sp = (rec.meta or {}).get("split") or prov.get("release_split")
    if sp not in L.SPLITS:
        raise InputError(
            f"record {rid} has no split (meta.split is {sp!r}) but {say('split_policy', 'keep')} needs one.",
            fix=f"give every record meta.split = dev|test, or {tell('split_policy', 'target')}.",
        )
    return sp


def _kept_splits(codes: TargetCodes, merged, p_target, p_split, other_t, other_splits, other_ids) -> dict[str, str]:
    """--split-policy keep: each target's split; a target whose records are in both splits is refused
    (:func:`.split.refuse_leaks`: the first such target, and a record of it in each split)."""
    seen = codes.splits_of(p_target, p_split, other_t, other_splits)
    leaks = sorted(codes.t_names[t] for t, sps in seen.items() if len(sps) > 1)
    if not leaks:
        return {codes.t_names[t]: next(iter(sps)) for t, sps in seen.items()}
    first, t_code = leaks[0], codes._t[leaks[0]]
    ex: dict[str, str] = {}
    rows = np.flatnonzero(p_target == t_code)
    if len(rows):
        want = set(rows.tolist())
        for pos, mp in enumerate(merged.records(primary_only=True)):
            if pos in want:
                ex.setdefault(L.SPLITS[p_split[pos]], mp.id)
    for t, sp, rid in zip(other_t, other_splits, other_ids, strict=True):
        if t == first:
            ex.setdefault(sp, rid)
    refuse_leaks([first] * len(ex), list(ex), list(ex.values()), n_leaks=len(leaks))
    return {}  # not reached: refuse_leaks raised
