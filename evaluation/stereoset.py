"""StereoSet Context Association Tests: model scoring.

CATs are read by :func:`biaskit.readers.read_cats` (original ``dev.json``, the flattened JSONL,
biaskit CAT JSONL; one set of content ids for all of them; see :mod:`biaskit.readers.cats`).

Scoring (:func:`score_cats`), higher = the model prefers the option:

- **Masked LM, intrasentence** (Nadeem et al. §6; reference ``IntrasentenceLoader``): the option's
  filled-in word replaces ``BLANK`` in the context; each of its word pieces is predicted left to right
  with the pieces before it filled in, the piece itself masked and the pieces after it left out
  (``context_left + pieces[:i] + [MASK] + context_right``); the option's score is the mean of the
  piece probabilities (``piece_agg="mean-prob"``, the reference) or of their log-probabilities
  (``"mean-logprob"``). How biaskit differs from the reference, on purpose:

  * pieces are the tokens the filled sentence is *actually* tokenized into (found by character
    offsets), not ``tokenizer.encode(word)`` of the bare word: for byte-level BPE models (RoBERTa,
    GPT-2 vocabularies) the bare word lacks the leading space it has in the sentence, so the reference
    scores different pieces than the ones in the sentence (the "RoBERTa leading-space bug");
  * the filled-in word is found by aligning the context around ``BLANK`` with the option sentence
    (case-insensitive), not as "the word at the BLANK's space-split index with all punctuation
    removed" (which turns ``middle-aged`` into ``middleaged`` and breaks on multi-word fills); only
    punctuation at the edges of the fill is dropped;
  * the masked inputs are built from token ids, not by decoding pieces back to text and re-encoding
    (which can re-tokenize differently);
  * contexts with two ``BLANK`` s (2 dev CATs) get the word in both places; every piece of both
    occurrences is scored (the reference puts a mask in both places and mis-aligns its batch).

- **Masked LM, intersentence**: the next-sentence-prediction head's probability that the option
  follows the context (reference ``evaluate_nsp_intersentence``; label 0 = "is next" for BERT). Only
  for checkpoints that ship trained NSP weights (BERT); other masked LMs raise a clear "not supported".
- **Causal LM, intrasentence**: the option sentence's geometric-mean token probability
  ``exp(mean log p)``, the first token conditioned on the start token (BOS, or EOS when the model has
  no BOS, as GPT-2's ``<|endoftext|>``), as the reference's generative scorer.
- **Any model with an NSP head file** (``nsp_head=``, :mod:`.nsp_head`): intersentence options are
  scored by the head, as the paper and the reference code do for every model (ACL 2021 §6.1-6.2,
  arXiv 2020 §7 and A.4; the authors released heads for GPT-2, RoBERTa and XLNet).
- **Causal LM, intersentence, no head** (``--protocol none`` only: under the ``stereoset`` protocol
  it is refused): ``exp(mean log p)`` of the option sentence's tokens given the context
  (``context + " " + sentence``, with a full stop added to a context that lacks end punctuation).
  This is *not* the paper's method (the paper trains an NSP head because this likelihood "performed
  poorly", arXiv 2020 §7 footnote 3), so its numbers are not comparable with the paper's; the
  reference's unused generative code path scores ``mean log2 p(sentence alone) / mean log2
  p(context)`` instead.

What is StereoSet's stays here and in :mod:`.cat_plan` (where the fill sits and which pieces/tokens
of an option are scored, shared with the pseudo-likelihood mode of :mod:`.cat_modes`; here: how they
are aggregated, the NSP head, the runs); the log-probabilities come from the scoring engine
(:mod:`biaskit.evaluation.engine`: exact-length batches, head gather, float32 log-softmax, progress)
and every model output goes through the shared cache layer (:func:`biaskit.cache.cached_results`),
so a re-run or an interrupted run costs nothing for what was already scored.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.cache import cached_results
from biaskit.errors import BiaskitError, InputError
from biaskit.options import say, tell, unset
from biaskit.readers import read_cats
from biaskit.readers import read_text as _read_text
from biaskit.readers.cats import first_line_is_object as _first_line_is_object
from biaskit.schema import CAT

from .cat_metrics import score_of, to_metric_items
from .cat_modes import check_mode, pll_plan, pll_score
from .cat_plan import Fill, clm_requests, inter_text, likelihood_plan, locate_fill, mlm_piece_requests  # noqa: F401 (re-exported)
from .choices import PIECE_AGGS
from .engine import DEFAULT_BATCH_SIZE, ENGINE_CACHE_VERSION, make_engine
from .results import CatsRun
from .score_cache import open_cache

if TYPE_CHECKING:
    from .models import LoadedLM
    from .options import CatsOptions
    from .served import ServedLM

SPLITS_ = ("intrasentence", "intersentence")


# =====================================================================================  models
class NotSupportedError(BiaskitError):
    """The model cannot score this part of the benchmark (e.g. intersentence without an NSP head)."""


def _load_nsp(sm):
    """A next-sentence-prediction model from the same checkpoint, only if it has trained NSP weights."""
    if sm.meta.get("nsp_model") is not None:
        return sm.meta["nsp_model"]
    import transformers

    cfg = getattr(sm.model, "config", None)
    mtype = getattr(cfg, "model_type", "")
    path = sm.path
    if not path or not Path(path).is_dir():
        raise NotSupportedError(
            f"intersentence with a masked LM needs the model's folder to load its NSP head; "
            f"'{sm.name}' has none. Fix: pass the model as a folder, or {say('split', 'intrasentence')}."
        )
    if mtype not in ("bert",):
        raise NotSupportedError(
            f"intersentence scoring with a masked LM needs a next-sentence-prediction head; {sm.name} "
            f"({mtype or 'unknown type'}) has none (only BERT checkpoints ship one). "
            f"Fix: {tell('nsp_head', 'FILE')} (a head in the StereoSet reference format, e.g. the authors' "
            f"RobertaModel_roberta-base_1e-05.pth), or {say('split', 'intrasentence')}."
        )
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # missing NSP weights are reported below, not as a warning
    try:
        model, info = transformers.AutoModelForNextSentencePrediction.from_pretrained(path, output_loading_info=True)
    finally:
        hf_logging.set_verbosity(level)
    missing = [k for k in info.get("missing_keys", []) if "seq_relationship" in k]
    if missing:
        raise NotSupportedError(
            f"{sm.name} is a BERT model but its checkpoint has no trained next-sentence-prediction weights "
            f"({', '.join(sorted(missing))} missing), so intersentence CATs cannot be scored with it. "
            f"Fix: {tell('split', 'intrasentence')}."
        )
    sm.meta["nsp_model"] = model.to(sm.device).eval()
    return sm.meta["nsp_model"]


# =====================================================================================  scoring
@dataclass
class SentenceScore:
    sentence_id: str
    cat_id: str
    split: str
    gold_label: str
    score: float
    logprobs: list[float] = field(default_factory=list)  # per piece / token (empty for NSP)
    method: str = ""
    meta: dict = field(default_factory=dict)

    def row(self) -> dict:
        return {
            "id": self.sentence_id,
            "cat_id": self.cat_id,
            "split": self.split,
            "gold_label": self.gold_label,
            "score": self.score,
            "method": self.method,
            "n_units": len(self.logprobs),
            "logprobs": [round(x, 6) for x in self.logprobs],
            **self.meta,
        }


def _nsp_probs(sm, pairs: Sequence[tuple[str, str]], batch_size: int, cache, progress_on: bool) -> list[float]:
    """P("B follows A") from a next-sentence head: a ModelNSP head file given with ``--nsp-head``
    (:mod:`.nsp_head`) or the checkpoint's own NSP head (BERT, label 0), through the shared cache
    layer and the engine's exact-length batching (no padding, no attention mask)."""
    from biaskit.progress import progress

    from .engine import check_finite, forward_batches

    head = sm.meta.get("nsp_head")
    if head is not None:
        enc_of, prob, mid = head.encode, head.probs, head.cache_id()
    else:
        import torch

        model = _load_nsp(sm)
        mid = {"engine": "nsp", "v": ENGINE_CACHE_VERSION, "model": sm.fingerprint, "dtype": sm.dtype}

        def enc_of(a: str, b: str) -> dict:
            return sm.tokenizer(a, b)

        def prob(x):
            return torch.softmax(model(**x).logits.float(), dim=-1)[:, 0].double().cpu().tolist()

    def run(todo: list[int]):
        enc = [enc_of(*pairs[i]) for i in todo]
        with progress(len(todo), f"nsp {sm.name}", enabled=progress_on, unit="sentence pairs") as bar:
            for idx, out in forward_batches(todo, enc, batch_size, sm.device, prob):
                for i, v in zip(idx, out, strict=True):
                    check_finite([v], head.path if head is not None else sm.name, " / ".join(pairs[i]))
                yield idx, out
                bar.advance(len(idx))

    return cached_results(cache, [{"nsp": mid, "a": a, "b": b} for a, b in pairs], run)


