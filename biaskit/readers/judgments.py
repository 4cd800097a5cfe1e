"""Judgments (one annotator's answer to one question of one task; :class:`~biaskit.schema.Judgment`)
as a pandas DataFrame, from a CSV/JSONL file written by ``biaskit annotate pull``/``import``, a
DataFrame or a list of dicts. An empty file is an empty table (a defined result, not an error);
column checks are :func:`biaskit.annotation.aggregate.prepare`'s job."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def read_judgments(source: Any):
    import pandas as pd

    from ..io import read_table

    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.exists() and p.is_file() and not p.read_bytes().strip():
            return pd.DataFrame()
        return read_table(p)
    return pd.DataFrame(list(source))
