"""Translate minimal pairs with several MT engines into candidates for blind human review.

:func:`translate_pairs` translates both sentences of every pair with every engine and writes one
record per pair (the contract with the ``translation`` annotation kind)::

    {"pair_id", "source_lang", "target_lang", "bias_type", "direction",
     "source": {"sent_more", "sent_less"},
     "candidates": [{"engine", "model", "sent_more", "sent_less", "flags": [{"code", "reason"}],
                     "strategy", "provenance"}],
     "provenance": {...}}

Keeping S1 and S2 minimal
-------------------------
Engines translate sentences independently, so two English sentences that differ in one word often
come back differing in several (synonyms, word order, a dropped auxiliary). biaskit keeps the
shared words identical where the engine allows:

1. **Joint prompt** (engines with ``joint_pairs``, i.e. ``llm``): both sentences go into one
   request that asks for translations differing only where the English differs
   (``prompts/translate_pair.toml``).
2. **Span substitution** (``googletrans``, ``hf``): both sentences are translated; when the
   English pair differs in one span but the translations differ in more places, the differing
   English spans are translated on their own (``the man`` / ``the woman``); if the translation of
   S1's span occurs exactly once in S1's translation, S2 becomes S1's translation with that span
   replaced (or the same with S2 as the base). The variant is used only when it is minimal; it
   carries the flag ``span_substituted`` so the reviewer checks agreement (a substituted
   ``पुरुष`` -> ``महिला`` leaves ``था`` masculine), and the independent translations stay in the
   candidate's provenance. Otherwise the independent translations are kept and the checker's
   ``not_minimal`` flag tells the reviewer.

Cache, resume, provenance
-------------------------
Every translation is cached in :class:`biaskit.cache.DiskCache` (namespace ``mt``) keyed by
engine, model (+ the engine's fingerprint and decoding parameters), source and target language and
the text (or the pair, for joint prompts): a re-run costs nothing. Finished pair records are
appended (fsync'ed) to the output file as they complete; an interrupted run re-reads them and
continues; at the end the file is rewritten atomically in input order.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.cache import DiskCache, cached_results, request_hash
from biaskit.errors import InputError
from biaskit.mt_checks import check_candidate, diff_spans, flag, tokens
from biaskit.options import say, tell
from biaskit.schema import SentencePair, normalize_text
from biaskit.textutil import strip_edges

from .mt_base import MT_ENGINES, EngineSpec, MTEngine, create_engine, parse_engine_list  # noqa: F401 (re-exported: callers import them from here)

if TYPE_CHECKING:
    from .options import TranslateOptions

__all__ = ["MT_ENGINES", "translate_pairs", "translate_file", "check_candidate", "TranslateResult"]


# ------------------------------------------------------------------------------------------ engines
class CachedEngine:
    """An engine behind the ``mt`` cache: only texts (or pairs) not seen before reach the engine."""

    def __init__(self, engine: MTEngine, cache: DiskCache, src: str, tgt: str):
        self.engine, self.cache, self.src, self.tgt = engine, cache, src, tgt
        self._params: dict | None = None
        self.requested = 0  # texts or pairs sent to the engine
        self.hits = 0

    @property
    def params(self) -> dict:
        if self._params is None:
            by_target = getattr(self.engine, "target_cache_params", None)  # MTEngine's; a duck-typed engine may lack it
            self._params = {**self.engine.cache_params(), **(by_target(self.tgt) if by_target else {})}
        return self._params

    def _key(self, **what: Any) -> dict:
        return {
            "engine": self.engine.name,
            "model": self.engine.model,
            **self.params,
            "src": self.src,
            "tgt": self.tgt,
            **what,
        }

    def _cached(self, keys: list[dict], items: Sequence[Any], batch: Callable[[list[Any]], list[Any]]) -> list[Any]:
        """``batch(items)`` through the cache (:func:`biaskit.cache.cached_results`): only the items not
        seen before reach the engine, in one call; an item the engine failed on (None) stays uncached,
        so a re-run asks again."""
        before = self.requested

        def run(todo: list[int]):
            self.requested += len(todo)
            yield todo, batch([items[i] for i in todo])

        out = cached_results(self.cache, keys, run)
        self.hits += len(items) - (self.requested - before)
        return out

    def translate(self, texts: Sequence[str]) -> list[str]:
        uniq = list(dict.fromkeys(normalize_text(t) for t in texts))

        def batch(todo: list[str]) -> list[dict]:
            outs = self.engine.translate(todo, self.src, self.tgt)
            if len(outs) != len(todo):
                raise RuntimeError(f"{self.engine!r} returned {len(outs)} translations for {len(todo)} texts")
            return [{"text": o} for o in outs]

        got = self._cached([self._key(text=t) for t in uniq], uniq, batch)
        by_text = {t: g["text"] for t, g in zip(uniq, got, strict=False)}
        return [by_text[normalize_text(t)] for t in texts]

    def translate_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[dict | None]:
        keys = [self._key(pair=[normalize_text(a), normalize_text(b)]) for a, b in pairs]
        return self._cached(keys, pairs, lambda todo: self.engine.translate_pair_batch(todo, self.src, self.tgt))

    def translate_cats(self, items: Sequence[dict]) -> list[dict | None]:
        """Whole CATs (engines with ``joint_cats``): each item ``{"split", "target", "context",
        "stereotype", "anti_stereotype", "unrelated"}`` -> the same fields translated, or None."""
        fields = ("split", "target", "context", "stereotype", "anti_stereotype", "unrelated")
        keys = [
            self._key(cat=[normalize_text(str(it[f])) for f in fields], **self.engine.cat_cache_params())
            for it in items
        ]
        return self._cached(keys, items, lambda todo: self.engine.translate_cat_batch(todo, self.src, self.tgt))


# ------------------------------------------------------------------------------------------ core
@dataclass
class TranslationRun:
    """What every translation run reports (pairs: :class:`TranslateResult`; CATs:
    :class:`biaskit.curation.cat_translate.CatTranslateResult`)."""

    out: Path
    n_resumed: int = 0
    n_candidates: int = 0
    engine_stats: dict[str, dict[str, int]] = field(default_factory=dict)
    flag_counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    n_failed: int = 0  # records with an engine_failed candidate after this run
    notes: list[str] = field(default_factory=list)

    def common(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "resumed": self.n_resumed,
            "candidates": self.n_candidates,
            "engines": self.engine_stats,
            "flags": self.flag_counts,
            "seconds": round(self.seconds, 2),
            "engine_failed": self.n_failed,
            "notes": self.notes,
        }


@dataclass
class TranslateResult(TranslationRun):
    n_pairs: int = 0
    n_retried: int = 0  # pairs an engine had failed on in an earlier run, asked again

    def summary(self) -> dict[str, Any]:
        return {**self.common(), "pairs": self.n_pairs, "retried": self.n_retried}


def copies_prompt_flag(fields: Sequence[str]) -> dict[str, Any]:
    """The flag of a candidate whose text copied the engine's prompt (:meth:`MTEngine.prompt_copies`): its
    text is left out, so reviewers never see the copy as a translation; they write one (choice none)."""
    return flag(
        "copies_prompt",
        f"the engine copied its prompt (a worked example or the source) instead of translating ({', '.join(fields)}); "
        "the copy is not shown: write the translation.",
        fields=list(fields),
    )


def _engine_failed(record: dict) -> bool:
    return any(f.get("code") == "engine_failed" for c in record.get("candidates", []) for f in c.get("flags", []))


def _span_substitution(
    en_more: str, en_less: str, hi_more: str, hi_less: str, span_tr: dict[str, str]
) -> tuple[str, str, str] | None:
    """Return ``(more, less, base)`` built by replacing the translated group span, or None."""
    spans = diff_spans(tokens(en_more), tokens(en_less))
    if len(spans) != 1 or not spans[0][0] or not spans[0][1]:
        return None
    a, b = " ".join(spans[0][0]), " ".join(spans[0][1])
    ta, tb = strip_edges(span_tr.get(a, ""), " ."), strip_edges(span_tr.get(b, ""), " .")
    if not ta or not tb or ta == tb:
        return None
    for base, (src_t, dst_t, text) in (("sent_more", (ta, tb, hi_more)), ("sent_less", (tb, ta, hi_less))):
        if text.count(src_t) == 1:
            other = text.replace(src_t, dst_t)
            new = (text, other) if base == "sent_more" else (other, text)
            if (
                normalize_text(new[0]) != normalize_text(new[1])
                and len(diff_spans(tokens(new[0]), tokens(new[1]))) == 1
            ):
                return new[0], new[1], base
    return None


def _n_changes(a: str, b: str, lang: str) -> int:
    """Changed spans between two sentences; with the curation checker, gender agreement
    (गई / गया next to the name) counts as part of the group change, as in its multi_span flag."""
    from biaskit.check import word_diff

    return word_diff(a, b, lang).n_changes


def _needs_alignment(en_more: str, en_less: str, hi_more: str, hi_less: str, src: str, tgt: str) -> bool:
    if not hi_more.strip() or not hi_less.strip():
        return False
    if normalize_text(en_more) == normalize_text(en_less) or _n_changes(en_more, en_less, src) != 1:
        return False
    return normalize_text(hi_more) == normalize_text(hi_less) or _n_changes(hi_more, hi_less, tgt) > 1


def _engine_label(e: MTEngine) -> str:
    return f"{e.name}:{e.model}"


def _candidates_for_batch(
    batch: list[SentencePair], engine: CachedEngine, target: str, align: bool, pair_checker, check_kw: dict
) -> list[dict]:
    """One engine's candidate for each pair of ``batch``, with its flags: both sentences in one request
    (an engine with ``joint_pairs``), else each sentence on its own (with span substitution when
    ``align``)."""
    if engine.engine.joint_pairs:
        cands = _joint_candidates(batch, engine, target)
    else:
        cands = _independent_candidates(batch, engine, target, align)
    _add_flags(batch, cands, target, pair_checker, check_kw)
    return [
        {k: c[k] for k in ("engine", "model", "sent_more", "sent_less", "flags", "strategy", "provenance")}
        for c in cands
    ]


def _joint_candidates(batch: list[SentencePair], engine: CachedEngine, target: str) -> list[dict]:
    """Each pair translated in one request (``joint-prompt``); no usable reply is an ``engine_failed``
    candidate, a reply that copies the prompt's examples an empty one flagged so."""
    e = engine.engine
    base_prov = e.provenance()
    cands: list[dict] = []
    outs = engine.translate_pairs([(p.sent_more, p.sent_less) for p in batch])
    for p, o in zip(batch, outs, strict=False):
        if o is None:
            cands.append(
                {
                    "engine": e.name,
                    "model": e.model,
                    "sent_more": "",
                    "sent_less": "",
                    "strategy": "joint-prompt",
                    "flags": [flag("engine_failed", "the engine gave no usable translation; a re-run retries it.")],
                    "provenance": base_prov,
                }
            )
            continue
        more, less = o.get("sent_more", ""), o.get("sent_less", "")
        prov = {**base_prov, **(o.get("provenance") or {})}
        copied = e.prompt_copies("pair", {"sent_more": p.sent_more, "sent_less": p.sent_less}, o, engine.src, target)
        cands.append(
            {
                "engine": e.name,
                "model": e.model,
                "sent_more": "" if copied else more,
                "sent_less": "" if copied else less,
                "strategy": "joint-prompt",
                "provenance": prov,
                **({"flags": [copies_prompt_flag(copied)]} if copied else {}),
            }
        )
    return cands


