"""Translate StereoSet CATs with several MT engines into candidates for blind human review.

The CAT counterpart of :mod:`biaskit.curation.translate` (the same engines, cache, resume and
candidate-file contract), one record per CAT::

    {"cat_id", "source_lang", "target_lang", "split", "bias_type", "target",
     "source": {"target", "context", "stereotype", "anti_stereotype", "unrelated"},
     "candidates": [{"engine", "model", "target", "context", "stereotype", "anti_stereotype", "unrelated",
                     "flags": [{"code", "reason"}], "strategy", "provenance"}],
     "provenance": {...}}

For an intrasentence CAT the three options are the *fills* of the context's ``BLANK`` (from the
CAT's ``meta.fills`` as ``curate cats`` records them, else read off the option sentences), so the
translated options can only differ in the filled word; for an intersentence CAT they are the three
sentences. Keeping the ``BLANK`` and the fills aligned:

1. **Whole-CAT prompt** (engines with ``joint_cats``, i.e. ``llm``): the context with its ``BLANK``,
   the target and the three fills go out in one request (``prompts/translate_cat_*.toml``) that asks
   for a context with one ``BLANK`` and fills that agree with it.
2. **Aligned sentences** (``googletrans``, ``hf``): the three filled option sentences are translated
   and compared; when they differ in one place only, that place becomes the ``BLANK`` and what each
   sentence has there its fill (:func:`biaskit.cat_checks.align_fills`; strategy ``aligned``).
   Otherwise the candidate keeps the three translated sentences with the blocking flag
   ``fills_not_aligned``: the reviewer writes the context and fills. Intersentence CATs are
   translated part by part.

Every candidate is checked (:func:`biaskit.cat_checks.check_cat_translation`: BLANK kept once,
fills word-sized and distinct, the target in the context, Devanagari script, untranslated Latin
words, length, names). The ``cat_translation`` annotation kind shows the candidates blind and
releases the reviewed CATs in the target language (``source_id`` = the English ``cat_id``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.cache import DiskCache, request_hash
from biaskit.cat_checks import OPTION_KEYS, align_fills, check_cat_translation
from biaskit.errors import InputError
from biaskit.mt_checks import flag
from biaskit.options import say, tell
from biaskit.textutil import strip_edges

from .mt_base import MTEngine, create_engine, parse_engine_list
from .translate import (
    CachedEngine,
    RunInfo,
    TranslationRun,
    _now,
    copies_prompt_flag,
    engine_labels,
    need_engines,
    resume_candidates,
    run_figures,
    write_in_batches,
)

if TYPE_CHECKING:
    from .options import CatTranslateOptions

FIELDS = ("target", "context", *OPTION_KEYS)


def option_fill(context: str, sentence: str) -> str | None:
    """The word an intrasentence option puts in its context's ``BLANK`` (None when the sentence
    does not have the context's text around it)."""
    i = context.find("BLANK")
    if i < 0:
        return None
    left, right = context[:i], context[i + len("BLANK") :]
    s = sentence
    if not (
        s[: len(left)].casefold() == left.casefold()
        and s[len(s) - len(right) :].casefold() == right.casefold()
        and len(s) >= len(left) + len(right)
    ):
        return None
    return strip_edges(s[len(left) : len(s) - len(right)], " .,;:!?\"'") or None


def source_fields(cat) -> dict[str, str]:
    """The flat source dict of a CAT: target, context and the three options (fills for an
    intrasentence CAT: ``meta.fills``, else read off the option sentences)."""
    out = {"target": cat.target, "context": cat.context}
    fills = (cat.meta or {}).get("fills") or {}
    for key, label in OPTION_KEYS.items():
        sent = cat.option(label).sentence
        if cat.split == "intrasentence":
            out[key] = fills.get(label) or option_fill(cat.context, sent) or sent
        else:
            out[key] = sent
    return out


