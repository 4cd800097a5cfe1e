"""``translate_pair`` and ``translate_sentence``: the prompts of the ``llm`` translation engine
(``curate translate --engines llm:MODEL``). A pair goes out in one request so that the two
translations differ only where the originals do."""
from __future__ import annotations

from . import TASKS
from .base import Task


@TASKS.register("translate_pair")
class TranslatePairTask(Task):
    """Item: ``{"sent_more", "sent_less", "source_language", "target_language"}`` (language names)
    -> one row ``{"sent_more", "sent_less", "provenance"}``."""

    name = "translate_pair"
    prompt_id = "translate_pair"
    default_params = {"temperature": 0.0, "seed": 0, "max_tokens": 512}

    def parse(self, item: dict, result) -> list[dict]:
        return [{"sent_more": str(result.data["sent_more"]).strip(), "sent_less": str(result.data["sent_less"]).strip(),
                 "provenance": {**result.provenance(), **self.provenance()}}]


@TASKS.register("translate_sentence")
class TranslateSentenceTask(Task):
    """Item: ``{"text", "source_language", "target_language"}`` -> one row ``{"translation", "provenance"}``."""

    name = "translate_sentence"
    prompt_id = "translate_sentence"
    default_params = {"temperature": 0.0, "seed": 0, "max_tokens": 512}

    def parse(self, item: dict, result) -> list[dict]:
        return [{"translation": str(result.data["translation"]).strip(),
                 "provenance": {**result.provenance(), **self.provenance()}}]
