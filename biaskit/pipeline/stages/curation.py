"""The machine stages of curation: tuples, sentences, antistereo, pairs, adapt, check, translate,
cats, cat_translate.

Each calls the function behind its ``biaskit curate`` command (:mod:`biaskit.curation.generate`,
:mod:`biaskit.curation.pairs`, :mod:`biaskit.curation.adapt`, :mod:`biaskit.check`,
:mod:`biaskit.curation.translate`, :mod:`biaskit.curation.cat_translate`); the LLM stages resume
through the job runner (an interrupted run re-reads the rows it wrote; the response cache answers
every request already made).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union

from pydantic import create_model, field_validator

from biaskit.curation.cli_options import LLM_SUPPLIED
from biaskit.curation.options import (
    CatsOptions,
    CatTranslateOptions,
    MTOptions,
    SentencesOptions,
    TranslateOptions,
    TuplesOptions,
)
from biaskit.curation.pair_options import AdaptOptions, BuildPairsOptions, CheckOptions
from biaskit.errors import InputError
from biaskit.languages import default_target
from biaskit.options import Key, Keys, in_force, option, say, speaking, tell

from ..tables import LLMOverride, LLMStageTable, StageTable, registry_name
from .base import Command, Outcome, StageFailed, StageRunner, count_rows, stage_table

if TYPE_CHECKING:
    from biaskit.schema import SentencePair

    from ..project import Project

MT = TypeVar("MT", bound=MTOptions)

#: what every curation stage fills itself in the options of the command it runs
PROJECT_SUPPLIED = {
    "inventory": "[project] inventory",
    "prompts_dir": "[project] prompts_dir",
    "dry_run": "a flag of the command only",
    "show": "a flag of the command only",
}
LLM_TABLE: tuple[Any, Any] = (
    Optional[LLMOverride],  # noqa: UP045 (a runtime value pydantic reads)
    option(None, help="this stage's own [llm] keys (any of them)"),
)


# ------------------------------------------------------------------------------------------ their tables
MT_ENGINES_KEY = (
    list[str],
    option(
        factory=lambda: ["llm"],
        min_length=1,
        help="the MT engines (`llm`: the [llm] model; googletrans, hf:PATH, llm:MODEL)",
    ),
)


class MTKeys(StageTable):
    """What the translation stages' tables share besides their command's options: ``engines`` (checked
    against the registry; a bare ``llm`` is the ``[llm]`` model) and the stage's own ``llm`` table."""

    llm: LLMOverride | None = LLM_TABLE[1]
    engines: list[str] = MT_ENGINES_KEY[1]

    @field_validator("engines")
    @classmethod
    def _engines(cls, v: list[str]) -> list[str]:
        from biaskit.curation.mt_base import MT_ENGINES

        for spec in v:
            registry_name(spec.split(":", 1)[0].strip().lower(), MT_ENGINES.names(), "MT engine")
        return v


#: what the translation stages fill themselves in their command's options
MT_SUPPLIED = {
    **LLM_SUPPLIED,
    "prompts_dir": "[project] prompts_dir",
    "out": "the stage's output (work/STAGE/...)",
    "engines": "`engines`, a bare `llm` naming the [llm] model (llm:MODEL)",
}
#: the stage's defaults where its command has none (docs/pipeline.md)
MT_DEFAULTS = {"target": default_target()}  # data/languages/languages.json


def _uses_llm_engine(table: Any, named: bool = True) -> bool:
    """Whether an MT stage's engines include the ``llm`` engine (``named=False``: one without its own
    ``llm:MODEL``, which takes ``[llm]``'s model)."""
    return any(e.split(":", 1)[0].strip().lower() == "llm" and (named or ":" not in e) for e in table.engines)


# ------------------------------------------------------------------------------------------ the stages


def _has_terms(inventory: Any, axis: str, lang: str) -> bool:
    try:
        return bool(inventory.identities(axis, lang))
    except InputError:
        return False


