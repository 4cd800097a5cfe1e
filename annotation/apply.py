"""Apply aggregated annotations to the data: the validated dataset, ready for evaluation.

``apply_annotations(kind, data, aggregated, out)`` keeps only accepted records, with their labels
and agreement attached in ``meta["annotation"]`` and their ``provenance`` unchanged:

- ``pair``: accepted when the ``validity`` item is ``accepted`` with label ``stereo`` or
  ``antistereo``. When the crowd's direction differs from the data's, ``direction_policy``
  ``"annotators"`` (default) takes the crowd's label and records ``direction_before``; ``"reject"``
  drops the pair. Concern codes whose ``concern:<code>`` item was accepted as ``yes`` are listed.
  Pairs keep the shared :class:`~biaskit.schema.SentencePair` schema, with ``status = accepted``.
- ``tuple``: accepted when ``stereotype`` is accepted as ``yes`` (IndiBias: >= 2 of 3); an accepted
  ``polarity`` that differs from the data replaces it (``polarity_before`` recorded).
- ``cat``: accepted when all three options are accepted with their gold label (StereoSet kept a
  CAT when >= 3 of 5 validators agreed with its labels); the individual labels go to each option's
  ``human_labels`` when the judgments are given.
- ``translation``: handled by :func:`biaskit.curation.review.apply_translation_review` (imported
  lazily), which needs the judgments themselves (choices, corrections, engines).

Records that were not annotated, rejected or need adjudication are not written; their counts are
in the returned summary, also written to ``OUT.summary.json`` (and ``OUT.rejected.jsonl`` lists the
rejected/adjudication ids with the reason, so nothing is lost silently).
"""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any, Optional

from biaskit.errors import InputError

from .kinds import get_kind

DIRECTION_POLICIES = ("annotators", "reject")


