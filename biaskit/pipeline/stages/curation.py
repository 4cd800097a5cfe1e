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
from typing import Any, Literal, Optional, Union

from pydantic import Field, field_validator

from biaskit.curation.pair_options import AdaptOptions, BuildPairsOptions, CheckOptions
from biaskit.options import option, speaking, tell

from ..tables import LLMOverride, LLMStageTable, StageTable, registry_name
from .base import Command, Outcome, StageFailed, StageRunner, count_rows, stage_table


# ------------------------------------------------------------------------------------------ their tables
class TuplesTable(LLMStageTable):
    """``[stages.tuples]``: ``biaskit curate tuples`` for each axis."""

    axes: list[str] = Field(..., min_length=1)
    identities: dict[str, list[str]] = Field(default_factory=dict)
    polarity: Literal["positive", "negative", "both"] = "both"
    n: int = Field(10, ge=1)
    lang: str = "en"


class SentencesTable(LLMStageTable):
    """``[stages.sentences]``: ``biaskit curate sentences``."""

    per_tuple: int = Field(5, ge=1)
    statuses: Optional[list[str]] = None


class AntistereoTable(LLMStageTable):
    """``[stages.antistereo]``: ``biaskit curate sentences --mode anti`` (sentences that go against
    each accepted tuple; ``curate pairs`` makes them antistereo rows). Its output is the sentences
    before it (``[stages.sentences]``) and these together."""

    per_tuple: int = Field(5, ge=1)
    statuses: Optional[list[str]] = None


class MTTable(StageTable):
    """What the translation stages share: target language, engines and the hf / llm engines' options."""

    target: str = "hi"
    source_lang: str = "en"
    engines: list[str] = Field(default_factory=lambda: ["llm"], min_length=1)
    device: Optional[str] = None
    batch_size: int = Field(16, ge=1)
    num_beams: int = Field(1, ge=1)
    llm: Optional[LLMOverride] = None

    @field_validator("engines")
    @classmethod
    def _engines(cls, v: list[str]) -> list[str]:
        from biaskit.curation.mt_base import MT_ENGINES

        for spec in v:
            registry_name(spec.split(":", 1)[0].strip().lower(), MT_ENGINES.names(), "MT engine")
        return v


class TranslateTable(MTTable):
    """``[stages.translate]``: ``biaskit curate translate`` (``llm`` engine: the ``[llm]`` model)."""

    align: bool = True
    batch_pairs: int = Field(16, ge=1)


class CatsTable(StageTable):
    """``[stages.cats]``: ``biaskit curate cats`` (StereoSet sec. 4.1-4.2: the LLM drafts CATs per
    target term, the structural checks keep the well-formed ones)."""

    domains: Union[str, list[str]] = "stereoset"
    split: Literal["intrasentence", "intersentence", "both"] = "both"
    per_target: int = Field(5, ge=1)
    society: str = "India"
    targets: Optional[list[str]] = None
    lang: str = "en"
    intra_prompt: Optional[str] = Field(None, description="template id (or id@version) for intrasentence drafts")
    inter_prompt: Optional[str] = Field(None, description="template id (or id@version) for intersentence drafts")
    llm: Optional[LLMOverride] = None


class CatTranslateTable(MTTable):
    """``[stages.cat_translate]``: ``biaskit curate cat-translate`` (``llm`` engine: the ``[llm]`` model)."""

    batch_cats: int = Field(16, ge=1)


def _uses_llm_engine(table: Any, named: bool = True) -> bool:
    """Whether an MT stage's engines include the ``llm`` engine (``named=False``: one without its own
    ``llm:MODEL``, which takes ``[llm]``'s model)."""
    return any(e.split(":", 1)[0].strip().lower() == "llm" and (named or ":" not in e) for e in table.engines)


# ------------------------------------------------------------------------------------------ the stages


def _failed_all(summaries: list) -> bool:
    return bool(summaries) and all(s.all_failed for s in summaries)


