"""An intrinsic metric's result folder, as ``biaskit evaluate correlate`` reads it (``summary.json``,
``report.md``, ``groups.csv`` with the group-level scores): written by ``evaluate ceat`` and ``evaluate
ilps`` (:mod:`.ceat`, :mod:`.ilps`), read by :func:`biaskit.evaluation.correlate.read_result_folder`.
Its own module, below the three: the metrics write it without importing the correlation, which runs
them."""

from __future__ import annotations

from pathlib import Path


def write_result_folder(out_dir: str | Path, summary: dict, report: str, **tables) -> None:
    """An intrinsic metric's result folder as `correlate` reads it, published whole: ``summary.json``,
    ``report.md`` and one CSV per table given (``groups=`` the group-level scores ``groups.csv``;
    ``None`` tables are left out)."""
    import pandas as pd

    from biaskit.io import atomic_dir, atomic_write_text, write_json, write_table
    from biaskit.public import public_obj, public_table, public_text

    with atomic_dir(out_dir, owns=("summary.json",)) as out:  # no path of this machine in it (biaskit.public)
        for name, rows in tables.items():
            if rows is not None:
                df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
                write_table(out / f"{name}.csv", public_table(df))
        write_json(out / "summary.json", public_obj(summary))
        atomic_write_text(out / "report.md", public_text(report))
