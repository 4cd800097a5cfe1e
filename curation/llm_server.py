"""A local LLM in one command (``biaskit llm serve`` / ``biaskit llm stop``).

``serve`` starts llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server`` of the
``llama-cpp-python[server]`` package) on 127.0.0.1 with a GGUF model, waits until it answers, and
records it in its folder (``--dir``, default ``$BIASKIT_LLM_DIR`` or ``~/.local/share/biaskit/llm``):
``biaskit-llm.json`` (pid, port, URL, model, GGUF, chat format, threads: no secret) and ``server.log``.
``stop`` stops the server recorded there (SIGTERM to its process group, then SIGKILL).

The models: ``gemma3-270m``, ``smollm2`` or any ``PATH.gguf`` (:mod:`.served_models`); the name is
the model id the server answers to (``[llm] model``).

The server's Python is found the way ``annotate serve`` finds Label Studio:

1. ``$BIASKIT_LLM_VENV`` (a virtual environment with ``llama-cpp-python[server]``),
2. ``<repository>/.venv-llm`` (the layout of a biaskit checkout; ``make services`` builds it),
3. the Python running biaskit, then ``python3`` on ``PATH``, when they import ``llama_cpp.server``.

A project whose ``[llm]`` names a model this server serves and gives no ``base_url`` (and no
``$OPENAI_BASE_URL``) sends its requests here (:func:`served_base_url`): ``biaskit init --trial``'s
project runs with no edit. The port is the one the folder's server used last when it is free (a
restarted server keeps its address, so the LLM cache and the stages' fingerprints, which include the
endpoint, stay valid), else a free one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import BiaskitError, InputError
from biaskit.options import say, tell

if TYPE_CHECKING:
    from .options import LLMServeOptions, LLMStopOptions

STATE_FILE = "biaskit-llm.json"
LOG_FILE = "server.log"
VENV_ENV = "BIASKIT_LLM_VENV"
DIR_ENV = "BIASKIT_LLM_DIR"


class LLMServerError(BiaskitError):
    """llama.cpp's server could not be found, started or stopped."""


def default_dir() -> Path:
    """``$BIASKIT_LLM_DIR`` or ``~/.local/share/biaskit/llm``: where ``serve`` records its server."""
    return Path(os.environ.get(DIR_ENV) or Path.home() / ".local" / "share" / "biaskit" / "llm").expanduser()


# ------------------------------------------------------------------------------------------ the server's Python
def _imports_server(python: str | Path) -> bool:
    """Whether ``python`` imports llama.cpp's server (run in its own folder: a module of the current one,
    such as a stray ``struct.py`` in /tmp, must not shadow the standard library's)."""
    try:
        probe = [str(python), "-c", "import llama_cpp.server"]
        return subprocess.run(probe, capture_output=True, timeout=120, cwd=Path(python).parent).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_server_python() -> Path:
    """The Python that runs llama.cpp's server (see the module docstring for the search order)."""
    env = os.environ.get(VENV_ENV)
    if env:
        py = Path(env).expanduser() / "bin" / "python"
        if not py.exists():
            raise LLMServerError(
                f"{VENV_ENV} points at {env}, which has no bin/python. Fix: set it to a virtual environment "
                "with llama-cpp-python[server], or run `make services`."
            )
        return py
    repo = Path(__file__).resolve().parents[1]
    cands = [repo / ".venv-llm" / "bin" / "python", Path(sys.executable)]
    on_path = shutil.which("python3")
    if on_path:
        cands.append(Path(on_path))
    for c in cands:
        if c.exists() and _imports_server(c):
            return c
    raise LLMServerError(
        "llama.cpp's server (llama-cpp-python[server]) was not found. Fix: run `make services` (it builds "
        f".venv-llm), or set {VENV_ENV} to a virtual environment with llama-cpp-python[server] installed."
    )


# ------------------------------------------------------------------------------------------ state
@dataclass
class LLMServerInfo:
    """A server ``serve`` started (what ``biaskit-llm.json`` records)."""

    pid: int
    port: int
    url: str  # the API root, http://127.0.0.1:PORT/v1
    model: str
    gguf: str
    chat_format: str | None
    threads: int
    dir: str
    started_in_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k not in ("dir", "started_in_s")}


