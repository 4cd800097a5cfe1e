"""Next-sentence-prediction heads in the StereoSet reference code's format (``--nsp-head FILE``).

StereoSet scores intersentence CATs with an NSP head for every model (ACL 2021 §6.1-6.2; arXiv 2020
§7 and A.4). BERT has its own; for the others the authors trained heads and released them
(``code/models/download_models.sh``: ``GPT2Model_gpt2_0.0005.pth``, ``RobertaModel_roberta-base_1e-05.pth``,
``XLNetModel_xlnet-base-cased_1e-05.pth``, ...). Such a file is the ``state_dict`` of the reference's
``ModelNSP`` (``code/models/models.py``) wrapped in ``torch.nn.DataParallel``:

- ``module.core_model.*``: the core transformer (``BertModel``, ``RobertaModel``, ``XLNetModel``,
  ``GPT2Model``), fine-tuned with the head, so it replaces the pretrained weights;
- ``module.nsp_head.{0,1,2}.{weight,bias}``: three linear layers, hidden -> 300 -> 300 -> 2, with no
  activation between them.

The head reads, as ``ModelNSP.forward`` does: the pooler output (BERT, RoBERTa), the first position's
last-layer state (XLNet) or the mean of the last layer over the sequence (GPT-2). The inputs are the
reference's ``IntersentenceDataset``: ``[CLS] context [SEP] sentence [SEP]`` (BERT), ``<s> context
</s></s> sentence </s>`` (RoBERTa), ``context <sep> sentence <sep> <cls>`` (XLNet), with token types
0 up to the first separator and 1 after it, and the two token sequences simply concatenated for GPT-2
(``encode_plus`` of a pair adds nothing; the reference added a ``<PAD>`` token to GPT-2's vocabulary,
so its head files have one more embedding row). The score is the softmax probability of the "is next"
class: index 0 for ``bert*`` and ``roberta-base`` heads and 1 for the others
(``eval_discriminative_models.py`` / ``eval_generative_models.py``), read from the reference file
name ``<Class>_<model>_<lr>.pth`` unless ``next_label`` is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, InputError
from biaskit.options import say

FAMILIES = ("bert", "roberta", "xlnet", "gpt2")  # ModelNSP.pretrained2model
PREFIX = "module."
_NAME = re.compile(r"^(?:BertModel|RobertaModel|XLNetModel|GPT2Model)_(?P<model>[^_]+)_.+\.pth?$")


def reference_next_label(path: str | Path) -> int | None:
    """The "is next" index the reference reads for a head file named as the authors' are, else None."""
    m = _NAME.match(Path(path).name)
    if not m:
        return None
    model = m.group("model")
    return 0 if model.startswith("bert") or model == "roberta-base" else 1


@dataclass
class NSPHead:
    core: Any
    head: Any
    tokenizer: Any
    family: str
    next_label: int
    path: str
    sha256: str
    device: str

    def cache_id(self) -> dict:
        from .engine import ENGINE_CACHE_VERSION

        return {"engine": "nsp-head", "v": ENGINE_CACHE_VERSION, "head": self.sha256, "label": self.next_label}

    def encode(self, context: str, sentence: str) -> dict:
        """The reference's input ids (and token types) for one (context, sentence) pair."""
        tok = self.tokenizer
        a = tok(context, add_special_tokens=False)["input_ids"]
        b = tok(sentence, add_special_tokens=False)["input_ids"]
        if self.family == "gpt2":
            return {"input_ids": a + b}
        cls_, sep = tok.cls_token_id, tok.sep_token_id
        if self.family == "bert":
            ids = [cls_] + a + [sep] + b + [sep]
        elif self.family == "roberta":
            ids = [cls_] + a + [sep, sep] + b + [sep]
        else:  # xlnet
            ids = a + [sep] + b + [sep, cls_]
        first = ids.index(sep)
        return {"input_ids": ids, "token_type_ids": [1 if i > first else 0 for i in range(len(ids))]}

    def probs(self, x: dict) -> list[float]:
        """P(is next) for a batch of encoded inputs (``ModelNSP.forward`` + softmax)."""
        import torch

        if self.family in ("roberta", "gpt2"):  # the reference passes no token types to these cores
            x = {"input_ids": x["input_ids"]}
        out = self.core(**x)
        if self.family == "gpt2":
            h = out.last_hidden_state.float().mean(dim=1)
        elif self.family == "xlnet":
            h = out.last_hidden_state.float()[:, 0, :]
        else:
            h = out.pooler_output.float()
        p = torch.softmax(self.head(h), dim=-1)[:, self.next_label]
        return p.double().cpu().tolist()


