"""A DataFrame as the CSV text ``DataFrame.to_csv(index=False)`` writes, made column-wise with Arrow.

pandas formats every cell and hands the rows to Python's ``csv`` writer; a table of a million rows
takes seconds that way. Here each column becomes an Arrow string array with pandas' own formatting
(numbers by NumPy's ``astype(str)``, decided once per distinct value; booleans ``True`` / ``False``;
missing values empty; other objects ``str()``), a cell that needs quotes is quoted by the ``csv``
module itself, and the cells are joined in Arrow, a block of rows at a time. A column of another kind
(dates, nested values) returns ``None``: the caller writes with pandas.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import numpy as np

BLOCK_ROWS = 100_000


def csv_blocks(df, sep: str = ",") -> Iterator[bytes] | None:
    """The UTF-8 bytes of ``df.to_csv(index=False, sep=sep)``, block by block, or None (see above)."""
    try:
        import pyarrow  # noqa: F401  (optional: without it pandas writes)
    except ImportError:
        return None
    if len(df.columns) < 2 or not df.columns.is_unique:
        return None  # pandas quotes a lone empty cell; repeated names: leave it to pandas
    kinds = [_kind(df[c]) for c in df.columns]
    if any(k is None for k in kinds):
        return None
    return _blocks(df, sep, kinds)


def _kind(col) -> str | None:
    import pandas as pd

    dt = col.dtype
    if pd.api.types.is_bool_dtype(dt) and not isinstance(dt, pd.CategoricalDtype):
        return "bool" if not col.hasnans else None
    if pd.api.types.is_integer_dtype(dt) and isinstance(dt, np.dtype):
        return "int"
    if pd.api.types.is_float_dtype(dt) and isinstance(dt, np.dtype):
        return "float"
    if pd.api.types.is_object_dtype(dt) or pd.api.types.is_string_dtype(dt) or isinstance(dt, pd.CategoricalDtype):
        return "text"
    return None


def _blocks(df, sep: str, kinds: list) -> Iterator[bytes]:
    import pyarrow as pa
    import pyarrow.compute as pc

    yield (_line([str(c) for c in df.columns], sep) + "\n").encode("utf-8")
    columns = [df[c] for c in df.columns]
    for lo in range(0, len(df), BLOCK_ROWS):
        cells = [_cells(col.iloc[lo : lo + BLOCK_ROWS], kind, sep) for col, kind in zip(columns, kinds, strict=True)]
        rows = pc.binary_join_element_wise(*cells, sep, null_handling="replace", null_replacement="")
        lines = pc.binary_join_element_wise(rows, pa.scalar(""), "\n")  # each row and its line end
        if isinstance(lines, pa.ChunkedArray):
            lines = lines.combine_chunks()
        offsets, data = lines.buffers()[1], lines.buffers()[2]
        bounds = np.frombuffer(offsets, dtype=np.int32)[lines.offset : lines.offset + len(lines) + 1]
        yield data.to_pybytes()[int(bounds[0]) : int(bounds[-1])]
        del cells, rows, lines


def _line(values: list[str], sep: str) -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter=sep, lineterminator="\n").writerow(values)
    return buf.getvalue()[:-1]


def _cells(col, kind: str, sep: str):
    """One column's cells as an Arrow string array (null: an empty cell), formatted as pandas does."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if kind == "bool":
        return pa.array(np.where(col.to_numpy(dtype=bool), "True", "False"), type=pa.string())
    if kind in ("int", "float"):
        v = col.to_numpy()
        missing = np.isnan(v) if kind == "float" else np.zeros(len(v), dtype=bool)
        bits = v.view(np.int64) if kind == "float" and v.dtype == np.float64 else v
        uniq, first, inv = np.unique(bits, return_index=True, return_inverse=True)
        text = v[first].astype(str)  # NumPy's repr of each distinct value, as pandas' to_csv formats numbers
        out = pa.array(text, type=pa.string()).take(pa.array(inv.ravel()))
        return pc.if_else(pa.array(missing), pa.nulls(len(v), pa.string()), out) if missing.any() else out
    arr = _text_array(col)
    special = pc.match_substring_regex(arr, "[" + _regex_escape(sep) + '"\\r\\n]')
    if pc.any(special).as_py():
        idx = np.flatnonzero(special.to_numpy(zero_copy_only=False))
        fixed = arr.to_pylist()
        for i in idx.tolist():
            fixed[i] = _line([fixed[i], ""], sep)[: -len(sep)]  # the cell as the csv module writes it
        arr = pa.array(fixed, type=pa.string())
    return arr


def _text_array(col):
    """A text column as an Arrow string array: strings as they are, missing values null, other objects
    ``str()`` (what the csv module writes of them)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    dt = col.dtype
    if isinstance(dt, pd.CategoricalDtype) and pd.api.types.is_string_dtype(dt.categories.dtype):
        return pc.cast(pa.array(col), pa.string())
    if pd.api.types.is_string_dtype(dt) and not pd.api.types.is_object_dtype(dt):
        return pc.cast(pa.array(col), pa.string())
    values = col.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):
        return pa.array(values, type=pa.string(), from_pandas=True)
    missing = pd.isna(values)
    strs = [None if m else (x if isinstance(x, str) else str(x)) for x, m in zip(values.tolist(), missing, strict=True)]
    return pa.array(strs, type=pa.string())


def _regex_escape(ch: str) -> Any:
    return "\\t" if ch == "\t" else "\\" + ch if ch in ".^$*+?()[]{}|\\-" else ch
