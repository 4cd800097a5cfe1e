"""CEAT: the Contextualized Embedding Association Test (Guo & Caliskan, AIES 2021).

A word has many contextual embeddings, one per sentence it occurs in. CEAT samples one embedding of
every word of a test ``N`` times (reference code: ``N = 10000``), computes the WEAT effect size
``ES_i`` of each sample and its in-sample variance ``V_i`` (the variance of the association scores
s(w, A, B) over X ∪ Y whose standard deviation is the effect size's denominator), and combines the
samples with a **random-effects model** (weiguowilliam/CEAT ``code/ceat.py``, ``ceat_meta``):

- ``w_i = 1 / V_i``;  ``Q = Σ w_i ES_i² − (Σ w_i ES_i)² / Σ w_i``;  ``df = N − 1``
- ``τ² = (Q − df) / (Σ w_i − Σ w_i² / Σ w_i)`` when ``Q > df``, else 0
- ``v*_i = V_i + τ²``, ``w*_i = 1 / v*_i``
- combined effect size ``CES = Σ w*_i ES_i / Σ w*_i``, its variance ``V = 1 / Σ w*_i``
- ``p = 1 − Φ(CES / √V)`` (one-sided)

Contexts: sentences of a corpus you pass, one per line (the paper: Reddit comments). As the
reference, a sentence of nine or more words is cut to a window around the word (the first nine
words when the word is among the first four, the last nine when it is among the last four, else
the four words before it and the three after it), encoded **without special tokens**, and the word's
embedding is the last layer at its **last word piece**. At most ``max_contexts`` sentences per word
(the first ones in the corpus).

**Group-level CEAT** (Cao et al. 2022 §2, one effect size per protected group, e.g. "woman" against
pleasant / unpleasant words): the single-category effect size of each sample,
``(mean_a cos(g, a) − mean_b cos(g, b)) / std_{x ∈ A ∪ B} cos(g, x)`` (Caliskan et al. 2017's WEFAT
form, sample std), with ``V_i`` the variance in its denominator, averaged over the group's words,
combined by the same random-effects model. Cao et al. do not spell the formula out; this is
biaskit's reading (docs/fidelity.md).
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from biaskit.errors import BiaskitError, InputError
from biaskit.tables import md_table, num, pvalue, sig

from .results import CeatRun

if TYPE_CHECKING:
    from .options import CeatOptions

N_SAMPLES = 10_000  # weiguowilliam/CEAT README: N = 10000 by default
MAX_CONTEXTS = 1000  # reference generate_ebd_bert.py: at most 1000 sentences per word
WINDOW = 9
_PUNCT = string.punctuation + "“”‘’"


# ------------------------------------------------------------------------------------------- statistics
def random_effects(es: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray) -> dict:
    """Combine per-sample effect sizes ``es`` with in-sample variances ``v`` (see the module docstring)."""
    from scipy.stats import norm

    e = np.asarray(es, dtype=np.float64)
    w = 1.0 / np.asarray(v, dtype=np.float64)
    q = float(np.sum(w * e**2) - np.sum(w * e) ** 2 / np.sum(w))
    df = len(e) - 1
    tau2 = (q - df) / float(np.sum(w) - np.sum(w**2) / np.sum(w)) if q > df else 0.0
    w_star = 1.0 / (np.asarray(v, dtype=np.float64) + tau2)
    ces = float(np.sum(w_star * e) / np.sum(w_star))
    var = float(1.0 / np.sum(w_star))
    return {
        "ces": ces,
        "variance": var,
        "q": q,
        "tau2": tau2,
        "p_value": float(norm.sf(ces / math.sqrt(var))),
        "n_samples": len(e),
        "pes": float(np.mean(e)),
    }


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def draws(sizes: Sequence[Sequence[int]], n_samples: int, seed: int = 0) -> list[np.ndarray]:
    """Which context of every word each sample uses: per set, an ``(n_samples, words)`` index array
    (word ``j`` of a set has ``sizes[set][j]`` contexts), from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    return [np.stack([rng.integers(n, size=n_samples) for n in sz], axis=1) for sz in sizes]