def _read_state(d: Path) -> dict[str, Any]:
    try:
        data = json.loads((d / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def running(d: str | Path | None = None) -> LLMServerInfo | None:
    """The server recorded in folder ``d`` (default :func:`default_dir`) if it still runs, else None."""
    from biaskit.services import alive, runs

    d = Path(d) if d is not None else default_dir()
    info = _read_state(d)
    try:
        srv = LLMServerInfo(
            pid=int(info["pid"]),
            port=int(info["port"]),
            url=str(info["url"]),
            model=str(info["model"]),
            gguf=str(info.get("gguf", "")),
            chat_format=info.get("chat_format"),
            threads=int(info.get("threads", 1)),
            dir=str(d),
        )
    except (KeyError, TypeError, ValueError):
        return None
    return srv if alive(srv.pid) and runs(srv.pid, (b"llama_cpp.server",)) else None


def served_base_url(model: str | None) -> str | None:
    """The API root of the server ``biaskit llm serve`` runs (in :func:`default_dir`) for ``model``, or None."""
    if not model:
        return None
    srv = running()
    return srv.url if srv is not None and srv.model == model else None


def default_base_url(base_url: str | None, model: str | None) -> str | None:
    """Where requests for ``model`` go: ``base_url`` when given, else ``$OPENAI_BASE_URL``, else the
    server ``biaskit llm serve`` runs for this model, else None (OpenAI's API)."""
    return base_url or os.environ.get("OPENAI_BASE_URL") or served_base_url(model)


# ------------------------------------------------------------------------------------------ serve / stop
def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/models", timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def _log_tail(path: Path, n: int = 3) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-n:])[-600:]


def _port(d: Path, port: int | None) -> int:
    """``port``, else the port the folder's server used last when nothing listens there, else a free one."""
    import socket

    from biaskit.services import free_port

    if port:
        return port
    last = _read_state(d).get("port")
    if isinstance(last, int) and 1024 <= last < 65536:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", last))
                return last
            except OSError:
                pass
    return free_port()


def serve(o: LLMServeOptions) -> LLMServerInfo:
    """``biaskit llm serve``: start llama.cpp's server for ``opts.model`` on 127.0.0.1 and wait until it
    answers (``o``: the command's :class:`~.options.LLMServeOptions`). Idempotent: the
    folder's server, when it runs this model, is returned as it is."""
    from biaskit.io import atomic_write_text
    from biaskit.threads import choose

    from .served_models import resolve_model

    d = Path(o.dir).expanduser().resolve() if o.dir else default_dir()
    live = running(d)
    py = find_server_python()
    model = resolve_model(o.model, py, o.chat_format)
    if live is not None:
        return _same_model(live, model.name, d)
    d.mkdir(parents=True, exist_ok=True)
    port = _port(d, o.port)
    threads, _ = choose()  # `biaskit --threads N`, $BIASKIT_THREADS, $OMP_NUM_THREADS, else the usable CPUs
    t0 = time.monotonic()
    proc = _start(_command(py, model, port, threads, o.ctx), d)
    url = f"http://127.0.0.1:{port}/v1"
    info = LLMServerInfo(proc.pid, port, url, model.name, str(model.gguf), model.chat_format, threads, str(d))
    atomic_write_text(d / STATE_FILE, json.dumps(info.to_json(), indent=1) + "\n")
    _wait_until_it_answers(proc, port, d, o.wait)
    info.started_in_s = round(time.monotonic() - t0, 2)
    return info


def _same_model(live: LLMServerInfo, name: str, d: Path) -> LLMServerInfo:
    """The folder's running server when it serves ``name``; a refusal naming how to stop it otherwise."""
    if live.model == name:
        return live
    where = "" if d == default_dir() else " " + say("dir", d)
    raise InputError(
        f"a server for '{live.model}' already runs from this folder ({live.url}, pid {live.pid}).",
        path=d,
        fix=f"stop it first (biaskit llm stop{where}), or {tell('dir', 'OTHER')}.",
    )


def _command(py: Path, model: Any, port: int, threads: int, ctx: int) -> list[str]:
    """llama-cpp-python's server on 127.0.0.1:``port`` for ``model`` (a :class:`~.served_models.ServedModel`)."""
    cmd = [str(py), "-m", "llama_cpp.server", "--model", str(model.gguf), "--model_alias", model.name]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(ctx)]
    cmd += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    return cmd + (["--chat_format", model.chat_format] if model.chat_format else [])


def _start(cmd: list[str], d: Path) -> subprocess.Popen:
    """Start the server in its own session (it outlives this command; `stop` signals its process group),
    its output appended to ``d/server.log``."""
    with open(d / LOG_FILE, "ab") as log:
        return subprocess.Popen(
            cmd,
            cwd=str(d),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_until_it_answers(proc: subprocess.Popen, port: int, d: Path, wait: float) -> None:
    """Poll ``url/models`` until it answers; a server that exits or stays silent for ``wait`` s is an error
    (and a silent one is stopped)."""
    from biaskit.services import terminate

    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LLMServerError(
                f"llama.cpp's server exited with code {proc.returncode} while starting: "
                f"{_log_tail(d / LOG_FILE)} (see {d / LOG_FILE}). Fix: check that port {port} "
                f"is free ({tell('port', 'PORT')} for another) and that the model file loads."
            )
        if _answers(url):
            return
        time.sleep(0.25)
    terminate(proc.pid)
    raise LLMServerError(
        f"llama.cpp's server did not answer on {url} within {wait:g} s (see {d / LOG_FILE}). "
        f"Fix: on a slow machine, {tell('wait', int(wait * 2))}."
    )


def stop(o: LLMStopOptions) -> LLMServerInfo | None:
    """``biaskit llm stop``: stop the server recorded in ``o.dir``; None when none was running. The
    state file keeps the port (a later ``serve`` takes it again when free)."""
    from biaskit.io import atomic_write_text
    from biaskit.services import port_closed, terminate

    d = Path(o.dir).expanduser().resolve() if o.dir else default_dir()
    info = running(d)
    if info is None:
        return None
    terminate(info.pid, timeout=20)
    port_closed(info.port, 10)
    atomic_write_text(d / STATE_FILE, json.dumps({"port": info.port, "stopped": True}) + "\n")
    return info


def llm_lines(info: LLMServerInfo) -> list[str]:
    """The ``[llm]`` lines a project's biaskit.toml needs to use this server."""
    return ["[llm]", f'model = "{info.model}"', f'base_url = "{info.url}"', "concurrency = 1"]
