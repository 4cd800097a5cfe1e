"""StereoSet's released validator labels -> biaskit judgments (``biaskit annotate from-stereoset``).

StereoSet's original ``dev.json`` keeps, for every sentence of every CAT, the labels its validators
gave (``labels: [{"human_id", "label"}]``, five per sentence, the same five people on the three
sentences of a CAT) next to the writer's ``gold_label``. :func:`stereoset_judgments` turns them into
the judgment rows that ``annotate pull`` writes for the ``cat`` kind, so that ``annotate agreement``,
``aggregate`` and ``apply`` run on StereoSet's own annotations exactly as on a new validation round:

=============  ============================================================================
``task``       the CAT's biaskit id (``cat_id``, from :func:`biaskit.readers.read_cats`: the id
               ``push --kind cat`` and evaluation use for the same file)
``worker``     the validator's ``human_id``
``question``   ``option_<gold_label>``: the ``cat`` kind's question for the sentence written as
               that label (``option_stereotype`` = "what did this validator call the sentence
               written as the stereotype")
``label``      the validator's label
``qtype``, ``kind``        ``choice``, ``cat``
``bias_type``, ``target``  the CAT's domain and target term (``annotate agreement`` groups by them)
``reference``  the writer's label (= ``gold_label``; the reference of StereoSet's agreement)
``split``, ``stereoset_id``, ``sentence_id``  StereoSet's task type, example id and sentence id
=============  ============================================================================

Labels outside the three the ``cat`` kind asks (the released file also has ``related``, which
the paper does not describe) are kept by default (``other_labels="keep"``: a vote that disagrees
with the writer, as it was cast) or left out (``"drop"``: the validator then did not answer that
sentence); both are counted in the summary. ``annotate apply --kind cat --judgments`` checks labels
against the kind's options: with kept ``related`` labels, aggregate first (``annotate aggregate``
without ``--kind``) and pass ``--aggregated``.

The summary reports StereoSet's retention rule (§4.3): a CAT is kept when, on each of its
sentences, at least ``min_agree`` (3) of its validators gave the writer's label (and no other label
as many, which with 5 validators always holds) -- the rule of ``apply --kind cat``
(:mod:`.cat_rule`), computed with the same functions as ``annotate agreement`` (:mod:`.targets`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import InputError

if TYPE_CHECKING:
    from .options import FromStereosetOptions

OTHER_LABELS = ("keep", "drop")
CAT_LABELS = ("stereotype", "anti-stereotype", "unrelated")
COLUMNS = [
    "task",
    "worker",
    "question",
    "label",
    "qtype",
    "kind",
    "bias_type",
    "target",
    "reference",
    "split",
    "stereoset_id",
    "sentence_id",
]


def stereoset_judgments(path: str | Path, *, other_labels: str = "keep", min_agree: int = 3):
    """(judgments DataFrame, summary dict) from StereoSet's original JSON (see the module docstring)."""
    import pandas as pd

    from biaskit.readers import read_cats

    _check_input(path, other_labels, min_agree)
    cats = read_cats(path, format="stereoset")
    rows, counts, values = _validator_rows(cats, path, other_labels)
    if not rows:
        raise InputError(
            "no validator labels in the file.",
            path=path,
            fix='use StereoSet\'s original dev.json, whose sentences have "labels".',
        )
    df = pd.DataFrame(rows, columns=COLUMNS)
    summary = {
        "source": str(path),
        "n_cats": len(cats),
        "n_cats_per_split": dict(Counter(c.split for c in cats)),
        "n_sentences": counts["sentences"],
        "n_sentences_without_labels": counts["unlabelled"],
        "n_labels": int(sum(values.values())),
        "labels": dict(values.most_common()),
        "other_labels": other_labels,
        "n_other_labels": int(sum(v for k, v in values.items() if k not in CAT_LABELS)),
        "n_other_labels_dropped": counts["dropped"],
        "n_empty_labels": counts["empty"],
        "n_judgments": len(df),
        "n_annotators": int(df["worker"].nunique()),
        "n_duplicate_answers": int(df.duplicated(["task", "question", "worker"], keep="first").sum()),
    }
    summary["retention"] = _retention(df, min_agree)
    return df, summary


