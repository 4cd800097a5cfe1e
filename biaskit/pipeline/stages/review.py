"""The human stages: push records to Label Studio, pull what annotators answered, and once every task
has its ``overlap`` annotators (or with ``biaskit run --partial``), aggregate and apply. With
``overlap = "adaptive"`` every run is a round of adaptive overlap (:func:`biaskit.annotation.labelstudio.advance`:
open tasks that reached their annotators get more, settled ones get none) and the stage goes on once
every task is settled.

They never block the machine: while tasks lack annotators the stage returns ``waiting`` with a
status line ("hi review: 57 of 142 tasks have 3 judgments") and ``biaskit run`` stops with exit code 3;
the next run pulls again and goes on. The push is done once per fingerprint (it is idempotent
anyway: an interrupted push is completed by the next one without duplicate tasks). Calls
:func:`biaskit.annotation.labelstudio.push` / ``pull``, :func:`biaskit.annotation.apply.run_apply`
and :func:`biaskit.annotation.agreement.agreement_report`, as ``biaskit annotate push|pull|apply|agreement``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from pydantic import field_validator

from biaskit.annotation.options import ApplyOptions, PullOptions, PushOptions
from biaskit.errors import BiaskitError, InputError
from biaskit.options import Key, speaking

from ..tables import StageTable
from .base import Command, NameLimit, Outcome, StageFailed, StageRunner, stage_table


# ------------------------------------------------------------------------------------------ their tables
class ReviewStageTable(StageTable):
    """What the review stages' tables check besides each key (the keys come from ``annotate push | pull |
    apply``'s options models: :func:`review_commands`)."""

    @field_validator("overlap", mode="before", check_fields=False)
    @classmethod
    def _overlap(cls, v):
        from biaskit.annotation.options import parse_overlap

        return parse_overlap(v)

    @field_validator("max_judgments", check_fields=False)
    @classmethod
    def _max_judgments(cls, v: int, info) -> int:
        lo = info.data.get("min_judgments")
        if lo is not None and v < lo:
            raise ValueError(f"max_judgments ({v}) is below min_judgments ({lo})")
        return v


def review_commands(kind_options: tuple[str, ...] = ()) -> tuple[Command, ...]:
    """``annotate push``, ``pull`` and ``apply`` as a review stage runs them (``kind_options``: the
    apply options of the stage's kind that are keys of its table, e.g. pair's ``direction_policy``)."""
    kind = "the stage's task kind"
    url = "url in [labelstudio], else $LABEL_STUDIO_URL"
    data = "the stage's input: the previous stage's output, or the file of `input`"
    return (
        Command(
            PushOptions,
            input="data",
            supplied={
                "kind": kind,
                "data": data,
                "url": url,
                "predictions": "not by this stage: LLM pre-labels are `biaskit annotate prelabel --project`",
                "show_predictions": "goes with predictions (left as `annotate prelabel --project` set it)",
                "skip_invalid": "the stage reads every record of its input (an invalid one stops it)",
            },
        ),
        Command(
            PullOptions,
            supplied={
                "kind": kind,
                "url": url,
                "out": "work/STAGE/pulled.jsonl (then judgments.jsonl: the stage's tasks only)",
                "raw": "the stage keeps the judgments, not the raw export",
            },
        ),
        Command(
            ApplyOptions,
            input="data",
            supplied={
                "kind": kind,
                "data": data,
                "out": "the stage's output file in work/STAGE",
                "aggregated": "the stage aggregates the pulled judgments itself (method, min_agree)",
                "judgments": "the judgments the stage pulled",
                "report_dir": "translation review: work/STAGE/report (the other stages: none)",
                **{
                    n: "only for the kind that takes it (pair_review)"
                    for n in ApplyOptions.KIND_OPTIONS
                    if n not in kind_options
                },
            },
        ),
    )


REVIEW_DOC = (
    "``[stages.tuple_review]``, ``[stages.sentence_review]``, ``[stages.translation_review]``, "
    "``[stages.cat_translation_review]``: push to Label Studio, pull, aggregate, apply (``biaskit annotate "
    'push|pull|apply``; ``overlap``: annotators per task, default 3, or "adaptive").'
)


def review_progress(judgments, ids: set[str], overlap: int) -> dict[str, Any]:
    """How far people are: tasks (records pushed), tasks with at least ``overlap`` distinct
    annotators (``complete``), tasks with any answer (``started``), judgments and annotators."""
    workers: dict[str, set[str]] = {}
    n = 0
    if judgments is not None and len(judgments) and {"task", "worker"} <= set(judgments.columns):
        for t, w in zip(judgments["task"].astype(str), judgments["worker"].astype(str), strict=False):
            if t in ids:
                workers.setdefault(t, set()).add(w)
                n += 1
    everyone = set().union(*workers.values()) if workers else set()
    return {
        "tasks": len(ids),
        "complete": sum(1 for t in ids if len(workers.get(t, ())) >= overlap),
        "started": len(workers),
        "target": overlap,
        "judgments": n,
        "annotators": len(everyone),
    }


