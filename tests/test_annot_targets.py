"""Agreement per target term and domain (StereoSet, Table 10 and the >= 3 of 5 rule) and StereoSet's
released labels as judgments (`annotate from-stereoset`). Every expected figure is worked out by hand
from the labels listed below, or is a published reference value (Fleiss 1971, Krippendorff)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from biaskit.annotation.agreement import agreement, agreement_report
from biaskit.annotation.judgment_options import AgreementOptions
from biaskit.annotation.stereoset_labels import stereoset_judgments
from conftest import run_cli
from test_annot_agreement import fleiss_judgments, kripp_judgments

from biaskit.errors import InputError

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "stereoset_labels_demo.json"
S, A, U, R = "stereotype", "anti-stereotype", "unrelated", "related"

# The labels of data/demo/stereoset_labels_demo.json, as written there (5 validators per CAT):
#   librarian, intrasentence  (profession): stereotype S S S S S | anti A A A A A | unrelated U U U U U
#   grandmother, intrasentence (gender):    stereotype S A S A U | anti A S A S A | unrelated U U U R U
#   librarian, intersentence  (profession): anti A A S A A | stereotype S A S R S | unrelated U U U U U
#   monk, intersentence       (religion):   stereotype S S S S S | unrelated U U U U U | anti A U A A U
# Share of validators giving the writer's label, per sentence, and per CAT (mean of its 3 sentences):
#   librarian-intra 1, 1, 1 -> 1;  grandmother .4, .6, .8 -> .6;  librarian-inter .8, .6, 1 -> .8;
#   monk 1, 1, .6 -> 13/15.  Per term: librarian (1 + .8) / 2 = .9 (27 of 30 answers), grandmother .6
#   (9/15), monk 13/15; overall (1 + .6 + .8 + 13/15) / 4 = .816667 (49 of 60 answers).
#   >= 3 of 5 on every sentence: all but grandmother (its stereotype sentence has 2) -> 3 of 4 CATs.
#   Dropping the two "related" labels: librarian-inter (.8 + 3/4 + 1) / 3 = .85, grandmother
#   (.4 + .6 + 4/4) / 3 = 2/3, overall (1 + 2/3 + .85 + 13/15) / 4 = .845833; retention unchanged.
HAND_TERMS = {
    ("gender", "grandmother"): (0.6, 9, 15, 1, 0),
    ("profession", "librarian"): (0.9, 27, 30, 2, 2),
    ("religion", "monk"): (13 / 15, 13, 15, 1, 1),
}


def _by_term(rows):
    return {(r["bias_type"], r["target"]): r for r in rows}


def test_from_stereoset_judgments_and_retention_by_hand():
    df, s = stereoset_judgments(DEMO)
    assert len(df) == 60 and s["n_cats"] == 4 and s["n_sentences"] == 12 and s["n_annotators"] == 14
    assert s["labels"] == {U: 22, S: 18, A: 18, R: 2} and s["n_other_labels"] == 2 and s["n_duplicate_answers"] == 0
    # the questions are the cat kind's: option_<writer's label>; the reference is the writer's label
    assert set(df["question"]) == {"option_stereotype", "option_anti-stereotype", "option_unrelated"}
    assert (df["question"] == "option_" + df["reference"]).all()
    grand = df[df["target"] == "grandmother"]
    assert sorted(grand[grand["reference"] == S]["label"]) == sorted([S, A, S, A, U])
    r = s["retention"]
    assert (r["n_tasks"], r["retained"], r["retention_rate"]) == (4, 3, 0.75)
    assert r["reference_agreement"] == pytest.approx(0.816667, abs=1e-6)
    assert (r["reference_votes"], r["reference_answers"]) == (49, 60)
    assert r["per_split"]["intrasentence"]["retained"] == 1 and r["per_split"]["intersentence"]["retained"] == 2
    assert r["per_split"]["intrasentence"]["reference_agreement"] == pytest.approx((1 + 0.6) / 2)
    assert r["per_bias_type"]["gender"]["retained"] == 0
    # the ids are the cat kind's: the same as reading the file for push/evaluation
    from biaskit.readers import read_cats

    assert set(df["task"]) == {c.cat_id for c in read_cats(DEMO)}

    dropped, s2 = stereoset_judgments(DEMO, other_labels="drop")
    assert len(dropped) == 58 and R not in set(dropped["label"]) and s2["n_other_labels_dropped"] == 2
    assert s2["retention"]["reference_agreement"] == pytest.approx((1 + 2 / 3 + 0.85 + 13 / 15) / 4, abs=1e-6)
    assert s2["retention"]["retained"] == 3


def test_agreement_per_target_term_by_hand():
    df, _ = stereoset_judgments(DEMO)
    rep, items = agreement(df)
    assert rep["reference_agreement"] == pytest.approx(0.816667, abs=1e-6)
    assert (rep["min_agree"], rep["retained"], rep["n_tasks"]) == (3, 3, 4)  # 3 of 5 by default
    got = _by_term(rep["per_target"])
    assert set(got) == set(HAND_TERMS)
    for key, (agr, votes, answers, n_tasks, kept) in HAND_TERMS.items():
        row = got[key]
        assert row["reference_agreement"] == pytest.approx(agr, abs=1e-6), key
        assert (row["reference_votes"], row["reference_answers"], row["n_tasks"], row["retained"]) == (
            votes,
            answers,
            n_tasks,
            kept,
        ), key
        assert row["n_items"] == 3 * n_tasks and row["n_judgments"] == 15 * n_tasks
    # Fleiss on grandmother's 3 items (labels kept apart per question): P_i = (sum n_ij^2 - 5) / 20 =
    # (9-5)/20, (13-5)/20, (17-5)/20 -> P = .4; p_j = 2,2,1 | 3,2 | 4,1 (of 15) -> P_e = 39/225
    pe = 39 / 225
    assert got[("gender", "grandmother")]["fleiss_kappa"] == pytest.approx((0.4 - pe) / (1 - pe), abs=1e-6)
    assert got[("gender", "grandmother")]["percent_agreement"] == pytest.approx(0.4, abs=1e-6)
    # rows: by bias type, then agreement (highest first), as StereoSet's Table 10
    assert [r["target"] for r in rep["per_target"]] == ["grandmother", "librarian", "monk"]
    assert rep["per_bias_type"]["profession"]["reference_agreement"] == pytest.approx(0.9)
    assert rep["per_bias_type"]["profession"]["n_tasks"] == 2
    # per item: the reference label and its votes
    it = items.set_index(["task", "question"])
    g_task = df[df["target"] == "grandmother"]["task"].iloc[0]
    assert it.loc[(g_task, "option_stereotype"), "reference_votes"] == 2
    assert it.loc[(g_task, "option_stereotype"), "reference_label"] == S
    # a stricter threshold: >= 4 of 5 on every sentence keeps only the unanimous librarian CAT
    rep4, _ = agreement(df, min_agree=4)
    assert rep4["retained"] == 1 and _by_term(rep4["per_target"])[("profession", "librarian")]["retained"] == 1


def test_targets_and_references_from_the_records():
    """Judgments as `pull` writes them (no target / reference columns) + the CAT file: the same tables."""
    df, _ = stereoset_judgments(DEMO)
    bare = df[["task", "worker", "question", "label"]]
    rep, _ = agreement(bare, data_path=DEMO)
    want, _ = agreement(df)
    assert rep["per_target"] == want["per_target"]
    assert rep["reference_agreement"] == want["reference_agreement"]
    # without data or columns there is no target term: no per-term table, the plurality stands in
    rep0, _ = agreement(bare)
    assert rep0["per_target"] == [] and rep0["reference_agreement"] is None
    # majority shares: grandmother's stereotype sentence is a 2-2-1 tie -> top 2; per CAT .6 .8 ... overall
    # (1 + (2+3+4)/15 + (4+3+5)/15 + (5+5+3)/15) / 4
    assert rep0["majority_share"] == pytest.approx((1 + 9 / 15 + 12 / 15 + 13 / 15) / 4, abs=1e-6)


def test_per_target_matches_published_reference_values():
    """Two target terms whose items are the Fleiss (1971) table and Krippendorff's reliability data:
    each term's statistics are the published values."""
    df = pd.concat(
        [fleiss_judgments().assign(target="fleiss-term"), kripp_judgments().assign(target="kripp-term")],
        ignore_index=True,
    ).assign(bias_type="x")
    rep, _ = agreement(df)
    got = _by_term(rep["per_target"])
    f, k = got[("x", "fleiss-term")], got[("x", "kripp-term")]
    assert f["fleiss_kappa"] == pytest.approx(0.20993, abs=1e-5)
    assert f["percent_agreement"] == pytest.approx(0.37802, abs=1e-5)
    assert k["krippendorff_alpha"] == pytest.approx(0.691358, abs=1e-6)
    assert (f["n_tasks"], f["n_judgments"], k["n_tasks"]) == (10, 140, 13)  # units 1 and 13 have no answer
    assert f["reference_agreement"] is None  # no reference label: the plurality label stands in
    # retention at >= 8 votes for the plurality label: subjects with a top count of 14, 9, 8 -> 3 of 10
    rep8, _ = agreement(df, min_agree=8)
    assert _by_term(rep8["per_target"])[("x", "fleiss-term")]["retained"] == 3
    # majority share of the Fleiss subjects: mean of top / 14
    assert f["majority_share"] == pytest.approx((14 + 6 + 6 + 9 + 8 + 7 + 6 + 5 + 6 + 7) / 140, abs=1e-6)


