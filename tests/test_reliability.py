"""Reliability (issue 12) beyond the fuzz suite: kill -9 and resume (curate sentences, curate
translate, evaluate pairs), two runs sharing one score cache, output folders published whole, the
top-level guard (--debug), secrets end to end, the thread rule.

Servers are real: the OpenAI-compatible stand-in (tests/llm_standin.py) counts requests at the
server, Label Studio is the real one for the normal path. Runs that are killed are subprocesses
started as users start them (``python -m biaskit.cli``); the rest run in-process through
``biaskit.cli.main``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from llm_standin import Reply, chat, standin_server, strip_volatile, user_text  # noqa: F401 (a fixture)

from biaskit.io import read_jsonl


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


def biaskit(args: list[str], env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "biaskit.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def start(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "biaskit.cli", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def kill_when(p: subprocess.Popen, ready, timeout: float = 120) -> None:
    """SIGKILL ``p`` as soon as ``ready()`` is true (the run is part-way)."""
    deadline = time.time() + timeout
    while not ready():
        assert p.poll() is None, f"the run ended before it could be killed: {p.communicate()[1][-2000:]}"
        assert time.time() < deadline, "the run never got far enough to be killed"
        time.sleep(0.02)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    assert p.returncode == -signal.SIGKILL


# ------------------------------------------------------------------ kill -9: curate sentences
IDENTS = ["Dalit", "Brahmin", "Jat", "Baniya", "Kshatriya", "Adivasi"]
ATTRS = ["poor", "proud"]


def _tuples_file(path: Path) -> Path:
    from biaskit.schema import BiasTuple

    rows = [
        BiasTuple(identity=i, attribute=a, axis="caste", polarity="negative").model_dump(mode="json")
        for i in IDENTS
        for a in ATTRS
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _sentence_job(t: str) -> tuple[str, str, int]:
    """(identity, attribute, k) from a sentences prompt (v1: "... people are ATTR (axis)", v2: "For the
    tuple (IDENT, ATTR), write K different sentences")."""
    m = re.search(r"For the tuple \((.+?), (.+?)\), write (\d+) different", t)
    if m:
        return m.group(1), m.group(2), int(m.group(3))
    return (
        re.search(r'contain the words "(.+?)" exactly', t).group(1),
        re.search(r"people are (.+?) \(", t).group(1),
        int(re.search(r"Write (\d+) different", t).group(1)),
    )


def _sentences_reply(body: dict, n: int) -> Reply:
    ident, attr, k = _sentence_job(user_text(body))
    return Reply(
        **{
            **chat(
                json.dumps(
                    {"sentences": [f"My {ident} neighbour number {i} is said to be very {attr}." for i in range(k)]}
                )
            ).__dict__,
            "delay": 0.25,
        }
    )


def _job_of(body: dict) -> tuple[str, str]:
    return _sentence_job(user_text(body))[:2]


def test_kill_during_curate_sentences_then_rerun_repeats_no_finished_request(standin_server, tmp_path):  # noqa: F811 (fixture from llm_standin)
    s = standin_server(_sentences_reply)
    tuples = _tuples_file(tmp_path / "tuples.jsonl")
    args = [
        "curate",
        "sentences",
        "--tuples",
        str(tuples),
        "--per-tuple",
        "2",
        "--model",
        "m",
        "--base-url",
        s.base_url,
    ]
    ref = biaskit(args + ["--out", str(tmp_path / "ref.jsonl")], _env(tmp_path / "ref"))
    assert ref.returncode == 0, ref.stderr
    assert s.count == len(IDENTS) * len(ATTRS) == 12
    s.requests.clear()
    out = tmp_path / "s.jsonl"
    env = _env(tmp_path / "killed")
    kill_when(start(args + ["--out", str(out)], env), lambda: s.count >= 6)
    finished = read_jsonl(out) if out.exists() else []
    done = {(r["identity"], r["attribute"]) for r in finished}
    assert 3 <= len(done) <= 7, done
    asked_before = len(s.requests)
    again = biaskit(args + ["--out", str(out)], env)
    assert again.returncode == 0, again.stderr
    rerun = [_job_of(b) for b in s.requests[asked_before:]]
    # no job whose sentences were written is asked again; the others once each (one whose reply reached
    # the cache just before the kill is answered by the cache)
    assert not set(rerun) & done and len(rerun) == len(set(rerun))
    assert 12 - len(done) - 1 <= len(rerun) <= 12 - len(done)
    assert strip_volatile(read_jsonl(out)) == strip_volatile(read_jsonl(tmp_path / "ref.jsonl"))


# ------------------------------------------------------------------ kill -9: curate translate
PAIRS = [
    (f"The {g} man from village {i} was lazy.", f"The {h} man from village {i} was lazy.")
    for i in range(6)
    for g, h in (("Dalit", "Brahmin"), ("poor", "rich"))
]


def _translate_reply(body: dict, n: int) -> Reply:
    m = re.search(r"S1: (.+)\nS2: (.+)\nReply", user_text(body))
    return Reply(
        **{
            **chat(json.dumps({"sent_more": f"[hi] {m.group(1)}", "sent_less": f"[hi] {m.group(2)}"})).__dict__,
            "delay": 0.25,
        }
    )


def test_kill_during_curate_translate_then_rerun_repeats_no_finished_request(standin_server, tmp_path):  # noqa: F811 (fixture from llm_standin)
    s = standin_server(_translate_reply)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"sent_more": a, "sent_less": b, "direction": "stereo", "bias_type": "caste"}) + "\n"
            for a, b in PAIRS
        )
    )
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
        "--concurrency",
        "1",
        "--batch-pairs",
        "1",
    ]
    ref = biaskit(args + ["--out", str(tmp_path / "ref.jsonl")], _env(tmp_path / "ref"))
    assert ref.returncode == 0, ref.stderr
    assert s.count == len(PAIRS) == 12
    s.requests.clear()
    out = tmp_path / "c.jsonl"
    env = _env(tmp_path / "killed")
    kill_when(start(args + ["--out", str(out)], env), lambda: s.count >= 6)
    done = {r["source"]["sent_more"] for r in (read_jsonl(out) if out.exists() else [])}
    assert 3 <= len(done) <= 7, done
    asked_before = len(s.requests)
    again = biaskit(args + ["--out", str(out)], env)
    assert again.returncode == 0, again.stderr
    rerun = [
        re.search(r"S1: (.+)\nS2:", user_text(b).split("Now translate")[1]).group(1) for b in s.requests[asked_before:]
    ]
    assert not set(rerun) & done and len(rerun) == len(set(rerun))
    assert 12 - len(done) - 1 <= len(rerun) <= 12 - len(done)

    def key(r):
        return r["pair_id"]

    a = sorted(strip_volatile(read_jsonl(out)), key=key)
    b = sorted(strip_volatile(read_jsonl(tmp_path / "ref.jsonl")), key=key)
    for r in a + b:  # when a record was made differs between runs; what was made does not
        r["provenance"].pop("created_at")
    assert a == b


