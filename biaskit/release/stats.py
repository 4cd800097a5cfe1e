"""Release statistics: counts, sentence lengths, vocabulary and keyness (``stats.json`` + plots).

- Counts per bias type x direction x language and split (IndiBias Table 6's stereo/antistereo and
  bias-type shares; StereoSet Table 1's CATs and target terms per domain).
- Sentence length in words (whitespace-separated, as IndiBias Table 6 "Avg. Word Len" and StereoSet
  Table 1 "Avg Len (# words)" count them), per language (and per bias type): mean, median, std,
  min, max and a histogram.
- Vocabulary: distinct lower-cased word tokens (letters, marks and digits: Devanagari vowel signs
  stay in their word) per language.
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

import math
from collections import Counter
from typing import Any, Iterable, Optional, Sequence

import numpy as np

TOKEN_PATTERN = r"[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*"
SIMPLE_MATHS_N = 1.0
TOP_K = 20
MIN_COUNT = 2


_PATTERN = None


def _pattern():
    global _PATTERN
    if _PATTERN is None:
        from ..errors import require

        _PATTERN = require("regex", "release", "release statistics").compile(TOKEN_PATTERN)
    return _PATTERN


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (any script)."""
    return _pattern().findall(text.lower())


def count_tokens(texts: Iterable[str]) -> Counter:
    """Token counts over many texts (one regex pass over the joined text)."""
    return Counter(tokens("\n".join(texts)))


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
    c, d = sum(focus.values()), sum(ref.values())
    if not c or not d:
        return []
    ex = set(exclude)
    words = [w for w in focus if focus[w] >= min_count and w not in ex]
    if not words:
        return []
    a = np.array([focus[w] for w in words], dtype=float)
    b = np.array([ref.get(w, 0) for w in words], dtype=float)
    ll = log_likelihood(a, b, c, d)
    over = a / c > b / d
    idx = [i for i in np.argsort(-ll, kind="stable") if over[i]][:top]
    return [{"word": words[i], "count": int(a[i]), "count_other": int(b[i]), "ll": round(float(ll[i]), 4)}
            for i in idx]


def keyness_general(focus: Counter, lang: str, *, top: int = TOP_K, min_count: int = MIN_COUNT,
                    exclude: Iterable[str] = ()) -> Optional[dict]:
    """Words of ``focus`` frequent relative to general language (wordfreq), by simple maths."""
    from ..errors import require

    wf = require("wordfreq", "release", "keyness against general language")
    if lang not in wf.available_languages():
        return None
    freqs = wf.get_frequency_dict(lang)
    total = sum(focus.values())
    ex = set(exclude)
    words = [w for w in focus if focus[w] >= min_count and w not in ex]
    if not total or not words:
        return {"reference": f"wordfreq {_version(wf)} ({lang})", "n": SIMPLE_MATHS_N, "top": []}
    a = np.array([focus[w] for w in words], dtype=float)
    fpm = a / total * 1e6
    ref = np.array([freqs.get(w, 0.0) for w in words], dtype=float) * 1e6
    score = simple_maths(fpm, ref)
    idx = np.argsort(-score, kind="stable")[:top]
    return {"reference": f"wordfreq {_version(wf)} ({lang})", "n": SIMPLE_MATHS_N,
            "top": [{"word": words[i], "count": int(a[i]), "fpm": round(float(fpm[i]), 2),
                     "fpm_reference": round(float(ref[i]), 4), "score": round(float(score[i]), 4)} for i in idx]}


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


def pair_frame(records: Sequence[dict]):
    """One row per (pair, language view): id, split, lang, bias_type, direction, target, stereo and
    anti-stereo sentence (from released record dicts)."""
    import pandas as pd

    rows = []
    for r in records:
        st = r["direction"] == "stereo"
        for lg, v in r["views"].items():
            rows.append((r["id"], r["split"], lg, r["bias_type"], r["direction"], r["target"],
                         v["sent_more"] if st else v["sent_less"], v["sent_less"] if st else v["sent_more"],
                         v.get("group_more"), v.get("group_less")))
    return pd.DataFrame(rows, columns=["id", "split", "lang", "bias_type", "direction", "target", "stereo", "anti",
                                       "group_more", "group_less"])


def _group_words(values: Iterable[Optional[str]]) -> set[str]:
    out: set[str] = set()
    for v in {str(v) for v in values if v}:
        out.update(tokens(v))
    return out