class TuplesStage(StageRunner):
    name = "tuples"
    table = TuplesTable
    output = "tuples"

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return True
    title = "generate tuples"

    def extra(self) -> dict[str, Any]:
        return {**self.llm_extra("attributes"), **self.inventory_extra()}

    def run(self) -> Outcome:
        from biaskit.curation.generate import generate_tuples

        o = self.opts
        out = self.path_out("tuples.jsonl")
        lo = self.llm_options()
        client, prompt, inv = lo.client(), self.prompt("attributes"), self.inventory()
        summaries = []
        for axis in o.axes:
            summaries.append(generate_tuples(client, prompt, axis=axis, out=out, identities=o.identities.get(axis),
                                             polarity=o.polarity, n=o.n, lang=o.lang, params=lo.params(),
                                             concurrency=lo.concurrency, retry_failed=lo.retry_failed, inventory=inv,
                                             progress=self.ctx.options.progress, command=self.ctx.options.command))
        return _llm_outcome(self, summaries, client, out, "tuples")


class SentencesStage(StageRunner):
    name = "sentences"
    table = SentencesTable
    inputs, output = ("tuples",), "sentences"

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return True
    title = "generate sentences"
    #: ``curate sentences --mode``, and the template of that mode
    mode, template, what = "stereo", "sentences", "sentences"

    def extra(self) -> dict[str, Any]:
        return {**self.llm_extra(self.template), **self.inventory_extra()}

    def run(self) -> Outcome:
        return self.generate(self.path_out("sentences.jsonl"))

    def generate(self, out: Path) -> Outcome:
        from biaskit.curation.generate import generate_sentences

        o = self.opts
        lo = self.llm_options()
        client = lo.client()
        s = generate_sentences(client, self.prompt(self.template), tuples=self.input_path(), out=out,
                               per_tuple=o.per_tuple, statuses=o.statuses, params=lo.params(),
                               concurrency=lo.concurrency, retry_failed=lo.retry_failed, inventory=self.inventory(),
                               progress=self.ctx.options.progress, command=self.ctx.options.command, mode=self.mode)
        return _llm_outcome(self, [s], client, out, self.what)


class AntistereoStage(SentencesStage):
    """Sentences that go against each accepted tuple (``curate sentences --mode anti``, template
    ``sentences_anti``); ``curate pairs`` makes them antistereo rows. Its output is the sentences of
    the stage before it (``sentences``, when there is one) followed by these, so that one sentences
    file goes on to review and pairs."""

    name = "antistereo"
    table = AntistereoTable
    title = "generate anti-stereotype sentences"
    mode, template, what = "anti", "sentences_anti", "anti-stereotype sentences"

    def before(self) -> Optional[Path]:
        """The stereotype sentences made before this stage (merged into its output), if any."""
        return self.ctx.artifacts.get("sentences")

    def input_files(self) -> list[Path]:
        return super().input_files() + ([self.before()] if self.before() is not None else [])

    def run(self) -> Outcome:
        from biaskit.io import atomic_open

        anti = self.path_out("sentences_anti.jsonl")
        out = self.generate(anti)
        merged = self.path_out("sentences.jsonl")
        with atomic_open(merged) as fh:
            for part in ([self.before()] if self.before() is not None else []) + [anti]:
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
        raise StageFailed(f"every one of the {sum(s.run for s in summaries)} LLM job(s) of the {stage.name} stage "
                          f"failed; see {err_file} for the raw replies. Fix: check [llm] (model, base_url, "
                          "max_tokens), then `biaskit run --retry-failed`.")
    rows = count_rows(out)
    jobs = sum(s.jobs for s in summaries)
    done = sum(s.skipped_done for s in summaries)
    msg = (f"{rows} {what} from {jobs} LLM job(s) ({done} resumed, {errors} failed"
           + (f" -> {stage.rel(Path(err_file))}" if err_file else "") + f"); LLM {stats.get('requests', 0)} "
           f"request(s), {stats.get('cache_hits', 0)} cache hit(s)")
    outputs = {what: out}
    if err_file:
        outputs["errors"] = Path(err_file)
    return Outcome("done", produces=out, outputs=outputs, message=msg, warnings=notes, errors=errors,
                   summary={"rows": rows, "jobs": jobs, "resumed": done, "failed": errors, "llm": stats})


