"""The ``hf`` engine: any transformers sequence-to-sequence translation model.

``hf:PATH_OR_NAME`` loads the tokenizer and model with ``AutoTokenizer`` /
``AutoModelForSeq2SeqLM`` (offline-friendly: a local folder works with ``HF_HUB_OFFLINE=1``) and
maps biaskit's ISO 639-1 codes to the model family's scheme:

=============  ===============================  ==========================================================
family         detected by                      source / target handling
=============  ===============================  ==========================================================
``nllb``       tokenizer class ``Nllb*``        ``tokenizer.src_lang = eng_Latn``; generation forced to
                                                start with the target code (``forced_bos_token_id`` =
                                                id of ``hin_Deva``), as in the NLLB model card
``m2m100``     tokenizer class ``M2M100*``      ``src_lang = en``; ``forced_bos_token_id =
                                                tokenizer.get_lang_id("hi")``
``mbart50``    tokenizer class ``MBart*``       ``src_lang = en_XX``; ``forced_bos_token_id`` = id of
                                                ``hi_IN`` (mBART-50 many-to-many card)
``indictrans`` config ``model_type`` contains   the input is prefixed with ``"eng_Latn hin_Deva "``
               ``indictrans``                   (IndicTrans2's tag format; their IndicProcessor's
                                                script normalisation is not applied — pre-normalised
                                                input is assumed; ``trust_remote_code`` needed)
``marian``     model type ``marian``            no codes (one direction per model); a multi-target
                                                OPUS-MT model gets the ``>>hin<<`` prefix when its
                                                vocabulary has that token
``t5``         model type ``t5``/``mt5``        prefix ``"translate English to Hindi: "``
=============  ===============================  ==========================================================

``family=`` overrides the detection. Decoding is deterministic (greedy or beam search, no
sampling) so a cached translation equals a fresh one; inputs are sorted by length and padded per
batch (``batch_size``) and run under ``torch.inference_mode()`` on ``device`` (``cpu``, ``cuda``,
``cuda:1``, ``mps``; default: cuda when available).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .mt_base import MTEngine, MTError, flores_code, iso639_3, language_name, mbart_code

FAMILIES = ("nllb", "m2m100", "mbart50", "indictrans", "marian", "t5", "plain")


def detect_family(tokenizer: Any, config: Any) -> str:
    tok = type(tokenizer).__name__.lower()
    mt = str(getattr(config, "model_type", "")).lower()
    if "indictrans" in mt:
        return "indictrans"
    if "nllb" in tok:
        return "nllb"
    if "m2m100" in tok or (mt == "m2m_100" and hasattr(tokenizer, "get_lang_id")):
        return "m2m100"
    if "mbart" in tok or mt == "mbart":
        return "mbart50"
    if mt == "marian" or "marian" in tok:
        return "marian"
    if mt in ("t5", "mt5", "umt5"):
        return "t5"
    return "plain"


class HFEngine(MTEngine):
    name = "hf"

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        batch_size: int = 16,
        num_beams: int = 1,
        max_new_tokens: int = 128,
        family: str | None = None,
        dtype: str | None = None,
        trust_remote_code: bool = False,
    ):
        self.model = str(model)
        self.device_name = device
        self.batch_size = max(1, int(batch_size))
        self.num_beams = max(1, int(num_beams))
        self.max_new_tokens = int(max_new_tokens)
        if family is not None and family not in FAMILIES:
            raise MTError(f"unknown model family '{family}'. Fix: use one of {', '.join(FAMILIES)}.")
        self.family = family
        self._forced_family = family
        self.dtype = dtype
        self.trust_remote_code = trust_remote_code
        # Any: AutoTokenizer / AutoModelForSeq2SeqLM pick the class at load time, and _prepare uses the
        # family-specific tokenizer API (src_lang, get_lang_id) that transformers' base classes do not declare
        self._tok: Any = None
        self._model: Any = None
        self._fingerprint: str | None = None
        self._device: str | None = None
        self.generate_calls = 0

    # -- loading -----------------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        from biaskit.errors import require

        require("torch", "evaluation", "the hf translation engine")
        require("transformers", "evaluation", "the hf translation engine")
        import torch
        from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

        src = self.model
        remote = self.trust_remote_code or "indictrans" in src.lower()
        try:
            config = AutoConfig.from_pretrained(src, trust_remote_code=remote)
            tok = AutoTokenizer.from_pretrained(src, trust_remote_code=remote)
            kwargs: dict[str, Any] = {"trust_remote_code": remote}
            if self.dtype:
                kwargs["dtype"] = getattr(torch, self.dtype)
            model = AutoModelForSeq2SeqLM.from_pretrained(src, **kwargs)
        except (OSError, ValueError) as exc:
            hint = (
                "the folder has no config.json / tokenizer files"
                if Path(src).exists()
                else "no such local folder, and the name is not in the Hugging Face cache (HF_HUB_OFFLINE=1?)"
            )
            raise MTError(
                f"hf: cannot load a seq2seq translation model from '{src}': {hint} ({exc.__class__.__name__}: "
                f"{str(exc).splitlines()[0][:200]}). Fix: pass hf:PATH to a folder saved with "
                "save_pretrained (e.g. facebook/nllb-200-distilled-600M downloaded once)."
            ) from None
        dev = self.device_name or ("cuda" if torch.cuda.is_available() else "cpu")
        if dev == "cpu":  # torch's CPU threads: --threads, or a fair share of this machine
            from biaskit import threads

            threads.apply()
        model.to(dev)
        model.eval()
        self._device = dev
        self._tok, self._model, self._config = tok, model, config
        if self.family is None:
            self.family = detect_family(tok, config)
        # fingerprint: the weights' identity without hashing gigabytes — config + tokenizer files +
        # the size and mtime-free hash of the first weight tensor
        h = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True, default=str).encode())
        h.update(str(len(tok)).encode())
        first = next(iter(model.state_dict().values()))
        h.update(first.detach().float().cpu().numpy().tobytes()[: 1 << 16])
        self._fingerprint = h.hexdigest()[:16]

    def _file_fingerprint(self) -> str | None:
        """For a local folder: a hash of its model files (names, sizes, first 64 KiB) — no model load,
        so a fully cached re-run never loads the weights."""
        root = Path(self.model)
        if not root.is_dir():
            return None
        h = hashlib.sha256()
        files = sorted(
            f
            for f in root.rglob("*")
            if f.is_file() and f.suffix in (".json", ".safetensors", ".bin", ".model", ".txt", ".spm", ".py")
        )
        if not files:
            return None
        for f in files:
            h.update(str(f.relative_to(root)).encode())
            h.update(str(f.stat().st_size).encode())
            with open(f, "rb") as fh:
                h.update(fh.read(1 << 16))
        return "files-" + h.hexdigest()[:16]

    def cache_params(self) -> dict[str, Any]:
        # the model path alone is not an identity (a folder can be overwritten): add a fingerprint
        fp = self._file_fingerprint()
        if fp is None:
            self._load()
            fp = self._fingerprint
        out = {"fingerprint": fp, "num_beams": self.num_beams, "max_new_tokens": self.max_new_tokens}
        if self._forced_family:
            out["family"] = self._forced_family
        return out

    def provenance(self) -> dict[str, Any]:
        import transformers

        # static facts only, so a cached re-run writes the same provenance as the first run
        return {**super().provenance(), "device": self.device_name or "auto", "transformers": transformers.__version__}

    # -- translation -------------------------------------------------------------------------
    def _prepare(self, texts: list[str], src: str, tgt: str) -> tuple[list[str], dict[str, Any]]:
        tok, fam = self._tok, self.family
        gen: dict[str, Any] = {}
        if fam == "nllb":
            s, t = flores_code(src), flores_code(tgt)
            tok.src_lang = s
            tid = tok.convert_tokens_to_ids(t)
            if tid is None or tid == tok.unk_token_id:
                raise MTError(
                    f"hf: the tokenizer of '{self.model}' has no language token '{t}'. Fix: check the "
                    "model supports that language."
                )
            gen["forced_bos_token_id"] = tid
        elif fam == "m2m100":
            tok.src_lang = src
            gen["forced_bos_token_id"] = tok.get_lang_id(tgt)
        elif fam == "mbart50":
            s, t = mbart_code(src), mbart_code(tgt)
            tok.src_lang = s
            gen["forced_bos_token_id"] = tok.convert_tokens_to_ids(t)
        elif fam == "indictrans":
            texts = [f"{flores_code(src)} {flores_code(tgt)} {x}" for x in texts]
        elif fam == "marian":
            tag = f">>{iso639_3(tgt)}<<"
            if tag in tok.get_vocab():
                texts = [f"{tag} {x}" for x in texts]
        elif fam == "t5":
            texts = [f"translate {language_name(src)} to {language_name(tgt)}: {x}" for x in texts]
        return texts, gen

    def generate_ids(self, texts: Sequence[str], src: str, tgt: str) -> list[list[int]]:
        """Generated token ids per text (special tokens included), in input order."""
        texts = list(texts)
        if not texts:
            return []
        self._load()
        import torch

        prepared, gen = self._prepare(texts, src, tgt)
        order = sorted(range(len(prepared)), key=lambda i: len(prepared[i]))
        out: list[list[int]] = [[] for _ in prepared]
        tok, model = self._tok, self._model
        with torch.inference_mode():
            for b in range(0, len(order), self.batch_size):
                ids = order[b : b + self.batch_size]
                enc = tok([prepared[i] for i in ids], return_tensors="pt", padding=True, truncation=True)
                enc = {k: v.to(self._device) for k, v in enc.items()}
                gen_out = model.generate(
                    **enc, **gen, num_beams=self.num_beams, do_sample=False, max_new_tokens=self.max_new_tokens
                )
                self.generate_calls += 1
                for i, row in zip(ids, gen_out.tolist(), strict=False):
                    out[i] = row
        return out

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        rows = self.generate_ids(texts, src, tgt)
        return [d.strip() for d in self._tok.batch_decode(rows, skip_special_tokens=True)] if rows else []