# ------------------------------------------------------------------ evaluate pairs: kill, cache, folders
GROUPS = [
    ("women", "men"),
    ("Dalits", "Brahmins"),
    ("old people", "young people"),
    ("Muslims", "Hindus"),
    ("poor people", "rich people"),
    ("Adivasis", "city people"),
]
TEMPLATES = [
    "{} are bad at maths.",
    "{} cannot be trusted with money.",
    "Everyone knows {} are lazy.",
    "{} were not invited to the meeting.",
    "The teacher said {} are noisy.",
    "{} always cheat at cards.",
    "My neighbour thinks {} are dirty.",
    "{} never work hard.",
    "{} are too emotional to lead.",
    "People say {} are violent.",
    "{} were late again today.",
    "The landlord refused {} a flat.",
    "In the village, {} are feared.",
    "{} do not value education.",
    "{} spend all their money on gold.",
    "Nobody wants to marry {} here.",
    "{} are good only at sports.",
    "The film showed {} as criminals.",
    "{} smell of spices.",
    "{} are naive about the city.",
    "{} talk too loudly on trains.",
    "The manager did not promote {}.",
    "{} should stay at home.",
    "{} are not clever enough for science.",
    "{} ruin every party.",
    "{} live in slums.",
    "{} drive badly.",
    "Police stopped {} for no reason.",
    "{} are obsessed with cricket.",
    "{} are stingy with tips.",
]