def adaptive_progress(judgments, ids: set[str], summary: dict[str, Any]) -> dict[str, Any]:
    """:func:`review_progress` of a stage with adaptive overlap: ``complete`` = settled tasks
    (``summary``: :func:`biaskit.annotation.adaptive.summarize` of the last round)."""
    p = review_progress(judgments, ids, 1)
    p.update(
        complete=int(summary["settled"]),
        target=f"{summary['min_judgments']}..{summary['max_judgments']}",
        adaptive=summary,
    )
    return p


def progress_line(label: str, p: dict[str, Any]) -> str:
    """``"hi review: 57 of 142 tasks have 3 judgments"`` (adaptive: ``"... tasks settled (3..5 judgments,
    412 saved so far)"``)."""
    if p.get("adaptive"):
        a = p["adaptive"]
        return (
            f"{label}: {p['complete']} of {p['tasks']} tasks settled (adaptive overlap, {p['target']} judgments; "
            f"{a['judgments_saved']} judgment(s) saved so far)"
        )
    return (
        f"{label}: {p['complete']} of {p['tasks']} tasks have {p['target']} judgment{'s' if p['target'] != 1 else ''}"
    )


# ------------------------------------------------------------------------------------------ the stages
class ReviewStage(StageRunner):
    """What every human stage does (push, pull, wait, apply); a subclass names its kind."""

    human = True
    commands = review_commands()
    table = stage_table(
        "ReviewTable", commands, base=ReviewStageTable, defaults={"project": None, "overlap": 3}, doc=REVIEW_DOC
    )
    kind: ClassVar[str] = ""
    out_name: ClassVar[str] = ""

    def label(self) -> str:
        return self.name.replace("_", " ")

    def ls_project(self) -> str:
        return self.opts.project or f"{self.project.name} {self.label()}"

    @classmethod
    def planned_label(cls, project: Any) -> str:
        """:meth:`label` before the stage runs (what its title will end with)."""
        return cls.name.replace("_", " ")

    @classmethod
    def name_limit(cls, project: Any) -> NameLimit | None:
        """The project's name starts the Label Studio project's title (unless ``project`` names it)."""
        from biaskit.annotation.options import TITLE_MAX

        if getattr(project.stage(cls.name), "project", None):
            return None
        label = cls.planned_label(project)
        return NameLimit(
            TITLE_MAX - len(f" {label}"),
            f"the Label Studio project title 'NAME {label}' (at most {TITLE_MAX} characters)",
            f'set project = "TITLE" in [stages.{cls.name}]',
        )

    def url(self) -> str:
        """``url`` in ``[labelstudio]``, else ``$LABEL_STUDIO_URL``, else the Label Studio that ``biaskit
        annotate serve`` runs in its default folder (a trial project needs no URL written down)."""
        from biaskit.annotation.server import served_url

        url = self.project.config.labelstudio.url or os.environ.get("LABEL_STUDIO_URL") or served_url()
        if not url:
            raise self.project.error(
                "labelstudio.url",
                f"the {self.name} stage needs a Label Studio.",
                "start one with `biaskit annotate serve` (found by itself), or "
                'set url = "http://..." in [labelstudio] or export LABEL_STUDIO_URL; the token comes from '
                "$LABEL_STUDIO_API_KEY.",
            )
        return url

    def option_values(self) -> dict[str, Any]:
        return {**super().option_values(), "project": self.ls_project()}

    def out_file(self, records: list) -> Path:
        return self.path_out(self.out_name)

    @classmethod
    def speaker_for(cls, project, options=None, run=None):
        """Hints name the stage's keys, and ``url`` in ``[labelstudio]``."""
        sp = super().speaker_for(project, options, run)
        sp.keys["url"] = Key("labelstudio", "url")
        return sp

    def run(self) -> Outcome:
        """Push the records (or, with adaptive overlap, ask for more annotators), pull the answers, and
        once every task has its annotators (or ``--partial``) apply them; else wait for people."""
        from biaskit.annotation.kinds import get_kind

        data = self.required_input()
        k = get_kind(self.kind)
        records = k.load(data)
        ids = {k.record_id(r) for r in records}
        if not ids:
            raise StageFailed(f"nothing to review: {self.rel(data)} has no records.")
        url, title = self.url(), self.ls_project()
        rnd = self.push_round(data, title, url)
        ls_url = self.ctx.state.get(self.name).get("ls_url") or url
        df, judgments = self.pull_answers(title, url, ids)
        prog = adaptive_progress(df, ids, rnd) if rnd is not None else review_progress(df, ids, self.opts.overlap)
        line = progress_line(self.label(), prog)
        where = f"Label Studio project '{title}' at {ls_url}"
        outputs: dict[str, Path] = {"judgments": judgments}
        if prog["complete"] < prog["tasks"] and not (self.ctx.options.partial and prog["judgments"]):
            return Outcome(
                "waiting",
                outputs=outputs,
                progress={**prog, "project": title, "url": ls_url},
                message=f"{line} ({where})",
            )
        out = self.out_file(records)
        res = self.apply_answers(data, out, df)
        outputs.update({"accepted": out, **{n: Path(p) for n, p in res.paths.items() if n != "out"}})
        outputs.update(self.reports(data, out))
        warnings = self.agreement(judgments, outputs)
        c = res.counts
        counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in c.items() if v and k != "records")
        partial = prog["complete"] < prog["tasks"]
        if not res.accepted:
            raise StageFailed(
                f"{self.label()}: people accepted none of the {len(ids)} records ({counts}). Fix: "
                f"review the answers in the {where}; see {self.rel(out)}.rejected.jsonl."
            )
        return Outcome(
            "done",
            produces=out,
            outputs=outputs,
            progress={**prog, "project": title, "url": ls_url},
            partial=partial,
            warnings=warnings,
            summary=res.summary(),
            message=f"{line}{' (partial: --partial)' if partial else ''}; applied: {counts}",
        )

    def push_round(self, data: Path, title: str, url: str) -> dict | None:
        """Push the records once per fingerprint and server (a restarted server may have a new port);
        with adaptive overlap, every later run is a round asking more annotators for the open tasks.
        The adaptive round's summary, or None."""
        from biaskit.annotation.labelstudio import advance, push

        push_opts = self.command_options(PushOptions, kind=self.kind, data=data, project=title, url=url)
        adaptive = push_opts.adaptive()
        st = self.ctx.state.get(self.name)
        fp = self.current_fingerprint
        if st.get("pushed") != fp or st.get("pushed_to") != url:
            with speaking(self.speaker(PushOptions)):
                rep = push(
                    push_opts,
                    description=f"biaskit {self.kind} review of the project '{self.project.name}' "
                    f"(stage {self.name}); created by: {self.ctx.options.command}",
                    show_progress=self.ctx.options.progress,
                )
            self.ctx.state.update(self.name, pushed=fp, pushed_to=url, ls_project=title, ls_url=rep.url)
            self.ctx.echo(
                f"{self.name}: pushed {rep.n_imported} task(s) to Label Studio project '{title}' "
                f"({rep.n_existing} already there) {rep.url}"
            )
            return rep.adaptive
        if adaptive is not None:
            with speaking(self.speaker(PushOptions)):
                return advance(title, url=url, kind=self.kind, settings=adaptive).summary
        return None

    def pull_answers(self, title: str, url: str, ids: set[str]) -> tuple[Any, Path]:
        """The judgments of this stage's tasks (``ids``) pulled from Label Studio: the table, and the
        file ``judgments.jsonl`` it is written to."""
        from biaskit.annotation.labelstudio import pull
        from biaskit.io import write_table
        from biaskit.readers import read_judgments

        pulled = self.path_out("pulled.jsonl")
        with speaking(self.speaker(PullOptions)):
            pull(self.command_options(PullOptions, project=title, out=pulled, kind=self.kind, url=url))
        df = read_judgments(pulled)
        if len(df) and "task" in df.columns:
            df = df[df["task"].astype(str).isin(ids)].reset_index(drop=True)
        return df, write_table(self.path_out("judgments.jsonl"), df)

    def apply_answers(self, data: Path, out: Path, df: Any) -> Any:
        """``annotate apply`` of the judgments ``df`` to the records of ``data``, accepted ones to ``out``."""
        from biaskit.annotation.apply import run_apply

        apply_opts = self.command_options(
            ApplyOptions, kind=self.kind, data=data, out=out, judgments=df, report_dir=self.report_dir()
        )
        with speaking(self.speaker(ApplyOptions)):
            return run_apply(apply_opts, command=self.ctx.options.command)

    def agreement(self, judgments: Path, outputs: dict[str, Path]) -> list[str]:
        """The agreement report beside the judgments (added to ``outputs``); the warnings of the run."""
        from biaskit.annotation.agreement import agreement_report
        from biaskit.annotation.judgment_options import AgreementOptions

        try:
            agreement = AgreementOptions(judgments=judgments, out=self.folder / "agreement", duplicates="last")
            agreement_report(agreement, command=self.ctx.options.command)
            outputs["agreement"] = self.folder / "agreement" / "agreement.json"
        except BiaskitError as exc:  # agreement is undefined on some data (one label only, one annotator)
            return [f"agreement not computed: {exc}"]
        return []

    def report_dir(self) -> Path | None:
        return None

    def reports(self, data: Path, accepted: Path) -> dict[str, Path]:
        """Reports of this stage besides agreement, written after apply (``{label: path}``)."""
        return {}


