"""Numbers and Markdown tables in what biaskit writes for people: one set of formatters, one table writer.

Every report (``report.md`` of each evaluator, ``agreement.md``, ``judge.md``, the translation review
report, ``annotate status``, the release card, the comparison tables) and the console summaries use these,
so a number reads the same everywhere:

- :func:`num` -- a number with ``nd`` decimals (``0.12345`` -> ``"0.12"``); an integer (a count) as it is;
  ``None`` or NaN as ``missing`` (``"n/a"`` unless the report says otherwise);
- :func:`pct` -- a share as a percentage (``0.125`` -> ``"12.5%"``);
- :func:`sig` / :func:`pvalue` -- significant digits (``0.0123`` -> ``"0.012"``); a p-value below ``floor``
  as ``"< floor"``;
- :func:`md_table` -- a GitHub-flavoured Markdown table from a header and rows (``|`` in a cell escaped).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

MISSING = "n/a"


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral) and math.isnan(x))


def num(x: Any, nd: int = 2, *, missing: str = MISSING, sign: bool = False) -> str:
    """``x`` with ``nd`` decimals when it is a non-integer real number (``sign``: always with ``+``/``-``);
    an integer or any other value as ``str(x)``; ``None`` or NaN as ``missing``."""
    if _missing(x):
        return missing
    if isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral):
        return f"{x:{'+' if sign else ''}.{nd}f}"
    return str(x)


def pct(x: Any, nd: int = 1, *, missing: str = MISSING) -> str:
    """A share (0..1) as a percentage with ``nd`` decimals: ``0.125`` -> ``"12.5%"``."""
    return missing if _missing(x) else f"{x:.{nd}%}"


def sig(x: Any, digits: int = 2, *, missing: str = MISSING) -> str:
    """``x`` with ``digits`` significant digits (``format``'s ``g``): ``0.01234`` -> ``"0.012"``."""
    return missing if _missing(x) else f"{x:.{digits}g}"


def pvalue(p: Any, *, floor: float | None = None, missing: str = MISSING) -> str:
    """A p-value with two significant digits; below ``floor`` (when given) ``"< floor"``."""
    if _missing(p):
        return missing
    return f"< {floor:g}" if floor is not None and p < floor else sig(p, 2)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(
    header: Sequence[Any], rows: Iterable[Sequence[Any]], *, align: str | None = None, fmt: Callable[[Any], str] = str
) -> str:
    """A Markdown table (no trailing newline): the header line, the separator line and one line per row.

    ``align``: one letter per column, ``l`` (``---``, the renderer's default) or ``r`` (``---:``, for
    numbers); default all ``l``. Row cells are ``fmt(value)`` (pre-formatted strings pass through ``str``);
    every cell has ``|`` escaped and line breaks turned into spaces, so a value never splits a row; an
    empty cell is written ``| |``."""
    align = align or "l" * len(header)
    if len(align) != len(header) or set(align) - {"l", "r"}:
        raise ValueError(f"align must be one 'l' or 'r' per column, got {align!r} for {len(header)} columns")

    def line(cells: Iterable[str]) -> str:
        return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"

    out = [line(_cell(str(h)) for h in header), "|" + "".join("---|" if a == "l" else "---:|" for a in align)]
    out += [line(_cell(fmt(v)) for v in r) for r in rows]
    return "\n".join(out)
