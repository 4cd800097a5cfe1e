"""``pair_rewrite``: rewrite a sentence for the comparable group when the rule-based swap of
``curate pairs`` cannot find the identity span (``--llm-fallback``)."""

from __future__ import annotations

from . import TASKS
from .base import Task, TaskError


@TASKS.register("pair_rewrite")
class PairRewriteTask(Task):
    """Item: ``{"sentence", "source_group", "target_group", "sentence_id"}`` -> one row
    ``{"sentence_id", "sentence", "rewrite", "provenance"}``."""

    name = "pair_rewrite"
    prompt_id = "pair_rewrite"
    default_params = {"temperature": 0.0, "seed": 0, "max_tokens": 200}

    def variables(self, item: dict) -> dict:
        return {k: item[k] for k in ("sentence", "source_group", "target_group")}

    def parse(self, item: dict, result) -> list[dict]:
        new = str(result.data.get("sentence") or "").strip()
        if new == item["sentence"].strip():
            raise TaskError("the rewrite is the sentence unchanged")
        return [
            {
                "sentence_id": item.get("sentence_id"),
                "sentence": item["sentence"],
                "rewrite": new,
                "provenance": {**result.provenance(), **self.provenance()},
            }
        ]
