"""`curate cats` against a real llama.cpp server (SmolLM2-135M from PyPI) with the real openai client.
SmolLM2's replies are junk; what is tested is the plumbing: every job ends as drafts or as a recorded
failure, every draft as a CAT or as an invalid draft with its problems, the CATs keep the structural
promises, and the same run again asks the server nothing (counted in its access log)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from biaskit.curation.cats import PROBLEMS
from conftest import run_cli

from biaskit.io import read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def _rows(p: Path) -> list[dict]:
    return read_jsonl(p) if p.exists() else []


def test_curate_cats_against_llama_cpp(llm_server, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    out = tmp_path / "cats.jsonl"
    args = [
        "curate",
        "cats",
        "--domains",
        "religion",
        "--targets",
        "Muslim,Hindu",
        "--per-target",
        "2",
        "--max-tokens",
        "240",
        "--temperature",  # greedy (the tasks' default is 0.7), seed 0: the same drafts every run
        "0",
        "--seed",
        "0",
        "--model",
        llm_server.model,
        "--base-url",
        llm_server.base_url,
        "--out",
        str(out),
    ]
    before = llm_server.requests()
    code, stdout, err = run_cli(args, capsys)
    llm_server.wait_idle()
    first = llm_server.requests() - before
    drafts, failed = [], []
    for split in ("intrasentence", "intersentence"):
        d = _rows(tmp_path / f"cats.{split}.drafts.jsonl")
        e = _rows(tmp_path / f"cats.{split}.drafts.errors.jsonl")
        # every job (one per target) ended as drafts or as a recorded failure with the raw reply
        assert len({r["provenance"]["job"] for r in d}) + len(e) == 2, split
        assert all(r["raw"] is not None or r["status"] == "request_error" for r in e)
        for r in d:
            p = r["provenance"]
            assert p["model"] == "smollm2" and p["prompt_id"] == f"cat_{split}" and p["task"] == f"cat_{split}"
            assert r["split"] == split and r["domain"] == "religion" and r["target"] in ("Muslim", "Hindu")
        drafts += d
        failed += e
    assert code == (1 if not drafts else 0), err
    assert 4 <= first <= 2 * 4 + 2  # one request per job, a re-ask per unusable reply, format probes
    cats, invalid = _rows(out), _rows(tmp_path / "cats.invalid.jsonl")
    # every draft is accounted for exactly once: a CAT or an invalid draft with its reasons
    assert sorted([c["meta"]["draft_id"] for c in cats] + [r["draft_id"] for r in invalid]) == sorted(
        r["draft_id"] for r in drafts
    )
    assert all(r["problems"] and {p["code"] for p in r["problems"]} <= set(PROBLEMS) for r in invalid)
    for c in cats:
        assert len({o["sentence"].lower() for o in c["options"]}) == 3
        assert c["context"].count("BLANK") == (1 if c["split"] == "intrasentence" else 0)
    rep = json.loads((tmp_path / "cats.retention.json").read_text())
    o = rep["overall"]
    assert (o["drafted"], o["valid"], o["failed_jobs"], o["jobs"]) == (len(drafts), len(cats), len(failed), 4)

    # the same command again: answered from the drafts files and the cache (failed jobs are tried
    # again, from the cache), the same outputs and the same failed jobs
    snapshot = {
        p: p.read_text() for p in tmp_path.glob("cats*.jsonl") if ".runlog." not in p.name and ".errors." not in p.name
    }
    failed_jobs = {r["job"] for r in failed}
    before = llm_server.requests()
    run_cli(args, capsys)
    llm_server.wait_idle()
    assert llm_server.requests() - before == 0
    assert {p: p.read_text() for p in snapshot} == snapshot
    assert {
        r["job"] for s in ("intrasentence", "intersentence") for r in _rows(tmp_path / f"cats.{s}.drafts.errors.jsonl")
    } == failed_jobs