class TupleReviewStage(ReviewStage):
    name = "tuple_review"
    inputs, output = ("tuples",), "tuples"
    title = "validate tuples (people)"
    kind = "tuple"
    out_name = "tuples.jsonl"


class SentenceReviewStage(ReviewStage):
    """People keep, fix (in place) or drop each generated sentence (IndiBias sec. 4.2.2)."""

    name = "sentence_review"
    inputs, output = ("sentences",), "sentences"
    title = "review sentences (people)"
    kind = "sentence"
    out_name = "sentences.jsonl"


class PairReviewStage(ReviewStage):
    name = "pair_review"
    commands = review_commands(kind_options=("direction_policy",))
    table = stage_table(
        "PairReviewTable",
        commands,
        base=ReviewStageTable,
        defaults={"project": None, "overlap": 3, "direction_policy": "annotators"},
        doc="``[stages.pair_review]``: as the other review stages, with ``direction_policy`` "
        "(``annotate apply --direction-policy``; default annotators).",
    )
    inputs, output = ("pairs",), "pairs"
    title = "validate pairs (people)"
    kind = "pair"
    out_name = "pairs.jsonl"


class TranslationReviewStage(ReviewStage):
    name = "translation_review"
    inputs, output = ("candidates",), "translations"
    title = "review translations (people)"
    kind = "translation"
    out_name = "pairs.translated.jsonl"
    translated_by = "translate"

    def target(self) -> str:
        from biaskit.readers import first_record

        p = self.input_path()
        try:
            return str(first_record(p).get("target_lang") or "xx") if p is not None and p.exists() else "xx"
        except InputError:
            return "xx"

    def label(self) -> str:
        return self.label_of(self.target())

    @classmethod
    def planned_label(cls, project: Any) -> str:
        mt = project.stage(cls.translated_by)  # the stage that makes its candidates, when the project has it
        return cls.label_of(str(getattr(mt, "target", None) or "xx"))

    @staticmethod
    def label_of(target: str) -> str:
        return f"{target} review"

    def out_file(self, records: list) -> Path:
        return self.path_out(f"pairs.{self.target()}.jsonl")

    def report_dir(self) -> Path | None:
        return self.folder / "report"