def _agg_index(aggregated, source: Optional[str]) -> dict[tuple[str, str], dict]:
    import pandas as pd

    from biaskit.io import read_table

    df = aggregated if isinstance(aggregated, pd.DataFrame) else read_table(aggregated)
    need = ["task", "question", "label", "status"]
    miss = [c for c in need if c not in df.columns]
    if miss:
        raise InputError(f"missing column(s) {', '.join(miss)}.", path=source,
                         fix="pass the output of `biaskit annotate aggregate`.")
    out = {}
    for r in df.to_dict(orient="records"):
        r = {k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
        out[(str(r["task"]), str(r["question"]))] = r
    return out


def _summary(r: dict) -> dict:
    keep = ("label", "votes", "n_annotators", "agreement", "status", "method", "confidence")
    return {k: r[k] for k in keep if k in r and r[k] is not None}


def _human_labels(judgments) -> dict[tuple[str, str], list[str]]:
    if judgments is None:
        return {}
    import pandas as pd

    from biaskit.io import read_table

    df = judgments if isinstance(judgments, pd.DataFrame) else read_table(judgments)
    out: dict[tuple[str, str], list[str]] = {}
    for t, q, lab in zip(df["task"].astype(str), df.get("question", pd.Series(["label"] * len(df))).astype(str),
                         df["label"]):
        if lab is None or (isinstance(lab, float) and lab != lab):
            continue
        out.setdefault((t, q), []).append(str(lab))
    return out


def apply_annotations(kind: str, data_path: str | Path, aggregated, out_path: str | Path, *,
                      judgments=None, direction_policy: str = "annotators", min_agree: Optional[int] = None,
                      report_dir: Optional[str | Path] = None) -> dict[str, Any]:
    """Write the accepted records of ``data_path`` to ``out_path``; returns a summary dict."""
    from biaskit.io import write_jsonl
    from biaskit.readers import write_pairs

    if direction_policy not in DIRECTION_POLICIES:
        raise InputError(f"unknown direction policy '{direction_policy}'.",
                         fix=f"use one of {', '.join(DIRECTION_POLICIES)}.")
    kind = kind.lower()
    if kind == "translation":
        return _apply_translation(data_path, judgments, out_path, min_agree=min_agree, report_dir=report_dir)
    k = get_kind(kind)
    records = k.load(data_path)
    agg = _agg_index(aggregated, str(aggregated) if not hasattr(aggregated, "columns") else None)
    known = {k.record_id(r) for r in records}
    unknown = sorted({t for t, _ in agg} - known)
    if unknown:
        raise InputError(f"{len(unknown)} aggregated task(s) are not in the data, e.g. '{unknown[0]}'.",
                         path=str(aggregated) if not hasattr(aggregated, "columns") else None,
                         fix="pass the data file that was pushed for these annotations.")
    human = _human_labels(judgments)
    concerns: dict[str, list[str]] = {}
    for (t, q), x in agg.items():
        if q.startswith("concern:") and x["status"] == "accepted" and x["label"] == "yes":
            concerns.setdefault(t, []).append(q.split(":", 1)[1])
    accepted, dropped = [], []
    counts = {"records": len(records), "accepted": 0, "rejected": 0, "needs_adjudication": 0, "not_annotated": 0}

    def drop(rid: str, status: str, reason: str) -> None:
        counts[status] += 1
        dropped.append({"id": rid, "status": status, "reason": reason})

    for rec in records:
        rid = k.record_id(rec)
        if kind == "pair":
            r = agg.get((rid, "validity"))
            if r is None:
                counts["not_annotated"] += 1
                continue
            if r["status"] != "accepted":
                drop(rid, r["status"], r.get("reason") or r["status"])
                continue
            if r["label"] == "invalid":
                drop(rid, "rejected", "annotators: not a valid pair")
                continue
            ann = {"validity": _summary(r), "concerns": sorted(concerns.get(rid, []))}
            if r["label"] != rec.direction:
                if direction_policy == "reject":
                    drop(rid, "rejected", f"annotators say {r['label']}, data says {rec.direction}")
                    continue
                ann["direction_before"] = rec.direction
                rec.direction = r["label"]
            rec.meta["annotation"] = ann
            rec.status = "accepted"
            accepted.append(rec)
        elif kind == "tuple":
            r = agg.get((rid, "stereotype"))
            if r is None:
                counts["not_annotated"] += 1
                continue
            if r["status"] != "accepted" or r["label"] != "yes":
                drop(rid, r["status"] if r["status"] != "accepted" else "rejected",
                     r.get("reason") or "annotators: not a prevalent stereotype")
                continue
            ann = {"stereotype": _summary(r)}
            p = agg.get((rid, "polarity"))
            if p is not None:
                ann["polarity"] = _summary(p)
                if p["status"] == "accepted" and p["label"] != rec.polarity:
                    ann["polarity_before"] = rec.polarity
                    rec.polarity = p["label"]
            rec.meta["annotation"] = ann
            rec.status = "accepted"
            accepted.append(rec)
        elif kind == "cat":
            rows = {o.gold_label: agg.get((rid, f"option_{o.gold_label}")) for o in rec.options}
            if all(v is None for v in rows.values()):
                counts["not_annotated"] += 1
                continue
            bad = [g for g, v in rows.items() if v is None or v["status"] != "accepted" or v["label"] != g]
            if bad:
                status = "needs_adjudication" if any(rows[g] is not None and rows[g]["status"] == "needs_adjudication"
                                                     for g in bad) else "rejected"
                drop(rid, status, "options without an accepted gold label: " + ", ".join(bad))
                continue
            for o in rec.options:
                o.human_labels = human.get((rid, f"option_{o.gold_label}"), o.human_labels)
            rec.meta["annotation"] = {g: _summary(v) for g, v in rows.items()}
            accepted.append(rec)
        else:  # pragma: no cover - registry guards this
            raise InputError(f"apply does not support kind '{kind}'.")
        counts["accepted"] += 1
    out = Path(out_path)
    if kind == "pair":
        write_pairs(out, accepted)
    else:
        write_jsonl(out, accepted)
    rej = out.with_name(f"{out.stem}.rejected.jsonl")
    write_jsonl(rej, dropped)
    counts["out"] = str(out)
    counts["rejected_file"] = str(rej)
    summ = out.with_name(f"{out.stem}.summary.json")   # read by `biaskit release build` (retention)
    counts["summary_file"] = str(summ)
    from biaskit.io import write_json
    write_json(summ, counts)
    return counts


def _apply_translation(candidates_path, judgments, out_path, *, min_agree=None, report_dir=None) -> dict:
    if judgments is None:
        raise InputError("applying a translation review needs the pulled judgments.",
                         fix="pass --judgments FILE (the output of `biaskit annotate pull`).")
    try:
        mod = importlib.import_module("biaskit.curation.review")
        fn = getattr(mod, "apply_translation_review")
    except (ImportError, AttributeError):
        raise InputError("the translation review step (biaskit.curation.review.apply_translation_review) "
                         "is not available in this installation.",
                         fix="install biaskit with the curation extra: pip install -e '.[curation]' in your biaskit clone.") from None
    kw: dict[str, Any] = {}
    params = inspect.signature(fn).parameters
    if min_agree is not None and "min_votes" in params:
        kw["min_votes"] = min_agree
    if report_dir is not None and "report_dir" in params:
        kw["report_dir"] = report_dir
    res = fn(candidates_path, judgments, out_path, **kw)
    return res.summary() if hasattr(res, "summary") else dict(res or {})