def _aggregate(logprobs: Sequence[float], piece_agg: str) -> float:
    if not logprobs:
        return float("-inf")
    if piece_agg == "mean-prob":
        return sum(math.exp(x) for x in logprobs) / len(logprobs)
    if piece_agg == "mean-logprob":
        return sum(logprobs) / len(logprobs)
    raise ValueError(f"unknown piece aggregation {piece_agg!r}")


def score_cats(
    cats: Sequence[CAT],
    sm,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    piece_agg: str = "mean-prob",
    cache=None,
    progress: bool = False,
    splits: Sequence[str] | None = None,
    mode: str = "likelihood",
) -> list[SentenceScore]:
    """Score every option of every CAT (see the module docstring for the methods) with ``sm``, a
    :class:`~biaskit.evaluation.models.LoadedLM`.

    The log-probabilities come from the scoring engine (:mod:`.engine`); ``cache`` is a
    :class:`~biaskit.cache.DiskCache` (or None); ``splits`` restricts the splits scored (others are
    skipped silently). Raises :class:`NotSupportedError` for an intersentence CAT that the model
    cannot score. ``mode="pll"``: pseudo-likelihood scoring (ACL 2021 Table 5, :mod:`.cat_modes`).
    """
    mode = check_mode(mode)
    plan = pll_plan if mode == "pll" else likelihood_plan
    if mode == "pll" and getattr(sm, "served", False):
        raise BiaskitError(
            f"{say('scorer', 'clm-api')} scores CATs by likelihood only (the server tokenizes; pll "
            f"masks tokens). Fix: {unset('cat_mode')}"
        )
    if piece_agg not in PIECE_AGGS:
        raise BiaskitError(f"unknown piece aggregation '{piece_agg}'. Fix: use one of {', '.join(PIECE_AGGS)}.")
    if sm.kind not in ("mlm", "clm"):
        raise BiaskitError(f"unknown scorer kind '{sm.kind}'. Fix: use mlm or clm.")
    units = [(c, o, *plan(c, o, sm)) for c in cats if splits is None or c.split in splits for o in c.options]
    nsp = [u for u in units if u[2] == "nsp"]
    if nsp and sm.meta.get("nsp_head") is None:
        from biaskit.progress import library_bars

        with library_bars(progress):  # transformers' loading bars follow -q, as the model's own
            _load_nsp(sm)  # fails before any work when the model has no trained NSP head
    engine = (
        sm.engine
        if getattr(sm, "served", False)
        else make_engine(
            sm,
            batch_size=batch_size,
            cache=cache if cache is not None else False,
            progress=progress,
            label=f"stereoset {sm.name}",
        )
    )
    lps = engine.loglikelihood([r for u in units for r in u[3]])
    probs = iter(
        _nsp_probs(sm, [(c.context, o.sentence) for c, o, *_ in nsp], batch_size, cache, progress) if nsp else ()
    )
    out, i = [], 0
    for c, o, method, reqs, meta in units:
        per = lps[i : i + len(reqs)]
        lp = [x for r in per for x in r]
        i += len(reqs)
        if method == "nsp":
            score = next(probs)
        elif "-pll-" in method:
            score = pll_score(method, per)
        elif method == "mlm-piece-l2r":
            score = _aggregate(lp, piece_agg)
            method += f":{piece_agg}"
        else:
            score = math.exp(sum(lp) / len(lp)) if lp else 0.0
        out.append(
            SentenceScore(
                sentence_id=o.sentence_id,
                cat_id=c.cat_id,
                split=c.split,
                gold_label=o.gold_label,
                score=score,
                logprobs=lp,
                method=method,
                meta=meta,
            )
        )
    return out


