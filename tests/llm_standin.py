"""A tiny OpenAI-compatible HTTP server for tests of the LLM client and the job runner.

It is a real server (``http.server``) on a free local port, so the real ``openai`` client, its
HTTP stack and biaskit's retry/timeout/early-stop logic all run; what it answers is scripted by
the test: ``respond(body, n) -> Reply`` (``n``: 0-based request count). Requests are counted and
recorded at the server (``requests``: the bodies; ``headers``: each request's headers, names lower-cased, so a
``respond`` can echo what the client sent, ``headers[n]["authorization"]``). Replies:

- :func:`chat` — a chat completion with the given content (``finish_reason`` settable);
- ``Reply(status, payload)`` — any JSON body with any status and headers (429 + Retry-After, 500,
  401 echoing a key, ...);
- ``Reply(200, raw=b"<html>...", content_type="text/html")`` — a non-JSON body;
- ``Reply(hang=True)`` — never answers (until the server is closed).

GET requests are answered from ``server.get`` (path -> JSON, e.g. ``{"/openapi.json": {...}}``: what a
server says about itself), else 404; they are not counted.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    status: int = 200
    payload: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = "application/json"
    hang: bool = False
    delay: float = 0.0


def chat(
    content: str, *, finish_reason: str = "stop", prompt_tokens: int = 10, completion_tokens: int = 5, model: str = "m"
) -> Reply:
    return Reply(
        200,
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": content}}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        },
    )


def user_text(body: dict) -> str:
    """The first user message of a request (the task's prompt, not a re-ask)."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def strip_volatile(rows: list[dict]) -> list[dict]:
    """Rows without what legitimately differs between two runs (generation time, cache hit)."""
    out = []
    for r in rows:
        r = json.loads(json.dumps(r))
        for k in ("timestamp", "cached"):
            r.get("provenance", {}).pop(k, None)
        out.append(r)
    return out


class StandIn:
    def __init__(self, respond: Callable[[dict, int], Reply]):
        self.respond = respond
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.get: dict[str, Any] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                path = self.path.split("?")[0]
                found = path in outer.get
                data = json.dumps(outer.get.get(path, {"detail": "Not Found"})).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    n = len(outer.requests)
                    outer.requests.append(body)
                    outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                r = outer.respond(body, n)
                if r.hang:
                    outer._closing.wait(120)
                    return
                if r.delay:
                    outer._closing.wait(r.delay)
                data = r.raw if r.raw is not None else json.dumps(r.payload).encode()
                try:
                    self.send_response(r.status)
                    for k, v in r.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", r.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout, kill)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def standin_server():
    """``make(respond) -> StandIn``; every server made is closed after the test."""
    made: list[StandIn] = []

    def make(respond: Callable[[dict, int], Reply]) -> StandIn:
        s = StandIn(respond)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
