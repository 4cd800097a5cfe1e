"""The task side of the task/runner split (as in distilabel): a task turns one input into chat
messages and one reply into output rows; the runner (:mod:`biaskit.curation.runner`) does the
rest (cache, resume, concurrency, error file, run log, progress).

A task is a class with a registry ``name``, a default prompt template (``prompt_id``, a TOML file
in ``prompts/``) and two methods to write::

    @TASKS.register("antonyms")
    class AntonymTask(Task):
        prompt_id = "antonyms"                       # prompts/antonyms.toml: {word} -> {"antonyms": [...]}

        def parse(self, item, result):               # result.data passed the template's JSON Schema
            return [{"word": item["word"], "antonym": a} for a in result.data["antonyms"]]

``variables(item)`` (the template's ``{name}`` values; default: the item itself), ``schema_for(item)``
(the reply's JSON Schema for this input; default: the template's), ``expected(item)``
(how many items the prompt asks for, to recognise a cut-off reply as partial), ``context(item)``
(what identifies an input: part of the job key, recorded in the error file) and ``finalize(rows)`` (a whole-file
pass at the end) are optional.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..llm.protocol import LLMResult
from ..prompts import Prompt, get_prompt


def copies_prompt(text: str, prompt_text: str, min_words: int = 4, run: int | None = None) -> bool:
    """``text`` (at least ``min_words`` words) occurs word for word in the rendered prompt; with
    ``run``, already when any ``run`` consecutive words of it do (a copied clause with words added).
    Words are those of every script, with their combining marks (:func:`biaskit.textutil.word_runs`)."""
    from biaskit.textutil import word_runs

    words = word_runs(str(text).casefold())
    hay = " " + " ".join(word_runs(prompt_text)) + " "
    if len(words) < min_words:
        return False
    if f" {' '.join(words)} " in hay:
        return True
    return run is not None and any(f" {' '.join(words[i : i + run])} " in hay for i in range(len(words) - run + 1))


def _occurrences(text: str, prompt_text: str) -> int:
    """How often ``text``'s words occur, in a row, among the prompt's words."""
    from biaskit.textutil import word_runs

    words = word_runs(str(text).casefold())
    hay = " " + " ".join(word_runs(prompt_text)) + " "
    return hay.count(f" {' '.join(words)} ") if words else 0


def copied_fields(
    values: dict[str, Any], prompt_text: str, *, run: int | None = None, sources: dict[str, Any] | None = None
) -> list[str]:
    """The fields of one reply item (``values``: field -> text) that copy the rendered prompt
    (``prompt_text``, case-folded) instead of answering it: a text of 4 words or more found in the prompt
    word for word (with ``run``: any ``run`` consecutive words of it), and word-sized values that the
    prompt quotes (``"..."``, as its worked examples' JSON does) when two or more of the item's values
    are quoted there (one quoted word alone may be a fair answer). ``sources`` (a translation: field ->
    the text it translates, each rendered once into the prompt): a field whose source text a worked
    example translated too (it occurs in the prompt more often than in the item's own texts) may give
    the example's answer. The one check every LLM task with
    examples in its prompt makes (drafted CATs, their translations, pair translations; sentences and
    tuples through :func:`copies_prompt` and their quoted words)."""
    texts = {k: str(v) for k, v in values.items() if isinstance(v, str) and v.strip()}
    quoted = [k for k, v in texts.items() if f'"{v.strip().casefold()}"' in prompt_text]
    many = len(quoted) >= 2
    copied = [k for k, v in texts.items() if copies_prompt(v, prompt_text, run=run) or (many and k in quoted)]
    if sources:  # a source text found in the prompt more often than the item's own texts hold it
        own = [str(v) for v in sources.values() if v]
        copied = [
            k
            for k in copied
            if not (
                sources.get(k)
                and _occurrences(sources[k], prompt_text) > sum(_occurrences(sources[k], t.casefold()) for t in own)
            )
        ]
    return copied


class TaskError(Exception):
    """The reply passed the schema but holds nothing usable for this input (the reason is recorded)."""


@dataclass
class TaskOutput:
    """What one job gave: rows, and ``status`` ``ok``, ``partial`` (a cut-off reply: the recovered
    rows are kept in the error file, the job is retried with ``--retry-failed``) or an error kind
    (``parse_error``, ``schema_error``, ``request_error``, ``unusable``)."""

    rows: list[dict] = field(default_factory=list)
    status: str = "ok"
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Task:
    """Base class of every LLM task (see the module docstring)."""

    name: ClassVar[str] = ""
    prompt_id: ClassVar[str] = ""
    #: decoding parameters the command uses unless the user sets them (e.g. temperature 0 to translate)
    default_params: ClassVar[dict[str, Any]] = {}

    def __init__(self, prompt: Prompt | None = None, *, prompts_dir: Any = None):
        self.prompt = prompt if prompt is not None else get_prompt(self.prompt_id, prompts_dir)

    # ---- rendering
    @property
    def schema(self) -> dict | None:
        return self.prompt.schema

    def schema_for(self, item: dict[str, Any]) -> dict | None:
        """The JSON Schema of the reply to ``item`` (default: the template's; a task whose answers depend
        on the input, such as ``prelabel``'s options, narrows it per item)."""
        return self.schema

    def variables(self, item: dict[str, Any]) -> dict[str, Any]:
        return item

    def render(self, item: dict[str, Any]) -> list[dict[str, str]]:
        return self.prompt.render(**self.variables(item))

    def check_item(self, item: dict[str, Any]) -> None:
        """Refuse (:class:`~biaskit.errors.InputError`) an input item the task cannot use, before any
        request is made (``curate llm-task`` calls it for every item of its input file)."""

    def context(self, item: dict[str, Any]) -> dict[str, Any]:
        """What identifies this input: part of the job key (with the request) and recorded in the
        errors file. Leave out fields that may change without changing the job (annotation status)."""
        return item

    def provenance(self) -> dict[str, Any]:
        return {"task": self.name, **self.prompt.provenance()}

    def prompt_text(self, item: dict[str, Any]) -> str:
        """The rendered messages of ``item``, case-folded: small models copy a prompt's examples or
        instructions into their reply, and ``parse`` drops what is copied (:func:`copies_prompt`)."""
        return "\n".join(m["content"] for m in self.render(item)).casefold()

    def copied(
        self, item: dict[str, Any], values: dict[str, Any], *, run: int | None = None, sources: dict | None = None
    ) -> list[str]:
        """The fields of a reply item to ``item`` that copy its prompt (:func:`copied_fields`)."""
        return copied_fields(values, self.prompt_text(item), run=run, sources=sources)

    # ---- parsing
    def parse(self, item: dict[str, Any], result: LLMResult) -> list[dict]:
        raise NotImplementedError

    def expected(self, item: dict[str, Any]) -> int | None:
        """How many items the prompt asks for (None: not a list request)."""
        return None

    def received(self, result: LLMResult) -> int | None:
        """How many items the reply holds: the length of its one array property."""
        data = result.data
        if isinstance(data, dict):
            arrays = [v for v in data.values() if isinstance(v, list)]
            if len(arrays) == 1:
                return len(arrays[0])
        return None

    def outcome(self, item: dict[str, Any], result: LLMResult) -> TaskOutput:
        """The runner's entry point: the reply's status, then :meth:`parse`, then the partial check."""
        if not result.ok:
            return TaskOutput([], result.status, result.error)
        try:
            rows = self.parse(item, result)
        except TaskError as exc:
            return TaskOutput([], "unusable", f"unusable: {exc}")
        want, got = self.expected(item), self.received(result)
        if result.truncated and want is not None and got is not None and got < want:
            return TaskOutput(
                rows,
                "partial",
                f"partial: the reply was cut off after {got} of the {want} items "
                "asked for; raise --max-tokens (or re-run with --retry-failed)",
            )
        if not rows:
            return TaskOutput([], "unusable", "unusable: no usable rows in the reply")
        return TaskOutput(rows)

    def finalize(self, rows: list[dict]) -> list[dict]:
        """A pass over every row of the output file at the end of a run (default: none)."""
        return rows