_CLASS_FAMILY = {"BertModel": "bert", "RobertaModel": "roberta", "XLNetModel": "xlnet", "GPT2Model": "gpt2"}
_FORMAT_FIX = (
    "pass a ModelNSP head file of the StereoSet reference format (module.core_model.*, module.nsp_head.0-2.*)."
)


def reference_family(path: str | Path) -> str | None:
    """The core model family a head file named as the authors' are was trained on (its ``<Class>``), else None."""
    name = Path(path).name
    return next((f for c, f in _CLASS_FAMILY.items() if name.startswith(c + "_") and _NAME.match(name)), None)


def read_head_file(path: str | Path) -> dict[str, Any]:
    """A head file's state dict, checked before any of it is used: a ``{name: tensor}`` mapping
    (``torch.load`` with ``weights_only``: pickled code is refused), floating-point finite values,
    and a head of exactly three linear layers ``nsp_head.{0,1,2}`` whose weights are 2-d, whose
    biases fit them, that chain (``hidden -> h1 -> h2 -> 2``). The ``module.`` prefix of
    ``DataParallel`` is removed. Each problem is one :class:`InputError` naming the file and the tensor."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise InputError(
            "NSP head file not found.",
            path=path,
            fix="pass the .pth file (e.g. the authors' "
            "GPT2Model_gpt2_0.0005.pth from StereoSet's code/models/download_models.sh).",
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # any unreadable file is the same error for the user
        why = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
        raise InputError(
            f"cannot read it as a PyTorch state dict ({why}).",
            path=path,
            fix="pass a ModelNSP state dict saved with torch.save (the StereoSet reference format).",
        ) from exc
    if not isinstance(state, dict) or not any(
        isinstance(k, str) and (k.startswith(PREFIX + "nsp_head.") or k.startswith("nsp_head.")) for k in state
    ):
        raise InputError("not a ModelNSP state dict: no nsp_head.* weights.", path=path, fix=_FORMAT_FIX)
    for k, v in state.items():
        what = f"'{k}'" if isinstance(k, str) else f"the key {k!r}"
        if not isinstance(k, str) or not isinstance(v, torch.Tensor):
            raise InputError(
                f"{what} holds a {type(v).__name__}, not a tensor." if isinstance(k, str) else f"{what} is not a name.",
                path=path,
                fix=_FORMAT_FIX,
            )
        if not v.is_floating_point():
            raise InputError(f"{what} holds {v.dtype} values, not floating-point weights.", path=path, fix=_FORMAT_FIX)
        if not bool(torch.isfinite(v).all()):
            raise InputError(
                f"{what} holds NaN or infinite values (scores from it would be NaN).",
                path=path,
                fix="pass the head file as it was trained (a damaged or diverged checkpoint?).",
            )
    state = {k[len(PREFIX) :] if k.startswith(PREFIX) else k: v for k, v in state.items()}
    _check_head_layers(state, path)
    return state


def _check_head_layers(state: dict[str, Any], path: Path) -> None:
    want = {f"nsp_head.{i}.{p}" for i in range(3) for p in ("weight", "bias")}
    have = {k for k in state if k.startswith("nsp_head.")}
    if have != want:
        odd = sorted(have - want) or sorted(want - have)
        raise InputError(
            f"expected three linear layers nsp_head.0, .1, .2 (weight and bias each); "
            f"{'unexpected' if have - want else 'missing'} {', '.join(odd[:3])}.",
            path=path,
            fix="pass a ModelNSP head file (hidden -> 300 -> 300 -> 2).",
        )
    prev = None
    for i in range(3):
        w, b = state[f"nsp_head.{i}.weight"], state[f"nsp_head.{i}.bias"]
        if w.ndim != 2:
            raise InputError(
                f"'nsp_head.{i}.weight' is {w.ndim}-d; a linear layer's weight is 2-d.", path=path, fix=_FORMAT_FIX
            )
        if tuple(b.shape) != (w.shape[0],):
            raise InputError(
                f"'nsp_head.{i}.bias' has shape {tuple(b.shape)}; its weight {tuple(w.shape)} needs ({w.shape[0]},).",
                path=path,
                fix=_FORMAT_FIX,
            )
        if prev is not None and w.shape[1] != prev:
            raise InputError(
                f"the layers do not chain: nsp_head.{i - 1} gives {prev} outputs, nsp_head.{i} takes {w.shape[1]}.",
                path=path,
                fix=_FORMAT_FIX,
            )
        prev = w.shape[0]
    if prev != 2:
        raise InputError(f"the head gives {prev} outputs; next-sentence prediction has 2.", path=path, fix=_FORMAT_FIX)


def load_nsp_head(path: str | Path, lm: Any, next_label: int | None = None) -> NSPHead:
    """A head file in the reference format (:func:`read_head_file`) for the model ``lm`` (a LoadedLM:
    its folder gives the core model's config and tokenizer)."""
    import torch

    from biaskit.io import sha256_file

    path = Path(path)
    state = read_head_file(path)
    family = getattr(lm.model.config, "model_type", "")
    if family not in FAMILIES:
        raise BiaskitError(
            f"an NSP head in the StereoSet reference format needs a {', '.join(FAMILIES)} core model "
            f"(ModelNSP); '{lm.name}' is a {family or 'unknown'} model. Fix: pass the head's own model "
            f"with {say('models')}"
        )
    trained_on = reference_family(path)
    if trained_on is not None and trained_on != family:
        raise InputError(
            f"the file name says the head was trained on a {trained_on} model; '{lm.name}' is a {family} model.",
            path=path,
            fix=f"pass the {trained_on} model the head was trained on with {say('models')}, or the head of this model.",
        )
    if lm.path is None or not Path(lm.path).is_dir():
        raise BiaskitError(
            f"'{lm.name}' has no model folder to build the head's core model from. Fix: pass the model as a folder"
        )
    core = _core_model(lm, state, path)
    layers = [state[f"nsp_head.{i}.weight"] for i in range(3)]
    hidden = core.config.hidden_size if hasattr(core.config, "hidden_size") else core.config.d_model
    if layers[0].shape[1] != hidden:
        raise InputError(
            f"the head takes {layers[0].shape[1]} inputs but '{lm.name}' has hidden size {hidden}.",
            path=path,
            fix="pass the model the head was trained on.",
        )
    head = torch.nn.Sequential(*(torch.nn.Linear(w.shape[1], w.shape[0]) for w in layers))
    head.load_state_dict({k[len("nsp_head.") :]: v for k, v in state.items() if k.startswith("nsp_head.")})
    label = next_label if next_label is not None else reference_next_label(path)
    if label not in (0, 1):
        raise BiaskitError(
            f"which output of {path.name} means 'is next' is not known (the reference reads it from "
            "the file name <Class>_<model>_<lr>.pth: 0 for bert* and roberta-base, 1 otherwise). "
            f"Fix: pass {say('nsp_label', 0)} or {say('nsp_label', 1)}"
        )
    dev = lm.device
    return NSPHead(
        core=core.to(dev).eval(),
        head=head.to(dev).eval(),
        tokenizer=lm.tokenizer,
        family=family,
        next_label=int(label),
        path=str(path),
        sha256=sha256_file(path),
        device=dev,
    )


def _core_model(lm: Any, state: dict[str, Any], path: Path) -> Any:
    """The model's core (``AutoModel``) with the head file's fine-tuned core weights, whose names and
    shapes must be the model's (the reference's GPT-2 heads' extra ``<PAD>`` embedding row is added)."""
    import transformers

    core = transformers.AutoModel.from_pretrained(lm.path)
    core_state = {k[len("core_model.") :]: v for k, v in state.items() if k.startswith("core_model.")}
    if not core_state:
        return core
    emb = core.get_input_embeddings().weight
    for k, v in core_state.items():
        if (
            v.ndim == 2
            and v.shape[1] == emb.shape[1]
            and v.shape[0] == emb.shape[0] + 1
            and k.endswith(("wte.weight", "word_embeddings.weight", "word_embedding.weight"))
        ):
            core.resize_token_embeddings(v.shape[0], mean_resizing=False)  # the reference's GPT-2 heads added <PAD>
            break
    own = core.state_dict()
    skip = ("position_ids", "masked_bias", ".attn.bias")
    missing = [m for m in own if m not in core_state and not m.endswith(skip)]
    unexpected = [k for k in core_state if k not in own]
    if unexpected or missing:
        raise InputError(
            f"the head's core weights do not fit '{lm.name}' ({len(missing)} missing, "
            f"{len(unexpected)} unexpected, e.g. {(missing + unexpected)[0]}).",
            path=path,
            fix="pass the model the head was trained on (the file name says which).",
        )
    wrong = next((k for k, v in core_state.items() if tuple(v.shape) != tuple(own[k].shape)), None)
    if wrong is not None:
        raise InputError(
            f"the head's core weight '{wrong}' has shape {tuple(core_state[wrong].shape)}; "
            f"'{lm.name}' has {tuple(own[wrong].shape)}.",
            path=path,
            fix="pass the model the head was trained on (the file name says which).",
        )
    core.load_state_dict(core_state, strict=False)
    return core
