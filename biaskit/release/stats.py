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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

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
STOP_N = 100  # the most frequent words of a language (wordfreq) are left out of the keyword lists


@functools.cache
def stop_words(lang: str) -> frozenset:
    """The :data:`STOP_N` most frequent words of ``lang`` in general use (wordfreq's ``top_n_list``:
    English 'the', 'to', 'and'; Hindi 'के', 'है', 'में'), as tokens; empty where wordfreq has no list.
    Function words top any keyword list of short sentences without saying anything about them."""
    try:
        import wordfreq
    except ImportError:
        return frozenset()
    path = wordfreq.available_languages().get(lang)
    if path is None:
        return frozenset()
    words: list[str] = []  # top_n_list's words, read without its cached copy of the whole list
    for bucket in wordfreq.read_cBpack(path):
        words += [w for w in bucket if not wordfreq.has_digit_sequence(w)]
        if len(words) >= STOP_N:
            break
    words = words[:STOP_N]
    return frozenset(_token_array(words).to_pylist()) if words else frozenset()


def _arrow_strings(texts):
    import pyarrow as pa

    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        return texts
    if hasattr(texts, "dtype") and hasattr(texts, "array"):  # a pandas Series (Arrow-backed or object)
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
    return Counter(dict(zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist(), strict=False)))


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


def keyness_ll(
    focus: Counter, ref: Counter, *, top: int = TOP_K, min_count: int = MIN_COUNT, exclude: Iterable[str] = ()
) -> list[dict]:
    """Words over-used in ``focus`` relative to ``ref``, by log-likelihood, best first."""
    words = list(focus)
    return _ll_top(
        words,
        np.array([focus[w] for w in words], dtype=float),
        np.array([ref.get(w, 0) for w in words], dtype=float),
        float(sum(focus.values())),
        float(sum(ref.values())),
        top=top,
        min_count=min_count,
        exclude=exclude,
    )


def _ll_top(
    words: Sequence[str],
    a: np.ndarray,
    b: np.ndarray,
    c: float,
    d: float,
    *,
    top: int = TOP_K,
    min_count: int = MIN_COUNT,
    exclude: Iterable[str] = (),
) -> list[dict]:
    """:func:`keyness_ll` on arrays: counts ``a`` (corpus of ``c`` tokens) and ``b`` (``d`` tokens) of ``words``."""
    return [_ll_row(x) for x in _ll_candidates(words, a, b, c, d, top=top, min_count=min_count, exclude=exclude)]


def _ll_candidates(
    words: Sequence[str],
    a: np.ndarray,
    b: np.ndarray,
    c: float,
    d: float,
    *,
    top: int = TOP_K,
    min_count: int = MIN_COUNT,
    exclude: Iterable[str] = (),
) -> list[tuple]:
    """The ``top`` words by log-likelihood, best first, as ``(-ll, word, a, b, ll)``: candidates from
    several parts of a vocabulary merge by sorting these tuples (``c`` and ``d``: the whole corpora's sizes)."""
    if not c or not d or not len(words):
        return []
    ex = set(exclude)
    ok = (a >= min_count) & (a / c > b / d) & np.array([w not in ex for w in words], dtype=bool)
    idx = np.flatnonzero(ok)
    if not len(idx):
        return []
    ll = log_likelihood(a[idx], b[idx], c, d)
    order = np.lexsort((np.array([words[i] for i in idx]), -ll))[:top]
    return [(-float(ll[k]), words[idx[k]], a[idx[k]], b[idx[k]], float(ll[k])) for k in order]


def _ll_row(x: tuple) -> dict:
    return {"word": x[1], "count": int(x[2]), "count_other": int(x[3]), "ll": round(x[4], 4)}


def keyness_general(
    focus: Counter, lang: str, *, top: int = TOP_K, min_count: int = MIN_COUNT, exclude: Iterable[str] = ()
) -> dict | None:
    """Words of ``focus`` frequent relative to general language (wordfreq), by simple maths."""
    words = list(focus)
    return _general_top(
        words, np.array([focus[w] for w in words], dtype=float), lang, top=top, min_count=min_count, exclude=exclude
    )


