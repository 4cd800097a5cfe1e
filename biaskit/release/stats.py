"""Release statistics: counts, sentence lengths, vocabulary and keyness (``stats.json`` + plots).

- Counts per bias type x direction x language and split (IndiBias Table 6's stereo/antistereo and
  bias-type shares; StereoSet Table 1's CATs and target terms per domain).
- Sentence length in words (whitespace-separated, as IndiBias Table 6 "Avg. Word Len" and StereoSet
  Table 1 "Avg Len (# words)" count them), per language (and per bias type): mean, median, std,
  min, max and a histogram.
- Vocabulary: distinct lower-cased tokens per language: whitespace-separated words with
  punctuation and symbols trimmed from both ends (Devanagari vowel signs stay in their word; the
  danda ``।`` is trimmed).
- Keyness (StereoSet §5, Table 3):
  * stereotype vs anti-stereotype sentences of each language, by the log-likelihood statistic
    (Dunning 1993; Rayson & Garside 2000): with ``a``, ``b`` a word's counts in the two corpora of
    ``c``, ``d`` tokens, ``E1 = c(a+b)/(c+d)``, ``E2 = d(a+b)/(c+d)``,
    ``LL = 2 (a ln(a/E1) + b ln(b/E2))`` (a zero count adds nothing);
  * the release vs general language, by Kilgarriff's (2009) "simple maths":
    ``(fpm_release + N) / (fpm_reference + N)`` with frequencies per million words, ``N = 1``, and
    the reference frequencies of ``wordfreq`` (English and Hindi). As StereoSet did, the target
    terms are removed from these keywords.
  For a minimal pair the stereotypical sentence is ``sent_more`` when the direction is ``stereo``
  and ``sent_less`` when it is ``antistereo`` (CrowS-Pairs' ``sent1``); for a CAT its stereotype option.
"""
from __future__ import annotations

import functools
import math
from collections import Counter
from typing import Any, Iterable, Optional, Sequence

import numpy as np

_TRIM = None


def _trim_chars() -> str:
    """Every punctuation and symbol character of the Basic Multilingual Plane (Unicode P* and S*)."""
    global _TRIM
    if _TRIM is None:
        import unicodedata

        _TRIM = "".join(chr(c) for c in range(0x10000) if unicodedata.category(chr(c))[0] in "PS")
    return _TRIM


SIMPLE_MATHS_N = 1.0
TOP_K = 20
MIN_COUNT = 2


def _arrow_strings(texts):
    import pyarrow as pa

    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        return texts
    if hasattr(texts, "dtype") and hasattr(texts, "array"):       # a pandas Series (Arrow-backed or object)
        return pa.array(texts, type=pa.string(), from_pandas=True)
    return pa.array(list(texts), type=pa.string())


def _token_array(texts):
    """Lower-cased word tokens of many texts as one Arrow array (vectorised, any script): the
    whitespace-separated words with punctuation and symbols trimmed from both ends (inner ones
    stay: ``don't``, ``sc/st``); empty tokens dropped."""
    import pyarrow.compute as pc

    toks = pc.utf8_trim(pc.list_flatten(pc.utf8_split_whitespace(pc.utf8_lower(_arrow_strings(texts)))), _trim_chars())
    return toks.filter(pc.not_equal(toks, ""))


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (see :func:`_token_array`)."""
    return _token_array([text]).to_pylist()


def count_tokens(texts: Iterable[str]) -> Counter:
    """Token counts over many texts (one vectorised pass)."""
    import pyarrow.compute as pc

    vc = pc.value_counts(_token_array(texts))
    return Counter(dict(zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist())))


def log_likelihood(a, b, c: float, d: float):
    """Log-likelihood keyness of counts ``a`` (corpus 1, ``c`` tokens) vs ``b`` (corpus 2, ``d`` tokens);
    arrays or scalars (see the module docstring)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    e1 = c * (a + b) / (c + d)
    e2 = d * (a + b) / (c + d)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(a > 0, a * np.log(np.where(a > 0, a, 1) / np.where(e1 > 0, e1, 1)), 0.0)
        t2 = np.where(b > 0, b * np.log(np.where(b > 0, b, 1) / np.where(e2 > 0, e2, 1)), 0.0)
    out = 2 * (t1 + t2)
    return float(out) if out.ndim == 0 else out