def _sum(counters: Iterable[Counter]) -> Counter:
    out: Counter = Counter()
    for c in counters:
        out.update(c)
    return out


def compute_stats(pair_records: Sequence[dict], cat_rows: Sequence[dict] = (), tuple_rows: Sequence[dict] = (),
                  *, keyness: bool = True) -> dict[str, Any]:
    """The whole ``stats.json`` (see the module docstring)."""
    import pandas as pd

    out: dict[str, Any] = {"definitions": {
        "words": "whitespace-separated words per sentence (IndiBias Table 6, StereoSet Table 1)",
        "tokens": "lower-cased runs of letters, marks and digits (apostrophes inside a word kept)",
        "keyness_stereo_vs_anti": "log-likelihood (Rayson & Garside 2000) of a word's counts in the stereotypical vs "
                                  "the anti-stereotypical sentences; words over-used on that side, count >= "
                                  f"{MIN_COUNT}",
        "keyness_vs_general": f"Kilgarriff (2009) simple maths, (fpm + {SIMPLE_MATHS_N:g}) / (fpm_reference + "
                              f"{SIMPLE_MATHS_N:g}), reference = wordfreq; target terms removed; count >= {MIN_COUNT}",
    }}
    df = pair_frame(pair_records)
    if len(df):
        g = df.groupby(["bias_type", "direction", "lang", "split"]).size().rename("n").reset_index()
        out["pairs"] = {
            "records": len(pair_records), "views": int(len(df)),
            "by_lang": {k: int(v) for k, v in df["lang"].value_counts().sort_index().items()},
            "by_split": {k: int(v) for k, v in df.drop_duplicates("id")["split"].value_counts().sort_index().items()},
            "counts": [{"bias_type": r.bias_type, "direction": r.direction, "lang": r.lang, "split": r.split,
                        "n": int(r.n)} for r in g.itertuples()],
            "targets": {"n": int(df["target"].nunique()),
                        "by_split": {k: int(v) for k, v in
                                     df.drop_duplicates("target")["split"].value_counts().sort_index().items()}},
        }
        lengths: dict[str, Any] = {}
        for lg, sub in df.groupby("lang", sort=True):
            n = np.array([len(x.split()) for x in sub["stereo"]] + [len(x.split()) for x in sub["anti"]], dtype=int)
            entry = _length_stats(n)
            entry["by_bias_type"] = {}
            for bt, s2 in sub.groupby("bias_type", sort=True):
                m = np.array([len(x.split()) for x in s2["stereo"]] + [len(x.split()) for x in s2["anti"]], dtype=float)
                entry["by_bias_type"][bt] = round(float(m.mean()), 2)
            lengths[lg] = entry
        out["pairs"]["sentence_words"] = lengths
        vocab: dict[str, Any] = {}
        key: dict[str, Any] = {}
        for lg, sub in df.groupby("lang", sort=True):
            # one tokenising pass over the text: counts per (split, bias type, side), summed upwards
            cell: dict[tuple[str, str, str], Counter] = {}
            for (sp, bt), s2 in sub.groupby(["split", "bias_type"], sort=True):
                cell[(sp, bt, "stereo")] = count_tokens(s2["stereo"])
                cell[(sp, bt, "anti")] = count_tokens(s2["anti"])
            cs = _sum(c for k, c in cell.items() if k[2] == "stereo")
            ca = _sum(c for k, c in cell.items() if k[2] == "anti")
            both = cs + ca
            vocab[lg] = {"types": len(both), "tokens": int(sum(both.values())),
                         "by_split": {sp: len(_sum(c for k, c in cell.items() if k[0] == sp))
                                      for sp in sorted({k[0] for k in cell})}}
            if keyness:
                targets = _group_words(list(sub["target"]) + list(sub["group_more"]) + list(sub["group_less"]))
                k = {"stereotype_vs_anti": keyness_ll(cs, ca), "anti_vs_stereotype": keyness_ll(ca, cs)}
                gen = keyness_general(both, lg, exclude=targets)
                k["vs_general"] = gen if gen is not None else {"reference": f"no wordfreq list for '{lg}'", "top": []}
                if gen is not None:
                    k["vs_general_by_bias_type"] = {
                        bt: keyness_general(_sum(c for kk, c in cell.items() if kk[1] == bt), lg, top=10,
                                            exclude=targets)["top"]
                        for bt in sorted({kk[1] for kk in cell})}
                key[lg] = k
        out["pairs"]["vocabulary"] = vocab
        if keyness:
            out["pairs"]["keyness"] = key
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
