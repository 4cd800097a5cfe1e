"""Adaptive overlap without a server: the settled rule against a brute force over every vote sequence
(N <= 7), the kind-level rule of a CAT against a brute force over joint sequences, the fewest
judgments a follow-up round asks for, the rules against aggregate / apply, the risk model, and
`annotate replay` on hand-checked files (StereoSet's layout through `from-stereoset`, unchanged)."""

from __future__ import annotations

import itertools
import json
import sys
from functools import cache

import numpy as np
import pandas as pd
import pytest
from biaskit.annotation.adaptive import AdaptiveSettings, TaskVotes, decide, task_votes
from biaskit.annotation.kinds import get_kind
from biaskit.annotation.settle import MajorityRule, WriterLabelRule, counts_of
from conftest import REPO, run_cli

sys.path.insert(0, str(REPO / "benchmarks"))


def _rules(labels, N):
    yield MajorityRule(labels, None)
    for k in range(1, N + 1):
        yield MajorityRule(labels, k)
        yield WriterLabelRule(labels, k, gold=labels[0])


def _brute(rule, seq, N, memo):
    """Every continuation of ``seq`` by 0 .. N - len(seq) more votes gives ``seq``'s outcome?"""

    def outcome(s):
        key = tuple(sorted(counts_of(s).items()))
        if key not in memo:
            memo[key] = rule.outcome(dict(key))
        return memo[key]

    base = outcome(seq)
    for m in range(1, N - len(seq) + 1):
        for ext in itertools.product(rule.labels, repeat=m):
            if outcome(seq + ext) != base:
                return False
    return True


@pytest.mark.parametrize("labels", [("a", "b"), ("a", "b", "c")])
def test_settled_equals_brute_force_over_every_vote_sequence(labels):
    checked = 0
    for N in range(1, 8):
        for rule in _rules(labels, N):
            memo: dict = {}
            for n in range(N + 1):
                for seq in itertools.product(labels, repeat=n):
                    want = _brute(rule, seq, N, memo)
                    got = rule.settled(counts_of(seq), N - n)
                    assert got == want, (rule, seq, N)
                    checked += 1
    # every sequence of every length 0..N, for every rule (strict majority, K = 1..N, writer's label K = 1..N)
    assert checked == sum((2 * N + 1) * sum(len(labels) ** n for n in range(N + 1)) for N in range(1, 8))


def test_more_needed_is_the_fewest_votes_that_can_settle():
    for labels in (("a", "b"), ("a", "b", "c")):
        for N in range(1, 7):
            for rule in _rules(labels, N):
                memo: dict = {}
                for n in range(N + 1):
                    for seq in itertools.product(labels, repeat=n):
                        m = rule.more_needed(counts_of(seq), N - n)
                        # brute force: the shortest continuation after which the state is settled
                        want = next(
                            j
                            for j in range(N - n + 1)
                            for ext in itertools.product(labels, repeat=j)
                            if _brute(rule, seq + ext, N, memo)
                        )
                        assert m == want, (rule, seq, N)


def test_cat_task_settled_equals_brute_force_over_joint_sequences():
    """A CAT: every annotator labels its three sentences; the CAT's decision (all accepted -> accepted,
    any rejected -> rejected) must not change whatever the remaining annotators say."""
    k = get_kind("cat")
    labels = ("stereotype", "anti-stereotype", "unrelated")
    for K in (2, 3):
        rules = k.decision_rules(K)
        qs = list(rules)

        def decision(state):
            return k.task_outcome({q: rules[q].outcome(counts_of(state[i])) for i, q in enumerate(qs)})  # noqa: B023 (used in this iteration only)

        for N in range(1, 6):

            @cache
            def reach(state):
                out = {decision(state)}
                if len(state[0]) < N:  # noqa: B023 (reach is rebuilt for each N)
                    for joint in itertools.product(labels, repeat=3):
                        nxt = tuple(tuple(sorted(state[i] + (joint[i],))) for i in range(3))
                        out |= reach(nxt)
                return frozenset(out)

            for n in range(N + 1):  # the decision depends on the counts: each sentence's vote multiset
                multisets = list(itertools.combinations_with_replacement(sorted(labels), n))
                for state in itertools.product(multisets, repeat=3):
                    outs = {q: rules[q].outcome(counts_of(state[i])) for i, q in enumerate(qs)}
                    sett = {q: rules[q].settled(counts_of(state[i]), N - n) for i, q in enumerate(qs)}
                    assert k.task_settled(outs, sett) == (len(reach(state)) == 1), (K, N, state)


