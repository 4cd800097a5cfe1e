"""Apply aggregated annotations to the data: the validated dataset, ready for evaluation.

``apply_annotations(opts)`` (an :class:`~.options.ApplyOptions`) reads the records that were pushed
(the kind's reader), takes the aggregated votes -- the output of ``biaskit annotate aggregate``, or,
without it, the judgments aggregated here with the same :func:`~.aggregate.prepare` and aggregator
(``method``, ``min_agree``; an annotator who answered twice counts with the latest answer) -- and lets
the kind decide (:meth:`~biaskit.annotation.kinds.base.TaskKind.apply`; what each kind accepts is in
its module). Accepted records are written to ``OUT`` with their labels and agreement attached and
their ``provenance`` unchanged; the others are counted and listed in ``OUT.rejected.jsonl`` (and
``OUT.needs_review.jsonl`` for kinds that send records back) with the reason, so nothing is lost
silently. The counts (and the command line, when given) go to ``OUT.summary.json``, which
``biaskit release build`` reads. ``report_dir`` asks the kind for its report (translation: engine
win rates, edits, flags).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import InputError

from .kinds import TEXT, ApplyResult, Votes, get_kind

if TYPE_CHECKING:
    from .options import ApplyOptions

AGG_COLUMNS = ("task", "question", "label", "status")


def _agg_index(df, source: str | None) -> dict[tuple[str, str], dict]:
    miss = [c for c in AGG_COLUMNS if c not in df.columns]
    if miss:
        raise InputError(
            f"missing column(s) {', '.join(miss)}.", path=source, fix="pass the output of `biaskit annotate aggregate`."
        )
    from biaskit.readers import UniqueIds

    from .aggregate import STATUSES, label_str

    out = {}
    seen = UniqueIds(
        source,
        "task and question",
        fix="aggregate once per task and question: pass the output of `biaskit annotate aggregate` unedited.",
    )
    for i, r in enumerate(df.to_dict(orient="records"), start=1):
        r = {k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
        if r["label"] is not None:  # labels as prepare() writes them ("1", not 1.0, after a CSV round trip)
            r["label"] = label_str(r["label"])
        if r["status"] not in STATUSES:
            raise InputError(
                f"unknown status {r['status']!r}.",
                path=source,
                row=i,
                column="status",
                fix=f"use one of {', '.join(STATUSES)} (the output of `biaskit annotate aggregate`).",
            )
        key = (str(r["task"]), str(r["question"]))
        seen.add(f"{key[0]} / {key[1]}", i)
        out[key] = r
    return out


def run_apply(opts: ApplyOptions, *, command: str | None = None) -> ApplyResult:
    """Apply annotations of ``opts.kind`` and write the outputs; returns the kind's :class:`ApplyResult`
    (``paths`` filled).

    ``opts``: the :class:`~biaskit.annotation.options.ApplyOptions` of ``biaskit annotate apply`` (what
    the command and the pipeline's review stages build; in Python ``ApplyOptions.from_kwargs(kind=...,
    data_path=..., out_path=..., judgments=...)``); ``aggregated`` and ``judgments`` may also be
    DataFrames. The kind's own options (``k.apply_options``, e.g. ``direction_policy``) are refused for
    a kind that has none of them. ``command``: the command line recorded in ``OUT.summary.json``."""
    import pandas as pd

    from biaskit.options import say, tell

    o = opts
    k = get_kind(o.kind)
    options = o.kind_options()
    extra = sorted(set(options) - set(k.apply_options))
    if extra:
        raise InputError(
            f"option(s) {', '.join(say(x) for x in extra)} do not apply to kind '{k.name}'.",
            fix="leave them out" + (f"; this kind takes {', '.join(k.apply_options)}" if k.apply_options else "") + ".",
        )
    records = k.load(o.data)
    if not records:
        raise InputError(
            f"no {k.records_name} in the file.",
            path=o.data,
            fix=f"pass the {k.records_name} file that was pushed for these annotations.",
        )
    known = {k.record_id(r) for r in records}
    judg = _judgments(o, k, known)
    table, source = _aggregated(o, k, judg, records)
    agg = _agg_index(table, source)
    _check_known(pd.Series([t for t, _ in agg], dtype=object), known, k, o.data, source, "aggregated")
    res = k.apply(records, Votes(agg, judg, data_path=str(o.data)), min_agree=o.min_agree, **options)
    res.counts = {"records": len(records), **res.counts}
    if judg is None and any(q.type == TEXT for q in k.questions):
        res.warnings.append(
            f"the corrections annotators typed were not read (kind '{k.name}' takes them from the "
            f"judgments): {tell('judgments')} (from `biaskit annotate pull`) to apply them."
        )
    _write(res, k, Path(o.out), command)
    if o.report_dir is not None:
        res.report = k.report(records, res, Path(o.report_dir))
    return res


def _judgments(o: ApplyOptions, k, known: set[str]):
    """The pulled judgments (None: not given), their task ids and questions checked against the data."""
    from biaskit.readers import read_judgments

    from .aggregate import check_columns, normalise_ids

    if o.judgments is None:
        return None
    src = str(o.judgments) if isinstance(o.judgments, (str, Path)) else None
    judg = normalise_ids(read_judgments(o.judgments))  # the one reading of task and worker ids
    if len(judg):
        check_columns(judg, src)
        _check_known(judg["task"], known, k, o.data, src, "judged")
        _check_questions(judg, k, src)
    return judg


def _aggregated(o: ApplyOptions, k, judg, records) -> tuple[Any, str | None]:
    """``(the aggregated votes, their file)``: ``o.aggregated`` read, or the judgments aggregated here
    (``o.method``, ``o.min_agree``; an annotator who answered twice counts with the latest answer)."""
    import pandas as pd

    from biaskit.io import read_table
    from biaskit.options import say, tell

    from .aggregate import aggregate

    aggregated = o.aggregated
    if aggregated is not None:
        source = None if isinstance(aggregated, pd.DataFrame) else str(aggregated)
        return (aggregated if isinstance(aggregated, pd.DataFrame) else read_table(aggregated)), source
    if judg is None:
        raise InputError(
            "nothing to apply: give the aggregated votes or the judgments.",
            fix=f"{tell('aggregated')} (from `biaskit annotate aggregate`) or "
            f"{say('judgments')} (from `biaskit annotate pull`).",
        )
    src = str(o.judgments) if isinstance(o.judgments, (str, Path)) else None
    table, _ = aggregate(
        k.votes(judg, records),
        method=o.method,
        min_agree=o.min_agree,
        duplicates="last",
        allowed=k.allowed_labels() or None,
        source=src,
    )
    return table, None


def _write(res: ApplyResult, k, out: Path, command: str | None) -> None:
    """The accepted records to ``out``, the others to ``OUT.<name>.jsonl``, the counts (and ``command``)
    to ``OUT.summary.json``; the paths go to ``res.paths``."""
    from biaskit.io import write_json, write_jsonl

    k.write(out, res.accepted)
    res.paths["out"] = out
    for name, rows in res.files.items():
        res.paths[name] = write_jsonl(out.with_name(f"{out.stem}.{name}.jsonl"), rows)
    res.paths["summary"] = out.with_name(f"{out.stem}.summary.json")
    write_json(res.paths["summary"], {**res.summary(), **({"command": command} if command else {})})


def _check_questions(judg, k, source) -> None:
    """Every judgment answers a question the kind asks (a typo would otherwise be ignored)."""
    if "question" not in judg.columns:
        return
    known = {q.name for q in k.questions} | set(k.allowed_labels())
    bad = ~judg["question"].astype(str).isin(known) & judg["question"].notna()
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise InputError(
            f"unknown question '{judg['question'].iloc[i]}' for kind '{k.name}'.",
            path=source,
            row=i + 1,
            column="question",
            fix=f"use the questions of the kind: {', '.join(sorted(known))}.",
        )


def _check_known(tasks, known: set[str], k, data_path, source, what: str) -> None:
    unknown = sorted(set(tasks.astype(str)) - known)
    if unknown:
        raise InputError(
            f"{len(unknown)} {what} task(s) are not in the data (the {k.records_name} file "
            f"{data_path}), e.g. '{unknown[0]}'.",
            path=source,
            fix=f"pass the {k.records_name} file that was pushed for these annotations.",
        )


def apply_annotations(opts: ApplyOptions, *, command: str | None = None) -> dict:
    """:func:`run_apply` and return its summary (counts and the files written)."""
    return run_apply(opts, command=command).summary()