def _failed_all(summaries: list) -> bool:
    return bool(summaries) and all(s.all_failed for s in summaries)


#: the tuples stage's own keys (before its command's in the table, as they always were)
TUPLES_OWN: dict[str, Any] = {
    "llm": LLM_TABLE,
    "prompt": (Optional[str], option(None, help="prompt template id (or id@version)")),  # noqa: UP045 (runtime value)
    "axes": (list[str], option(..., min_length=1, help="the bias axes (`curate tuples --axis`, once each)")),
    "identities": (
        dict[str, list[str]],
        option(factory=dict, help="identity terms per axis (default: the inventory's)"),
    ),
}


class TuplesStage(StageRunner):
    name = "tuples"
    output = "tuples"
    commands = (
        Command(
            TuplesOptions,
            supplied={
                **LLM_SUPPLIED,
                **PROJECT_SUPPLIED,
                "axis": "each of `axes`, one at a time",
                "identities": "`identities.AXIS` (a table of lists: the identity terms of each axis)",
                "out": "the stage's output (work/tuples/tuples.jsonl)",
            },
        ),
    )
    table = stage_table(
        "TuplesTable",
        commands,
        defaults={"prompt": None},
        base=create_model("TuplesKeys", __base__=StageTable, **TUPLES_OWN),
        own={k: v for k, v in TUPLES_OWN.items() if k != "prompt"},
        doc="``[stages.tuples]``: ``biaskit curate tuples`` for each axis (``prompt``: default the task's own).",
    )

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return True

    title = "generate tuples"
    prompt_keys = {"prompt": "attributes"}

    @classmethod
    def check(cls, project: Project) -> list[InputError]:
        """Also: identities only for axes it asks for, and every axis without them has identity terms in
        the inventory, in the stage's language (as ``curate tuples`` looks them up)."""
        out = super().check(project)
        tu: Any = project.stage(cls.name)
        extra = sorted(set(tu.identities) - set(tu.axes))
        if extra:
            out.append(
                project.error(
                    "stages.tuples.identities",
                    f"identities are given for {', '.join(extra)}, which is not in axes ({', '.join(tu.axes)}).",
                    "add it to axes, or fix the name.",
                )
            )
        from biaskit.inventory import load_inventory

        try:
            inv = load_inventory(project.path(project.config.project.inventory))
        except InputError:
            return out  # a missing inventory folder is reported on its key
        from biaskit.schema import normalize_bias_type

        have = [x for x in inv.axes() if _has_terms(inv, x, tu.lang)]
        for a in tu.axes:
            if tu.identities.get(a) or _has_terms(inv, a, tu.lang):
                continue
            known = normalize_bias_type(a) in inv.axes()  # the axis is there, not in this language
            out.append(
                project.error(
                    "stages.tuples.axes",
                    f"axis '{a}' has no identity terms" + (f" in '{tu.lang}'" if known else "") + " in the inventory.",
                    (f"use one of {', '.join(have)}, or" if have else f"the inventory has no terms in '{tu.lang}':")
                    + f' give its groups: identities = {{ {a} = ["..."] }}.',
                )
            )
        return out

    def extra(self) -> dict[str, Any]:
        return {**self.llm_extra("attributes"), **self.inventory_extra()}

    def run(self) -> Outcome:
        from biaskit.curation.generate import generate_tuples

        out = self.path_out("tuples.jsonl")
        with speaking(self.speaker(TuplesOptions)):
            lo = self.llm_options()
            client, prompt, inv = lo.client(), self.prompt("attributes"), self.inventory()
            summaries = []
            for axis in self.opts.axes:
                o = self.command_options(
                    TuplesOptions, **self.llm_values(), axis=axis, out=out, identities=self.opts.identities.get(axis)
                )
                summaries.append(
                    generate_tuples(
                        client,
                        prompt,
                        o,
                        inventory=inv,
                        progress=self.ctx.options.progress,
                        command=self.ctx.options.command,
                    )
                )
        return _llm_outcome(self, summaries, client, out, "tuples")


