"""LLM pre-labels and the judge report without Label Studio: tasks rendered from the kind's own config
and guidelines, answers back through the kind's own judgments (CAT slots -> option_<gold>), junk
replies survived (errors file, raw text kept), the cache on a re-run, and `judge-agreement`'s figures
checked by hand (Cohen's kappa from its definition, alpha with the krippendorff package on the
reliability matrix, the precision / coverage curve counted by hand)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from biaskit.annotation.kinds import get_kind
from biaskit.annotation.prelabel import answers_to_judgments, prelabel_items
from conftest import REPO, run_cli
from fixtures_labelstudio import write_tuples
from llm_standin import chat, standin_server  # noqa: F401 (a fixture)

from biaskit.io import read_jsonl

DEMO = REPO / "data" / "demo" / "stereoset_labels_demo.json"


def test_items_are_what_annotators_see():
    k = get_kind("cat")
    cats = k.load(DEMO)
    item = prelabel_items(k, cats[:1])[0]
    data = k.task(cats[0])["data"]
    assert item["guidelines"] == k.guidelines["en"]
    for s in "ABC":  # the three sentences in the order Label Studio shows them
        assert data[f"sentence_{s}"] in item["item"]
    assert [q["id"] for q in item["questions"]] == ["label_A", "label_B", "label_C"]
    assert all(q["options"] == ["stereotype", "anti-stereotype", "unrelated"] for q in item["questions"])
    # answers are control values: the slot whose writer's label is 'unrelated' answered 'unrelated' ...
    slot = {d["gold_label"]: d["slot"] for d in data["biaskit_slots"]}
    rows = [
        {"task": cats[0].cat_id, "control": f"label_{slot['unrelated']}", "label": "unrelated"},
        {"task": cats[0].cat_id, "control": f"label_{slot['stereotype']}", "label": "anti-stereotype"},
    ]
    j = answers_to_judgments(k, cats, rows, model_version="m p@1")
    # ... become the questions people's answers become (option_<writer's label>)
    assert sorted(zip(j["question"], j["label"], strict=False)) == [
        ("option_stereotype", "anti-stereotype"),
        ("option_unrelated", "unrelated"),
    ]
    assert set(j["worker"]) == {"llm:m p@1"}


def test_tuple_items_and_schema(tmp_path):
    from biaskit.curation.tasks.prelabel import PrelabelTask

    k = get_kind("tuple")
    recs = k.load(write_tuples(tmp_path / "t.jsonl", 2))
    item = prelabel_items(k, recs)[1]
    assert "group 1" in item["item"] and "trait 1" in item["item"]
    assert {q["id"]: q["options"] for q in item["questions"]} == {
        "stereotype": ["yes", "no"],
        "polarity": ["positive", "negative"],
    }
    schema = PrelabelTask().schema_for(item)
    assert schema["properties"]["answers"]["properties"]["stereotype"]["enum"] == ["yes", "no"]


def test_prelabel_offline_then_cached(tmp_path, capsys):
    data = write_tuples(tmp_path / "t.jsonl", 3)
    out = tmp_path / "llm.csv"
    cmd = ["annotate", "prelabel", "--kind", "tuple", "--data", str(data), "--out", str(out), "--llm", "dummy"]
    code, so, err = run_cli(cmd, capsys)
    assert code == 0, err
    df = pd.read_csv(out)
    assert len(df) == 6 and set(df["question"]) == {"stereotype", "polarity"}
    assert df["model"].iloc[0].startswith("dummy prelabel@1 (")
    code, so, err = run_cli(cmd, capsys)
    assert code == 0 and "0 HTTP request(s)" in so and "3 already done" in so, so
    runs = read_jsonl(tmp_path / "llm.answers.runlog.jsonl")
    assert len(runs) == 2 and runs[-1]["skipped_done"] == 3


def test_junk_replies_are_kept_not_fatal(tmp_path, capsys, standin_server, monkeypatch):  # noqa: F811 (the fixture imported from llm_standin)
    """Replies a small model gives (keys that are options, an answer outside the options) go to the errors
    file with the raw text (after the client's one re-ask); the usable reply is kept; the run goes on."""
    replies = [
        '{"answers": {"yes": "no", "positive": "negative"}}',  # keys are options: junk
        '{"answers": {"stereotype": "yes", "polarity": "negative"}}',  # usable
        '{"answers": {"stereotype": "maybe", "polarity": "negative"}}',
    ]  # outside the options

    def respond(body, n):
        text = json.dumps(body["messages"])
        i = next(i for i in range(3) if f"group {i} " in text)
        return chat(replies[i])

    srv = standin_server(respond)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret-123")
    data = write_tuples(tmp_path / "t.jsonl", 3)
    out = tmp_path / "llm.csv"
    code, so, err = run_cli(
        [
            "annotate",
            "prelabel",
            "--kind",
            "tuple",
            "--data",
            str(data),
            "--out",
            str(out),
            "--model",
            "m",
            "--base-url",
            srv.base_url,
            "--max-retries",
            "0",
        ],
        capsys,
    )
    assert code == 0, err
    df = pd.read_csv(out)
    assert sorted(zip(df["question"], df["label"], strict=False)) == [("polarity", "negative"), ("stereotype", "yes")]
    errs = sorted(read_jsonl(tmp_path / "llm.answers.errors.jsonl"), key=lambda r: r["raw"])
    assert [e["raw"] for e in errs] == sorted([replies[0], replies[2]])
    assert all(e["status"] == "schema_error" for e in errs) and "2 failed" in so


def _people_and_llm(tmp_path):
    """Five tuples, three people each (in file order), and an LLM.
    task  people        majority  LLM
    t1    yes yes yes   yes       yes
    t2    yes no  yes   yes       no
    t3    no  no  no    no        no
    t4    no  yes no    no        yes
    t5    yes yes no    yes       yes
    """
    people = {"t1": "yyy", "t2": "yny", "t3": "nnn", "t4": "nyn", "t5": "yyn"}
    llm = {"t1": "y", "t2": "n", "t3": "n", "t4": "y", "t5": "y"}
    word = {"y": "yes", "n": "no"}
    h = pd.DataFrame(
        [
            {
                "task": t,
                "worker": f"p{i}",
                "question": "stereotype",
                "label": word[x],
                "kind": "tuple",
                "bias_type": "caste" if t in ("t1", "t2") else "gender",
            }
            for t, xs in people.items()
            for i, x in enumerate(xs)
        ]
    )
    m = pd.DataFrame(
        [
            {"task": t, "worker": "llm:m", "question": "stereotype", "label": word[x], "kind": "tuple"}
            for t, x in llm.items()
        ]
    )
    h.to_csv(tmp_path / "people.csv", index=False)
    m.to_csv(tmp_path / "llm.csv", index=False)
    return people, llm


def test_judge_report_by_hand(tmp_path, capsys):
    import krippendorff

    people, llm = _people_and_llm(tmp_path)
    code, so, err = run_cli(
        [
            "annotate",
            "judge-agreement",
            "--judgments",
            str(tmp_path / "people.csv"),
            "--llm",
            str(tmp_path / "llm.csv"),
            "--out",
            str(tmp_path / "judge"),
        ],
        capsys,
    )
    assert code == 0, err
    rep = json.loads((tmp_path / "judge" / "judge.json").read_text())
    m = rep["models"]["m"]
    s = m["questions"]["stereotype"]
    # LLM vs majority: yes/yes no/yes no/no yes/no yes/yes -> 3 of 5 agree
    assert s["agreement_with_majority"] == 0.6
    # Cohen's kappa by its definition: po = 0.6; LLM says yes 3/5, majority yes 3/5 -> pe = .36 + .16 = .52
    assert s["cohen_kappa_vs_majority"] == pytest.approx((0.6 - 0.52) / (1 - 0.52), abs=1e-4)
    assert s["confusion"] == {"no": {"no": 1, "yes": 1}, "yes": {"no": 1, "yes": 2}}
    # alpha: the people alone, then with the LLM as a fourth rater (nominal, items = tasks)
    code = {"yes": 1, "no": 0}
    mat = np.array([[code[{"y": "yes", "n": "no"}[people[t][i]]] for t in sorted(people)] for i in range(3)], float)
    llm_row = np.array([[code[{"y": "yes", "n": "no"}[llm[t]]] for t in sorted(people)]], float)
    assert s["alpha_people"] == pytest.approx(
        krippendorff.alpha(reliability_data=mat, level_of_measurement="nominal"), abs=1e-4
    )
    assert s["alpha_people_and_llm"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([mat, llm_row]), level_of_measurement="nominal"), abs=1e-4
    )
    assert set(s["per_axis"]) == {"caste", "gender"} and s["per_axis"]["caste"]["items"] == 2
    # the curve (strict majority of the 3 people decides; accepted 'yes' or accepted 'no'):
    # k=0: the LLM alone on all 5, right on t1 t3 t5 -> 3/5; one person alone right on t1 t2 t3 t4 t5 (p0:
    # y y n n y = majority each time) -> 5/5. k=1: LLM and p0 agree on t1 t3 t5 (right on all 3), saving
    # 2 judgments each; p0 and p1 agree on t1 t3 t5 -> 3/3.
    c = {x["k"]: x for x in m["decision"]["curve"]}
    assert c[0]["llm_and_k_people"] == {"coverage": 1.0, "precision": 0.6, "judgments_saved": 15}
    assert c[0]["k_plus_1_people"] == {"coverage": 1.0, "precision": 1.0}
    assert c[1]["llm_and_k_people"] == {"coverage": 0.6, "precision": 1.0, "judgments_saved": 6}
    assert c[1]["k_plus_1_people"] == {"coverage": 0.6, "precision": 1.0}
    assert m["decision"]["stands_in_at_k"] == [1, 2]
    assert (
        m["verdict"].startswith("The LLM can stand in for one person at k = 1") and "too few to rely on" in m["verdict"]
    )
    assert "judge.md" in so and "Verdict" in (tmp_path / "judge" / "judge.md").read_text()


def test_judge_says_plainly_when_the_llm_saves_nothing(tmp_path, capsys):
    _people_and_llm(tmp_path)
    m = pd.read_csv(tmp_path / "llm.csv")
    m["label"] = m["label"].map({"yes": "no", "no": "yes"})  # always against the people's first answer
    m.to_csv(tmp_path / "llm.csv", index=False)
    code, so, err = run_cli(
        [
            "annotate",
            "judge-agreement",
            "--judgments",
            str(tmp_path / "people.csv"),
            "--llm",
            str(tmp_path / "llm.csv"),
            "--out",
            str(tmp_path / "judge"),
        ],
        capsys,
    )
    assert code == 0, err
    assert "The LLM is not good enough to save any human judgment here" in so
    # the people's file passed as the LLM's: refused in one line
    code, so, err = run_cli(
        [
            "annotate",
            "judge-agreement",
            "--judgments",
            str(tmp_path / "people.csv"),
            "--llm",
            str(tmp_path / "people.csv"),
            "--out",
            str(tmp_path / "judge"),
        ],
        capsys,
    )
    assert code == 2 and "also among the people's" in err and len(err.strip().splitlines()) == 1
