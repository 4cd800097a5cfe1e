"""`biaskit annotate status`: a project's progress and quality from its pulled judgments. Every
expected figure below is worked out by hand from the rows (see the comments), or, for the
leave-one-out disagreement on random data, by a plain loop written here."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest
from biaskit.annotation.status import leave_one_out, project_status, status_markdown
from conftest import run_cli

from biaskit.io import write_jsonl

T1, T2 = "2025-03-01T10:00:00Z", "2025-03-02T10:00:00Z"


def _row(task, worker, label, lead, at=T1, question="validity", qtype="choice"):
    return {
        "task": task,
        "worker": worker,
        "label": label,
        "question": question,
        "qtype": qtype,
        "lead_time": lead,
        "created_at": at,
        "updated_at": at,
        "ls_annotation": f"{worker}-{task}-{at}",
    }


# t1: S S S A (a b c d) | t2: S S I (a b d; d first said S, then I) | t3: I S (a c) | t4: A (b) | t5: nobody
ROWS = [
    _row("t1", "a", "stereo", 10),
    _row("t1", "a", "Women are bad at driving.", 10, question="edited_more", qtype="text"),
    _row("t1", "b", "stereo", 5),
    _row("t1", "c", "stereo", 40),
    _row("t1", "d", "antistereo", 8),
    _row("t2", "a", "stereo", 20),
    _row("t2", "b", "stereo", 15),
    _row("t2", "d", "stereo", 100, T1),
    _row("t2", "d", "invalid", 12, T2),
    _row("t3", "a", "invalid", 30),
    _row("t3", "c", "stereo", 60),
    _row("t4", "b", "antistereo", 25),
]


def test_status_by_hand():
    st = project_status(pd.DataFrame(ROWS), 5, overlap=3)
    # annotators per task: t1 4, t2 3 (d once: the latest answer), t3 2, t4 1, t5 0
    assert st["annotators_per_task"] == {"0": 1, "1": 1, "2": 1, "3": 1, "4": 1}
    assert (st["tasks"], st["overlap"], st["done"], st["in_progress"], st["not_started"]) == (5, 3, 2, 2, 1)
    assert (st["annotations"], st["annotators"]) == (10, 4)
    people = {p["annotator"]: p for p in st["per_annotator"]}
    # pending: the 3 tasks short of 3 annotators (t3 t4 t5) minus those the annotator did
    assert {w: (p["done"], p["pending"]) for w, p in people.items()} == {
        "a": (3, 2),
        "b": (3, 2),
        "c": (2, 2),
        "d": (2, 3),
    }
    # lead time per annotation (d's t2: the latest answer, 12 s): a 10 20 30, b 5 15 25, c 40 60, d 8 12
    assert {w: p["lead_time_median"] for w, p in people.items()} == {"a": 20, "b": 15, "c": 50, "d": 10}
    assert st["time_per_task"] == {"n": 10, "median": 17.5, "mean": 22.5}
    # leave-one-out majority (2+ others): t1: a, b, c agree with S; d (A) disagrees with S.
    # t2: a and b see a tie (S vs I) among the others: not compared; d (I) disagrees with S S. t3, t4: too few others
    assert {w: (p["compared"], p["disagreements"]) for w, p in people.items()} == {
        "a": (1, 0),
        "b": (1, 0),
        "c": (1, 0),
        "d": (2, 2),
    }
    assert [p["annotator"] for p in st["per_annotator"]] == ["d", "a", "b", "c"]  # most disagreeing first
    assert people["d"]["disagreement_rate"] == 1.0 and people["a"]["disagreement_rate"] == 0.0
    # agreement on items with 2+ answers (t1 S3 A1, t2 S2 I1, t3 I1 S1):
    # P_i = (sum n_ij^2 - n)/(n(n-1)) = 6/12, 2/6, 0 -> mean 5/18; P_e = (6/9)^2+(1/9)^2+(2/9)^2 = 41/81
    # Fleiss' kappa = (5/18 - 41/81) / (1 - 41/81) = -37/80
    a = st["agreement"]
    assert a["n_items_multi"] == 3 and a["percent_agreement"] == pytest.approx(5 / 18)
    assert a["fleiss_kappa"] == pytest.approx(-37 / 80)
    md = status_markdown(st, "demo")
    assert "| d | 2 | 3 | 10.0 | 100.0% (2 of 2) |" in md and "**2 (40.0%) done**" in md


def _loo_reference(df, min_others):
    """The leave-one-out majority the plain way: for each answer, count the others' labels."""
    from collections import Counter

    by_item = {}
    for t, q, w, lab in zip(df["task"], df["question"], df["worker"], df["label"], strict=False):
        by_item.setdefault((t, q), []).append((w, lab))
    comp, dis = [], []
    for t, q, w, lab in zip(df["task"], df["question"], df["worker"], df["label"], strict=False):
        others = [x for ww, x in by_item[(t, q)] if ww != w]
        top = Counter(others).most_common()
        if len(others) < min_others or (len(top) > 1 and top[0][1] == top[1][1]):
            comp.append(False), dis.append(False)
            continue
        comp.append(True)
        dis.append(top[0][0] != lab)
    return np.array(comp), np.array(dis)