def _independent_candidates(batch: list[SentencePair], engine: CachedEngine, target: str, align: bool) -> list[dict]:
    """Each sentence translated on its own (``independent``); with ``align``, a pair whose translation is
    not minimal gets its differing source span translated and substituted (``span-substitution``)."""
    e = engine.engine
    base_prov = e.provenance()
    texts = [s for p in batch for s in (p.sent_more, p.sent_less)]
    texts_out = engine.translate(texts)
    pairs_out = [(texts_out[2 * i], texts_out[2 * i + 1]) for i in range(len(batch))]
    # second pass: the differing English spans of pairs whose translation is not minimal
    need = [
        i
        for i, (p, (m, le)) in enumerate(zip(batch, pairs_out, strict=False))
        if align and _needs_alignment(p.sent_more, p.sent_less, m, le, engine.src, target)
    ]
    span_tr = _span_translations([batch[i] for i in need], engine)
    cands: list[dict] = []
    for i, (p, (m, le)) in enumerate(zip(batch, pairs_out, strict=False)):
        cand: dict[str, Any] = {
            "engine": e.name,
            "model": e.model,
            "sent_more": m,
            "sent_less": le,
            "strategy": "independent",
            "provenance": dict(base_prov),
        }
        if i in need:
            sub = _span_substitution(p.sent_more, p.sent_less, m, le, span_tr)
            if sub is not None:
                cand["sent_more"], cand["sent_less"] = sub[0], sub[1]
                cand["strategy"] = f"span-substitution (base: {sub[2]})"
                cand["provenance"]["independent"] = {"sent_more": m, "sent_less": le}
        cands.append(cand)
    return cands