def sample_effects(
    embs: Mapping[str, np.ndarray], sets: Sequence[Sequence[str]], idx: Sequence[np.ndarray], chunk: int = 2048
) -> tuple[np.ndarray, np.ndarray]:
    """``(ES_i, V_i)`` of every sample: the WEAT effect size and the variance of its denominator for
    (X, Y, A, B); the single-category effect size and variance, averaged over the group's words, for
    (G, A, B). ``idx``: :func:`draws`. Each word's drawn contexts are gathered once per ``chunk`` of
    samples and every cosine is a row-wise dot product of unit vectors."""
    unit = {w: _unit(np.asarray(embs[w], dtype=np.float64)) for s in sets for w in s}
    targets, attrs = (list(sets[0]) + list(sets[1]), sets[2:]) if len(sets) == 4 else (list(sets[0]), sets[1:])
    t_idx = np.concatenate([idx[0], idx[1]], axis=1) if len(sets) == 4 else idx[0]
    n = len(idx[0])
    es, var = np.empty(n), np.empty(n)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        T = [unit[w][t_idx[lo:hi, j]] for j, w in enumerate(targets)]  # (samples, dim) per target word
        cos = []  # per attribute set: (samples, targets, words)
        for s, ix in zip(attrs, idx[-2:], strict=False):
            c = np.empty((hi - lo, len(targets), len(s)))
            for k, w in enumerate(s):
                a = unit[w][ix[lo:hi, k]]
                for j, t in enumerate(T):
                    c[:, j, k] = np.einsum("nd,nd->n", t, a)
            cos.append(c)
        ca, cb = cos
        if len(sets) == 4:
            nx = len(sets[0])
            s_w = ca.mean(2) - cb.mean(2)  # (samples, |X| + |Y|)
            sd = s_w.std(axis=1, ddof=1)
            es[lo:hi] = (s_w[:, :nx].mean(1) - s_w[:, nx:].mean(1)) / sd
            var[lo:hi] = sd**2
        else:
            sd = np.concatenate([ca, cb], axis=2).std(axis=2, ddof=1)  # (samples, group words)
            es[lo:hi] = ((ca.mean(2) - cb.mean(2)) / sd).mean(1)
            var[lo:hi] = (sd**2).mean(1)
    return es, var


def ceat(
    embs: Mapping[str, np.ndarray], sets: Sequence[Sequence[str]], *, n_samples: int = N_SAMPLES, seed: int = 0
) -> dict:
    """CEAT of ``sets`` = (X, Y, A, B) (two targets) or (G, A, B) (one group): ``embs[word]`` holds
    the word's contextual embeddings (one row per context)."""
    missing = [w for s in sets for w in s if w not in embs or len(embs[w]) == 0]
    if missing:
        raise BiaskitError(
            f"no context for {', '.join(sorted(set(missing))[:5])} in the corpus. Fix: pass a corpus "
            "in which every word of the test occurs (or drop those words)"
        )
    idx = draws([[len(embs[w]) for w in s] for s in sets], n_samples, seed)
    es, v = sample_effects(embs, sets, idx)
    return random_effects(es, v)


# ------------------------------------------------------------------------------------------- contexts
def _strip(t: str) -> str:
    return t.strip(_PUNCT)


def window(words: Sequence[str], idx: int, n_term: int = 1) -> tuple[list[str], int]:
    """The reference's ``short_sen``: the words kept around the term at ``idx`` and its new index."""
    if len(words) < WINDOW:
        return list(words), idx
    if idx < 4:
        return list(words[:WINDOW]), idx
    if len(words) - idx - n_term < 4:
        return list(words[-WINDOW:]), idx - (len(words) - WINDOW)
    return list(words[idx - 4 : idx + 4]), 4