@pytest.mark.parametrize("seed", range(5))
def test_leave_one_out_matches_a_plain_loop(seed):
    rng = random.Random(seed)
    rows = []
    for t in range(60):
        for q in ("validity", "concern:x"):
            for w in rng.sample("abcdefg", rng.randint(1, 7)):
                rows.append(
                    {"task": f"t{t}", "question": q, "worker": w, "label": rng.choice("xyz"[: rng.randint(1, 3)])}
                )
    df = pd.DataFrame(rows)
    for m in (1, 2, 3):
        got = leave_one_out(df, m)
        ref = _loo_reference(df, m)
        assert (got[0] == ref[0]).all() and (got[1] == ref[1]).all()
        assert ref[0].sum() > 10  # the comparison was exercised


def test_status_edge_cases():
    st = project_status(pd.DataFrame(columns=["task", "worker", "label"]), 4, overlap=2)
    assert (st["done"], st["not_started"], st["annotators_per_task"], st["per_annotator"]) == (0, 4, {"0": 4}, [])
    # overlap 1 (Label Studio's default): a task with one annotation is done
    st = project_status(pd.DataFrame([_row("t1", "a", "stereo", 3)]), 2)
    assert (st["done"], st["per_annotator"][0]["pending"], st["per_annotator"][0]["disagreement_rate"]) == (1, 1, None)


def test_status_on_some_questions():
    from biaskit.errors import InputError

    rows = ROWS + [_row("t1", w, "yes" if w == "a" else "no", 10, question="concern:grammar") for w in "bcd"]
    # on validity only: as by hand above; on the concern: b, c, d all "no" -> 0 of 1 each
    st = project_status(pd.DataFrame(rows), 5, overlap=3, questions=["validity"])
    assert {p["annotator"]: p["disagreements"] for p in st["per_annotator"]} == {"a": 0, "b": 0, "c": 0, "d": 2}
    st = project_status(pd.DataFrame(rows), 5, overlap=3, questions=["concern"])
    assert {p["annotator"]: (p["compared"], p["disagreements"]) for p in st["per_annotator"]} == {
        "a": (0, 0),
        "b": (1, 0),
        "c": (1, 0),
        "d": (1, 0),
    }
    assert st["questions"] == ["concern"]
    with pytest.raises(InputError, match="no answers to question"):
        project_status(pd.DataFrame(rows), 5, questions=["polarity"])


def test_status_cli_offline(tmp_path, capsys):
    judg = write_jsonl(tmp_path / "j.jsonl", ROWS)
    code, out, err = run_cli(
        ["annotate", "status", "--judgments", str(judg), "--tasks", "5", "--overlap", "3", "--json"], capsys
    )
    assert code == 0, err
    st = json.loads(out)
    assert st["done"] == 2 and st["per_annotator"][0]["annotator"] == "d"
    code, out, _ = run_cli(["annotate", "status", "--judgments", str(judg), "--tasks", "5", "--overlap", "3"], capsys)
    assert code == 0 and out.startswith("# Annotation status") and "| a | 3 | 2 | 20.0 | 0.0% (0 of 1) |" in out
    code, _, err = run_cli(["annotate", "status", "--judgments", str(judg), "--tasks", "3"], capsys)
    assert code == 2 and "the judgments name 4 tasks but the project has 3" in err
    code, _, err = run_cli(["annotate", "status", "--judgments", str(judg)], capsys)
    assert code == 2 and "--judgments needs --tasks" in err
    code, _, err = run_cli(["annotate", "status"], capsys)
    assert code == 2 and "either --project" in err


@pytest.mark.parametrize("flag, value", [("--overlap", "0"), ("--overlap", "-3"), ("--min-others", "0")])
def test_status_refuses_a_count_below_one(tmp_path, capsys, flag, value):
    """--overlap 0 used to be taken as 1 without a word, and --min-others 0 printed 'items with 0+ others'
    while comparing only items with 1+; both are one line naming the flag, exit 2."""
    judg = write_jsonl(tmp_path / "j.jsonl", ROWS)
    code, out, err = run_cli(["annotate", "status", "--judgments", str(judg), "--tasks", "5", flag, value], capsys)
    assert code == 2 and out == "", out
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"error: {flag} {value}:"), err