def _span_translations(pairs: list[SentencePair], engine: CachedEngine) -> dict[str, str]:
    """The translation of each pair's one differing span (both sides), each distinct span asked once."""
    spans: list[str] = []
    for p in pairs:
        d = diff_spans(tokens(p.sent_more), tokens(p.sent_less))
        if len(d) == 1 and d[0][0] and d[0][1]:
            spans += [" ".join(d[0][0]), " ".join(d[0][1])]
    spans = list(dict.fromkeys(spans))
    return dict(zip(spans, engine.translate(spans), strict=False)) if spans else {}


def _add_flags(batch: list[SentencePair], cands: list[dict], target: str, pair_checker, check_kw: dict) -> None:
    """Each candidate's flags: the pair checks (unless it is already flagged as failed or copied), and
    ``span_substituted`` when span substitution built it."""
    for p, c in zip(batch, cands, strict=False):
        fl = (
            []
            if c.get("flags")
            else check_candidate(p, c["sent_more"], c["sent_less"], target, pair_checker=pair_checker, **check_kw)
        )
        if c["strategy"].startswith("span-substitution"):
            fl.append(
                flag(
                    "span_substituted",
                    "S2 was built by replacing the translated group term in S1 (or the reverse) to keep "
                    "the pair minimal: check that verbs and adjectives agree with the new term.",
                    independent=c["provenance"]["independent"],
                )
            )
        c["flags"] = c.get("flags") or fl


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def resume_candidates(
    out: Path, wanted: Sequence[str], signature: str, id_key: str, *, resume: bool = True
) -> tuple[dict[str, dict], int, list[str]]:
    """The finished candidate records of an interrupted run of ``out`` (same ``run_signature``, an id
    in ``wanted``, no engine that failed): ``(done by id, records dropped to be asked again, notes)``.
    The file is cut back to what is reused; a file that holds other records is refused."""
    from biaskit.io import read_jsonl, repair_jsonl_tail, write_jsonl

    notes: list[str] = []
    tail = repair_jsonl_tail(out)
    if tail is not None:
        notes.append(tail.message())
    existing = read_jsonl(out) if out.exists() else []
    if any("candidates" not in r or id_key not in r for r in existing):
        raise InputError(
            "exists and is not a translation-candidates file; refusing to overwrite it.",
            path=out,
            fix=f"choose another {say('out')} (it receives the candidates and is resumed on re-runs).",
        )
    done: dict[str, dict] = {}
    n_failed_before = 0
    if resume:
        want = set(wanted)
        done = {
            r[id_key]: r
            for r in existing
            if r.get(id_key) in want and r.get("provenance", {}).get("run_signature") == signature
        }
        failed = [k for k, r in done.items() if _engine_failed(r)]
        for k in failed:  # an engine gave nothing for these last time: ask again
            del done[k]
        n_failed_before = len(failed)
    if out.exists() and len(done) != len(existing):
        # records of another run (other engines/languages) or to be redone: keep only what is reused
        write_jsonl(out, [done[i] for i in wanted if i in done])
    return done, n_failed_before, notes