SENTENCES_SUPPLIED = {
    **LLM_SUPPLIED,
    **PROJECT_SUPPLIED,
    "tuples": "the tuples (or the file of `input`)",
    "out": "the stage's output (work/STAGE/...)",
    "mode": "the stage's: stereo (sentences), anti (antistereo)",
}


class SentencesStage(StageRunner):
    name = "sentences"
    inputs, output = ("tuples",), "sentences"
    commands = (Command(SentencesOptions, input="tuples", supplied=SENTENCES_SUPPLIED),)
    table = stage_table(
        "SentencesTable",
        commands,
        base=LLMStageTable,
        defaults={"prompt": None},
        own={"llm": LLM_TABLE},
        doc="``[stages.sentences]``: ``biaskit curate sentences`` (``prompt``: default the mode's).",
    )

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return True

    title = "generate sentences"
    #: ``curate sentences --mode``, and the template of that mode
    mode, template, what = "stereo", "sentences", "sentences"
    prompt_keys = {"prompt": "sentences"}

    def extra(self) -> dict[str, Any]:
        return {**self.llm_extra(self.template), **self.inventory_extra()}

    def run(self) -> Outcome:
        return self.generate(self.path_out("sentences.jsonl"))

    def generate(self, out: Path) -> Outcome:
        from biaskit.curation.generate import generate_sentences

        with speaking(self.speaker(SentencesOptions)):
            o = self.command_options(
                SentencesOptions, **self.llm_values(), tuples=self.input_path(), out=out, mode=self.mode
            )
            client = o.client()
            s = generate_sentences(
                client,
                self.prompt(self.template),
                o,
                inventory=self.inventory(),
                progress=self.ctx.options.progress,
                command=self.ctx.options.command,
            )
        return _llm_outcome(self, [s], client, out, self.what)


class AntistereoStage(SentencesStage):
    """Sentences that go against each accepted tuple (``curate sentences --mode anti``, template
    ``sentences_anti``); ``curate pairs`` makes them antistereo rows. Its output is the sentences of
    the stage before it (``sentences``, when there is one) followed by these, so that one sentences
    file goes on to review and pairs."""

    name = "antistereo"
    table = stage_table(
        "AntistereoTable",
        SentencesStage.commands,
        base=LLMStageTable,
        defaults={"prompt": None},
        own={"llm": LLM_TABLE},
        doc="``[stages.antistereo]``: ``biaskit curate sentences --mode anti`` (sentences that go "
        "against each accepted tuple; ``curate pairs`` makes them antistereo rows).",
    )
    title = "generate anti-stereotype sentences"
    mode, template, what = "anti", "sentences_anti", "anti-stereotype sentences"
    prompt_keys = {"prompt": "sentences_anti"}

    def before(self) -> Path | None:
        """The stereotype sentences made before this stage (merged into its output), if any."""
        return self.ctx.artifacts.get("sentences")

    def input_files(self) -> list[Path]:
        before = self.before()
        return super().input_files() + ([before] if before is not None else [])

    def run(self) -> Outcome:
        from biaskit.io import atomic_open

        anti = self.path_out("sentences_anti.jsonl")
        out = self.generate(anti)
        merged = self.path_out("sentences.jsonl")
        with atomic_open(merged) as fh:
            before = self.before()
            for part in ([before] if before is not None else []) + [anti]:
                with open(part, encoding="utf-8") as src:
                    for line in src:
                        if line.strip():
                            fh.write(line if line.endswith("\n") else line + "\n")
        out.produces = merged
        out.outputs = {"sentences": merged, **out.outputs}
        return out