class PairsStage(StageRunner):
    name = "pairs"
    commands = (Command(BuildPairsOptions, input="sentences", supplied={
        "sentences": "the stage's input: the sentences of the stages before it",
        "out": "the stage writes pairs.jsonl in its folder",
        "inventory": "the project's inventory ([project] inventory)"}),)
    table = stage_table("PairsTable", commands, base=LLMStageTable, own={
        "llm": (Optional[LLMOverride], LLMStageTable.model_fields["llm"]),
        "prompt": (Optional[str], LLMStageTable.model_fields["prompt"])},
        doc="``[stages.pairs]``: ``biaskit curate pairs`` (``llm`` and ``prompt``: the LLM fallback's, until "
            "the LLM block is an options model).")
    inputs, output = ("sentences",), "pairs"

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return bool(table.llm_fallback)
    title = "build pairs"

    def extra(self) -> dict[str, Any]:
        return {**(self.llm_extra("pair_rewrite") if self.opts.llm_fallback else {}), **self.inventory_extra()}

    def run(self) -> Outcome:
        from biaskit.curation.pairs import build_pairs_file

        lo = self.llm_options()
        opts = self.command_options(BuildPairsOptions, sentences=self.input_path(), out=self.path_out("pairs.jsonl"),
                                    inventory=self.project.path(self.project.config.project.inventory))
        client = prompt = None
        if opts.llm_fallback:
            client, prompt = lo.client(), self.prompt("pair_rewrite")
        with speaking(self.speaker(BuildPairsOptions)):
            res = build_pairs_file(opts, inventory=self.inventory(), llm=client, prompt=prompt,
                                   llm_params=lo.params(), concurrency=lo.concurrency, retry_failed=lo.retry_failed,
                                   progress=self.ctx.options.progress, command=self.ctx.options.command)
            if not res.pairs:
                where = self.rel(res.rejects_file) if res.rejects_file else self.rel(self.input_path())
                raise StageFailed(f"no sentence could be made into a pair (see {where}). "
                                  "Fix: check the sentences (do they name the identity?), or "
                                  f"{tell('llm_fallback', True)}.")
        outputs = {"pairs": res.out}
        if res.rejects_file:
            outputs["rejects"] = res.rejects_file
        return Outcome("done", produces=res.out, outputs=outputs,
                       message=f"{len(res.pairs)} pairs ({res.flagged} flagged by the checker), "
                               f"{len(res.rejects)} sentence(s) not usable",
                       summary={"pairs": len(res.pairs), "flagged": res.flagged, "rejects": len(res.rejects)})


class AdaptStage(StageRunner):
    name = "adapt"
    commands = (Command(AdaptOptions, input="crows", supplied={
        "crows": "the stage's input: the CrowS-Pairs CSV",
        "out": "the stage writes pairs.jsonl (and pairs.report.json) in its folder",
        "inventory": "the project's inventory ([project] inventory)"}),)
    table = stage_table("AdaptTable", commands, doc="``[stages.adapt]``: ``biaskit curate adapt`` (``input`` = the "
                                                    "CrowS-Pairs CSV).")
    output = "pairs"
    title = "adapt CrowS-Pairs"

    def input_files(self) -> list[Path]:
        lex = self.project.path(self.opts.lexicon)
        return [self.input_path()] + ([lex] if lex else [])

    def extra(self) -> dict[str, Any]:
        return self.inventory_extra()

    def run(self) -> Outcome:
        from biaskit.curation.adapt import adapt_to_file

        out = self.path_out("pairs.jsonl")
        opts = self.command_options(AdaptOptions, crows=self.input_path(), out=out,
                                    inventory=self.project.path(self.project.config.project.inventory))
        with speaking(self.speaker(AdaptOptions)):
            pairs, report, rep_path = adapt_to_file(opts, inventory=self.inventory())
        r = report.as_dict()
        if not pairs:
            raise StageFailed("adapt kept no pair. Fix: check keep = [...] in [stages.adapt].")
        return Outcome("done", produces=out, outputs={"pairs": out, "report": rep_path},
                       message=f"kept {r['kept']} of {r['read']} CrowS-Pairs pairs ({r['changed']} changed, "
                               f"{r['flagged']} flagged, {r['dropped']} dropped)", summary=r)


