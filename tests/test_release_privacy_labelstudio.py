"""The card test and the privacy test on a real pipeline (labelstudio): `biaskit run` of the stereoset
template's stages with the settings a curator changes -- the `dummy` LLM backend (with the model name
`biaskit init` writes, gpt-4o-mini, which it never calls), three validators per CAT (`overlap = 3`, not
the template's five) and two reviewers who reject every machine translation and write each Hindi CAT
themselves -- against a real Label Studio whose annotator logins are e-mail addresses.

Then each claim these settings change is checked on the card (who wrote the English and the Hindi
text, which LLM, how many validators, the English source) and in release.json (the protocol of the
drafted CATs); the release holds no e-mail address, no path of this machine and no token (searched
by this test in every file and Parquet cell, not by the scanner under test); the pseudonyms are the
keyed hashes of the logins with the project's key; `release verify` fails on a copy where one login
was put back, naming the file, row and field.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil

import pytest
from conftest import run_cli
from pipeline_helpers import annotate, choice, hindi_cat, project_tasks, text

pytestmark = [pytest.mark.labelstudio]
pytest.importorskip("label_studio_sdk")

HI_TARGET = {"Muslim": "मुसलमान", "Hindu": "हिंदू", "Sikh": "सिख", "Christian": "ईसाई"}


def _rows(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _release_text(folder) -> dict[str, str]:
    import pyarrow.parquet as pq

    out = {}
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        if f.suffix == ".parquet":
            out[str(f)] = json.dumps(pq.read_table(f).to_pylist(), ensure_ascii=False)
        elif f.suffix != ".png":
            out[str(f)] = f.read_text(encoding="utf-8")
    return out


def test_the_card_follows_the_settings_and_the_release_names_no_annotator(
    ls_server, ls_annotator, tmp_path, capsys, monkeypatch
):
    url, admin = ls_server["url"], ls_server["token"]
    people = [ls_annotator(f"card-{c}@example.com") for c in "abc"]
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", admin)
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    proj = tmp_path / "proj"
    proj.mkdir()
    name = f"card-{os.getpid()}"
    (proj / "biaskit.toml").write_text(
        f"""
[project]
name = "{name}"
version = "1.0.0"

[llm]
backend = "dummy"
model = "gpt-4o-mini"

[labelstudio]
url = "{url}"
"""
        + """
[stages.cats]
domains = "religion"
targets = ["Muslim", "Hindu", "Sikh", "Christian"]
per_target = 1

[stages.cat_review]
overlap = 3

[stages.cat_translate]
target = "hi"
engines = ["llm"]

[stages.cat_translation_review]
overlap = 2

[stages.release]
date = "2025-01-01"
license = "cc-by-4.0"
plots = false
keyness = false
""",
        encoding="utf-8",
    )
    run = ["run", "--project", str(proj)]

    # 1. drafts -> the validators' tasks: all three give every option the writer's label
    code, out, err = run_cli(run, capsys)
    assert code == 3, out + err
    cats = _rows(proj / "work" / "cats" / "cats.jsonl")
    assert len(cats) >= 4
    for v in people:
        for t in project_tasks(url, admin, f"{name} cat review"):
            res = [
                choice(f"label_{s['slot']}", f"sentence_{s['slot']}", s["gold_label"]) for s in t.data["biaskit_slots"]
            ]
            annotate(url, v["token"], t.id, res)

    # 2. validated -> Hindi candidates -> two reviewers reject every candidate and write the CAT themselves
    code, out, err = run_cli(run, capsys)
    assert code == 3, out + err
    src = {c["cat_id"]: c for c in _rows(proj / "work" / "cat_review" / "cats.jsonl")}
    assert set(src) == {c["cat_id"] for c in cats}
    h_tasks = project_tasks(url, admin, f"{name} hi CAT review")
    assert len(h_tasks) == len(src)
    for i, t in enumerate(sorted(h_tasks, key=lambda t: t.data["biaskit_id"]), start=1):
        hi = hindi_cat(src[t.data["biaskit_id"]], i, HI_TARGET)
        for v in people[1:]:
            answer = [choice("choice", "src_context", "none"), *(text(f"corrected_{f}", f"src_{f}", hi[f]) for f in hi)]
            annotate(url, v["token"], t.id, answer)

    # 3. the release, built and verified by the stage
    code, out, err = run_cli(run, capsys)
    assert code == 0, out + err
    rel = proj / "release" / f"{name}-1.0.0"
    released = _rows(rel / "cats.jsonl")
    en = [c for c in released if c["lang"] == "en"]
    hi = [c for c in released if c["lang"] == "hi"]
    assert len(en) == len(src) and len(hi) == len(src)

    # privacy: no login, no path of this machine, no token, in any file or Parquet cell
    for f, content in _release_text(rel).items():
        for bad in ("@example.com", "card-a", "card-b", "card-c", str(tmp_path), admin):
            assert bad not in content, (f, bad)
    key = bytes.fromhex((proj / ".biaskit" / "release.key").read_text().strip())
    p = {
        v["email"]: "ann-" + hmac.new(key, f"{name}\0{v['email']}".encode(), hashlib.sha256).hexdigest()[:10]
        for v in people
    }
    for c in en:
        for o in c["options"]:
            assert sorted(lab["annotator"] for lab in o["human_labels"]) == sorted(p.values())
    for c in hi:
        assert sorted(r["worker"] for r in c["meta"]["review"]["reviewers"]) == sorted(
            p[v["email"]] for v in people[1:]
        )

    # the card: each claim the settings changed, computed from the records
    card = (rel / "README.md").read_text(encoding="utf-8")
    assert "gpt-4o-mini" not in card and "five" not in card
    assert f"| en | biaskit-curate | LLM draft (dummy backend: placeholder text, no model called) | {len(en)} |" in card
    assert f"| hi | cat-translation-review | reviewers (written by them) | {len(hi)} |" in card
    assert "validated by en: 3 validators per CAT (at least 3 had to give the writer's label on every option" in card
    assert f"CAT translation review (hi): 2 reviewers per record on {len(hi)} released records" in card
    info = json.loads((rel / "release.json").read_text(encoding="utf-8"))
    assert info["protocol"] == "stereoset"

    # `release verify` finds a login put back into a copy, naming file, row and field
    bad = tmp_path / "bad"
    shutil.copytree(rel, bad)
    lines = (bad / "cats.jsonl").read_text(encoding="utf-8").splitlines()
    row = next(i for i, x in enumerate(lines, start=1) if json.loads(x)["lang"] == "hi")
    obj = json.loads(lines[row - 1])
    obj["meta"]["review"]["reviewers"][1]["worker"] = people[2]["email"]
    lines[row - 1] = json.dumps(obj, ensure_ascii=False)
    (bad / "cats.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run_cli(["release", "verify", str(bad)], capsys)
    assert code == 2
    assert (
        f"{bad}/cats.jsonl, row {row}: field 'meta.review.reviewers[1].worker': an e-mail address (ca…@example.com)"
        in err
    ), err