def _independent(cats: Sequence[Any], sources: Sequence[dict], engine: CachedEngine, target: str) -> list[dict]:
    """Candidates of an engine that translates texts one by one (see the module docstring)."""
    texts = []
    for c, src in zip(cats, sources, strict=False):
        texts.append(src["target"])
        if c.split == "intrasentence":
            texts += [c.option(lab).sentence for lab in OPTION_KEYS.values()]
        else:
            texts += [src["context"], *(src[k] for k in OPTION_KEYS)]
    outs = engine.translate(texts)
    cands: list[dict[str, Any]] = []
    pos = 0
    for c in cats:
        tgt_term = outs[pos]
        pos += 1
        cand: dict[str, Any]
        if c.split == "intrasentence":
            sents = outs[pos : pos + 3]
            pos += 3
            aligned = align_fills(sents)
            if aligned is not None:
                ctx, fills = aligned
                cand = {
                    "target": tgt_term,
                    "context": ctx,
                    **dict(zip(OPTION_KEYS, fills, strict=False)),
                    "strategy": "aligned",
                }
            else:
                cand = {
                    "target": tgt_term,
                    "context": sents[0],
                    **dict(zip(OPTION_KEYS, sents, strict=False)),
                    "strategy": "sentences",
                    "flags": [
                        flag(
                            "fills_not_aligned",
                            (
                                "the three translated option sentences differ in more than one place: write the "
                                "context with BLANK and the three fills."
                            ),
                            sentences=list(sents),
                        )
                    ],
                }
        else:
            parts = outs[pos : pos + 4]
            pos += 4
            cand = {
                "target": tgt_term,
                "context": parts[0],
                **dict(zip(OPTION_KEYS, parts[1:], strict=False)),
                "strategy": "independent",
            }
        cands.append(cand)
    return cands


def _candidates(cats: Sequence[Any], sources: Sequence[dict], engine: CachedEngine, target: str) -> list[dict]:
    e = engine.engine
    base_prov = e.provenance()
    if e.joint_cats:
        outs = engine.translate_cats([{"split": c.split, **src} for c, src in zip(cats, sources, strict=False)])
        cands: list[dict[str, Any]] = []
        for o in outs:
            if o is None:
                cands.append(
                    {
                        **{f: "" for f in FIELDS},
                        "strategy": "joint-prompt",
                        "flags": [flag("engine_failed", "the engine gave no usable translation; a re-run retries it.")],
                    }
                )
            else:
                cands.append(
                    {
                        **{f: o.get(f, "") for f in FIELDS},
                        "strategy": "joint-prompt",
                        "provenance": {**base_prov, **(o.get("provenance") or {})},
                    }
                )
        for c, src, cand in zip(cats, sources, cands, strict=False):
            copied = (
                [] if cand.get("flags") else e.prompt_copies("cat", {"split": c.split, **src}, cand, engine.src, target)
            )
            if copied:
                cand.update({f: "" for f in FIELDS}, flags=[copies_prompt_flag(copied)])
    else:
        cands = _independent(cats, sources, engine, target)
    out = []
    for c, src, cand in zip(cats, sources, cands, strict=False):
        given = list(cand.get("flags") or [])
        failed = any(f["code"] in ("engine_failed", "copies_prompt") for f in given)
        checks = [] if failed else check_cat_translation({**src, "split": c.split}, cand, target)
        out.append(
            {
                "engine": e.name,
                "model": e.model,
                **{f: cand.get(f, "") for f in FIELDS},
                "flags": given + [f for f in checks if f["code"] not in {g["code"] for g in given}],
                "strategy": cand["strategy"],
                "provenance": cand.get("provenance") or dict(base_prov),
            }
        )
    return out


@dataclass
class CatTranslateResult(TranslationRun):
    n_cats: int = 0

    def summary(self) -> dict[str, Any]:
        return {**self.common(), "cats": self.n_cats}