def test_majority_rule_outcome_is_aggregates_decision():
    """The rule adaptive overlap waits on is the one `aggregate` / `apply` use: random vote sets."""
    from biaskit.annotation.aggregate import aggregate

    rng = np.random.default_rng(3)
    rows = []
    for t in range(400):
        for w in range(int(rng.integers(1, 7))):
            rows.append({"task": f"t{t}", "worker": f"w{w}", "label": str(rng.choice(["x", "y", "z"]))})
    df = pd.DataFrame(rows)
    for K in (None, 2, 3):
        table, _ = aggregate(df, min_agree=K)
        rule = MajorityRule(("x", "y", "z"), K)
        for t, sub in df.groupby("task"):
            r = table[table["task"] == t].iloc[0]
            got = rule.outcome(counts_of(sub["label"]))
            assert got[0] == r["status"], (t, K)
            if got[0] == "accepted":
                assert got[1] == r["label"]


def test_writer_rule_outcome_is_cat_applys_decision(tmp_path):
    """On StereoSet's layout: the CATs `apply --kind cat` accepts are the ones the rules accept."""
    from biaskit.annotation.apply import run_apply
    from biaskit.annotation.options import ApplyOptions
    from biaskit.annotation.stereoset_labels import stereoset_judgments

    demo = REPO / "data" / "demo" / "stereoset_labels_demo.json"
    j, _ = stereoset_judgments(demo, other_labels="drop")
    res = run_apply(ApplyOptions.from_kwargs(kind="cat", data=demo, out=tmp_path / "ok.jsonl", judgments=j))
    kept = {c.cat_id for c in res.accepted}
    k = get_kind("cat")
    rules = k.decision_rules(None)
    mine = {
        t
        for t, tv in task_votes(j).items()
        if k.task_outcome({q: rules[q].outcome(tv.counts(q)) for q in rules})[0] == "accepted"
    }
    assert mine == kept and len(kept) == 3


def _tuple_rows(plan):
    return pd.DataFrame(
        [
            {"task": t, "worker": f"a{i}", "question": "stereotype", "label": lab, "kind": "tuple"}
            for t, labs in plan.items()
            for i, lab in enumerate(labs)
        ]
    )


def test_decide_exact_and_the_fewest_judgments_asked():
    k = get_kind("tuple")
    st = AdaptiveSettings("exact", 2, 5, min_agree=3)
    tv = task_votes(
        _tuple_rows({"t1": ["yes", "yes", "yes"], "t2": ["yes", "no"], "t3": ["no"], "t4": ["yes", "no", "no", "no"]})
    )
    d = decide(tv, k, st, ids=["t1", "t2", "t3", "t4", "t5"])
    # t1: 3 of 3 "yes" >= K and no other label can reach 3 with 2 more: settled, accepted yes
    assert d["t1"].settled and d["t1"].by == "exact" and d["t1"].outcome == ("accepted", "yes")
    # t2: 1-1; no label can reach K=3 before 2 more votes: asks for 2 at once
    assert not d["t2"].settled and d["t2"].more == 2
    # t3, t5: below min_judgments: ask for the rest of the first round
    assert d["t3"].more == 1 and d["t5"].more == 2 and not d["t5"].settled
    # t4: "no" 3 of 4, "yes" can at most tie (2-3 with 1 more: no): settled
    assert d["t4"].settled and d["t4"].outcome == ("accepted", "no")


