"""Time to fail of `biaskit curate tuples` against endpoints that cannot serve it (docs/curation.md).

Each case runs the real CLI as a subprocess (default options unless shown) against a local
stand-in server (tests/llm_standin.py) or a closed port, with 6 jobs to do, and prints the wall
time (process start included: ~1-2 s of imports), the exit code, the requests the server received
and the last line of stderr.

    python benchmarks/bench_cur_time_to_fail.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from llm_standin import Reply, StandIn  # noqa: E402 (after sys.path names tests/)

CASES = [
    ("connection refused (nothing listens)", None, []),
    ("server hangs, --timeout 3", lambda b, n: Reply(hang=True), ["--timeout", "3"]),
    ("HTTP 500 on every request", lambda b, n: Reply(500, {"error": {"message": "boom"}}), []),
    (
        "HTTP 429, Retry-After: 2, every request",
        lambda b, n: Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "2"}),
        [],
    ),
    ("HTTP 200 with an HTML page", lambda b, n: Reply(200, raw=b"<html>hello</html>", content_type="text/html"), []),
]


def main() -> None:
    print(f"{'case':42s} {'seconds':>8s} {'exit':>5s} {'requests':>9s}  last line of stderr")
    for label, respond, extra in CASES:
        server = StandIn(respond) if respond else None
        if server is None:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        else:
            url = server.base_url
        with tempfile.TemporaryDirectory() as d:
            env = {**os.environ, "BIASKIT_CACHE_DIR": d, "BIASKIT_NO_PROGRESS": "1"}
            env.pop("OPENAI_API_KEY", None)
            t = time.monotonic()
            p = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "biaskit.cli",
                    "curate",
                    "tuples",
                    "--axis",
                    "caste",
                    "--identities",
                    "Dalit,Brahmin,OBC",
                    "--model",
                    "m",
                    "--base-url",
                    url,
                    "--out",
                    str(Path(d) / "t.jsonl"),
                    *extra,
                ],
                capture_output=True,
                text=True,
                env=env,
            )
            took = time.monotonic() - t
        n = server.count if server else 0
        if server:
            server.close()
        last = (p.stderr.strip().splitlines() or [""])[-1][:110]
        print(f"{label:42s} {took:8.1f} {p.returncode:5d} {n:9d}  {last}")


if __name__ == "__main__":
    main()
