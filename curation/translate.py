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
from typing import Any

from biaskit.cache import DiskCache, cached_results, request_hash
from biaskit.errors import InputError
from biaskit.mt_checks import check_candidate, diff_spans, flag, tokens
from biaskit.options import say, tell
from biaskit.schema import SentencePair, normalize_text
from biaskit.textutil import strip_edges

from .mt_base import MT_ENGINES, EngineSpec, MTEngine, create_engine, parse_engine_list  # noqa: F401 (re-exported: callers import them from here)

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
    e = engine.engine
    base_prov = e.provenance()
    cands: list[dict] = []
    if e.joint_pairs:
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
            copied = e.prompt_copies(
                "pair", {"sent_more": p.sent_more, "sent_less": p.sent_less}, o, engine.src, target
            )
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
    else:
        texts = [s for p in batch for s in (p.sent_more, p.sent_less)]
        texts_out = engine.translate(texts)
        pairs_out = [(texts_out[2 * i], texts_out[2 * i + 1]) for i in range(len(batch))]
        # second pass: the differing English spans of pairs whose translation is not minimal
        need = [
            i
            for i, (p, (m, le)) in enumerate(zip(batch, pairs_out, strict=False))
            if align and _needs_alignment(p.sent_more, p.sent_less, m, le, engine.src, target)
        ]
        span_tr: dict[str, str] = {}
        if need:
            spans = []
            for i in need:
                d = diff_spans(tokens(batch[i].sent_more), tokens(batch[i].sent_less))
                if len(d) == 1 and d[0][0] and d[0][1]:
                    spans += [" ".join(d[0][0]), " ".join(d[0][1])]
            spans = list(dict.fromkeys(spans))
            if spans:
                span_tr = dict(zip(spans, engine.translate(spans), strict=False))
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
    return [
        {k: c[k] for k in ("engine", "model", "sent_more", "sent_less", "flags", "strategy", "provenance")}
        for c in cands
    ]


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
    """Translate every pair with every engine; write candidate records to ``out`` (JSONL)."""
    from biaskit import __version__
    from biaskit.io import JsonlAppender, no_empty_output, write_jsonl

    started = time.monotonic()
    out = Path(out)
    target = target.strip().lower()
    if not engines:
        raise InputError(
            "no translation engine given.",
            fix=f"use e.g. {say('engines', 'llm:MODEL')} (engines: googletrans, hf:PATH, llm:MODEL).",
        )
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
    cache = cache if cache is not None else DiskCache(namespace="mt")
    labels = [_engine_label(e) for e in engines]
    if len(set(labels)) != len(labels):
        raise InputError(
            f"the same engine and model is listed twice ({labels}): reviewers' choices could not be told apart.",
            fix="list each engine/model once.",
        )
    signature = request_hash({"engines": labels, "src": src, "tgt": target})[:16]

    done, n_failed_before, notes = resume_candidates(
        out, [p.pair_id for p in pairs], signature, "pair_id", resume=resume
    )
    n_resumed = len(done)
    for e in engines:
        e.attach_output(out)
    cached_engines = [CachedEngine(e, cache, src, target) for e in engines]
    todo = [p for p in pairs if p.pair_id not in done]
    check_kw = check_kw or {}

    from biaskit.progress import progress as progress_bar

    with (
        no_empty_output(out),
        progress_bar(len(todo), f"translating {src}->{target}", enabled=progress, unit="pairs") as bar,
        JsonlAppender(out) as log,
    ):
        for b in range(0, len(todo), max(1, batch_pairs)):
            batch = todo[b : b + batch_pairs]
            per_engine = [
                _candidates_for_batch(batch, ce, target, align, pair_checker, check_kw) for ce in cached_engines
            ]
            recs = []
            for j, p in enumerate(batch):
                rec: dict[str, Any] = {
                    "pair_id": p.pair_id,
                    "source_lang": src,
                    "target_lang": target,
                    "bias_type": p.bias_type,
                    "direction": p.direction,
                    "source": {"sent_more": p.sent_more, "sent_less": p.sent_less},
                    "candidates": [cands[j] for cands in per_engine],
                    "provenance": {
                        "run_signature": signature,
                        "source_id": p.source_id,
                        "source_provenance": p.provenance,
                        "source_file": source_file,
                        "engines": labels,
                        "created_at": _now(),
                        "biaskit": __version__,
                    },
                }
                if p.group_more or p.group_less:
                    rec["source"].update({"group_more": p.group_more, "group_less": p.group_less})
                recs.append(rec)
                done[p.pair_id] = rec
            log.write_many(recs)
            bar.advance(len(batch))
    records = [done[p.pair_id] for p in pairs if p.pair_id in done]
    write_jsonl(out, records)
    return TranslateResult(
        out=out,
        n_pairs=len(records),
        n_resumed=n_resumed,
        **run_figures(records, labels, cached_engines),
        seconds=time.monotonic() - started,
        n_retried=n_failed_before,
        notes=notes,
    )


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
    opts: Any = None,
    target: str | None = None,
    engines: str | Sequence[str] | None = None,
    out: str | Path | None = None,
    /,
    *,
    engine_options: dict[str, Any] | None = None,
    cache: DiskCache | None = None,
    resume: bool | None = None,
    progress: bool = False,
    pair_checker: Callable[..., list] | None = None,
    check_kw: dict | None = None,
    **options: Any,
) -> TranslateResult:
    """``biaskit curate translate``: read pairs (CrowS / IndiBias / biaskit), build engines from specs,
    and :func:`translate_pairs`. ``opts``: the command's :class:`~biaskit.curation.options.TranslateOptions`
    (or, the keyword form, the pairs file with ``target``, ``engines``, ``out`` and its other fields as
    keywords); ``engine_options``: the bag every engine is built from (default: the object's
    ``engine_options()``; in the keyword form, none); ``resume``: default ``not opts.restart``; ``cache``,
    ``progress``, ``pair_checker``, ``check_kw``: as :func:`translate_pairs`."""
    from biaskit.readers import read_pairs

    from .options import TranslateOptions

    positional = {"target": target, "engines": engines, "out": out, "pairs": options.pop("pairs_path", None)}
    options.update({k: v for k, v in positional.items() if v is not None})
    o = TranslateOptions.coerce(opts, options, "pairs")
    if engine_options is None and isinstance(opts, TranslateOptions):
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