def test_pairs_target_is_group_more_and_reference_the_direction(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {
                    "sent_more": "Dalits are poor.",
                    "sent_less": "Brahmins are poor.",
                    "direction": "stereo",
                    "bias_type": "caste",
                    "group_more": "Dalits",
                    "group_less": "Brahmins",
                },
                {
                    "sent_more": "Men can cook well.",
                    "sent_less": "Women can cook well.",
                    "direction": "antistereo",
                    "bias_type": "gender",
                    "group_more": "Men",
                    "group_less": "Women",
                },
            ]
        ),
        encoding="utf-8",
    )
    from biaskit.readers import read_pairs

    p1, p2 = (p.pair_id for p in read_pairs(pairs).pairs)
    rows = [
        (p1, "a", "validity", "stereo"),
        (p1, "b", "validity", "stereo"),
        (p1, "c", "validity", "antistereo"),
        (p2, "a", "validity", "antistereo"),
        (p2, "b", "validity", "stereo"),
        (p2, "c", "validity", "invalid"),
        # concern answers have no reference label: they count as items, not in the reference figures
        (p1, "a", "concern:grammar", "no"),
        (p1, "b", "concern:grammar", "yes"),
    ]
    rep, _ = agreement(pd.DataFrame(rows, columns=["task", "worker", "question", "label"]), data_path=pairs)
    got = _by_term(rep["per_target"])
    dal, men = got[("caste", "Dalits")], got[("gender", "Men")]
    # 3 annotators on most items -> k = 2 (IndiBias' 2 of 3); Dalits: 2 of 3 said stereo; Men: 1 of 3 antistereo
    assert rep["min_agree"] == 2
    assert (dal["reference_agreement"], dal["reference_votes"], dal["reference_answers"]) == (
        pytest.approx(2 / 3),
        2,
        3,
    )
    assert (men["reference_agreement"], men["reference_votes"], men["retained"]) == (pytest.approx(1 / 3), 1, 0)
    assert dal["retained"] == 1 and dal["n_items"] == 2 and dal["n_reference_items"] == 1
    assert rep["retained"] == 1 and rep["reference_agreement"] == pytest.approx((2 / 3 + 1 / 3) / 2)


