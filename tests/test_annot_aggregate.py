"""Aggregation: majority vote with explicit ties, edge cases, crowd-kit models, CLI."""

from __future__ import annotations

import ast
import csv
import json

import numpy as np
import pandas as pd
import pytest
from biaskit.annotation.aggregate import aggregate

from biaskit.errors import InputError


def J(rows, cols=("task", "worker", "label")):
    return pd.DataFrame(rows, columns=list(cols))


def by_task(table):
    return {r["task"]: r for r in table.to_dict(orient="records")}


def test_majority_basic_and_crowdkit_documented_example():
    # crowd-kit's MajorityVote docstring example: t1 -> 0 (2 of 3), t2 -> 1 (2 of 3)
    df = J([["t1", "p1", 0], ["t1", "p2", 0], ["t1", "p3", 1], ["t2", "p1", 1], ["t2", "p2", 0], ["t2", "p3", 1]])
    t, rep = aggregate(df, min_agree=2)
    r = by_task(t)
    assert r["t1"]["label"] == "0" and r["t2"]["label"] == "1"
    assert r["t1"]["votes"] == 2 and r["t1"]["n_annotators"] == 3
    assert r["t1"]["agreement"] == pytest.approx(2 / 3)
    assert set(t["status"]) == {"accepted"}
    assert list(t["question"]) == ["label", "label"]
    assert rep.n_items == 2 and rep.status_counts == {"accepted": 2, "rejected": 0, "needs_adjudication": 0}


def test_status_rules_min_agree():
    df = J(
        [
            ["a", "w1", "x"],
            ["a", "w2", "x"],
            ["a", "w3", "y"],  # 2/3 x
            ["b", "w1", "x"],
            ["b", "w2", "y"],
            ["b", "w3", "z"],  # 1/1/1 tie
            ["c", "w1", "x"],
            ["c", "w2", "x"],
            ["c", "w3", "x"],  # 3/3
            ["d", "w1", "x"],
            ["d", "w2", "y"],
            ["d", "w3", "y"],
            ["d", "w4", "z"],
            ["d", "w5", "q"],
        ]
    )  # 2/5
    r = by_task(aggregate(df, min_agree=3)[0])
    assert r["a"]["status"] == "rejected" and r["a"]["reason"] == "below_min_agree"
    assert r["b"]["status"] == "needs_adjudication" and r["b"]["tie"] and r["b"]["tied_labels"] == "x|y|z"
    assert r["b"]["label"] is None or r["b"]["label"] != r["b"]["label"]  # empty, never picked silently
    assert r["c"]["status"] == "accepted" and r["c"]["agreement"] == 1.0
    assert r["d"]["label"] == "y" and r["d"]["votes"] == 2 and r["d"]["status"] == "rejected"
    # default rule: strict majority of the annotators who answered
    r = by_task(aggregate(df)[0])
    assert r["a"]["status"] == "accepted" and r["d"]["status"] == "rejected" and r["d"]["reason"] == "no_majority"


def test_single_annotator_is_defined():
    df = J([["t", "only", "yes"]])
    r = by_task(aggregate(df)[0])["t"]
    assert (r["label"], r["votes"], r["n_annotators"], r["agreement"], r["status"]) == ("yes", 1, 1, 1.0, "accepted")
    r = by_task(aggregate(df, min_agree=2)[0])["t"]
    assert r["status"] == "needs_adjudication" and r["reason"] == "too_few_annotators"


def test_missing_labels_are_no_votes():
    df = J(
        [
            ["t", "w1", "yes"],
            ["t", "w2", None],
            ["t", "w3", ""],
            ["t", "w4", "no"],
            ["t", "w5", "yes"],
            ["u", "w1", None],
        ]
    )
    t, rep = aggregate(df, min_agree=2)
    r = by_task(t)
    assert rep.n_missing_labels == 3
    assert r["t"]["n_annotators"] == 3 and r["t"]["votes"] == 2 and r["t"]["status"] == "accepted"
    assert "u" not in r  # an item nobody labelled has no row


def test_unknown_labels_rejected_loudly():
    df = J([["t1", "w1", "stereo"], ["t1", "w2", "bogus"]])
    with pytest.raises(InputError) as e:
        aggregate(df, allowed={"label": {"stereo", "antistereo"}}, source="j.csv")
    msg = str(e.value)
    assert "j.csv, row 2" in msg and "'bogus'" in msg and "w2" in msg and "t1" in msg
    # a flat allowed list applies to every question
    with pytest.raises(InputError, match="unknown label 'bogus'"):
        aggregate(df, allowed=["stereo", "antistereo"])