def _pairs_csv(path: Path, n: int) -> Path:
    import csv

    rows = [
        (
            t.format(a).capitalize() if t.startswith("{}") else t.format(a),
            t.format(b).capitalize() if t.startswith("{}") else t.format(b),
        )
        for t in TEMPLATES
        for a, b in GROUPS
    ]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["sent_more", "sent_less", "direction", "bias_type"])
        for more, less in rows[:n]:
            w.writerow([more, less, "stereo", "other"])
    return path


def _cache_entries(cache_dir: Path) -> dict[str, object]:
    """The score cache's entries (key -> value), read straight from its SQLite file."""
    db = cache_dir / "cache.sqlite3"
    if not db.exists():
        return {}
    with sqlite3.connect(db, timeout=60) as c:
        try:
            return {k: json.loads(v) for k, v in c.execute("SELECT k, v FROM kv WHERE ns='lm-scores'")}
        except sqlite3.OperationalError:  # the table is not there yet
            return {}


def _rows(value) -> int:
    """Model rows one cache entry cost: the tokens it scored (one masked row each for the mlm
    scorer) when the entry says so, else one request = one row."""
    return int(value["n"]) if isinstance(value, dict) and "n" in value else 1


def _scores(out: Path) -> list[tuple]:
    import pandas as pd

    df = pd.read_csv(out / "pairs.csv")
    return [tuple(x) for x in df[["pair_id", "score_more", "score_less"]].itertuples(index=False)]


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_kill_during_evaluate_pairs_then_rerun_scores_only_the_rest(tiny_bert, tmp_path):
    data = _pairs_csv(tmp_path / "pairs.csv", 180)
    args = ["evaluate", "pairs", "--data", str(data), "-m", str(tiny_bert), "--batch-size", "4", "--runs", "1", "-q"]
    ref = biaskit(args + ["--out", str(tmp_path / "ref")], _env(tmp_path / "ref-env"))
    assert ref.returncode == 0, ref.stderr
    ref_rows = _summary(tmp_path / "ref")["timings"]["rows_scored"]
    ref_cache = _cache_entries(tmp_path / "ref-env" / "cache")
    assert ref_rows == sum(_rows(v) for v in ref_cache.values())  # the accounting below holds
    env = _env(tmp_path / "killed")
    out = tmp_path / "res"
    kill_when(
        start(args + ["--out", str(out)], env),
        lambda: len(_cache_entries(tmp_path / "killed" / "cache")) >= len(ref_cache) // 3,
    )
    assert not out.exists()  # nothing published by a run that did not finish
    killed = _cache_entries(tmp_path / "killed" / "cache")
    assert 0 < len(killed) < len(ref_cache) and set(killed) <= set(ref_cache)
    again = biaskit(args + ["--out", str(out)], env)
    assert again.returncode == 0, again.stderr
    s = _summary(out)
    assert s["n_pairs"] == _summary(tmp_path / "ref")["n_pairs"] == 180
    assert s["metric_score"] == _summary(tmp_path / "ref")["metric_score"]
    for (i1, m1, l1), (i2, m2, l2) in zip(_scores(out), _scores(tmp_path / "ref"), strict=True):
        assert i1 == i2 and m1 == pytest.approx(m2, abs=1e-4) and l1 == pytest.approx(l2, abs=1e-4)
    # what the killed run had finished is not scored again: the re-run computes exactly the rest
    assert set(_cache_entries(tmp_path / "killed" / "cache")) == set(ref_cache)
    assert s["timings"]["rows_scored"] == sum(_rows(v) for k, v in ref_cache.items() if k not in killed)


