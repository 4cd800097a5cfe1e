"""The papers' published figures beside a run (``data/published/*.json``, ``data/seat/index.json``).

A name only nominates a paper checkpoint: the ``--model`` string, its last path component or
``_name_or_path`` in the folder's ``config.json`` is looked up in each paper's ``models`` map (which
says where each checkpoint name comes from: ``basis``). :func:`identify` then compares the loaded
model's facts (:mod:`.checkpoint`: model type, layers, hidden size, vocabulary, parameters, weights'
SHA-256) with the facts recorded for that checkpoint:

- facts differ (or the weights' SHA-256 differs from a recorded one): **not the paper's checkpoint**,
  no published figure is printed;
- facts equal, weights not verifiable (no SHA-256 recorded): the figures are printed **for
  orientation, checkpoint not verified**, and the run is not comparable;
- facts and weights equal: **verified**, the figures may be compared.

:func:`pairs_comparison`, :func:`cats_comparison` and :func:`seat_comparison` return the rows a report
prints (what, the paper's figure, biaskit's, the difference, the source: table, row, column) for an
identified checkpoint; :func:`apply_checkpoint`, :func:`pairs_data_reasons` and
:func:`cats_data_reasons` mark a run not comparable when its checkpoint or its data is not the paper's
(docs/fidelity.md, "What comparable means").
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biaskit.languages import name_of
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


def match_name(model: Any, paper: str, doc: dict | None = None) -> tuple[str, str] | None:
    """``(label, hub name)`` of the paper checkpoint ``model``'s names nominate, or None. A nomination
    only: :func:`identify` decides whether the model is that checkpoint."""
    names = {_norm(n) for n in model_names(model)}
    for label, m in (doc or load(paper))["models"].items():
        for hub in m.get("hub") or []:
            if _norm(hub) in names or _norm(hub.rsplit("/", 1)[-1]) in names:
                return label, hub
    return None


def match_model(model: Any, paper: str) -> str | None:
    """The paper's label ``model``'s names nominate (e.g. ``XLMR``, ``GPT2-medium``) or None."""
    m = match_name(model, paper)
    return m[0] if m else None


VERIFIED, UNVERIFIED, NOT_THE_PAPERS = "verified", "unverified", "not the paper's checkpoint"


def identify(model: Any, paper: str, record: dict | None, *, doc: dict | None = None) -> dict | None:
    """Whether ``model`` is the paper checkpoint its name nominates, from ``record`` (its
    ``summary["checkpoint"]``: :func:`.checkpoint.checkpoint_record`). None when no name matches;
    else ``{"label", "hub", "status", "why", "basis", "paper"}`` with ``status`` :data:`VERIFIED`,
    :data:`UNVERIFIED` or :data:`NOT_THE_PAPERS`. ``doc``: the paper's published file (default:
    ``data/published/<paper>.json``)."""
    from .checkpoint import FACT_KEYS, recorded_facts

    doc = doc or load(paper)
    m = match_name(model, paper, doc)
    if m is None:
        return None
    label, hub = m
    entry = doc["models"][label]
    rec = (entry.get("checkpoints") or {}).get(hub)
    out = {"label": label, "hub": hub, "basis": entry["basis"], "paper": paper}
    loaded = (record or {}).get("facts") or {}
    if rec is None:
        return {**out, "status": UNVERIFIED, "why": f"the facts of {hub} are not recorded in data/published/"}
    if not loaded:
        why = (record or {}).get("why") or "the loaded model's facts are unknown"
        return {**out, "status": UNVERIFIED, "why": why}
    paper_facts = recorded_facts(rec)
    differ = [
        f"{k.replace('_', ' ')} {_fact(loaded.get(k))}, not {_fact(paper_facts.get(k))}"
        for k in FACT_KEYS
        if paper_facts.get(k) is not None and loaded.get(k) != paper_facts.get(k)
    ]
    if differ:
        return {**out, "status": NOT_THE_PAPERS, "why": "; ".join(differ)}
    known = set((rec.get("weights_sha256") or {}).values())
    files = (record or {}).get("weights") or []
    if known and files:
        if all(f["sha256"] in known for f in files):
            return {**out, "status": VERIFIED, "why": f"facts and the weights' SHA-256 equal {hub}'s"}
        return {
            **out,
            "status": NOT_THE_PAPERS,
            "why": f"the weights' SHA-256 is not {hub}'s (a fine-tuned or converted model, or another revision)",
        }
    return {
        **out,
        "status": UNVERIFIED,
        "why": f"facts equal {hub}'s, but "
        + ("no SHA-256 of the paper's weights is recorded" if not known else "no weights file was hashed"),
    }


def _fact(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def paper_of(applied: Any) -> str | None:
    """The ``data/published`` file a protocol's figures come from (``indibias2024``), or None."""
    figs = getattr(applied, "figures", None) or ()
    return figs[0].split(":", 1)[0] if figs else None