def simple_maths(fpm_focus, fpm_ref, n: float = SIMPLE_MATHS_N):
    """Kilgarriff's simple-maths keyness score ``(fpm_focus + n) / (fpm_ref + n)``."""
    return (np.asarray(fpm_focus, dtype=float) + n) / (np.asarray(fpm_ref, dtype=float) + n)


def keyness_ll(focus: Counter, ref: Counter, *, top: int = TOP_K, min_count: int = MIN_COUNT,
               exclude: Iterable[str] = ()) -> list[dict]:
    """Words over-used in ``focus`` relative to ``ref``, by log-likelihood, best first."""
    words = list(focus)
    return _ll_top(words, np.array([focus[w] for w in words], dtype=float),
                   np.array([ref.get(w, 0) for w in words], dtype=float), float(sum(focus.values())),
                   float(sum(ref.values())), top=top, min_count=min_count, exclude=exclude)


def _ll_top(words: Sequence[str], a: np.ndarray, b: np.ndarray, c: float, d: float, *, top: int = TOP_K,
            min_count: int = MIN_COUNT, exclude: Iterable[str] = ()) -> list[dict]:
    """:func:`keyness_ll` on arrays: counts ``a`` (corpus of ``c`` tokens) and ``b`` (``d`` tokens) of ``words``."""
    if not c or not d or not len(words):
        return []
    ex = set(exclude)
    ok = (a >= min_count) & (a / c > b / d) & np.array([w not in ex for w in words], dtype=bool)
    idx = np.flatnonzero(ok)
    if not len(idx):
        return []
    ll = log_likelihood(a[idx], b[idx], c, d)
    order = idx[np.lexsort((np.array([words[i] for i in idx]), -ll))][:top]
    pos = {i: k for k, i in enumerate(idx)}
    return [{"word": words[i], "count": int(a[i]), "count_other": int(b[i]), "ll": round(float(ll[pos[i]]), 4)}
            for i in order]


def keyness_general(focus: Counter, lang: str, *, top: int = TOP_K, min_count: int = MIN_COUNT,
                    exclude: Iterable[str] = ()) -> Optional[dict]:
    """Words of ``focus`` frequent relative to general language (wordfreq), by simple maths."""
    words = list(focus)
    return _general_top(words, np.array([focus[w] for w in words], dtype=float), lang, top=top,
                        min_count=min_count, exclude=exclude)


def _general_top(words: Sequence[str], a: np.ndarray, lang: str, *, top: int = TOP_K, min_count: int = MIN_COUNT,
                 exclude: Iterable[str] = ()) -> Optional[dict]:
    from ..errors import require

    wf = require("wordfreq", "release", "keyness against general language")
    if lang not in wf.available_languages():
        return None
    ref_name = f"wordfreq {_version(wf)} ({lang})"
    total = float(a.sum()) if len(a) else 0.0
    ex = set(exclude)
    idx = np.flatnonzero((a >= min_count) & np.array([w not in ex for w in words], dtype=bool)) if len(words) else []
    if not total or not len(idx):
        return {"reference": ref_name, "n": SIMPLE_MATHS_N, "top": []}
    freqs = wf.get_frequency_dict(lang)
    fpm = a[idx] / total * 1e6
    ref = np.array([freqs.get(words[i], 0.0) for i in idx], dtype=float) * 1e6
    score = simple_maths(fpm, ref)
    order = np.lexsort((np.array([words[i] for i in idx]), -score))[:top]
    return {"reference": ref_name, "n": SIMPLE_MATHS_N,
            "top": [{"word": words[idx[k]], "count": int(a[idx[k]]), "fpm": round(float(fpm[k]), 2),
                     "fpm_reference": round(float(ref[k]), 4), "score": round(float(score[k]), 4)} for k in order]}