def find_contexts(
    corpus: str | Path | Sequence[str | Path], terms: Iterable[str], max_contexts: int = MAX_CONTEXTS
) -> dict[str, list[tuple[str, int, int]]]:
    """Every term's contexts: ``(text, char_start, char_end)`` of the term in its windowed sentence.
    A term matches whole words (edge punctuation ignored, case kept; a multi-word term matches a run of
    words), once per sentence (its first occurrence, as the reference's ``list.index``). The corpus
    (files or folders, one sentence per line) is streamed."""
    from .seat_names import corpus_lines

    terms = list(dict.fromkeys(terms))
    parts = {t: t.split() for t in terms}
    by_first: dict[str, list[str]] = {}
    for t, ps in parts.items():
        by_first.setdefault(ps[0], []).append(t)
    out: dict[str, list] = {t: [] for t in terms}
    for line in corpus_lines([corpus] if isinstance(corpus, (str, Path)) else corpus):
        words = line.split()
        bare = [_strip(w) for w in words]
        seen: set[str] = set()
        for i, b in enumerate(bare):
            for t in by_first.get(b, ()):
                ps = parts[t]
                if t in seen or len(out[t]) >= max_contexts or bare[i : i + len(ps)] != ps:
                    continue
                seen.add(t)
                kept, j = window(words, i, len(ps))
                text = " ".join(kept)
                start = len(" ".join(kept[:j])) + (1 if j else 0) + kept[j].find(ps[0])
                span = " ".join(kept[j : j + len(ps)])
                end = start + len(span[span.find(ps[0]) :].rstrip(_PUNCT))
                out[t].append((text, start, end))
    return out


@dataclass
class ContextEncoder:
    """Last-layer states at a character span's last word piece, inputs without special tokens."""

    encoder: Any  # biaskit.evaluation.seat.Encoder

    def embed(self, contexts: Sequence[tuple[str, int, int]], *, batch_size: int = 64, cache: Any = None) -> np.ndarray:

        from biaskit.cache import cached_results

        from .engine import ENGINE_CACHE_VERSION, forward_batches

        enc_ = self.encoder
        if not getattr(enc_.tokenizer, "is_fast", False):
            raise BiaskitError(
                "CEAT needs a fast tokenizer (character offsets). Fix: save the model with its tokenizer.json"
            )
        mid = {
            "engine": "ceat",
            "v": ENGINE_CACHE_VERSION,
            "model": enc_.fingerprint,
            **({"part": enc_.part} if enc_.part else {}),
        }

        def run(todo: list[int]):
            encs, pos = [], []
            for i in todo:
                text, a, b = contexts[i]
                e = enc_.tokenizer(text, add_special_tokens=False, truncation=True, return_offsets_mapping=True)
                hit = [k for k, (s, t) in enumerate(e["offset_mapping"]) if t > s and s < b and t > a]
                if not hit:
                    raise BiaskitError(
                        f"the term at {a}:{b} of {text!r} maps to no token. Fix: write the word as plain text "
                        "(the tokenizer drops some characters), or leave it out"
                    )
                encs.append({k: e[k] for k in ("input_ids", "token_type_ids") if k in e})
                pos.append(hit[-1])
            where = dict(zip(todo, pos, strict=False))

            for idx, out in forward_batches(
                todo, encs, batch_size, enc_.model.device, lambda x: enc_.model(**x).last_hidden_state.float()
            ):
                yield idx, [out[j, where[i]].cpu().tolist() for j, i in enumerate(idx)]

        vecs = cached_results(cache, [{"ceat": mid, "t": t, "a": a, "b": b} for t, a, b in contexts], run)
        return np.asarray(vecs, dtype=np.float64)


def embeddings(
    encoder: Any, ctx: Mapping[str, Sequence[tuple[str, int, int]]], *, batch_size: int = 64, cache: Any = None
) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Every term's contextual embeddings (``ctx``: :func:`find_contexts`) and how many contexts each has."""
    flat = [(t, c) for t, cs in ctx.items() for c in cs]
    vecs: np.ndarray | list = (
        ContextEncoder(encoder).embed([c for _, c in flat], batch_size=batch_size, cache=cache) if flat else []
    )
    out: dict[str, list] = {t: [] for t in ctx}
    for (t, _), v in zip(flat, vecs, strict=False):
        out[t].append(v)
    return {t: np.asarray(v) for t, v in out.items()}, {t: len(v) for t, v in ctx.items()}


