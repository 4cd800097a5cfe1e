"""Writers for a release's tabular exports: Parquet (Hugging Face ``datasets``), CrowS-Pairs- and
IndiBias-style CSV, StereoSet's original JSON layout. Column-wise, no per-row validation (the
records were validated when read)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from .layout import (CAT_COLUMNS, CROWS_COLUMNS, INDIBIAS_COLUMNS, PAIR_BASE_COLUMNS, PAIR_VIEW_COLUMNS,
                     TUPLE_COLUMNS, pair_columns)


def pair_table_columns(records: Sequence[dict], langs: Sequence[str]) -> dict[str, list]:
    """Wide columns: one row per pair, ``sent_more_<lang>`` ... per language (None when a view is missing)."""
    cols: dict[str, list] = {c: [r.get(c) for r in records] for c in PAIR_BASE_COLUMNS}
    for lg in langs:
        views = [r["views"].get(lg) for r in records]
        for c in PAIR_VIEW_COLUMNS:
            cols[f"{c}_{lg}"] = [v.get(c) if v else None for v in views]
    return cols


def _write_parquet(path: Path, columns: dict[str, list], names: Sequence[str]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(n, pa.string()) for n in names])
    table = pa.table({n: pa.array(columns[n], type=pa.string()) for n in names}, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return table.nbytes


def write_pair_parquet(path: Path, records: Sequence[dict], langs: Sequence[str]) -> int:
    return _write_parquet(path, pair_table_columns(records, langs), pair_columns(langs))


def cat_rows(cats: Sequence[dict]) -> list[dict]:
    """Flat CAT rows (StereoSet's flat layout + id, lang, split) from CAT record dicts."""
    out = []
    for c in cats:
        opts = {o["gold_label"]: o["sentence"] for o in c["options"]}
        out.append({"id": c["cat_id"], "type": c["split"], "target": c["target"], "bias_type": c["bias_type"],
                    "context": c["context"], "stereotype": opts.get("stereotype"),
                    "anti-stereotype": opts.get("anti-stereotype"), "unrelated": opts.get("unrelated"),
                    "lang": c.get("lang", "en"), "split": c["meta"]["split"], "source_id": c.get("source_id")})
    return out


def write_cat_parquet(path: Path, rows: Sequence[dict]) -> int:
    return _write_parquet(path, {c: [r[c] for r in rows] for c in CAT_COLUMNS}, CAT_COLUMNS)


def tuple_rows(tuples: Sequence[dict]) -> list[dict]:
    return [{"id": t["tuple_id"], "identity": t["identity"], "attribute": t["attribute"], "axis": t["axis"],
             "polarity": t["polarity"], "lang": t.get("lang", "en"), "split": t["meta"]["split"]} for t in tuples]


def write_tuple_parquet(path: Path, rows: Sequence[dict]) -> int:
    return _write_parquet(path, {c: [r[c] for r in rows] for c in TUPLE_COLUMNS}, TUPLE_COLUMNS)


def _csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def _indibias_cells(direction: str, indibias_columns) -> list[tuple[str, str]]:
    """``(lang, field)`` for each IndiBias sentence column (``INDIBIAS_COLUMNS[2:6]``) of a pair with this
    direction. IndiBias' layout is positional (S1, S2): an antistereo pair's sent_more goes back to the
    *_less* column (see :func:`biaskit.readers.pairs.indibias_columns`)."""
    src = {}
    for lg in ("en", "hi"):
        col_more, col_less = indibias_columns(lg, direction)
        src[col_more], src[col_less] = (lg, "sent_more"), (lg, "sent_less")
    return [src[c] for c in INDIBIAS_COLUMNS[2:6]]


def write_pair_csvs(folder: Path, records: Sequence[dict], langs: Sequence[str]) -> dict[str, int]:
    """Every CrowS-Pairs-style (per language and split) and IndiBias-style (per split, when the
    release has English and Hindi) CSV in one pass over the records; returns ``{path: rows}``.

    CrowS-Pairs' columns keep biaskit's convention (``sent_more`` = the more stereotypical sentence,
    both directions). IndiBias' columns are S1/S2 as in its paper: an antistereo pair is written with
    ``sent_less`` in ``modified_eng_sent_more``/``sent_more_hindi`` (the reader swaps it back)."""
    from ..readers.pairs import indibias_columns
    from .layout import SPLITS, crows_csv_path, indibias_csv_path

    crows: dict[tuple[str, str], list] = {(lg, sp): [] for lg in langs for sp in SPLITS}
    indi = {sp: [] for sp in SPLITS} if ("en" in langs and "hi" in langs) else None
    layouts: dict[str, list[tuple[str, str]]] = {}      # direction -> where each IndiBias text column comes from
    for pos, r in enumerate(records):
        sp, d, bt, views = r["split"], r["direction"], r["bias_type"], r["views"]
        for lg, v in views.items():
            m = v.get("meta") or {}
            # the csv writer writes None as an empty cell and str() of anything else
            crows[(lg, sp)].append([pos, v["sent_more"], v["sent_less"], d, bt, m.get("annotations"),
                                    m.get("anon_writer"), m.get("anon_annotators")])
        if indi is not None:
            en, hi = views.get("en"), views.get("hi")
            if en is not None and hi is not None:
                order = layouts.get(d)
                if order is None:
                    order = layouts[d] = _indibias_cells(d, indibias_columns)
                rows = indi[sp]
                rows.append([len(rows), pos, *(views[lg][k] for lg, k in order), bt, d])
    out = {}
    for (lg, sp), rows in crows.items():
        rel = crows_csv_path(lg, sp)
        _csv(folder / rel, CROWS_COLUMNS, rows)
        out[rel] = len(rows)
    for sp, rows in (indi or {}).items():
        rel = indibias_csv_path(sp)
        _csv(folder / rel, INDIBIAS_COLUMNS, rows)
        out[rel] = len(rows)
    return out


#: the labels StereoSet's reader accepts (``dataloader.Label``)
STEREOSET_LABELS = ("stereotype", "anti-stereotype", "unrelated", "related")


def stereoset_labels(option: dict) -> list[dict]:
    """An option's ``labels`` in StereoSet's layout: the validators' labels with pseudonymous
    ``human_id`` s (``a1``, ``a2``, ... in the order they were recorded; annotator ids never leave
    biaskit). StereoSet's reader needs at least one label per sentence: an option without validator
    labels of its own (a reviewed translation, CATs released without a validation round) gets one
    entry, ``{"human_id": "gold", "label": <its gold label>}``."""
    labels = []
    for k, lab in enumerate(option.get("human_labels") or [], start=1):
        text = lab.get("label") if isinstance(lab, dict) else lab
        if text in STEREOSET_LABELS:
            labels.append({"human_id": f"a{k}", "label": text})
    return labels or [{"human_id": "gold", "label": option["gold_label"]}]


def write_stereoset_json(path: Path, cats: Sequence[dict], version: str) -> int:
    """StereoSet's original ``dev.json`` layout: ``{"version", "data": {"intrasentence": [...],
    "intersentence": [...]}}``, each example with ``id, target, bias_type, context, sentences`` and each
    sentence with ``sentence, id, labels [{label, human_id}], gold_label``."""
    data: dict[str, list] = {"intrasentence": [], "intersentence": []}
    for c in cats:
        sents = []
        for o in c["options"]:
            sents.append({"sentence": o["sentence"], "id": o["sentence_id"], "labels": stereoset_labels(o),
                          "gold_label": o["gold_label"]})
        data[c["split"]].append({"id": c["cat_id"], "target": c["target"], "bias_type": c["bias_type"],
                                 "context": c["context"], "sentences": sents})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": version, "data": data}, ensure_ascii=False, indent=1) + "\n",
                    encoding="utf-8")
    return len(cats)