def _llm_outcome(stage: StageRunner, summaries: list, client, out: Path, what: str) -> Outcome:
    notes = [n for s in summaries for n in s.notes]
    errors = sum(s.errors for s in summaries)
    err_file = next((s.errors_file for s in summaries if s.errors_file), None)
    stats = client.stats.snapshot()
    if _failed_all(summaries):
        raise StageFailed(
            f"every one of the {sum(s.run for s in summaries)} LLM job(s) of the {stage.name} stage "
            f"failed; see {err_file} for the raw replies. Fix: check [llm] (model, base_url, "
            "max_tokens), then `biaskit run --retry-failed`."
        )
    rows = count_rows(out)
    jobs = sum(s.jobs for s in summaries)
    done = sum(s.skipped_done for s in summaries)
    msg = (
        f"{rows} {what} from {jobs} LLM job(s) ({done} resumed, {errors} failed"
        + (f" -> {stage.rel(Path(err_file))}" if err_file else "")
        + f"); LLM {stats.get('requests', 0)} "
        f"request(s), {stats.get('cache_hits', 0)} cache hit(s)"
    )
    outputs = {what: out}
    if err_file:
        outputs["errors"] = Path(err_file)
    return Outcome(
        "done",
        produces=out,
        outputs=outputs,
        message=msg,
        warnings=notes,
        errors=errors,
        summary={"rows": rows, "jobs": jobs, "resumed": done, "failed": errors, "llm": stats},
    )


class PairsStage(StageRunner):
    name = "pairs"
    commands = (
        Command(
            BuildPairsOptions,
            input="sentences",
            supplied={
                **LLM_SUPPLIED,
                "prompts_dir": PROJECT_SUPPLIED["prompts_dir"],
                "sentences": "the stage's input: the sentences of the stages before it",
                "out": "the stage writes pairs.jsonl in its folder",
                "inventory": "the project's inventory ([project] inventory)",
            },
        ),
    )
    table = stage_table(
        "PairsTable",
        commands,
        base=LLMStageTable,
        defaults={"prompt": None},
        own={"llm": LLM_TABLE},
        doc="``[stages.pairs]``: ``biaskit curate pairs`` (``prompt``: the LLM fallback's template, "
        "default pair_rewrite).",
    )
    inputs, output = ("sentences",), "pairs"

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return bool(table.llm_fallback)

    title = "build pairs"
    prompt_keys = {"prompt": "pair_rewrite"}

    @classmethod
    def prompts_used(cls, table: Any) -> dict[str, str]:
        return super().prompts_used(table) if table.llm_fallback else {}

    def extra(self) -> dict[str, Any]:
        return {**(self.llm_extra("pair_rewrite") if self.opts.llm_fallback else {}), **self.inventory_extra()}

    def run(self) -> Outcome:
        from biaskit.curation.pairs import build_pairs_file

        opts = self.command_options(
            BuildPairsOptions,
            **self.llm_values(),
            sentences=self.input_path(),
            out=self.path_out("pairs.jsonl"),
            inventory=self.project.path(self.project.config.project.inventory),
        )
        client = prompt = None
        with speaking(self.speaker(BuildPairsOptions)):
            if opts.llm_fallback:
                client, prompt = opts.client(), self.prompt("pair_rewrite")
            res = build_pairs_file(
                opts,
                inventory=self.inventory(),
                llm=client,
                prompt=prompt,
                llm_params=opts.params(),
                concurrency=opts.concurrency,
                retry_failed=opts.retry_failed,
                progress=self.ctx.options.progress,
                command=self.ctx.options.command,
            )
            if not res.pairs:
                where = self.rel(res.rejects_file) if res.rejects_file else self.rel(self.required_input())
                if in_force("llm_fallback", True):  # a hint never suggests what is set
                    fix = (
                        "check the sentences (do they name the identity?) and the reasons there; the LLM "
                        f"rewrite was asked for every sentence the swap could not pair ({say('model')} may be "
                        "too small to rewrite them)"
                    )
                else:
                    fix = f"check the sentences (do they name the identity?), or {tell('llm_fallback', True)}"
                raise StageFailed(f"no sentence could be made into a pair (see {where}). Fix: {fix}.")
        outputs = {"pairs": res.out}
        if res.rejects_file:
            outputs["rejects"] = res.rejects_file
        return Outcome(
            "done",
            produces=res.out,
            outputs=outputs,
            message=f"{len(res.pairs)} pairs ({res.flagged} flagged by the checker), "
            f"{len(res.rejects)} sentence(s) not usable",
            summary={"pairs": len(res.pairs), "flagged": res.flagged, "rejects": len(res.rejects)},
        )