def translate_cats(
    cats: Sequence[Any],
    target: str,
    engines: Sequence[MTEngine],
    out: str | Path,
    *,
    source_lang: str = "en",
    cache: DiskCache | None = None,
    batch_cats: int = 16,
    resume: bool = True,
    progress: bool = False,
    source_file: str | None = None,
) -> CatTranslateResult:
    """Translate every CAT of ``source_lang`` with every engine; write candidate records to ``out``
    (JSONL, appended as batches finish; an interrupted run resumes; rewritten in input order at the end)."""
    from biaskit.io import write_jsonl

    started = time.monotonic()
    out = Path(out)
    target, src = target.strip().lower(), source_lang.strip().lower()
    if src == target:
        raise InputError(
            f"source and target language are both '{src}'.",
            fix=f"{tell('target', 'LANG')} with a language other than '{src}', or check {say('source_lang')}.",
        )
    need_engines(engines)
    cats = [c for c in cats if c.lang == src]
    if not cats:
        raise InputError(
            f"no '{src}' CATs to translate.", path=source_file, fix=f"check {say('source_lang')} and the file."
        )
    labels = engine_labels(engines)
    signature = request_hash({"kind": "cats", "engines": labels, "src": src, "tgt": target})[:16]
    done, n_failed_before, notes = resume_candidates(out, [c.cat_id for c in cats], signature, "cat_id", resume=resume)
    n_resumed = len(done)
    cache = cache if cache is not None else DiskCache(namespace="mt")
    for e in engines:
        e.attach_output(out)
    cached = [CachedEngine(e, cache, src, target) for e in engines]
    run = RunInfo(src, target, signature, labels, source_file)

    def records(batch: list) -> list[dict]:
        sources = [source_fields(c) for c in batch]
        per_engine = [_candidates(batch, sources, ce, target) for ce in cached]
        return [
            _cat_record(c, srcf, [cands[j] for cands in per_engine], run)
            for j, (c, srcf) in enumerate(zip(batch, sources, strict=False))
        ]

    todo = [c for c in cats if c.cat_id not in done]
    write_in_batches(
        out, todo, batch_cats, records, done, "cat_id", f"translating CATs {src}->{target}", "CATs", progress
    )
    records_ = [done[c.cat_id] for c in cats if c.cat_id in done]
    write_jsonl(out, records_)
    return CatTranslateResult(
        out=out,
        n_cats=len(records_),
        n_resumed=n_resumed,
        **run_figures(records_, labels, cached),
        seconds=time.monotonic() - started,
        notes=notes
        + ([f"{n_failed_before} CAT(s) an engine had failed on were asked again"] if n_failed_before else []),
    )


def _cat_record(c: Any, source: dict[str, str], candidates: list[dict], run: RunInfo) -> dict[str, Any]:
    """One CAT's candidate record: its source texts, each engine's candidate and the provenance."""
    from biaskit import __version__

    return {
        "cat_id": c.cat_id,
        "source_lang": run.src,
        "target_lang": run.target,
        "split": c.split,
        "bias_type": c.bias_type,
        "target": c.target,
        "source": source,
        "candidates": candidates,
        "provenance": {
            "run_signature": run.signature,
            "source_provenance": c.provenance,
            "source_meta": {k: v for k, v in (c.meta or {}).items() if k != "annotation"},
            "source_file": run.source_file,
            "engines": run.labels,
            "created_at": _now(),
            "biaskit": __version__,
        },
    }


def translate_cats_file(
    o: CatTranslateOptions,
    /,
    *,
    engine_options: dict[str, Any] | None = None,
    cache: DiskCache | None = None,
    resume: bool | None = None,
    progress: bool = False,
) -> CatTranslateResult:
    """``biaskit curate cat-translate``: read CATs (any format :func:`biaskit.readers.read_cats`
    reads), build the engines from their specs and :func:`translate_cats`. ``o``: the command's
    :class:`~biaskit.curation.options.CatTranslateOptions`; ``engine_options``, ``resume``:
    as :func:`~biaskit.curation.translate.translate_file`; ``cache``, ``progress``: as :func:`translate_cats`."""
    from biaskit.readers import read_cats

    if engine_options is None:
        engine_options = o.engine_options()
    specs = parse_engine_list(o.engines)
    cats = read_cats(o.cats, lang=o.source_lang)
    built = [create_engine(s, **(engine_options or {})) for s in specs]
    try:
        return translate_cats(
            cats,
            o.target,
            built,
            o.out,
            source_lang=o.source_lang,
            source_file=str(o.cats),
            cache=cache,
            batch_cats=o.batch_cats,
            resume=not o.restart if resume is None else resume,
            progress=progress,
        )
    finally:
        for e in built:
            e.close()


__all__ = ["translate_cats", "translate_cats_file", "source_fields", "option_fill", "CatTranslateResult"]
