"""The papers' published figures beside a run (``data/published/*.json``, ``data/seat/index.json``).

A run's model is matched to a paper's model by its Hugging Face name (the ``--model`` string, its last
path component, or ``_name_or_path`` in the folder's ``config.json``) against each paper's ``models``
map; the map says where each checkpoint name comes from (``basis``). :func:`comparison` returns the
rows a report prints: what, the paper's figure, biaskit's, the difference, and the source (table,
row, column).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biaskit.languages import name_of, source_code
from biaskit.tables import md_table, num

DATA = Path(__file__).resolve().parent.parent / "data" / "published"


@functools.cache
def load(paper: str) -> dict:
    """``data/published/<paper>.json`` (``indibias2024``, ``stereoset2020``)."""
    return json.loads((DATA / f"{paper}.json").read_text(encoding="utf-8"))


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(s).lower()).strip("-")


def model_names(model: Any) -> list[str]:
    """The names a model is known by: the string given, its last path component, and the folder's
    ``config.json`` ``_name_or_path`` (with its last component)."""
    text = str(getattr(model, "name", None) or model)
    out = [text, text.rstrip("/").rsplit("/", 1)[-1]]
    p = Path(getattr(model, "path", None) or text).expanduser()
    cfg = p / "config.json" if p.is_dir() else None
    if cfg is not None and cfg.exists():
        try:
            nop = json.loads(cfg.read_text(encoding="utf-8")).get("_name_or_path") or ""
        except (OSError, ValueError):
            nop = ""
        if nop and not Path(nop).is_absolute():
            out += [nop, nop.rstrip("/").rsplit("/", 1)[-1]]
    return [n for n in dict.fromkeys(out) if n]


def match_model(model: Any, paper: str) -> str | None:
    """The paper's label of ``model`` (e.g. ``XLMR``, ``GPT2-medium``) or None."""
    names = {_norm(n) for n in model_names(model)}
    for label, m in load(paper)["models"].items():
        for hub in m.get("hub") or []:
            if _norm(hub) in names or _norm(hub.rsplit("/", 1)[-1]) in names:
                return label
    return None


def _row(what: str, paper: float | None, ours: float | None, source: str, note: str = "") -> dict:
    diff = None if paper is None or ours is None else ours - paper
    return {"what": what, "paper": paper, "biaskit": ours, "difference": diff, "source": source, "note": note}


def pairs_comparison(model: Any, summary: dict) -> dict:
    """IndiBias Table 2 beside an ``evaluate pairs`` summary (per language: every bias type and the
    ICS mean ± std; biaskit's side is the same 5 x 80% subsample mean)."""
    doc = load("indibias2024")
    label = match_model(model, "indibias2024")
    if label is None or label not in doc["tables"]["table2"]["columns"]:
        return {}
    t2 = doc["tables"]["table2"]["values"]
    rows = []
    for lg, s in (summary.get("by_lang") or {}).items():
        if lg not in t2:
            continue
        col = t2[lg][label]
        sub = s.get("subsample") or {}
        by_bt = sub.get("by_bias_type") or {}
        for bt, v in col.items():
            if bt == "all":
                rows.append(
                    _row(
                        f"{lg}: ICS (mean)",
                        v,
                        sub.get("mean"),
                        f"IndiBias Table 2, row ICS (mean), column {'English' if lg == 'en' else 'Hindi'} {label}",
                    )
                )
            elif bt == "all_std":
                rows.append(
                    _row(
                        f"{lg}: ICS (std-dev)",
                        v,
                        sub.get("std"),
                        f"IndiBias Table 2, row ICS (std-dev), column {'English' if lg == 'en' else 'Hindi'} {label}",
                    )
                )
            elif bt in by_bt:
                rows.append(
                    _row(
                        f"{lg}: {bt}",
                        v,
                        by_bt[bt],
                        f"IndiBias Table 2, row {bt}, column {'English' if lg == 'en' else 'Hindi'} {label}",
                    )
                )
    return (
        {
            "paper": doc["citation"],
            "model": label,
            "basis": doc["models"][label]["basis"],
            "metric": "bias percentage, mean of the 5 x 80% subsamples",
            "rows": rows,
        }
        if rows
        else {}
    )


