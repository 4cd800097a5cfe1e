"""``prelabel``: an LLM answers the questions of one annotation task, from the task kind's guidelines.

The task knows nothing about annotation kinds: each input item says everything the prompt needs
(``annotate prelabel`` builds them from a kind, :mod:`biaskit.annotation.prelabel`)::

    {"task": "<biaskit id>", "kind": "tuple", "guidelines": "<Markdown>", "item": "<the task as text>",
     "questions": [{"id": "stereotype", "question": "Is this a prevalent stereotype ...?",
                    "options": ["yes", "no"]}, ...]}

A reply gives one row per question answered with one of its options (matched without regard to
case, surrounding spaces or quotes): ``{"task", "control", "label", "provenance"}``. Answers that
are not an option are left out (counted in ``provenance.invalid``); a reply with no usable answer is
``unusable`` and goes to the errors file with its raw text, like any junk a small model returns.
"""

from __future__ import annotations

import hashlib

from . import TASKS
from .base import Task, TaskError


def _norm(x) -> str:
    return str(x).strip().strip("\"'`.").strip().casefold()


@TASKS.register("prelabel")
class PrelabelTask(Task):
    name = "prelabel"
    prompt_id = "prelabel"
    default_params = {"temperature": 0.0, "seed": 0, "max_tokens": 256}

    def variables(self, item: dict) -> dict:
        lines = []
        for q in item["questions"]:
            lines.append(
                f"- {q['id']}: {q.get('question') or q['id']} Options: " + " | ".join(str(o) for o in q["options"])
            )
        return {"guidelines": item.get("guidelines") or "(none)", "item": item["item"], "questions": "\n".join(lines)}

    def schema_for(self, item: dict) -> dict:
        """The template's schema narrowed to this item: one property per question id, its options as an
        enum (servers that take a schema, llama.cpp among them, can then only answer with an option)."""
        props = {str(q["id"]): {"type": "string", "enum": [str(o) for o in q["options"]]} for q in item["questions"]}
        return {
            "type": "object",
            "required": ["answers"],
            "properties": {"answers": {"type": "object", "properties": props, "required": list(props)}},
        }

    def check_item(self, item: dict) -> None:
        from biaskit.errors import InputError

        qs = item.get("questions")
        if (
            not isinstance(qs, list)
            or not qs
            or not all(isinstance(q, dict) and q.get("id") and q.get("options") for q in qs)
        ):
            raise InputError(
                "the item has no questions with options.",
                fix='give "questions": [{"id", "question", "options": [...]}] (annotate prelabel builds the items).',
            )

    def context(self, item: dict) -> dict:
        g = hashlib.sha256(str(item.get("guidelines") or "").encode("utf-8")).hexdigest()[:12]
        return {
            "task": item.get("task"),
            "kind": item.get("kind"),
            "item": item.get("item"),
            "questions": item.get("questions"),
            "guidelines_sha": g,
        }

    def parse(self, item: dict, result) -> list[dict]:
        answers = result.data.get("answers") if isinstance(result.data, dict) else None
        if not isinstance(answers, dict):
            raise TaskError("'answers' is not an object of question id -> option")
        by_id = {_norm(k): v for k, v in answers.items()}
        rows, invalid = [], 0
        for q in item["questions"]:
            got = by_id.get(_norm(q["id"]))
            if got is None:
                continue
            opts = {_norm(o): o for o in q["options"]}
            pick = opts.get(_norm(got[0] if isinstance(got, list) and got else got))
            if pick is None:
                invalid += 1
                continue
            rows.append({"task": item["task"], "control": q["id"], "label": pick})
        if not rows:
            raise TaskError(
                f"none of the {len(item['questions'])} question(s) got one of its options"
                + (f" ({invalid} answer(s) outside the options)" if invalid else "")
            )
        prov = {**result.provenance(), **self.provenance(), "invalid": invalid}
        for r in rows:
            r["provenance"] = dict(prov)
        return rows