def apply_checkpoint(applied: Any, ident: dict | None) -> None:
    """Mark ``applied`` (a run's protocol) by what :func:`identify` found: verified, or why not."""
    from .protocols.base import NONE, mark_not_comparable

    if applied.name == NONE:
        return
    if paper_of(applied) is None:
        mark_not_comparable(
            applied,
            "checkpoint",
            "checkpoint: the paper's checkpoints are not recorded in data/published/, so this one cannot be "
            "verified as the paper's",
        )
    elif ident is None:
        mark_not_comparable(
            applied,
            "checkpoint",
            "checkpoint: not one of the paper's (no checkpoint recorded in data/published/ is named like it), "
            "so no published figure applies",
        )
    elif ident["status"] == VERIFIED:
        applied.verify_checkpoint(ident["label"])
    elif ident["status"] == NOT_THE_PAPERS:
        mark_not_comparable(
            applied,
            "checkpoint",
            f"checkpoint: named like the paper's {ident['label']} ({ident['hub']}) but not the paper's checkpoint: "
            f"{ident['why']}",
        )
    else:
        mark_not_comparable(
            applied,
            "checkpoint",
            f"checkpoint: the paper's {ident['label']} ({ident['hub']}) not verified ({ident['why']}); its figures "
            "are shown for orientation only",
        )


def model_protocol(applied: Any, model: Any, loaded: Any) -> tuple[Any, dict]:
    """One model's copy of a run's protocol, marked by its checkpoint (:func:`identify` against the
    protocol's paper), and its ``summary["checkpoint"]``: facts, weights' SHA-256 and the paper
    checkpoint its name nominated (``paper``: :func:`identify`'s answer, None when none)."""
    from .checkpoint import checkpoint_record

    applied_m = applied.copy()
    record = checkpoint_record(loaded)
    paper = paper_of(applied)
    ident = identify(model, paper, record) if paper else None
    apply_checkpoint(applied_m, ident)
    return applied_m, {**record, "paper": ident}


def _status(ident: dict) -> dict:
    return {k: ident[k] for k in ("status", "hub", "why")}


def pairs_data_reasons(applied: Any, data_info: dict, by_lang: dict) -> None:
    """Mark a pairs run not comparable when its data is not what IndiBias Table 2 covers: the public
    sample (``data/datasets.json`` ``indibias-sample``), or a language with another number of pairs."""
    from .protocols.base import mark_not_comparable

    if paper_of(applied) != "indibias2024":
        return
    spec = load("indibias2024").get("data", {}).get("table2") or {}
    want = spec.get("pairs_per_language")
    sample = _dataset(spec.get("public_sample"))
    if sample and data_info.get("sha256") == sample.get("sha256"):
        mark_not_comparable(
            applied,
            "data",
            f"data: the public IndiBias sample ({sample.get('filename')}, {sample.get('rows')} pairs), not the "
            f"{want} pairs per language Table 2 was computed on ({spec.get('cite')})",
        )
        return
    for lang, s in sorted(by_lang.items()):
        n = s.get("n_pairs")
        if want and n != want:
            mark_not_comparable(
                applied,
                "data",
                f"data: {n} pairs in {lang}, Table 2 was computed on {want} per language ({spec.get('cite')})",
            )