def test_annotator_twice_is_an_error_or_a_defined_rule():
    df = J(
        [
            ["t", "w1", "x", "2024-01-01T10:00:00Z"],
            ["t", "w2", "y", "2024-01-01T10:00:00Z"],
            ["t", "w1", "y", "2024-01-02T10:00:00Z"],
        ],
        ("task", "worker", "label", "updated_at"),
    )
    with pytest.raises(InputError) as e:
        aggregate(df, source="j.csv")
    assert "annotator 'w1'" in str(e.value) and "more than once" in str(e.value) and "--duplicates" in str(e.value)
    last = by_task(aggregate(df, duplicates="last")[0])["t"]
    assert last["label"] == "y" and last["votes"] == 2 and last["n_annotators"] == 2
    first = by_task(aggregate(df, duplicates="first")[0])["t"]
    assert first["tie"] and first["tied_labels"] == "x|y"
    # 'last' follows updated_at, not the row order
    df2 = df.iloc[[2, 0, 1]]
    assert by_task(aggregate(df2, duplicates="last")[0])["t"]["label"] == "y"


def test_a_stamp_pandas_cannot_read_counts_as_none_without_a_warning():
    """An ``updated_at`` that is no time (a hand edit) is a missing stamp: a stamped answer is later than
    it (pandas' order: missing first). pandas' own 'could not infer format' warning never reaches the
    user's terminal (it named a source file of this machine)."""
    import warnings

    df = J(
        [["t", "w1", "x", "zzz"], ["t", "w1", "y", "2024-01-02T10:00:00Z"]],
        ("task", "worker", "label", "updated_at"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert by_task(aggregate(df, duplicates="last")[0])["t"]["label"] == "y"
        assert by_task(aggregate(df, duplicates="first")[0])["t"]["label"] == "x"


def test_empty_input_gives_empty_table():
    t, rep = aggregate(J([]))
    assert len(t) == 0 and "status" in t.columns and rep.n_items == 0
    t, rep = aggregate(pd.DataFrame())
    assert len(t) == 0


def test_missing_columns_error():
    with pytest.raises(InputError, match="missing column"):
        aggregate(pd.DataFrame({"task": ["a"], "label": ["x"]}), source="j.csv")


def test_ties_drop_and_random_are_explicit_and_order_independent():
    rows = [[f"t{i}", "w1", "a"] for i in range(40)] + [[f"t{i}", "w2", "b"] for i in range(40)]
    df = J(rows)
    t, rep = aggregate(df, ties="drop")
    assert len(t) == 0 and rep.n_ties == 40 and rep.n_dropped_ties == 40
    r1 = aggregate(df, ties="random", seed=7)[0]
    r2 = aggregate(df.sample(frac=1, random_state=3), ties="random", seed=7)[0]
    m1 = dict(zip(r1["task"], r1["label"], strict=False))
    m2 = dict(zip(r2["task"], r2["label"], strict=False))
    assert m1 == m2  # same seed -> same picks whatever the row order
    assert set(m1.values()) == {"a", "b"}  # both labels get picked over 40 ties
    assert r1["tie"].all() and r1["reason"].str.contains("tie_broken_randomly").all()
    r3 = aggregate(df, ties="random", seed=8)[0]
    assert dict(zip(r3["task"], r3["label"], strict=False)) != m1


def test_questions_aggregated_separately_and_text_skipped():
    df = pd.DataFrame(
        [
            {"task": "p1", "worker": "w1", "question": "validity", "label": "stereo", "qtype": "choice"},
            {"task": "p1", "worker": "w2", "question": "validity", "label": "stereo", "qtype": "choice"},
            {"task": "p1", "worker": "w1", "question": "concern:logical_failure", "label": "no", "qtype": "choice"},
            {"task": "p1", "worker": "w2", "question": "concern:logical_failure", "label": "yes", "qtype": "choice"},
            {"task": "p1", "worker": "w1", "question": "corrected_more", "label": "free text", "qtype": "text"},
        ]
    )
    t, rep = aggregate(df)
    assert rep.n_text_skipped == 1
    got = {(r["task"], r["question"]): r for r in t.to_dict(orient="records")}
    assert set(got) == {("p1", "validity"), ("p1", "concern:logical_failure")}
    assert got[("p1", "validity")]["status"] == "accepted"
    assert got[("p1", "concern:logical_failure")]["status"] == "needs_adjudication"


def _simulated(seed=0, n_items=300):
    """3 reliable annotators (90%) and 2 adversarial ones who always answer the opposite."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_items)
    rows = []
    for i, y in enumerate(truth):
        for w in range(3):
            lab = y if rng.random() < 0.9 else 1 - y
            rows.append([f"t{i}", f"good{w}", f"c{lab}"])
        for w in range(2):
            rows.append([f"t{i}", f"bad{w}", f"c{1 - y}"])
    return J(rows), {f"t{i}": f"c{y}" for i, y in enumerate(truth)}


@pytest.mark.parametrize("method", ["dawid-skene", "glad", "mace", "one-coin-dawid-skene"])
def test_crowdkit_models_learn_annotator_quality(method):
    df, truth = _simulated()
    t, rep = aggregate(df, method=method, ties="random")
    assert rep.method == method and len(t) == len(truth)
    assert set(t["label"]) <= {"c0", "c1"}
    assert "confidence" in t.columns and t["confidence"].between(0, 1).all()
    acc = np.mean([truth[a] == b for a, b in zip(t["task"], t["label"], strict=False)])
    mv, _ = aggregate(df, ties="random")
    acc_mv = np.mean([truth[a] == b for a, b in zip(mv["task"], mv["label"], strict=False)])
    # majority vote is fooled by the two adversaries whenever one good annotator slips
    # (1 - 0.9^3 = 27% of items); the models learn who is adversarial and recover the truth
    assert acc_mv < 0.85
    assert acc > 0.95 and acc > acc_mv


@pytest.mark.parametrize("method", ["dawid-skene", "glad", "mace", "one-coin-dawid-skene"])
def test_crowdkit_models_keep_unanimous_labels(method):
    rows = [[f"t{i}", f"w{w}", "yes" if i % 3 else "no"] for i in range(30) for w in range(3)]
    t, _ = aggregate(J(rows), method=method, min_agree=3)
    assert all(lab == ("yes" if int(task[1:]) % 3 else "no") for task, lab in zip(t["task"], t["label"], strict=False))
    assert (t["status"] == "accepted").all() and (t["votes"] == 3).all()


def test_majority_matches_crowdkit_on_untied_real_items(crows_csv):
    from crowdkit.aggregation import MajorityVote

    rows = []
    with open(crows_csv, encoding="utf-8") as fh:
        for i, r in enumerate(csv.DictReader(fh)):
            for w, labs in zip(
                ast.literal_eval(r["anon_annotators"]), ast.literal_eval(r["annotations"]), strict=False
            ):
                rows.append([f"row{i}", w, labs[0] if labs else "none"])
    df = J(rows)
    ours, _ = aggregate(df)
    ck = MajorityVote().fit_predict(df)
    untied = ours[~ours["tie"]]
    assert len(untied) > 1400
    assert (untied["label"].to_numpy() == ck.loc[untied["task"]].to_numpy()).all()


def test_cli_aggregate(tmp_path):
    from biaskit.cli import main

    j = tmp_path / "j.csv"
    J([["t1", "a", "yes"], ["t1", "b", "yes"], ["t1", "c", "no"], ["t2", "a", "no"], ["t2", "b", "yes"]]).to_csv(
        j, index=False
    )
    out = tmp_path / "agg.jsonl"
    main(["annotate", "aggregate", "--judgments", str(j), "--min-agree", "2", "--out", str(out)])
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["task"], r["label"], r["status"]) for r in rows] == [
        ("t1", "yes", "accepted"),
        ("t2", None, "needs_adjudication"),
    ]


def test_cli_errors_are_one_line(tmp_path, capsys):
    from biaskit.cli import main

    j = tmp_path / "j.csv"
    J([["t1", "a", "yes"], ["t1", "a", "no"]]).to_csv(j, index=False)
    with pytest.raises(SystemExit) as e:
        main(["annotate", "aggregate", "--judgments", str(j), "--out", str(tmp_path / "o.csv")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "more than once" in err and "j.csv" in err
    with pytest.raises(SystemExit) as e:
        main(
            [
                "annotate",
                "aggregate",
                "--judgments",
                str(j),
                "--labels",
                "maybe",
                "--duplicates",
                "last",
                "--out",
                str(tmp_path / "o.csv"),
            ]
        )
    assert e.value.code == 2 and "unknown label" in capsys.readouterr().err
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    main(["annotate", "aggregate", "--judgments", str(empty), "--out", str(tmp_path / "o.csv")])
    assert "no judgments" in capsys.readouterr().out
    assert (tmp_path / "o.csv").read_text().startswith("task,question,label")
