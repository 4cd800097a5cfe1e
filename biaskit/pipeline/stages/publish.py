"""The last stages: build + verify the release (:func:`biaskit.release.build_release`,
:func:`biaskit.release.verify_release`), SEAT tests from its groups
(:func:`biaskit.evaluation.seat_release.release_seat_tests`) and scores of models on it
(:func:`biaskit.evaluation.pairs.run_pairs`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from pydantic import Field

from biaskit.errors import InputError
from biaskit.evaluation.options import CatsOptions, PairsOptions, SeatOptions, SeatTestsOptions
from biaskit.languages import default_target, source_code
from biaskit.options import option, speaking
from biaskit.release.options import NAME_MAX, ReleaseBuildOptions
from biaskit.release.privacy import KEY_FILE

from ..state import STATE_DIR, shown_path
from .base import WORK_DIR, Command, NameLimit, Outcome, StageFailed, StageRunner, stage_table

if TYPE_CHECKING:
    from ..project import Project

EVALUATE_KINDS = ("pairs", "cats", "seat")

# stage reports the release card reads: (stage, file under work/<stage>/, label)
HISTORY = (
    ("tuples", "tuples.runlog.jsonl", "tuple generation"),
    ("tuple_review", "agreement/agreement.json", "tuple validation"),
    ("tuple_review", "tuples.summary.json", "tuple validation"),
    ("sentences", "sentences.runlog.jsonl", "sentence generation"),
    ("antistereo", "sentences_anti.runlog.jsonl", "anti-stereotype sentence generation"),
    ("sentence_review", "agreement/agreement.json", "sentence review"),
    ("sentence_review", "sentences.summary.json", "sentence review"),
    ("pairs", "pairs.rewrites.runlog.jsonl", "pair rewrites"),
    ("adapt", "pairs.report.json", "CrowS-Pairs adaptation"),
    ("check", "check.jsonl", "minimal-pair check"),
    ("pair_review", "agreement/agreement.json", "pair validation"),
    ("translate", "candidates.llm.runlog.jsonl", "translation (llm engine)"),
    ("translation_review", "agreement/agreement.json", "translation review"),
    ("translation_review", "report/report.json", "translation review"),
    ("cats", "cats.intrasentence.drafts.runlog.jsonl", "CAT drafting (intrasentence)"),
    ("cats", "cats.intersentence.drafts.runlog.jsonl", "CAT drafting (intersentence)"),
    ("cats", "cats.retention.json", "CAT drafting"),
    ("cat_review", "agreement/agreement.json", "CAT validation"),
    ("cat_review", "cats.summary.json", "CAT validation"),
    ("cat_review", "retention.json", "CAT retention"),
    ("cat_translation_review", "agreement/agreement.json", "CAT translation review"),
)


# ------------------------------------------------------------------------------------------ the stages
class ReleaseStage(StageRunner):
    name = "release"
    title = "build and verify the release"
    commands = (
        Command(
            ReleaseBuildOptions,
            input="records",
            keys={"created": "date"},
            supplied={
                "records": "the stage's input: the pipeline's pairs and CATs (or the files its input key names)",
                "card_text": "the stage's own card_text key: a file relative to the project file's folder",
                "history": "the reports of the stages that ran before it (work/<stage>/...), found by the stage",
                "discover_history": "the stage passes its stages' reports itself (history) and reads no others",
                "pseudonym_key": "the project's state folder: .biaskit/release.key (created once, never released)",
            },
        ),
    )
    table = stage_table(
        "ReleaseTable",
        commands,
        defaults={"name": None, "version": None, "out": None},
        own={
            "input": (
                Optional[str | list[str]],  # noqa: UP045 (a runtime value pydantic reads)
                Field(None, description="record files (default: the pipeline's)"),
            ),
            "card_text": (
                Optional[str],  # noqa: UP045 (a runtime value pydantic reads)
                Field(None, description="Markdown with the card sections people write ('## Motivation' ...): a file"),
            ),
        },
        doc="``[stages.release]``: ``biaskit release build`` + ``release verify`` (``name`` and ``version``: "
        "the project's by default; ``out``: release/NAME-VERSION in the working folder).",
    )
    inputs, output = ("pairs", "cats"), "release"
    text_or_file = ("card_text", "citation")

    @classmethod
    def name_limit(cls, project: Project) -> NameLimit | None:
        table: Any = project.stage(cls.name)
        if table.name:
            return None  # its own name (checked as --name is)
        return NameLimit(
            NAME_MAX,
            f"a release name (it names the release and its folder; at most {NAME_MAX})",
            'set name = "NAME" in [stages.release]',
        )

    @classmethod
    def check(cls, project: Project) -> list[InputError]:
        """Also: with ``hub_ready``, the licence is one the Hub takes (as ``release build`` checks before
        any work). (Its own ``name`` is checked with its key, as ``--name`` is: the options model's.)"""
        out = super().check(project)
        o: Any = project.stage(cls.name)
        if o.hub_ready:
            from biaskit.release.hub import license_problem

            with speaking(cls.speaker_for(project)):
                lic = license_problem(o.license)
            if lic:
                msg, _, fix = lic.partition(" Fix: ")
                out.append(project.error("stages.release.license", msg, fix or "see docs/release.md."))
        return out

    def release_name(self) -> str:
        return self.opts.name or self.project.name

    def version(self) -> str:
        return self.opts.version or self.project.config.project.version

    def out(self) -> Path:
        o = self.opts.out or f"release/{self.release_name()}-{self.version()}"
        p = Path(o).expanduser()
        return p if p.is_absolute() else self.project.workdir / p

    def records(self) -> list[Path]:
        given = self.opts.input
        if given:
            return [self.project.path(g) for g in ([given] if isinstance(given, str) else given)]
        a = self.ctx.artifacts
        kinds = self.opts.kinds
        recs = [a["pairs"]] if "pairs" in a else []
        if "translations" in a:
            recs.append(a["translations"])
        if kinds is None or "cats" in kinds:
            recs += [a[k] for k in ("cats", "cat_translations") if k in a]
        if "tuples" in (kinds or []) and "tuples" in a:
            recs.append(a["tuples"])
        return recs

    def history(self) -> list[tuple[str, Path]]:
        out = []
        for stage, rel, label in HISTORY:
            p = self.project.workdir / WORK_DIR / stage / rel
            if self.project.stage(stage) is not None and p.is_file():
                out.append((label, p))
        return out

    def _file_option(self, value):
        """A card text / citation option: a path relative to the project file when it names a file."""
        if not value:
            return None
        p = self.project.path(value)
        return str(p) if p is not None and p.is_file() else value

    def input_files(self) -> list[Path]:
        extra = [self.project.path(x) for x in (self.opts.card_text, self.opts.citation, self.opts.previous) if x]
        return self.records() + [p for _, p in self.history()] + [p for p in extra if p.exists()]

    def option_values(self) -> dict[str, Any]:
        return {
            **super().option_values(),
            "name": self.release_name(),
            "version": self.version(),
            "out": self.key(self.out()),
        }

    def run(self) -> Outcome:
        from biaskit.release import build_release, verify_release

        o = self.opts
        out = self.out()
        if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "release.json").exists())):
            raise self.project.error(
                "stages.release.out",
                f"{out} exists and is not a release folder; the build replaces its folder whole.",
                'choose another out = "..." (or move that folder away).',
            )
        records = self.records()
        if not records:
            raise InputError(
                "nothing to release.",
                path=self.project.file,
                fix='add a stage that makes pairs, or input = ["FILE", ...] in [stages.release].',
            )
        prev = self.project.path(o.previous)
        opts = self.command_options(
            ReleaseBuildOptions,
            records=records,
            out=out,
            name=self.release_name(),
            version=self.version(),
            previous=prev,
            citation=self._file_option(o.citation),
            card_text=self._file_option(o.card_text),
            history=[f"{label}={p}" for label, p in self.history()],
            discover_history=True,
            pseudonym_key=self.project.workdir / STATE_DIR / KEY_FILE,
        )
        with speaking(self.speaker(ReleaseBuildOptions)):
            s = build_release(
                records, out, opts.build_options(), command=self.ctx.options.command, base=self.project.workdir
            )
        v = verify_release(out)
        if not v.ok:
            raise StageFailed(
                f"`biaskit release verify {shown_path(out)}` found {len(v.problems)} problem(s), e.g. {v.problems[0]}"
            )
        counts = "; ".join(
            f"{k} {c['records']} (dev {c['by_split'].get('dev', 0)}, test {c['by_split'].get('test', 0)})"
            for k, c in s.counts.items()
        )
        return Outcome(
            "done",
            produces=out,
            outputs={"release": out, "card": out / "README.md"},
            warnings=[
                f"{len(s.warnings)} card section(s) are left to the maintainers "
                f"(`biaskit release verify {shown_path(out)}` lists them; write them in the "
                f"card_text file of [stages.release])"
            ]
            if s.warnings
            else [],
            summary={"counts": s.counts, "verify": v.checked if hasattr(v, "checked") else None},
            message=f"{s.name} {s.version}: {counts}; verified",
        )