def reference_frequencies(lang: str, words: Iterable[str]) -> dict[str, float]:
    """wordfreq's frequency of each of ``words`` in general ``lang`` (0 when not listed), the values
    of ``wordfreq.get_frequency_dict`` read from its word list without building that dict (300k words
    for English, kept for the life of the process)."""
    from ..errors import require

    wf = require("wordfreq", "release", "keyness against general language")
    want = set(words)
    out: dict[str, float] = {}
    for index, bucket in enumerate(wf.read_cBpack(wf.available_languages()[lang])):
        hits = want.intersection(bucket)
        if hits:
            freq = wf.cB_to_freq(-index)
            for w in hits:
                out[w] = freq
    return out


def _general_top(
    words: Sequence[str],
    a: np.ndarray,
    lang: str,
    *,
    top: int = TOP_K,
    min_count: int = MIN_COUNT,
    exclude: Iterable[str] = (),
    freqs: dict[str, float] | None = None,
) -> dict | None:
    from ..errors import require

    wf = require("wordfreq", "release", "keyness against general language")
    if lang not in wf.available_languages():
        return None
    total = float(a.sum()) if len(a) else 0.0
    cands = _general_candidates(words, a, lang, total, top=top, min_count=min_count, exclude=exclude, freqs=freqs)
    return _general_result(lang, cands, top)


def _general_result(lang: str, cands: list[tuple], top: int = TOP_K) -> dict:
    """The keyness-against-general-language entry of ``stats.json`` from :func:`_general_candidates`."""
    import wordfreq

    return {
        "reference": f"wordfreq {_version(wordfreq)} ({lang})",
        "n": SIMPLE_MATHS_N,
        "top": [
            {
                "word": w,
                "count": int(n),
                "fpm": round(fpm, 2),
                "fpm_reference": round(ref, 4),
                "score": round(score, 4),
            }
            for _, w, n, fpm, ref, score in sorted(cands)[:top]
        ],
    }


def _general_candidates(
    words: Sequence[str],
    a: np.ndarray,
    lang: str,
    total: float,
    *,
    top: int = TOP_K,
    min_count: int = MIN_COUNT,
    exclude: Iterable[str] = (),
    freqs: dict[str, float] | None = None,
) -> list[tuple]:
    """The ``top`` words by simple-maths score (``total``: the corpus' tokens), best first, as
    ``(-score, word, count, fpm, fpm_reference, score)``: parts of a vocabulary merge by sorting these."""
    ex = set(exclude)
    idx: np.ndarray | list[int] = (
        np.flatnonzero((a >= min_count) & np.array([w not in ex for w in words], dtype=bool)) if len(words) else []
    )
    if not total or not len(idx):
        return []
    if freqs is None:
        freqs = reference_frequencies(lang, (words[i] for i in idx))
    fpm = a[idx] / total * 1e6
    ref = np.array([freqs.get(words[i], 0.0) for i in idx], dtype=float) * 1e6
    score = simple_maths(fpm, ref)
    order = np.lexsort((np.array([words[i] for i in idx]), -score))[:top]
    return [(-float(score[k]), words[idx[k]], a[idx[k]], float(fpm[k]), float(ref[k]), float(score[k])) for k in order]


@functools.cache
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
    return {
        "sentences": int(len(n)),
        "mean": round(float(n.mean()), 2),
        "median": float(np.median(n)),
        "std": round(float(n.std()), 2),
        "min": int(n.min()),
        "max": hist_max,
        "histogram": {"edges": [int(x) for x in e], "counts": [int(x) for x in h]},
    }


def _token_counts(texts: list, cells: np.ndarray, arrow: bool = False):
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
    g = t.group_by(["cell", "tok"], use_threads=False).aggregate([("tok", "count")])  # (threads: memory, no gain)
    g = g.rename_columns(["cell", "tok", "n"])
    return (g if arrow else g.to_pandas()), n_words


def _group_words(values: Iterable[str | None]) -> set[str]:
    uniq = sorted({str(v) for v in values if v})
    return set(_token_array(uniq).to_pylist()) if uniq else set()


