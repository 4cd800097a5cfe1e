"""Agreement statistics against published vectors, sklearn, and the real CrowS-Pairs annotations."""

from __future__ import annotations

import ast
import csv
import itertools
import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from biaskit.annotation.agreement import agreement, agreement_report
from biaskit.annotation.judgment_options import AgreementOptions

from biaskit.errors import InputError

nan = np.nan
# Krippendorff's reliability data (3 coders x 15 units), the `krippendorff` package docstring
KRIPP = [
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
]


def kripp_judgments():
    return pd.DataFrame(
        [(f"u{j}", f"coder{i}", int(v)) for i, r in enumerate(KRIPP) for j, v in enumerate(r) if v == v],
        columns=["task", "worker", "label"],
    )


def test_krippendorff_docstring_vectors():
    rep, _ = agreement(kripp_judgments())
    assert rep["krippendorff_alpha"] == pytest.approx(0.691358, abs=1e-6)
    rep, _ = agreement(kripp_judgments(), level="interval")
    assert rep["krippendorff_alpha"] == pytest.approx(0.810845, abs=1e-6)


# Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories: P=0.378, Pe=0.213, kappa=0.210
FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def fleiss_judgments():
    rows = []
    for i, r in enumerate(FLEISS):
        w = itertools.count()
        for j, c in enumerate(r):
            rows += [(f"s{i}", f"r{next(w)}", f"cat{j + 1}") for _ in range(c)]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def test_fleiss_1971_wikipedia_example():
    rep, items = agreement(fleiss_judgments())
    assert rep["fleiss_kappa"] == pytest.approx(0.20993, abs=1e-5)
    assert rep["percent_agreement"] == pytest.approx(0.37802, abs=1e-5)
    # subject 1: all 14 raters agree; subject 2: (0+2+30+12+2)/(14*13) = 46/182 -- by hand
    p = dict(zip(items["task"], items["pairwise_agreement"], strict=False))
    assert p["s0"] == 1.0 and p["s1"] == pytest.approx((2 * 1 + 6 * 5 + 4 * 3 + 2 * 1) / 182, abs=1e-6)


def test_pairwise_cohen_matches_sklearn_with_missing_answers():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(1)
    rows = []
    for i in range(60):
        truth = rng.integers(0, 3)
        for w in range(4):
            if rng.random() < 0.25:
                continue  # this annotator skipped the item
            rows.append((f"t{i}", f"w{w}", str(truth if rng.random() < 0.7 else rng.integers(0, 3))))
    df = pd.DataFrame(rows, columns=["task", "worker", "label"])
    rep, _ = agreement(df)
    lab = {(t, w): lb for t, w, lb in rows}
    ks, ns = [], []
    for a, b in itertools.combinations(sorted(df["worker"].unique()), 2):
        shared = [t for t in df["task"].unique() if (t, a) in lab and (t, b) in lab]
        ks.append(cohen_kappa_score([lab[(t, a)] for t in shared], [lab[(t, b)] for t in shared]))
        ns.append(len(shared))
    assert rep["n_pairs"] == 6
    assert rep["mean_pairwise_cohen_kappa"] == pytest.approx(np.mean(ks), abs=1e-6)
    assert rep["weighted_pairwise_cohen_kappa"] == pytest.approx(np.average(ks, weights=ns), abs=1e-6)


def test_constant_annotators_have_undefined_kappa():
    df = pd.DataFrame([(f"t{i}", w, "yes") for i in range(5) for w in ("a", "b")], columns=["task", "worker", "label"])
    rep, _ = agreement(df)
    assert rep["percent_agreement"] == 1.0
    assert rep["krippendorff_alpha"] is None and rep["fleiss_kappa"] is None  # no variation: 0/0
    assert rep["mean_pairwise_cohen_kappa"] is None and rep["n_pairs_undefined"] == 1


def test_empty_judgments_are_an_error():
    with pytest.raises(InputError, match="no judgments"):
        agreement(pd.DataFrame(columns=["task", "worker", "label"]))


def test_per_annotator_per_question_and_bias_type():
    rows = [
        # question q1: w1,w2 agree on every item, w3 disagrees once
        ("t1", "w1", "q1", "a", "gender"),
        ("t1", "w2", "q1", "a", "gender"),
        ("t1", "w3", "q1", "b", "gender"),
        ("t2", "w1", "q1", "b", "age"),
        ("t2", "w2", "q1", "b", "age"),
        ("t2", "w3", "q1", "b", "age"),
        # question q2 on t1: a tie between two annotators
        ("t1", "w1", "q2", "yes", "gender"),
        ("t1", "w2", "q2", "no", "gender"),
    ]
    df = pd.DataFrame(rows, columns=["task", "worker", "question", "label", "bias_type"])
    rep, items = agreement(df)
    per = {a["worker"]: a for a in rep["per_annotator"]}
    # majority is computed on untied items with 2+ answers: t1/q1 (a), t2/q1 (b); t1/q2 is tied
    assert per["w1"] == {"worker": "w1", "n_items": 3, "n_compared": 2, "agreement_with_majority": 1.0}
    assert per["w3"]["n_compared"] == 2 and per["w3"]["agreement_with_majority"] == 0.5
    assert set(rep["per_question"]) == {"q1", "q2"}
    assert rep["per_question"]["q2"]["percent_agreement"] == 0.0
    # q1: P_t1 = (2*1)/(3*2) = 1/3, P_t2 = 1 -> mean 2/3
    assert rep["per_question"]["q1"]["percent_agreement"] == pytest.approx(2 / 3, abs=1e-6)
    assert set(rep["per_bias_type"]) == {"gender", "age"}
    assert rep["per_bias_type"]["age"]["n_items"] == 1 and rep["per_bias_type"]["age"]["percent_agreement"] == 1.0
    assert len(items) == 3 and items["tie"].sum() == 1