def test_cli_from_stereoset_then_agreement_aggregate_apply(tmp_path, capsys):
    j = tmp_path / "judgments.csv"
    code, out, err = run_cli(["annotate", "from-stereoset", "--data", str(DEMO), "--out", str(j)], capsys)
    assert code == 0, err
    assert "60 judgments from 4 CATs" in out and "3 of 4 CATs (0.750)" in out
    summary = json.loads((tmp_path / "judgments.summary.json").read_text())
    assert summary["retention"]["retained"] == 3 and summary["command"].startswith("biaskit")

    code, out, err = run_cli(["annotate", "agreement", "--judgments", str(j), "--out", str(tmp_path / "rep")], capsys)
    assert code == 0, err
    assert "3 target term(s)" in out
    t = pd.read_csv(tmp_path / "rep" / "agreement_targets.csv")
    assert list(t["target"]) == ["grandmother", "librarian", "monk"]
    assert list(t["reference_votes"]) == [9, 27, 13] and list(t["retained"]) == [0, 2, 1]
    md = (tmp_path / "rep" / "agreement.md").read_text()
    assert "## Per target term" in md and "| profession | librarian | 2 | 6 | 0.900 | 27 / 30 |" in md

    agg = tmp_path / "aggregated.csv"
    code, out, err = run_cli(
        ["annotate", "aggregate", "--judgments", str(j), "--min-agree", "3", "--out", str(agg)], capsys
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            "annotate",
            "apply",
            "--json",
            "--kind",
            "cat",
            "--data",
            str(DEMO),
            "--aggregated",
            str(agg),
            "--judgments",
            str(j),
            "--out",
            str(tmp_path / "validated.jsonl"),
        ],
        capsys,
    )
    assert code == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert (res["accepted"], res["rejected"]) == (3, 1)  # grandmother: 2 of 5 gave its stereotype sentence's label
    kept = [json.loads(x) for x in (tmp_path / "validated.jsonl").read_text().splitlines()]
    assert sorted(c["target"] for c in kept) == ["librarian", "librarian", "monk"]
    # the CATs apply keeps are the ones from-stereoset and agreement count as retained
    items = pd.read_csv(tmp_path / "rep" / "agreement_items.csv")
    failed = set(items[items["reference_votes"] < 3]["task"])
    assert {c["cat_id"] for c in kept} == set(items["task"]) - failed

    # the cat kind checks labels against its options: kept "related" labels are named, one line, exit 2
    code, out, err = run_cli(
        [
            "annotate",
            "apply",
            "--json",
            "--kind",
            "cat",
            "--data",
            str(DEMO),
            "--judgments",
            str(j),
            "--min-agree",
            "3",
            "--out",
            str(tmp_path / "v2.jsonl"),
        ],
        capsys,
    )
    assert code == 2 and "unknown label 'related'" in err and len(err.strip().splitlines()) == 1
    j2 = tmp_path / "dropped.jsonl"
    code, out, err = run_cli(
        ["annotate", "from-stereoset", "--data", str(DEMO), "--out", str(j2), "--other-labels", "drop"], capsys
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            "annotate",
            "apply",
            "--json",
            "--kind",
            "cat",
            "--data",
            str(DEMO),
            "--judgments",
            str(j2),
            "--min-agree",
            "3",
            "--out",
            str(tmp_path / "v2.jsonl"),
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out.strip().splitlines()[-1])["accepted"] == 3