def test_two_evaluate_runs_sharing_one_score_cache_at_once(tiny_bert, tmp_path):
    data = _pairs_csv(tmp_path / "pairs.csv", 60)
    env = _env(tmp_path)
    procs = [
        start(
            [
                "evaluate",
                "pairs",
                "--data",
                str(data),
                "-m",
                str(tiny_bert),
                "--batch-size",
                "2",
                "--runs",
                "1",
                "-q",
                "--out",
                str(tmp_path / k),
            ],
            env,
        )
        for k in "ab"
    ]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, results, strict=False):
        err = err.decode()
        assert p.returncode == 0 and "locked" not in err and "Traceback" not in err, err
    assert _summary(tmp_path / "a")["metric_score"] == _summary(tmp_path / "b")["metric_score"]
    for x, y in zip(_scores(tmp_path / "a"), _scores(tmp_path / "b"), strict=True):
        assert x[0] == y[0] and x[1] == pytest.approx(y[1], abs=1e-4) and x[2] == pytest.approx(y[2], abs=1e-4)
    single = _env(tmp_path / "single")
    one = biaskit(
        [
            "evaluate",
            "pairs",
            "--data",
            str(data),
            "-m",
            str(tiny_bert),
            "--batch-size",
            "2",
            "--runs",
            "1",
            "-q",
            "--out",
            str(tmp_path / "c"),
        ],
        single,
    )
    assert one.returncode == 0
    # the shared cache holds what one run alone computes, once
    assert set(_cache_entries(tmp_path / "cache")) == set(_cache_entries(tmp_path / "single" / "cache"))


def test_a_rerun_that_fails_while_writing_leaves_the_earlier_folder_whole(tiny_bert, tmp_path, capsys, monkeypatch):
    """The issue's case: `--limit 100` re-run into a folder holding a 150-pair result, dying in its
    write phase, left summary.json saying 100 beside a pairs.csv of 150. The folder is published
    whole now: a run that dies while writing leaves the earlier result exactly as it was."""
    data = _pairs_csv(tmp_path / "pairs.csv", 150)
    out = tmp_path / "res"
    base = [
        "evaluate",
        "pairs",
        "--data",
        str(data),
        "-m",
        str(tiny_bert),
        "--batch-size",
        "8",
        "--runs",
        "1",
        "-q",
        "--out",
        str(out),
    ]
    assert run_cli(base, capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert _summary(out)["n_pairs"] == 150 and len(_scores(out)) == 150

    import biaskit.evaluation.report as report

    def crash(*a, **k):
        raise KeyboardInterrupt  # a kill in the middle of the write phase (after summary.json and pairs.csv)

    monkeypatch.setattr(report, "render_report", crash)
    code, _, err = run_cli(base + ["--limit", "100"], capsys)
    assert code == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".res.")]  # no temporary sibling left
    monkeypatch.undo()
    assert run_cli(base + ["--limit", "100"], capsys)[0] == 0
    assert _summary(out)["n_pairs"] == 100 and len(_scores(out)) == 100