def _dataset(name: str | None) -> dict:
    """An entry of ``data/datasets.json`` (its SHA-256, file name and rows), or {}."""
    if not name:
        return {}
    from biaskit.datasets import get_dataset
    from biaskit.errors import UnknownNameError

    try:
        info = get_dataset(name)
    except UnknownNameError:  # an edited registry without it: no sample to recognise (a broken one is an error)
        return {}
    return {"sha256": info.sha256, "filename": info.filename, "rows": info.rows}


def cats_data_reasons(applied: Any, counts: dict[str, int]) -> None:
    """Mark a StereoSet run not comparable when a split it scored is not the whole development set
    (``counts``: CATs scored per split)."""
    from .protocols.base import mark_not_comparable

    if paper_of(applied) != "stereoset2020":
        return
    spec = load("stereoset2020").get("data", {}).get("dev") or {}
    for split, n in sorted(counts.items()):
        want = spec.get(split)
        if want and n and n != want:
            mark_not_comparable(
                applied,
                "data",
                f"data: {n:,} {split} CATs, the development-set figures cover {want:,} ({spec.get('cite')})",
            )


def _row(what: str, paper: float | None, ours: float | None, source: str, note: str = "") -> dict:
    diff = None if paper is None or ours is None else ours - paper
    return {"what": what, "paper": paper, "biaskit": ours, "difference": diff, "source": source, "note": note}


def _refused(ident: dict, paper: str) -> dict:
    """The comparison of a model named like a paper checkpoint that is not it: no figure, and why."""
    return {
        "paper": load(paper)["citation"],
        "model": ident["label"],
        "basis": ident["basis"],
        **_status(ident),
        "rows": [],
    }


def pairs_comparison(ident: dict | None, summary: dict) -> dict:
    """IndiBias Table 2 beside an ``evaluate pairs`` summary (per language: every bias type and the
    ICS mean ± std; biaskit's side is the same 5 x 80% subsample mean). ``ident``: :func:`identify`."""
    doc = load("indibias2024")
    if (
        ident is None
        or ident.get("paper") != "indibias2024"
        or ident["label"] not in doc["tables"]["table2"]["columns"]
    ):
        return {}
    if ident["status"] == NOT_THE_PAPERS:
        return _refused(ident, "indibias2024")
    label = ident["label"]
    t2 = doc["tables"]["table2"]["values"]
    rows = []
    for lg, s in (summary.get("by_lang") or {}).items():
        if lg not in t2:
            continue
        col = t2[lg][label]
        sub = s.get("subsample") or {}
        by_bt = sub.get("by_bias_type") or {}
        ours = {"all": ("ICS (mean)", sub.get("mean")), "all_std": ("ICS (std-dev)", sub.get("std"))}
        ours.update({bt: (bt, x) for bt, x in by_bt.items() if bt not in ours})
        for bt, v in col.items():
            if bt in ours:
                what, x = ours[bt]
                rows.append(_row(f"{lg}: {what}", v, x, f"IndiBias Table 2, row {what}, column {name_of(lg)} {label}"))
    return (
        {
            "paper": doc["citation"],
            "model": label,
            "basis": doc["models"][label]["basis"],
            **_status(ident),
            "metric": "bias percentage, mean of the 5 x 80% subsamples",
            "rows": rows,
        }
        if rows
        else {}
    )


