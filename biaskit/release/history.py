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
from collections.abc import Iterable, Sequence
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
            if "krippendorff_alpha" in obj and "per_annotator" in obj:
                return "agreement", obj
            if {"records", "accepted"} <= set(obj) and ("not_annotated" in obj or "rejected" in obj):
                return "apply", obj
            if "engines" in obj and "edit_rate" in obj:
                return "translation", obj
            if {"read", "kept", "by_type"} <= set(obj):
                return "adapt", obj
            if {"rows", "totals", "overall", "problems"} <= set(obj):
                return "cat_retention", obj
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
        if {"command", "jobs", "rows"} <= set(first):
            return "runlog", rows
        if "flags" in first and "sent_more" in first:
            return "check", rows
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
def _pseudonyms(per_annotator: list[dict]) -> list[dict]:
    """Per-annotator figures with the names replaced by A1, A2, ... (ordered by item count, then a hash)."""
    import hashlib

    rows = sorted(
        per_annotator,
        key=lambda r: (-int(r.get("n_items") or 0), hashlib.sha256(str(r.get("worker")).encode()).hexdigest()),
    )
    return [
        {"annotator": f"A{i}", "n_items": r.get("n_items"), "agreement_with_majority": r.get("agreement_with_majority")}
        for i, r in enumerate(rows, start=1)
    ]


def summarize_history(files: Sequence[HistoryFile]) -> dict[str, Any]:
    """A JSON-able summary per stage kind (no annotator names)."""
    out: dict[str, Any] = {
        "files": [f.as_dict() for f in files],
        "generation": [],
        "check": [],
        "agreement": [],
        "apply": [],
        "apply_dropped": [],
        "translation": [],
        "translation_dropped": [],
        "adapt": [],
        "records": [],
        "errors": [],
        "cat_retention": [],
    }
    for f in files:
        d = f.data
        if f.kind == "runlog":
            runs = d
            out["generation"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "runs": len(runs),
                    "rows": sum(int(r.get("rows") or 0) for r in runs),
                    "jobs": max((int(r.get("jobs") or 0) for r in runs), default=0),
                    "errors_last_run": int(runs[-1].get("errors") or 0) if runs else 0,
                    "models": sorted({str(r.get("model")) for r in runs if r.get("model")}),
                    "backends": sorted({str(r.get("backend")) for r in runs if r.get("backend")}),
                    "prompts": sorted(
                        {f"{r.get('prompt_id')}@{r.get('prompt_version')}" for r in runs if r.get("prompt_id")}
                    ),
                    "params": runs[-1].get("params") if runs else None,
                    "first_run": min((str(r.get("started")) for r in runs if r.get("started")), default=None),
                    "last_run": max((str(r.get("started")) for r in runs if r.get("started")), default=None),
                    "requests": sum(int((r.get("llm") or {}).get("requests") or 0) for r in runs),
                }
            )
        elif f.kind == "check":
            # counted in pairs (a pair's language views once; flagged when any view is), views beside them
            from ..check import pair_key

            flags: dict[str, set] = {}
            pairs, flagged = set(), set()
            for r in d:
                k = pair_key(r, r.get("row"))
                pairs.add(k)
                codes = {x.get("code") for x in r.get("flags") or [] if isinstance(x, dict)}
                if codes:
                    flagged.add(k)
                for c in codes:
                    if c:
                        flags.setdefault(c, set()).add(k)
            langs = Counter(str(r.get("lang") or "en") for r in d)
            out["check"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "pairs": len(pairs),
                    "views": len(d),
                    "flagged": len(flagged),
                    "passed": len(pairs) - len(flagged),
                    "by_lang": dict(sorted(langs.items())),
                    "flags": {c: len(v) for c, v in sorted(flags.items())},
                }
            )
        elif f.kind == "agreement":
            per_q = {
                q: {
                    k: m.get(k)
                    for k in ("krippendorff_alpha", "fleiss_kappa", "percent_agreement", "n_items", "n_annotators")
                }
                for q, m in (d.get("per_question") or {}).items()
            }
            out["agreement"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "questions": d.get("questions"),
                    "krippendorff_alpha": d.get("krippendorff_alpha"),
                    "fleiss_kappa": d.get("fleiss_kappa"),
                    "mean_pairwise_cohen_kappa": d.get("mean_pairwise_cohen_kappa"),
                    "percent_agreement": d.get("percent_agreement"),
                    "n_items": d.get("n_items"),
                    "n_judgments": d.get("n_judgments"),
                    "n_annotators": d.get("n_annotators"),
                    "annotators_per_item": d.get("annotators_per_item"),
                    "per_question": per_q,
                    "annotators": _pseudonyms(d.get("per_annotator") or []),
                }
            )
        elif f.kind == "apply":
            out["apply"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    **{
                        k: d.get(k)
                        for k in (
                            "records",
                            "accepted",
                            "rejected",
                            "needs_adjudication",
                            "not_annotated",
                            "needs_review",
                            "not_reviewed",
                        )
                        if k in d
                    },
                }
            )
        elif f.kind == "apply_dropped":
            out["apply_dropped"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "records": len(d),
                    "by_status": dict(Counter(str(r.get("status")) for r in d)),
                    "by_reason": dict(Counter(_reason(r.get("reason")) for r in d).most_common(10)),
                }
            )
        elif f.kind == "translation":
            out["translation"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "pairs": d.get("pairs"),
                    "engines": d.get("engines"),
                    "edit_rate": d.get("edit_rate"),
                    "none_choices": d.get("none_choices"),
                    "returned_reasons": d.get("returned_reasons"),
                }
            )
        elif f.kind == "translation_dropped":
            out["translation_dropped"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "records": len(d),
                    "by_status": dict(Counter(str(r.get("status")) for r in d)),
                }
            )
        elif f.kind == "adapt":
            out["adapt"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    **{
                        k: d.get(k)
                        for k in (
                            "read",
                            "kept",
                            "by_type",
                            "changed",
                            "names_replaced",
                            "lexicon_hits",
                            "flagged",
                            "dropped",
                        )
                    },
                }
            )
        elif f.kind == "cat_retention":
            keep = (
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
            out["cat_retention"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "validated": d.get("validated") is not None,
                    "rows": [
                        {k: r.get(k) for k in keep if k in r}
                        for r in [*d.get("rows", []), *d.get("totals", []), d.get("overall") or {}]
                    ],
                    "by_target": [
                        {"target": r.get("target"), **{k: r.get(k) for k in keep if k in r}}
                        for r in (d.get("by_target") or [])[:10]
                    ],
                    "problems": d.get("problems") or {},
                }
            )
        elif f.kind == "errors":
            out["errors"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "records": len(d),
                    "by_status": dict(Counter(str(r.get("status")) for r in d)),
                }
            )
        else:
            out["records"].append(
                {
                    "label": f.label,
                    "file": f.name,
                    "records": len(d),
                    "by_status": dict(Counter(str(r.get("status") or "raw") for r in d)),
                }
            )
    return out


