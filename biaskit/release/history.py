"""What the pipeline recorded before the release: stage report files and the records' provenance.

Each stage of biaskit writes its own report; the release reads them *as data* (no stage is
imported) and summarises them for the card and ``release.json``. A history file's kind is told from
its content:

==================  ==========================================  ===================================
kind                written by                                  recognised by
==================  ==========================================  ===================================
``runlog``          ``curate tuples|sentences`` (``X.runlog.jsonl``)  lines with command, jobs, rows
``check``           ``curate check --out``                      lines with sent_more and flags
``agreement``       ``annotate agreement`` (``agreement.json``)  krippendorff_alpha, per_annotator
``apply``           ``annotate apply`` (``X.summary.json``)      records, accepted, not_annotated
``apply_dropped``   ``annotate apply`` (``X.rejected.jsonl``)    lines with id, status, reason
``translation``     ``annotate apply --kind translation --report-dir`` (``report.json``)  engines, edit_rate
``translation_dropped``  translation review ``X.rejected|needs_review.jsonl``  lines with candidates, review
``adapt``           ``curate adapt`` (``X.report.json``)         read, kept, by_type
``cat_retention``   ``curate cats`` / ``cats-retention`` (``X.retention.json``)  rows, totals, overall, problems
``records``         any earlier records file (generated pairs, tuples, sentences)  other JSONL records
==================  ==========================================  ===================================

A file may be named ``LABEL=PATH`` to give its stage a name (``--history hi-review=review/report.json``).
Annotator names never leave this module: only counts, and per-annotator figures under pseudonyms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..options import say

AGREEMENT_STAGES = {
    "validity": "pair validation",
    "stereotype": "tuple validation",
    "polarity": "tuple validation",
    "choice": "translation review",
    "option_stereotype": "CAT validation",
}
SIBLING_SUFFIXES = (
    ".rejected.jsonl",
    ".needs_review.jsonl",
    ".summary.json",
    ".runlog.jsonl",
    ".report.json",
    ".errors.jsonl",
)


@dataclass
class HistoryFile:
    path: str
    kind: str
    label: str
    data: Any = None
    sha256: str = ""

    @property
    def name(self) -> str:
        """The file's name (a release records names and checksums, not the curator's folders)."""
        return Path(self.path).name

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.name, "kind": self.kind, "label": self.label, "sha256": self.sha256}


def _read_jsonl(path: Path) -> list[dict]:
    from ..io import read_jsonl

    return read_jsonl(path, tolerate_truncated_tail=True)


def classify(path: Path) -> tuple[str, Any]:
    """``(kind, parsed content)`` of one history file, or raise :class:`InputError`."""
    from ..io import read_json

    suffix = path.suffix.lower()
    if suffix == ".json":
        obj = read_json(path)
        if isinstance(obj, dict):
            kind = _json_kind(obj)
            if kind is not None:
                why = _shape_problem(kind, obj)
                if why:
                    raise InputError(
                        f"not {_SHAPES[kind][0]} as biaskit writes it: {why}.",
                        path=path,
                        fix="pass the file the stage wrote, or leave this one out.",
                    )
                return kind, obj
        raise InputError(
            "not a biaskit stage report (agreement.json, an apply summary, a translation review "
            "report.json, an adapt report or a CAT retention report).",
            path=path,
            fix="pass the files the stages wrote, or leave this one out.",
        )
    if suffix in (".jsonl", ".ndjson"):
        if path.name.endswith(".errors.jsonl"):
            return "errors", _read_jsonl(path)
        rows = _read_jsonl(path)
        first = rows[0] if rows else {}
        kind = None
        if {"command", "jobs", "rows"} <= set(first):
            kind = "runlog"
        elif "flags" in first and "sent_more" in first:
            kind = "check"
        if kind is not None:
            for i, r in enumerate(rows, start=1):
                why = _row_problem(kind, r)
                if why:
                    raise InputError(
                        f"not {'a run log' if kind == 'runlog' else 'checker output'} as biaskit writes it: {why}.",
                        path=path,
                        row=i,
                        fix="pass the file the stage wrote, or leave this one out.",
                    )
            return kind, rows
        if {"id", "status", "reason"} <= set(first) and "sent_more" not in first:
            return "apply_dropped", rows
        if "candidates" in first and "review" in first:
            return "translation_dropped", rows
        return "records", rows
    raise InputError(
        f"unsupported history file type '{suffix}'.",
        path=path,
        fix="pass .json reports or .jsonl logs written by biaskit's stages.",
    )


def _json_kind(obj: dict) -> str | None:
    """The kind of a JSON stage report, told from its keys."""
    if "krippendorff_alpha" in obj and "per_annotator" in obj:
        return "agreement"
    if {"records", "accepted"} <= set(obj) and ("not_annotated" in obj or "rejected" in obj):
        return "apply"
    if "engines" in obj and "edit_rate" in obj:
        return "translation"
    if {"read", "kept", "by_type"} <= set(obj):
        return "adapt"
    if {"rows", "totals", "overall", "problems"} <= set(obj):
        return "cat_retention"
    return None


#: kind -> (what it is, keys holding an object of objects, keys holding an object, keys holding a list of
#: objects, keys holding a list of strings): the parts the card reads, each of the type its stage writes
_SHAPES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "agreement": ("an agreement report", ("per_question",), (), ("per_annotator",), ("questions",)),
    "apply": ("an apply summary", (), (), (), ()),
    "translation": ("a translation review report", ("engines",), ("pairs", "returned_reasons"), (), ()),
    "adapt": ("an adapt report", (), (), (), ()),
    "cat_retention": ("a CAT retention report", (), ("overall", "problems"), ("rows", "totals", "by_target"), ()),
}


def _shape_problem(kind: str, obj: dict) -> str | None:
    """Which part of a stage report has another type than its stage writes (the card would misread it)."""
    _, nested, objects, object_lists, string_lists = _SHAPES[kind]

    def name(v: Any) -> str:
        return type(v).__name__

    for k in (*nested, *objects):
        v = obj.get(k)
        if v is not None and not isinstance(v, dict):
            return f"'{k}' is {name(v)}, not an object"
    for k in nested:
        for sub, v in (obj.get(k) or {}).items():
            if not isinstance(v, dict):
                return f"'{k}.{sub}' is {name(v)}, not an object"
    for k, want in [(k, dict) for k in object_lists] + [(k, str) for k in string_lists]:
        v = obj.get(k)
        if v is None:
            continue
        if not isinstance(v, list):
            return f"'{k}' is {name(v)}, not a list"
        bad = next((x for x in v if not isinstance(x, want)), None)
        if bad is not None:
            return f"an item of '{k}' is {name(bad)}, not {'an object' if want is dict else 'a string'}"
    if kind == "agreement":
        bad = next((r["n_items"] for r in obj.get("per_annotator") or () if not _count(r.get("n_items"))), None)
        if bad is not None:
            return f"an annotator's 'n_items' is {bad!r}, not a count"
    return None


def _count(v: Any) -> bool:
    """Is ``v`` a count as the summaries read it (``int(v or 0)``): a number, digits, or nothing?"""
    if v is None or isinstance(v, (int, float)):
        return True
    return isinstance(v, str) and (not v.strip() or v.strip().isdigit())


def _row_problem(kind: str, r: dict) -> str | None:
    """Which field of a run log line or a checker output line has another type than its stage writes."""
    if kind == "runlog":
        for k in ("rows", "jobs", "errors"):
            if not _count(r.get(k)):
                return f"'{k}' is {r[k]!r}, not a count"
        llm = r.get("llm")
        if llm is not None and not isinstance(llm, dict):
            return f"'llm' is {type(llm).__name__}, not an object"
        if llm and not _count(llm.get("requests")):
            return f"'llm.requests' is {llm['requests']!r}, not a count"
        return None
    flags = r.get("flags")
    if flags is not None and not isinstance(flags, list):
        return f"'flags' is {type(flags).__name__}, not a list"
    for x in flags or ():
        if isinstance(x, dict) and x.get("code") is not None and not isinstance(x["code"], str):
            return f"a flag's 'code' is {type(x['code']).__name__}, not a string"
    return None


def discover(records: Iterable[str | Path]) -> list[Path]:
    """Stage files next to each records file: ``STEM.rejected.jsonl``, ``STEM.summary.json``, ..."""
    out: list[Path] = []
    for r in records:
        r = Path(r)
        stem = r.name.rsplit(".", 1)[0]
        for suf in SIBLING_SUFFIXES:
            p = r.with_name(stem + suf)
            if p.exists() and p not in out:
                out.append(p)
    return out


def load_history(
    specs: Sequence[str | Path], *, records: Sequence[str | Path] = (), auto: bool = True
) -> list[HistoryFile]:
    from ..io import sha256_file

    items: list[tuple[str | None, Path]] = []
    for s in specs:
        s = str(s)
        name, eq, rest = s.partition("=")
        if eq and not Path(s).exists() and "/" not in name:
            items.append((name, Path(rest)))
        else:
            items.append((None, Path(s)))
    if auto:
        given = {p.resolve() for _, p in items}
        items += [(None, p) for p in discover(records) if p.resolve() not in given]
    out = []
    for label, p in items:
        if not p.exists():
            raise InputError("history file not found.", path=p, fix=f"check the {say('history')} path.")
        kind, data = classify(p)
        out.append(
            HistoryFile(
                path=str(p), kind=kind, label=label or _default_label(kind, p, data), data=data, sha256=sha256_file(p)
            )
        )
    return out


def _default_label(kind: str, p: Path, data: Any) -> str:
    if kind == "agreement":
        qs = data.get("questions") or []
        for q in qs:
            if q in AGREEMENT_STAGES:
                return AGREEMENT_STAGES[q]
            if q.startswith("option_"):
                return "CAT validation"
        return f"annotation ({p.parent.name or p.stem})"
    return {
        "runlog": "generation",
        "check": "minimal-pair check",
        "apply": "validation (apply)",
        "apply_dropped": "validation (dropped)",
        "translation": "translation review",
        "translation_dropped": "translation review (not released)",
        "adapt": "CrowS-Pairs adaptation",
        "cat_retention": "CAT retention",
        "errors": "generation errors",
        "records": f"records ({p.name})",
    }[kind]


# ------------------------------------------------------------------------------------------ summaries
def _pseudonyms(per_annotator: list[dict], pseudonyms: Callable[[str], str] | None = None) -> list[dict]:
    """Per-annotator figures with the names replaced by pseudonyms: the release's
    (:class:`biaskit.release.privacy.Pseudonyms`, the same as in its records), else A1, A2, ...;
    ordered by item count, then by pseudonym (or a hash of the name)."""
    import hashlib

    def name(r: dict) -> str:
        w = str(r.get("worker"))
        return pseudonyms(w) if pseudonyms is not None else hashlib.sha256(w.encode()).hexdigest()

    rows = sorted(((name(r), r) for r in per_annotator), key=lambda x: (-int(x[1].get("n_items") or 0), x[0]))
    return [
        {
            "annotator": n if pseudonyms is not None else f"A{i}",
            "n_items": r.get("n_items"),
            "agreement_with_majority": r.get("agreement_with_majority"),
        }
        for i, (n, r) in enumerate(rows, start=1)
    ]


def summarize_history(files: Sequence[HistoryFile], pseudonyms: Callable[[str], str] | None = None) -> dict[str, Any]:
    """A JSON-able summary per stage kind (no annotator names: per-annotator figures under
    ``pseudonyms``, the release's, or A1, A2, ...): each file summarised by its kind's function
    (:data:`_SUMMARIES`), under the kind's key."""
    out: dict[str, Any] = {"files": [f.as_dict() for f in files], **{key: [] for key, _ in _SUMMARIES.values()}}
    for f in files:
        key, summary = _SUMMARIES.get(f.kind, _SUMMARIES["records"])
        out[key].append({"label": f.label, "file": f.name, **summary(f.data, pseudonyms)})
    return out


def _runlog(runs: list[dict], _pz) -> dict[str, Any]:
    return {
        "runs": len(runs),
        "rows": sum(int(r.get("rows") or 0) for r in runs),
        "jobs": max((int(r.get("jobs") or 0) for r in runs), default=0),
        "errors_last_run": int(runs[-1].get("errors") or 0) if runs else 0,
        # the model each run called (the dummy backend calls none, whatever model the project names)
        "models": sorted({llm_label(r) for r in runs if r.get("model") or r.get("backend")}),
        "backends": sorted({str(r.get("backend")) for r in runs if r.get("backend")}),
        "prompts": sorted({f"{r.get('prompt_id')}@{r.get('prompt_version')}" for r in runs if r.get("prompt_id")}),
        "params": runs[-1].get("params") if runs else None,
        "first_run": min((str(r.get("started")) for r in runs if r.get("started")), default=None),
        "last_run": max((str(r.get("started")) for r in runs if r.get("started")), default=None),
        "requests": sum(int((r.get("llm") or {}).get("requests") or 0) for r in runs),
    }


def _check(rows: list[dict], _pz) -> dict[str, Any]:
    """Counted in pairs (a pair's language views once; flagged when any view is), views beside them."""
    from ..check import pair_key

    flags: dict[str, set] = {}
    pairs, flagged = set(), set()
    for r in rows:
        k = pair_key(r, r.get("row"))
        pairs.add(k)
        codes = {x.get("code") for x in r.get("flags") or [] if isinstance(x, dict)}
        if codes:
            flagged.add(k)
        for c in codes:
            if c:
                flags.setdefault(c, set()).add(k)
    langs = Counter(str(r.get("lang") or "en") for r in rows)
    return {
        "pairs": len(pairs),
        "views": len(rows),
        "flagged": len(flagged),
        "passed": len(pairs) - len(flagged),
        "by_lang": dict(sorted(langs.items())),
        "flags": {c: len(v) for c, v in sorted(flags.items())},
    }


_QUESTION_FIGURES = ("krippendorff_alpha", "fleiss_kappa", "percent_agreement", "n_items", "n_annotators")
_AGREEMENT_FIGURES = (
    "questions",
    "krippendorff_alpha",
    "fleiss_kappa",
    "mean_pairwise_cohen_kappa",
    "percent_agreement",
    "n_items",
    "n_judgments",
    "n_annotators",
    "annotators_per_item",
)


def _agreement(d: dict, pz: Callable[[str], str] | None) -> dict[str, Any]:
    per_q = {q: {k: m.get(k) for k in _QUESTION_FIGURES} for q, m in (d.get("per_question") or {}).items()}
    return {
        **{k: d.get(k) for k in _AGREEMENT_FIGURES},
        "per_question": per_q,
        "annotators": _pseudonyms(d.get("per_annotator") or [], pz),
    }


_APPLY_COUNTS = (
    "records",
    "accepted",
    "rejected",
    "needs_adjudication",
    "not_annotated",
    "needs_review",
    "not_reviewed",
)


def _apply(d: dict, _pz) -> dict[str, Any]:
    return {k: d.get(k) for k in _APPLY_COUNTS if k in d}


def _by_status(rows: list[dict], _pz=None) -> dict[str, Any]:
    return {"records": len(rows), "by_status": dict(Counter(str(r.get("status")) for r in rows))}


def _apply_dropped(rows: list[dict], _pz) -> dict[str, Any]:
    return {**_by_status(rows), "by_reason": dict(Counter(_reason(r.get("reason")) for r in rows).most_common(10))}


def _translation(d: dict, _pz) -> dict[str, Any]:
    return {k: d.get(k) for k in ("pairs", "engines", "edit_rate", "none_choices", "returned_reasons")}


_ADAPT_COUNTS = ("read", "kept", "by_type", "changed", "names_replaced", "lexicon_hits", "flagged", "dropped")


def _adapt(d: dict, _pz) -> dict[str, Any]:
    return {k: d.get(k) for k in _ADAPT_COUNTS}


_RETENTION_KEEP = (
    "split",
    "domain",
    "targets",
    "drafted",
    "valid",
    "valid_pct",
    "validated",
    "rejected",
    "validated_pct",
    "overall_pct",
)


def _cat_retention(d: dict, _pz) -> dict[str, Any]:
    keep = _RETENTION_KEEP
    return {
        "validated": d.get("validated") is not None,
        "rows": [
            {k: r.get(k) for k in keep if k in r}
            for r in [*(d.get("rows") or []), *(d.get("totals") or []), d.get("overall") or {}]
        ],
        "by_target": [
            {"target": r.get("target"), **{k: r.get(k) for k in keep if k in r}}
            for r in (d.get("by_target") or [])[:10]
        ],
        "problems": d.get("problems") or {},
    }


def _records(rows: list[dict], _pz) -> dict[str, Any]:
    return {"records": len(rows), "by_status": dict(Counter(str(r.get("status") or "raw") for r in rows))}


#: a history file's kind -> (its key in the summary, the function that summarises its content); the keys
#: in the summary's order. A kind not listed (none today) is summarised as earlier records.
_SUMMARIES: dict[str, tuple[str, Callable[[Any, Callable[[str], str] | None], dict[str, Any]]]] = {
    "runlog": ("generation", _runlog),
    "check": ("check", _check),
    "agreement": ("agreement", _agreement),
    "apply": ("apply", _apply),
    "apply_dropped": ("apply_dropped", _apply_dropped),
    "translation": ("translation", _translation),
    "translation_dropped": ("translation_dropped", _by_status),
    "adapt": ("adapt", _adapt),
    "records": ("records", _records),
    "errors": ("errors", _by_status),
    "cat_retention": ("cat_retention", _cat_retention),
}


def _reason(r: Any) -> str:
    s = str(r or "")
    return s.split(":")[0][:80] if s else "(none)"


# ------------------------------------------------------------------------------------------ provenance
# provenance keys that describe another record than this one: a translation's source (its English
# text was written by someone else) is not walked for who wrote this view
_OTHER_RECORD = frozenset(("source_provenance",))
TRANSLATED = ("translation-review", "cat-translation-review")  # provenance.source of a reviewed translation
REVIEWERS_WROTE = "review"  # the winner engine of a text the reviewers wrote (annotation/kinds/translation.py)
DATASETS = {"crows-pairs": "CrowS-Pairs", "indibias": "IndiBias"}  # provenance.source of a published dataset
LLM_DRAFT_SOURCE = "biaskit-curate"  # what `curate pairs` records; a CAT or tuple the LLM drafted says nothing


def _walk(obj: Any, found: list[dict], depth: int = 0) -> None:
    if depth > 4 or not isinstance(obj, dict):
        return
    if obj.get("prompt_id") or (obj.get("model") and (obj.get("request_hash") or obj.get("endpoint"))):
        found.append(obj)
    for k, v in obj.items():
        if isinstance(v, dict) and k not in _OTHER_RECORD:
            _walk(v, found, depth + 1)


def _edited(obj: Any, depth: int = 0) -> bool:
    """Did annotators edit the text (``provenance.edits``, at any depth but a source's)?"""
    if depth > 4 or not isinstance(obj, dict):
        return False
    if obj.get("edits"):
        return True
    return any(_edited(v, depth + 1) for k, v in obj.items() if isinstance(v, dict) and k not in _OTHER_RECORD)


def llm_label(g: dict) -> str:
    """The LLM that wrote a text, as the card names it, from a run log line or a record's generation
    provenance: the model, or for the ``dummy`` backend (which calls no model, whatever model name
    the project file gives) ``dummy backend: placeholder text, no model called``."""
    backend = str(g.get("backend") or "")
    if backend == "dummy" or str(g.get("endpoint") or "").startswith("dummy:"):
        return "dummy backend: placeholder text, no model called"
    return str(g.get("model") or NOT_GIVEN)


def written_by(prov: dict, meta: dict, gens: list[dict] | None = None) -> tuple[str, str]:
    """``(source, who wrote the text)`` of one released view or record, from its provenance: a
    published dataset's writers; an LLM draft (which LLM), edited by annotators or not; a machine
    translation (which engine), edited by reviewers or not; or text the reviewers wrote themselves.
    ``gens``: the generation entries of ``prov`` (:func:`_walk`) when the caller has them."""
    src = str(prov.get("source") or "")
    if src in TRANSLATED:
        rev: dict = meta["review"] if isinstance(meta.get("review"), dict) else {}
        engine = rev.get("winner_engine") or prov.get("engine")
        if engine == REVIEWERS_WROTE:
            return src, "reviewers (written by them)"
        model = rev.get("winner_model") or prov.get("model")
        mt = f"machine translation ({engine}:{model})" if model else f"machine translation ({engine})"
        return src, mt + (", edited by reviewers" if rev.get("edited") else "")
    if gens is None:
        gens = []
        _walk(prov, gens)
    gen = next((g for g in gens if g.get("model") or g.get("backend") or g.get("endpoint")), None)
    if gen is not None:
        who = f"LLM draft ({llm_label(gen)})" + (", edited by annotators" if _edited(prov) else "")
        return src or LLM_DRAFT_SOURCE, who
    if prov.get("format") in ("stereoset", "flat"):
        return src or "stereoset", "StereoSet's crowd writers"
    if src in DATASETS:
        return src, f"{DATASETS[src]}'s writers" + (", adapted by biaskit" if prov.get("adapted_by") else "")
    return src or NOT_GIVEN, NOT_GIVEN


def _validators(kind: str | None, meta: dict) -> tuple[str, int, int | None, int | None] | None:
    """``(stage, people per record, fewest who agreed, the rule's minimum)`` of a released record's
    annotation, or None when it carries none."""
    ann = meta.get("annotation")
    if kind == "cats" and isinstance(ann, dict):
        opts = [v for v in ann.values() if isinstance(v, dict) and v.get("validators") is not None]
        if opts:
            rule = [int(v["min_agree"]) for v in opts if v.get("min_agree") is not None]
            return (
                "CAT validation",
                max(int(v["validators"]) for v in opts),
                min(int(v.get("agree") or 0) for v in opts),
                min(rule) if rule else None,
            )
    if isinstance(ann, dict):
        for q, stage in (("validity", "pair validation"), ("stereotype", "tuple validation")):
            v = ann.get(q)
            if isinstance(v, dict) and v.get("n_annotators") is not None:
                return stage, int(v["n_annotators"]), None, None
    rev = meta.get("review")
    if isinstance(rev, dict) and rev.get("n_reviewers") is not None:
        return (
            ("CAT translation review" if kind == "cats" else "translation review"),
            int(rev["n_reviewers"]),
            None,
            None,
        )
    return None


def record_provenance(views: Iterable[tuple[str, dict, dict]]) -> dict[str, Any]:
    """Facts from the released views' ``provenance``/``meta``: sources, who wrote each text (LLM draft,
    human edit, machine translation, written by reviewers), generation models and prompts, MT
    engines, validators and reviewers per record (counts only), timestamps.
    ``views``: ``(lang, provenance, meta)`` per released language view (or record)."""
    acc = ProvenanceCounter()
    for lang, prov, meta in views:
        acc.add(lang, prov, meta)
    return acc.result()


class ProvenanceCounter:
    """:func:`record_provenance` one view at a time (``add``), keeping counts only."""

    def __init__(self) -> None:
        self.sources: Counter = Counter()
        self.authors: Counter = Counter()
        self.gen: Counter = Counter()
        self.prompts: Counter = Counter()
        self.engines: Counter = Counter()
        self.first: str | None = None
        self.last: str | None = None
        self.annot_n: Counter = Counter()
        self.validation: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.reviewers: set[str] = set()
        self.writers: set[str] = set()
        self.flipped = self.annotated = self.edited = 0

    def add(self, lang: str, prov: Any, meta: Any, kind: str | None = None) -> None:
        """One released view (``kind``: pairs, cats or tuples)."""
        prov = prov if isinstance(prov, dict) else {}
        meta = meta if isinstance(meta, dict) else {}
        found: list[dict] = []
        _walk(prov, found)
        src, who = written_by(prov, meta, found)
        self.sources[(lang, src)] += 1
        self.authors[(lang, src, who)] += 1
        if prov.get("source") in TRANSLATED and prov.get("engine") != REVIEWERS_WROTE:  # an MT engine's text
            self.engines[(lang, f"{prov.get('engine')}:{prov.get('model')}")] += 1
        for g in found:
            if (g.get("model") or g.get("endpoint")) and not (prov.get("source") in TRANSLATED and g is prov):
                self.gen[llm_label(g)] += 1
            if g.get("prompt_id"):
                self.prompts[f"{g.get('prompt_id')}@{g.get('prompt_version')}"] += 1
            if g.get("timestamp"):
                t = str(g.get("timestamp"))
                self.first = t if self.first is None or t < self.first else self.first
                self.last = t if self.last is None or t > self.last else self.last
        ann = meta.get("annotation")
        if isinstance(ann, dict):
            self.annotated += 1
            v = ann.get("validity") or ann.get("stereotype") or {}
            if isinstance(v, dict) and v.get("n_annotators") is not None:
                self.annot_n[int(v["n_annotators"])] += 1
            self.flipped += "direction_before" in ann
        val = _validators(kind, meta)
        if val is not None:
            stage, n, agree, rule = val
            e = self.validation.setdefault(
                (stage, kind or "", lang), {"records": 0, "per_record": Counter(), "agree_min": None, "rule": set()}
            )
            e["records"] += 1
            e["per_record"][n] += 1
            if agree is not None:
                e["agree_min"] = agree if e["agree_min"] is None else min(e["agree_min"], agree)
            if rule is not None:
                e["rule"].add(rule)
        rev = meta.get("review")
        if isinstance(rev, dict):
            self.reviewers.update(str(r.get("worker")) for r in rev.get("reviewers") or [] if isinstance(r, dict))
            self.edited += bool(rev.get("edited"))
        if meta.get("anon_writer"):
            self.writers.add(str(meta["anon_writer"]))

    def result(self) -> dict[str, Any]:
        return {
            "sources": [{"lang": lg, "source": s, "records": n} for (lg, s), n in sorted(self.sources.items())],
            "written_by": [
                {"lang": lg, "source": s, "written_by": w, "records": n}
                for (lg, s, w), n in sorted(self.authors.items())
            ],
            "generation_models": dict(self.gen.most_common()),
            "prompts": dict(self.prompts.most_common()),
            "mt_engines": [{"lang": lg, "engine": e, "released": n} for (lg, e), n in sorted(self.engines.items())],
            "generated_between": [self.first, self.last] if self.first is not None else None,
            "annotated_records": self.annotated,
            "annotators_per_record": {str(k): v for k, v in sorted(self.annot_n.items())},
            "validation": [
                {
                    "stage": stage,
                    "kind": kind,
                    "lang": lg,
                    "records": e["records"],
                    "people_per_record": {str(k): v for k, v in sorted(e["per_record"].items())},
                    "fewest_agreeing": e["agree_min"],
                    "rule_min_agree": min(e["rule"]) if e["rule"] else None,
                }
                for (stage, kind, lg), e in sorted(self.validation.items())
            ],
            "direction_changed_by_annotators": self.flipped,
            "translation_reviewers": len(self.reviewers),
            "translations_edited_by_reviewers": self.edited,
            "crowd_writers": len(self.writers),
        }


NOT_GIVEN = "not recorded"