def translate_pairs(
    pairs: Sequence[SentencePair],
    target: str,
    engines: Sequence[MTEngine],
    out: str | Path,
    *,
    source_lang: str | None = None,
    cache: DiskCache | None = None,
    batch_pairs: int = 16,
    align: bool = True,
    resume: bool = True,
    progress: bool = False,
    pair_checker: Callable[..., list] | None = None,
    check_kw: dict | None = None,
    source_file: str | None = None,
) -> TranslateResult:
    """Translate every pair with every engine; write candidate records to ``out`` (JSONL, appended as
    batches finish; an interrupted run resumes; rewritten in input order at the end)."""
    from biaskit.io import write_jsonl

    started = time.monotonic()
    out = Path(out)
    target = target.strip().lower()
    need_engines(engines)
    src, pairs = _one_language(pairs, source_lang, target, source_file)
    cache = cache if cache is not None else DiskCache(namespace="mt")
    labels = engine_labels(engines, ": reviewers' choices could not be told apart")
    signature = request_hash({"engines": labels, "src": src, "tgt": target})[:16]

    done, n_failed_before, notes = resume_candidates(
        out, [p.pair_id for p in pairs], signature, "pair_id", resume=resume
    )
    n_resumed = len(done)
    for e in engines:
        e.attach_output(out)
    cached_engines = [CachedEngine(e, cache, src, target) for e in engines]
    run = RunInfo(src, target, signature, labels, source_file)

    def records(batch: list[SentencePair]) -> list[dict]:
        per_engine = [
            _candidates_for_batch(batch, ce, target, align, pair_checker, check_kw or {}) for ce in cached_engines
        ]
        return [_pair_record(p, [cands[j] for cands in per_engine], run) for j, p in enumerate(batch)]

    todo = [p for p in pairs if p.pair_id not in done]
    write_in_batches(
        out, todo, batch_pairs, records, done, "pair_id", f"translating {src}->{target}", "pairs", progress
    )
    records_ = [done[p.pair_id] for p in pairs if p.pair_id in done]
    write_jsonl(out, records_)
    return TranslateResult(
        out=out,
        n_pairs=len(records_),
        n_resumed=n_resumed,
        **run_figures(records_, labels, cached_engines),
        seconds=time.monotonic() - started,
        n_retried=n_failed_before,
        notes=notes,
    )


