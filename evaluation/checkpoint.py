"""Which checkpoint a run loaded: its facts and its weights' SHA-256 (recorded in every summary).

A paper's figure applies to a run only when the run loaded the paper's checkpoint. A name says
nothing about that (a random model saved into a folder called ``muril-base-cased``, a debiased model
whose ``config.json`` keeps ``_name_or_path: bert-base-cased``), so biaskit records what the weights
*are*:

- :func:`config_facts`: the model type, the architecture named in the config, the number of layers,
  the hidden size, the vocabulary size and the backbone's parameter count (``AutoModel.from_config``
  built on the ``meta`` device: no memory, no weights read);
- :func:`weights`: every weights file of the folder with its SHA-256 and size, through
  :func:`biaskit.io.sha256_cached` (a file is read once, and again only after it changes), named by
  its file name only (no path of this machine).

:func:`checkpoint_record` puts both together for ``summary["checkpoint"]``;
:mod:`.published` compares them with the facts ``data/published/`` records for each paper checkpoint.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

# the facts compared with a paper checkpoint's record (the architecture class is reported, not compared:
# the same weights load as BertModel or BertForMaskedLM)
FACT_KEYS = ("model_type", "layers", "hidden_size", "vocab_size", "parameters")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack")


def config_facts(config: Any) -> dict[str, Any]:
    """The facts of a transformers config (a ``PretrainedConfig``)."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    archs = getattr(config, "architectures", None) or [None]
    return {
        "model_type": getattr(config, "model_type", None),
        "architecture": archs[0],
        "layers": getattr(text, "num_hidden_layers", None),
        "hidden_size": getattr(text, "hidden_size", None),
        "vocab_size": getattr(text, "vocab_size", None),
        "parameters": count_parameters(config),
    }


def recorded_facts(record: dict) -> dict[str, Any]:
    """The facts of a paper checkpoint's record (``data/published``): counted from its ``config`` the
    same way as a loaded model's, so that a library upgrade moves both sides alike."""
    from biaskit.errors import require

    transformers = require("transformers", "evaluation", "comparing checkpoints")
    cfg = dict(record.get("config") or {})
    if not cfg:
        return {k: record.get(k) for k in FACT_KEYS}
    config = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    return config_facts(config)


def count_parameters(config: Any) -> int | None:
    """The parameters of the backbone ``config`` describes (``AutoModel.from_config`` on the meta
    device; tied weights counted once), or None when transformers cannot build it."""
    try:
        return _count(config.to_json_string(use_diff=False))
    except Exception:  # an exotic config: the count is unknown, not an error
        return None


@functools.lru_cache(maxsize=32)
def _count(config_json: str) -> int | None:
    import torch
    import transformers

    d = json.loads(config_json)
    config = transformers.AutoConfig.for_model(d.pop("model_type"), **d)
    try:
        with torch.device("meta"):
            model = transformers.AutoModel.from_config(config)
    except Exception:  # a config transformers cannot build: the count is unknown, not an error
        return None
    return int(sum(p.numel() for p in model.parameters()))


def weights(folder: str | Path | None) -> list[dict[str, Any]]:
    """``[{"file", "sha256", "bytes"}]`` of every weights file in a model folder (names relative to it)."""
    from biaskit.io import sha256_cached

    if folder is None:
        return []
    p = Path(folder)
    if p.is_file():
        return [{"file": p.name, "sha256": sha256_cached(p), "bytes": p.stat().st_size}]
    if not p.is_dir():
        return []
    out = []
    for f in sorted(x for x in p.rglob("*") if x.is_file() and x.suffix in WEIGHT_SUFFIXES):
        rel = f.relative_to(p).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue
        out.append({"file": rel, "sha256": sha256_cached(f), "bytes": f.stat().st_size})
    return out


def _folder_config(folder: str | Path | None) -> Any:
    """The config of a model folder as saved (an encoder-decoder's encoder stack carries an edited copy)."""
    if folder is None or not (Path(folder) / "config.json").is_file():
        return None
    try:
        import transformers

        return transformers.AutoConfig.from_pretrained(str(folder))
    except Exception:  # unreadable: fall back to the loaded model's config
        return None


def checkpoint_record(model: Any) -> dict[str, Any]:
    """``summary["checkpoint"]`` of a loaded model (a :class:`~.models.LoadedLM`, a SEAT encoder, a
    served model): its facts and its weights' SHA-256. A served model's weights are not here to hash
    (``served``: true, facts unknown); an in-memory model has facts but no files."""
    if getattr(model, "served", False):
        return {"served": True, "facts": {}, "weights": [], "why": "a served model: its weights are not visible"}
    config = _folder_config(getattr(model, "path", None))
    if config is None:
        config = getattr(getattr(model, "model", None), "config", None) or getattr(model, "config", None)
    facts = config_facts(config) if config is not None else {}
    files = weights(getattr(model, "path", None))
    return {
        "facts": facts,
        "weights": files,
        **({} if files else {"why": "no weights file (an in-memory model)"}),
    }
