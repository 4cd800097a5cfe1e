"""Readers stream (issue 20): they hold one line (one row, one batch) at a time, so what they keep does
not grow with the file. Measured with tracemalloc (the Python heap), on files small enough for CI;
the RSS figures at 50 and 200 MB are benchmarks/streaming_memory.py's."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _records(path: Path, n_pairs: int) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from release import make_records  # the release benchmark's synthetic English + Hindi records

    make_records(path, n_pairs)
    return path


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _rows_and_peak(rows) -> tuple[int, int]:
    """How many rows ``rows()`` yields, and the Python heap's peak while they are read."""
    n = [0]

    def read():
        for _ in rows():
            n[0] += 1

    peak = _peak(read)
    return n[0], peak


def test_iter_jsonl_holds_one_line_at_a_time(tmp_path):
    """Reading 6,000 records (8 MB) peaks below 1 MB of Python heap: the file is never read whole (it
    was read, decoded and split: three copies of it)."""
    from biaskit.io import iter_jsonl

    src = _records(tmp_path / "p.jsonl", 3000)
    assert src.stat().st_size > 3_000_000
    n, peak = _rows_and_peak(lambda: iter_jsonl(src))
    assert peak < 1_000_000 and n == 6000


def test_the_csv_pair_reader_holds_one_row_at_a_time(tmp_path):
    from biaskit.readers import iter_pair_rows

    src = tmp_path / "p.csv"
    rows = ["sent_more,sent_less,direction,bias_type"] + [
        f"Women drive badly {i}.,Men drive badly {i}.,stereo,gender" for i in range(15_000)
    ]
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    n, peak = _rows_and_peak(lambda: iter_pair_rows(src))
    assert peak < 1_000_000 and n == 15_000


def test_curate_check_keeps_a_few_bytes_per_row(tmp_path):
    """The checker's pre-pass keeps two 64-bit digests per row (duplicates), the sentences of the
    English views the translated ones need, and counts: from 100 to 1,000 pairs (200 to 2,000 views)
    its peak grows by less than the views' own JSON (~650 bytes each): the views are never all held."""
    from biaskit.check import check_file_stream
    from biaskit.inventory import load_inventory

    inv = load_inventory()
    small, large = _records(tmp_path / "s.jsonl", 100), _records(tmp_path / "l.jsonl", 1000)
    out = tmp_path / "out.jsonl"
    check_file_stream(str(small), inventory=inv, out=str(out))  # one-time allocations (imports, caches) first
    peaks = {}
    for name, src in (("small", small), ("large", large)):
        res = {}
        peaks[name] = _peak(
            lambda: res.update(check_file_stream(str(src), inventory=inv, out=str(out), examples=3).as_dict())  # noqa: B023 (called right here)
        )
        assert res["views"] == (200 if name == "small" else 2000) and res["pairs"] == res["views"] // 2
    per_view = (peaks["large"] - peaks["small"]) / 1800
    print(f"curate check: {per_view:.0f} bytes of Python heap per extra view")
    assert per_view < 600, (peaks, per_view)
    assert sum(1 for _ in open(out, encoding="utf-8")) == 2000
    assert json.loads(open(out, encoding="utf-8").readline())["flags"] is not None
