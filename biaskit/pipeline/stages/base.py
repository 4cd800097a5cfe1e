"""What every pipeline stage has: its folder, its input, its fingerprint, and ``run() -> Outcome``.

A stage class calls the pure functions of its stage package (``biaskit.curation``,
``biaskit.annotation``, ``biaskit.release``, ``biaskit.evaluation``) exactly as the stage's own
command does, with the options of its table in the project file. It never calls the CLI.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Optional

from biaskit.errors import BiaskitError

from ..project import Project, Stage, reads_of
from ..state import State, fingerprint, hash_path, rel_path

WORK_DIR = "work"


class StageFailed(BiaskitError):
    """A stage ran but produced nothing usable (every LLM job failed, the release does not verify):
    ``biaskit run`` exits with code 1 (bad input is code 2)."""


@dataclass
class RunOptions:
    partial: bool = False          # human stages: go on with the judgments there are
    retry_failed: bool = False     # LLM stages: ask again for the jobs that failed
    progress: bool = True
    command: Optional[str] = None  # the command line recorded by the stages (run logs, release.json)


@dataclass
class Context:
    project: Project
    state: State
    options: RunOptions
    artifacts: dict[str, Path] = field(default_factory=dict)   # artifact -> the latest stage's output
    echo: Callable[[str], None] = lambda s: None


@dataclass
class Outcome:
    """What a stage run gives: ``done`` (its ``produces`` path feeds the next stages) or ``waiting``
    (a human stage whose tasks are not all annotated yet)."""

    status: str
    produces: Optional[Path] = None
    outputs: dict[str, Path] = field(default_factory=dict)   # every file or folder worth showing
    message: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    progress: Optional[dict[str, Any]] = None
    warnings: list[str] = field(default_factory=list)
    partial: bool = False
    errors: int = 0                                           # LLM jobs still failing (retry_failed)


class StageRunner:
    """Base class of the stage classes (one per stage name in :data:`~..project.STAGE_ORDER`)."""

    name: ClassVar[str] = ""
    human: ClassVar[bool] = False
    title: ClassVar[str] = ""
    #: options that do not change a stage's results (left out of its fingerprint)
    operational: ClassVar[tuple[str, ...]] = ("enabled",)

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.project = ctx.project
        self.current_fingerprint = ""   # set by the runner before run()

    # ---- where things are
    @property
    def opts(self) -> Stage:
        s = self.project.stage(self.name)
        assert s is not None
        return s

    @property
    def folder(self) -> Path:
        return self.project.workdir / WORK_DIR / self.name

    def rel(self, p: Path) -> str:
        """``p`` relative to the working folder when inside it (for messages)."""
        return rel_path(self.project.workdir, p)

    def key(self, p: Optional[Path]) -> Optional[str]:
        """How a path enters a fingerprint: relative to the working folder or else the project's folder
        when inside one of them, so that moving the folders changes no fingerprint."""
        if p is None:
            return None
        for base, tag in ((self.project.workdir, "work"), (self.project.root, "project")):
            rel = rel_path(base, p)
            if not Path(rel).is_absolute():
                return f"{tag}:{rel}"
        return str(p)

    @property
    def reads(self) -> Optional[str]:
        """The artifact this stage reads: the first of :func:`~..project.reads_of` that a stage before
        it made (or the first one, when none did yet)."""
        options = reads_of(self.name)
        return next((r for r in options if r in self.ctx.artifacts), options[0] if options else None)

    def input_path(self) -> Optional[Path]:
        """The file this stage reads: its ``input`` option, else the previous stage's output."""
        given = self.opts.input
        if isinstance(given, str):
            return self.project.path(given)
        return self.ctx.artifacts.get(self.reads) if self.reads else None

    def input_files(self) -> list[Path]:
        """Every file whose content this stage's result depends on (hashed into its fingerprint)."""
        p = self.input_path()
        return [p] if p is not None else []

    # ---- fingerprint
    def option_values(self) -> dict[str, Any]:
        d = self.opts.model_dump(mode="json")
        for k in self.operational:
            d.pop(k, None)
        d.pop("llm", None)   # the effective LLM settings go in through extra()
        return d

    def extra(self) -> dict[str, Any]:
        """What else the result depends on (LLM endpoint and prompts, inventory, ...)."""
        return {}

    def fingerprint(self) -> str:
        from biaskit import __version__

        files = {self.key(p): hash_path(p) for p in self.input_files()}
        return fingerprint({"stage": self.name, "options": self.option_values(), "inputs": files,
                            "biaskit": __version__, **self.extra()})

    # ---- running
    def run(self) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError

    # ---- helpers for subclasses
    def inventory(self):
        from biaskit.inventory import load_inventory

        return load_inventory(self.project.path(self.project.config.project.inventory))

    def inventory_extra(self) -> dict[str, Any]:
        inv = self.project.config.project.inventory
        return {"inventory": hash_path(self.project.path(inv)) if inv else "builtin"}

    def prompts_dir(self) -> Optional[list[Path]]:
        d = self.project.config.project.prompts_dir
        return [self.project.path(d)] if d else None

    def prompt(self, default: str):
        from biaskit.curation.prompts import get_prompt

        return get_prompt(getattr(self.opts, "prompt", None) or default, self.prompts_dir())

    def llm_options(self):
        """The curation commands' LLM option block (:class:`~biaskit.curation.cli_options.LLMOptions`)
        filled from ``[llm]`` and the stage's own ``llm`` table."""
        from biaskit.curation.cli_options import LLMOptions

        s = self.project.llm(self.name)
        prices = self.project.path(s.prices)
        return LLMOptions(llm=s.backend, model=s.model, base_url=s.base_url, temperature=s.temperature, seed=s.seed,
                          max_tokens=s.max_tokens, concurrency=s.concurrency, max_retries=s.max_retries,
                          response_format=s.response_format, prices=str(prices) if prices else None,
                          timeout=s.timeout, no_cache=not s.cache, retry_failed=self.ctx.options.retry_failed)

    def llm_extra(self, *prompt_ids: str) -> dict[str, Any]:
        """The LLM settings that change replies (endpoint, model, decoding) and the prompts' hashes."""
        import os

        s = self.project.llm(self.name)
        endpoint = s.base_url or os.environ.get("OPENAI_BASE_URL") or ("offline" if s.backend == "dummy" else "openai")
        prompts = {}
        for pid in prompt_ids:
            p = self.prompt(pid) if pid == prompt_ids[0] else _get_prompt(pid, self.prompts_dir())
            prompts[pid] = f"{p.ref}#{p.hash}"
        return {"llm": {"backend": s.backend, "model": s.model, "endpoint": endpoint, "temperature": s.temperature,
                        "seed": s.seed, "max_tokens": s.max_tokens, "response_format": s.response_format},
                "prompts": prompts}

    def path_out(self, name: str) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / name


def _get_prompt(pid: str, dirs):
    from biaskit.curation.prompts import get_prompt

    return get_prompt(pid, dirs)


def count_rows(path: Path) -> int:
    """Non-empty lines of a JSONL file (0 when missing)."""
    if not Path(path).is_file():
        return 0
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())
