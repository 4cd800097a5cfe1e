"""StereoSet's CAT validation rule (Nadeem et al., 2021, sec. 4.3: five validators, a CAT kept when
>= 3 agree with the writer's label on each sentence), on hand-made votes and through `annotate
aggregate` + `annotate apply --kind cat`. Every expected verdict is worked out from the rule by hand."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest
from biaskit.annotation.cat_rule import cat_verdict, judgment_counts, option_verdict
from conftest import run_cli

from biaskit.io import read_jsonl
from biaskit.schema import CAT

S, A, U = "stereotype", "anti-stereotype", "unrelated"


@pytest.mark.parametrize(
    "labels, status",
    [
        ([S, S, S, A, U], "accepted"),  # 3 of 5 agree with the writer
        ([S, S, S, S, S], "accepted"),
        ([S, S, A, A, U], "rejected"),  # 2 of 5
        ([A, A, A, S, S], "rejected"),  # the validators' majority is another label
        ([S, S, A], "rejected"),  # 3 answered, only 2 agree: a strict majority, but not 3
        ([S, S], "needs_adjudication"),  # only 2 answered: a 3rd could still make it 3
        ([S, S, S, A, A, A], "needs_adjudication"),  # 3 agree but 3 say otherwise: a tie
        ([S, S, S, A, A, A, A], "rejected"),  # 3 agree but another label has 4
    ],
)
def test_option_verdict_from_votes(labels, status):
    v = option_verdict(S, votes=Counter(labels))
    assert v["status"] == status and v["agree"] == labels.count(S) and v["n"] == len(labels)


def test_option_verdict_from_the_aggregated_table():
    def row(label, votes, n, tied=""):
        return {"label": label, "votes": votes, "n_annotators": n, "tied_labels": tied, "status": "accepted"}

    assert option_verdict(S, aggregated=row(S, 3, 5))["status"] == "accepted"
    assert option_verdict(S, aggregated=row(S, 2, 3))["status"] == "rejected"  # status says accepted: ignored
    assert option_verdict(S, aggregated=row(A, 3, 5))["status"] == "rejected"
    r = option_verdict(S, aggregated=row(None, 2, 5, f"{A}|{S}"))  # 2-2-1: gold has 2
    assert r["status"] == "rejected" and r["agree"] == 2
    assert option_verdict(S, aggregated=row(None, 3, 6, f"{A}|{S}"))["status"] == "needs_adjudication"
    assert option_verdict(S, aggregated=row(S, 2, 2))["status"] == "needs_adjudication"
    assert option_verdict(S)["status"] == "not_annotated"
    assert option_verdict(S, votes=Counter([S, S, A]), min_agree=2)["status"] == "accepted"


def test_cat_verdict_combines_the_three_sentences():
    ok = {"status": "accepted", "reason": ""}
    bad = {"status": "rejected", "reason": "2 of 5"}
    wait = {"status": "needs_adjudication", "reason": "only 2"}
    none = {"status": "not_annotated", "reason": "no validator"}
    assert cat_verdict({S: ok, A: ok, U: ok}) == ("accepted", "")
    assert cat_verdict({S: ok, A: wait, U: bad})[0] == "rejected"  # nothing can save it
    assert cat_verdict({S: ok, A: wait, U: ok}) == ("needs_adjudication", f"{A}: only 2")
    assert cat_verdict({S: none, A: none, U: none})[0] == "not_annotated"


def test_judgment_counts_keep_each_validators_last_answer():
    df = pd.DataFrame(
        [
            {"task": "c1", "question": "option_stereotype", "worker": "w1", "label": A},
            {"task": "c1", "question": "option_stereotype", "worker": "w1", "label": S},  # w1 changed their mind
            {"task": "c1", "question": "option_stereotype", "worker": "w2", "label": S},
            {"task": "c1", "question": "option_stereotype", "worker": "w3", "label": None},
        ]
    )
    assert judgment_counts(df) == {("c1", "option_stereotype"): Counter({S: 2})}


def _cat(i: int) -> CAT:
    return CAT(
        split="intrasentence",
        target="Muslim",
        bias_type="religion",
        context=f"The Muslim man {i} was BLANK.",
        options=[
            {"sentence": f"The Muslim man {i} was {w}.", "gold_label": g}
            for w, g in (("violent", S), ("peaceful", A), ("triangular", U))
        ],
    )


def test_apply_keeps_a_cat_only_when_3_validators_agree_on_every_sentence(tmp_path, capsys):
    cats = [_cat(i) for i in range(5)]
    data = tmp_path / "cats.jsonl"
    data.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in cats))
    # validators' labels per CAT and gold label (workers w1..w5 in order)
    plan = {
        0: {S: [S, S, S, A, U], A: [A, A, A, A, A], U: [U, U, U, S, S]},  # 3, 5, 3 agree -> kept
        1: {S: [S, S, S, S, S], A: [A, A, S, S, U], U: [U, U, U, U, U]},  # the anti-stereotype gets 2 -> rejected
        2: {S: [S, S, A], A: [A, A, A], U: [U, U, U]},  # 3 validators; 2 agree on one -> rejected
        3: {S: [S, S], A: [A, A], U: [U, U]},  # only 2 answered -> adjudication
        4: {},  # not annotated
    }
    rows = [
        {"task": cats[i].cat_id, "question": f"option_{g}", "worker": f"w{k + 1}", "label": lab}
        for i, by_gold in plan.items()
        for g, labels in by_gold.items()
        for k, lab in enumerate(labels)
    ]
    judg = tmp_path / "j.csv"
    pd.DataFrame(rows).to_csv(judg, index=False)
    agg = tmp_path / "agg.csv"
    assert (
        run_cli(["annotate", "aggregate", "--judgments", str(judg), "--kind", "cat", "--out", str(agg)], capsys)[0] == 0
    )
    for extra in ([], ["--judgments", str(judg)]):  # from the aggregated table, and from the judgments
        out = tmp_path / "ok.jsonl"
        code, stdout, err = run_cli(
            [
                "annotate",
                "apply",
                "--json",
                "--kind",
                "cat",
                "--data",
                str(data),
                "--aggregated",
                str(agg),
                "--out",
                str(out),
                *extra,
            ],
            capsys,
        )
        assert code == 0, err
        res = json.loads(stdout.strip().splitlines()[-1])
        assert (res["accepted"], res["rejected"], res["needs_adjudication"], res["not_annotated"]) == (1, 2, 1, 1)
        kept = read_jsonl(out)
        assert [c["cat_id"] for c in kept] == [cats[0].cat_id]
        ann = kept[0]["meta"]["annotation"]
        assert (ann[S]["agree"], ann[A]["agree"], ann[U]["agree"]) == (3, 5, 3)
        dropped = {r["id"]: r for r in read_jsonl(tmp_path / "ok.rejected.jsonl")}
        assert (
            dropped[cats[1].cat_id]["status"] == "rejected" and "anti-stereotype" in dropped[cats[1].cat_id]["reason"]
        )
        assert dropped[cats[2].cat_id]["status"] == "rejected"
        assert dropped[cats[3].cat_id]["status"] == "needs_adjudication"
    # the aggregator alone (strict majority) accepts CAT 2's 2-of-3 sentence: the rule is applied in apply
    a = pd.read_csv(agg)
    row = a[(a["task"] == cats[2].cat_id) & (a["question"] == "option_stereotype")].iloc[0]
    assert row["status"] == "accepted" and row["votes"] == 2
    # --min-agree 2 keeps CAT 2 (2 of 3) and CAT 3 (2 of 2)
    code, stdout, _ = run_cli(
        [
            "annotate",
            "apply",
            "--json",
            "--kind",
            "cat",
            "--data",
            str(data),
            "--aggregated",
            str(agg),
            "--judgments",
            str(judg),
            "--min-agree",
            "2",
            "--out",
            str(tmp_path / "two.jsonl"),
        ],
        capsys,
    )
    assert code == 0 and json.loads(stdout.strip().splitlines()[-1])["accepted"] == 3


def test_apply_reads_judgment_ids_as_aggregate_does(tmp_path, capsys):
    """Ids with spaces around them are the same CAT and the same validator for `annotate apply --kind cat`
    (its human labels and its verdict) as for `annotate aggregate`: one id reader (issue 27)."""
    cat = _cat(0)
    data = tmp_path / "cats.jsonl"
    data.write_text(json.dumps(cat.model_dump(mode="json")) + "\n")
    rows = [
        {"task": f" {cat.cat_id}", "question": f"option_{g}", "worker": f"w{k} ", "label": g}
        for g in (S, A, U)
        for k in (1, 2, 3)
    ]  # three validators who all give each sentence its writer's label
    judg = tmp_path / "j.csv"
    pd.DataFrame(rows).to_csv(judg, index=False)
    out = tmp_path / "ok.jsonl"
    code, _, err = run_cli(
        ["annotate", "apply", "--kind", "cat", "--data", str(data), "--judgments", str(judg), "--out", str(out)],
        capsys,
    )
    assert code == 0, err
    kept = read_jsonl(out)
    assert [c["cat_id"] for c in kept] == [cat.cat_id]
    for opt in kept[0]["options"]:
        assert sorted(h["annotator"] for h in opt["human_labels"]) == ["w1", "w2", "w3"]
        assert {h["label"] for h in opt["human_labels"]} == {opt["gold_label"]}
