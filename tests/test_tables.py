"""biaskit.tables: the one set of number formatters and the one Markdown table writer of every report."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biaskit.tables import md_table, num, pct, pvalue, sig


def test_num_formats_reals_keeps_counts_and_names_what_is_missing():
    assert num(0.12345) == "0.12" and num(0.12345, 3) == "0.123" and num(2.0, 1) == "2.0"
    assert num(np.float64(50.0)) == "50.00" and num(np.float32(0.5), 1) == "0.5"  # numpy reals too
    assert num(7) == "7" and num(np.int64(7), 3) == "7" and num(True) == "True"  # counts stay counts
    assert num("intrasentence") == "intrasentence"
    assert num(None) == "n/a" and num(float("nan")) == "n/a" and num(np.nan, missing="—") == "—"
    assert num(math.inf) == "inf" and num(-math.inf, 1) == "-inf"
    assert num(0.0123, 3, sign=True) == "+0.012" and num(-1.5, sign=True) == "-1.50"


def test_pct_sig_and_pvalue():
    assert pct(0.125) == "12.5%" and pct(0.0734, 0) == "7%" and pct(1) == "100.0%"
    assert pct(None) == "n/a" and pct(None, missing="–") == "–"
    assert sig(0.012345) == "0.012" and sig(1234.5, 3) == "1.23e+03"
    assert pvalue(0.04567) == "0.046" and pvalue(0.0004) == "0.0004"
    assert pvalue(0.0004, floor=0.001) == "< 0.001" and pvalue(0.002, floor=0.001) == "0.002"
    assert pvalue(float("nan"), floor=0.001, missing="—") == "—"


def test_md_table_layout():
    assert md_table(["model", "LMS"], [["bert", "84.00"], ["gpt2", "n/a"]]) == (
        "| model | LMS |\n|---|---|\n| bert | 84.00 |\n| gpt2 | n/a |"
    )
    # right-aligned number columns, an empty header cell, values formatted by fmt
    assert md_table(["", "items", "share"], [["q1", 3, 0.5]], align="lrr", fmt=lambda v: num(v, 1)) == (
        "| | items | share |\n|---|---:|---:|\n| q1 | 3 | 0.5 |"
    )
    assert md_table(["a"], []) == "| a |\n|---|"


def test_md_table_keeps_a_value_in_its_cell():
    """A `|` or a line break inside a value would split the row: escaped and joined."""
    out = md_table(["setting", "value"], [["method", "P(U|M) over |C|"], ["note", "two\nlines"]])
    assert out.splitlines()[2] == "| method | P(U\\|M) over \\|C\\| |"
    assert out.splitlines()[3] == "| note | two lines |"


def test_md_table_refuses_a_wrong_alignment():
    with pytest.raises(ValueError, match="one 'l' or 'r' per column"):
        md_table(["a", "b"], [], align="l")
    with pytest.raises(ValueError):
        md_table(["a"], [], align="c")
