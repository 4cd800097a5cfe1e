"""The `stereoset` template end to end on real services (slow, llm, labelstudio): `biaskit run` as a
process, the gemma3-270m GGUF behind llama.cpp (and a counting proxy) drafting CATs with the shipped
prompts, three validators in a real Label Studio (StereoSet's rule with overlap 3: all three must
give every option the writer's label), the `llm` engine translating the kept CATs into Hindi, two
reviewers writing the Hindi CATs blind, release + verify, `datasets.load_dataset` of the `cats`
config, StereoSet's own layout in both languages, SEAT tests from the release's groups, and
`evaluate` (CATs in English and Hindi with a tiny GPT-2, SEAT with a tiny BERT). `kill -9` lands
while a CAT drafting request is held: the next run makes no finished LLM call again. A last run
skips every stage and calls nothing.

gemma3-270m (the pretrained model, not an instruction-tuned one) writes poor CATs; the test checks
plumbing and counts, and the Hindi is what the reviewers write, as in test_pipeline_e2e.py."""

from __future__ import annotations

import json
import os
import time

import pytest
from pipeline_helpers import (
    CountingProxy,
    annotate,
    choice,
    clean_env,
    hindi_cat,
    kill_while_held,
    project_head,
    project_tasks,
    run_biaskit,
    text,
)

pytestmark = [pytest.mark.slow, pytest.mark.llm, pytest.mark.labelstudio]
pytest.importorskip("label_studio_sdk")

HI_TARGET = {"Muslim": "मुसलमान", "Hindu": "हिंदू"}


def _rows(path):
    out = []
    for x in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        try:
            out.append(json.loads(x))
        except ValueError:
            pass
    return out


def _state(proj):
    p = proj / ".biaskit" / "state.json"
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {"stages": {}}