# ------------------------------------------------------------------------------------------- runner
def found(words: Sequence[str], counts: Mapping[str, int], what: str, corpus: Any = None) -> list[str]:
    """The words of a set that occur in the corpus (the CEAT reference dropped the others); a set left
    with fewer than two is refused, naming the corpus."""
    kept = [w for w in words if counts.get(w)]
    if len(kept) < 2:
        raise InputError(
            f"{what}: only {len(kept)} of its {len(words)} words occur in this corpus; CEAT needs two or more.",
            path=corpus,
            fix="pass a larger corpus (one sentence per line) or other words.",
        )
    return kept


GROUPS_SHAPE = (
    'a groups file is JSON: {"attributes": {"A": [WORDS], "B": [WORDS]}, "domains": {DOMAIN: '
    '{GROUP: [WORDS]} or [GROUP, ...]}} (or attributes {"file": LISTS.json, "A": LIST, "B": LIST}: word '
    "lists in a file beside the groups file)."
)
# invisible characters a word of a groups file may not hold (ZWJ / ZWNJ are kept: Indic scripts use them)
_INVISIBLE = frozenset("\u200b\u2060\ufeff\u00ad\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def read_groups(
    path: str | Path | None, metric: str
) -> tuple[dict[str, dict[str, list[str]]], list[str], list[str], str]:
    """Groups per domain and the two attribute lists: ``path`` (JSON like data/cao2022/groups.json) or
    Cao et al.'s (None). The file is checked before use (:data:`GROUPS_SHAPE`; every word a string with
    a visible character and no invisible one); a word-list file it names (``attributes.file``) is read
    relative to the groups file's folder and never outside it (:func:`biaskit.paths.inside`)."""
    from biaskit.io import read_json

    data_dir = Path(__file__).resolve().parent.parent / "data"
    p = Path(path) if path else data_dir / "cao2022" / "groups.json"
    doc = read_json(p, fix=GROUPS_SHAPE)
    if not isinstance(doc, dict) or not isinstance(doc.get("attributes", {}), dict):
        raise InputError("not a groups file: expected an object with attributes and domains.", path=p, fix=GROUPS_SHAPE)
    attrs = doc.get("attributes") or {}
    if "file" in attrs:  # Cao et al.'s file names biaskit's lexicon under data/; a user's file, one beside it
        A, B, names = _listed_attributes(attrs, p, data_dir if path is None else p.parent)
    else:
        A, B = _words(attrs.get("A"), p, "attributes.A"), _words(attrs.get("B"), p, "attributes.B")
        names = f"{attrs.get('A_name', 'A')} / {attrs.get('B_name', 'B')}"
    metrics = doc.get("metrics")
    if "metrics" in doc and not (isinstance(metrics, dict) and isinstance(metrics.get(metric, {}), dict)):
        raise InputError(
            f"'metrics' must map {metric} to an object with domains.", path=p, column="metrics", fix=GROUPS_SHAPE
        )
    domains = (metrics or {}).get(metric, {}).get("domains") if "metrics" in doc else doc.get("domains")
    if not isinstance(domains, dict) or not domains:
        raise InputError("needs at least one domain of groups.", path=p, column="domains", fix=GROUPS_SHAPE)
    norm: dict[str, dict[str, list[str]]] = {}
    for d, g in domains.items():
        g = g if isinstance(g, dict) else {str(w): [w] for w in g} if isinstance(g, list) else None
        if not g:
            raise InputError(
                f"domain '{d}': groups must be a list of words or {{GROUP: [WORDS]}}.", path=p, fix=GROUPS_SHAPE
            )
        norm[str(d)] = {str(k): _words(ws, p, f"domains.{d}.{k}") for k, ws in g.items()}
    return norm, A, B, names


