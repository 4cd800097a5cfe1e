"""StereoSet's validation round on a REAL Label Studio: CATs drafted offline (`curate cats --llm dummy`)
are pushed with five annotations per task, labelled by five real annotator accounts, pulled,
aggregated, applied with the ">= 3 of 5 agree with the writer" rule and counted by `curate
cats-retention`: the `<!-- cat-validation -->` block of docs/curation.md, run as written."""

from __future__ import annotations

import json
import shlex

import pytest
from conftest import run_cli
from test_cur_tasks import _doc_block

from biaskit.io import read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio]

VALIDATORS = tuple(f"validator{i}@example.com" for i in range(1, 6))
SWAP = {"stereotype": "anti-stereotype", "anti-stereotype": "stereotype", "unrelated": "unrelated"}


def test_cat_validation_block_against_label_studio(ls_server, ls_annotator, tmp_path, capsys, monkeypatch):
    from biaskit.annotation.kinds import get_kind
    from biaskit.annotation.labelstudio import connect, existing_task_ids, find_project
    from label_studio_sdk import LabelStudio

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    assert (
        run_cli(
            [
                "curate",
                "cats",
                "--domains",
                "religion",
                "--targets",
                "Muslim,Sikh",
                "--per-target",
                "2",
                "--split",
                "intrasentence",
                "--llm",
                "dummy",
                "--out",
                "cats.jsonl",
            ],
            capsys,
        )[0]
        == 0
    )
    cats = read_jsonl("cats.jsonl")
    assert len(cats) >= 3
    push, pull, aggregate, apply, retention = (shlex.split(x)[1:] for x in _doc_block("<!-- cat-validation -->"))
    assert run_cli(push, capsys)[0] == 0
    users = [ls_annotator(e) for e in VALIDATORS]
    c = connect(ls_server["url"], ls_server["token"])
    project = find_project(c, "CATs")
    assert project.maximum_annotations == 5
    have = existing_task_ids(c, project.id)
    kind = get_kind("cat")
    records = {r.cat_id: r for r in kind.load("cats.jsonl")}
    # the plan, per CAT (by position): which validators give which labels
    #   0: validators 3-5 swap stereotype and anti-stereotype -> 2 of 5 agree on those -> rejected
    #   1: everyone gives the writer's labels -> kept
    #   2: only validators 1-2 answer -> waits for adjudication
    #   3...: validators 1-3 agree, 4-5 say "unrelated" everywhere -> 3 of 5 on each sentence -> kept
    expected = {}
    for i, cat in enumerate(cats):
        data = kind.task(records[cat["cat_id"]], 0)["data"]
        for n, user in enumerate(users):
            if i == 2 and n >= 2:
                continue
            res = []
            for s in data["biaskit_slots"]:
                gold = s["gold_label"]
                lab = SWAP[gold] if i == 0 and n >= 2 else gold if i in (0, 1) or n < 3 else "unrelated"
                res.append(
                    {
                        "from_name": f"label_{s['slot']}",
                        "to_name": f"sentence_{s['slot']}",
                        "type": "choices",
                        "value": {"choices": [lab]},
                    }
                )
            LabelStudio(base_url=ls_server["url"], api_key=user["token"]).annotations.create(
                id=have[cat["cat_id"]], result=res, lead_time=2.0
            )
        expected[cat["cat_id"]] = {0: "rejected", 2: "needs_adjudication"}.get(i, "validated")
    for argv in (pull, aggregate, apply, retention):
        code, out, err = run_cli(argv, capsys)
        assert code == 0, (argv, err)
    kept = {r["cat_id"] for r in read_jsonl("cats.validated.jsonl")}
    assert kept == {k for k, v in expected.items() if v == "validated"}
    dropped = {r["id"]: r["status"] for r in read_jsonl("cats.validated.rejected.jsonl")}
    assert dropped == {k: v for k, v in expected.items() if v != "validated"}
    one = (
        next(r for r in read_jsonl("cats.validated.jsonl") if r["cat_id"] == cats[3]["cat_id"])
        if len(cats) > 3
        else None
    )
    if one is not None:
        assert {g: a["agree"] for g, a in one["meta"]["annotation"].items()} == {
            "stereotype": 3,
            "anti-stereotype": 3,
            "unrelated": 5,
        }
    rep = json.loads((tmp_path / "retention.json").read_text())
    o = rep["overall"]
    n_kept = sum(v == "validated" for v in expected.values())
    assert (o["valid"], o["validated"], o["rejected"], o["needs_adjudication"], o["not_annotated"]) == (
        len(cats),
        n_kept,
        1,
        1,
        0,
    )
    assert o["validated_pct"] == round(100 * n_kept / len(cats), 1)
