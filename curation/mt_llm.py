"""The ``llm`` engine: an OpenAI-compatible chat endpoint with a few-shot translation prompt.

``llm:MODEL`` runs the ``translate_pair`` task (both sentences of a pair in one request, asking for
translations that differ only where the originals do) and the ``translate_sentence`` task (single
texts) through the curation job runner (:mod:`biaskit.curation.runner`), so it has the LLM
client's cache, retries and early stop, and writes an error file and a run log beside the
candidates file (``<out>.llm.errors.jsonl``, ``<out>.llm.runlog.jsonl``) once
:meth:`attach_output` has been called (``curate translate`` does). A pair whose reply is unusable
comes back as None; ``curate translate`` records an ``engine_failed`` candidate and the next run
asks again (``--retry-failed`` bypasses the cached reply).

Decoding is ``temperature=0`` with a fixed ``seed`` so a re-run reproduces the cached answer.
Every candidate's provenance carries the model, endpoint, prompt id + version + hash and the
request hash of the LLM call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .mt_base import MTEngine, language_name
from .tasks.base import Task


class LLMEngine(MTEngine):
    name = "llm"
    joint_pairs = True
    joint_cats = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        backend: str = "openai",
        pair_prompt: str = "translate_pair",
        sentence_prompt: str = "translate_sentence",
        prompts_dir: str | None = None,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 512,
        concurrency: int = 4,
        retry_failed: bool = False,
        llm: Any = None,
        client_options: dict[str, Any] | None = None,
        **llm_kw: Any,
    ):
        from .llm import get_llm
        from .prompts import get_prompt, load_prompts
        from .tasks.translate import TranslatePairTask, TranslateSentenceTask

        self.model = model
        if llm is None:
            llm = get_llm(backend, model=model, base_url=base_url, **{**(client_options or {}), **llm_kw})
        self.llm = llm
        from .tasks.translate import TranslateCatIntersentenceTask, TranslateCatIntrasentenceTask

        prompts = load_prompts(prompts_dir)
        self.pair_task = TranslatePairTask(get_prompt(pair_prompt, prompts=prompts))
        self.sentence_task = TranslateSentenceTask(get_prompt(sentence_prompt, prompts=prompts))
        self.cat_tasks = {
            t.split: t(get_prompt(t.prompt_id, prompts=prompts))
            for t in (TranslateCatIntrasentenceTask, TranslateCatIntersentenceTask)
        }
        self.params = {"temperature": float(temperature), "seed": int(seed), "max_tokens": int(max_tokens)}
        self.concurrency = max(1, int(concurrency))
        self.retry_failed = retry_failed
        self._logs: Path | None = None
        self._runners: dict[str, Any] = {}
        self.failures: list[dict[str, Any]] = []

    @property
    def pair_prompt(self):
        return self.pair_task.prompt

    @property
    def sentence_prompt(self):
        return self.sentence_task.prompt

    def cache_params(self) -> dict[str, Any]:
        return {
            "endpoint": self.llm.endpoint,
            "pair_prompt": self.pair_prompt.ref + "#" + self.pair_prompt.hash,
            "sentence_prompt": self.sentence_prompt.ref + "#" + self.sentence_prompt.hash,
            **self.params,
        }

    def target_cache_params(self, tgt: str) -> dict[str, Any]:
        """The target language's worked examples and advice (its ``prompts.json``), which its prompts show."""
        from biaskit.cache import request_hash
        from biaskit.languages import by_name

        lg = by_name(tgt)
        return {"language_prompts": request_hash(lg.prompts.model_dump(exclude={"doc"})) if lg is not None else None}

    def cat_cache_params(self) -> dict[str, Any]:
        return {f"cat_prompt_{s}": t.prompt.ref + "#" + t.prompt.hash for s, t in self.cat_tasks.items()}

    def provenance(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "model": self.model,
            "endpoint": self.llm.endpoint,
            "temperature": self.params["temperature"],
            "seed": self.params["seed"],
        }

    def prompt_copies(self, what: str, source: dict[str, Any], output: dict[str, Any], src: str, tgt: str) -> list[str]:
        """The fields of a translation that copy the prompt it was asked with (the task's own check,
        :meth:`~biaskit.curation.tasks.base.Task.copied`: a worked example's sentences or words, the
        instructions, the source left as it is)."""
        langs = {"source_language": language_name(src), "target_language": language_name(tgt)}
        task: Task
        if what == "pair":
            fields: tuple[str, ...] = ("sent_more", "sent_less")
            task = self.pair_task
        else:
            fields = ("target", "context", "stereotype", "anti_stereotype", "unrelated")
            task = self.cat_tasks[source["split"]]
        src_text = {f: source[f] for f in fields}
        return task.copied({**src_text, **langs}, {f: output.get(f) for f in fields}, sources=src_text)

    def attach_output(self, out: str | Path) -> None:
        """Write the error file and run log beside ``out`` (``<out>.llm.errors.jsonl``, ...)."""
        out = Path(out)
        self._logs = out.with_name(out.name.removesuffix(".jsonl") + ".llm.jsonl")

    def _runner(self, task):
        from .runner import JobRunner

        if task.name not in self._runners:
            logs = None
            if self._logs is not None:
                suffix = (
                    "-sentences"
                    if task is self.sentence_task
                    else "-" + task.name.removeprefix("translate_")
                    if task.name.startswith("translate_cat")
                    else ""
                )
                logs = self._logs.with_name(self._logs.name.removesuffix(".jsonl") + suffix + ".jsonl")
            self._runners[task.name] = JobRunner(
                self.llm,
                task,
                params=self.params,
                logs=logs,
                concurrency=self.concurrency,
                retry_failed=self.retry_failed,
                progress=False,
            ).__enter__()
        return self._runners[task.name]

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        langs = {"source_language": language_name(src), "target_language": language_name(tgt)}
        todo = [i for i, t in enumerate(texts) if t.strip()]
        outs = self._runner(self.sentence_task).run_batch([{"text": texts[i], **langs} for i in todo])
        got = [""] * len(texts)
        for i, oc in zip(todo, outs, strict=False):
            if oc.ok:
                got[i] = oc.output.rows[0]["translation"]
            else:
                self.failures.append({"text": texts[i], "error": oc.output.error})
        return got

    def translate_pair_batch(self, pairs: Sequence[tuple[str, str]], src: str, tgt: str) -> list[dict[str, Any] | None]:
        langs = {"source_language": language_name(src), "target_language": language_name(tgt)}
        outs = self._runner(self.pair_task).run_batch([{"sent_more": m, "sent_less": le, **langs} for m, le in pairs])
        got: list[dict[str, Any] | None] = []
        for pair, oc in zip(pairs, outs, strict=False):
            if not oc.ok:
                self.failures.append({"pair": list(pair), "error": oc.output.error})
                got.append(None)
                continue
            row = oc.output.rows[0]
            prov = {k: v for k, v in row["provenance"].items() if k not in ("cached", "timestamp", "job", "job_rows")}
            got.append({"sent_more": row["sent_more"], "sent_less": row["sent_less"], "provenance": prov})
        return got

    def translate_cat_batch(self, items: Sequence[dict], src: str, tgt: str) -> list[dict[str, Any] | None]:
        """Whole CATs, one request each (the ``translate_cat_*`` task of the CAT's split)."""
        langs = {"source_language": language_name(src), "target_language": language_name(tgt)}
        fields = ("target", "context", "stereotype", "anti_stereotype", "unrelated")
        got: list[dict[str, Any] | None] = [None] * len(items)
        for split, task in self.cat_tasks.items():
            idx = [i for i, it in enumerate(items) if it["split"] == split]
            if not idx:
                continue
            outs = self._runner(task).run_batch([{**{f: items[i][f] for f in fields}, **langs} for i in idx])
            for i, oc in zip(idx, outs, strict=False):
                if not oc.ok:
                    self.failures.append({"cat": items[i], "error": oc.output.error})
                    continue
                row = oc.output.rows[0]
                prov = {
                    k: v for k, v in row["provenance"].items() if k not in ("cached", "timestamp", "job", "job_rows")
                }
                got[i] = {**{f: row[f] for f in fields}, "provenance": prov}
        return got

    def close(self) -> None:
        for r in self._runners.values():
            r.close()
        self._runners.clear()