def check_known_words(tokenizer: Any, words: Sequence[str], source: str | Path | None = None) -> None:
    """Refuse words the tokenizer maps to its unknown token (``[UNK]``): every such word would be
    scored as the same token, and an effect size or ILPS of them means nothing."""
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is None:
        return
    bad = [w for w in dict.fromkeys(words) if unk in tokenizer(w, add_special_tokens=False)["input_ids"]]
    if not bad:
        return
    msg = (
        f"{len(bad)} word(s) map to the tokenizer's unknown token {tokenizer.unk_token!r}, so their scores would "
        f"mean nothing: {', '.join(w if w.isprintable() else repr(w) for w in bad[:5])}"
        + ("..." if len(bad) > 5 else ".")
    )
    from biaskit.options import say

    fix = f"remove them from the word lists ({say('groups', 'FILE')}), or pass a model whose vocabulary covers them"
    if source is not None:
        raise InputError(msg, path=source, fix=fix + ".")
    raise BiaskitError(f"{msg} Fix: {fix}")


def _words(words: Any, path: Path, field: str) -> list[str]:
    """A non-empty list of words (stripped), each with a visible character and no invisible one."""
    import unicodedata

    if not isinstance(words, list) or not words:
        raise InputError("needs a list of words.", path=path, column=field, fix=GROUPS_SHAPE)
    out = []
    for i, w in enumerate(words):
        ok = isinstance(w, str) and w.strip() and not all(unicodedata.category(c)[0] in "CZ" for c in w)
        bad = next((c for c in w if c in _INVISIBLE or unicodedata.category(c) == "Cc"), None) if ok else None
        if not ok or bad is not None:
            why = f"holds the invisible character U+{ord(bad):04X}" if bad else "has no visible character"
            raise InputError(
                f"word {w!r:.60} {why}." if isinstance(w, str) else f"{w!r:.60} is not a word.",
                path=path,
                column=f"{field}[{i}]",
                fix="write each word as plain text (copied text may carry zero-width or direction marks).",
            )
        out.append(w.strip())
    return out