def compute_stats(
    pair_records: Sequence[dict],
    cat_rows: Sequence[dict] = (),
    tuple_rows: Sequence[dict] = (),
    *,
    keyness: bool = True,
    pairs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole ``stats.json`` (see the module docstring); ``pairs``: the pairs' part already
    accumulated with :class:`PairStats` (a release written as a stream)."""
    import pandas as pd

    out: dict[str, Any] = {
        "definitions": {
            "words": "whitespace-separated words per sentence (IndiBias Table 6, StereoSet Table 1)",
            "tokens": "lower-cased whitespace-separated words with punctuation and symbols (Unicode P*, S*) trimmed "
            "from both ends",
            "keyness_stereo_vs_anti": "log-likelihood (Rayson & Garside 2000) of a word's counts in the "
            "stereotypical vs the anti-stereotypical sentences; words over-used on that side, count >= "
            f"{MIN_COUNT}; target terms and stop words removed",
            "keyness_vs_general": f"Kilgarriff (2009) simple maths, (fpm + {SIMPLE_MATHS_N:g}) / (fpm_reference + "
            f"{SIMPLE_MATHS_N:g}), reference = wordfreq; target terms and stop words removed; count "
            f">= {MIN_COUNT}",
            "stop_words": f"the {STOP_N} most frequent words of the language in wordfreq's lists (top_n_list)",
        }
    }
    if pairs is not None:
        out["pairs"] = pairs
    elif pair_records:
        out["pairs"] = _pair_stats(pair_records, keyness)
    if cat_rows:
        c = pd.DataFrame(list(cat_rows))
        g = c.groupby(["type", "bias_type", "lang", "split"]).agg(n=("id", "size"), targets=("target", "nunique"))
        words = c["context"].str.split().str.len()  # type: ignore[misc]  # pandas-stubs: .str.len() of list values
        out["cats"] = {
            "records": int(len(c)),
            "counts": [
                {"type": t, "bias_type": b, "lang": lg, "split": sp, "n": int(r.n), "targets": int(r.targets)}
                for (t, b, lg, sp), r in cast("Iterable[tuple[tuple[str, str, str, str], Any]]", g.iterrows())
            ],
            "targets": {"n": int(c["target"].nunique())},
            "context_words_mean": {
                f"{t}/{b}": round(float(v), 2)
                for (t, b), v in cast(
                    "Iterable[tuple[tuple[str, str], float]]", words.groupby([c["type"], c["bias_type"]]).mean().items()
                )
            },
        }
        if keyness:
            kk: dict[str, dict[str, Any]] = {}
            for lg, sub in cast("Iterable[tuple[str, pd.DataFrame]]", c.groupby("lang", sort=True)):
                cs, ca = count_tokens(sub["stereotype"]), count_tokens(sub["anti-stereotype"])
                targets = _group_words(sub["target"]) | stop_words(lg)
                kk[lg] = {
                    "stereotype_vs_anti": keyness_ll(cs, ca, exclude=targets),
                    "anti_vs_stereotype": keyness_ll(ca, cs, exclude=targets),
                }
                gen = keyness_general(cs, lg, exclude=targets)
                if gen is not None:
                    kk[lg]["stereotype_vs_general"] = gen
            out["cats"]["keyness"] = kk
    if tuple_rows:
        t = pd.DataFrame(list(tuple_rows))
        sizes = t.groupby(["axis", "polarity", "lang", "split"]).size()
        out["tuples"] = {
            "records": int(len(t)),
            "identities": int(t["identity"].nunique()),
            "counts": [
                {"axis": a, "polarity": p, "lang": lg, "split": sp, "n": int(n)}
                for (a, p, lg, sp), n in cast("Iterable[tuple[tuple[str, str, str, str], int]]", sizes.items())
            ],
        }
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
        for ax, lg in zip(axes[0], langs, strict=False):
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


def _pair_stats(records: Iterable[dict], keyness: bool) -> dict[str, Any]:
    acc = PairStats()
    for r in records:
        acc.add(r)
    return acc.result(keyness)


class PairStats:
    """The pairs' part of ``stats.json``, accumulated record by record (``add``) while a release is
    written, in memory bounded by a constant: the sentences are tokenised :data:`BATCH` views at a time
    and only counts are kept -- sentence lengths as a histogram per (language, split, bias type), the
    vocabulary as counts per (language, split, bias type, token) and side (:class:`_Vocabulary`: past
    a limit, spilled to ``folder`` in parts by token, each part summarised on its own)."""

    BATCH = 10_000

    def __init__(self, folder: Path | None = None) -> None:
        self.cell_of: dict[tuple[str, str, str], int] = {}  # (lang, split, bias type) -> code
        self.cells: list[int] = []
        self.stereo: list[str] = []
        self.anti: list[str] = []
        self.view_groups: dict[str, set] = {}  # lang -> every target, group_more and group_less of its views
        self.counts: Counter = Counter()
        self.by_split: Counter = Counter()
        self.t_split: dict[str, str] = {}
        self.records = 0
        self.views = 0
        self._lengths: Counter = Counter()  # (cell, words) -> sentences
        self._vocab = _Vocabulary(folder)

    def add(self, r: dict) -> None:
        self.records += 1
        st = r["direction"] == "stereo"
        sp, bt = r["split"], r["bias_type"]
        self.by_split[sp] += 1
        self.t_split.setdefault(r["target"], sp)
        for lg, v in r["views"].items():
            key = (lg, sp, bt)
            code = self.cell_of.get(key)
            if code is None:
                code = self.cell_of[key] = len(self.cell_of)
            self.cells.append(code)
            self.views += 1
            self.counts[(bt, r["direction"], lg, sp)] += 1
            self.stereo.append(v["sent_more"] if st else v["sent_less"])
            self.anti.append(v["sent_less"] if st else v["sent_more"])
            self.view_groups.setdefault(lg, set()).update((r["target"], v.get("group_more"), v.get("group_less")))
        if len(self.cells) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        """Tokenise the sentences kept so far (one vectorised pass per side) and keep only the counts."""
        if not self.cells:
            return
        import pyarrow as pa

        cells = np.asarray(self.cells, dtype=np.int64)
        tok_s, nw_s = _token_counts(self.stereo, cells, arrow=True)
        tok_a, nw_a = _token_counts(self.anti, cells, arrow=True)
        for nw in (nw_s, nw_a):
            keys, n = np.unique(cells * (1 << 32) + nw.astype(np.int64), return_counts=True)
            cell_words = zip((keys >> 32).tolist(), (keys & 0xFFFFFFFF).tolist(), strict=True)
            self._lengths.update(dict(zip(cell_words, n.tolist(), strict=True)))
        zero_s, zero_a = pa.array(np.zeros(len(tok_s), np.int64)), pa.array(np.zeros(len(tok_a), np.int64))
        self._vocab.add(
            pa.table({"cell": tok_s.column("cell"), "tok": tok_s.column("tok"), "st": tok_s.column("n"), "an": zero_s})
        )
        self._vocab.add(
            pa.table({"cell": tok_a.column("cell"), "tok": tok_a.column("tok"), "st": zero_a, "an": tok_a.column("n")})
        )
        self.cells, self.stereo, self.anti = [], [], []

    def result(self, keyness: bool) -> dict[str, Any]:
        self._flush()
        keys = list(self.cell_of)
        langs = sorted({k[0] for k in keys})
        counts = self.counts
        out: dict[str, Any] = {
            "records": self.records,
            "views": self.views,
            "by_lang": {lg: sum(n for k, n in counts.items() if k[2] == lg) for lg in langs},
            "by_split": dict(sorted(self.by_split.items())),
            "counts": [
                {"bias_type": b, "direction": d, "lang": lg, "split": sp, "n": n}
                for (b, d, lg, sp), n in sorted(counts.items())
            ],
            "targets": {"n": len(self.t_split), "by_split": dict(sorted(Counter(self.t_split.values()).items()))},
        }
        if not keys:
            return out
        out["sentence_words"] = self._sentence_words(keys, langs)
        vocab, key = self._vocab.summary(keys, langs, keyness, self.view_groups)
        out["vocabulary"] = vocab
        if keyness:
            out["keyness"] = key
        return out

    def _sentence_words(self, keys: list, langs: list[str]) -> dict[str, Any]:
        """Sentence lengths (whitespace words) of both sentences of every view, per language, from the
        histogram: the figures :func:`_length_stats` gives on the lengths themselves."""
        lengths = {}
        for lg in langs:
            hist: Counter = Counter()
            by_bt: dict[str, list[int]] = {}
            for (cell, words), n in self._lengths.items():
                lang, _, bt = keys[cell]
                if lang != lg:
                    continue
                hist[words] += n
                acc = by_bt.setdefault(bt, [0, 0])
                acc[0] += words * n
                acc[1] += n
            entry = _length_stats_hist(hist)
            entry["by_bias_type"] = {bt: round(float(t / n), 2) for bt, (t, n) in sorted(by_bt.items())}
            lengths[lg] = entry
        return lengths


def _length_stats_hist(hist: Counter) -> dict[str, Any]:
    """:func:`_length_stats` of the lengths a histogram ``{length: sentences}`` counts (the mean and the
    median exact; the standard deviation from the same squares, summed per length)."""
    n = sum(hist.values())
    if not n:
        return {"sentences": 0}
    vals = np.array(sorted(hist), dtype=np.int64)
    cnt = np.array([hist[v] for v in vals.tolist()], dtype=np.int64)
    total = int((vals * cnt).sum())
    mean = total / n
    cum = np.cumsum(cnt)
    lo, hi = vals[np.searchsorted(cum, (n - 1) // 2 + 1)], vals[np.searchsorted(cum, n // 2 + 1)]
    median = float(lo) if n % 2 else (float(lo) + float(hi)) / 2
    std = float(np.sqrt(float(np.sum(cnt * (vals - mean) ** 2)) / n))
    hist_max = int(vals.max())
    edges = list(range(0, hist_max + 2, max(1, math.ceil((hist_max + 1) / 30))))
    h = np.zeros(len(edges) - 1, dtype=np.int64)
    inside = vals <= edges[-1]  # numpy.histogram counts [edges[0], edges[-1]] (the last bin closed)
    idx = np.minimum(np.searchsorted(edges, vals[inside], side="right") - 1, len(h) - 1)
    np.add.at(h, idx, cnt[inside])
    return {
        "sentences": int(n),
        "mean": round(float(mean), 2),
        "median": float(median),
        "std": round(std, 2),
        "min": int(vals.min()),
        "max": hist_max,
        "histogram": {"edges": [int(x) for x in edges], "counts": [int(x) for x in h]},
    }


class _Vocabulary:
    """Token counts per (cell, token) and side (``st``: stereotypical sentences, ``an``: the others),
    added a batch at a time. Kept in memory up to :data:`LIMIT` rows (summed when it gets there); past
    that, written to ``folder`` in :data:`PARTS` parts by a hash of the token, so that all the counts of a
    token are in one part and each part is summarised alone (the vocabulary of a synthetic 800 MB input
    has a million distinct tokens: numbers)."""

    LIMIT = 200_000
    PARTS = 32

    def __init__(self, folder: Path | None = None):
        self.folder = folder
        self._tables: list = []
        self._rows = 0
        self._writers: dict[int, Any] = {}

    def add(self, table) -> None:
        self._tables.append(table)
        self._rows += table.num_rows
        if self._rows > self.LIMIT:
            merged = _sum_counts(self._tables)
            self._tables, self._rows = [merged], merged.num_rows
            if self.folder is not None and self._rows > self.LIMIT // 2:
                self._spill()

    def _spill(self) -> None:
        import pyarrow as pa
        import pyarrow.ipc as ipc

        assert self.folder is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        table = pa.concat_tables(self._tables)
        part = _token_parts(table.column("tok"), self.PARTS)
        for k in np.unique(part).tolist():
            w = self._writers.get(k)
            if w is None:
                w = self._writers[k] = ipc.new_stream(str(self.folder / f"vocab-{k:02d}.arrow"), table.schema)
            w.write_table(table.filter(pa.array(part == k)))
        self._tables, self._rows = [], 0

    def parts(self):
        """Each part's counts, summed per (cell, token)."""
        import pyarrow as pa
        import pyarrow.ipc as ipc

        if not self._writers:
            if self._tables:
                yield _sum_counts(self._tables)
            return
        if self._tables:
            self._spill()
        for k in sorted(self._writers):
            self._writers[k].close()
        for k in sorted(self._writers):
            with pa.OSFile(str(self.folder / f"vocab-{k:02d}.arrow"), "rb") as src:
                table = ipc.open_stream(src).read_all()
            yield _sum_counts([table])
            del table

    def summary(self, keys: list, langs: list[str], keyness: bool, view_groups: dict) -> tuple[dict, dict]:
        """``vocabulary`` and ``keyness`` of ``stats.json``: totals and distinct counts summed over the parts,
        each keyword list the best of every part's best (see :func:`_ll_candidates`)."""
        from ..errors import require

        acc: dict[str, dict[str, Any]] = {
            lg: {"types": 0, "a": 0, "b": 0, "split": Counter(), "bt": Counter()} for lg in langs
        }
        excluded = {lg: _group_words({x for x in view_groups.get(lg, ()) if x}) | stop_words(lg) for lg in langs}
        wf = require("wordfreq", "release", "keyness against general language") if keyness else None
        cells = _cell_facts(keys, langs)
        for table in self.parts():
            per_lang = _by_lang(table, langs, cells)
            # the totals first: keyness needs each corpus' size (all parts) before any part's candidates
            for lg, tl in per_lang:
                _add_totals(acc[lg], tl)
            if keyness:
                self._stash(per_lang)
        vocab = {
            lg: {
                "types": acc[lg]["types"],
                "tokens": acc[lg]["a"] + acc[lg]["b"],
                "by_split": dict(sorted(acc[lg]["split"].items())),
            }
            for lg in langs
        }
        if not keyness:
            return vocab, {}
        return vocab, {lg: self._keywords(lg, acc[lg], excluded[lg], wf) for lg in langs}

    def _keywords(self, lg: str, a_: dict[str, Any], ex: set[str], wf: Any) -> dict[str, Any]:
        """One language's keyword lists: stereotype vs anti-stereotype (and back), and against general
        language (wordfreq, overall and per bias type) when wordfreq has the language."""
        c, d = float(a_["a"]), float(a_["b"])
        st_c: list[tuple] = []
        an_c: list[tuple] = []
        gen_c: list[tuple] = []
        bt_c: dict[str, list[tuple]] = {}
        has_list = lg in wf.available_languages()
        for tl in self._stashed(lg):
            per = tl.group_by("tok", use_threads=False).aggregate([("st", "sum"), ("an", "sum")]).sort_by("tok")
            words = per.column("tok").to_pylist()
            a = per.column("st_sum").to_numpy().astype(float)
            b = per.column("an_sum").to_numpy().astype(float)
            st_c += _ll_candidates(words, a, b, c, d, exclude=ex)
            an_c += _ll_candidates(words, b, a, d, c, exclude=ex)
            if not has_list:
                continue
            ref = reference_frequencies(lg, words)
            gen_c += _general_candidates(words, a + b, lg, c + d, exclude=ex, freqs=ref)
            _bias_type_candidates(tl, lg, a_["bt"], ex, ref, bt_c)
        k: dict[str, Any] = {
            "stereotype_vs_anti": [_ll_row(x) for x in sorted(st_c)[:TOP_K]],
            "anti_vs_stereotype": [_ll_row(x) for x in sorted(an_c)[:TOP_K]],
        }
        if has_list:
            k["vs_general"] = _general_result(lg, gen_c)
            k["vs_general_by_bias_type"] = {bt: _general_result(lg, bt_c[bt], 10)["top"] for bt in sorted(bt_c)}
        else:
            k["vs_general"] = {"reference": f"no wordfreq list for '{lg}'", "top": []}
        return k

    def _stash(self, per_lang: list) -> None:
        """Keep each language's rows of a part for the keyword pass (in memory when nothing was spilled,
        else on disk beside the parts)."""
        import pyarrow.ipc as ipc

        if not hasattr(self, "_kept"):
            self._kept: dict[str, list] = {}
        for lg, tl in per_lang:
            if self.folder is None or not self._writers:
                self._kept.setdefault(lg, []).append(tl)
                continue
            n = len(self._kept.setdefault(lg, []))
            path = self.folder / f"lang-{sorted(self._kept).index(lg)}-{n:04d}.arrow"
            with ipc.new_stream(str(path), tl.schema) as w:
                w.write_table(tl)
            self._kept[lg].append(path)

    def _stashed(self, lg: str):
        import pyarrow as pa
        import pyarrow.ipc as ipc

        for item in getattr(self, "_kept", {}).get(lg, []):
            if isinstance(item, Path):
                with pa.OSFile(str(item), "rb") as src:
                    table = ipc.open_stream(src).read_all()
                yield table
            else:
                yield item


def _cell_facts(keys: list, langs: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell code (``keys``: ``(lang, split, bias type, ...)``): its language's index, split, bias type."""
    codes_lang = {lg: i for i, lg in enumerate(langs)}
    return (
        np.array([codes_lang[k[0]] for k in keys], dtype=np.int64),
        np.array([k[1] for k in keys], dtype=object),
        np.array([k[2] for k in keys], dtype=object),
    )


def _by_lang(table, langs: list[str], cells: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[str, Any]]:
    """One part's rows per language, with their split and bias type as columns."""
    import pyarrow as pa

    lang_of, split_of, bt_of = cells
    cell = table.column("cell").to_numpy()
    lang_rows = lang_of[cell]
    per_lang = []
    for li, lg in enumerate(langs):
        mask = lang_rows == li
        if not mask.any():
            continue
        tl = (
            table.filter(pa.array(mask))
            .append_column("split", pa.array(split_of[cell[mask]].tolist(), pa.string()))
            .append_column("bias_type", pa.array(bt_of[cell[mask]].tolist(), pa.string()))
        )
        per_lang.append((lg, tl))
    return per_lang


def _add_totals(a_: dict[str, Any], tl) -> None:
    """One part's totals of one language added to ``a_``: types, tokens per side, types per split, tokens
    per bias type."""
    import pyarrow.compute as pc

    per = tl.group_by("tok", use_threads=False).aggregate([("st", "sum"), ("an", "sum")])
    a_["types"] += per.num_rows
    a_["a"] += int(pc.sum(per.column("st_sum")).as_py() or 0)
    a_["b"] += int(pc.sum(per.column("an_sum")).as_py() or 0)
    for sp, n in zip(
        *tl.group_by("split", use_threads=False).aggregate([("tok", "count_distinct")]).columns, strict=True
    ):
        a_["split"][sp.as_py()] += n.as_py()
    bt_tot = tl.append_column("n", pc.add(tl.column("st"), tl.column("an")))
    bt_tot = bt_tot.group_by("bias_type", use_threads=False).aggregate([("n", "sum")])
    for bt, n in zip(*bt_tot.columns, strict=True):
        a_["bt"][bt.as_py()] += n.as_py()


def _bias_type_candidates(
    tl, lg: str, bt_totals: Counter, ex: set[str], ref: Any, bt_c: dict[str, list[tuple]]
) -> None:
    """One part's keyword candidates against general language per bias type, added to ``bt_c``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    per_bt = (
        tl.append_column("n", pc.add(tl.column("st"), tl.column("an")))
        .group_by(["bias_type", "tok"], use_threads=False)
        .aggregate([("n", "sum")])
        .sort_by([("bias_type", "ascending"), ("tok", "ascending")])
    )
    bts = per_bt.column("bias_type").to_numpy(zero_copy_only=False)
    for bt in sorted(set(bts.tolist())):
        sel = per_bt.filter(pa.array(bts == bt))
        bt_c.setdefault(bt, []).extend(
            _general_candidates(
                sel.column("tok").to_pylist(),
                sel.column("n_sum").to_numpy().astype(float),
                lg,
                float(bt_totals[bt]),
                top=10,
                exclude=ex,
                freqs=ref,
            )
        )


def _sum_counts(tables: list):
    """Counts per (cell, token) and side, summed over the tables."""
    import pyarrow as pa

    t = pa.concat_tables(tables).group_by(["cell", "tok"], use_threads=False).aggregate([("st", "sum"), ("an", "sum")])
    return t.rename_columns(["cell", "tok", "st", "an"]).select(["cell", "tok", "st", "an"])


def _token_parts(tokens, parts: int) -> np.ndarray:
    """A part (``0 .. parts - 1``) per token, from a hash of its UTF-8 bytes (computed in NumPy on the
    Arrow buffers: the same token, the same part)."""
    import pyarrow as pa

    arr = tokens.combine_chunks() if isinstance(tokens, pa.ChunkedArray) else tokens
    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1].astype(np.int64)
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    lo, hi = int(offsets[0]), int(offsets[-1])
    lengths = np.diff(offsets)
    pos = np.arange(hi - lo, dtype=np.int64) - np.repeat(offsets[:-1] - lo, lengths)
    weights = np.array([pow(0x100000001B3, int(i) + 1, 1 << 64) for i in range(64)], dtype=np.uint64)
    mixed = data[lo:hi].astype(np.uint64) * weights[pos % 64]
    h = np.zeros(len(arr), dtype=np.uint64)
    nonempty = lengths > 0
    if nonempty.any():
        h[nonempty] = np.add.reduceat(mixed, (offsets[:-1] - lo)[nonempty])
    h ^= h >> np.uint64(29)
    return (h % np.uint64(parts)).astype(np.int64)