class AdaptStage(StageRunner):
    name = "adapt"
    commands = (
        Command(
            AdaptOptions,
            input="crows",
            supplied={
                "crows": "the stage's input: the CrowS-Pairs CSV",
                "out": "the stage writes pairs.jsonl (and pairs.report.json) in its folder",
                "inventory": "the project's inventory ([project] inventory)",
            },
        ),
    )
    table = stage_table(
        "AdaptTable", commands, doc="``[stages.adapt]``: ``biaskit curate adapt`` (``input`` = the CrowS-Pairs CSV)."
    )
    output = "pairs"
    title = "adapt CrowS-Pairs"

    def input_files(self) -> list[Path]:
        lex = self.project.path(self.opts.lexicon)
        return super().input_files() + ([lex] if lex else [])

    def extra(self) -> dict[str, Any]:
        return self.inventory_extra()

    def run(self) -> Outcome:
        from biaskit.curation.adapt import adapt_to_file

        out = self.path_out("pairs.jsonl")
        opts = self.command_options(
            AdaptOptions,
            crows=self.input_path(),
            out=out,
            inventory=self.project.path(self.project.config.project.inventory),
        )
        with speaking(self.speaker(AdaptOptions)):
            pairs, report, rep_path = adapt_to_file(opts, inventory=self.inventory())
        r = report.as_dict()
        if not pairs:
            raise StageFailed("adapt kept no pair. Fix: check keep = [...] in [stages.adapt].")
        return Outcome(
            "done",
            produces=out,
            outputs={"pairs": out, "report": rep_path},
            message=f"kept {r['kept']} of {r['read']} CrowS-Pairs pairs ({r['changed']} changed, "
            f"{r['flagged']} flagged, {r['dropped']} dropped)",
            summary=r,
        )


class CheckStage(StageRunner):
    name = "check"
    commands = (
        Command(
            CheckOptions,
            input="pairs",
            supplied={
                "pairs": "the stage's input: the pairs of the stage before it",
                "out": "the stage writes check.jsonl (the checker output the release card reads) in its folder",
                "format": "the stage reads the pairs the stage before it wrote (format detected)",
                "lang": "the stage checks every language view of the pairs",
                "sources": "the stage checks the pairs as they are (translations are checked by the translate stage)",
                "inventory": "the project's inventory ([project] inventory)",
            },
        ),
    )
    table = stage_table(
        "CheckTable",
        commands,
        own={
            "drop_flagged": (
                bool,
                option(
                    False,
                    help="drop the pairs the checker flags (default: keep them, with "
                    "status flagged, for people to review)",
                ),
            )
        },
        doc="``[stages.check]``: the minimal-pair checker (``biaskit curate check``).",
    )
    inputs, output = ("pairs",), "pairs"
    title = "check minimal pairs"

    def extra(self) -> dict[str, Any]:
        return self.inventory_extra()

    def run(self) -> Outcome:
        """The checker on every pair: its output (``check.jsonl``, as ``curate check --out``, which the
        release card reads) and the pairs with ``meta.flags`` and status ``flagged`` for the next stages."""
        from biaskit.check import check_pairs, summarize
        from biaskit.io import write_jsonl
        from biaskit.readers import read_pairs, write_pairs

        pairs = read_pairs(self.required_input()).pairs
        checked = check_pairs(pairs, inventory=self.inventory())
        report = self.path_out("check.jsonl")
        write_jsonl(report, (c.as_dict() for c in checked))
        keep: list[SentencePair] = []
        dropped: list[SentencePair] = []
        for p, c in zip(pairs, checked, strict=False):
            p.meta["flags"] = [f.as_dict() for f in c.flags]
            if c.flags:
                p.status = "flagged"  # type: ignore[assignment]  # use_enum_values: the field holds the str
            elif p.status == "flagged":
                p.status = "raw"  # type: ignore[assignment]  # (as pydantic stores it; no validate_assignment)
            (dropped if c.flags and self.opts.drop_flagged else keep).append(p)
        if not keep:
            raise StageFailed(
                "every pair is flagged and drop_flagged = true leaves none. Fix: set drop_flagged "
                "= false in [stages.check] (people review flagged pairs) or fix the pairs."
            )
        out = write_pairs(self.path_out("pairs.jsonl"), keep)
        outputs = {"pairs": out, "checker output": report}
        if dropped:
            outputs["dropped"] = write_pairs(self.path_out("dropped.jsonl"), dropped)
        s = summarize(checked)
        flags = ", ".join(f"{k} {v}" for k, v in s["flags"].items() if v) or "none"
        views = f" ({s['views']} language views)" if s["views"] != s["pairs"] else ""
        return Outcome(
            "done",
            produces=out,
            outputs=outputs,
            summary=s,
            message=f"{s['pairs']} pairs{views} checked, {s['flagged']} flagged ({flags})"
            + (f", {len(dropped)} language views dropped" if dropped else ""),
        )