def cats_comparison(ident: dict | None, summary: dict) -> dict:
    """StereoSet arXiv 2020 Table 4 (development set) and Table 7 beside an ``evaluate cats`` summary.

    Table 4's overall figures cover both splits of the whole development set: they are compared only
    with a run that scored both in full. A partial run (``--split intrasentence``, a masked LM without
    NSP weights whose intersentence split was not scored, ``--limit``) is compared split by split
    with Table 7, and the comparison says why the overall is not."""
    doc = load("stereoset2020")
    if ident is None or ident.get("paper") != "stereoset2020":
        return {}
    if ident["status"] == NOT_THE_PAPERS:
        return _refused(ident, "stereoset2020")
    label = ident["label"]
    dev = doc.get("data", {}).get("dev") or {}
    full = {
        sp: (summary.get(sp) or {}).get("overall", {}).get("count") == dev.get(sp)
        for sp in ("intrasentence", "intersentence")
    }
    rows, scope = [], ""
    t4 = doc["tables"]["table4"]["values"]["dev"].get(label)
    if t4 and all(full.values()):
        for k in ("lms", "ss", "icat"):
            rows.append(
                _row(
                    f"overall {k}",
                    t4[k],
                    (summary.get("overall") or {}).get(k),
                    f"StereoSet arXiv Table 4, Development set, row {label}, column {k}",
                )
            )
    elif t4:
        missing = [sp for sp, ok in full.items() if not ok]
        scope = (
            "overall not compared: Table 4's overall covers both splits of the whole development set and this run "
            f"did not score all of {' and '.join(missing)}; compared split by split with Table 7"
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
        {
            "paper": doc["citation"],
            "model": label,
            "basis": doc["models"][label]["basis"],
            **_status(ident),
            **({"scope": scope} if scope else {}),
            "rows": rows,
        }
        if rows
        else {}
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
        "status": UNVERIFIED,
        "why": "the sentiment classifier is the one you passed, not the authors' (which biaskit cannot verify)",
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


def seat_label(label: str | None) -> str | None:
    """The IndiBias SEAT column (Tables 3, 4, 9) of a Table 1 label, with the tables' spelling (``IndicBert``)."""
    if label is None:
        return None
    aliases = load("indibias2024")["models"][label].get("aliases") or []
    return aliases[0] if aliases else label


def seat_comparison(ident: dict | None, results: Sequence[dict]) -> dict:
    """The paper's effect size of each shipped IndiBias test (``paper_effect_sizes`` in its index entry)."""
    if ident is None or ident.get("paper") != "indibias2024":
        return {}
    if ident["status"] == NOT_THE_PAPERS:
        return _refused(ident, "indibias2024")
    col = seat_label(ident["label"])
    rows = []
    for r in results:
        paper = (r.get("paper_effect_sizes") or {}).get(col)
        if paper is None:
            continue
        rows.append(
            _row(
                f"{r['test']} ({r['lang']})",
                paper,
                r.get("effect_size"),
                f"IndiBias Table {r.get('table')}, row {r.get('row')} ({r.get('label')}), {name_of(r['lang'])} {col}",
                note=f"{r['rendering']} rendering of the test, not the paper's sentences" if r.get("rendering") else "",
            )
        )
    return (
        {
            "paper": load("indibias2024")["citation"],
            "model": col,
            "basis": load("indibias2024")["models"][ident["label"]]["basis"],
            **_status(ident),
            "rows": rows,
        }
        if rows
        else {}
    )


def markdown(comp: dict, protocol: dict | None = None) -> str:
    """The report section: the paper's figure beside biaskit's, with the difference. ``protocol``: the
    run's ``summary["protocol"]`` (a run that is not comparable is flagged). A model named like a paper
    checkpoint that is not it gets the refusal and no figure."""
    if not comp:
        return ""
    if comp.get("status") == NOT_THE_PAPERS:
        return (
            "\n".join(
                [
                    "## Published figures",
                    "",
                    f"This model is named like **{comp['model']}** in {comp['paper']} ({comp.get('hub')}), but it is "
                    f"**not the paper's checkpoint**: {comp.get('why')}. No published figure is printed beside it.",
                ]
            )
            + "\n"
        )
    if not comp.get("rows"):
        return ""
    lines = ["## Published figures", ""]
    if comp.get("status") == VERIFIED:
        lines.append(f"This model is **{comp['model']}** in {comp['paper']} (checkpoint verified: {comp.get('why')}).")
    else:
        lines.append(
            f"Figures of **{comp['model']}** in {comp['paper']} (checkpoint: {comp['basis']}), **for orientation, "
            f"checkpoint not verified**: {comp.get('why') or 'its facts are unknown'}."
        )
    if comp.get("scope"):
        lines.append(f"**{comp['scope'][0].upper()}{comp['scope'][1:]}.**")
    if protocol is not None and not protocol.get("comparable"):
        lines.append(
            "**The run is not comparable with the paper's figures** (see Protocol): differences below are "
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