# ============================================================  predictions <-> metric inputs
def predictions_json(scores: Sequence[SentenceScore], cats: Sequence[CAT] | None = None) -> dict:
    """The original StereoSet predictions format: ``{"intrasentence": [{"id", "score"}], ...}``.

    With ``cats`` read from the original ``dev.json``, the ids are StereoSet's own sentence ids (so
    the file works with StereoSet's evaluation script); otherwise biaskit's sentence ids."""
    upstream = {o.sentence_id: o.source_id for c in cats or () for o in c.options if o.source_id}
    out: dict = {"intrasentence": [], "intersentence": []}
    for s in scores:
        out[s.split].append({"id": upstream.get(s.sentence_id, s.sentence_id), "score": s.score})
    return {k: v for k, v in out.items() if v}


def read_predictions(path: str | Path) -> dict[str, float]:
    """Sentence id -> score from a StereoSet predictions JSON (``{"intrasentence": [{"id", "score"}],
    "intersentence": [...]}``) or a JSONL with ``id``/``sentence_id`` and ``score`` per line."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found.", path=path, fix=f"check the {say('predictions')} path.")
    text = _read_text(path)
    scores: dict[str, float] = {}

    def add(obj: Any, where: str, row: int | None) -> None:
        if not isinstance(obj, dict):
            raise InputError(
                f"{where}: expected an object with 'id' and 'score'.",
                path=path,
                row=row,
                fix='write {"id": SENTENCE_ID, "score": NUMBER}.',
            )
        sid = obj.get("id", obj.get("sentence_id"))
        sc = obj.get("score")
        if sid is None or sc is None:
            raise InputError(
                f"{where}: needs 'id' and 'score'.",
                path=path,
                row=row,
                column="id" if sid is None else "score",
                fix='write {"id": SENTENCE_ID, "score": NUMBER}.',
            )
        try:
            val = float(sc)
        except (TypeError, ValueError):
            raise InputError(
                f"{where}: score {sc!r} is not a number.",
                path=path,
                row=row,
                column="score",
                fix="scores must be numbers (higher = preferred).",
            ) from None
        if math.isnan(val):
            raise InputError(
                f"{where}: score is NaN.",
                path=path,
                row=row,
                column="score",
                fix="re-score this sentence; NaN cannot be compared.",
            )
        if str(sid) in scores:
            raise InputError(
                f"sentence id '{sid}' has a score already (a duplicated row).",
                path=path,
                row=row,
                column="id",
                fix="keep one score per sentence id.",
            )
        scores[str(sid)] = val

    stripped = text.lstrip()
    if stripped.startswith("{") and not _first_line_is_object(stripped):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON ({exc.msg}, line {exc.lineno}).",
                path=path,
                row=exc.lineno,
                fix="a predictions file is one JSON object or JSONL.",
            ) from None
        _add_pred_doc(obj, path, add)
        return scores
    from biaskit.io import iter_jsonl

    lines = list(iter_jsonl(path))
    if len(lines) == 1 and ({"intrasentence", "intersentence"} & set(lines[0][1])):
        _add_pred_doc(lines[0][1], path, add)
        return scores
    for i, obj in lines:
        add(obj, f"line {i}", i)
    return scores


def _add_pred_doc(obj: Any, path: Path, add: Callable) -> None:
    if not isinstance(obj, dict) or not ({"intrasentence", "intersentence"} & set(obj)):
        raise InputError(
            'not a StereoSet predictions file: expected {"intrasentence": [{"id", "score"}], "intersentence": [...]}.',
            path=path,
            fix="use the original predictions format or JSONL with id and score.",
        )
    for split in ("intrasentence", "intersentence"):
        items = obj.get(split) or []
        if not isinstance(items, list):
            raise InputError(
                f"'{split}' is a JSON {type(items).__name__}, not a list of predictions.",
                path=path,
                column=split,
                fix=f'write "{split}": [{{"id": SENTENCE_ID, "score": NUMBER}}, ...].',
            )
        for j, item in enumerate(items, start=1):
            add(item, f"{split}[{j}]", None)


# =====================================================================================  pipeline
def _sha256(path: Path) -> str:
    from biaskit.io import sha256_file

    return sha256_file(path)


def _target_rows(report: dict) -> list[dict]:
    return [{k: r[k] for k in ("domain", "target", "count", "lms", "ss", "icat")} for r in report["targets"]]


def write_cat_outputs(
    out_dir: str | Path, summary: dict, scores: Sequence[SentenceScore] | None = None, cats: Sequence[CAT] | None = None
) -> None:
    """summary.json, report.md, targets.csv, groups.csv (+ scores.jsonl, predictions.json): the folder
    is published whole (an earlier result is replaced at once, never mixed with this one)."""
    from biaskit.io import atomic_dir

    with atomic_dir(out_dir, owns=("summary.json",)) as stage:
        _write_cat_files(stage, summary, scores, cats)


def _write_cat_files(out: Path, summary: dict, scores, cats) -> None:
    import pandas as pd

    from biaskit.io import atomic_write_text, write_json, write_jsonl, write_table

    from .cat_metrics import render_report

    targets = pd.DataFrame(_target_rows(summary))
    write_table(out / "targets.csv", targets)
    groups = targets.melt(
        id_vars=["domain", "target", "count"], value_vars=["ss", "lms", "icat"], var_name="metric", value_name="score"
    ).rename(columns={"target": "group"})
    write_table(out / "groups.csv", groups[["domain", "group", "metric", "score", "count"]])
    if scores is not None:
        write_jsonl(out / "scores.jsonl", (s.row() for s in scores))
        write_json(out / "predictions.json", predictions_json(scores, cats))
    from biaskit.public import public_obj

    summary = public_obj(summary)  # no path of this machine in what is published (biaskit.public)
    atomic_write_text(out / "report.md", render_report(summary))
    write_json(out / "summary.json", summary)


def _summary(cats: Sequence[CAT], items, report: dict, *, tie_policy: str, seed: int, extra: dict) -> dict:
    from .cat_metrics import baselines

    top = report["overall"]
    return {
        "benchmark": "stereoset",
        "kind": "cats",
        **extra,
        "lms": top["lms"],
        "ss": top["ss"],
        "icat": top["icat"],
        "count": top["count"],
        **{k: v for k, v in report.items() if k != "targets"},
        "targets": report["targets"],
        "baselines": baselines(items, seed=seed, tie_policy=tie_policy),
    }


def read_run_cats(
    data: str | Path,
    *,
    fmt: str = "auto",
    split: str = "both",
    limit: int | None = None,
    release_split: str | None = None,
    lang: str | None = None,
) -> tuple[list[CAT], dict | None]:
    """The CATs a run scores (a file, or a release folder's split) and the release info (or None);
    ``lang``: only the CATs of one language (a release may hold English and Hindi CATs)."""
    if Path(data).is_dir() or release_split is not None:
        from biaskit.release.read import read_release_cats

        cats, release = read_release_cats(data, split=release_split)
        cats = [c for c in cats if (split == "both" or c.split == split) and (lang is None or c.lang == lang)]
        if not cats:
            raise InputError(
                f"no {lang + ' ' if lang else ''}CATs{'' if split == 'both' else ' (' + split + ')'} in "
                f"this release{' split ' + release_split if release_split else ''}.",
                path=data,
                fix=f"check {say('split')} and {say('release_split')}" + (f" and {say('lang')}." if lang else "."),
            )
        return cats[:limit], ({**release, "lang": lang} if lang else release)
    if lang is None:
        return read_cats(data, format=fmt, split=None if split == "both" else split, limit=limit), None
    cats = read_cats(data, format=fmt, split=None if split == "both" else split)
    return [c for c in cats if c.lang == lang][:limit], None


CATS_DEFAULTS = {"mode": "likelihood", "piece_agg": "mean-prob", "tie_policy": "reference", "split": "both"}


def cats_protocol(
    requested: str | None,
    fmt: str,
    cats: Sequence[CAT],
    release: dict | None,
    kind: str,
    given: dict,
    *,
    intersentence: str,
):
    """The protocol a CAT run follows (the data's origin, or ``requested``) applied to the options given
    (None = not given). ``intersentence``: how this model would score intersentence CATs (``nsp``: a
    head; ``likelihood``: log P(option | context))."""
    from .protocols import apply_protocol, choose
    from .protocols import words as W
    from .protocols.origin import cats_origin

    proto, how = choose("cats", requested, cats_origin(fmt, cats, release))
    given = {**given, "intersentence": intersentence}
    defaults = {**CATS_DEFAULTS, "intersentence": intersentence}
    if kind != "mlm":
        defaults.pop("piece_agg")  # a masked-LM setting
    return apply_protocol(
        proto,
        "cats",
        given,
        defaults,
        context={"kind": kind},
        chosen_by=how,
        words={
            "mode": W.CAT_MODE,
            "piece_agg": W.PIECE_AGG,
            "tie_policy": W.TIES,
            "split": W.SPLIT,
            "intersentence": W.INTER,
        },
    )


def scoring_context(cats: Sequence[CAT], lm: Any) -> dict[str, Any]:
    """Facts of the scored CATs and the model that decide whether a documented difference from the
    reference applies (:class:`~.protocols.base.Difference` of the ``stereoset`` protocol)."""
    import string

    intra = [c for c in cats if c.split == "intrasentence"]
    two = sum(c.context.count("BLANK") >= 2 for c in intra)
    inner = 0
    for c in intra:
        for o in c.options:
            try:
                fill = locate_fill(c.context, o.sentence).fill
            except BiaskitError:
                continue
            inner += any(ch in string.punctuation or ch.isspace() for ch in fill)
    return {
        "kind": getattr(lm, "kind", None),
        "two_blank_cats": two > 0,
        "two_blank_cats_n": two,
        "inner_punct_fills": inner > 0,
        "inner_punct_fills_n": inner,
        "byte_level": _byte_level(getattr(lm, "tokenizer", None)),
    }


def _byte_level(tokenizer: Any) -> bool:
    """The tokenizer is a byte-level BPE (GPT-2, RoBERTa vocabularies: words carry their leading space)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    try:
        pre = json.loads(backend.to_str()).get("pre_tokenizer") or {}
    except Exception:  # not a serialisable tokenizer: assume not
        return False
    return '"ByteLevel"' in json.dumps(pre)


def _check_intersentence(applied, lm, cats: Sequence[CAT], mode: str) -> None:
    """Under a protocol that scores intersentence CATs with an NSP head (StereoSet), a model that would
    fall back to the likelihood is refused with the fix (a head file, intrasentence only, or no protocol)."""
    proto_value = next((r["protocol_value"] for r in applied.rows if r["key"] == "intersentence"), None)
    if proto_value != "nsp" or mode != "likelihood" or lm.meta.get("nsp_head") is not None:
        return
    if not any(c.split == "intersentence" for c in cats):
        return
    if getattr(lm, "served", False) or lm.kind == "clm":
        raise BiaskitError(
            f"StereoSet scores intersentence CATs with a next-sentence-prediction head (arXiv 2020 §7.4, ACL 2021 "
            f"§6.2) and '{lm.name}' is a causal LM without one. Fix: {tell('nsp_head', 'FILE')} (the authors' "
            f"GPT2Model_gpt2_0.0005.pth for gpt2), {say('split', 'intrasentence')}, or {say('protocol', 'none')} for "
            "log P(option | context), not comparable with the paper"
        )


def run_cats(opts: CatsOptions, *, progress: bool = False, command: str | None = None, cache: Any = None) -> CatsRun:
    """Read CATs, score them with the options' one model, compute the metrics and write the result folder.

    ``opts``: the :class:`~biaskit.evaluation.options.CatsOptions` of ``biaskit evaluate cats`` with
    one model (what the command and the pipeline's evaluate stage build). ``progress``, ``command``
    and ``cache`` (default: not ``no_cache``; or a cache object) are not options.

    ``data`` may be a release folder (``biaskit release build``); ``release_split`` (dev/test) then
    picks one of its splits and the summary names the release; ``lang`` keeps the CATs of one language.

    ``protocol``: ``stereoset``, ``cao2022``, ``none`` or None (the data's origin: StereoSet data ->
    ``stereoset``); ``split``, ``cat_mode``, ``piece_agg`` and ``ties`` left at None take its values.
    Under ``stereoset`` intersentence CATs are scored with a next-sentence head: BERT's own, or
    ``nsp_head`` (a head file in the reference format, :mod:`.nsp_head`; ``nsp_label``: its "is next"
    output when the file name does not say); a causal LM without one is refused. With
    ``split="both"`` a split the model cannot score (intersentence for masked LMs without an NSP
    head) is skipped and the reason recorded in ``summary["skipped"]``; asking for that split alone
    raises :class:`NotSupportedError`. ``cat_mode``: ``likelihood`` (ACL 2021 Table 4) or ``pll``
    (pseudo-likelihood, Table 5; :mod:`.cat_modes`). ``sentiment_model``: a sequence classifier
    folder whose SentimentLM baseline (:mod:`.sentiment`) is added to ``summary["baselines"]``.
    """
    from .options import one_model

    model = one_model(opts, "run_cats")
    served = _check_options(opts)
    t0 = time.perf_counter()
    cats, release = read_run_cats(
        opts.data, fmt=opts.format, split="both", limit=None, release_split=opts.release_split, lang=opts.lang
    )
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    dc = open_cache(not opts.no_cache if cache is None else cache)
    lm = _load_model(opts, model, served, dc, progress)
    setup = _Setup.of(opts, lm, cats, release)
    cats = _selected(cats, setup, opts)
    _check_intersentence(setup.applied, lm, cats, setup.mode)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    cats, scores, skipped = _score_splits(cats, lm, setup, opts.batch_size, dc, progress)
    score_s = time.perf_counter() - t0
    from .published import cats_comparison, cats_data_reasons, model_protocol

    applied, checkpoint = model_protocol(setup.applied, model, lm)
    applied.note_context(scoring_context(cats, lm))
    cats_data_reasons(applied, {sp: sum(c.split == sp for c in cats) for sp in SPLITS_})
    items, _ = to_metric_items(cats, {s.sentence_id: s.score for s in scores})
    from .cat_metrics import full_report

    extra = {
        **_model_facts(lm, setup, scores, skipped, cats),
        "checkpoint": checkpoint,
        "protocol": applied.as_dict(),
        "data": _data_facts(opts, release, cats, setup.split),
        "timings": _timings(read_s, load_s, score_s, scores),
        "command": command,
    }
    summary = _summary(
        cats,
        items,
        full_report(items, tie_policy=setup.tie_policy),
        tie_policy=setup.tie_policy,
        seed=opts.seed,
        extra=extra,
    )
    if opts.sentiment_model is not None:
        summary["baselines"]["SentimentLM"] = _sentiment(cats, opts, setup, dc, progress)
    summary["published"] = cats_comparison(checkpoint.get("paper"), summary)
    write_cat_outputs(opts.out, summary, scores, cats)
    return CatsRun.from_summary(summary, opts.out)


def _check_options(o: CatsOptions) -> dict:
    """What the options' types do not say, before anything is read: a served model's options (returned;
    a base URL without a served scorer is refused), a known CAT mode and split."""
    from .options import served_options

    served = served_options(o.scorer, o.base_url, o.concurrency)
    if o.cat_mode is not None:
        check_mode(o.cat_mode)
    if o.split not in (None, "both", *SPLITS_):
        raise BiaskitError(f"unknown split '{o.split}'. Fix: use both, intrasentence or intersentence")
    return served


def _load_model(o: CatsOptions, model: Any, served: dict, dc: Any, progress: bool) -> LoadedLM | ServedLM:
    """The model (a served one for ``clm-api``), with its NSP head file when one is given."""
    from biaskit.progress import library_bars

    from .models import load_lm

    lm: LoadedLM | ServedLM
    if o.scorer == "clm-api":  # a served model (docs/evaluation-scorers.md "Scaling up")
        from .served import load_served_lm

        lm = load_served_lm(model, cache=dc, progress=progress, **served)
    else:
        with library_bars(progress):  # transformers' loading bars follow -q / the terminal
            lm = load_lm(model, kind=o.scorer, device=o.device, dtype=o.dtype, device_map=o.device_map)
    if o.nsp_head is not None:
        if getattr(lm, "served", False):
            raise BiaskitError(
                f"{say('nsp_head')} needs the model's weights in this process; a served model has none "
                f"here. Fix: pass the model folder with {say('scorer', 'clm')}"
            )
        from .nsp_head import load_nsp_head

        with library_bars(progress):
            lm.meta["nsp_head"] = load_nsp_head(o.nsp_head, lm, o.nsp_label)
    return lm


@dataclass
class _Setup:
    """How a CAT run scores, once the protocol is applied: the scoring mode, tie rule, split, piece
    aggregation, and the applied protocol itself."""

    applied: Any
    mode: str
    tie_policy: str
    split: str
    piece_agg: str

    @classmethod
    def of(cls, o: CatsOptions, lm: Any, cats: Sequence[CAT], release: dict | None) -> _Setup:
        inter_method = "nsp" if (lm.meta.get("nsp_head") is not None or lm.kind == "mlm") else "likelihood"
        applied = cats_protocol(
            o.protocol,
            o.format if not release else "release",
            cats,
            release,
            lm.kind,
            {"mode": o.cat_mode, "piece_agg": o.piece_agg, "tie_policy": o.ties, "split": o.split},
            intersentence=inter_method,
        )
        v = applied.values
        return cls(applied, check_mode(v["mode"]), v["tie_policy"], v["split"], v.get("piece_agg") or "mean-prob")


def _selected(cats: list[CAT], setup: _Setup, o: CatsOptions) -> list[CAT]:
    """The CATs of the run's split (the first ``limit``); without intersentence CATs, how they would
    be scored is moot and leaves the protocol's rows."""
    cats = [c for c in cats if setup.split == "both" or c.split == setup.split][: o.limit]
    if not cats:
        raise InputError(
            f"no {setup.split} CATs to score.", path=o.data, fix=f"check {say('split')} and {say('limit')}."
        )
    if not any(c.split == "intersentence" for c in cats):
        a = setup.applied
        a.rows = [r for r in a.rows if r["key"] != "intersentence"]
        a.deviations = [d for d in a.deviations if d["key"] != "intersentence"]
    return cats


def _score_splits(
    cats: list[CAT], lm: Any, setup: _Setup, batch_size: int, dc: Any, progress: bool
) -> tuple[list[CAT], list[SentenceScore], dict]:
    """Score the intrasentence CATs, then the intersentence ones; a split the model cannot score is
    skipped (its CATs left out, the reason recorded) unless it is the only split asked for."""
    kw = dict(batch_size=batch_size, piece_agg=setup.piece_agg, cache=dc, progress=progress, mode=setup.mode)
    scores = score_cats([c for c in cats if c.split == "intrasentence"], lm, **kw)
    skipped: dict = {}
    inter = [c for c in cats if c.split == "intersentence"]
    if inter:
        try:
            scores += score_cats(inter, lm, **kw)
        except NotSupportedError as exc:
            if setup.split == "intersentence":
                raise
            skipped["intersentence"] = {"count": len(inter), "reason": str(exc)}
            cats = [c for c in cats if c.split != "intersentence"]
    return cats, scores, skipped


def _model_facts(lm: Any, setup: _Setup, scores: Sequence[SentenceScore], skipped: dict, cats: Sequence[CAT]) -> dict:
    """What summary.json says of the model and how it scored (its first keys)."""
    head = lm.meta.get("nsp_head")
    covers = sorted({c.split for c in cats})
    return {
        "model": str(lm.name),
        "scorer": "clm-api" if getattr(lm, "served", False) else lm.kind,
        "fingerprint": lm.fingerprint,
        "device": lm.device,
        "dtype": lm.dtype,
        "device_map": lm.meta.get("device_map"),
        "cat_mode": setup.mode,
        "methods": sorted({s.method for s in scores}),
        "piece_agg": setup.piece_agg if lm.kind == "mlm" and setup.mode == "likelihood" else None,
        "nsp_head": {"path": head.path, "sha256": head.sha256, "family": head.family, "next_label": head.next_label}
        if head is not None
        else None,
        "tie_policy": setup.tie_policy,
        "skipped": skipped,
        "overall_covers": covers,
        "warnings": [  # the reason is under "skipped" (it may name the model's folder)
            f"{sp} NOT SCORED ({info['count']} CATs): the overall LMS, SS and ICAT cover {' and '.join(covers)} only"
            for sp, info in skipped.items()
        ],
    }


def _data_facts(o: CatsOptions, release: dict | None, cats: Sequence[CAT], split: str) -> dict:
    return {
        "path": str(o.data),
        "sha256": release["sha256"] if release else _sha256(Path(o.data)),
        **({"release": release} if release else {}),
        "n_cats": len(cats),
        "format": "release" if release else o.format,
        "split": split,
        "limit": o.limit,
    }


def _timings(read_s: float, load_s: float, score_s: float, scores: Sequence[SentenceScore]) -> dict:
    return {
        "read_s": read_s,
        "load_s": load_s,
        "score_s": score_s,
        "sentences_per_s": len(scores) / score_s if score_s > 0 else None,
        "model_inputs": sum(len(s.logprobs) if s.method.startswith("mlm") else 1 for s in scores),
    }


def _sentiment(cats: Sequence[CAT], o: CatsOptions, setup: _Setup, dc: Any, progress: bool) -> dict:
    """StereoSet's SentimentLM baseline with the options' classifier (:mod:`.sentiment`)."""
    from biaskit.progress import library_bars

    from .sentiment import sentiment_baseline

    assert o.sentiment_model is not None, "called with a sentiment model only"
    with library_bars(progress):
        return sentiment_baseline(
            cats,
            o.sentiment_model,
            device=o.device,
            batch_size=o.batch_size,
            cache=dc,
            progress=progress,
            tie_policy=setup.tie_policy,
        )


def run_cats_predictions(opts: CatsOptions, *, command: str | None = None) -> CatsRun:
    """Metrics from an existing per-sentence score file (``opts.predictions``: original StereoSet
    predictions format or JSONL with id/score) against the gold CATs in ``opts.data`` (ids must match).
    Of a protocol only the tie rule applies: how the scores were computed is the file's business (the
    report says so)."""
    from .cat_metrics import full_report

    assert opts.predictions is not None, "run_cats_predictions needs the options' predictions file"
    cats = read_cats(opts.data, format=opts.format)
    applied = _predictions_protocol(opts, cats)
    tie_policy = applied.values["tie_policy"]
    scores = read_predictions(opts.predictions)
    cats, dropped_splits = _predicted_splits(cats, scores, opts.predictions)
    items, n_missing = to_metric_items(cats, scores, allow_missing=opts.allow_missing, source=str(opts.predictions))
    extra = {
        "model": Path(opts.predictions).stem,
        "scorer": "predictions",
        "tie_policy": tie_policy,
        "skipped": {s: {"reason": "no predictions for this split"} for s in dropped_splits},
        "missing_cats": n_missing,
        "data": {
            "path": str(opts.data),
            "sha256": _sha256(Path(opts.data)),
            "n_cats": len(cats),
            "format": opts.format,
        },
        "predictions": {
            "path": str(opts.predictions),
            "sha256": _sha256(Path(opts.predictions)),
            "n_scores": len(scores),
        },
        "protocol": applied.as_dict(),
        "command": command,
    }
    report = full_report(items, tie_policy=tie_policy)
    summary = _summary(cats, items, report, tie_policy=tie_policy, seed=opts.seed, extra=extra)
    write_cat_outputs(opts.out, summary, None)
    return CatsRun.from_summary(summary, opts.out)


def _predictions_protocol(o: CatsOptions, cats: Sequence[CAT]):
    """The protocol of a score file's metrics: only its tie rule applies."""
    from .protocols import apply_protocol, choose
    from .protocols import words as W
    from .protocols.origin import cats_origin

    proto, how = choose("cats", o.protocol, cats_origin(o.format, cats))
    applied = apply_protocol(
        proto,
        "cats",
        {"tie_policy": o.ties},
        {"tie_policy": "reference"},
        chosen_by=how,
        words={"tie_policy": W.TIES},
        extra_notes=[
            "The scores come from a file: only the tie rule is biaskit's; how the "
            "sentences were scored is not known to it."
        ],
    )
    applied.rows = [r for r in applied.rows if r["key"] == "tie_policy"]
    applied.deviations = [d for d in applied.deviations if d["key"] == "tie_policy"]
    return applied


def _predicted_splits(cats: list[CAT], scores: dict, predictions: Path) -> tuple[list[CAT], list[str]]:
    """Only the splits present in the predictions (the reference's files may hold one split), and the
    splits dropped."""
    present = {c.split for c in cats if all(score_of(o, scores) is not None for o in c.options)}
    if not present:
        raise InputError(
            "none of the sentence ids in the predictions matches the gold file.",
            path=predictions,
            fix="score the same gold file (original StereoSet ids, or biaskit's ids from "
            "`evaluate cats` scores.jsonl).",
        )
    return [c for c in cats if c.split in present], sorted({c.split for c in cats} - present)