class TranslateStage(StageRunner):
    name = "translate"
    inputs, output = ("pairs",), "candidates"
    commands = (
        Command(
            TranslateOptions,
            input="pairs",
            supplied={
                **MT_SUPPLIED,
                "pairs": "the pairs (or the file of `input`)",
                "format": "the stage's pairs file is read as its format is detected",
                "limit": "the stage translates every pair",
            },
        ),
    )
    table = stage_table(
        "TranslateTable",
        commands,
        base=MTKeys,
        defaults=MT_DEFAULTS,
        own={"llm": LLM_TABLE, "engines": MT_ENGINES_KEY},
        doc="``[stages.translate]``: ``biaskit curate translate`` (``llm`` engine: the ``[llm]`` "
        'model; ``target``: default hi, ``engines``: default ["llm"]).',
    )

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return _uses_llm_engine(table)

    @classmethod
    def needs_llm_model(cls, table: Any) -> bool:
        return _uses_llm_engine(table, named=False)

    title = "translate"

    def engines(self) -> list[str]:
        s = self.project.llm(self.name)
        return [f"llm:{s.model or 'dummy'}" if e.strip().lower() == "llm" else e for e in self.opts.engines]

    def uses_llm(self) -> bool:
        return any(e.split(":", 1)[0].strip().lower() == "llm" for e in self.opts.engines)

    def extra(self) -> dict[str, Any]:
        return {
            "engines": self.engines(),
            **(self.llm_extra("translate_pair", "translate_sentence") if self.uses_llm() else {}),
            **self.language_prompts_extra(),
        }

    def language_prompts_extra(self) -> dict[str, Any]:
        """The target language's worked examples and advice (``data/languages/<code>/prompts.json``), which
        the ``llm`` engine's prompts show: an edit re-runs the stage, as it re-asks ``curate translate``."""
        if not self.uses_llm():
            return {}
        from biaskit import languages as L
        from biaskit.cache import request_hash

        lg = L.get(self.opts.target)
        return {"language_prompts": request_hash(lg.prompts.model_dump(exclude={"doc"})) if lg is not None else None}

    @classmethod
    def speaker_for(cls, project, options=None, run=None) -> Keys:
        sp = super().speaker_for(project, options, run)
        sp.keys["engines"] = Key(f"stages.{cls.name}", "engines", list_value=True)  # the stage's own key
        return sp

    def mt_options(self, options: type[MT], **supplied: Any) -> MT:
        """The options of the stage's command: the table's keys, ``[llm]``, the engines (``llm`` with
        ``[llm]``'s model) and the prompts folder of ``[project]``."""
        prompts = self.prompts_dir()
        return self.command_options(
            options,
            **self.llm_values(),
            engines=self.engines(),
            prompts_dir=str(prompts[0]) if prompts else None,
            **supplied,
        )

    def run(self) -> Outcome:
        from biaskit.curation.translate import translate_file

        out = self.path_out("candidates.jsonl")
        with speaking(self.speaker(TranslateOptions)):
            o = self.mt_options(TranslateOptions, pairs=self.input_path(), out=out)
            res = translate_file(o, progress=self.ctx.options.progress)
        s = res.summary()
        if s["pairs"] and s["engine_failed"] == s["pairs"]:
            raise StageFailed(
                f"every pair failed in an MT engine (see the engine's errors file beside {self.rel(out)}). "
                "Fix: check the engines and [llm], then `biaskit run` again (failed pairs are asked again)."
            )
        eng = ", ".join(f"{e}: {st['requested']} sent, {st['cache_hits']} from cache" for e, st in s["engines"].items())
        return Outcome(
            "done",
            produces=out,
            outputs={"candidates": out},
            summary=s,
            warnings=list(s["notes"]),
            errors=s["engine_failed"],
            message=f"{s['pairs']} pairs -> {s['candidates']} {o.target} candidates ({s['resumed']} "
            f"resumed, {s['engine_failed']} with a failed engine; {eng})",
        )


