"""A first local trial without hand edits (issue 29), the parts that need no service: `biaskit init
--trial` projects (they load, are small, and each trial value's full-size value is the one of the full
template), the LLM client fitting a server that takes one request at a time or answers slowly (a local
stand-in server, tests/llm_standin.py), progress lines without a terminal, the Ctrl-C line, and the
`--skip-invalid` hint of an identical pair. The real llama.cpp / Label Studio side is in
tests/test_trial_e2e.py."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from llm_standin import Reply, chat, standin_server  # noqa: F401 (a fixture)

TRIAL_STAGES = {
    "stereoset": ["cats", "cat_review", "cat_translate", "cat_translation_review", "release", "seat_tests", "evaluate"],
    "generate": [
        "tuples",
        "tuple_review",
        "sentences",
        "antistereo",
        "sentence_review",
        "pairs",
        "check",
        "pair_review",
        "translate",
        "translation_review",
        "release",
        "seat_tests",
        "evaluate",
    ],
    "adapt": ["adapt", "check", "pair_review", "translate", "translation_review", "release", "seat_tests", "evaluate"],
}


# ------------------------------------------------------------------------------------------ init --trial
def _tables(text: str) -> dict[str, dict[str, tuple[object, str]]]:
    """table -> key -> (value, the full-size value's text from the comment, or "")."""
    out: dict[str, dict[str, tuple[object, str]]] = {}
    table = ""
    for line in text.splitlines():
        m = re.match(r"^\[([\w.]+)\]", line)
        if m:
            table = m.group(1)
            continue
        m = re.match(r"^(\w+) = (.*?)\s+#.*\(full size: (.*)\)\s*$", line) or re.match(
            r"^(\w+) = (.*?)(\s+#.*)?$", line
        )
        if m and table:
            value = tomllib.loads(f"v = {m.group(2)}")["v"]
            full = m.group(3) if m.lastindex and m.lastindex >= 3 and "full size" in line else ""
            out.setdefault(table, {})[m.group(1)] = (value, full or "")
    return out


def _full_value(text: str) -> object:
    """The full-size value written in a comment: a TOML value, or "leave out"."""
    if text.startswith("leave out"):
        return "leave out"
    for cand in (text, text.split(":")[0], text.split(",")[0]):
        try:
            return tomllib.loads(f"v = {cand}")["v"]
        except tomllib.TOMLDecodeError:
            continue
    raise AssertionError(f"full-size value not readable: {text!r}")


@pytest.mark.parametrize("template", sorted(TRIAL_STAGES))
@pytest.mark.parametrize("hindi", [True, False])
def test_a_trial_project_loads_is_small_and_is_one_comment_away_from_full_size(tmp_path, capsys, template, hindi):
    from biaskit.pipeline import load_project
    from biaskit.pipeline.templates import project_template

    d = tmp_path / "trial"
    args = ["init", str(d), "--template", template, "--trial", "--hindi" if hindi else "--no-hindi"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "biaskit llm serve" in out and "A first trial" in out
    text = (d / "biaskit.toml").read_text(encoding="utf-8")
    p = load_project(d, check_inputs=False)
    want = [
        s
        for s in TRIAL_STAGES[template]
        if hindi or s not in ("translate", "translation_review", "cat_translate", "cat_translation_review")
    ]
    assert p.enabled() == want
    # sized for 2 cores and 3 people: one request at a time to the local model, overlap <= 3, an encoder for SEAT
    if template != "adapt" or hindi:  # (the adapt template without Hindi calls no LLM: no [llm] table)
        llm = p.llm(want[0])
        assert (llm.model, llm.concurrency, llm.base_url, llm.timeout) == ("gemma3-270m", 1, None, 300)
    assert all(p.stage(s).overlap <= 3 for s in want if s.endswith("review"))
    ev = p.stage("evaluate")
    assert ev.seat_models == ["all-minilm-l6-v2"] and ev.models == ["gemma3-270m"] and ev.limit == 100
    if template == "stereoset":
        cats = p.stage("cats")
        assert (cats.domains, cats.targets, cats.per_target, p.stage("cat_review").overlap) == (
            "religion",
            ["Muslim", "Hindu"],
            3,
            3,
        )
    # every "(full size: V)" is the full template's value of that key (or its default: "leave out")
    full = _tables(project_template("trial", template=template, hindi=hindi))
    full_p = load_project_text(tmp_path / "full", project_template("trial", template=template, hindi=hindi))
    said = 0
    for table, keys in _tables(text).items():
        for key, (_, comment) in keys.items():
            if not comment:
                continue
            said += 1
            want_v = _full_value(comment)
            have = full.get(table, {}).get(key)
            if want_v == "leave out":
                assert have is None, (table, key, have)
            elif have is not None:
                assert have[0] == want_v, (table, key, have[0], want_v)
            else:  # not written in the full template: its default is the full-size value
                obj = full_p.config.llm if table == "llm" else full_p.stage(table.removeprefix("stages."))
                assert getattr(obj, key) == want_v, (table, key, getattr(obj, key), want_v)
    assert said >= 4


def load_project_text(d: Path, text: str):
    from biaskit.pipeline import load_project

    d.mkdir(parents=True, exist_ok=True)
    (d / "biaskit.toml").write_text(text, encoding="utf-8")
    return load_project(d, check_inputs=False)


def test_the_readme_and_docs_give_the_trial_commands():
    """README.md and docs/pipeline.md show the same trial commands; tests/test_trial_e2e.py runs them."""
    from test_trial_e2e import TRIAL_COMMANDS

    for page in ("README.md", "docs/pipeline.md", "docs/curation.md"):
        text = (REPO / page).read_text(encoding="utf-8")
        for cmd in TRIAL_COMMANDS:
            assert cmd in text, (page, cmd)


# ------------------------------------------------------------------------------------------ fitting the server
def _one_at_a_time(seconds: float, title: str | None = None):
    """A stand-in that answers one chat request at a time (``seconds`` each), as llama-cpp-python does,
    and records the most requests it held at once; with ``title``, its OpenAPI document names it."""
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def respond(body, n):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        with _SERIAL:
            time.sleep(seconds)
        with lock:
            state["now"] -= 1
        words = ["careful", "loud", "quiet", "proud", "humble"]
        return chat(json.dumps({"attributes": [f"{w}{n}" for w in words]}))

    return respond, state


_SERIAL = threading.Lock()


def _tuples(base_url: str, out: Path, *extra: str) -> list[str]:
    ids = "Dalit,Brahmin,OBC,Kshatriya"
    return ["curate", "tuples", "--axis", "caste", "--identities", ids, "--polarity", "negative", "--n", "5"] + [
        "--model",
        "m",
        "--base-url",
        base_url,
        "--out",
        str(out),
        *extra,
    ]


@pytest.fixture
def _no_key(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))


def test_a_server_that_says_it_answers_one_request_at_a_time_gets_one(standin_server, tmp_path, capsys, _no_key):  # noqa: F811 (the fixture imported from llm_standin)
    from biaskit.curation.llm.fit import probe_slots

    respond, state = _one_at_a_time(0.05)
    s = standin_server(respond)
    s.get = {"/openapi.json": {"openapi": "3.1.0", "info": {"title": "🦙 llama.cpp Python API", "version": "0.3"}}}
    assert probe_slots(s.base_url) == (1, "🦙 llama.cpp Python API answers one request at a time")
    code, out, err = run_cli(_tuples(s.base_url, tmp_path / "t.jsonl", "--concurrency", "4"), capsys)
    assert code == 0, err
    assert state["peak"] == 1 and s.count == 4
    assert "1 request(s) in flight, not the --concurrency 4 asked for" in err
    log = [json.loads(x) for x in (tmp_path / "t.runlog.jsonl").read_text().splitlines()][-1]
    assert log["llm"]["server"]["slots"] == 1


@pytest.mark.slow
@pytest.mark.llm
def test_the_real_llama_cpp_server_is_known_to_answer_one_request_at_a_time(llm_server):
    """The stand-in above copies the OpenAPI title of llama-cpp-python's server; here the real server (the one
    `biaskit llm serve` runs, tests/fixtures_llm.py) is probed, so the title the client matches is the one it
    serves."""
    from biaskit.curation.llm.fit import probe_slots

    n, how = probe_slots(llm_server.base_url)
    assert n == 1 and how.endswith(" answers one request at a time") and "llama.cpp python" in how.lower(), how


def test_llama_cpp_slots_are_read_from_props(standin_server):  # noqa: F811 (the fixture imported from llm_standin)
    from biaskit.curation.llm.fit import probe_slots

    s = standin_server(lambda body, n: chat("{}"))
    s.get = {"/props": {"total_slots": 2, "default_generation_settings": {}}}
    assert probe_slots(s.base_url) == (2, "llama.cpp's server reports 2 slot(s)")
    s.get = {}
    assert probe_slots(s.base_url) == (None, "")  # says nothing: nothing assumed


def test_timeouts_back_off_until_the_server_keeps_up_and_the_run_completes(standin_server, tmp_path, capsys, _no_key):  # noqa: F811 (the fixture imported from llm_standin)
    # a server that answers one request at a time in 0.6 s and does not say so: 4 requests in flight with a
    # 1 s timeout cannot all be answered in time; the client halves the requests in flight (4 -> 2 -> 1)
    # and, if still needed, doubles the timeout, and every job ends up answered
    respond, state = _one_at_a_time(0.6)
    s = standin_server(respond)
    code, out, err = run_cli(_tuples(s.base_url, tmp_path / "t.jsonl", "--concurrency", "4", "--timeout", "1"), capsys)
    assert code == 0, err
    steps = [x for x in err.splitlines() if "Backing off" in x]
    assert steps and "it is up but slow" in steps[0] and "within 1 s" in steps[0], err
    assert "Backing off to 2 request(s) at a time" in steps[0] and "--concurrency 1" in steps[0], err
    rows = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert sorted({r["identity"] for r in rows}) == ["Brahmin", "Dalit", "Kshatriya", "OBC"]
    log = [json.loads(x) for x in (tmp_path / "t.runlog.jsonl").read_text().splitlines()][-1]
    assert log["errors"] == 0 and log["llm"]["server"]["backoff"][0] == "2 request(s) at a time"


def test_under_biaskit_run_the_back_off_names_the_llm_table(standin_server, tmp_path, capsys, _no_key):  # noqa: F811 (the fixture imported from llm_standin)
    respond, _ = _one_at_a_time(0.6)
    s = standin_server(respond)
    d = tmp_path / "p"
    d.mkdir()
    (d / "biaskit.toml").write_text(
        f'[project]\nname = "slow"\n\n[llm]\nmodel = "m"\nbase_url = "{s.base_url}"\nconcurrency = 3\ntimeout = 1\n\n'
        '[stages.tuples]\naxes = ["caste"]\nidentities = { caste = ["Dalit", "Brahmin", "OBC"] }\n'
        'polarity = "negative"\nn = 5\n',
        encoding="utf-8",
    )
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0, out + err
    said = out + err
    assert "Backing off" in said and f"set concurrency = 1 in [llm] of {d / 'biaskit.toml'}" in said, said


# ------------------------------------------------------------------------------------------ a person can follow along
def test_without_a_terminal_a_long_step_prints_a_line_with_counts(monkeypatch, capsys):
    from biaskit.progress import progress

    monkeypatch.delenv("BIASKIT_NO_PROGRESS", raising=False)
    monkeypatch.setenv("BIASKIT_PROGRESS_EVERY", "0.2")
    with progress(None, "cats", heartbeat=True), progress(3, "cat_intrasentence", unit="jobs") as bar:
        for _ in range(3):
            time.sleep(0.25)
            bar.advance()
    err = capsys.readouterr().err.splitlines()
    counted = [x for x in err if x.startswith("cat_intrasentence: ")]
    assert re.fullmatch(r"cat_intrasentence: [0-3]/3 jobs \(\d+s\)", counted[0]), err
    assert counted[-1].startswith("cat_intrasentence: 3/3 jobs, done in"), err
    # the stage's own line stays quiet while the bar inside it speaks
    assert not [x for x in err if x.startswith("cats: ")], err


def test_a_stage_that_reports_nothing_still_says_it_runs(monkeypatch, capsys):
    from biaskit.progress import progress

    monkeypatch.delenv("BIASKIT_NO_PROGRESS", raising=False)
    monkeypatch.setenv("BIASKIT_PROGRESS_EVERY", "0.1")
    with progress(None, "evaluate", heartbeat=True):
        time.sleep(0.35)
    err = capsys.readouterr().err.splitlines()
    assert len(err) >= 2 and all(re.fullmatch(r"evaluate: running \(\d+s\)", x) for x in err), err


def test_ctrl_c_says_what_is_saved_and_how_to_resume(standin_server, tmp_path):  # noqa: F811 (the fixture imported from llm_standin)
    s = standin_server(lambda body, n: Reply(hang=True) if n >= 1 else chat(json.dumps({"attributes": list("abcde")})))
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(BIASKIT_CACHE_DIR=str(tmp_path / "cache"), BIASKIT_NO_PROGRESS="1")
    out = tmp_path / "t.jsonl"
    args = [sys.executable, "-m", "biaskit.cli", *_tuples(s.base_url, out, "--timeout", "30")]
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while s.count < 2 and time.monotonic() < deadline:  # the first job answered, the second one held
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    last = err.strip().splitlines()[-1]
    assert p.returncode == 130, err
    assert last.startswith("interrupted (Ctrl-C): ") and f"jobs are in {out}" in last, last
    assert "To resume, run the same command again: biaskit curate tuples" in last, last


def test_an_identical_pair_names_the_flag_that_skips_it(tmp_path, capsys):
    from hints import resolve

    f = tmp_path / "pairs.jsonl"
    f.write_text(
        json.dumps(
            {
                "sent_more": "Dalits are poor.",
                "sent_less": "Dalits are poor.",
                "direction": "stereo",
                "bias_type": "caste",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(
        ["evaluate", "pairs", "--data", str(f), "-m", "gemma3-270m", "--out", str(tmp_path / "o")], capsys
    )
    assert code == 2 and "identical pair" in err and "--skip-invalid" in err, err
    assert resolve(err, "evaluate pairs", tmp_path) == []


# ------------------------------------------------------------------------------------------ llm serve, no server
def test_llm_serve_refuses_what_it_cannot_serve_in_one_line(tmp_path, capsys, monkeypatch):
    code, out, err = run_cli(["llm", "serve", "--model", "gema3-270m", "--dir", str(tmp_path / "d")], capsys)
    assert code == 2 and "unknown model 'gema3-270m' (did you mean 'gemma3-270m'?)" in err and "--model" in err, err
    monkeypatch.setenv("BIASKIT_LLM_VENV", str(tmp_path / "no-venv"))
    code, out, err = run_cli(["llm", "serve", "--dir", str(tmp_path / "d")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "make services" in err, err
    (tmp_path / "d").mkdir()
    code, out, err = run_cli(["llm", "stop", "--dir", str(tmp_path / "d")], capsys)
    assert code == 0 and "no LLM server was running" in out, out


def test_a_recorded_server_is_used_only_while_it_runs_and_serves_the_model(tmp_path, monkeypatch):
    from biaskit.curation.llm_server import default_base_url, served_base_url

    monkeypatch.setenv("BIASKIT_LLM_DIR", str(tmp_path))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    me = {"pid": os.getpid(), "port": 9, "url": "http://127.0.0.1:9/v1", "model": "gemma3-270m", "threads": 1}
    (tmp_path / "biaskit-llm.json").write_text(json.dumps(me))
    # this process is no llama.cpp server: a pid file naming someone else's process is not trusted
    assert served_base_url("gemma3-270m") is None
    assert default_base_url("http://given/v1", "gemma3-270m") == "http://given/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env/v1")
    assert default_base_url(None, "gemma3-270m") == "http://env/v1"