class SeatTestsStage(StageRunner):
    """IndiBias-style SEAT tests (sec. 5) from the release's groups: each pair of comparable groups
    the release tests, in the shipped bleached templates, against the paper's attribute lists, in
    English and the target language (``langs``; :func:`biaskit.evaluation.seat_release.release_seat_tests`)."""

    name = "seat_tests"
    title = "SEAT tests from the release"
    commands = (
        Command(
            SeatTestsOptions,
            input="data",
            keys={"lang": "langs"},
            supplied={
                "data": "the release (or the folder of `input`)",
                "out": "work/seat_tests/tests, where the evaluate stage finds them",
            },
        ),
    )
    table = stage_table(
        "SeatTestsTable",
        commands,
        defaults={"langs": lambda: [source_code(), default_target()]},
        doc="``[stages.seat_tests]``: IndiBias-style SEAT tests (sec. 5) from the release's groups "
        "(``biaskit evaluate seat-tests``; ``langs``: its ``--lang``, default the source and the default "
        "target language).",
    )
    inputs, output = ("release",), "seat_tests"

    @classmethod
    def check(cls, project: Project) -> list[InputError]:
        """Also: the languages have bleached templates and the attribute pairs are the lexicon's (what
        :func:`biaskit.evaluation.seat_release.release_seat_tests` refuses, asked before any stage runs)."""
        from biaskit.evaluation.seat_release import attributes_problem, langs_problem

        out = super().check(project)
        o: Any = project.stage(cls.name)
        with speaking(cls.speaker_for(project)):
            for key, problem in (("langs", langs_problem(o.langs)), ("attributes", attributes_problem(o.attributes))):
                if problem is not None:
                    out.append(project.error(f"stages.seat_tests.{key}", problem.message, problem.fix or ""))
        return out

    def run(self) -> Outcome:
        from biaskit.evaluation.seat_release import release_seat_tests

        o = self.opts
        out = self.folder / "tests"
        opts = self.command_options(SeatTestsOptions, data=self.required_input(), out=out)
        with speaking(self.speaker(SeatTestsOptions)):
            res = release_seat_tests(opts, inventory=self.inventory())
        if not res["tests"]:
            raise StageFailed(
                f"no SEAT test could be made from {self.rel(self.required_input())}: "
                + (res.get("why") or f"no pair of comparable groups with templates in {', '.join(o.langs)}")
                + ". Fix: lower min_records in [stages.seat_tests], or "
                "disable the stage."
            )
        groups = "; ".join(f"{g['targ1']} vs {g['targ2']} ({g['records']} records)" for g in res["groups"][:4])
        return Outcome(
            "done",
            produces=out,
            outputs={"tests": out, "index": out / "index.json"},
            summary=res,
            message=f"{len(res['tests'])} SEAT tests ({', '.join(o.langs)}) from {len(res['groups'])} group "
            f"pair(s): {groups}",
        )