def cats_comparison(model: Any, summary: dict) -> dict:
    """StereoSet arXiv 2020 Table 4 (development set) and Table 7 beside an ``evaluate cats`` summary."""
    doc = load("stereoset2020")
    label = match_model(model, "stereoset2020")
    if label is None:
        return {}
    rows = []
    t4 = doc["tables"]["table4"]["values"]["dev"].get(label)
    if t4:
        for k in ("lms", "ss", "icat"):
            rows.append(
                _row(
                    f"overall {k}",
                    t4[k],
                    (summary.get("overall") or {}).get(k),
                    f"StereoSet arXiv Table 4, Development set, row {label}, column {k}",
                )
            )
    t7 = doc["tables"]["table7"]["values"].get(label) or {}
    for split in ("intrasentence", "intersentence"):
        part = summary.get(split)
        if not part:
            continue
        for dom, v in (t7.get(split) or {}).items():
            ours = part["overall"] if dom == "overall" else (part.get("by_domain") or {}).get(dom)
            for k in ("lms", "ss", "icat"):
                rows.append(
                    _row(
                        f"{split} {dom} {k}",
                        v[k],
                        (ours or {}).get(k),
                        f"StereoSet arXiv Table 7 (development set), row {label} {dom}, {split.capitalize()} {k}",
                    )
                )
    return (
        {"paper": doc["citation"], "model": label, "basis": doc["models"][label]["basis"], "rows": rows} if rows else {}
    )


def sentiment_comparison(summary_baseline: dict) -> dict:
    """StereoSet's SentimentLM row (Table 4 development set) beside biaskit's SentimentLM baseline."""
    doc = load("stereoset2020")
    t4 = doc["tables"]["table4"]["values"]["dev"]["SENTIMENTLM"]
    o = summary_baseline.get("overall") or {}
    return {
        "paper": doc["citation"],
        "model": "SENTIMENTLM",
        "basis": doc["models"]["SENTIMENTLM"]["basis"],
        "rows": [
            _row(
                f"overall {k}",
                t4[k],
                o.get(k),
                f"StereoSet arXiv Table 4, Development set, row SENTIMENTLM, column {k}",
            )
            for k in ("lms", "ss", "icat")
        ],
    }


def seat_label(model: Any) -> str | None:
    """The IndiBias SEAT column (Tables 3, 4, 9) of ``model``: the Table 1 model map, with the tables'
    spelling (``IndicBert``)."""
    label = match_model(model, "indibias2024")
    if label is None:
        return None
    aliases = load("indibias2024")["models"][label].get("aliases") or []
    return aliases[0] if aliases else label


def seat_comparison(model: Any, results: Sequence[dict]) -> dict:
    """The paper's effect size of each shipped IndiBias test (``paper_effect_sizes`` in its index entry)."""
    label = seat_label(model)
    if label is None:
        return {}
    rows = []
    for r in results:
        paper = (r.get("paper_effect_sizes") or {}).get(label)
        if paper is None:
            continue
        rows.append(
            _row(
                f"{r['test']} ({r['lang']})",
                paper,
                r.get("effect_size"),
                f"IndiBias Table {r.get('table')}, row {r.get('row')} ({r.get('label')}), {name_of(r['lang'])} {label}",
                note=f"{name_of(r['lang'])}: biaskit's rendering of the tests, not the paper's sentences"
                if r["lang"] != source_code()
                else "",
            )
        )
    return (
        {
            "paper": load("indibias2024")["citation"],
            "model": label,
            "basis": load("indibias2024")["models"][match_model(model, "indibias2024")]["basis"],
            "rows": rows,
        }
        if rows
        else {}
    )


def markdown(comp: dict, protocol: dict | None = None) -> str:
    """The report section: the paper's figure beside biaskit's, with the difference. ``protocol``: the
    run's ``summary["protocol"]`` (a run that deviates from it is flagged)."""
    if not comp or not comp.get("rows"):
        return ""
    lines = [
        "## Published figures",
        "",
        f"This model is **{comp['model']}** in {comp['paper']} (checkpoint: {comp['basis']}).",
    ]
    if protocol is not None and not protocol.get("comparable"):
        lines.append(
            "**The run does not follow the paper's protocol** (see Protocol): differences below are "
            "not a reproduction check."
        )

    def f(x, sign: bool = False):  # two decimals, three for a small non-zero figure
        nd = 2 if x is None or abs(x) >= 0.1 or (x == 0 and not sign) else 3
        return num(None if x is None else float(x), nd, missing="—", sign=sign)

    lines += [
        "",
        md_table(
            ["what", "paper", "biaskit", "difference", "source"],
            [
                [
                    r["what"],
                    f(r["paper"]),
                    f(r["biaskit"]),
                    f(r["difference"], sign=True),
                    r["source"] + (f" ({r['note']})" if r.get("note") else ""),
                ]
                for r in comp["rows"]
            ],
        ),
    ]
    return "\n".join(lines) + "\n"