@functools.lru_cache(maxsize=None)
def _version(mod) -> str:
    try:
        from importlib.metadata import version

        return version(mod.__name__)
    except Exception:  # pragma: no cover
        return "?"


def _length_stats(n: np.ndarray) -> dict[str, Any]:
    if len(n) == 0:
        return {"sentences": 0}
    hist_max = int(n.max())
    edges = list(range(0, hist_max + 2, max(1, math.ceil((hist_max + 1) / 30))))
    h, e = np.histogram(n, bins=edges)
    return {"sentences": int(len(n)), "mean": round(float(n.mean()), 2), "median": float(np.median(n)),
            "std": round(float(n.std()), 2), "min": int(n.min()), "max": hist_max,
            "histogram": {"edges": [int(x) for x in e], "counts": [int(x) for x in h]}}


def _token_counts(texts: list, cells: np.ndarray):
    """``(cell, tok, n)`` counts of the tokens of ``texts`` (``cells[i]`` = the cell of text i) as a
    pandas DataFrame, and the number of whitespace words of every text, in one vectorised pass
    (Arrow split, trim and group-by)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lists = pc.utf8_split_whitespace(pc.utf8_lower(pa.array(texts, type=pa.string())))
    n_words = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    flat = pc.utf8_trim(pc.list_flatten(lists), _trim_chars())
    t = pa.table({"cell": pa.array(cells[parents]), "tok": flat}).filter(pc.not_equal(flat, ""))
    g = t.group_by(["cell", "tok"]).aggregate([("tok", "count")])
    return g.rename_columns(["cell", "tok", "n"]).to_pandas(), n_words


def _group_words(values: Iterable[Optional[str]]) -> set[str]:
    uniq = sorted({str(v) for v in values if v})
    return set(_token_array(uniq).to_pylist()) if uniq else set()


def compute_stats(pair_records: Sequence[dict], cat_rows: Sequence[dict] = (), tuple_rows: Sequence[dict] = (),
                  *, keyness: bool = True) -> dict[str, Any]:
    """The whole ``stats.json`` (see the module docstring)."""
    import pandas as pd

    out: dict[str, Any] = {"definitions": {
        "words": "whitespace-separated words per sentence (IndiBias Table 6, StereoSet Table 1)",
        "tokens": "lower-cased whitespace-separated words with punctuation and symbols (Unicode P*, S*) trimmed "
                  "from both ends",
        "keyness_stereo_vs_anti": "log-likelihood (Rayson & Garside 2000) of a word's counts in the stereotypical vs "
                                  "the anti-stereotypical sentences; words over-used on that side, count >= "
                                  f"{MIN_COUNT}",
        "keyness_vs_general": f"Kilgarriff (2009) simple maths, (fpm + {SIMPLE_MATHS_N:g}) / (fpm_reference + "
                              f"{SIMPLE_MATHS_N:g}), reference = wordfreq; target terms removed; count >= {MIN_COUNT}",
    }}
    if pair_records:
        out["pairs"] = _pair_stats(pair_records, keyness)
    if cat_rows:
        c = pd.DataFrame(list(cat_rows))
        g = c.groupby(["type", "bias_type", "lang", "split"]).agg(n=("id", "size"), targets=("target", "nunique"))
        words = c["context"].str.split().str.len()
        out["cats"] = {"records": int(len(c)),
                       "counts": [{"type": t, "bias_type": b, "lang": lg, "split": sp, "n": int(r.n),
                                   "targets": int(r.targets)} for (t, b, lg, sp), r in g.iterrows()],
                       "targets": {"n": int(c["target"].nunique())},
                       "context_words_mean": {f"{t}/{b}": round(float(v), 2) for (t, b), v in
                                              words.groupby([c["type"], c["bias_type"]]).mean().items()}}
        if keyness:
            kk = {}
            for lg, sub in c.groupby("lang", sort=True):
                cs, ca = count_tokens(sub["stereotype"]), count_tokens(sub["anti-stereotype"])
                targets = _group_words(sub["target"])
                kk[lg] = {"stereotype_vs_anti": keyness_ll(cs, ca, exclude=targets),
                          "anti_vs_stereotype": keyness_ll(ca, cs, exclude=targets)}
                gen = keyness_general(cs, lg, exclude=targets)
                if gen is not None:
                    kk[lg]["stereotype_vs_general"] = gen
            out["cats"]["keyness"] = kk
    if tuple_rows:
        t = pd.DataFrame(list(tuple_rows))
        g = t.groupby(["axis", "polarity", "lang", "split"]).size()
        out["tuples"] = {"records": int(len(t)), "identities": int(t["identity"].nunique()),
                         "counts": [{"axis": a, "polarity": p, "lang": lg, "split": sp, "n": int(n)}
                                    for (a, p, lg, sp), n in g.items()]}
    return out


def write_plots(stats: dict[str, Any], folder) -> list[str]:
    """``counts.png`` (pairs per bias type and direction, per language) and ``lengths.png`` (sentence
    length histograms per language). Returns the file names written."""
    from pathlib import Path

    from ..errors import require

    mpl = require("matplotlib", "release", "release plots")
    mpl.use("Agg", force=True)
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    pairs = stats.get("pairs")
    if pairs and pairs.get("counts"):
        import pandas as pd

        c = pd.DataFrame(pairs["counts"]).groupby(["lang", "bias_type", "direction"])["n"].sum().unstack(fill_value=0)
        langs = sorted({lg for lg, _ in c.index})
        fig, axes = plt.subplots(1, len(langs), figsize=(5 * len(langs), 3.5), squeeze=False)
        for ax, lg in zip(axes[0], langs):
            sub = c.loc[lg]
            sub.plot.barh(ax=ax, stacked=True, color={"stereo": "#c44e52", "antistereo": "#4c72b0"})
            ax.set_title(f"pairs per bias type ({lg})")
            ax.set_xlabel("pairs")
            ax.set_ylabel("")
        fig.tight_layout()
        fig.savefig(folder / "counts.png", dpi=100, metadata={"Software": None})
        plt.close(fig)
        written.append("counts.png")
        lens = pairs.get("sentence_words") or {}
        if lens:
            fig, ax = plt.subplots(figsize=(6, 3.5))
            for lg, e in lens.items():
                h = e.get("histogram")
                if h:
                    ax.stairs(h["counts"], h["edges"], label=f"{lg} (mean {e['mean']})")
            ax.set_xlabel("words per sentence")
            ax.set_ylabel("sentences")
            ax.legend()
            ax.set_title("sentence length")
            fig.tight_layout()
            fig.savefig(folder / "lengths.png", dpi=100, metadata={"Software": None})
            plt.close(fig)
            written.append("lengths.png")
    return written


def _pair_stats(records: Sequence[dict], keyness: bool) -> dict[str, Any]:
    import pandas as pd

    cell_of: dict[tuple[str, str, str], int] = {}       # (lang, split, bias type) -> code
    cells, stereo, anti = [], [], []
    view_groups: dict[str, set] = {}       # lang -> every target, group_more and group_less of its views
    counts, by_split, t_split = Counter(), Counter(), {}
    for r in records:
        st = r["direction"] == "stereo"
        sp, bt = r["split"], r["bias_type"]
        by_split[sp] += 1
        t_split.setdefault(r["target"], sp)
        for lg, v in r["views"].items():
            key = (lg, sp, bt)
            code = cell_of.get(key)
            if code is None:
                code = cell_of[key] = len(cell_of)
            cells.append(code)
            counts[(bt, r["direction"], lg, sp)] += 1
            stereo.append(v["sent_more"] if st else v["sent_less"])
            anti.append(v["sent_less"] if st else v["sent_more"])
            view_groups.setdefault(lg, set()).update((r["target"], v.get("group_more"), v.get("group_less")))
    cells_np = np.asarray(cells, dtype=np.int64)
    keys = list(cell_of)
    langs = sorted({k[0] for k in keys})
    out: dict[str, Any] = {
        "records": len(records), "views": len(cells),
        "by_lang": {lg: sum(n for k, n in counts.items() if k[2] == lg) for lg in langs},
        "by_split": dict(sorted(by_split.items())),
        "counts": [{"bias_type": b, "direction": d, "lang": lg, "split": sp, "n": n}
                   for (b, d, lg, sp), n in sorted(counts.items())],
        "targets": {"n": len(t_split), "by_split": dict(sorted(Counter(t_split.values()).items()))},
    }
    # one tokenising pass per side: token counts per (lang, split, bias type) cell, words per sentence
    tok_s, nw_s = _token_counts(stereo, cells_np)
    tok_a, nw_a = _token_counts(anti, cells_np)
    del stereo, anti
    # sentence lengths (whitespace words), both sentences of every view
    nw = np.concatenate([nw_s, nw_a])
    cc = np.concatenate([cells_np, cells_np])
    cell_lang = np.array([k[0] for k in keys], dtype=object)
    cell_bt = np.array([k[2] for k in keys], dtype=object)
    lengths = {}
    for lg in langs:
        sel = cell_lang[cc] == lg
        entry = _length_stats(nw[sel].astype(int))
        entry["by_bias_type"] = {bt: round(float(nw[sel & (cell_bt[cc] == bt)].mean()), 2)
                                 for bt in sorted({k[2] for k in keys if k[0] == lg})}
        lengths[lg] = entry
    out["sentence_words"] = lengths
    # vocabulary and keyness
    cdf = pd.DataFrame(keys, columns=["lang", "split", "bias_type"])
    tok = pd.concat([tok_s.assign(side="stereo"), tok_a.assign(side="anti")], ignore_index=True)
    tok = tok.join(cdf, on="cell")
    vocab: dict[str, Any] = {}
    key: dict[str, Any] = {}
    for lg, tl in tok.groupby("lang", sort=True):
        both = tl.groupby("tok", sort=True)["n"].sum()
        vocab[lg] = {"types": int(len(both)), "tokens": int(both.sum()),
                     "by_split": {sp: int(g["tok"].nunique()) for sp, g in tl.groupby("split", sort=True)}}
        if not keyness:
            continue
        targets = _group_words({x for x in view_groups.get(lg, ()) if x})
        side = tl.pivot_table(index="tok", columns="side", values="n", aggfunc="sum", fill_value=0)
        words = side.index.tolist()
        a = side["stereo"].to_numpy(float) if "stereo" in side else np.zeros(len(words))
        b = side["anti"].to_numpy(float) if "anti" in side else np.zeros(len(words))
        k = {"stereotype_vs_anti": _ll_top(words, a, b, a.sum(), b.sum()),
             "anti_vs_stereotype": _ll_top(words, b, a, b.sum(), a.sum())}
        gen = _general_top(both.index.tolist(), both.to_numpy(float), lg, exclude=targets)
        k["vs_general"] = gen if gen is not None else {"reference": f"no wordfreq list for '{lg}'", "top": []}
        if gen is not None:
            k["vs_general_by_bias_type"] = {}
            for bt, g in tl.groupby("bias_type", sort=True):
                s2 = g.groupby("tok", sort=True)["n"].sum()
                k["vs_general_by_bias_type"][bt] = _general_top(s2.index.tolist(), s2.to_numpy(float), lg, top=10,
                                                               exclude=targets)["top"]
        key[lg] = k
    out["vocabulary"] = vocab
    if keyness:
        out["keyness"] = key
    return out