class EvaluateStage(StageRunner):
    """Scores models on the release: its pairs (:func:`biaskit.evaluation.pairs.run_pairs`), its CATs
    per language (:func:`biaskit.evaluation.stereoset.run_cats`) and the SEAT tests of the
    ``seat_tests`` stage per language (:func:`biaskit.evaluation.seat.run_seat`), into
    ``out/pairs``, ``out/cats/<lang>/<model>`` and ``out/seat/<lang>/<model>``."""

    name = "evaluate"
    title = "evaluate models"
    inputs, output = ("release",), "results"
    commands = (
        Command(
            PairsOptions,
            input="data",
            keys={"release_split": "split"},
            supplied={
                "data": "the release (or the folder or file of `input`)",
                "out": "OUT/pairs, OUT being the stage's `out`",
            },
        ),
        Command(
            CatsOptions,
            input="data",
            keys={"split": "cat_split", "release_split": "split"},
            supplied={
                "data": "the release (or the folder of `input`)",
                "out": "OUT/cats/LANG/MODEL",
                "models": "each of `models`, one at a time",
                "lang": "each CAT language of the release (only `lang` when it is set)",
                "scorer": "from `scorer`: mlm, clm or clm-api, else auto (the model's kind)",
                "format": "the stage reads the release's CAT file",
                "predictions": "the stage scores models (metrics from a score file: "
                "`biaskit evaluate cats --predictions`)",
                "allow_missing": "goes with --predictions only",
                "ensemble": "one result folder per model and language (the ENSEMBLE row: `biaskit evaluate cats` with "
                "several --model)",
            },
        ),
        Command(
            SeatOptions,
            keys={"models": "seat_models", "seed": "seat_seed"},
            supplied={
                "tests": "the SEAT tests of [stages.seat_tests], per language",
                "out": "OUT/seat/LANG/MODEL",
                "lang": "detected from each language's tests (the stage runs each language folder; only `lang` when "
                "it is set)",
            },
        ),
    )
    table = stage_table(
        "EvaluateTable",
        commands,
        defaults={"split": "test", "seat_models": None},
        own={
            "kinds": (
                Optional[list[str]],  # noqa: UP045 (a runtime value pydantic reads)
                option(
                    None,
                    choices=EVALUATE_KINDS,
                    what="kind of evaluation",
                    help="what to score (default: every kind the release has, and SEAT after seat_tests)",
                ),
            ),
            "out": (
                Optional[str],  # noqa: UP045 (a runtime value pydantic reads)
                option(None, help="the results folder (default: eval/<release folder name>)"),
            ),
        },
        doc="``[stages.evaluate]``: ``biaskit evaluate pairs``, ``evaluate cats`` (each CAT language) and "
        "``evaluate seat`` (the ``seat_tests`` stage's tests, each language) on the release: every option of "
        "the three commands (``split``: the release's split, default test; ``cat_split``: ``evaluate cats "
        "--split``; ``seat_models``, ``seat_seed``: ``evaluate seat --model``, ``--seed``).",
    )

    @classmethod
    def check(cls, project: Project) -> list[InputError]:
        """Also: every model it scores (``models``, ``seat_models``) can be found without loading it."""
        out = super().check(project)
        o: Any = project.stage(cls.name)
        for key in ("models", "seat_models"):
            for m in getattr(o, key) or []:
                why = model_problem(project, m)
                if why:
                    out.append(project.error(f"stages.evaluate.{key}", why[0], why[1]))
        return out

    def models(self, names=None) -> list[str]:
        out = []
        for m in names if names is not None else self.opts.models:
            p = self.project.path(m)
            out.append(str(p.resolve()) if p is not None and p.exists() else m)
        return out

    def out(self) -> Path:
        rel = self.input_path()
        o = self.opts.out or f"eval/{rel.name if rel is not None else self.project.name}"
        p = Path(o).expanduser()
        return p if p.is_absolute() else self.project.workdir / p

    def seat_dir(self) -> Path | None:
        return self.ctx.artifacts.get("seat_tests")

    def input_files(self) -> list[Path]:
        seat = self.seat_dir()
        return super().input_files() + ([seat] if seat is not None else [])

    def option_values(self) -> dict[str, Any]:
        return {**super().option_values(), "out": self.key(self.out())}

    def extra(self) -> dict[str, Any]:
        """Each model by what its scores depend on: a local model by its files' content (new weights
        saved into the same folder change it), an alias or a hub name by its resolved files."""
        from biaskit.evaluation.models import model_content_id

        def content(names):
            return [model_content_id(self.project.path(m) if self.project.path(m).exists() else m) for m in names]

        return {
            "model_content": content(self.opts.models),
            "seat_model_content": content(self.opts.seat_models) if self.opts.seat_models else None,
        }

    def kinds(self, release: Path) -> list[str]:
        """What is scored: the ``kinds`` option, else every kind the release has (+ SEAT when the
        ``seat_tests`` stage made tests)."""
        from biaskit.release import layout as L

        if self.opts.kinds:
            return list(self.opts.kinds)
        have = [k for k in ("pairs", "cats") if (release / L.RECORD_FILES[k]).exists()]
        return have + (["seat"] if self.seat_dir() is not None else [])

    def protocol(self, kind: str) -> dict[str, Any]:
        """The one place where the scoring protocol goes into the calls below (issue #19, docs/fidelity.md):
        the stage's ``protocol`` for the kinds (pairs, cats, seat) it covers, else each kind's data
        origin (``None``: the evaluator picks the protocol of where the data comes from)."""
        from biaskit.evaluation.protocols import AUTO, NONE, get_protocol

        name = self.opts.protocol
        if name is None or name.lower() in (AUTO, NONE):
            return {"protocol": name}
        p = get_protocol(name)
        assert p is not None  # a name other than none: the registry's entry (or UnknownNameError)
        return {"protocol": name if kind in p.commands else None}

    def run(self) -> Outcome:
        release, out = self.required_input(), self.out()
        kinds = self.kinds(release)
        if not kinds:
            raise InputError(
                "nothing to evaluate in this release.",
                path=release,
                fix="build a release with pairs or CATs, or set kinds = [...] in [stages.evaluate].",
            )
        if "seat" in kinds and self.seat_dir() is None:
            raise self.project.error(
                "stages.evaluate.kinds",
                "SEAT needs the tests of the seat_tests stage.",
                'add [stages.seat_tests] before [stages.evaluate], or leave "seat" out of kinds.',
            )
        parts: list[str] = []
        outputs: dict[str, Path] = {"results": out}
        summary: dict[str, Any] = {}
        if "pairs" in kinds:
            parts += self._pairs(out / "pairs", outputs, summary)
        if "cats" in kinds:
            parts += self._cats(release, out / "cats", outputs, summary)
        if "seat" in kinds:
            parts += self._seat(out / "seat", outputs, summary)
        return Outcome("done", produces=out, outputs=outputs, message="; ".join(parts), summary=summary)

    def _pairs(self, out: Path, outputs: dict, summary: dict) -> list[str]:
        from biaskit.evaluation.pairs import run_pairs

        opts = self.command_options(
            PairsOptions, data=self.input_path(), out=out, models=self.models(), **self.protocol("pairs")
        )
        with speaking(self.speaker(PairsOptions)):
            res = run_pairs(opts, progress=self.ctx.options.progress, command=self.ctx.options.command)
        parts = []
        for m in res.models:
            parts.append(
                f"{m.slug}: metric score {m.metric_score:.1f} on {m.n_pairs} pairs"
                if isinstance(m.metric_score, (int, float))
                else f"{m.slug}: scored"
            )
            outputs[f"pairs ({m.slug})"] = m.folder / "summary.json"
        summary["metric_score"] = {m.slug: m.metric_score for m in res.models}
        return parts

    def _cats(self, release: Path, out: Path, outputs: dict, summary: dict) -> list[str]:
        from biaskit.evaluation.pairs import model_slug
        from biaskit.evaluation.stereoset import run_cats
        from biaskit.io import iter_jsonl
        from biaskit.paths import safe_component
        from biaskit.release import layout as L

        o = self.opts
        cats_file = release / L.RECORD_FILES["cats"]
        langs = sorted(
            {  # each language names a folder of the scores: checked as one file-name part first
                safe_component(r.get("lang") or "en", what="language", path=cats_file, row=i, column="lang")
                for i, r in iter_jsonl(cats_file)
                if o.split is None or (r.get("meta") or {}).get("split") == o.split
            },
            key=lambda lg: (lg != "en", lg),
        )
        if o.lang:
            langs = [lg for lg in langs if lg == o.lang]
        scorer = o.scorer if o.scorer in ("mlm", "clm", "clm-api") else "auto"
        parts, scores = [], {}
        for lg in langs:
            for m in self.models():
                slug = model_slug(m)
                opts = self.command_options(
                    CatsOptions,
                    data=release,
                    out=out / lg / slug,
                    models=[m],
                    lang=lg,
                    scorer=scorer,
                    **self.protocol("cats"),
                )
                with speaking(self.speaker(CatsOptions)):
                    run = run_cats(opts, progress=self.ctx.options.progress, command=self.ctx.options.command)
                s = run.overall
                scores[f"{lg}/{slug}"] = {"lms": s.lms, "ss": s.ss, "icat": s.icat, "count": s.count}
                outputs[f"cats {lg} ({slug})"] = run.folder / "summary.json"
                parts.append(f"{slug} CATs ({lg}): lms {s.lms:.1f}, ss {s.ss:.1f}, icat {s.icat:.1f} on {s.count} CATs")
        summary["cats"] = scores
        return parts

    def _seat(self, out: Path, outputs: dict, summary: dict) -> list[str]:
        from biaskit.evaluation.pairs import model_slug
        from biaskit.evaluation.seat import run_seat

        o = self.opts
        tests = self.seat_dir()
        assert tests is not None  # run() refuses SEAT without the seat_tests stage's tests
        langs = sorted(
            (d.name for d in tests.iterdir() if d.is_dir() and any(d.glob("*.jsonl"))), key=lambda lg: (lg != "en", lg)
        )
        if o.lang:
            langs = [lg for lg in langs if lg == o.lang]
        parts, res = [], {}
        for lg in langs:
            for m in self.models(o.seat_models) if o.seat_models else self.models():
                slug = model_slug(m)
                opts = self.command_options(
                    SeatOptions,
                    tests=[str(tests / lg)],
                    out=out / lg / slug,
                    models=[m],
                    lang=None,
                    **self.protocol("seat"),
                )
                with speaking(self.speaker(SeatOptions)):
                    run = run_seat(opts, command=self.ctx.options.command)
                ds = [t.effect_size for t in run.tests]
                res[f"{lg}/{slug}"] = {t.test: round(t.effect_size, 4) for t in run.tests}
                outputs[f"seat {lg} ({slug})"] = run.folder / "summary.json"
                parts.append(
                    f"{slug} SEAT ({lg}): {len(ds)} tests, mean |d| {sum(abs(d) for d in ds) / len(ds):.2f}"
                    + (f", {len(run.warnings)} coverage warning(s)" if run.warnings else "")
                )
        summary["seat"] = res
        return parts


def model_problem(p: Project, model: str) -> tuple[str, str] | None:
    """Why ``model`` cannot be found without loading it, or None (a folder with config.json, a .gguf
    file, an alias, or a hub name in the offline cache)."""
    from biaskit.evaluation.models import MODEL_ALIASES

    q = p.path(model)
    if q is not None and q.exists():
        if q.is_dir() and not (q / "config.json").exists():
            return (
                f"model folder {q} has no config.json.",
                "pass a folder written by save_pretrained, or a .gguf file.",
            )
        return None
    if model.lower() in MODEL_ALIASES:
        return None
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(model, local_files_only=True)
        return None
    except Exception:  # any failure: not in the offline cache
        pass
    return (
        f"model '{model}' not found: not a path (looked for {q}), not an alias, not in the Hugging Face cache.",
        f"use an alias ({', '.join(MODEL_ALIASES.names())}), a local folder or .gguf file (relative to the "
        "project file's folder), or a hub name downloaded before.",
    )