class CatReviewStage(ReviewStage):
    """Five validators label each CAT option; StereoSet's rule (>= 3 of 5 give every option the
    writer's label, sec. 4.3) keeps a CAT. Writes the retention report per split, domain and target
    term (``retention.json``: :func:`biaskit.curation.cats.cat_retention`)."""

    name = "cat_review"
    table = stage_table(
        "CatReviewTable",
        ReviewStage.commands,
        base=ReviewStageTable,
        defaults={"project": None, "overlap": 5},
        doc="``[stages.cat_review]``: five validators label each option (``overlap``, default 5, "
        "StereoSet), or \"adaptive\" (StereoSet's rule decides when a CAT is settled); StereoSet's "
        "rule keeps a CAT when at least three of them give every option the writer's label (sec. 4.3).",
    )
    inputs, output = ("cats",), "cats"
    title = "validate CATs (people)"
    kind = "cat"
    out_name = "cats.jsonl"

    def reports(self, data: Path, accepted: Path) -> dict[str, Path]:
        from biaskit.curation.cats import cat_retention
        from biaskit.io import write_json

        p = self.path_out("retention.json")
        write_json(p, cat_retention(data, accepted))
        return {"retention": p}


class CatTranslationReviewStage(TranslationReviewStage):
    """Blind review of the CAT translations (kind ``cat_translation``): released CATs in the target
    language, ``source_id`` = the English CAT."""

    name = "cat_translation_review"
    inputs, output = ("cat_candidates",), "cat_translations"
    title = "review CAT translations (people)"
    kind = "cat_translation"
    out_name = "cats.translated.jsonl"
    translated_by = "cat_translate"

    @staticmethod
    def label_of(target: str) -> str:
        return f"{target} CAT review"

    def out_file(self, records: list) -> Path:
        return self.path_out(f"cats.{self.target()}.jsonl")

    def report_dir(self) -> Path | None:
        return None