def _reason(r: Any) -> str:
    s = str(r or "")
    return s.split(":")[0][:80] if s else "(none)"


# ------------------------------------------------------------------------------------------ provenance
def _walk(obj: Any, found: list[dict], depth: int = 0) -> None:
    if depth > 4 or not isinstance(obj, dict):
        return
    if obj.get("prompt_id") or (obj.get("model") and (obj.get("request_hash") or obj.get("endpoint"))):
        found.append(obj)
    for v in obj.values():
        if isinstance(v, dict):
            _walk(v, found, depth + 1)


def record_provenance(views: Iterable[tuple[str, dict, dict]]) -> dict[str, Any]:
    """Facts from the released views' ``provenance``/``meta``: sources, generation models and
    prompts, MT engines, reviewers and annotators (counts only), timestamps.
    ``views``: ``(lang, provenance, meta)`` per released language view (or record)."""
    acc = ProvenanceCounter()
    for lang, prov, meta in views:
        acc.add(lang, prov, meta)
    return acc.result()


class ProvenanceCounter:
    """:func:`record_provenance` one view at a time (``add``), keeping counts only."""

    def __init__(self) -> None:
        self.sources: Counter = Counter()
        self.gen: Counter = Counter()
        self.prompts: Counter = Counter()
        self.engines: Counter = Counter()
        self.first: str | None = None
        self.last: str | None = None
        self.annot_n: Counter = Counter()
        self.reviewers: set[str] = set()
        self.writers: set[str] = set()
        self.flipped = self.annotated = self.edited = 0

    def add(self, lang: str, prov: Any, meta: Any) -> None:
        prov = prov if isinstance(prov, dict) else {}
        meta = meta if isinstance(meta, dict) else {}
        self.sources[(lang, str(prov.get("source") or NOT_GIVEN))] += 1
        if prov.get("source") == "translation-review":
            self.engines[(lang, f"{prov.get('engine')}:{prov.get('model')}")] += 1
        found: list[dict] = []
        _walk(prov, found)
        for g in found:
            if g.get("model") and not (prov.get("source") == "translation-review" and g is prov):
                self.gen[str(g.get("model"))] += 1
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
        rev = meta.get("review")
        if isinstance(rev, dict):
            self.reviewers.update(str(r.get("worker")) for r in rev.get("reviewers") or [] if isinstance(r, dict))
            self.edited += bool(rev.get("edited"))
        if meta.get("anon_writer"):
            self.writers.add(str(meta["anon_writer"]))

    def result(self) -> dict[str, Any]:
        return {
            "sources": [{"lang": lg, "source": s, "records": n} for (lg, s), n in sorted(self.sources.items())],
            "generation_models": dict(self.gen.most_common()),
            "prompts": dict(self.prompts.most_common()),
            "mt_engines": [{"lang": lg, "engine": e, "released": n} for (lg, e), n in sorted(self.engines.items())],
            "generated_between": [self.first, self.last] if self.first is not None else None,
            "annotated_records": self.annotated,
            "annotators_per_record": {str(k): v for k, v in sorted(self.annot_n.items())},
            "direction_changed_by_annotators": self.flipped,
            "translation_reviewers": len(self.reviewers),
            "translations_edited_by_reviewers": self.edited,
            "crowd_writers": len(self.writers),
        }


NOT_GIVEN = "not recorded"