def test_from_stereoset_bad_inputs(tmp_path, capsys):
    flat = tmp_path / "flat.jsonl"
    flat.write_text(
        json.dumps(
            {
                "type": "intrasentence",
                "target": "cook",
                "bias_type": "profession",
                "context": "The cook was BLANK.",
                "stereotype": "The cook was fat.",
                "anti-stereotype": "The cook was thin.",
                "unrelated": "The cook was blue.",
            }
        )
        + "\n"
    )
    code, out, err = run_cli(
        ["annotate", "from-stereoset", "--data", str(flat), "--out", str(tmp_path / "j.csv")], capsys
    )
    assert code == 2 and "no validator labels" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "j.csv").exists()

    doc = json.loads(DEMO.read_text())
    doc["data"]["intrasentence"][0]["sentences"][0]["labels"][0] = "unrelated"  # a label without human_id
    bad = tmp_path / "dev.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="no human_id"):
        stereoset_judgments(bad)

    # a validator listed twice on one sentence: counted, and counted once for retention
    doc = json.loads(DEMO.read_text())
    labs = doc["data"]["intersentence"][1]["sentences"][2]["labels"]  # monk's anti: A U A A U
    labs.append(dict(labs[1]))  # v07's "unrelated" again
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(doc))
    df, s = stereoset_judgments(dup)
    assert s["n_duplicate_answers"] == 1 and len(df) == 61
    assert s["retention"]["reference_agreement"] == pytest.approx(0.816667, abs=1e-6)
    code, out, err = run_cli(
        ["annotate", "from-stereoset", "--data", str(dup), "--out", str(tmp_path / "d.csv")], capsys
    )
    assert code == 0 and "--duplicates first" in out


