"""The last two stages: build + verify the release (:func:`biaskit.release.build_release`,
:func:`biaskit.release.verify_release`) and score models on it (:func:`biaskit.evaluation.pairs.run_pairs`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from biaskit.errors import InputError

from ..state import shown_path
from .base import WORK_DIR, Outcome, StageFailed, StageRunner

# stage reports the release card reads: (stage, file under work/<stage>/, label)
HISTORY = (("tuples", "tuples.runlog.jsonl", "tuple generation"),
           ("tuple_review", "agreement/agreement.json", "tuple validation"),
           ("tuple_review", "tuples.summary.json", "tuple validation"),
           ("sentences", "sentences.runlog.jsonl", "sentence generation"),
           ("pairs", "pairs.rewrites.runlog.jsonl", "pair rewrites"),
           ("adapt", "pairs.report.json", "CrowS-Pairs adaptation"),
           ("check", "check.jsonl", "minimal-pair check"),
           ("pair_review", "agreement/agreement.json", "pair validation"),
           ("translate", "candidates.llm.runlog.jsonl", "translation (llm engine)"),
           ("translation_review", "agreement/agreement.json", "translation review"),
           ("translation_review", "report/report.json", "translation review"))


class ReleaseStage(StageRunner):
    name = "release"
    title = "build and verify the release"

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
        recs = [a["pairs"]] if "pairs" in a else []
        if "translations" in a:
            recs.append(a["translations"])
        if "tuples" in (self.opts.kinds or []) and "tuples" in a:
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
        return {**super().option_values(), "name": self.release_name(), "version": self.version(),
                "out": self.key(self.out())}

    def run(self) -> Outcome:
        from biaskit.release import BuildOptions, build_release, verify_release

        o = self.opts
        out = self.out()
        if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "release.json").exists())):
            raise self.project.error("stages.release.out", f"{out} exists and is not a release folder; the build "
                                     "replaces its folder whole.", "choose another out = \"...\" (or move that "
                                     "folder away).")
        records = self.records()
        if not records:
            raise InputError("nothing to release.", path=self.project.file,
                             fix="add a stage that makes pairs, or input = [\"FILE\", ...] in [stages.release].")
        prev = self.project.path(o.previous)
        opts = BuildOptions(name=self.release_name(), version=self.version(), langs=o.langs, kinds=o.kinds,
                            split_policy=o.split_policy, dev_fraction=o.dev_fraction, seed=o.seed,
                            previous=str(prev) if prev else None, license=o.license,
                            citation=self._file_option(o.citation), pretty_name=o.pretty_name,
                            card_text=self._file_option(o.card_text),
                            history=[f"{label}={p}" for label, p in self.history()], keep_flagged=o.keep_flagged,
                            keyness=o.keyness, plots=o.plots, created=o.date, command=self.ctx.options.command,
                            protocol=o.protocol)
        s = build_release(records, out, opts)
        v = verify_release(out)
        if not v.ok:
            raise StageFailed(f"`biaskit release verify {shown_path(out)}` found {len(v.problems)} problem(s), e.g. "
                              f"{v.problems[0]}")
        counts = "; ".join(f"{k} {c['records']} (dev {c['by_split'].get('dev', 0)}, test "
                           f"{c['by_split'].get('test', 0)})" for k, c in s.counts.items())
        return Outcome("done", produces=out, outputs={"release": out, "card": out / "README.md"},
                       warnings=[f"{len(s.warnings)} card section(s) are left to the maintainers "
                                 f"(`biaskit release verify {shown_path(out)}` lists them; write them in the "
                                 f"card_text file of [stages.release])"] if s.warnings else [],
                       summary={"counts": s.counts, "verify": v.checked if hasattr(v, "checked") else None},
                       message=f"{s.name} {s.version}: {counts}; verified")


class EvaluateStage(StageRunner):
    name = "evaluate"
    title = "evaluate models"
    operational = ("enabled", "batch_size", "device")

    def models(self) -> list[str]:
        out = []
        for m in self.opts.models:
            p = self.project.path(m)
            out.append(str(p.resolve()) if p is not None and p.exists() else m)
        return out

    def out(self) -> Path:
        rel = self.input_path()
        o = self.opts.out or f"eval/{rel.name if rel is not None else self.project.name}"
        p = Path(o).expanduser()
        return p if p.is_absolute() else self.project.workdir / p

    def option_values(self) -> dict[str, Any]:
        return {**super().option_values(), "out": self.key(self.out())}

    def extra(self) -> dict[str, Any]:
        """Each model by what its scores depend on: a local model by its files' content (new weights
        saved into the same folder change it), an alias or a hub name by its resolved files."""
        from biaskit.evaluation.models import model_content_id

        return {"model_content": [model_content_id(self.project.path(m) if self.project.path(m).exists() else m)
                                  for m in self.opts.models]}

    def run(self) -> Outcome:
        from biaskit.evaluation.pairs import run_pairs

        o = self.opts
        out = self.out()
        res = run_pairs(self.input_path(), lang=o.lang, models=self.models(), scorer=o.scorer, unit=o.unit,
                        method=o.method, batch_size=o.batch_size, device=o.device, out_dir=out, seed=o.seed,
                        runs=o.runs, fraction=o.fraction, progress=self.ctx.options.progress,
                        command=self.ctx.options.command, split=o.split, protocol=o.protocol)
        parts = []
        outputs: dict[str, Path] = {"results": out}
        for s, d in zip(res["summaries"], res["model_dirs"]):
            score = s.get("metric_score")
            parts.append(f"{s['model_slug']}: metric score {score:.1f} on {s.get('n_pairs')} pairs"
                         if isinstance(score, (int, float)) else f"{s['model_slug']}: scored")
            outputs[f"summary ({s['model_slug']})"] = Path(d) / "summary.json"
        return Outcome("done", produces=out, outputs=outputs, message="; ".join(parts),
                       summary={"metric_score": {s["model_slug"]: s.get("metric_score") for s in res["summaries"]}})
