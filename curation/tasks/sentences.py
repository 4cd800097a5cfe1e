"""``sentences``: natural sentences expressing one (identity, attribute) tuple (IndiBias step 3).

Numbering is stripped; repeats and fragments under 3 words are dropped; a sentence that does not
mention the identity (an inventory form, or the literal term) is kept with status ``rejected`` and
the reason, so the curator sees what the model did.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any, Optional

from biaskit.inventory import Inventory, load_inventory
from biaskit import ids
from biaskit.textutil import norm_word, tokenize

from . import TASKS
from .base import Task


def mentions_identity(sentence: str, identity: str, lang: str, inv: Inventory) -> bool:
    term = inv.lookup(identity, lang) or inv.lookup(identity, "en")
    if term is not None:
        for m in inv.find(tokenize(sentence), lang):
            if m.term.id == term.id or term.id in m.term.components.values():
                return True
    return norm_word(identity) in norm_word(sentence)


@TASKS.register("sentences")
class SentenceTask(Task):
    """``per_tuple`` sentences for each tuple (an item is ``{"tuple": BiasTuple as a dict}``)."""

    name = "sentences"
    prompt_id = "sentences"
    default_params = {"temperature": 0.7, "seed": 0, "max_tokens": 400}

    def __init__(self, prompt=None, *, prompts_dir: Any = None, per_tuple: int = 5,
                 inventory: Optional[Inventory] = None):
        super().__init__(prompt, prompts_dir=prompts_dir)
        self.per_tuple = per_tuple
        self.inventory = inventory or load_inventory()

    def variables(self, item: dict) -> dict:
        t = item["tuple"]
        return {"identity": t["identity"], "attribute": t["attribute"], "axis": t["axis"], "k": self.per_tuple}

    def context(self, item: dict) -> dict:
        return {"tuple_id": item["tuple"].get("tuple_id"), **self.variables(item)}

    def expected(self, item: dict) -> Optional[int]:
        return self.per_tuple

    def parse(self, item: dict, result) -> list[dict]:
        t = item["tuple"]
        lang = t.get("lang", "en")
        prov = {**result.provenance(), **self.provenance()}
        rows, seen = [], set()
        for s in result.data.get("sentences") or []:
            if not isinstance(s, str):
                continue
            s = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s+", "", unicodedata.normalize("NFC", s)).strip().strip('"“”')
            key = re.sub(r"[^\w\s]", "", s.casefold()).strip()
            if not s or key in seen or len(key.split()) < 3:
                continue  # empty, repeated, or not a sentence (fewer than 3 words)
            seen.add(key)
            ok = mentions_identity(s, t["identity"], lang, self.inventory)
            rows.append({"sentence_id": ids.sentence_id(t["tuple_id"], s), "sentence": s, "tuple_id": t["tuple_id"],
                         "identity": t["identity"], "attribute": t["attribute"], "axis": t["axis"],
                         "polarity": t["polarity"], "lang": lang, "status": "raw" if ok else "rejected",
                         "meta": {} if ok else {"reason": f"the sentence does not mention '{t['identity']}'"},
                         "provenance": dict(prov)})
        return rows[: self.per_tuple * 2]