class CheckStage(StageRunner):
    name = "check"
    commands = (Command(CheckOptions, input="pairs", supplied={
        "pairs": "the stage's input: the pairs of the stage before it",
        "out": "the stage writes check.jsonl (the checker output the release card reads) in its folder",
        "format": "the stage reads the pairs the stage before it wrote (format detected)",
        "lang": "the stage checks every language view of the pairs",
        "sources": "the stage checks the pairs as they are (translations are checked by the translate stage)",
        "inventory": "the project's inventory ([project] inventory)"}),)
    table = stage_table("CheckTable", commands, own={
        "drop_flagged": (bool, option(False, help="drop the pairs the checker flags (default: keep them, with "
                                                  "status flagged, for people to review)"))},
        doc="``[stages.check]``: the minimal-pair checker (``biaskit curate check``).")
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

        pairs = read_pairs(self.input_path()).pairs
        checked = check_pairs(pairs, inventory=self.inventory())
        report = self.path_out("check.jsonl")
        write_jsonl(report, (c.as_dict() for c in checked))
        keep, dropped = [], []
        for p, c in zip(pairs, checked):
            p.meta["flags"] = [f.as_dict() for f in c.flags]
            if c.flags:
                p.status = "flagged"
            elif p.status == "flagged":
                p.status = "raw"
            (dropped if c.flags and self.opts.drop_flagged else keep).append(p)
        if not keep:
            raise StageFailed("every pair is flagged and drop_flagged = true leaves none. Fix: set drop_flagged "
                              "= false in [stages.check] (people review flagged pairs) or fix the pairs.")
        out = write_pairs(self.path_out("pairs.jsonl"), keep)
        outputs = {"pairs": out, "checker output": report}
        if dropped:
            outputs["dropped"] = write_pairs(self.path_out("dropped.jsonl"), dropped)
        s = summarize(checked)
        flags = ", ".join(f"{k} {v}" for k, v in s["flags"].items() if v) or "none"
        views = f" ({s['views']} language views)" if s["views"] != s["pairs"] else ""
        return Outcome("done", produces=out, outputs=outputs, summary=s,
                       message=f"{s['pairs']} pairs{views} checked, {s['flagged']} flagged ({flags})"
                               + (f", {len(dropped)} language views dropped" if dropped else ""))


class TranslateStage(StageRunner):
    name = "translate"
    table = TranslateTable
    inputs, output = ("pairs",), "candidates"

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return _uses_llm_engine(table)

    @classmethod
    def needs_llm_model(cls, table: Any) -> bool:
        return _uses_llm_engine(table, named=False)
    title = "translate"
    operational = ("enabled", "batch_pairs", "batch_size", "device")

    def engines(self) -> list[str]:
        s = self.project.llm(self.name)
        return [f"llm:{s.model or 'dummy'}" if e.strip().lower() == "llm" else e for e in self.opts.engines]

    def uses_llm(self) -> bool:
        return any(e.split(":", 1)[0].strip().lower() == "llm" for e in self.opts.engines)

    def extra(self) -> dict[str, Any]:
        return {"engines": self.engines(), **(self.llm_extra("translate_pair", "translate_sentence")
                                              if self.uses_llm() else {})}

    def engine_options(self) -> dict[str, Any]:
        """The one options bag the engines are built from (as the ``curate`` commands')."""
        o = self.opts
        lo = self.llm_options()
        prompts = self.prompts_dir()
        opts = {"base_url": lo.base_url, "device": o.device, "batch_size": o.batch_size, "num_beams": o.num_beams,
                "concurrency": lo.concurrency, "prompts_dir": str(prompts[0]) if prompts else None,
                "backend": lo.llm, "retry_failed": lo.retry_failed, **lo.params()}
        if self.uses_llm():
            opts["client_options"] = lo.client_kwargs()
        return opts

    def run(self) -> Outcome:
        from biaskit.curation.translate import translate_file

        o = self.opts
        out = self.path_out("candidates.jsonl")
        res = translate_file(self.input_path(), o.target, self.engines(), out, source_lang=o.source_lang,
                             engine_options=self.engine_options(), batch_pairs=o.batch_pairs, align=o.align,
                             resume=True, progress=self.ctx.options.progress)
        s = res.summary()
        if s["pairs"] and s["engine_failed"] == s["pairs"]:
            raise StageFailed(f"every pair failed in an MT engine (see the engine's errors file beside {self.rel(out)}). "
                              "Fix: check the engines and [llm], then `biaskit run` again (failed pairs are asked again).")
        eng = ", ".join(f"{e}: {st['requested']} sent, {st['cache_hits']} from cache" for e, st in s["engines"].items())
        return Outcome("done", produces=out, outputs={"candidates": out}, summary=s, warnings=list(s["notes"]),
                       errors=s["engine_failed"],
                       message=f"{s['pairs']} pairs -> {s['candidates']} {o.target} candidates ({s['resumed']} "
                               f"resumed, {s['engine_failed']} with a failed engine; {eng})")


