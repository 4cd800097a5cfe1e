"""Some columns of a large CSV/TSV/JSONL table, read column-wise with Arrow (a million judgments in
seconds, a few bytes per cell).

:func:`read_columns` gives the named columns as pandas ``Categorical`` columns of strings (one
integer code per row, each distinct value once), read in blocks: an unused column never becomes
Python objects. It is a shortcut with the meaning of :func:`biaskit.io.read_table`: it answers only
where the general reader would give the same values, and returns ``None`` otherwise, so that the
caller reads the file the general way (which also names what is wrong in a bad file):

- the file's bytes hold no control character (:mod:`biaskit.textcheck`), no lone carriage return,
  no line over :data:`~biaskit.textcheck.MAX_TEXT` bytes and, in JSONL, no escape that decodes to
  one; no value of a column read is longer than that (a CSV cell quoted over several lines of a
  column not read is not measured: the one check the general reader makes that this skips);
- Arrow parses it (valid UTF-8, the same number of fields on every CSV row, JSON objects whose
  wanted values are strings or null, no key given twice);
- a CSV header names each column once;
- no CSV value of a wanted column is one that pandas' CSV parser would turn into a number or a
  boolean and back into other text (``01``, ``1.0``, ``+1``, ``1e3``, ``nan``, ``true``): the
  general reader would read ``01`` as the number 1 (a canonical integer such as ``12`` or ``-3``
  reads back as itself, so it is fine).

Empty CSV cells and JSON nulls are missing values (NaN), as in the general reader.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..textcheck import MAX_TEXT

BLOCK = 1 << 20  # bytes per Arrow block and per scan of the raw file (small blocks: a lower peak)
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
_OTHER_BYTES = bytes(b for b in range(256) if b not in _CONTROL_BYTES)
_JSON_ESCAPE = re.compile(rb"\\(?:u00[01][0-9a-fA-F]|[bf])")
# a value pandas' CSV parser reads as a number or a boolean (RE2 syntax, for Arrow); a canonical integer
# (no sign but '-', no leading zero, at most 18 digits) reads back as the same text and is fine
_NUMERIC = r"(?i)^\s*[-+]?((\d+\.?\d*|\.\d+)(e[-+]?\d+)?|inf|infinity|nan)\s*$|^(true|false)$"
_CANONICAL_INT = r"^(0|-?[1-9]\d{0,17})$"


def read_columns(path: str | Path, columns: Sequence[str], *, numeric: Sequence[str] = ()) -> Any | None:
    """The ``columns`` the file has, in the file's order, as a DataFrame of categorical columns;
    ``None`` when the general reader must read the file (see the module docstring). ``numeric``: columns
    the caller reads as numbers, where any numeric text is fine."""
    try:
        import pyarrow  # noqa: F401  (Arrow is optional: without it the general reader reads)
    except ImportError:
        return None
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl", ".ndjson") or not path.is_file():
        return None
    jsonl = suffix in (".jsonl", ".ndjson")
    if not _raw_bytes_ok(path, jsonl):
        return None
    import pyarrow as pa

    try:
        if jsonl:
            return _read_jsonl(path, columns)
        return _read_csv(path, columns, "\t" if suffix == ".tsv" else ",", numeric)
    except (pa.ArrowException, UnicodeDecodeError, ValueError):
        return None


def _raw_bytes_ok(path: Path, jsonl: bool) -> bool:
    """No byte the general reader refuses or reads differently (module docstring), block by block."""
    import numpy as np

    cr_before = False  # the previous block ended with a CR
    line = 0  # bytes of the line the previous block ended in
    edge = b""  # its last bytes: an escape cut in two
    with open(path, "rb") as fh:
        while True:
            block = fh.read(BLOCK)
            if not block:
                return not cr_before
            if block.translate(None, _OTHER_BYTES):  # a control character
                return False
            if cr_before and not block.startswith(b"\n"):
                return False
            if b"\r" in block:  # every CR must start a CRLF (a lone CR ends lines in old Mac files)
                lone = block.count(b"\r") - block.count(b"\r\n") - block.endswith(b"\r")
                if lone:
                    return False
            cr_before = block.endswith(b"\r")
            if jsonl and (b"\\" in block or b"\\" in edge) and _JSON_ESCAPE.search(edge + block):
                return False
            ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
            if not len(ends):
                line += len(block)
            else:
                longest = max(line + int(ends[0]), int(np.diff(ends).max(initial=0)) - 1)
                line = len(block) - int(ends[-1]) - 1
                if longest > MAX_TEXT:
                    return False
            if line > MAX_TEXT:
                return False
            edge = block[-8:]


def _header(path: Path, sep: str) -> list[str] | None:
    import csv

    with open(path, encoding="utf-8-sig", newline="") as fh:
        row = next(csv.reader(fh, delimiter=sep), None)
    if not row or len(set(row)) != len(row) or any(not c for c in row):
        return None  # pandas renames repeated and empty names ("a.1", "Unnamed: 0")
    return row


def _read_csv(path: Path, columns: Sequence[str], sep: str, numeric: Sequence[str] = ()):
    import pyarrow as pa
    import pyarrow.csv as pcsv

    header = _header(path, sep)
    if header is None:
        return None
    want = [c for c in header if c in set(columns)]
    dict_type = pa.dictionary(pa.int32(), pa.string())
    convert = pcsv.ConvertOptions(
        column_types={c: dict_type for c in want},
        include_columns=want,  # the other columns are split into cells, never converted
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )
    reader = pcsv.open_csv(
        path,
        memory_pool=_pool(),
        read_options=pcsv.ReadOptions(block_size=BLOCK, encoding="utf8"),
        parse_options=pcsv.ParseOptions(delimiter=sep),
        convert_options=convert,
    )
    acc = _Columns(want)
    for batch in reader:
        acc.add([batch.column(batch.schema.get_field_index(c)) for c in want])
        del batch
    frame = acc.frame()
    if frame is None or not _csv_values_as_text(frame, skip=numeric):
        return None
    return frame


def _lengths_ok(values) -> bool:
    """No value longer than MAX_TEXT characters (the general reader refuses those): checked on a column's
    distinct values, once."""
    import pyarrow.compute as pc

    return not len(values) or (pc.max(pc.utf8_length(values)).as_py() or 0) <= MAX_TEXT


def _csv_values_as_text(frame, skip: Sequence[str] = ()) -> bool:
    """pandas' CSV parser would give every value of every column (but ``skip``) back as the same text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for col in frame.columns:
        if col in skip:
            continue
        cats = pa.array(frame[col].cat.categories.to_numpy(dtype=object), type=pa.string())
        numeric = pc.match_substring_regex(cats, _NUMERIC)
        canonical = pc.match_substring_regex(cats, _CANONICAL_INT)
        if pc.any(pc.and_(numeric, pc.invert(canonical))).as_py():
            return False
    return True