def need_engines(engines: Sequence[MTEngine]) -> None:
    if not engines:
        raise InputError(
            "no translation engine given.",
            fix=f"use e.g. {say('engines', 'llm:MODEL')} (engines: googletrans, hf:PATH, llm:MODEL).",
        )


def engine_labels(engines: Sequence[MTEngine], why: str = "") -> list[str]:
    """``engine:model`` of each engine; the same one twice is refused (``why``: what that would spoil)."""
    labels = [_engine_label(e) for e in engines]
    if len(set(labels)) != len(labels):
        raise InputError(
            f"the same engine and model is listed twice ({labels}){why}.", fix="list each engine/model once."
        )
    return labels


def _one_language(
    pairs: Sequence[SentencePair], source_lang: str | None, target: str, source_file: str | None
) -> tuple[str, list[SentencePair]]:
    """The source language (``source_lang``, else the pairs' one language) and its pairs; the target
    must be another language."""
    pairs = list(pairs)
    langs = {p.lang for p in pairs}
    src = (source_lang or (langs.pop() if len(langs) == 1 else "")).lower()
    if not src:
        raise InputError(
            f"the pairs mix languages {sorted({p.lang for p in pairs})}.",
            path=source_file,
            fix=f"translate one language at a time: {tell('source_lang', 'en')}.",
        )
    pairs = [p for p in pairs if p.lang == src]
    if src == target:
        raise InputError(
            f"source and target language are both '{src}'.",
            fix=f"{tell('target', 'LANG')} with a language other than '{src}', or check {say('source_lang')}.",
        )
    return src, pairs


@dataclass(frozen=True)
class RunInfo:
    """What every candidate record of a translation run records: the languages, the run's signature
    (engines and languages: a resumed run must match it), the engines' labels and the source file."""

    src: str
    target: str
    signature: str
    labels: list[str]
    source_file: str | None


def _pair_record(p: SentencePair, candidates: list[dict], run: RunInfo) -> dict[str, Any]:
    """One pair's candidate record: its source sentences, each engine's candidate and the provenance."""
    from biaskit import __version__

    rec: dict[str, Any] = {
        "pair_id": p.pair_id,
        "source_lang": run.src,
        "target_lang": run.target,
        "bias_type": p.bias_type,
        "direction": p.direction,
        "source": {"sent_more": p.sent_more, "sent_less": p.sent_less},
        "candidates": candidates,
        "provenance": {
            "run_signature": run.signature,
            "source_id": p.source_id,
            "source_provenance": p.provenance,
            "source_file": run.source_file,
            "engines": run.labels,
            "created_at": _now(),
            "biaskit": __version__,
        },
    }
    if p.group_more or p.group_less:
        rec["source"].update({"group_more": p.group_more, "group_less": p.group_less})
    return rec


