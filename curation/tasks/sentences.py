"""``sentences``: natural sentences from one (identity, attribute) tuple (IndiBias step 3).

Two modes: ``stereo`` (template ``sentences``: each sentence expresses the tuple's stereotype) and
``anti`` (template ``sentences_anti``: each sentence goes against it, IndiBias's and CrowS-Pairs'
antistereotypical items). Every row records its ``mode``; ``curate pairs`` reads it to put the
sentence on the right side of the pair and to set the direction.

Numbering is stripped; repeats and fragments under 3 words are dropped; a sentence that does not
mention the identity (an inventory form, or the term itself as whole words) is kept with status
``rejected`` and the reason, so the curator sees what the model did.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from biaskit import ids
from biaskit.errors import InputError
from biaskit.inventory import Inventory, load_inventory

from ..prompts import get_prompt
from . import TASKS
from .base import Task, copies_prompt

#: generation mode -> the default template (the sentences demonstrate / violate the stereotype)
MODES = {"stereo": "sentences", "anti": "sentences_anti"}


@TASKS.register("sentences")
class SentenceTask(Task):
    """``per_tuple`` sentences for each tuple (an item is ``{"tuple": BiasTuple as a dict}``);
    ``mode`` ``stereo`` or ``anti`` (see the module docstring)."""

    name = "sentences"
    prompt_id = "sentences"
    default_params = {"temperature": 0.7, "seed": 0, "max_tokens": 400}

    def __init__(
        self,
        prompt=None,
        *,
        prompts_dir: Any = None,
        per_tuple: int = 5,
        inventory: Inventory | None = None,
        mode: str = "stereo",
    ):
        if mode not in MODES:
            raise InputError(
                f"unknown sentence mode '{mode}'.",
                fix=f"use {' or '.join(MODES)} (anti: sentences that go against the stereotype).",
            )
        if prompt is None:
            prompt = get_prompt(MODES[mode], prompts_dir)
        super().__init__(prompt, prompts_dir=prompts_dir)
        self.per_tuple = per_tuple
        self.mode = mode
        self.inventory = inventory or load_inventory()

    def variables(self, item: dict) -> dict:
        t = item["tuple"]
        return {"identity": t["identity"], "attribute": t["attribute"], "axis": t["axis"], "k": self.per_tuple}

    def context(self, item: dict) -> dict:
        ctx = {"tuple_id": item["tuple"].get("tuple_id"), **self.variables(item)}
        return ctx if self.mode == "stereo" else {**ctx, "mode": self.mode}

    def expected(self, item: dict) -> int | None:
        return self.per_tuple

    def parse(self, item: dict, result) -> list[dict]:
        t = item["tuple"]
        lang = t.get("lang", "en")
        prov = {**result.provenance(), **self.provenance()}
        rows, seen = [], set()
        prompt = self.prompt_text(item)
        for s in result.data.get("sentences") or []:
            if not isinstance(s, str):
                continue
            s = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s+", "", unicodedata.normalize("NFC", s)).strip().strip('"“”')
            key = re.sub(r"[^\w\s]", "", s.casefold()).strip()
            if not s or key in seen or len(key.split()) < 3:
                continue  # empty, repeated, or not a sentence (fewer than 3 words)
            seen.add(key)
            ok = self.inventory.mentions(s, t["identity"], lang)
            why = None if ok else f"the sentence does not mention '{t['identity']}'"
            if copies_prompt(s, prompt, run=6):
                ok, why = False, "the sentence copies the prompt (its instructions or an example)"
            rows.append(
                {
                    "sentence_id": ids.sentence_id(t["tuple_id"], s, self.mode),
                    "sentence": s,
                    "tuple_id": t["tuple_id"],
                    "identity": t["identity"],
                    "attribute": t["attribute"],
                    "axis": t["axis"],
                    "polarity": t["polarity"],
                    "mode": self.mode,
                    "lang": lang,
                    "status": "raw" if ok else "rejected",
                    "meta": {} if ok else {"reason": why},
                    "provenance": dict(prov),
                }
            )
        return rows[: self.per_tuple * 2]
