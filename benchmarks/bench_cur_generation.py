"""Curation generation: sequential uncached requests (the straightforward loop) vs --concurrency 8,
and vs a re-run answered from the cache/outputs. Runs against a local OpenAI-compatible stand-in
that answers after a fixed latency (hosted APIs take 0.5-5 s; 0.2 s here keeps the run short).

    python benchmarks/bench_cur_generation.py
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

LATENCY = 0.2
JOBS_IDENTITIES = [
    "Dalit",
    "Brahmin",
    "OBC",
    "Kshatriya",
    "Baniya",
    "SC/ST",
    "upper-caste",
    "Adivasi",
    "Thakur",
    "Vaishya",
]


class H(BaseHTTPRequestHandler):
    count = 0

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        H.count += 1
        time.sleep(LATENCY)
        words = ["proud", "poor", "clever", "humble", "strict"]
        data = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps({"attributes": words})},
                    }
                ],
                "usage": {"prompt_tokens": 80, "completion_tokens": 20, "total_tokens": 100},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def run(base_url: str, out: Path, concurrency: int, cache_dir: Path) -> float:
    os.environ["BIASKIT_CACHE_DIR"] = str(cache_dir)
    from biaskit.curation.generate import generate_tuples
    from biaskit.curation.llm import get_llm
    from biaskit.curation.options import TuplesOptions
    from biaskit.curation.prompts import get_prompt

    from biaskit.cache import DiskCache

    llm = get_llm(
        "openai",
        model="bench",
        base_url=base_url,
        response_format="json_object_schema",
        cache=DiskCache(cache_dir / "c.sqlite3", namespace="llm"),
    )
    t = time.perf_counter()
    generate_tuples(
        llm,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="caste", identities=JOBS_IDENTITIES, n=5, out=out, concurrency=concurrency),
        progress=False,
    )
    return time.perf_counter() - t


def main() -> None:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        n0 = H.count
        seq = run(base, d / "seq.jsonl", 1, d / "cache-seq")
        n_seq = H.count - n0
        n0 = H.count
        par = run(base, d / "par.jsonl", 8, d / "cache-par")
        n_par = H.count - n0
        n0 = H.count
        (d / "par.jsonl").unlink()  # outputs gone, cache kept: the cache answers
        again = run(base, d / "par.jsonl", 8, d / "cache-par")
        n_again = H.count - n0
    srv.shutdown()
    jobs = len(JOBS_IDENTITIES) * 2
    print(f"{jobs} tuple jobs, {LATENCY:.1f} s simulated latency per request")
    print(f"sequential, uncached (straightforward loop): {seq:6.2f} s  {n_seq} requests")
    print(f"--concurrency 8, uncached:                   {par:6.2f} s  {n_par} requests  speed-up x{seq / par:.1f}")
    print(
        f"re-run from the response cache:              {again:6.2f} s  {n_again} requests  speed-up x{seq / again:.0f}"
    )


if __name__ == "__main__":
    main()