def write_in_batches(
    out: Path,
    items: Sequence[Any],
    size: int,
    make: Callable[[list], list[dict]],
    done: dict[str, dict],
    key: str,
    what: str,
    unit: str,
    progress: bool,
) -> None:
    """``make(batch)``'s records for each batch of ``size`` items, appended to ``out`` as each batch
    finishes (an interrupted run keeps them; a run that wrote nothing leaves no empty file) and added to
    ``done`` by their ``key``; a progress bar (``what``, counted in ``unit``) when ``progress``."""
    from biaskit.io import JsonlAppender, no_empty_output
    from biaskit.progress import progress as progress_bar

    with (
        no_empty_output(out),
        progress_bar(len(items), what, enabled=progress, unit=unit) as bar,
        JsonlAppender(out) as log,
    ):
        for b in range(0, len(items), max(1, size)):
            batch = list(items[b : b + size])
            recs = make(batch)
            for rec in recs:
                done[rec[key]] = rec
            log.write_many(recs)
            bar.advance(len(batch))


def run_figures(records: Sequence[dict], labels: Sequence[str], engines: Sequence[CachedEngine]) -> dict[str, Any]:
    """What a translation run reports about its candidate records: candidates, flag counts, records
    with a failed engine, and per engine what was sent and what came from the cache."""
    counts: dict[str, int] = {}
    for r in records:
        for c in r["candidates"]:
            for f in c["flags"]:
                counts[f["code"]] = counts.get(f["code"], 0) + 1
    return {
        "n_candidates": sum(len(r["candidates"]) for r in records),
        "flag_counts": dict(sorted(counts.items())),
        "n_failed": sum(map(_engine_failed, records)),
        "engine_stats": {
            lab: {"requested": ce.requested, "cache_hits": ce.hits} for lab, ce in zip(labels, engines, strict=False)
        },
    }


def translate_file(
    o: TranslateOptions,
    /,
    *,
    engine_options: dict[str, Any] | None = None,
    cache: DiskCache | None = None,
    resume: bool | None = None,
    progress: bool = False,
    pair_checker: Callable[..., list] | None = None,
    check_kw: dict | None = None,
) -> TranslateResult:
    """``biaskit curate translate``: read pairs (CrowS / IndiBias / biaskit), build engines from specs,
    and :func:`translate_pairs`. ``o``: the command's :class:`~biaskit.curation.options.TranslateOptions`;
    ``engine_options``: the bag every engine is built from (default: ``o.engine_options()``); ``resume``:
    default ``not o.restart``; ``cache``,
    ``progress``, ``pair_checker``, ``check_kw``: as :func:`translate_pairs`."""
    from biaskit.readers import read_pairs

    if engine_options is None:
        engine_options = o.engine_options()
    pairs_path, source_lang = o.pairs, o.source_lang
    specs = parse_engine_list(o.engines)
    # lang: the IndiBias reader yields only that language view; other formats only use it as a default
    res = read_pairs(pairs_path, format=o.format, lang=source_lang, limit=o.limit)
    pairs = [p for p in res.pairs if p.lang == source_lang]
    if not pairs:
        raise InputError(
            f"no '{source_lang}' pairs in the file.",
            path=pairs_path,
            fix=f"check {say('source_lang')} and that the file has pairs in that language.",
        )
    built = [create_engine(s, **(engine_options or {})) for s in specs]
    try:
        return translate_pairs(
            pairs,
            o.target,
            built,
            o.out,
            source_lang=source_lang,
            source_file=str(pairs_path),
            cache=cache,
            batch_pairs=o.batch_pairs,
            align=o.align,
            resume=not o.restart if resume is None else resume,
            progress=progress,
            pair_checker=pair_checker,
            check_kw=check_kw,
        )
    finally:
        for e in built:
            e.close()