def _check_input(path: str | Path, other_labels: str, min_agree: int) -> None:
    """The settings, and that ``path`` is StereoSet's original file (the only one with validator labels)."""
    from biaskit.options import say
    from biaskit.readers.cats import detect_cat_format

    if other_labels not in OTHER_LABELS:
        raise InputError(
            f"unknown policy for other labels '{other_labels}'.", fix=f"use one of {', '.join(OTHER_LABELS)}."
        )
    if min_agree < 1:
        raise InputError(f"{say('min_agree')} must be at least 1, got {min_agree}.", fix="use 3 (StereoSet: 3 of 5).")
    fmt = detect_cat_format(path)
    if fmt != "stereoset":
        raise InputError(
            f"this is a {fmt} CAT file: it has no validator labels.",
            path=path,
            fix="use StereoSet's original dev.json (`biaskit data download stereoset-dev`), whose "
            "sentences carry the validators' labels.",
        )


def _validator_rows(cats, path: str | Path, other_labels: str) -> tuple[list[dict[str, Any]], Counter, Counter]:
    """``(one judgment row per validator label, counts of sentences / unlabelled / dropped / empty,
    how often each label value occurs)``; ``other_labels="drop"`` leaves out labels other than the three."""
    rows: list[dict[str, Any]] = []
    values: Counter = Counter()
    counts: Counter = Counter({"sentences": 0, "unlabelled": 0, "dropped": 0, "empty": 0})
    for cat in cats:
        for o in cat.options:
            counts["sentences"] += 1
            if not o.human_labels:
                counts["unlabelled"] += 1
            for h in o.human_labels:
                lab = (h.label or "").strip()
                if not lab:
                    counts["empty"] += 1
                    continue
                values[lab] += 1
                if lab not in CAT_LABELS and other_labels == "drop":
                    counts["dropped"] += 1
                    continue
                if not h.annotator:
                    raise InputError(
                        f"a label of sentence {o.source_id or o.sentence} (example {cat.source_id}) has no human_id.",
                        path=path,
                        fix='each label needs {"human_id": ..., "label": ...} as in StereoSet\'s file.',
                    )
                rows.append(
                    {
                        "task": cat.cat_id,
                        "worker": str(h.annotator),
                        "question": f"option_{o.gold_label}",
                        "label": lab,
                        "qtype": "choice",
                        "kind": "cat",
                        "bias_type": cat.bias_type,
                        "target": cat.target,
                        "reference": o.gold_label,
                        "split": cat.split,
                        "stereoset_id": cat.source_id,
                        "sentence_id": o.source_id,
                    }
                )
    return rows, counts, values


def _retention(df, min_agree: int) -> dict:
    """StereoSet's rule (>= ``min_agree`` validators gave the writer's label on every sentence of a
    CAT) and the agreement with the writer's label, overall, per split and per bias type."""
    import numpy as np

    from .aggregate import count_votes, prepare
    from .targets import item_reference_votes, summarize_tasks, task_table

    # a validator listed twice on a sentence counts once
    prep = prepare(df, duplicates="first", keep=("bias_type", "split", "reference"))
    d = prep.df
    c = count_votes(d)
    _, ref_votes = item_reference_votes(c, d["reference"].astype(object).to_numpy())
    top = np.zeros(c.n_items)
    np.maximum.at(top, c.item, c.count)
    tasks = task_table(c, ref_votes, top, min_agree)
    first = d.drop_duplicates("task").set_index("task")
    vals, cnts = np.unique(c.n, return_counts=True)
    out: dict[str, Any] = {
        "rule": f">= {min_agree} validators gave the writer's label on each sentence of the CAT (StereoSet §4.3)",
        "validators_per_sentence": {"min": int(c.n.min()), "max": int(c.n.max()), "mode": int(vals[np.argmax(cnts)])},
        **summarize_tasks(tasks, min_agree),
    }
    for col, key in (("split", "per_split"), ("bias_type", "per_bias_type")):
        by = tasks["task"].map(first[col])
        out[key] = {str(v): summarize_tasks(tasks[by == v], min_agree) for v in sorted(by.unique())}
    return out


def from_stereoset(opts: FromStereosetOptions, *, command: str | None = None) -> dict:
    """``biaskit annotate from-stereoset``: write the judgments to ``opts.out`` (CSV/JSONL by extension)
    and the summary to ``OUT.summary.json``; returns the summary."""
    from biaskit.io import write_json, write_table

    df, summary = stereoset_judgments(opts.data, other_labels=opts.other_labels, min_agree=opts.min_agree)
    out = Path(opts.out)
    write_table(out, df)
    summary["out"] = str(out)
    summary["summary_file"] = str(out.with_name(f"{out.stem}.summary.json"))
    if command is not None:
        summary["command"] = command
    write_json(Path(summary["summary_file"]), summary)
    return summary
