"""LLM pre-labels end to end on the real services: the llama.cpp server (SmolLM2) answers each tuple's
questions through the one job runner, the answers reach a REAL Label Studio as predictions (visible in
its API with their model_version) and are hidden from annotators by default: an annotator in a real
Chromium sees nothing chosen, and, in a project pushed with --show-predictions, the LLM's answers
already chosen (screenshots in tests/artifacts/browser). A re-run asks the LLM nothing and adds no
prediction. Three annotators then answer, and `annotate judge-agreement` compares them with the LLM.
(Label Studio OSS's Data Manager quick view pre-fills a task with its first prediction whatever the
setting: docs/annotation.md says so; annotators label through the stream.)"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import run_cli
from fixtures_labelstudio import write_tuples

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio, pytest.mark.llm]


def test_prelabels_as_hidden_predictions_and_the_judge_report(
    llm_server, ls_server, ls_annotator, chromium, browser_artifacts, tmp_path, monkeypatch, capsys
):
    from biaskit.annotation.kinds import get_kind
    from biaskit.annotation.labelstudio import connect, existing_task_ids, find_project
    from browser_helpers import LabelStudioPage
    from label_studio_sdk import LabelStudio

    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-llama-not-a-secret")
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    admin = LabelStudio(base_url=ls_server["url"], api_key=ls_server["token"])
    data = write_tuples(tmp_path / "tuples.jsonl", 4, start=300)
    k = get_kind("tuple")
    ids = [k.record_id(r) for r in k.load(data)]
    hidden, shown = "prelabel hidden", "prelabel shown"

    # people's project first; the pre-labels come later, onto its existing tasks
    assert (
        run_cli(
            ["annotate", "push", "--kind", "tuple", "--data", str(data), "--project", hidden, "--overlap", "3"], capsys
        )[0]
        == 0
    )
    out = tmp_path / "llm.csv"
    prelabel = [
        "annotate",
        "prelabel",
        "--kind",
        "tuple",
        "--data",
        str(data),
        "--out",
        str(out),
        "--project",
        hidden,
        "--model",
        llm_server.model,
        "--base-url",
        llm_server.base_url,
    ]
    code, so, err = run_cli(prelabel, capsys)
    assert code == 0, so + err
    llm = pd.read_csv(out)
    assert set(llm["task"]) == set(ids) and set(llm["question"]) == {"stereotype", "polarity"}
    mv = llm["model"].iloc[0]
    assert mv.startswith("smollm2 prelabel@1 (")
    assert "hidden from annotators" in so
    c = connect(ls_server["url"], ls_server["token"])
    proj = find_project(c, hidden)
    assert proj.show_collab_predictions is False
    tids = existing_task_ids(c, proj.id)
    preds = list(admin.predictions.list(project=proj.id))
    assert len(preds) == 4 and {p.model_version for p in preds} == {mv}
    by_task = {p.task: {r["from_name"]: r["value"]["choices"][0] for r in p.result} for p in preds}
    for t in ids:  # each prediction holds the LLM's answers of that task
        want = dict(zip(llm[llm["task"] == t]["question"], llm[llm["task"] == t]["label"], strict=False))
        assert by_task[tids[t]] == want
    # a re-run: every answer from the cache (no request reaches the llama.cpp server), no new prediction
    llm_server.wait_idle()
    before = llm_server.requests()
    code, so, err = run_cli(prelabel, capsys)
    assert code == 0 and "0 HTTP request(s)" in so, so + err
    llm_server.wait_idle()
    assert llm_server.requests() == before
    assert len(list(admin.predictions.list(project=proj.id))) == 4

    # the same pre-labels shown (pre-filled) in a second project
    assert (
        run_cli(
            [
                "annotate",
                "push",
                "--kind",
                "tuple",
                "--data",
                str(data),
                "--project",
                shown,
                "--predictions",
                str(out),
                "--show-predictions",
            ],
            capsys,
        )[0]
        == 0
    )
    proj2 = find_project(c, shown)
    assert proj2.show_collab_predictions is True and len(list(admin.predictions.list(project=proj2.id))) == 4

    # what an annotator sees in the label stream ("Label All Tasks"): nothing chosen in the hidden project,
    # the LLM's answers already chosen in the shown one
    user = ls_annotator("prelabel-viewer@example.com")
    page = LabelStudioPage.login(chromium, ls_server["url"], user["email"], user["password"])
    shown_text = {t: f"group {300 + i} " for i, t in enumerate(ids)}

    def served():
        body = page.area.inner_text()
        return next(t for t, g in shown_text.items() if g in body + " ")

    def checked(q):
        return [o for o in page.options(q) if page._option(q, o).locator("input").is_checked()]

    def close_instructions():  # the stream opens the guidelines panel first; a person closes it
        try:
            page.instructions(wait_s=5).get_by_role("button").first.click()
            page.page.wait_for_timeout(500)
        except Exception:  # no panel: nothing to close
            pass

    page.open_stream(proj.id, proj.label_config)
    close_instructions()
    page.screenshot(browser_artifacts / "prelabel_hidden.png")
    assert served() in ids and checked("stereotype") == [] and checked("polarity") == []
    page.open_stream(proj2.id, proj2.label_config)
    close_instructions()
    page.screenshot(browser_artifacts / "prelabel_shown.png")
    t0 = served()
    said = dict(zip(llm[llm["task"] == t0]["question"], llm[llm["task"] == t0]["label"], strict=False))
    for q, lab in said.items():
        assert checked(q) == [lab], (q, lab)
    page.page.context.close()

    # three people answer the hidden project; the judge report compares them with the LLM
    people = [ls_annotator(f"prelabel-{i}@example.com") for i in range(3)]
    answers = {t: ["yes", "yes", "no"] if i % 2 else ["no", "no", "no"] for i, t in enumerate(ids)}
    for t in ids:
        for u, lab in zip(people, answers[t], strict=False):
            LabelStudio(base_url=ls_server["url"], api_key=u["token"]).annotations.create(
                id=tids[t],
                result=[
                    {"from_name": "stereotype", "to_name": "tuple", "type": "choices", "value": {"choices": [lab]}}
                ],
            )
    pulled = tmp_path / "people.csv"
    assert run_cli(["annotate", "pull", "--project", hidden, "--out", str(pulled)], capsys)[0] == 0
    code, so, err = run_cli(
        [
            "annotate",
            "judge-agreement",
            "--judgments",
            str(pulled),
            "--llm",
            str(out),
            "--out",
            str(tmp_path / "judge"),
        ],
        capsys,
    )
    assert code == 0, err
    rep = json.loads((tmp_path / "judge" / "judge.json").read_text())
    s = rep["models"][mv]["questions"]["stereotype"]
    majority = {t: max(set(v), key=v.count) for t, v in answers.items()}
    llm_st = dict(
        zip(llm[llm["question"] == "stereotype"]["task"], llm[llm["question"] == "stereotype"]["label"], strict=False)
    )
    assert s["items"] == 4
    assert s["agreement_with_majority"] == pytest.approx(sum(llm_st[t] == majority[t] for t in ids) / 4)
    assert rep["models"][mv]["verdict"].startswith("The LLM ")
    assert "Verdict" in (tmp_path / "judge" / "judge.md").read_text()