class CatsStage(StageRunner):
    """StereoSet CATs drafted by the LLM per target term (``curate cats``; StereoSet sec. 4.1-4.2):
    ``cats.jsonl`` holds the structurally valid ones, the drafts and the retention report lie beside it."""

    name = "cats"
    table = CatsTable
    output = "cats"

    @classmethod
    def calls_llm(cls, table: Any) -> bool:
        return True
    title = "draft CATs"

    def prompts(self) -> dict[str, Any]:
        from biaskit.curation.prompts import get_prompt

        o = self.opts
        return {"intrasentence": get_prompt(o.intra_prompt or "cat_intrasentence", self.prompts_dir()),
                "intersentence": get_prompt(o.inter_prompt or "cat_intersentence", self.prompts_dir())}

    def extra(self) -> dict[str, Any]:
        x = self.llm_extra()
        x["prompts"] = {k: f"{p.ref}#{p.hash}" for k, p in self.prompts().items()}
        return {**x, **self.inventory_extra()}

    def run(self) -> Outcome:
        from biaskit.curation.cats import SPLITS, retention_path
        from biaskit.curation.generate import generate_cats

        o = self.opts
        out = self.path_out("cats.jsonl")
        lo = self.llm_options()
        client = lo.client()
        splits = list(SPLITS) if o.split == "both" else [o.split]
        summaries, report = generate_cats(client, out=out, domains=o.domains, splits=splits, per_target=o.per_target,
                                          society=o.society, targets=o.targets, prompts=self.prompts(),
                                          params=lo.params(), concurrency=lo.concurrency,
                                          retry_failed=lo.retry_failed, inventory=self.inventory(),
                                          progress=self.ctx.options.progress, command=self.ctx.options.command,
                                          lang=o.lang)
        res = _llm_outcome(self, list(summaries.values()), client, out, "CATs")
        ov = report["overall"]
        if not ov["valid"]:
            probs = ", ".join(f"{k} {v}" for k, v in list(report["problems"].items())[:4]) or "none recorded"
            raise StageFailed(f"none of the {ov['drafted']} drafted CATs is structurally valid ({probs}; the drafts "
                              f"are in {self.rel(out.parent)}). Fix: check [llm] (model, max_tokens) and the prompts "
                              "(`biaskit curate cats --dry-run`), then `biaskit run`.")
        res.outputs["retention"] = retention_path(out)
        res.message = (f"{ov['valid']} of {ov['drafted']} drafted CATs structurally valid "
                       f"({ov['valid_pct']}%); " + res.message.split("; ", 1)[-1])
        res.summary["retention"] = ov
        return res


class CatTranslateStage(TranslateStage):
    """CATs machine-translated for a blind review (``curate cat-translate``): the context with its
    BLANK and the three options go through each engine together."""

    name = "cat_translate"
    table = CatTranslateTable
    inputs, output = ("cats",), "cat_candidates"
    title = "translate CATs"
    operational = ("enabled", "batch_cats", "batch_size", "device")

    def extra(self) -> dict[str, Any]:
        return {"engines": self.engines(), **(self.llm_extra("translate_cat_intrasentence", "translate_cat_intersentence")
                                              if self.uses_llm() else {})}

    def run(self) -> Outcome:
        from biaskit.curation.cat_translate import translate_cats_file

        o = self.opts
        out = self.path_out("cat_candidates.jsonl")
        res = translate_cats_file(self.input_path(), o.target, self.engines(), out, source_lang=o.source_lang,
                                  engine_options=self.engine_options(), batch_cats=o.batch_cats, resume=True,
                                  progress=self.ctx.options.progress)
        s = res.summary()
        if s["cats"] and s["engine_failed"] == s["cats"]:
            raise StageFailed(f"every CAT failed in an MT engine (see the engine's errors file beside {self.rel(out)}). "
                              "Fix: check the engines and [llm], then `biaskit run` again (failed CATs are asked again).")
        eng = ", ".join(f"{e}: {st['requested']} sent, {st['cache_hits']} from cache" for e, st in s["engines"].items())
        flags = ", ".join(f"{k} {v}" for k, v in s["flags"].items()) or "none"
        return Outcome("done", produces=out, outputs={"candidates": out}, summary=s, warnings=list(s["notes"]),
                       errors=s["engine_failed"],
                       message=f"{s['cats']} CATs -> {s['candidates']} {o.target} candidates ({s['resumed']} resumed, "
                               f"{s['engine_failed']} with a failed engine; {eng}; flags: {flags})")