def _read_jsonl(path: Path, columns: Sequence[str]):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    want = list(dict.fromkeys(columns))
    schema = pa.schema([(c, pa.string()) for c in want])
    reader = pj.open_json(
        path,
        memory_pool=_pool(),
        read_options=pj.ReadOptions(block_size=BLOCK),
        parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
    )
    acc = _Columns(want)
    for batch in reader:
        acc.add([pc.dictionary_encode(batch.column(i), memory_pool=_pool()) for i in range(len(want))])
    frame = acc.frame()
    if frame is None:
        return None
    # a key absent from every line is no column (as pandas makes none); an all-null one may be either
    empty = [c for c in frame.columns if acc.n_values[c] == 0]
    if empty:
        present = _json_keys(path, empty)
        frame = frame.drop(columns=[c for c in empty if c not in present])
    return frame


def _json_keys(path: Path, keys: Sequence[str]) -> set[str]:
    """Which of ``keys`` occur as a key in a JSON lines file (a string followed by a colon)."""
    import json

    pattern = re.compile(rb'"(' + b"|".join(re.escape(json.dumps(k)[1:-1].encode()) for k in keys) + rb')"\s*:')
    found: set[str] = set()
    tail = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(BLOCK)
            if not block:
                return found
            data = tail + block
            found.update(json.loads(b'"' + m.group(1) + b'"') for m in pattern.finditer(data))
            tail = data[-(max(len(k) for k in keys) * 6 + 64) :]