def test_agreement_report_writes_targets_file(tmp_path):
    df, _ = stereoset_judgments(DEMO)
    j = tmp_path / "j.jsonl"
    df.to_json(j, orient="records", lines=True)
    rep = agreement_report(AgreementOptions(judgments=j, out=tmp_path / "r", data=DEMO))
    assert rep["per_target_file"] == "agreement_targets.csv"
    on_disk = json.loads((tmp_path / "r" / "agreement.json").read_text())
    assert _by_term(on_disk["per_target"])[("religion", "monk")]["reference_votes"] == 13
    items = pd.read_csv(tmp_path / "r" / "agreement_items.csv")
    assert {"reference_label", "reference_votes", "target", "bias_type"} <= set(items.columns)


def test_retention_is_the_cat_rule_with_more_validators():
    """With 7 validators, 3 votes for the writer's label keep a sentence only when no other label has as
    many (annotation/cat_rule.py, the rule `apply --kind cat` uses); with 5 that never happens."""
    from collections import Counter

    from biaskit.annotation.cat_rule import option_verdict

    cases = {
        "beaten": [S] * 3 + [A] * 4,
        "tied": [S] * 3 + [A] * 3 + [U],
        "kept": [S] * 4 + [A] * 3,
        "kept-5": [S] * 3 + [U] * 2,
    }
    rows = [
        (t, f"w{i}", "option_stereotype", lab, S, t, "x") for t, labs in cases.items() for i, lab in enumerate(labs)
    ]
    df = pd.DataFrame(rows, columns=["task", "worker", "question", "label", "reference", "target", "bias_type"])
    rep, _ = agreement(df, min_agree=3)
    got = {r["target"]: r["retained"] for r in rep["per_target"]}
    assert got == {"beaten": 0, "tied": 0, "kept": 1, "kept-5": 1}
    assert got == {
        t: int(option_verdict(S, votes=Counter(labs), min_agree=3)["status"] == "accepted") for t, labs in cases.items()
    }


def test_cat_rule_reason_on_a_tie_below_the_threshold_names_no_false_winner():
    """2 of 4 for the writer's label and 2 for another: rejected (fewer than 3 agree), and the
    reason must not claim that most validators chose the writer's own label."""
    from collections import Counter

    from biaskit.annotation.cat_rule import option_verdict

    v = option_verdict("stereotype", votes=Counter({"stereotype": 2, "unrelated": 2}))
    assert v["status"] == "rejected" and v["agree"] == 2 and v["n"] == 4
    assert "most chose 'stereotype'" not in v["reason"] and "ties with another label" in v["reason"]
    v = option_verdict("stereotype", votes=Counter({"stereotype": 1, "unrelated": 3}))
    assert v["status"] == "rejected" and "most chose 'unrelated'" in v["reason"]
