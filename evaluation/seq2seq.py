"""``seq2seq`` scorer: sentence log-probability under an encoder-decoder LM (mT5, mBART).

IndiBias (Sahoo et al., 2024, §6.1) scores mT5 like the decoder models mGPT and Bloom: "the score of a
sentence ... is calculated based on the normalized probability of the sentence ... by dividing the sum
of the conditional log probabilities of each token, conditioned upon all preceding tokens, by the
total number of tokens". The paper does not say what the encoder reads, so biaskit follows the
standard of lm-evaluation-harness for an encoder-decoder model and a sentence with no context
(``HFLM.loglikelihood`` with an empty context; CrowS-Pairs is such a task there): the sentence is the
**decoder target**, the encoder reads an **empty input**, and

    score(S) = (1/n) sum over t of log P(y_t | y_<t, encoder input)      (method "mean", default)
    score(S) = sum over t of log P(y_t | y_<t, encoder input)            (method "sum")

- **Encoder input**: the tokenizer's encoding of the empty string: ``</s>`` for T5/mT5 (exactly
  lm-evaluation-harness's EOS context), ``</s> <src_lang>`` for mBART (its source format).
- **Target**: ``tokenizer(text_target=S)`` with its special tokens (T5/mT5: ``S </s>``; mBART:
  ``S </s> <tgt_lang>``), every one of them scored, as lm-evaluation-harness scores its seq2seq
  continuations (``add_special_tokens=True``).
- **Decoder input**: the model's own shift of the target
  (``model.prepare_decoder_input_ids_from_labels``): T5 prepends ``decoder_start_token_id`` (the pad
  token); mBART moves the final language code to the front, as in its training.

U/M spans play no part (as for ``clm``): a pair's scores are its two sentence scores. Execution is
the scoring engine's (:class:`Seq2SeqEngine`: the same exact-length batching — here by encoder *and*
decoder length —, head gather, float32 log-softmax, progress and on-disk cache as every planner).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from biaskit.errors import BiaskitError
from biaskit.options import say

from .engine import CachingEngine, LocalEngine, Request
from .models import LoadedLM, fingerprint_dir, prepare_load
from .score_cache import open_cache
from .scorers import PairScorer, _Job

KIND = "seq2seq"


@dataclass(frozen=True)
class Seq2SeqRequest(Request):
    """``log P(targets[k] | encoder ids, decoder ids)`` read at decoder position ``positions[k]``
    (``ids``: the decoder input ids)."""

    enc_ids: tuple[int, ...] = field(kw_only=True)

    def cache_key(self) -> dict:
        return {
            "enc": list(self.enc_ids),
            "ids": list(self.ids),
            "pos": list(self.positions),
            "tgt": list(self.targets),
        }


class Seq2SeqEngine(LocalEngine):
    """:class:`LocalEngine` for an encoder-decoder model: a batch shares its encoder and its decoder
    length (no padding on either side), the head gather runs on the decoder's output head."""

    @property
    def cache_id(self) -> dict:
        return {**super().cache_id, "engine": "seq2seq"}

    def describe(self) -> dict:
        return {**super().describe(), "engine": "seq2seq"}

    @staticmethod
    def batch_key(r: Any) -> Any:
        return (len(r.enc_ids), len(r.ids))

    _enc: Any  # the encoder ids of the batch being run (a tensor), None between batches

    def _run(self, batch: list[Request]) -> list[list[float]]:
        import torch

        # Seq2SeqRequests: this engine runs the requests of Seq2SeqScorer._requests
        enc = [cast(Seq2SeqRequest, r).enc_ids for r in batch]
        self._enc = torch.tensor(enc, dtype=torch.long, device=self.lm.device)
        try:
            return super()._run(batch)
        finally:
            self._enc = None

    def _call(self, x):
        self.forward_passes += 1
        return self.lm.model(input_ids=self._enc[: x.shape[0]], decoder_input_ids=x).logits


def load_seq2seq(name_or_path: Any, device: str = "auto", dtype: Any = None) -> LoadedLM:
    """An encoder-decoder LM (``AutoModelForSeq2SeqLM``) and its tokenizer, as a :class:`LoadedLM`."""
    if isinstance(name_or_path, LoadedLM):
        return name_or_path
    transformers, path, dev, tdtype, config = prepare_load(name_or_path, device, dtype)
    if not getattr(config, "is_encoder_decoder", False):
        raise BiaskitError(
            f"{path}: '{getattr(config, 'model_type', '?')}' is not an encoder-decoder model. "
            f"Fix: use {say('scorer', 'mlm')} (masked LMs) or {say('scorer', 'clm')} (causal LMs)"
        )
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path))
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(str(path), dtype=tdtype)
    model.to(dev)
    model.eval()
    return LoadedLM(
        model=model,
        tokenizer=tokenizer,
        kind=KIND,
        name=str(name_or_path),
        fingerprint=fingerprint_dir(path, kind=KIND),
        device=dev,
        dtype=str(tdtype).replace("torch.", ""),
        path=str(path),
    )


class Seq2SeqScorer(PairScorer):
    """Encoder-decoder LM: the sentence as decoder target given an empty encoder input (mean or sum)."""

    name = "seq2seq"
    kind = KIND
    methods = ("mean", "sum")
    units = ("token",)

    @staticmethod
    def load_model(model: Any, *, device: str = "auto", dtype: Any = None) -> LoadedLM:
        return load_seq2seq(model, device=device, dtype=dtype)

    def __init__(self, lm, **kw):
        super().__init__(lm, **kw)
        tok = lm.tokenizer
        self.enc_ids = tuple(tok("", add_special_tokens=True)["input_ids"]) or (tok.eos_token_id,)

    def _make_engine(self, lm: LoadedLM, *, cache: Any = True, **kw: Any) -> Any:
        eng = Seq2SeqEngine(lm, **kw)
        return CachingEngine(eng, cache) if open_cache(cache) is not None else eng

    def _normalisation(self) -> str:
        what = "log P(target token | earlier target tokens, empty encoder input)"
        return f"sum of {what}" if self.method == "sum" else f"mean {what} per target token (IndiBias §6.1)"

    def _finish(self, total: float, n: int) -> float:
        if self.method == "mean":
            return total / n if n else 0.0
        return total

    def target(self, text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(decoder input ids, target ids) of a sentence, as the model shifts its labels."""
        import torch

        labels = list(self.lm.tokenizer(text_target=self._prep(text), add_special_tokens=True)["input_ids"])
        dec = self.lm.model.prepare_decoder_input_ids_from_labels(labels=torch.tensor([labels]))
        return tuple(int(x) for x in dec[0].tolist()), tuple(labels)

    def _plan_text(self, text: str) -> _Job:
        dec, tgt = self.target(text)
        return _Job(text=text, ids=dec, groups=(tgt,))  # the one group holds the target ids

    def _plan_pair(self, a: str, b: str) -> tuple[_Job, _Job]:
        return self._plan_text(a), self._plan_text(b)

    def _requests(self, job: _Job) -> list[Request]:
        tgt = job.groups[0]
        return [
            Seq2SeqRequest(
                enc_ids=self.enc_ids, ids=job.ids, positions=tuple(range(len(tgt))), targets=tgt, text=job.text
            )
        ]