CATS_DOMAINS: tuple[Any, Any] = (
    Union[str, list[str]],  # noqa: UP007 (a runtime value pydantic reads)
    option("stereoset", help='a preset (stereoset, indibias) or axes: "religion", ["caste", "gender"]'),
)


class CatsStage(StageRunner):
    """StereoSet CATs drafted by the LLM per target term (``curate cats``; StereoSet sec. 4.1-4.2):
    ``cats.jsonl`` holds the structurally valid ones, the drafts and the retention report lie beside it."""

    name = "cats"
    output = "cats"
    commands = (
        Command(
            CatsOptions,
            supplied={
                **LLM_SUPPLIED,
                **PROJECT_SUPPLIED,
                "domains": "`domains` (a preset or axes: a comma-separated string or a list)",
                "out": "the stage's output (work/cats/cats.jsonl)",
            },
        ),
    )
    table = stage_table(
        "CatsTable",
        commands,
        defaults={"intra_prompt": None, "inter_prompt": None},
        base=create_model("CatsKeys", __base__=StageTable, domains=CATS_DOMAINS),
        own={"domains": CATS_DOMAINS, "llm": LLM_TABLE},
        doc="``[stages.cats]``: ``biaskit curate cats`` (StereoSet sec. 4.1-4.2: the LLM drafts CATs per target "
        "term, the structural checks keep the well-formed ones; ``intra_prompt``, ``inter_prompt``: default the "
        "tasks' own).",
    )

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return True

    title = "draft CATs"
    prompt_keys = {"intra_prompt": "cat_intrasentence", "inter_prompt": "cat_intersentence"}

    def prompts(self) -> dict[str, Any]:
        from biaskit.curation.prompts import get_prompt

        refs = self.prompts_used(self.opts)
        return {
            "intrasentence": get_prompt(refs["intra_prompt"], self.prompts_dir()),
            "intersentence": get_prompt(refs["inter_prompt"], self.prompts_dir()),
        }

    def extra(self) -> dict[str, Any]:
        x = self.llm_extra()
        x["prompts"] = {k: f"{p.ref}#{p.hash}" for k, p in self.prompts().items()}
        return {**x, **self.inventory_extra()}

    def run(self) -> Outcome:
        from biaskit.curation.cats import retention_path
        from biaskit.curation.generate import generate_cats

        out = self.path_out("cats.jsonl")
        with speaking(self.speaker(CatsOptions)):
            prompts = {k: getattr(self.opts, k) or CatsOptions.default(k) for k in ("intra_prompt", "inter_prompt")}
            o = self.command_options(CatsOptions, **self.llm_values(), **prompts, domains=self.opts.domains, out=out)
            client = o.client()
            summaries, report = generate_cats(
                client,
                o,
                prompts=self.prompts(),
                inventory=self.inventory(),
                progress=self.ctx.options.progress,
                command=self.ctx.options.command,
            )
        res = _llm_outcome(self, list(summaries.values()), client, out, "CATs")
        ov = report["overall"]
        if not ov["valid"]:
            probs = ", ".join(f"{k} {v}" for k, v in list(report["problems"].items())[:4]) or "none recorded"
            raise StageFailed(
                f"none of the {ov['drafted']} drafted CATs is structurally valid ({probs}; the drafts "
                f"are in {self.rel(out.parent)}). Fix: check [llm] (model, max_tokens) and the prompts "
                "(`biaskit curate cats --dry-run`), then `biaskit run`."
            )
        res.outputs["retention"] = retention_path(out)
        res.message = (
            f"{ov['valid']} of {ov['drafted']} drafted CATs structurally valid "
            f"({ov['valid_pct']}%); " + res.message.split("; ", 1)[-1]
        )
        res.summary["retention"] = ov
        return res


