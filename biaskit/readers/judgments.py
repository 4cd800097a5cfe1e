"""Judgments (one annotator's answer to one question of one task; :class:`~biaskit.schema.Judgment`)
as a pandas DataFrame, from a CSV/JSONL file written by ``biaskit annotate pull``/``import``, a
DataFrame or a list of dicts. An empty file is an empty table (a defined result, not an error);
column checks are :func:`biaskit.annotation.aggregate.prepare`'s job.

``columns``: only these columns are needed (those the file has are read): a large CSV/JSONL file is
then read column-wise (:func:`biaskit.readers.columnar.read_columns`: categorical columns, a few bytes
per cell) where that gives the values the general reader gives, else read whole as before."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

REQUIRED = ("task", "worker", "label")
#: judgment columns read as numbers (any numeric text in them reads the same)
NUMERIC_COLUMNS = ("settled_p_change", "lead_time")


def _blank(p: Path) -> bool:
    """The file holds nothing but white space (read a block at a time)."""
    with open(p, "rb") as fh:
        while block := fh.read(1 << 20):
            if block.strip():
                return False
    return True


def read_judgments(source: Any, columns: Sequence[str] | None = None):
    import pandas as pd

    from ..io import read_table

    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.exists() and p.is_file() and _blank(p):
            return pd.DataFrame()
        if columns is not None:
            from .columnar import read_columns

            df = read_columns(p, columns, numeric=NUMERIC_COLUMNS)
            if df is not None and all(c in df.columns for c in REQUIRED):
                return df  # else the whole table, for the message naming the columns it has
        return read_table(p)
    return pd.DataFrame(list(source))