def crows_judgments(path):
    """The real CrowS-Pairs validation labels: 5 annotators per pair, each gave one bias type or none."""
    from biaskit.readers import read_pairs

    pairs = read_pairs(path).pairs
    rows = []
    for p in pairs:
        workers = ast.literal_eval(p.meta["anon_annotators"])
        labels = ast.literal_eval(p.meta["annotations"])
        for w, labs in zip(workers, labels, strict=False):
            rows.append(
                {
                    "task": p.pair_id,
                    "worker": w,
                    "question": "bias_type",
                    "label": labs[0] if labs else "none",
                    "bias_type": p.bias_type,
                }
            )
    return pd.DataFrame(rows)


def test_crows_pairs_real_annotations(crows_csv, tmp_path):
    # independent figures straight from the CSV, with the csv module only
    with open(crows_csv, encoding="utf-8") as fh:
        raw = list(csv.DictReader(fh))
    gold3 = sum(sum(r["bias_type"] in labs for labs in ast.literal_eval(r["annotations"])) >= 3 for r in raw)
    top = [
        max(Counter((labs[0] if labs else "none") for labs in ast.literal_eval(r["annotations"])).values()) for r in raw
    ]
    assert len(raw) == 1508

    from biaskit.annotation.aggregate import aggregate

    df = crows_judgments(crows_csv)
    assert len(df) == 5 * 1508
    agg, _ = aggregate(df, min_agree=3)
    gold = dict(zip(df["task"], df["bias_type"], strict=False))
    ours = int(((agg["status"] == "accepted") & (agg["label"] == agg["task"].map(gold))).sum())
    assert ours == gold3  # pairs where >= 3 of 5 annotators agree on the gold bias type

    j = tmp_path / "crows_judgments.jsonl"
    df.to_json(j, orient="records", lines=True)
    rep = agreement_report(AgreementOptions(judgments=j, out=tmp_path / "agr", data=crows_csv))
    ret = {r["k"]: r for r in rep["retention"]}
    for k in range(1, 6):
        assert ret[k]["retained"] == sum(t >= k for t in top)
        assert ret[k]["threshold"] == f">={k} of 5"
    assert ret[3]["rate"] == pytest.approx(sum(t >= 3 for t in top) / 1508, abs=1e-6)
    assert rep["n_items"] == 1508 and rep["annotators_per_item"] == {"min": 5, "max": 5, "mean": 5.0}
    assert 0.3 < rep["krippendorff_alpha"] < 0.9 and 0.3 < rep["fleiss_kappa"] < 0.9
    assert set(rep["per_bias_type"]) == set(df["bias_type"])
    assert sum(v["n_items"] for v in rep["per_bias_type"].values()) == 1508
    on_disk = json.loads((tmp_path / "agr" / "agreement.json").read_text())
    assert on_disk["krippendorff_alpha"] == rep["krippendorff_alpha"]
    md = (tmp_path / "agr" / "agreement.md").read_text()
    assert "Krippendorff's alpha" in md and ">=3 of 5" in md
    items = pd.read_csv(tmp_path / "agr" / "agreement_items.csv")
    assert len(items) == 1508 and (items["majority_votes"].to_numpy() >= 1).all()
    print(
        f"\nCrowS-Pairs: {gold3}/1508 pairs with >=3/5 on the gold bias type; alpha={rep['krippendorff_alpha']}, "
        f"Fleiss={rep['fleiss_kappa']}, Cohen={rep['mean_pairwise_cohen_kappa']}, >=3 of 5 kept {ret[3]['rate']}"
    )


def test_cli_agreement(tmp_path):
    from biaskit.cli import main

    j = tmp_path / "j.csv"
    kripp_judgments().to_csv(j, index=False)
    main(["annotate", "agreement", "--judgments", str(j), "--out", str(tmp_path / "rep")])
    out = json.loads((tmp_path / "rep" / "agreement.json").read_text())
    assert out["krippendorff_alpha"] == pytest.approx(0.691358, abs=1e-6)
    assert (tmp_path / "rep" / "agreement.md").exists()


def test_bias_type_from_a_tuple_file(tmp_path):
    from biaskit.annotation.kinds import get_kind

    src = tmp_path / "tuples.jsonl"
    src.write_text(
        "".join(
            json.dumps(t) + "\n"
            for t in [
                {"identity": "women", "attribute": "emotional", "axis": "gender", "polarity": "negative"},
                {"identity": "Dalits", "attribute": "poor", "axis": "Caste", "polarity": "negative"},
            ]
        )
    )
    ids = [r.tuple_id for r in get_kind("tuple").load(src)]
    df = pd.DataFrame(
        [(ids[0], "a", "yes"), (ids[0], "b", "yes"), (ids[1], "a", "no"), (ids[1], "b", "yes")],
        columns=["task", "worker", "label"],
    )
    rep, _ = agreement(df, data_path=src)
    assert set(rep["per_bias_type"]) == {"gender", "caste"}
    assert rep["per_bias_type"]["gender"]["percent_agreement"] == 1.0
    assert rep["per_bias_type"]["caste"]["percent_agreement"] == 0.0
