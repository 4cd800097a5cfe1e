"""Helpers of the pipeline tests: a counting HTTP proxy in front of the real llama.cpp server, answers
posted to a real Label Studio by annotator accounts, and a `biaskit` process to run (and kill).

:class:`CountingProxy` forwards every request to the upstream server unchanged and records, per
request, the path, the SHA-256 of the body and when the response was fully sent back: the tests count
LLM calls at the wire, outside the code under test, and tell which calls had finished before a
``kill -9``. A ``gate`` (a predicate on each new request) holds matching requests without
forwarding them until :meth:`CountingProxy.release`, which drops them: a test kills the client while
its request is held, so the moment of the kill is exact (the request never reaches the server).
A ``delay`` (a function of each call -> seconds) holds the upstream's answer back that long before
sending it: a server made slow on purpose.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


@dataclass
class Call:
    method: str
    path: str
    body_sha: str
    started: float
    finished: float | None = None  # the whole response was written back to the client
    status: int | None = None
    held: bool = False  # stopped by the gate, never forwarded


class CountingProxy:
    def __init__(self, upstream: str):
        u = urlsplit(upstream)
        self.host, self.port, self.prefix = u.hostname, u.port, u.path.rstrip("/")
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self.gate: Callable[[Call], bool] | None = None
        self.delay: Callable[[Call], float] | None = None
        self.held = threading.Event()
        self._release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def _forward(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                call = Call(self.command, self.path, hashlib.sha256(body).hexdigest(), time.time())
                with proxy._lock:
                    hold = proxy.gate is not None and proxy.gate(call)
                    proxy.calls.append(call)
                if hold:
                    call.held = True
                    proxy.held.set()
                    proxy._release.wait()
                    self.close_connection = True
                    return
                conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=600)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                r = conn.getresponse()
                data = r.read()
                conn.close()
                wait = proxy.delay(call) if proxy.delay is not None else 0.0
                if wait:
                    time.sleep(wait)
                try:
                    self.send_response(r.status)
                    for k, v in r.getheaders():
                        if k.lower() not in ("transfer-encoding", "connection", "content-length", "server", "date"):
                            self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client was killed meanwhile
                    self.close_connection = True
                    return
                call.status, call.finished = r.status, time.time()

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}{self.prefix}"

    def chat_calls(self, since: float = 0.0) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.path.endswith("/chat/completions") and c.started >= since]

    def finished(self, pred: Callable[[Call], bool]) -> list[Call]:
        """Calls matching ``pred`` whose response was sent back whole (the caller holds no lock)."""
        return [c for c in list(self.calls) if c.finished and pred(c)]

    def hold(self, gate: Callable[[Call], bool]) -> None:
        """Hold the requests ``gate`` matches (checked as each request arrives) until :meth:`release`."""
        self.held.clear()
        self._release.clear()
        self.gate = gate

    def release(self) -> None:
        """Stop holding; held requests are dropped unanswered (their client is gone)."""
        self.gate = None
        self._release.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


def biaskit_exe() -> str:
    exe = Path(sys.executable).with_name("biaskit")
    return str(exe) if exe.exists() else "biaskit"


def start_biaskit(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    fh = open(log, "w", encoding="utf-8")
    return subprocess.Popen([biaskit_exe(), *args], stdout=fh, stderr=subprocess.STDOUT, env=env)


def run_biaskit(args: list[str], env: dict, log: Path, timeout: float = 900) -> tuple[int, str]:
    p = start_biaskit(args, env, log)
    try:
        code = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    return code, log.read_text(encoding="utf-8")


def wait_for(pred, timeout: float = 300.0, step: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


def project_head(name: str, model: str, base_url: str, ls_url: str) -> str:
    """The start of an e2e test's biaskit.toml: the project, the LLM behind its proxy, Label Studio.

    Decoding is fixed for every stage: greedy (temperature 0; the tasks' own default is 0.7 for
    tuples, sentences and CATs), seed 0, one request in flight (llama-cpp-python's server answers one
    request at a time: one slot), so a run writes the same records every time on this build of
    llama.cpp and the path the test asserts is the one taken (tests/llm_repeat.py checks it)."""
    return (
        f'\n[project]\nname = "{name}"\nversion = "1.0.0"\n\n[llm]\nmodel = "{model}"\nbase_url = "{base_url}"\n'
        "temperature = 0\nseed = 0\nconcurrency = 1\n\n"
        f'[labelstudio]\nurl = "{ls_url}"\n'
    )


def kill_while_held(proxy: CountingProxy, when: Callable[[Call], bool], run: list[str], env: dict, log: Path) -> None:
    """Start `biaskit run`, let ``proxy`` hold the first request matching ``when``, SIGKILL the run
    while that request is held (it never reaches the service), then let the proxy go on."""
    import signal

    proxy.hold(when)
    p = start_biaskit(run, env, log)
    assert wait_for(lambda: p.poll() is not None or proxy.held.is_set(), timeout=900) and p.poll() is None, (
        log.read_text()
    )
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    proxy.release()


def annotate(url: str, token: str, task_id: int, result: list[dict]) -> None:
    from label_studio_sdk import LabelStudio

    LabelStudio(base_url=url, api_key=token).annotations.create(id=task_id, result=result)


def choice(name: str, to: str, label: str) -> dict:
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": [label]}}


def text(name: str, to: str, value: str) -> dict:
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [value]}}


def project_tasks(url: str, token: str, title: str) -> list:
    """Every task of the Label Studio project titled ``title`` ([] when there is no such project)."""
    from label_studio_sdk import LabelStudio

    c = LabelStudio(base_url=url, api_key=token)
    found = [p for p in c.projects.list(title=title) if p.title == title]
    if not found:
        return []
    return list(c.tasks.list(project=found[0].id, fields="all"))


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(
        {
            "BIASKIT_NO_PROGRESS": "1",
            "OMP_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
    )
    env.update(extra)
    return env


def hindi_cat(src: dict, i: int, targets: dict[str, str]) -> dict:
    """What a reviewer writes for CAT ``i`` (distinct per CAT: Devanagari digits in the context);
    ``targets``: the Hindi word for each English target term of the test."""
    t = targets[src["target"]]
    digits = str(i).translate(str.maketrans("0123456789", "०१२३४५६७८९"))
    if src["split"] == "intrasentence":
        return {
            "target": t,
            "context": f"{t} पड़ोसी {digits} दिन से बहुत BLANK था।",
            "stereotype": "सख़्त",
            "anti_stereotype": "सहज",
            "unrelated": "तिकोना",
        }
    return {
        "target": t,
        "context": f"हमारे {t} पड़ोसी {digits} दिन पहले आए।",
        "stereotype": "वे बहुत पूजा-पाठ करते हैं।",
        "anti_stereotype": "वे रात भर नाचते रहे।",
        "unrelated": "ताँबा बिजली का सुचालक है।",
    }
