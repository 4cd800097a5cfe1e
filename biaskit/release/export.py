"""Writers for a release's tabular exports: Parquet (Hugging Face ``datasets``), CrowS-Pairs- and
IndiBias-style CSV, StereoSet's original JSON layout. Column-wise, no per-row validation (the
records were validated when read)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .layout import (
    CAT_COLUMNS,
    CROWS_COLUMNS,
    INDIBIAS_COLUMNS,
    PAIR_BASE_COLUMNS,
    PAIR_VIEW_COLUMNS,
    TUPLE_COLUMNS,
    pair_columns,
)


def _write_parquet(path: Path, columns: dict[str, list], names: Sequence[str]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(n, pa.string()) for n in names])
    table = pa.table({n: pa.array(columns[n], type=pa.string()) for n in names}, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return table.nbytes


class PairParquetWriter:
    """A split's pairs as Parquet, written :data:`BATCH` rows at a time (one row group each): a release
    is written as a stream; only the column values of the rows not yet written are held (references to
    the records' strings, not the records). ``close()`` returns the Arrow bytes written (the card's
    ``num_bytes``)."""

    BATCH = 8192

    def __init__(self, path: Path, langs: Sequence[str]):
        self.path, self.langs = Path(path), list(langs)
        self.names = pair_columns(self.langs)
        self._cols: list[list] = [[] for _ in self.names]
        self._n = 0
        self._writer: Any = None  # a pyarrow ParquetWriter from the first batch on
        self.nbytes = 0

    def add(self, r: dict) -> None:
        cols = self._cols
        k = 0
        for c in PAIR_BASE_COLUMNS:
            cols[k].append(r.get(c))
            k += 1
        views = r["views"]
        for lg in self.langs:
            v = views.get(lg)
            for c in PAIR_VIEW_COLUMNS:
                cols[k].append(v.get(c) if v else None)
                k += 1
        self._n += 1
        if self._n >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._n and self._writer is not None:
            return
        schema = pa.schema([(n, pa.string()) for n in self.names])
        table = pa.table(
            {n: pa.array(col, type=pa.string()) for n, col in zip(self.names, self._cols, strict=False)}, schema=schema
        )
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self.path, schema)
        self._writer.write_table(table)
        self.nbytes += table.nbytes
        self._cols = [[] for _ in self.names]
        self._n = 0

    def close(self) -> int:
        self._flush()
        if self._writer is not None:
            self._writer.close()
        return self.nbytes


def cat_rows(cats: Sequence[dict]) -> list[dict]:
    """Flat CAT rows (StereoSet's flat layout + id, lang, split) from CAT record dicts."""
    out = []
    for c in cats:
        opts = {o["gold_label"]: o["sentence"] for o in c["options"]}
        out.append(
            {
                "id": c["cat_id"],
                "type": c["split"],
                "target": c["target"],
                "bias_type": c["bias_type"],
                "context": c["context"],
                "stereotype": opts.get("stereotype"),
                "anti-stereotype": opts.get("anti-stereotype"),
                "unrelated": opts.get("unrelated"),
                "lang": c.get("lang", "en"),
                "split": c["meta"]["split"],
                "source_id": c.get("source_id"),
            }
        )
    return out


def write_cat_parquet(path: Path, rows: Sequence[dict]) -> int:
    return _write_parquet(path, {c: [r[c] for r in rows] for c in CAT_COLUMNS}, CAT_COLUMNS)


def tuple_rows(tuples: Sequence[dict]) -> list[dict]:
    return [
        {
            "id": t["tuple_id"],
            "identity": t["identity"],
            "attribute": t["attribute"],
            "axis": t["axis"],
            "polarity": t["polarity"],
            "lang": t.get("lang", "en"),
            "split": t["meta"]["split"],
        }
        for t in tuples
    ]


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
    from biaskit.languages import indibias_languages

    src = {}
    for lg in indibias_languages():
        col_more, col_less = indibias_columns(lg, direction)
        src[col_more], src[col_less] = (lg, "sent_more"), (lg, "sent_less")
    return [src[c] for c in INDIBIAS_COLUMNS[2:6]]


def write_pair_csvs(folder: Path, records: Sequence[dict], langs: Sequence[str]) -> dict[str, int]:
    """Every CrowS-Pairs-style (per language and split) and IndiBias-style (per split, when the
    release has English and Hindi) CSV in one pass over the records; returns ``{path: rows}``
    (:class:`PairCsvWriter` on a list)."""
    w = PairCsvWriter(folder, langs)
    for pos, r in enumerate(records):
        w.add(pos, r)
    return w.close()


class PairCsvWriter:
    """The CrowS-Pairs- and IndiBias-style CSV files, written row by row as the pairs stream past.

    CrowS-Pairs' columns keep biaskit's convention (``sent_more`` = the more stereotypical sentence,
    both directions). IndiBias' columns are S1/S2 as in its paper: an antistereo pair is written with
    ``sent_less`` in ``modified_eng_sent_more``/``sent_more_hindi`` (the reader swaps it back)."""

    def __init__(self, folder: Path, langs: Sequence[str]):
        import csv

        from ..readers.pairs import indibias_columns
        from .layout import SPLITS, crows_csv_path, indibias_csv_path

        self._indibias_columns = indibias_columns
        self._files: list[Any] = []
        self.rows: dict[str, Any] = {}
        self._crows: dict[tuple[str, str], Any] = {}
        self._crows_rel: dict[tuple[str, str], str] = {}
        self._indi: dict[str, Any] = {}
        self._indi_rel: dict[str, str] = {}
        self._indi_n: dict[str, int] = {}
        self._layouts: dict[str, list[tuple[str, str]]] = {}  # direction -> where each IndiBias column comes from

        def writer(rel: str, header):
            path = Path(folder) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = open(path, "w", encoding="utf-8", newline="")
            self._files.append(fh)
            w = csv.writer(fh)
            w.writerow(header)
            self.rows[rel] = 0
            return w

        for lg in langs:
            for sp in SPLITS:
                rel = crows_csv_path(lg, sp)
                self._crows[(lg, sp)], self._crows_rel[(lg, sp)] = writer(rel, CROWS_COLUMNS), rel
        from biaskit.languages import indibias_languages

        self._indi_langs = indibias_languages()
        if all(lg in langs for lg in self._indi_langs):
            for sp in SPLITS:
                rel = indibias_csv_path(sp)
                self._indi[sp], self._indi_rel[sp], self._indi_n[sp] = writer(rel, INDIBIAS_COLUMNS), rel, 0

    def add(self, pos: int, r: dict) -> None:
        """The pair at row ``pos`` of pairs.jsonl (the CSVs' first column)."""
        sp, d, bt, views = r["split"], r["direction"], r["bias_type"], r["views"]
        for lg, v in views.items():
            m = v.get("meta") or {}
            # the csv writer writes None as an empty cell and str() of anything else
            self._crows[(lg, sp)].writerow(
                [
                    pos,
                    v["sent_more"],
                    v["sent_less"],
                    d,
                    bt,
                    m.get("annotations"),
                    m.get("anon_writer"),
                    m.get("anon_annotators"),
                ]
            )
            self.rows[self._crows_rel[(lg, sp)]] += 1
        if self._indi:
            if all(views.get(lg) is not None for lg in self._indi_langs):
                order = self._layouts.get(d)
                if order is None:
                    order = self._layouts[d] = _indibias_cells(d, self._indibias_columns)
                self._indi[sp].writerow([self._indi_n[sp], pos, *(views[lg][k] for lg, k in order), bt, d])
                self._indi_n[sp] += 1
                self.rows[self._indi_rel[sp]] += 1

    def close(self) -> dict[str, int]:
        for fh in self._files:
            fh.close()
        self._files = []
        return dict(self.rows)


#: the labels StereoSet's reader accepts (``dataloader.Label``)
STEREOSET_LABELS = ("stereotype", "anti-stereotype", "unrelated", "related")


def stereoset_labels(option: dict) -> list[dict]:
    """An option's ``labels`` in StereoSet's layout: the validators' labels with their ``human_id``:
    the annotator as the record names them (in a release, the pseudonym :mod:`.privacy` gave them,
    the same in ``cats.jsonl``), else ``a1``, ``a2``, ... in the order they were recorded.
    StereoSet's reader needs at least one label per sentence: an option without validator labels of
    its own (a reviewed translation, CATs released without a validation round) gets one entry,
    ``{"human_id": "gold", "label": <its gold label>}``."""
    labels = []
    for k, lab in enumerate(option.get("human_labels") or [], start=1):
        text = lab.get("label") if isinstance(lab, dict) else lab
        if text in STEREOSET_LABELS:
            who = lab.get("annotator") if isinstance(lab, dict) else None
            labels.append({"human_id": str(who) if who else f"a{k}", "label": text})
    return labels or [{"human_id": "gold", "label": option["gold_label"]}]


def write_stereoset_json(path: Path, cats: Sequence[dict], version: str) -> int:
    """StereoSet's original ``dev.json`` layout: ``{"version", "data": {"intrasentence": [...],
    "intersentence": [...]}}``, each example with ``id, target, bias_type, context, sentences`` and each
    sentence with ``sentence, id, labels [{label, human_id}], gold_label``."""
    data: dict[str, list] = {"intrasentence": [], "intersentence": []}
    for c in cats:
        sents = []
        for o in c["options"]:
            sents.append(
                {
                    "sentence": o["sentence"],
                    "id": o["sentence_id"],
                    "labels": stereoset_labels(o),
                    "gold_label": o["gold_label"],
                }
            )
        data[c["split"]].append(
            {
                "id": c["cat_id"],
                "target": c["target"],
                "bias_type": c["bias_type"],
                "context": c["context"],
                "sentences": sents,
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"version": version, "data": data}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return len(cats)