def _listed_attributes(attrs: dict, path: Path, base: Path) -> tuple[list[str], list[str], str]:
    """The attribute sets ``A`` and ``B`` named in the word-list file ``attributes.file`` (a ``lists``
    object of ``{"words": [{"en": WORD}, ...]}``, as data/seat/indibias-paper/lexicon.json)."""
    from biaskit.io import read_json
    from biaskit.paths import inside

    f = inside(base, attrs["file"], what="attributes.file", path=path, column="attributes.file")
    shape = 'a word-list file is JSON: {"lists": {NAME: {"words": [{"en": WORD}, ...]}}}.'
    doc = read_json(f, fix=shape)
    lists = doc.get("lists") if isinstance(doc, dict) else None
    if not isinstance(lists, dict):
        raise InputError("no 'lists' object of word lists.", path=f, column="lists", fix=shape)
    sets = []
    for key in ("A", "B"):
        name = attrs.get(key)
        if not isinstance(name, str) or name not in lists:
            raise InputError(
                f"attributes.{key} {name!r} is not a list of {f.name} (it has {', '.join(sorted(lists)[:8])}).",
                path=path,
                column=f"attributes.{key}",
                fix=f"name one of the lists of {f.name}.",
            )
        entries = (lists[name] or {}).get("words") if isinstance(lists[name], dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise InputError(f"list '{name}' has no words.", path=f, column=f"lists.{name}.words", fix=shape)
        sets.append(_words([e.get("en") for e in entries], f, f"lists.{name}.words"))
    return sets[0], sets[1], f"{attrs['A']} / {attrs['B']}"


def run_ceat(opts: CeatOptions, *, command: str | None = None, cache: Any = None) -> CeatRun:
    """CEAT of SEAT-format tests (``opts.tests``: X/Y/A/B word lists) or, without tests, of protected
    groups (``opts.groups``: a JSON file, default Cao et al. 2022's Table 4 groups against
    pleasant/unpleasant words). Writes results.csv, groups.csv (group-level scores for ``evaluate
    correlate``), summary.json and report.md. ``command`` and ``cache`` (default: not ``no_cache``)
    are not options."""
    from .published import model_protocol
    from .result_folder import write_result_folder
    from .score_cache import open_cache
    from .seat import Encoder
    from .seat_names import corpus_files

    _check_options(opts)
    corpus = corpus_files(opts.corpus)
    applied = _protocol(opts)
    n_samples = applied.values["n_samples"]
    sets: _TestSets | _GroupSets = _TestSets.read(opts.tests) if opts.tests else _GroupSets.read(opts.groups)
    ctx = find_contexts(corpus, sets.words, max_contexts=opts.max_contexts)  # read before a model is loaded
    counts = {t: len(c) for t, c in ctx.items()}
    sets.check(counts, corpus[0])
    from biaskit.progress import library_bars

    with library_bars():  # transformers' loading bars only on a terminal
        enc = Encoder.load(opts.model, device=opts.device)
    check_known_words(enc.tokenizer, [w for w, n in counts.items() if n], None if opts.tests else opts.groups)
    dc = open_cache(not opts.no_cache if cache is None else cache)
    embs, counts = embeddings(enc, ctx, batch_size=opts.batch_size, cache=dc)
    rows, group_rows = sets.results(embs, counts, n_samples=n_samples, seed=opts.seed)
    applied, checkpoint = model_protocol(applied, opts.model, enc)
    summary = {
        "benchmark": "ceat",
        "kind": "ceat",
        "model": opts.model,
        "fingerprint": enc.fingerprint,
        "encoder_part": enc.part or None,
        "corpus": [str(c) for c in corpus],
        "n_samples": n_samples,
        "seed": opts.seed,
        "max_contexts": opts.max_contexts,
        "mode": "tests" if opts.tests else "groups",
        "results": rows,
        "contexts": counts,
        "dropped_words": sorted(w for w, n in counts.items() if not n),
        "checkpoint": checkpoint,
        "protocol": applied.as_dict(),
        "command": command,
    }
    write_result_folder(opts.out, summary, render_ceat(summary), results=rows, groups=group_rows or None)
    return CeatRun.from_summary(summary, opts.out)


def _check_options(o: CeatOptions) -> None:
    """Values the options' types allow and CEAT cannot use, in one line naming the option."""
    from biaskit.options import OptionError, say, tell

    if o.n_samples is not None and o.n_samples < 2:
        raise OptionError(
            f"{say('n_samples', o.n_samples)}: CEAT needs two samples or more (the random-effects model divides "
            "by N - 1).",
            f"{tell('n_samples', N_SAMPLES)} (the reference's).",
        )
    if o.max_contexts < 1:
        raise OptionError(
            f"{say('max_contexts', o.max_contexts)}: a word needs one context or more.",
            f"{tell('max_contexts', MAX_CONTEXTS)}.",
        )


def _protocol(o: CeatOptions):
    """CEAT's settings (N): the protocol's by name (``cao2022``), else CEAT's own (no data origin)."""
    from biaskit.options import say

    from .protocols import apply_protocol, get_protocol

    proto = get_protocol(o.protocol) if o.protocol not in (None, "auto") else None
    return apply_protocol(
        proto,
        "ceat",
        {"n_samples": o.n_samples},
        {"n_samples": N_SAMPLES},
        chosen_by=say("protocol") if proto else "no data origin: CEAT's own defaults",
        words={"n_samples": {N_SAMPLES: "10,000 samples"}},
    )


@dataclass
class _TestSets:
    """CEAT of SEAT-format tests: each test's four word sets."""

    tests: list[Any]
    sets: dict[str, list[list[str]]] = field(default_factory=dict)  # test -> X, Y, A, B found in the corpus

    @classmethod
    def read(cls, tests: Sequence[str]) -> _TestSets:
        from .seat import read_seat_test, resolve_tests

        return cls([read_seat_test(p) for p in resolve_tests(tests)])

    @property
    def words(self) -> list[str]:
        return [w for t in self.tests for s in t.sets.values() for w in s.examples]

    def check(self, counts: Mapping[str, int], corpus: Path) -> None:
        """Each set's words the corpus has (a set with none is an error naming the test and set)."""
        keys = ("targ1", "targ2", "attr1", "attr2")
        self.sets = {
            t.name: [found(t.sets[k].examples, counts, f"{t.name} {k}", corpus) for k in keys] for t in self.tests
        }

    def results(self, embs: Any, counts: Mapping[str, int], *, n_samples: int, seed: int) -> tuple[list, list]:
        rows = []
        for t in self.tests:
            sets = self.sets[t.name]
            r = ceat(embs, sets, n_samples=n_samples, seed=seed)
            rows.append(
                {
                    "test": t.name,
                    **{k: t.sets[k].category for k in ("targ1", "targ2", "attr1", "attr2")},
                    **r,
                    "min_contexts": min(counts[w] for s in sets for w in s),
                }
            )
        return rows, []


@dataclass
class _GroupSets:
    """Group-level CEAT: each protected group's words against the attribute sets A and B."""

    domains: dict[str, dict[str, list[str]]]
    A: list[str]
    B: list[str]
    names: str  # the attribute sets' names

    @classmethod
    def read(cls, groups: Path | None) -> _GroupSets:
        return cls(*read_groups(groups, "ceat"))

    @property
    def words(self) -> list[str]:
        return [w for g in self.domains.values() for ws in g.values() for w in ws] + self.A + self.B

    def check(self, counts: Mapping[str, int], corpus: Path) -> None:
        """The attribute words the corpus has; some group's words must occur."""
        self.A = found(self.A, counts, "attribute set A", corpus)
        self.B = found(self.B, counts, "attribute set B", corpus)
        if not any(counts.get(w) for g in self.domains.values() for ws in g.values() for w in ws):
            raise InputError(
                "no group's words occur in the corpus.",
                path=corpus,
                fix="pass a corpus that names the groups (one sentence per line).",
            )

    def results(self, embs: Any, counts: Mapping[str, int], *, n_samples: int, seed: int) -> tuple[list, list]:
        """One row per group the corpus names (results.csv) and its group-level score (groups.csv)."""
        rows, group_rows = [], []
        for dom, gs in self.domains.items():
            for g, ws in gs.items():
                ws = [w for w in ws if counts.get(w)]
                if not ws:
                    continue  # a group the corpus never names: listed under dropped words
                r = ceat(embs, [ws, self.A, self.B], n_samples=n_samples, seed=seed)
                rows.append(
                    {
                        "domain": dom,
                        "group": g,
                        "words": " ".join(ws),
                        "attributes": self.names,
                        **r,
                        "min_contexts": min(counts[w] for w in ws + self.A + self.B),
                    }
                )
                group_rows.append(
                    {"domain": dom, "group": g, "metric": "ces", "score": r["ces"], "count": min(counts[w] for w in ws)}
                )
        return rows, group_rows


def render_ceat(summary: dict) -> str:
    from .protocols.base import render_protocol

    lines = [
        f"# CEAT: {summary['model']}",
        "",
        f"Corpus {', '.join(f'`{c}`' for c in summary['corpus'])}; N = {summary['n_samples']} samples (seed "
        f"{summary['seed']}), at most {summary['max_contexts']} contexts per word.",
        "",
        render_protocol(summary.get("protocol") or {}),
    ]
    tests = summary["mode"] == "tests"
    rows = [
        (
            [r["test"], f"{r['targ1']} vs {r['targ2']}", f"{r['attr1']} vs {r['attr2']}"]
            if tests
            else [r["domain"], r["group"], r["words"]]
        )
        + [num(r["ces"], 3), pvalue(r["p_value"]), num(r["pes"], 3), sig(r["tau2"], 3), r["min_contexts"]]
        for r in summary["results"]
    ]
    lines.append(
        md_table(
            (["test", "X vs Y", "A vs B"] if tests else ["domain", "group", "words"])
            + ["CES", "p (one-sided)", "PES", "tau²", "fewest contexts"],
            rows,
        )
    )
    if summary.get("dropped_words"):
        lines += [
            "",
            "Words with no context in the corpus, left out (as the CEAT reference did): "
            + ", ".join(summary["dropped_words"])
            + ".",
        ]
    lines += [
        "",
        "CES: the random-effects combined effect size of the N sampled effect sizes (Guo & Caliskan "
        "2021); PES: their plain mean. Groups: the single-category effect size of the group's words "
        "against the two attribute sets (> 0: closer to the first set).",
    ]
    return "\n".join(lines) + "\n"