# ------------------------------------------------------------------ the guard
def test_an_os_error_becomes_one_line_naming_the_argument_and_debug_shows_the_traceback(tmp_path, capsys, monkeypatch):
    import errno

    import biaskit.io as bio

    judg = tmp_path / "j.csv"
    judg.write_text("task,worker,label\nt1,a,yes\nt1,b,yes\n")
    out = tmp_path / "agg.csv"
    real = bio.atomic_open

    def full_disk(path, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(bio, "atomic_open", full_disk)
    code, _, err = run_cli(["annotate", "aggregate", "--judgments", str(judg), "--out", str(out)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"error: --out {out}: No space left on device. Fix: free some disk space")
    assert "--debug" in lines[0]
    with pytest.raises(OSError, match="No space left"):  # --debug: the traceback, for the developer
        from biaskit.cli import main

        main(["--debug", "annotate", "aggregate", "--judgments", str(judg), "--out", str(out)])
    monkeypatch.setenv("BIASKIT_DEBUG", "1")
    with pytest.raises(OSError):
        main(["annotate", "aggregate", "--judgments", str(judg), "--out", str(out)])
    monkeypatch.setattr(bio, "atomic_open", real)


def test_a_genuine_bug_keeps_its_traceback(tmp_path, capsys, monkeypatch):
    import biaskit.annotation.aggregate as agg

    def bug(*a, **k):
        return None.items()  # AttributeError: a bug, not bad input

    monkeypatch.setattr(agg, "aggregate_file", bug)
    judg = tmp_path / "j.csv"
    judg.write_text("task,worker,label\nt1,a,yes\n")
    from biaskit.cli import main

    with pytest.raises(AttributeError):
        main(["annotate", "aggregate", "--judgments", str(judg), "--out", str(tmp_path / "o.csv")])


def test_argument_for_maps_files_and_temporary_siblings_to_their_option(tmp_path):
    from biaskit.paths import argument_for

    argv = ["evaluate", "pairs", "--data", str(tmp_path / "p.csv"), "-m", "m", f"--out={tmp_path / 'res'}"]
    assert argument_for(tmp_path / "p.csv", argv) == "--data"
    assert argument_for(tmp_path / "res" / "summary.json", argv) == "--out"
    assert argument_for(tmp_path / ".res.tmp-12-ab" / "pairs.csv", argv) == "--out"
    assert argument_for(tmp_path / "other.csv", argv) is None


# ------------------------------------------------------------------ threads
def test_thread_rule(monkeypatch):
    from biaskit import threads

    monkeypatch.delenv("BIASKIT_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert threads.choose(None) == (3, "$OMP_NUM_THREADS")
    monkeypatch.setenv("BIASKIT_THREADS", "2")
    assert threads.choose(None) == (2, "$BIASKIT_THREADS")
    assert threads.choose(5) == (5, "--threads")
    monkeypatch.delenv("BIASKIT_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS")
    cpus = threads.usable_cpus()
    # torch's default where the process may use that many CPUs; never more than it may use (a quota)
    assert threads.choose(None, default=1) == (1, "torch's default")
    assert threads.choose(None, default=cpus) == (cpus, "torch's default")
    n, why = threads.choose(None, default=cpus + 7)
    assert n == cpus and "CPU" in why


def test_threads_option_reaches_torch_where_a_model_is_loaded():
    """`biaskit --threads N` sets torch's CPU threads where an evaluator loads a model on the CPU; without
    it, torch's default stays (capped by the CPUs the process may use)."""
    code = (
        "import os, sys, torch\n"
        "from biaskit.cli import main\n"
        "default = torch.get_num_threads()\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "from biaskit import threads\n"
        "from biaskit.evaluation.models import pick_device\n"
        "pick_device('cpu')\n"
        "print(torch.get_num_threads(), default, threads.usable_cpus(), os.environ.get('BIASKIT_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("BIASKIT_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}

    def run(*argv: str) -> list[str]:
        r = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout.split("\n")[-2].split()

    n, default, cpus, env_value = run("--threads", "3", "data", "list")
    assert (n, env_value) == ("3", "3")
    n, default, cpus, env_value = run("data", "list")
    assert env_value == "None" and int(n) == min(int(default), int(cpus))


# ------------------------------------------------------------------ secrets, end to end
SECRET_OPENAI = "sk-proj-E2ESECRETabcdef0123456789XYZ"
SECRET_LS = "5d41402abc4b2a76b9719d911017c592aa5f6b7c"  # the shape of a Label Studio token (40 hex)
SECRET_STRAY = "tok9Qx7Lm2Np4Rs6Tv8Wz1Yb3Cd5Fg"  # a token typed where an argument was expected


class _EchoHeaders:
    """A Label Studio stand-in that fails every request with HTTP 500 and a body quoting the request
    headers (a debug error page does that; real Label Studio does not on demand)."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        outer = self
        self.count = 0

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _answer(self):
                outer.count += 1
                body = json.dumps(
                    {
                        "detail": "Server Error",
                        "request": {"path": self.path, "headers": {k: v for k, v in self.headers.items()}},
                    }
                ).encode()
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PATCH = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _everything_written(root: Path) -> bytes:
    """Every byte under ``root``: outputs, logs, error files, the SQLite caches and their WAL files."""
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def _assert_no_secret(blob: bytes | str, where: str) -> None:
    data = blob.encode() if isinstance(blob, str) else blob
    for s in (SECRET_OPENAI, SECRET_LS, SECRET_STRAY):
        assert s.encode() not in data, f"{where} holds the secret {s[:6]}..."
    for part in ("E2ESECRET", "5d41402abc4b", "tok9Qx7Lm2"):  # no fragment either
        assert part.encode() not in data, f"{where} holds a fragment of a secret ({part})"


def test_secrets_echoed_by_servers_are_never_written_or_printed(standin_server, tmp_path, capsys, monkeypatch):  # noqa: F811 (fixture from llm_standin)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_OPENAI)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", SECRET_LS)
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))
    printed = []

    def run(args):
        code, out, err = run_cli(args, capsys)
        printed.append(out + err)
        return code, out + err

    # an OpenAI-style 401 quoting the key: the run stops with one line
    s401 = standin_server(
        lambda b, n: Reply(
            401,
            {
                "error": {
                    "message": f"Incorrect API key provided: {SECRET_OPENAI}. You can find your API key at ...",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )
    )
    code, text = run(
        [
            "curate",
            "tuples",
            "--axis",
            "caste",
            "--identities",
            "Dalit",
            "--model",
            "m",
            "--base-url",
            s401.base_url,
            "--out",
            str(tmp_path / "a.jsonl"),
        ]
    )
    assert code == 2 and "API key" in text
    # a job-level error quoting the key and the Authorization header: stored in the errors file
    s400 = standin_server(
        lambda b, n: Reply(
            400, {"error": {"message": f"bad request from key {SECRET_OPENAI} (Authorization: Bearer {SECRET_OPENAI})"}}
        )
    )
    code, _ = run(
        [
            "curate",
            "tuples",
            "--axis",
            "caste",
            "--identities",
            "Dalit",
            "--model",
            "m",
            "--base-url",
            s400.base_url,
            "--out",
            str(tmp_path / "b.jsonl"),
        ]
    )
    assert code == 1 and read_jsonl(tmp_path / "b.errors.jsonl")
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(
        json.dumps(
            {
                "sent_more": "Dalits are poor.",
                "sent_less": "Brahmins are poor.",
                "direction": "stereo",
                "bias_type": "caste",
            }
        )
        + "\n"
    )
    code, _ = run(
        [
            "curate",
            "translate",
            "--pairs",
            str(pairs),
            "--target",
            "hi",
            "--engines",
            "llm:m",
            "--base-url",
            s400.base_url,
            "--max-retries",
            "0",
            "--out",
            str(tmp_path / "c.jsonl"),
        ]
    )
    assert code == 1 and read_jsonl(tmp_path / "c.llm.errors.jsonl")
    # a Label Studio 500 whose body quotes the request headers (Authorization: Token ...)
    ls = _EchoHeaders()
    try:
        code, text = run(
            ["annotate", "push", "--kind", "pair", "--data", str(pairs), "--project", "p", "--url", ls.url]
        )
        assert code == 2 and "HTTP 500" in text and ls.count >= 1
        code, text = run(
            [
                "annotate",
                "pull",
                "--project",
                "p",
                "--url",
                ls.url,
                "--out",
                str(tmp_path / "j.csv"),
                "--raw",
                str(tmp_path / "raw.json"),
            ]
        )
        assert code == 2 and "HTTP 500" in text
    finally:
        ls.close()
    # tokens typed where they do not belong: echoed back by the usage error
    code, text = run(["annotate", "pull", "--project", "p", "--out", str(tmp_path / "j.csv"), SECRET_STRAY])
    assert code == 2 and "unexpected extra argument" in text.lower()
    code, text = run(["annotate", "pull", "--project", "p", "--out", str(tmp_path / "j.csv"), SECRET_LS])
    assert code == 2
    code, text = run(
        ["annotate", "push", "--kind", "pair", "--data", str(pairs), "--project", "p", "--token", SECRET_STRAY]
    )
    assert code == 2 and "no such option" in text.lower()
    _assert_no_secret("".join(printed), "the printed output")
    _assert_no_secret(_everything_written(tmp_path), "a file biaskit wrote")
    assert "***" in "".join(printed)  # the places where they were are masked, not silently dropped


@pytest.mark.slow
@pytest.mark.labelstudio
def test_the_real_label_studio_path_writes_no_token(ls_server, tmp_path, capsys, monkeypatch):
    """push and pull against the real Label Studio: nothing biaskit writes or prints holds the token,
    nor does the project it creates (its description records the command line)."""
    import urllib.request

    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(
        json.dumps(
            {
                "sent_more": "Dalits are poor.",
                "sent_less": "Brahmins are poor.",
                "direction": "stereo",
                "bias_type": "caste",
            }
        )
        + "\n"
    )
    title = f"secrets-{os.getpid()}-{time.time_ns()}"
    printed = ""
    for args in (
        ["annotate", "push", "--kind", "pair", "--data", str(pairs), "--project", title],
        ["annotate", "pull", "--project", title, "--out", str(tmp_path / "j.csv"), "--raw", str(tmp_path / "raw.json")],
    ):
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        printed += out + err
    token = ls_server["token"]
    req = urllib.request.Request(
        f"{ls_server['url']}/api/projects?title={title}", headers={"Authorization": f"Token {token}"}
    )
    projects = urllib.request.urlopen(req, timeout=30).read().decode()
    assert title in projects
    for blob, where in ((printed, "output"), (_everything_written(tmp_path), "files"), (projects, "the project")):
        data = blob.encode() if isinstance(blob, str) else blob
        assert token.encode() not in data, where


def test_a_folder_that_appears_at_out_while_the_result_is_built_is_not_replaced(tmp_path):
    """An output folder is checked again when it is published: a user folder (here a cache that a run
    wrote under its own ``--out``) created after the start is refused with one line, never deleted."""
    from biaskit.errors import InputError
    from biaskit.io import atomic_dir

    out = tmp_path / "res"
    with pytest.raises(InputError) as exc:
        with atomic_dir(out, owns=("summary.json",)) as stage:
            (stage / "summary.json").write_text("{}")
            (out / "cache").mkdir(parents=True)  # appears while the result is being built
            (out / "cache" / "cache.sqlite3").write_bytes(b"scores")
    assert str(out) in str(exc.value) and "holds other files" in str(exc.value)
    assert (out / "cache" / "cache.sqlite3").read_bytes() == b"scores"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".res.")]
    with atomic_dir(out, owns=None) as stage:  # internal callers (owns=None) replace as before
        (stage / "x").write_text("1")
    assert sorted(p.name for p in out.iterdir()) == ["x"]
