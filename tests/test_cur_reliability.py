"""Reliability of the LLM steps (issue 12): unreachable and misbehaving servers, cut-off replies,
resume after a kill, shared caches, secrets, truncated files.

Every server here is real: a local ``http.server`` (tests/llm_standin.py) that answers 429, 500,
HTML, hangs or echoes the API key, with requests counted at the server. The CLI runs as users run
it (in-process through ``biaskit.cli.main``, or as a subprocess where time or a kill matters).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from llm_standin import Reply, chat, standin_server, strip_volatile, user_text  # noqa: F401 (a fixture)

from biaskit.io import read_jsonl

WORDS = [
    "careful",
    "loud",
    "generous",
    "quiet",
    "strict",
    "clever",
    "lazy",
    "honest",
    "proud",
    "poor",
    "wealthy",
    "pious",
    "rude",
    "kind",
    "orthodox",
    "modern",
    "frugal",
    "noisy",
    "gentle",
    "humble",
]
SECRET = "sk-proj-TESTSECRETabcdef0123456789XYZ"


def attributes_for(body: dict, k: int = 5) -> list[str]:
    """Deterministic attributes for a tuples request (same prompt -> same words)."""
    h = int(hashlib.sha256(user_text(body).encode()).hexdigest(), 16)
    return [WORDS[(h >> (5 * i)) % len(WORDS)] + str(i) for i in range(k)]


def tuples_ok(body: dict, n: int) -> Reply:
    return chat(json.dumps({"attributes": attributes_for(body)}))


@pytest.fixture
def server(standin_server):  # noqa: F811 (the fixture imported from llm_standin)
    return standin_server


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")


def tuples_args(base_url: str, out: Path, *extra: str, identities: str = "Dalit,Brahmin") -> list[str]:
    return [
        "curate",
        "tuples",
        "--axis",
        "caste",
        "--identities",
        identities,
        "--polarity",
        "negative",
        "--n",
        "5",
        "--model",
        "m",
        "--base-url",
        base_url,
        "--out",
        str(out),
        *extra,
    ]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(
        {
            "BIASKIT_CACHE_DIR": str(tmp_path / "cache"),
            "BIASKIT_NO_PROGRESS": "1",
            "OMP_NUM_THREADS": "1",
            "PYTHONPATH": str(REPO / "tests"),
            **extra,
        }
    )
    return env


def biaskit(args: list[str], env: dict, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "biaskit.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=kw.pop("timeout", 120),
        **kw,
    )


# ------------------------------------------------------------------ unreachable and failing servers
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_refused_connection_stops_within_seconds_with_one_line(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    t = time.monotonic()
    p = biaskit(tuples_args(url, tmp_path / "t.jsonl", identities="Dalit,Brahmin,OBC,Kshatriya"), _env(tmp_path))
    took = time.monotonic() - t
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and url in lines[0] and "connection refused" in lines[0].lower(), p.stderr
    assert "Traceback" not in p.stderr and took < 10, took  # today's figure was 159 s and exit 0
    assert not (tmp_path / "t.jsonl").exists() or read_jsonl(tmp_path / "t.jsonl") == []


def test_hanging_server_backs_off_then_stops_as_up_but_slow(server, tmp_path, capsys):
    s = server(lambda body, n: Reply(hang=True))
    t = time.monotonic()
    code, _, err = run_cli(
        tuples_args(
            s.base_url, tmp_path / "t.jsonl", "--timeout", "1", identities="Dalit,Brahmin,OBC,Kshatriya,Baniya"
        ),
        capsys,
    )
    took = time.monotonic() - t
    # one request at a time already: the timeout doubles (1 s, 2 s, then the longest, 4 x 1 s), each step
    # said on stderr; the third timeout leaves nothing to back off to: 3 requests, ~7 s, one job failed
    assert code == 2 and s.count == 3, (code, s.count, err)
    assert took < 1 + 2 + 4 + 8, took  # the timeouts + client start; generous: the machine is shared
    steps = [x for x in err.splitlines() if "Backing off" in x]
    assert len(steps) == 2 and "within 1 s" in steps[0] and "a 2 s timeout" in steps[0], err
    assert "within 2 s" in steps[1] and "a 4 s timeout" in steps[1] and "--timeout 4" in steps[1], err
    last = err.strip().splitlines()[-1]
    assert s.base_url in last and "none of 3 request(s) in a row" in last and "up but slow" in last, last
    assert "within 4 s" in last and "--concurrency 1" in last and "--timeout 8" in last, last
    assert "is up and serves" not in err  # not told to check whether it runs: it does
    log = read_jsonl(tmp_path / "t.runlog.jsonl")[-1]
    assert log["aborted"] and log["errors"] == 1 and log["run"] == 1
    assert log["llm"]["server"] == {"backoff": ["a 2 s timeout", "a 4 s timeout"], "timeout": 4.0}


def test_429_with_retry_after_and_500_are_retried_with_backoff(server, tmp_path, capsys):
    def respond(body, n):
        if n == 0:
            return Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
        if n == 1:
            return Reply(500, {"error": {"message": "internal error"}})
        return tuples_ok(body, n)

    s = server(respond)
    t = time.monotonic()
    code, out, err = run_cli(tuples_args(s.base_url, tmp_path / "t.jsonl", identities="Dalit"), capsys)
    took = time.monotonic() - t
    assert code == 0, err
    assert s.count == 3 and took >= 1.0  # Retry-After: 1 was honoured
    assert len(read_jsonl(tmp_path / "t.jsonl")) == 5
    assert read_jsonl(tmp_path / "t.runlog.jsonl")[-1]["llm"]["retries"] == 2


def test_500_forever_is_bounded_then_stops_the_run(server, tmp_path):
    from biaskit.curation.generate import generate_tuples
    from biaskit.curation.llm import EndpointError, get_llm
    from biaskit.curation.options import TuplesOptions

    s = server(lambda body, n: Reply(500, {"error": {"message": "boom"}}))
    llm = get_llm("openai", model="m", base_url=s.base_url, max_retries=2, backoff=0.01, cache=False)
    with pytest.raises(EndpointError, match=r"3 requests in a row failed, the last with: HTTP 500"):
        generate_tuples(
            llm,
            None,
            TuplesOptions.from_kwargs(
                axis="caste",
                identities=["Dalit", "Brahmin", "OBC", "Kshatriya"],
                polarity="negative",
                n=5,
                out=tmp_path / "t.jsonl",
            ),
            progress=False,
            command="test",
        )
    assert s.count == 3 * (2 + 1)  # three jobs, each asked 1 + max_retries times; the 4th never
    errs = read_jsonl(tmp_path / "t.errors.jsonl")
    assert len(errs) == 3 and all(
        e["status"] == "request_error" and "gave up after 3 attempts" in e["error"] for e in errs
    )


def test_html_200_is_one_failed_job_not_a_crash(server, tmp_path, capsys):
    def respond(body, n):
        if n == 0:
            return Reply(200, raw=b"<html><body><h1>Welcome to nginx!</h1></body></html>", content_type="text/html")
        return tuples_ok(body, n)

    s = server(respond)
    code, out, err = run_cli(tuples_args(s.base_url, tmp_path / "t.jsonl"), capsys)
    assert code == 0 and "Traceback" not in err, err
    errs = read_jsonl(tmp_path / "t.errors.jsonl")
    assert len(errs) == 1 and errs[0]["status"] == "request_error" and "not a chat completion" in errs[0]["error"]
    assert len(read_jsonl(tmp_path / "t.jsonl")) == 5 and s.count == 2
    assert "1 failed" in out


def test_a_run_where_every_job_failed_exits_non_zero(server, tmp_path, capsys):
    s = server(lambda body, n: chat("Sorry, I cannot help with that."))
    code, out, err = run_cli(tuples_args(s.base_url, tmp_path / "t.jsonl"), capsys)
    assert code == 1 and "every one of the 2 job(s) failed" in err
    assert s.count == 4  # each job: the ask and one re-ask
    assert {e["raw"] for e in read_jsonl(tmp_path / "t.errors.jsonl")} == {"Sorry, I cannot help with that."}


def test_an_echoed_api_key_is_never_written_or_printed(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    echo = {
        "error": {
            "message": f"Incorrect API key provided: {SECRET}. You can find your API key at ...",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    s = server(lambda body, n: Reply(401, echo))
    code, out, err = run_cli(tuples_args(s.base_url, tmp_path / "a.jsonl"), capsys)
    assert code == 2 and s.count == 1 and "refused the API key" in err
    seen = out + err
    # a job-level error body echoing the key (HTTP 400) goes to the errors file: redacted there too
    s2 = server(lambda body, n: Reply(400, {"error": {"message": f"bad request for key {SECRET}"}}))
    code, out, err = run_cli(tuples_args(s2.base_url, tmp_path / "b.jsonl"), capsys)
    assert code == 1 and read_jsonl(tmp_path / "b.errors.jsonl")
    seen += out + err
    written = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in tmp_path.rglob("*")
        if p.is_file() and not p.name.endswith(".sqlite3") and "-wal" not in p.name
    )
    for text in (seen, written):
        assert SECRET not in text and "TESTSECRET" not in text
    assert "***" in written


# ------------------------------------------------------------------ cut-off replies are partial
def test_a_cut_off_reply_is_partial_not_a_cached_success(server, tmp_path, capsys):
    full = {"on": False}

    def respond(body, n):
        if full["on"]:
            return chat(json.dumps({"attributes": ["lazy", "dirty", "loud", "poor", "rude"]}))
        return chat('{"attributes": ["lazy", "dirty", "lou', finish_reason="length")

    s = server(respond)
    out = tmp_path / "t.jsonl"
    args = tuples_args(s.base_url, out, identities="Dalit")
    code, _, err = run_cli(args, capsys)
    assert code == 1 and s.count == 1  # a cut-off reply is not re-asked with the same max_tokens
    (e,) = read_jsonl(tmp_path / "t.errors.jsonl")
    assert e["status"] == "partial" and "2 of the 5" in e["error"] and e["raw"].endswith('"lou')
    assert [r["attribute"] for r in e["data"]] == ["lazy", "dirty"]  # recovered, kept, not published
    assert not out.exists() or read_jsonl(out) == []
    code, _, _ = run_cli(args, capsys)  # the same reply again, from the cache
    assert code == 1 and s.count == 1
    full["on"] = True
    code, stdout, _ = run_cli(args + ["--retry-failed"], capsys)
    assert code == 0 and s.count == 2
    assert [r["attribute"] for r in read_jsonl(out)] == ["lazy", "dirty", "loud", "poor", "rude"]
    assert not (tmp_path / "t.errors.jsonl").exists()


def test_a_complete_reply_with_fewer_items_than_asked_is_not_partial(tmp_path):
    """Only a cut-off reply is partial: a model that simply lists 2 of the 5 asked for is answered."""
    from biaskit.curation.generate import generate_tuples
    from biaskit.curation.llm import DummyLLM
    from biaskit.curation.options import TuplesOptions

    llm = DummyLLM(responses=['{"attributes": ["lazy", "dirty"]}'], cache=False)
    s = generate_tuples(
        llm,
        None,
        TuplesOptions.from_kwargs(
            axis="caste", identities=["Dalit"], polarity="negative", n=5, out=tmp_path / "t.jsonl"
        ),
        progress=False,
        command="test",
    )
    assert (
        s.ok == 1 and s.partial == 0 and [r["attribute"] for r in read_jsonl(tmp_path / "t.jsonl")] == ["lazy", "dirty"]
    )


# ------------------------------------------------------------------ resume: files are never lost
def test_existing_output_whose_last_record_has_no_newline_is_kept(server, tmp_path, capsys):
    s = server(tuples_ok)
    out = tmp_path / "t.jsonl"
    assert run_cli(tuples_args(s.base_url, out), capsys)[0] == 0
    rows = read_jsonl(out)
    out.write_bytes(out.read_bytes().rstrip(b"\n"))  # e.g. an editor that drops the final newline
    code, stdout, err = run_cli(tuples_args(s.base_url, out), capsys)
    assert code == 0 and s.count == 2 and read_jsonl(out) == rows
    assert "kept it" in err and out.read_bytes().endswith(b"\n")


def test_a_broken_last_line_of_the_output_is_reported_and_kept_aside(server, tmp_path, capsys):
    s = server(tuples_ok)
    out = tmp_path / "t.jsonl"
    assert run_cli(tuples_args(s.base_url, out, identities="Dalit"), capsys)[0] == 0
    rows = read_jsonl(out)
    with open(out, "a", encoding="utf-8") as fh:
        fh.write('{"identity": "Brahmin", "attribute": "pro')  # a crash in the middle of a write
    code, stdout, err = run_cli(tuples_args(s.base_url, out), capsys)
    assert code == 0
    assert f"{out}, row {len(rows) + 1}: the last line is incomplete" in err and "broken-tail" in err
    assert (tmp_path / "t.jsonl.broken-tail").read_text() == '{"identity": "Brahmin", "attribute": "pro\n'
    assert read_jsonl(out)[: len(rows)] == rows and len(read_jsonl(out)) == 10


def test_a_job_cut_short_by_a_kill_is_asked_again_from_the_cache(tmp_path):
    from biaskit.curation.generate import generate_tuples
    from biaskit.curation.llm import DummyLLM
    from biaskit.curation.options import TuplesOptions

    from biaskit.cache import DiskCache

    cache = DiskCache(tmp_path / "c.sqlite3", namespace="llm")
    out = tmp_path / "t.jsonl"
    o = TuplesOptions.from_kwargs(axis="caste", identities=["Dalit", "Brahmin"], polarity="negative", n=5, out=out)
    generate_tuples(DummyLLM(cache=cache), None, o, progress=False, command="test")
    rows = read_jsonl(out)
    assert rows[-1]["provenance"]["job_rows"] == 3  # the dummy gives 3 attributes per job
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]))  # the kill came after 2 of the 3 rows
    again = DummyLLM(cache=cache)
    s = generate_tuples(again, None, o, progress=False, command="test")
    assert again.sent == [] and s.run == 1 and s.skipped_done == 1  # asked again, answered by the cache
    assert any("2 of its 3 rows" in n for n in s.notes)
    assert strip_volatile(read_jsonl(out)) == strip_volatile(rows)


def test_truncated_input_files_are_reported_not_read_short(tmp_path, capsys):
    tuples = tmp_path / "tuples.jsonl"
    assert (
        run_cli(
            ["curate", "tuples", "--axis", "caste", "--identities", "Dalit", "--llm", "dummy", "--out", str(tuples)],
            capsys,
        )[0]
        == 0
    )
    data = tuples.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) - 25])  # the copy stopped mid-line
    n = len(data[: len(data) - 25].splitlines())
    code, _, err = run_cli(
        ["curate", "sentences", "--tuples", str(cut), "--llm", "dummy", "--out", str(tmp_path / "s.jsonl")], capsys
    )
    assert code == 2 and f"{cut}, row {n}: the last line is cut off" in err and not (tmp_path / "s.jsonl").exists()
    assert (
        run_cli(
            ["curate", "sentences", "--tuples", str(tuples), "--llm", "dummy", "--out", str(tmp_path / "s.jsonl")],
            capsys,
        )[0]
        == 0
    )
    sents = (tmp_path / "s.jsonl").read_bytes()
    (tmp_path / "s-cut.jsonl").write_bytes(sents[:-30])
    code, _, err = run_cli(
        ["curate", "pairs", "--sentences", str(tmp_path / "s-cut.jsonl"), "--out", str(tmp_path / "p.jsonl")], capsys
    )
    assert code == 2 and "the last line is cut off" in err and not (tmp_path / "p.jsonl").exists()


# ------------------------------------------------------------------ translate: failures are retried
def test_translate_engine_failures_are_stored_then_retried_on_resume(server, tmp_path, capsys):
    healthy = {"on": False}

    def respond(body, n):
        if not healthy["on"]:
            return Reply(503, {"error": {"message": "overloaded"}})
        s1 = re.search(r"S1: (.+)\nS2: (.+)\nReply", user_text(body))
        return chat(json.dumps({"sent_more": f"[hi] {s1.group(1)}", "sent_less": f"[hi] {s1.group(2)}"}))

    s = server(respond)
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {
                    "sent_more": "The man is a doctor.",
                    "sent_less": "The woman is a doctor.",
                    "direction": "stereo",
                    "bias_type": "gender",
                },
                {
                    "sent_more": "Dalits are poor.",
                    "sent_less": "Brahmins are poor.",
                    "direction": "stereo",
                    "bias_type": "caste",
                },
            ]
        )
    )
    cands = tmp_path / "c.jsonl"
    args = [
        "curate",
        "translate",
        "--pairs",
        str(pairs),
        "--target",
        "hi",
        "--engines",
        "llm:m",
        "--base-url",
        s.base_url,
        "--max-retries",
        "0",
        "--concurrency",
        "1",
        "--out",
        str(cands),
    ]
    code, _, err = run_cli(args, capsys)
    assert code == 1 and "every pair failed" in err and s.count == 2
    recs = read_jsonl(cands)
    assert [c["flags"][0]["code"] for r in recs for c in r["candidates"]] == ["engine_failed"] * 2
    assert len(read_jsonl(tmp_path / "c.llm.errors.jsonl")) == 2
    healthy["on"] = True
    code, _, err = run_cli(args, capsys)
    assert code == 0 and s.count == 4 and "2 asked again after an engine failure" in err
    recs = read_jsonl(cands)
    assert [c["sent_more"] for r in recs for c in r["candidates"]] == [
        "[hi] The man is a doctor.",
        "[hi] Dalits are poor.",
    ]
    assert not (tmp_path / "c.llm.errors.jsonl").exists()
    assert run_cli(args, capsys)[0] == 0 and s.count == 4  # done: nothing asked again


# ------------------------------------------------------------------ two runs, one cache
def test_two_runs_sharing_one_llm_cache_at_once(server, tmp_path):
    s = server(lambda body, n: Reply(**{**tuples_ok(body, n).__dict__, "delay": 0.02}))
    env = _env(tmp_path)
    args = [
        "curate",
        "tuples",
        "--axis",
        "caste",
        "--n",
        "5",
        "--polarity",
        "both",
        "--model",
        "m",
        "--base-url",
        s.base_url,
        "--concurrency",
        "4",
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "biaskit.cli", *args, "--out", str(tmp_path / f"{k}.jsonl")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in "ab"
    ]
    results = [p.communicate(timeout=180) for p in procs]
    for p, (_out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0 and "locked" not in err and "Traceback" not in err, err
    a, b = (strip_volatile(read_jsonl(tmp_path / f"{k}.jsonl")) for k in "ab")
    key = lambda r: (r["identity"], r["polarity"], r["attribute"])  # noqa: E731 (4 threads: order may differ)
    assert sorted(a, key=key) == sorted(b, key=key) and len(a) == 14 * 5
    assert 14 <= s.count <= 28  # each request once, or twice when both runs missed the cache together


def test_disk_cache_opened_and_written_by_many_processes_at_once(tmp_path):
    """Several processes creating the same fresh cache file and writing to it together: before the
    fix, ``PRAGMA journal_mode=WAL`` raised "database is locked" in one of them in about 1 of 6 tries."""
    code = (
        "import sys, time\nfrom biaskit.cache import DiskCache\n"
        "t0 = float(sys.argv[2])\nwhile time.time() < t0: time.sleep(0.001)\n"
        "c = DiskCache(sys.argv[1], namespace='llm')\n"
        "for i in range(150):\n    c.set({'i': i, 'p': sys.argv[3]}, i)\n    c.get({'i': i, 'p': 'x0'})\n"
        "print(len(c))\n"
    )
    for trial in range(3):
        db = tmp_path / f"t{trial}" / "cache.sqlite3"
        start = time.time() + 1.5
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, str(db), str(start), f"x{k}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for k in range(5)
        ]
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), [e for _, e in outs if e]
        from biaskit.cache import DiskCache

        assert len(DiskCache(db, namespace="llm")) == 5 * 150


# ------------------------------------------------------------------ kill -9 and resume
def test_kill_during_curate_tuples_then_rerun_repeats_no_finished_request(server, tmp_path):
    s = server(lambda body, n: Reply(**{**tuples_ok(body, n).__dict__, "delay": 0.25}))
    idents = "Dalit,Brahmin,OBC,Kshatriya,Baniya,Adivasi"  # x2 polarities = 12 jobs
    args = [
        "curate",
        "tuples",
        "--axis",
        "caste",
        "--identities",
        idents,
        "--polarity",
        "both",
        "--n",
        "5",
        "--model",
        "m",
        "--base-url",
        s.base_url,
    ]
    # the reference: an uninterrupted run with its own cache
    ref = biaskit(args + ["--out", str(tmp_path / "ref.jsonl")], _env(tmp_path / "ref"))
    assert ref.returncode == 0, ref.stderr
    assert s.count == 12
    s.requests.clear()
    out = tmp_path / "t.jsonl"
    env = _env(tmp_path / "killed")
    p = subprocess.Popen(
        [sys.executable, "-m", "biaskit.cli", *args, "--out", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 60
    while s.count < 6 and time.time() < deadline:
        time.sleep(0.02)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    assert p.returncode == -signal.SIGKILL
    finished = read_jsonl(out) if out.exists() else []
    done = {(r["identity"], r["polarity"]) for r in finished}
    assert 4 <= len(done) <= 6, done
    asked_before = len(s.requests)
    again = biaskit(args + ["--out", str(out)], env)
    assert again.returncode == 0, again.stderr
    rerun = [
        re.search(r"Which (\w+) stereotypes .*?hold about (.+?) \(", user_text(b), re.S).groups()
        for b in s.requests[asked_before:]
    ]
    rerun = [(ident, pol) for pol, ident in rerun]
    # no job that had finished before the kill is asked again; every other job is asked once, except
    # one whose reply reached the cache just before the kill (then the cache answers it)
    assert not set(rerun) & done and len(rerun) == len(set(rerun))
    assert 12 - len(done) - 1 <= len(rerun) <= 12 - len(done)
    assert strip_volatile(read_jsonl(out)) == strip_volatile(read_jsonl(tmp_path / "ref.jsonl"))
