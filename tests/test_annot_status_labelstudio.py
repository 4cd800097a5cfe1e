"""Against a REAL Label Studio: push puts the kind's guidelines in the project's instructions panel
(and keeps them up to date without needless updates), and `annotate status --project` reads a live
project: three invited annotators answer through the API (their own tokens); every figure is
counted by hand from what they answered."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from biaskit.io import write_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio]

PAIRS = [
    {
        "sent_more": f"Group{i} people are lazy.",
        "sent_less": f"Other{i} people are lazy.",
        "direction": "stereo",
        "bias_type": "socioeconomic",
        "lang": "en",
    }
    for i in range(4)
]


def test_guidelines_and_status_on_a_live_project(ls_server, ls_annotator, tmp_path, monkeypatch, capsys):
    from biaskit.annotation.guidelines import guidelines_html
    from biaskit.annotation.labelstudio import existing_task_ids, find_project
    from label_studio_sdk import LabelStudio
    from test_annot_labelstudio import annotate, ch

    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    data = write_jsonl(tmp_path / "pairs.jsonl", PAIRS)
    title = "status and guidelines"
    code, out, err = run_cli(
        ["annotate", "push", "--kind", "pair", "--data", str(data), "--project", title, "--overlap", "3"], capsys
    )
    assert code == 0 and "4 task(s) imported" in out, err
    admin = LabelStudio(base_url=ls_server["url"], api_key=ls_server["token"])
    proj = admin.projects.get(find_project(admin, title).id)
    assert proj.show_instruction and proj.expert_instruction == guidelines_html("pair")  # stored as sent
    assert "एनोटेटर दिशानिर्देश" in proj.expert_instruction
    code, out, _ = run_cli(["annotate", "push", "--kind", "pair", "--data", str(data), "--project", title], capsys)
    assert code == 0 and "instructions updated" not in out  # nothing changed, nothing sent
    code, out, _ = run_cli(
        ["annotate", "push", "--kind", "pair", "--data", str(data), "--project", title, "--guidelines", "en"], capsys
    )
    assert code == 0 and "instructions updated" in out
    assert admin.projects.get(proj.id).expert_instruction == guidelines_html("pair", "en")

    # three annotators: task 0 by a b c (stereo stereo antistereo), task 1 by a b (stereo invalid),
    # task 2 by a (stereo), task 3 by nobody
    tasks = existing_task_ids(admin, proj.id)
    tid = [tasks[p] for p in (r["pair_id"] for r in _ids(data))]
    users = {w: ls_annotator(f"status-{w}@example.com") for w in "abc"}
    for w, t, label, lead in (
        ("a", 0, "stereo", 4.0),
        ("b", 0, "stereo", 6.0),
        ("c", 0, "antistereo", 20.0),
        ("a", 1, "stereo", 8.0),
        ("b", 1, "invalid", 10.0),
        ("a", 2, "stereo", 2.0),
    ):
        annotate(ls_server, users[w], tid[t], [ch("validity", "sent_more", label)], lead_time=lead)
    code, out, err = run_cli(["annotate", "status", "--project", title, "--json"], capsys)
    assert code == 0, err
    st = json.loads(out)
    assert (st["tasks"], st["overlap"], st["done"], st["in_progress"], st["not_started"]) == (4, 3, 1, 2, 1)
    assert st["annotators_per_task"] == {"0": 1, "1": 1, "2": 1, "3": 1}
    people = {p["annotator"]: p for p in st["per_annotator"]}
    assert {w: (p["done"], p["pending"]) for w, p in people.items()} == {
        "status-a@example.com": (3, 1),
        "status-b@example.com": (2, 2),
        "status-c@example.com": (1, 3),
    }
    # task 0 (the only one with 2+ others): validity: c (antistereo) against a + b (stereo) disagrees; a and b
    # each see one stereo and one antistereo: a tie, not compared. The 12 concern boxes nobody ticked are
    # 12 "no" answers each: everyone agrees. c: 1 of 13; a, b: 0 of 12
    assert {w: (p["compared"], p["disagreements"]) for w, p in people.items()} == {
        "status-a@example.com": (12, 0),
        "status-b@example.com": (12, 0),
        "status-c@example.com": (13, 1),
    }
    assert st["per_annotator"][0]["annotator"] == "status-c@example.com"
    assert people["status-a@example.com"]["lead_time_median"] == 4.0  # 4, 8, 2
    assert st["time_per_task"]["median"] == 7.0  # 2 4 6 8 10 20
    code, out, _ = run_cli(["annotate", "status", "--project", title, "--question", "validity"], capsys)
    assert code == 0 and "| status-c@example.com | 1 | 3 | 20.0 | 100.0% (1 of 1) |" in out
    assert "| status-a@example.com | 3 | 1 | 4.0 | n/a |" in out


def _ids(path):
    from biaskit.readers import read_pairs

    return [{"pair_id": p.pair_id} for p in read_pairs(path).pairs]