class CatTranslateStage(TranslateStage):
    """CATs machine-translated for a blind review (``curate cat-translate``): the context with its
    BLANK and the three options go through each engine together."""

    name = "cat_translate"
    inputs, output = ("cats",), "cat_candidates"
    title = "translate CATs"
    operational = ("enabled",)
    commands = (
        Command(
            CatTranslateOptions, input="cats", supplied={**MT_SUPPLIED, "cats": "the CATs (or the file of `input`)"}
        ),
    )
    table = stage_table(
        "CatTranslateTable",
        commands,
        base=MTKeys,
        defaults=MT_DEFAULTS,
        own={"llm": LLM_TABLE, "engines": MT_ENGINES_KEY},
        doc="``[stages.cat_translate]``: ``biaskit curate cat-translate`` (``llm`` engine: the "
        '``[llm]`` model; ``target``: default hi, ``engines``: default ["llm"]).',
    )

    def extra(self) -> dict[str, Any]:
        return {
            "engines": self.engines(),
            **(self.llm_extra("translate_cat_intrasentence", "translate_cat_intersentence") if self.uses_llm() else {}),
            **self.language_prompts_extra(),
        }

    def run(self) -> Outcome:
        from biaskit.curation.cat_translate import translate_cats_file

        out = self.path_out("cat_candidates.jsonl")
        with speaking(self.speaker(CatTranslateOptions)):
            o = self.mt_options(CatTranslateOptions, cats=self.input_path(), out=out)
            res = translate_cats_file(o, progress=self.ctx.options.progress)
        s = res.summary()
        if s["cats"] and s["engine_failed"] == s["cats"]:
            raise StageFailed(
                f"every CAT failed in an MT engine (see the engine's errors file beside {self.rel(out)}). "
                "Fix: check the engines and [llm], then `biaskit run` again (failed CATs are asked again)."
            )
        eng = ", ".join(f"{e}: {st['requested']} sent, {st['cache_hits']} from cache" for e, st in s["engines"].items())
        flags = ", ".join(f"{k} {v}" for k, v in s["flags"].items()) or "none"
        return Outcome(
            "done",
            produces=out,
            outputs={"candidates": out},
            summary=s,
            warnings=list(s["notes"]),
            errors=s["engine_failed"],
            message=f"{s['cats']} CATs -> {s['candidates']} {o.target} candidates ({s['resumed']} resumed, "
            f"{s['engine_failed']} with a failed engine; {eng}; flags: {flags})",
        )
