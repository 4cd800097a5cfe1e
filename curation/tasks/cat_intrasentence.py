"""``cat_intrasentence``: StereoSet intrasentence CATs for one target term (Nadeem et al., 2021,
sec. 2.1 and 4.2): contexts with one ``BLANK`` and a stereotype / anti-stereotype / unrelated fill.

An item is ``{"target", "domain", "society", "n"}`` (+ ``"lang"`` when not English)
(:func:`biaskit.curation.cats.cat_items`); every item of the reply becomes a draft row
(:func:`biaskit.curation.cats.draft_rows`), judged later by the
structural checks of :func:`biaskit.curation.cats.check_draft`, so junk is kept and explained, never
lost and never a crash.
"""

from __future__ import annotations

from ..cats import draft_rows
from . import TASKS
from .base import Task, TaskError


@TASKS.register("cat_intrasentence")
class CatIntrasentenceTask(Task):
    name = "cat_intrasentence"
    prompt_id = "cat_intrasentence"
    split = "intrasentence"
    default_params = {"temperature": 0.7}

    def variables(self, item: dict) -> dict:
        from ..mt_base import language_name

        return {
            "target": item["target"],
            "domain": item["domain"],
            "society": item["society"],
            "n": item["n"],
            "language": language_name(item.get("lang") or "en"),
        }

    def expected(self, item: dict) -> int | None:
        return int(item["n"])

    def parse(self, item: dict, result) -> list[dict]:
        rows = draft_rows(
            item,
            result.data,
            self.split,
            {**result.provenance(), **self.provenance()},
            prompt_text=self.prompt_text(item),
        )
        if not rows:
            raise TaskError("the reply holds no items")
        return rows