def give_back_memory() -> None:
    """Return the memory freed while a large table was read to the system (Arrow's pools and the C
    allocator keep freed blocks; what is computed next would otherwise add its own on top: 180 MB of a
    1 GB peak at a million judgments). A no-op where the C library has no ``malloc_trim``."""
    import ctypes
    import ctypes.util

    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    _pool().release_unused()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _pool():
    """Arrow's memory pool for reading: the system allocator, which gives freed blocks back (Arrow's
    default keeps them for itself, and the statistics computed after a read would stack on top)."""
    import pyarrow as pa

    return pa.system_memory_pool()


def categorical(codes, categories):
    """``pandas.Categorical.from_codes`` for categories known to be distinct (the dictionary of a column):
    without pandas' check, which builds a hash table of every category as a Python string (a million
    task ids: a hundred MB) and keeps it."""
    import pandas as pd

    try:
        dtype = pd.CategoricalDtype._from_fastpath(categories, False)
    except (AttributeError, TypeError):  # a pandas without the private constructor: the checked one
        dtype = pd.CategoricalDtype(categories)
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def code_type(n_values: int):
    """The integer type pandas gives the codes of a categorical of ``n_values`` categories."""
    import numpy as np

    for t in (np.int8, np.int16, np.int32):
        if n_values < np.iinfo(t).max:
            return t
    return np.int64


class _Columns:
    """Dictionary-encoded Arrow blocks of some columns -> one pandas ``Categorical`` per column (each
    block's dictionary mapped into one for the whole file)."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._codes: dict[str, list] = {c: [] for c in self.names}
        self._dicts: dict[str, list] = {c: [] for c in self.names}
        self.n_values = dict.fromkeys(self.names, 0)
        self.rows = 0

    def add(self, arrays: Sequence[Any]) -> None:
        import pyarrow.compute as pc

        for name, arr in zip(self.names, arrays, strict=True):
            if hasattr(arr, "combine_chunks"):
                arr = arr.combine_chunks(memory_pool=_pool())
            indices = pc.fill_null(arr.indices, -1) if arr.null_count else arr.indices
            # a copy in the fewest bytes the block's dictionary allows: the Arrow block is let go
            self._codes[name].append(indices.to_numpy(zero_copy_only=False).astype(code_type(len(arr.dictionary))))
            self._dicts[name].append(arr.dictionary)
            self.n_values[name] += len(arr) - arr.null_count
        self.rows += len(arrays[0]) if arrays else 0

    def frame(self):
        import numpy as np
        import pandas as pd
        import pyarrow as pa
        import pyarrow.compute as pc

        cols = {}
        for name in self.names:
            dicts = self._dicts.pop(name)
            codes = self._codes.pop(name)
            values = (
                pa.chunked_array(dicts, type=pa.string()).combine_chunks(memory_pool=_pool())
                if dicts
                else pa.array([], pa.string())
            )
            if values.null_count or not _lengths_ok(values):
                return None
            enc = pc.dictionary_encode(values, memory_pool=_pool())  # codes in first-appearance order
            glob = enc.indices.to_numpy(zero_copy_only=False)
            uniques = enc.dictionary
            offsets = np.cumsum([0] + [len(d) for d in dicts])
            out = np.empty(self.rows, dtype=code_type(len(uniques)))
            at = 0
            for k in range(len(codes)):
                c = codes[k]
                codes[k] = None
                part = glob[offsets[k] : offsets[k + 1]].astype(out.dtype)
                out[at : at + len(c)] = np.where(c >= 0, part[np.maximum(c, 0)] if len(part) else -1, -1)
                at += len(c)
            cols[name] = categorical(out, pd.Index(pd.array(uniques, dtype="str")))
        return pd.DataFrame(cols)  # the memory the read freed is given back by the caller, after its own work