def test_cats_in_english_and_hindi_from_llm_drafts_to_scores(
    gemma_llm_server, ls_server, ls_annotator, tiny_gpt2, tiny_bert, tmp_path
):
    proxy = CountingProxy(gemma_llm_server.base_url)
    url, admin = ls_server["url"], ls_server["token"]
    validators = [ls_annotator(f"cat-{c}@example.com") for c in "abc"]
    proj = tmp_path / "proj"
    proj.mkdir()
    name = f"cats-{os.getpid()}"
    # the drafted CATs are scored under StereoSet's protocol: intersentence CATs by a next-sentence head, here
    # one in the authors' file format for the tiny GPT-2 (as tests/test_nsp_head.py makes it)
    from test_nsp_head import _head_file
    from transformers import AutoModel

    nsp_head, _ = _head_file(
        AutoModel.from_pretrained(tiny_gpt2), tmp_path / "GPT2Model_gpt2_0.0005.pth", extra_row=True
    )
    (proj / "biaskit.toml").write_text(
        project_head(name, gemma_llm_server.model, proxy.base_url, url)
        + f"""
[stages.cats]
domains = "religion"
targets = ["Muslim", "Hindu"]
per_target = 3
llm = {{ max_tokens = 400 }}

[stages.cat_review]
overlap = 3

[stages.cat_translate]
target = "hi"
engines = ["llm"]
llm = {{ max_tokens = 200 }}

[stages.cat_translation_review]
overlap = 2

[stages.release]
date = "2025-01-01"
license = "cc-by-4.0"
plots = false

[stages.seat_tests]

[stages.evaluate]
models = ["{tiny_gpt2}"]
scorer = "clm"
split = "test"
seat_models = ["{tiny_bert}"]
n_samples = 500
batch_size = 8
nsp_head = "{nsp_head}"
""",
        encoding="utf-8",
    )
    env = clean_env(LABEL_STUDIO_API_KEY=admin, BIASKIT_CACHE_DIR=str(tmp_path / "cache"))
    run = ["run", "--project", str(proj)]
    logs = tmp_path / "logs"
    logs.mkdir()
    drafts = proj / "work" / "cats" / "cats.intrasentence.drafts.jsonl"

    try:
        # 1. kill -9 while a CAT drafting request is held (the first one after some drafts are written)
        kill_while_held(
            proxy, lambda c: c.path.endswith("/chat/completions") and bool(_rows(drafts)), run, env, logs / "run1.log"
        )
        kept = _rows(drafts)
        finished = {c.body_sha for c in proxy.chat_calls() if c.finished}
        assert kept and finished and _state(proj)["stages"]["cats"]["status"] == "running"

        # 2. the re-run resumes the drafting (no finished call again) and stops at the validators (exit 3)
        t1 = time.time()
        code, out = run_biaskit(run, env, logs / "run2.log")
        assert code == 3, out
        assert "cats: resuming" in out
        assert [c for c in proxy.chat_calls(since=t1) if c.body_sha in finished] == []
        assert all(r in _rows(drafts) for r in kept)
        cats = _rows(proj / "work" / "cats" / "cats.jsonl")
        assert len(cats) >= 2, out
        assert f"cat review: 0 of {len(cats)} tasks have 3 judgments" in out

        # the validators: all three give the writer's labels, except on the first CAT (one disagrees)
        tasks = {t.data["biaskit_id"]: t for t in project_tasks(url, admin, f"{name} cat review")}
        assert set(tasks) == {c["cat_id"] for c in cats}
        rejected = cats[0]["cat_id"]
        for k, v in enumerate(validators):
            for cid, t in tasks.items():
                res = []
                for slot in t.data["biaskit_slots"]:
                    lab = slot["gold_label"]
                    if cid == rejected and k == 0 and lab == "stereotype":
                        lab = "unrelated"
                    res.append(choice(f"label_{slot['slot']}", f"sentence_{slot['slot']}", lab))
                annotate(url, v["token"], t.id, res)

        # 3. validated -> retention report -> Hindi candidates -> stops at the blind review
        code, out = run_biaskit(run, env, logs / "run3.log")
        assert code == 3, out
        valid = _rows(proj / "work" / "cat_review" / "cats.jsonl")
        assert {c["cat_id"] for c in valid} == {c["cat_id"] for c in cats} - {rejected}
        ret = json.loads((proj / "work" / "cat_review" / "retention.json").read_text(encoding="utf-8"))
        assert ret["overall"]["validated"] == len(valid) and ret["overall"]["rejected"] == 1
        assert {r["target"] for r in ret["by_target"]} <= {"Muslim", "Hindu"}
        cands = _rows(proj / "work" / "cat_translate" / "cat_candidates.jsonl")
        assert sorted(c["cat_id"] for c in cands) == sorted(c["cat_id"] for c in valid)
        assert f"hi CAT review: 0 of {len(cands)} tasks have 2 judgments" in out

        # two reviewers reject the machine's Hindi and write the same CAT themselves
        h_tasks = project_tasks(url, admin, f"{name} hi CAT review")
        src = {c["cat_id"]: c for c in valid}
        written = {}
        for i, t in enumerate(sorted(h_tasks, key=lambda t: t.data["biaskit_id"]), start=1):
            cid = t.data["biaskit_id"]
            hi = written[cid] = hindi_cat(src[cid], i, HI_TARGET)
            for v in validators[1:]:
                annotate(
                    url,
                    v["token"],
                    t.id,
                    [choice("choice", "src_context", "none"), *(text(f"corrected_{f}", f"src_{f}", hi[f]) for f in hi)],
                )

        # 4. apply -> release (English + Hindi CATs) -> SEAT tests -> scores: done
        code, out = run_biaskit(run, env, logs / "run4.log")
        assert code == 0, out
        rel = proj / "release" / f"{name}-1.0.0"
        code, vout = run_biaskit(["release", "verify", str(rel)], env, logs / "verify.log")
        assert code == 0, vout
        released = _rows(rel / "cats.jsonl")
        hi = [c for c in released if c["lang"] == "hi"]
        assert len(hi) == len(valid) and {c["source_id"] for c in hi} == set(src)
        split_of = {c["cat_id"]: c["meta"]["split"] for c in released}
        assert all(split_of[c["source_id"]] == c["meta"]["split"] for c in hi)  # a translation joins its source
        for c in hi:
            w = written[c["source_id"]]
            assert c["context"] == w["context"] and c["target"] == w["target"]
        for f in ("dev.json", "test.json", "dev.hi.json", "test.hi.json"):
            assert (rel / "stereoset" / f).exists(), f
        import datasets

        ds = datasets.load_dataset(str(rel), "cats")
        assert sum(len(ds[s]) for s in ds) == len(released) and set(ds["test"]["lang"]) <= {"en", "hi"}
        card = (rel / "README.md").read_text(encoding="utf-8")
        assert "CAT retention (retention.json" in card and "gemma3-270m" in card
        # the card from the records: gemma3-270m wrote the English drafts, the reviewers the Hindi CATs, three
        # validators per CAT (overlap 3, not the template's five); release.json: StereoSet's protocol
        assert f"| en | LLM draft (gemma3-270m) | {len(valid)} |" in card
        assert f"| hi | reviewers (written by them) | {len(hi)} |" in card and "five" not in card
        assert "validated by en: 3 validators per CAT" in card
        assert json.loads((rel / "release.json").read_text(encoding="utf-8"))["protocol"] == "stereoset"
        # privacy: the validators' e-mail logins, this machine's paths and the admin token are in no file
        import pyarrow.parquet as pq

        for f in (x for x in rel.rglob("*") if x.is_file() and x.suffix != ".png"):
            body = json.dumps(pq.read_table(f).to_pylist()) if f.suffix == ".parquet" else f.read_text("utf-8")
            assert not any(b in body for b in ("@example.com", str(tmp_path), admin)), f
        ev = proj / "eval" / f"{name}-1.0.0"
        for lg in ("en", "hi"):
            (d,) = list((ev / "cats" / lg).iterdir())
            s = json.loads((d / "summary.json").read_text(encoding="utf-8"))
            assert s["count"] == sum(1 for c in released if c["lang"] == lg and c["meta"]["split"] == "test")
            assert s["protocol"]["name"] == "stereoset" and str(tmp_path) not in json.dumps(s)
            (d,) = list((ev / "seat" / lg).iterdir())
            assert json.loads((d / "summary.json").read_text(encoding="utf-8"))["tests"]

        # 5. nothing changed: every stage is skipped, no LLM call, no new task
        t3 = time.time()
        n_tasks = {t: len(project_tasks(url, admin, f"{name} {t}")) for t in ("cat review", "hi CAT review")}
        code, out = run_biaskit(run, env, logs / "run5.log")
        assert code == 0 and out.count("unchanged, skipped") == 7, out
        assert proxy.chat_calls(since=t3) == []
        assert {t: len(project_tasks(url, admin, f"{name} {t}")) for t in n_tasks} == n_tasks
    finally:
        proxy.close()