def test_replay_by_hand(tmp_path, capsys):
    """IndiBias-style tuples, strict majority, 2..3 judgments:
    t1 yes yes yes -> settled after 2 (2 of 2; one more cannot undo a strict majority of 3);
    t2 yes no yes -> 3; t3 no no yes -> 2 (accepted 'no'); t4 yes no (only two recorded) -> 2.
    Full overlap: 3 + 3 + 3 + 2 = 11 judgments; adaptive 2 + 3 + 2 + 2 = 9, no decision changed."""
    f = tmp_path / "j.csv"
    _tuple_rows(
        {"t1": ["yes", "yes", "yes"], "t2": ["yes", "no", "yes"], "t3": ["no", "no", "yes"], "t4": ["yes", "no"]}
    ).to_csv(f, index=False)
    out = tmp_path / "rep.json"
    code, so, _ = run_cli(
        [
            "annotate",
            "replay",
            "--judgments",
            str(f),
            "--policy",
            "exact",
            "--min-judgments",
            "2",
            "--max-judgments",
            "3",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 0, so
    rep = json.loads(out.read_text())
    assert (rep["policy"], rep["tasks"], rep["judgments_full"], rep["judgments_used"], rep["decisions_changed"]) == (
        "exact",
        4,
        11,
        9,
        0,
    )
    assert rep["retention_full"] == rep["retention_adaptive"] == 0.5  # t1 and t2 accepted "yes"
    assert "9 used of 11" in so


def test_replay_runs_on_from_stereoset_output_unchanged(tmp_path, capsys):
    """StereoSet's layout (data/demo/stereoset_labels_demo.json) -> from-stereoset -> replay.
    Task level, 3..5: demo-intra-1 (15 of 15 agree) settles after 3; demo-inter-2 after 4 (its
    anti-stereotype sentence: a u a a = 3 of 4 with 1 to come); demo-intra-2 and demo-inter-1 need
    all 5 (2-2 splits) -> 3 + 4 + 5 + 5 = 17 of 20. Per sentence: 9 + 13 + 12 + 10 = 44 of 60."""
    demo = REPO / "data" / "demo" / "stereoset_labels_demo.json"
    j = tmp_path / "ss.csv"
    assert run_cli(["annotate", "from-stereoset", "--data", str(demo), "--out", str(j)], capsys)[0] == 0
    for unit, used, full in (("task", 17, 20), ("item", 44, 60)):
        out = tmp_path / f"{unit}.json"
        code, so, err = run_cli(
            ["annotate", "replay", "--judgments", str(j), "--policy", "exact", "--unit", unit, "--out", str(out)],
            capsys,
        )
        assert code == 0, err
        rep = json.loads(out.read_text())
        assert (rep["kind"], rep["judgments_used"], rep["judgments_full"], rep["decisions_changed"]) == (
            "cat",
            used,
            full,
            0,
        )
    # the risk policy runs on the same file (a model on 60 judgments); exact-settled tasks stay settled
    code, so, err = run_cli(
        [
            "annotate",
            "replay",
            "--judgments",
            str(j),
            "--policy",
            "risk",
            "--min-judgments",
            "2",
            "--out",
            str(tmp_path / "risk.json"),
        ],
        capsys,
    )
    assert code == 0, err
    rep = json.loads((tmp_path / "risk.json").read_text())
    assert rep["judgments_used"] <= 17 and rep["decisions_changed"] <= 1


def test_replay_bad_input_is_one_line(tmp_path, capsys):
    f = tmp_path / "j.csv"
    f.write_text("task,worker,label\nt1,a,yes\n", encoding="utf-8")
    for extra, words in (
        (["--min-judgments", "4", "--max-judgments", "3"], "--max-judgments (3) is below"),
        ([], "do not say their task kind"),
        (["--kind", "tuple", "--policy", "risk", "--epsilon", "2"], "--epsilon 2.0: Input should be less than 1"),
    ):
        code, _, err = run_cli(["annotate", "replay", "--judgments", str(f), *extra], capsys)
        assert code == 2 and words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_risk_policy_on_a_synthetic_crowd():
    """A StereoSet-like crowd (benchmarks/adaptive_overlap.py): exact never changes a decision; risk
    saves more and changes at most epsilon of them; on the hard crowd risk stays within epsilon too."""
    from adaptive_overlap import cat_crowd
    from biaskit.annotation.replay import replay

    easy = cat_crowd(400, seed=7, skill_mean=0.85, released=0.05)
    ex = replay(easy, AdaptiveSettings("exact", 2, 5), unit="item")
    rk = replay(easy, AdaptiveSettings("risk", 2, 5, epsilon=0.02), unit="item")
    # (figures over several seeds and 2,000 CATs: docs/annotation.md; a 400-CAT sample varies by a few points)
    assert ex["decisions_changed"] == 0 and ex["saved_share"] >= 0.27
    assert rk["saved_share"] >= ex["saved_share"] + 0.1 and rk["changed_share"] <= 0.01
    hard = cat_crowd(400, seed=8, skill_mean=0.85, hard_share=0.32)
    hr = replay(hard, AdaptiveSettings("risk", 2, 5, epsilon=0.01), unit="item")
    assert hr["changed_share"] <= 0.01 and 0.2 <= 1 - hr["retention_full"] <= 0.4


def test_crowd_model_recovers_known_accuracies():
    """One-coin Dawid-Skene + hard items, fitted by EM on a crowd with known worker accuracies."""
    from biaskit.annotation.risk import fit_crowd

    rng = np.random.default_rng(0)
    skill = {"good": 0.95, "good2": 0.9, "ok": 0.8, "ok2": 0.75, "poor": 0.6, "bad": 0.45}
    rows = []
    for i in range(1500):
        z = int(rng.integers(0, 3))
        hard = rng.random() < 0.2
        for w, p in skill.items():
            lab = int(rng.integers(0, 3)) if hard else (z if rng.random() < p else (z + int(rng.integers(1, 3))) % 3)
            rows.append((f"t{i}", "q", w, "abc"[lab]))
    m = fit_crowd(pd.DataFrame(rows, columns=["task", "question", "worker", "label"]), {"q": ("a", "b", "c")})
    for w, p in skill.items():
        assert abs(m.skills[w] - p) < 0.05, (w, m.skills[w])
    assert abs(m.hard - 0.2) < 0.06  # a hard item whose random votes happen to agree looks easy


def test_task_votes_keep_file_order_and_the_latest_answer():
    df = pd.DataFrame(
        [
            {"task": "t", "worker": "b", "question": "stereotype", "label": "no", "updated_at": "2024-01-01"},
            {"task": "t", "worker": "a", "question": "stereotype", "label": "yes", "updated_at": "2024-01-02"},
            {"task": "t", "worker": "b", "question": "stereotype", "label": "yes", "updated_at": "2024-01-03"},
        ]
    )
    tv = task_votes(df)["t"]
    assert tv.annotators == ["b", "a"] and tv.counts("stereotype") == {"yes": 2}
    assert isinstance(tv.first(1), TaskVotes) and tv.first(1).counts("stereotype") == {"yes": 1}


def test_a_settled_p_change_that_is_no_number_is_one_line_naming_file_row_and_column(tmp_path, capsys):
    """A hand-edited ``settled_p_change`` (``annotate pull``'s column of an adaptive project) is bad input:
    one line naming the file, the row and the column, exit 2, no output written."""
    j = tmp_path / "j.csv"
    j.write_text(
        "task,question,worker,label,settled_by,settled_status,settled_label,settled_p_change\n"
        "t1,stereotype,w1,yes,,,,\n"
        "t2,stereotype,w1,yes,risk,accepted,yes,abc\n",
        encoding="utf-8",
    )
    out = tmp_path / "agg.csv"
    code, so, err = run_cli(["annotate", "aggregate", "--judgments", str(j), "--out", str(out)], capsys)
    assert code == 2, so + err
    msg = (so + err).strip()
    assert len(msg.splitlines()) == 1 and "Traceback" not in msg, msg
    assert f"{j}, row 2, column 'settled_p_change'" in msg and "'abc' is not a number" in msg, msg
    assert not out.exists()
