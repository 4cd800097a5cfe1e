"""The ``llm`` engine: an OpenAI-compatible chat endpoint with a few-shot translation prompt.

``llm:MODEL`` uses the curation LLM client (:mod:`biaskit.curation.llm`: any OpenAI-compatible
endpoint via ``--base-url`` / ``$OPENAI_BASE_URL``, structured JSON output with fallbacks,
repair, retries, its own response cache and usage/cost accounting) with the templates
``prompts/translate_pair.toml`` (both sentences of a pair in one request, asking for translations
that differ only where the English does) and ``prompts/translate_sentence.toml`` (single texts).

Decoding is ``temperature=0`` with a fixed ``seed`` so a re-run reproduces the cached answer.
Every candidate's provenance carries the model, endpoint, prompt id + version + hash and the
request hash of the LLM call.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence

from .mt_base import MTEngine, language_name


class LLMEngine(MTEngine):
    name = "llm"
    joint_pairs = True

    def __init__(self, model: str, *, base_url: Optional[str] = None, backend: str = "openai",
                 pair_prompt: str = "translate_pair", sentence_prompt: str = "translate_sentence",
                 prompts_dir: Optional[str] = None, temperature: float = 0.0, seed: int = 0,
                 max_tokens: int = 512, concurrency: int = 4, llm: Any = None, **llm_kw: Any):
        from .llm import get_llm
        from .prompts import get_prompt, load_prompts

        self.model = model
        self.llm = llm if llm is not None else get_llm(backend, model=model, base_url=base_url, **llm_kw)
        prompts = load_prompts(prompts_dir)
        self.pair_prompt = get_prompt(pair_prompt, prompts=prompts)
        self.sentence_prompt = get_prompt(sentence_prompt, prompts=prompts)
        self.temperature = float(temperature)
        self.seed = int(seed)
        self.max_tokens = int(max_tokens)
        self.concurrency = max(1, int(concurrency))
        self.failures: list[dict[str, Any]] = []

    def cache_params(self) -> dict[str, Any]:
        return {"endpoint": self.llm.endpoint, "pair_prompt": self.pair_prompt.ref + "#" + self.pair_prompt.hash,
                "sentence_prompt": self.sentence_prompt.ref + "#" + self.sentence_prompt.hash,
                "temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}

    def provenance(self) -> dict[str, Any]:
        return {"engine": self.name, "model": self.model, "endpoint": self.llm.endpoint,
                "temperature": self.temperature, "seed": self.seed}

    def _params(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}

    def _map(self, fn, items: Sequence[Any]) -> list[Any]:
        if self.concurrency == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(self.concurrency) as ex:
            return list(ex.map(fn, items))

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        def one(text: str) -> str:
            if not text.strip():
                return ""
            msgs = self.sentence_prompt.render(source_language=language_name(src),
                                               target_language=language_name(tgt), text=text)
            res = self.llm.complete_json(msgs, self.sentence_prompt.schema, **self._params())
            if not res.ok:
                self.failures.append({"text": text, "error": res.error, "raw": res.raw})
                return ""
            return str(res.data.get("translation", "")).strip()

        return self._map(one, list(texts))

    def translate_pair_batch(self, pairs: Sequence[tuple[str, str]], src: str,
                             tgt: str) -> list[Optional[dict[str, Any]]]:
        def one(pair: tuple[str, str]) -> Optional[dict[str, Any]]:
            more, less = pair
            msgs = self.pair_prompt.render(source_language=language_name(src), target_language=language_name(tgt),
                                           sent_more=more, sent_less=less)
            res = self.llm.complete_json(msgs, self.pair_prompt.schema, **self._params())
            if not res.ok:
                self.failures.append({"pair": list(pair), "error": res.error, "raw": res.raw})
                return None
            prov = {**res.provenance(), **self.pair_prompt.provenance()}
            prov.pop("cached", None)
            prov.pop("timestamp", None)
            return {"sent_more": str(res.data["sent_more"]).strip(), "sent_less": str(res.data["sent_less"]).strip(),
                    "provenance": prov}

        return self._map(one, list(pairs))
