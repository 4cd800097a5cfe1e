"""On a REAL Label Studio: StereoSet CATs that share a context all arrive as tasks (the bug of
issue 10: one id per context made `annotate push` skip 48 of the 85 such CATs of the dev set as
"duplicates"), and the same CATs read from the original dev.json format have the same ids (pushing
them again into the same project adds nothing)."""

from __future__ import annotations

import json

import pytest
from stereoset_helpers import shared_context_rows, to_original

from biaskit.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio]


def test_push_keeps_every_cat_that_shares_a_context(ls_server, stereoset_jsonl, tmp_path, monkeypatch, capsys):
    from biaskit.annotation.labelstudio import connect, find_project
    from label_studio_sdk import LabelStudio

    from biaskit.readers import read_cats

    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    rows = [r for _, r in shared_context_rows(stereoset_jsonl)]
    flat = tmp_path / "shared.jsonl"
    flat.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    title = "biaskit cats sharing a context"
    main(["annotate", "push", "--kind", "cat", "--data", str(flat), "--project", title])
    out = capsys.readouterr().out
    assert "85 task(s) imported, 0 already there, 85 record(s)" in out and "duplicate" not in out

    proj = find_project(connect(ls_server["url"], ls_server["token"]), title)
    tasks = list(LabelStudio(base_url=ls_server["url"], api_key=ls_server["token"]).tasks.list(project=proj.id))
    assert len(tasks) == 85
    got = {t.data["biaskit_id"]: t.data for t in tasks}
    # the ids annotation pushed are the ids evaluation scores under
    assert set(got) == {c.cat_id for c in read_cats(flat)}
    # each task shows its own options, not the first CAT of its context
    chess = [d for d in got.values() if d["context"] == "The chess player was BLANK."]
    assert len(chess) == 4
    assert len({tuple(sorted(d[f"sentence_{s}"][3:] for s in "ABC")) for d in chess}) == 4

    # the same CATs in StereoSet's original format: same ids, so nothing new is imported
    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps(to_original(rows, seed=1)), encoding="utf-8")
    main(["annotate", "push", "--kind", "cat", "--data", str(dev), "--project", title])
    assert "0 task(s) imported, 85 already there" in capsys.readouterr().out
