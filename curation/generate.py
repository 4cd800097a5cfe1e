"""LLM-assisted generation of bias tuples and sentences (IndiBias steps 1 and 3), resumable.

Every request is a *job*; its key is the LLM request hash (model, endpoint, messages, params,
schema). Finished jobs append their rows to the output JSONL at once (fsync'ed), failed ones to
``<out>.errors.jsonl`` with the raw response; a re-run skips jobs whose rows are already in the
output, and answers the rest from the response cache, so an interrupted run resumes where it stopped
and a finished run costs zero requests. Each run appends a line to ``<out>.runlog.jsonl`` with
requests, cache hits, tokens and estimated cost.
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
import re
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from biaskit.errors import InputError
from biaskit.io import JsonlAppender, iter_jsonl, read_jsonl, write_jsonl
from biaskit.schema import BiasTuple, normalize_bias_type, stable_id

from biaskit.inventory import Inventory, load_inventory
from .prompts import Prompt
from biaskit.textutil import norm_word, tokenize

POLARITIES = ("positive", "negative")


# ------------------------------------------------------------------------------ attribute normalisation
def normalize_attribute(text: str) -> Optional[str]:
    """Clean one generated attribute: numbering, bullets, quotes, trailing punctuation,
    explanations after a dash/colon/parenthesis; lower case (acronyms kept). None if nothing is left."""
    s = unicodedata.normalize("NFKC", str(text)).strip()
    s = re.sub(r"^\s*(?:\d+[.)]|[-*•·]|[a-z][.)])\s+", "", s)
    s = re.split(r"\s+[-–—:]\s+|\s*\(|:\s", s)[0]
    s = s.strip(" \t\"'`“”‘’.,;:!?")
    s = re.sub(r"\s+", " ", s)
    if not s or not re.search(r"\w", s) or re.fullmatch(r"(?i)(word|attribute|adjective|item)\s*\d*|\.\.\.", s):
        return None  # empty, or the format example echoed back
    if not (s.isupper() and len(s) <= 5):
        s = s.lower()
    return s


def lemma_key(attr: str) -> str:
    """A rule-based lemma for near-duplicate detection: plural and -ness/-ity nouns folded,
    hyphens/spaces removed (``Hard-working`` = ``hardworking``, ``thieves`` = ``thief``,
    ``laziness`` = ``lazy``)."""
    w = re.sub(r"[\s\-_'’]+", "", attr.lower())
    for suf, rep in (("ieves", "ief"), ("ives", "ife"), ("ies", "y"), ("sses", "ss"), ("shes", "sh"),
                     ("ches", "ch"), ("xes", "x")):
        if w.endswith(suf) and len(w) > len(suf):
            w = w[: -len(suf)] + rep
            break
    else:
        if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
            w = w[:-1]
    if w not in _NESS_WORDS:
        for suf, rep in (("iness", "y"), ("ness", "")):
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                return w[: -len(suf)] + rep
    return w


_NESS_WORDS = {"business", "witness", "harness", "wilderness", "fitness"}


def dedupe_attributes(attrs: Iterable[str], *, existing: Iterable[str] = (), ratio: float = 0.92,
                      identity: Optional[str] = None) -> tuple[list[str], list[tuple[str, str]]]:
    """Normalised, de-duplicated attributes (case, punctuation, lemma, and difflib ratio >= ``ratio``
    on the lemma keys), plus ``(dropped, kept_as)`` for every dropped duplicate."""
    kept: list[str] = []
    keys: list[str] = [lemma_key(e) for e in existing]
    dropped: list[tuple[str, str]] = []
    ident_key = lemma_key(identity) if identity else None
    for a in attrs:
        n = normalize_attribute(a) if isinstance(a, str) else None
        if not n:
            continue
        k = lemma_key(n)
        if ident_key and k == ident_key:
            dropped.append((n, "<identity term>"))
            continue
        dup = next((kk for kk in keys if kk == k or SequenceMatcher(None, kk, k).ratio() >= ratio), None)
        if dup is not None:
            dropped.append((n, dup))
            continue
        keys.append(k)
        kept.append(n)
    return kept, dropped


# ------------------------------------------------------------------------------ job runner
@dataclass
class Job:
    messages: list[dict[str, str]]
    context: dict[str, Any]
    key: str = ""


@dataclass
class RunSummary:
    jobs: int = 0
    skipped_done: int = 0
    run: int = 0
    rows: int = 0
    errors: int = 0
    interrupted: bool = False
    stats: dict[str, Any] = field(default_factory=dict)
    out: Optional[str] = None

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("jobs", "skipped_done", "run", "rows", "errors", "interrupted", "out")} | {
            "llm": self.stats}


def _side_path(out: Path, suffix: str) -> Path:
    return out.with_name(out.name.removesuffix(".jsonl") + suffix)


def errors_path(out: str | Path) -> Path:
    return _side_path(Path(out), ".errors.jsonl")


def runlog_path(out: str | Path) -> Path:
    return _side_path(Path(out), ".runlog.jsonl")


def run_jobs(llm: Any, jobs: list[Job], *, prompt: Prompt, params: dict[str, Any], out: str | Path,
             make_rows: Callable[[Job, Any], list[dict]], concurrency: int = 1, retry_failed: bool = False,
             progress: bool = True, command: str = "", finalize: Optional[Callable[[list[dict]], list[dict]]] = None
             ) -> RunSummary:
    """Run ``jobs`` against ``llm`` with resume, cache, concurrency and a run log."""
    out = Path(out)
    if out.suffix.lower() not in (".jsonl", ".ndjson"):
        raise InputError("output must be a .jsonl file.", path=out, fix="use e.g. --out tuples.jsonl.")
    started = time.time()
    for j in jobs:
        j.key = llm.job_hash(j.messages, prompt.schema, **params)
    summary = RunSummary(jobs=len(jobs), out=str(out))
    done: set[str] = set()
    if out.exists():
        for _, row in iter_jsonl(out, tolerate_truncated_tail=True):
            k = (row.get("provenance") or {}).get("job")
            if k:
                done.add(k)
    todo = [j for j in jobs if j.key not in done]
    summary.skipped_done = len(jobs) - len(todo)
    err_path = errors_path(out)
    if concurrency < 1:
        raise InputError(f"--concurrency must be >= 1, got {concurrency}.", fix="pass --concurrency 1..64.")

    def work(job: Job):
        return job, llm.complete_json(job.messages, prompt.schema, refresh=retry_failed and job.key in failed, **params)

    failed: set[str] = set()
    if retry_failed and err_path.exists():
        failed = {r.get("job") for r in read_jsonl(err_path, tolerate_truncated_tail=True)}
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    disable=not progress or not sys.stderr.isatty(), transient=True)
    with JsonlAppender(out) as sink, JsonlAppender(err_path) as errs, prog:
        from rich.markup import escape

        task = prog.add_task(escape(command or "generating"), total=len(todo))
        pool = cf.ThreadPoolExecutor(max_workers=concurrency)
        try:
            futures = [pool.submit(work, j) for j in todo]
            for fut in cf.as_completed(futures):
                job, res = fut.result()
                summary.run += 1
                rows: list[dict] = []
                if res.ok:
                    rows = make_rows(job, res)
                if res.ok and rows:
                    for r in rows:
                        r.setdefault("provenance", {})["job"] = job.key
                        sink.write(r)
                    summary.rows += len(rows)
                else:
                    summary.errors += 1
                    status = (res.error or "parse_error: no usable rows").split(":")[0]
                    errs.write({"job": job.key, "status": status, "error": res.error or "no usable rows in the reply",
                                "raw": res.raw, "context": job.context, "history": res.history,
                                "provenance": {**res.provenance(), **prompt.provenance()}})
                prog.advance(task)
        except KeyboardInterrupt:
            summary.interrupted = True
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=not summary.interrupted, cancel_futures=summary.interrupted)
            summary.stats = llm.stats.snapshot()
            _compact_errors(err_path, out)
            _append_runlog(out, command, llm, prompt, params, summary, started)
    if finalize is not None and out.exists():
        rows = read_jsonl(out, tolerate_truncated_tail=True)
        write_jsonl(out, finalize(rows))
    return summary


def _compact_errors(err_path: Path, out: Path) -> None:
    """Keep one error line per job (the latest) and drop jobs that have since succeeded."""
    if not err_path.exists():
        return
    done = {(r.get("provenance") or {}).get("job") for r in read_jsonl(out, tolerate_truncated_tail=True)} if out.exists() else set()
    latest: dict[str, dict] = {}
    for r in read_jsonl(err_path, tolerate_truncated_tail=True):
        latest[r.get("job")] = r
    rows = [r for k, r in latest.items() if k not in done]
    if rows:
        write_jsonl(err_path, rows)
    else:
        err_path.unlink()


def _append_runlog(out: Path, command: str, llm: Any, prompt: Prompt, params: dict, summary: RunSummary,
                   started: float) -> None:
    rec = {"command": command, "started": _dt.datetime.fromtimestamp(started, _dt.timezone.utc).isoformat(timespec="seconds"),
           "seconds": round(time.time() - started, 3), **llm.describe(), **prompt.provenance(), "params": params,
           **summary.as_dict()}
    with JsonlAppender(runlog_path(out)) as log:
        log.write(rec)


# ------------------------------------------------------------------------------ tuples
def tuple_jobs(prompt: Prompt, *, axis: str, identities: Sequence[str], polarity: str = "both", n: int = 10
               ) -> list[Job]:
    pols = POLARITIES if polarity == "both" else (polarity,)
    for p in pols:
        if p not in POLARITIES:
            raise InputError(f"unknown polarity '{p}'.", fix="use positive, negative or both.")
    if n < 1:
        raise InputError(f"--n must be >= 1, got {n}.", fix="ask for e.g. --n 10 attributes per identity and polarity.")
    ax = normalize_bias_type(axis)
    jobs = []
    for ident in identities:
        for p in pols:
            jobs.append(Job(prompt.render(identity=ident, axis=ax, polarity=p, n=n),
                            {"identity": ident, "axis": ax, "polarity": p, "n": n}))
    return jobs


def generate_tuples(llm: Any, prompt: Prompt, *, axis: str, out: str | Path, identities: Optional[Sequence[str]] = None,
                    polarity: str = "both", n: int = 10, lang: str = "en", params: Optional[dict] = None,
                    concurrency: int = 1, retry_failed: bool = False, inventory: Optional[Inventory] = None,
                    progress: bool = True) -> RunSummary:
    """``biaskit curate tuples``: attributes per identity x polarity -> BiasTuple rows."""
    inv = inventory or load_inventory()
    idents = list(identities) if identities else inv.identities(axis, lang)
    jobs = tuple_jobs(prompt, axis=axis, identities=idents, polarity=polarity, n=n)
    params = dict(params or {})

    def make_rows(job: Job, res: Any) -> list[dict]:
        items = (res.data or {}).get("attributes") or []
        kept, dropped = dedupe_attributes(items, identity=job.context["identity"])
        prov = {**res.provenance(), **prompt.provenance()}
        rows = []
        for a in kept[: job.context["n"] * 2]:
            t = BiasTuple(identity=job.context["identity"], attribute=a, axis=job.context["axis"],
                          polarity=job.context["polarity"], lang=lang, provenance=dict(prov),
                          meta={"duplicates_dropped": [d for d, k in dropped if lemma_key(d) == lemma_key(a)
                                                       or k == lemma_key(a)]} if dropped else {})
            rows.append(t.model_dump(mode="json"))
        return rows

    return run_jobs(llm, jobs, prompt=prompt, params=params, out=out, make_rows=make_rows, concurrency=concurrency,
                    retry_failed=retry_failed, progress=progress, command="curate tuples", finalize=finalize_tuples)


def finalize_tuples(rows: list[dict]) -> list[dict]:
    """Across the whole file: drop near-duplicates within (identity, polarity) that separate runs
    produced, and mark attributes listed under both polarities (``meta.conflict``)."""
    out: list[dict] = []
    keys: dict[tuple[str, str, str], list[str]] = {}
    pol_of: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        ident, pol = str(r.get("identity", "")).lower(), str(r.get("polarity", ""))
        kk = keys.setdefault((r.get("axis", ""), ident, pol), [])
        k = lemma_key(str(r.get("attribute", "")))
        if any(k == x or SequenceMatcher(None, x, k).ratio() >= 0.92 for x in kk):
            continue
        kk.append(k)
        pol_of.setdefault((ident, k), set()).add(pol)
        out.append(r)
    for r in out:
        pols = pol_of.get((str(r.get("identity", "")).lower(), lemma_key(str(r.get("attribute", "")))), set())
        meta = dict(r.get("meta") or {})
        if len(pols) > 1:
            meta["conflict"] = "listed as both positive and negative"
        else:
            meta.pop("conflict", None)
        r["meta"] = meta
    return out


# ------------------------------------------------------------------------------ sentences
def read_tuples(path: str | Path, *, statuses: Optional[Sequence[str]] = None) -> list[BiasTuple]:
    from pydantic import ValidationError

    out = []
    for i, rec in iter_jsonl(path, tolerate_truncated_tail=True):
        try:
            t = BiasTuple.model_validate({k: v for k, v in rec.items() if k in BiasTuple.model_fields})
        except ValidationError as exc:
            e = exc.errors()[0]
            loc = ".".join(str(x) for x in e.get("loc", ())) or None
            raise InputError(f"{e.get('msg', 'invalid')}.", path=path, row=i, column=loc,
                             fix="pass the output of `biaskit curate tuples` (identity, attribute, axis, polarity).") from None
        if statuses and t.status not in statuses:
            continue
        if not statuses and t.status == "rejected":
            continue
        out.append(t)
    if not out:
        raise InputError("no usable tuples in the file" + (f" with status {', '.join(statuses)}" if statuses else "") + ".",
                         path=path, fix="check --status, or run `biaskit curate tuples` first.")
    return out


def mentions_identity(sentence: str, identity: str, lang: str, inv: Inventory) -> bool:
    term = inv.lookup(identity, lang) or inv.lookup(identity, "en")
    if term is not None:
        for m in inv.find(tokenize(sentence), lang):
            if m.term.id == term.id or term.id in m.term.components.values():
                return True
    return norm_word(identity) in norm_word(sentence)


def generate_sentences(llm: Any, prompt: Prompt, *, tuples: str | Path, out: str | Path, per_tuple: int = 5,
                       statuses: Optional[Sequence[str]] = None, params: Optional[dict] = None, concurrency: int = 1,
                       retry_failed: bool = False, inventory: Optional[Inventory] = None,
                       progress: bool = True) -> RunSummary:
    """``biaskit curate sentences``: ``per_tuple`` sentences expressing each tuple."""
    inv = inventory or load_inventory()
    if per_tuple < 1:
        raise InputError(f"--per-tuple must be >= 1, got {per_tuple}.", fix="e.g. --per-tuple 5.")
    tlist = read_tuples(tuples, statuses=statuses)
    jobs = [Job(prompt.render(identity=t.identity, attribute=t.attribute, axis=t.axis, k=per_tuple),
                {"tuple": t.model_dump(mode="json")}) for t in tlist]
    params = dict(params or {})

    def make_rows(job: Job, res: Any) -> list[dict]:
        t = job.context["tuple"]
        prov = {**res.provenance(), **prompt.provenance()}
        rows, seen = [], set()
        for s in (res.data or {}).get("sentences") or []:
            if not isinstance(s, str):
                continue
            s = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s+", "", unicodedata.normalize("NFC", s)).strip().strip('"“”')
            key = re.sub(r"[^\w\s]", "", s.casefold()).strip()
            if not s or key in seen or len(key.split()) < 3:
                continue  # empty, repeated, or not a sentence (fewer than 3 words)
            seen.add(key)
            ok = mentions_identity(s, t["identity"], t.get("lang", "en"), inv)
            rows.append({"sentence_id": stable_id("s", t["tuple_id"], s), "sentence": s, "tuple_id": t["tuple_id"],
                         "identity": t["identity"], "attribute": t["attribute"], "axis": t["axis"],
                         "polarity": t["polarity"], "lang": t.get("lang", "en"),
                         "status": "raw" if ok else "rejected",
                         "meta": {} if ok else {"reason": f"the sentence does not mention '{t['identity']}'"},
                         "provenance": dict(prov)})
        return rows[: per_tuple * 2]

    return run_jobs(llm, jobs, prompt=prompt, params=params, out=out, make_rows=make_rows, concurrency=concurrency,
                    retry_failed=retry_failed, progress=progress, command="curate sentences")
