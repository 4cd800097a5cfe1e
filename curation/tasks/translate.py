"""``translate_pair`` and ``translate_sentence``: the prompts of the ``llm`` translation engine
(``curate translate --engines llm:MODEL``). A pair goes out in one request so that the two
translations differ only where the originals do.

What a prompt shows of the target language is data (``data/languages/<code>/prompts.json``): its
``{examples}`` are the language's worked examples for the task, in the template's example format,
and its ``{advice}`` the language's advice (else the template's ``[defaults]``)."""

from __future__ import annotations

from typing import Any

from . import TASKS
from .base import Task


class TranslationTask(Task):
    """A translation prompt: the request names the target language (``target_language``: its English
    name), whose folder gives the worked examples and the advice the template shows."""

    def variables(self, item: dict[str, Any]) -> dict[str, Any]:
        from biaskit.languages import task_prompt

        wanted = self.prompt.placeholders()
        if not wanted & {"examples", "advice"}:
            return item
        data = task_prompt(item.get("target_language"), self.name)
        extra: dict[str, Any] = {}
        if "examples" in wanted:
            shown = [(e.source, e.translation) for e in data.examples] if data is not None else []
            # the language names only: an example's texts are its own (one it lacks is an error, never the request's)
            langs = {k: item[k] for k in ("source_language", "target_language") if k in item}
            extra["examples"] = self.prompt.render_examples(shown, **langs)
        if "advice" in wanted and data is not None and data.advice is not None:
            extra["advice"] = data.advice
        return {**item, **extra}


@TASKS.register("translate_pair")
class TranslatePairTask(TranslationTask):
    """Item: ``{"sent_more", "sent_less", "source_language", "target_language"}`` (language names)
    -> one row ``{"sent_more", "sent_less", "provenance"}``."""

    name = "translate_pair"
    prompt_id = "translate_pair"
    default_params = {"temperature": 0.0, "seed": 0, "max_tokens": 512}

    def parse(self, item: dict, result) -> list[dict]:
        return [
            {
                "sent_more": str(result.data["sent_more"]).strip(),
                "sent_less": str(result.data["sent_less"]).strip(),
                "provenance": {**result.provenance(), **self.provenance()},
            }
        ]


@TASKS.register("translate_sentence")
class TranslateSentenceTask(TranslationTask):
    """Item: ``{"text", "source_language", "target_language"}`` -> one row ``{"translation", "provenance"}``."""

    name = "translate_sentence"
    prompt_id = "translate_sentence"
    default_params = {"temperature": 0.0, "seed": 0, "max_tokens": 512}

    def parse(self, item: dict, result) -> list[dict]:
        return [
            {
                "translation": str(result.data["translation"]).strip(),
                "provenance": {**result.provenance(), **self.provenance()},
            }
        ]


@TASKS.register("translate_cat_intrasentence")
class TranslateCatIntrasentenceTask(TranslationTask):
    """Item: ``{"target", "context", "stereotype", "anti_stereotype", "unrelated", "source_language",
    "target_language"}`` (the context with ``BLANK``, the options as fills) -> one row with the same
    five text fields translated (``[BLANK]`` / ``____`` repaired to ``BLANK``, punctuation around the
    fills dropped; what was repaired in ``provenance.repairs``) and ``provenance``."""

    name = "translate_cat_intrasentence"
    prompt_id = "translate_cat_intrasentence"
    default_params = {"temperature": 0.0, "seed": 0, "max_tokens": 512}
    split = "intrasentence"

    def parse(self, item: dict, result) -> list[dict]:
        from ..cats import OPTION_KEYS, blank_marker, fill_word

        d = result.data
        repairs: list[str] = []
        row = {"target": str(d["target"]).strip(), "context": str(d["context"]).strip()}
        if self.split == "intrasentence":
            row["context"] = blank_marker(row["context"], repairs)
        for k in OPTION_KEYS:
            v = str(d[k]).strip()
            row[k] = fill_word(v, repairs, k) if self.split == "intrasentence" else v
        prov = {**result.provenance(), **self.provenance()}
        if repairs:
            prov["repairs"] = repairs
        return [{**row, "provenance": prov}]


@TASKS.register("translate_cat_intersentence")
class TranslateCatIntersentenceTask(TranslateCatIntrasentenceTask):
    """As ``translate_cat_intrasentence``, for an intersentence CAT (context and three sentences)."""

    name = "translate_cat_intersentence"
    prompt_id = "translate_cat_intersentence"
    split = "intersentence"
