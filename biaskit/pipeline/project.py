"""The project file, ``biaskit.toml``: which stages a curator wants, with their options.

Read with :func:`load_project`: TOML (``tomllib``), then secrets refused (:func:`find_secrets`), then
validated with pydantic (unknown keys are errors, with a "did you mean"), then the stages checked
against each other (every stage has something to read). Every problem is one
:class:`~biaskit.errors.InputError` naming the file, the key (and its line) and the fix.

The stage tables and their options are documented in docs/pipeline.md; the order the stages run in
is :data:`STAGE_ORDER`, whatever the order of the tables in the file.
"""
from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import BiaskitError, InputError

PROJECT_FILE = "biaskit.toml"

# The stages, in the order `biaskit run` executes them. What each reads and writes: STAGE_IO.
STAGE_ORDER = ("tuples", "tuple_review", "sentences", "antistereo", "sentence_review", "pairs", "adapt", "check",
               "pair_review", "translate", "translation_review", "cats", "cat_review", "cat_translate",
               "cat_translation_review", "release", "seat_tests", "evaluate")
HUMAN_STAGES = ("tuple_review", "sentence_review", "pair_review", "translation_review", "cat_review",
                "cat_translation_review")
# stage -> (artifact it reads, artifact it writes); None: reads a file given in its options only; a tuple:
# any one of these artifacts (the release reads pairs, CATs or both)
STAGE_IO: dict[str, tuple[Optional[Union[str, tuple[str, ...]]], str]] = {
    "tuples": (None, "tuples"),
    "tuple_review": ("tuples", "tuples"),
    "sentences": ("tuples", "sentences"),
    "antistereo": ("tuples", "sentences"),
    "sentence_review": ("sentences", "sentences"),
    "pairs": ("sentences", "pairs"),
    "adapt": (None, "pairs"),
    "check": ("pairs", "pairs"),
    "pair_review": ("pairs", "pairs"),
    "translate": ("pairs", "candidates"),
    "translation_review": ("candidates", "translations"),
    "cats": (None, "cats"),
    "cat_review": ("cats", "cats"),
    "cat_translate": ("cats", "cat_candidates"),
    "cat_translation_review": ("cat_candidates", "cat_translations"),
    "release": (("pairs", "cats"), "release"),
    "seat_tests": ("release", "seat_tests"),
    "evaluate": ("release", "results"),
}
ARTIFACT_WORDS = {"tuples": "tuples", "sentences": "sentences", "pairs": "pairs",
                  "candidates": "translation candidates", "translations": "reviewed translations",
                  "cats": "CATs", "cat_candidates": "CAT translation candidates",
                  "cat_translations": "reviewed CAT translations", "seat_tests": "SEAT tests",
                  "release": "a release folder", "results": "evaluation results"}


def reads_of(stage: str) -> tuple[str, ...]:
    """The artifacts a stage can read (any one of them), from :data:`STAGE_IO`."""
    r = STAGE_IO[stage][0]
    return () if r is None else (r,) if isinstance(r, str) else tuple(r)


# Keys that hold secrets (a key named so, or ending in _NAME; case-insensitive) and where each secret goes.
_SECRET_KEY = re.compile(r"(^|_)(api_?key|access_?key|token|auth|password|passwd|pwd|secret|credentials?)$", re.I)
SECRET_ENV = {"llm": "OPENAI_API_KEY", "labelstudio": "LABEL_STUDIO_API_KEY"}
_SECRET_VALUE = re.compile(r"^(sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|Token\s+\S{20,}|Bearer\s+\S{20,})$")
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s:]+:[^/@\s]+@", re.I)


class ProjectProblems(InputError):
    """Every problem found in a project file, one :class:`InputError` each (file, key, line, fix): the
    CLI prints one ``error:`` line per problem, so a typo in the last stage is seen before any stage
    runs, together with any other."""

    def __init__(self, problems: list[InputError]):
        self.problems = list(problems)
        first = self.problems[0]
        super().__init__(first.message, path=first.path, row=first.row, column=first.column, fix=first.fix)

    def __str__(self) -> str:
        problems = getattr(self, "problems", None)
        if not problems:
            return super().__str__()
        for q in problems:
            q.arg = q.arg or self.arg
        return "\nerror: ".join(InputError.__str__(q) for q in problems)


def raise_problems(problems: list[InputError]) -> None:
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ProjectProblems(problems)


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------------------------------ shared tables
class ProjectMeta(_Table):
    """``[project]``"""

    name: str = Field(..., description="the dataset's name (release name, Label Studio project titles)")
    version: str = Field("0.1.0", description="release version X.Y.Z")
    inventory: Optional[str] = Field(None, description="folder with edited inventory JSON files")
    prompts_dir: Optional[str] = Field(None, description="extra folder of prompt templates (*.toml)")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", v):
            raise ValueError("use letters, digits, '.', '_' and '-' (e.g. \"indibias-caste\")")
        return v

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        if not re.match(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$", v):
            raise ValueError("use semantic versioning X.Y.Z, e.g. \"0.1.0\"")
        return v


class LLMSettings(_Table):
    """``[llm]`` (and a stage's own ``llm`` table, which overrides it field by field)."""

    backend: str = "openai"
    model: Optional[str] = None
    base_url: Optional[str] = None
    temperature: Optional[float] = None
    seed: Optional[int] = 0
    max_tokens: Optional[int] = Field(None, ge=1)
    concurrency: int = Field(1, ge=1, le=64)
    max_retries: int = Field(4, ge=0)
    response_format: str = "auto"
    prices: Optional[str] = None
    timeout: float = Field(120.0, gt=0)
    cache: bool = True

    @field_validator("backend")
    @classmethod
    def _backend(cls, v: str) -> str:
        from ..curation.llm import LLMS

        return _registry_name(v, LLMS.names(), "LLM backend")

    @field_validator("response_format")
    @classmethod
    def _fmt(cls, v: str) -> str:
        from ..curation.llm import FORMAT_MODES

        return _registry_name(v, ["auto", *FORMAT_MODES], "response format")


class LLMOverride(_Table):
    """A stage's ``llm`` table: any ``[llm]`` field, for this stage only."""

    backend: Optional[str] = None
    model: Optional[str] = None
    base_url: Optional[str] = None
    temperature: Optional[float] = None
    seed: Optional[int] = None
    max_tokens: Optional[int] = Field(None, ge=1)
    concurrency: Optional[int] = Field(None, ge=1, le=64)
    max_retries: Optional[int] = Field(None, ge=0)
    response_format: Optional[str] = None
    prices: Optional[str] = None
    timeout: Optional[float] = Field(None, gt=0)
    cache: Optional[bool] = None


class LabelStudioSettings(_Table):
    """``[labelstudio]`` (the token comes from $LABEL_STUDIO_API_KEY only)."""

    url: Optional[str] = Field(None, description="default $LABEL_STUDIO_URL")


# ------------------------------------------------------------------------------------------ stages
class Stage(_Table):
    enabled: bool = True
    input: Optional[str] = Field(None, description="a file to read instead of the previous stage's output")


class LLMStage(Stage):
    llm: Optional[LLMOverride] = None
    prompt: Optional[str] = Field(None, description="prompt template id (or id@version)")


class TuplesStage(LLMStage):
    """``[stages.tuples]``: ``biaskit curate tuples`` for each axis."""

    axes: list[str] = Field(..., min_length=1)
    identities: dict[str, list[str]] = Field(default_factory=dict)
    polarity: Literal["positive", "negative", "both"] = "both"
    n: int = Field(10, ge=1)
    lang: str = "en"


class SentencesStage(LLMStage):
    """``[stages.sentences]``: ``biaskit curate sentences``."""

    per_tuple: int = Field(5, ge=1)
    statuses: Optional[list[str]] = None


class AntistereoStage(LLMStage):
    """``[stages.antistereo]``: ``biaskit curate sentences --mode anti`` (sentences that go against
    each accepted tuple; ``curate pairs`` makes them antistereo rows). Its output is the sentences
    before it (``[stages.sentences]``) and these together."""

    per_tuple: int = Field(5, ge=1)
    statuses: Optional[list[str]] = None


class PairsStage(LLMStage):
    """``[stages.pairs]``: ``biaskit curate pairs``."""

    llm_fallback: bool = False


class AdaptStage(Stage):
    """``[stages.adapt]``: ``biaskit curate adapt`` (``input`` = the CrowS-Pairs CSV)."""

    keep: list[str] = Field(default_factory=lambda: ["gender", "age", "disability", "physical-appearance",
                                                     "socioeconomic"])
    names: Literal["indibias", "indibias-hindu", "indibias-muslim", "india", "india-hindu", "india-muslim",
                   "india-christian", "india-sikh", "none"] = "indibias"
    seed: int = 0
    lexicon: Optional[str] = None
    drop_flagged: bool = False


class CheckStage(Stage):
    """``[stages.check]``: the minimal-pair checker (``biaskit curate check``)."""

    drop_flagged: bool = False


class ReviewStage(Stage):
    """``[stages.tuple_review]``, ``[stages.pair_review]``, ``[stages.translation_review]``: push to
    Label Studio, pull, aggregate, apply (``biaskit annotate push|pull|apply``)."""

    project: Optional[str] = Field(None, description="Label Studio project title (default: '<name> <stage>')")
    overlap: Union[int, Literal["adaptive"]] = Field(
        3, description="annotators per task (the stage waits until every task has them), or \"adaptive\": "
                       "min_judgments first, more only while a task's decision can change")
    min_judgments: int = Field(3, ge=1, description="adaptive: judgments every task gets first")
    max_judgments: int = Field(5, ge=1, description="adaptive: the most judgments a task may get")
    policy: Literal["exact", "risk"] = Field("exact", description="adaptive: stopping policy")
    epsilon: float = Field(0.01, gt=0, lt=1, description="adaptive, risk: accepted probability of a changed decision")
    min_agree: Optional[int] = Field(None, ge=1)
    method: str = "majority"
    seed: int = 0
    chunk_size: int = Field(1000, ge=1)

    @field_validator("overlap")
    @classmethod
    def _overlap(cls, v):
        if isinstance(v, int) and v < 1:
            raise ValueError("give at least 1 annotator per task, or \"adaptive\"")
        return v

    @field_validator("max_judgments")
    @classmethod
    def _max_judgments(cls, v: int, info) -> int:
        lo = info.data.get("min_judgments")
        if lo is not None and v < lo:
            raise ValueError(f"max_judgments ({v}) is below min_judgments ({lo})")
        return v

    @field_validator("method")
    @classmethod
    def _method(cls, v: str) -> str:
        from ..annotation.aggregate import AGGREGATORS

        return _registry_name(v, AGGREGATORS.names(), "aggregation method")


class PairReviewStage(ReviewStage):
    direction_policy: Literal["annotators", "reject"] = "annotators"


class MTStage(Stage):
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
        from ..curation.mt_base import MT_ENGINES

        for spec in v:
            _registry_name(spec.split(":", 1)[0].strip().lower(), MT_ENGINES.names(), "MT engine")
        return v


class TranslateStage(MTStage):
    """``[stages.translate]``: ``biaskit curate translate`` (``llm`` engine: the ``[llm]`` model)."""

    align: bool = True
    batch_pairs: int = Field(16, ge=1)


class CatsStage(Stage):
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


class CatReviewStage(ReviewStage):
    """``[stages.cat_review]``: five validators label each option; StereoSet's rule keeps a CAT when
    at least three of them give every option the writer's label (sec. 4.3)."""

    overlap: Union[int, Literal["adaptive"]] = Field(5, description="validators per CAT (StereoSet: 5), or "
                                                     "\"adaptive\" (StereoSet's rule decides when a CAT is settled)")


class CatTranslateStage(MTStage):
    """``[stages.cat_translate]``: ``biaskit curate cat-translate`` (``llm`` engine: the ``[llm]`` model)."""

    batch_cats: int = Field(16, ge=1)


class ReleaseStage(Stage):
    """``[stages.release]``: ``biaskit release build`` + ``release verify``."""

    input: Optional[Union[str, list[str]]] = Field(None, description="record files (default: the pipeline's)")
    name: Optional[str] = None
    version: Optional[str] = None
    out: Optional[str] = None
    langs: Optional[list[str]] = None
    kinds: Optional[list[Literal["pairs", "cats", "tuples"]]] = None
    split_policy: Literal["target", "keep"] = "target"
    dev_fraction: float = Field(0.25, gt=0, lt=1)
    seed: int = 0
    previous: Optional[str] = None
    license: Optional[str] = None
    citation: Optional[str] = None
    pretty_name: Optional[str] = None
    card_text: Optional[str] = None
    keep_flagged: bool = False
    keyness: bool = True
    plots: bool = True
    date: Optional[str] = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    protocol: Optional[str] = Field(None, description="the paper protocol release.json records (default: the "
                                                      "records' origin)")

    @field_validator("protocol")
    @classmethod
    def _protocol(cls, v: Optional[str]) -> Optional[str]:
        from ..evaluation.protocols import PROTOCOLS

        return None if v is None else _registry_name(v, PROTOCOLS.names() + ["none"], "protocol")

    @field_validator("date")
    @classmethod
    def _date(cls, v: Optional[str]) -> Optional[str]:
        from ..release.verify import valid_date

        if v is not None and not valid_date(v):
            raise ValueError(f"'{v}' is not a day of the calendar; use YYYY-MM-DD, e.g. \"2025-01-31\"")
        return v


class SeatTestsStage(Stage):
    """``[stages.seat_tests]``: IndiBias-style SEAT tests (sec. 5) from the release's groups."""

    langs: list[str] = Field(default_factory=lambda: ["en", "hi"], min_length=1)
    attributes: Optional[list[str]] = Field(None, description="attribute pairs (default: per axis, as IndiBias)")
    min_records: int = Field(1, ge=1, description="a group pair needs this many released records")
    split: Optional[Literal["dev", "test"]] = None


class EvaluateStage(Stage):
    """``[stages.evaluate]``: ``biaskit evaluate pairs``, ``evaluate cats`` (each CAT language) and
    ``evaluate seat`` (the ``seat_tests`` stage's tests, each language) on the release."""

    models: list[str] = Field(..., min_length=1)
    kinds: Optional[list[Literal["pairs", "cats", "seat"]]] = Field(
        None, description="what to score (default: every kind the release has, and SEAT after seat_tests)")
    seat_models: Optional[list[str]] = Field(None, description="sentence encoders for SEAT (default: models)")
    cat_split: Literal["intrasentence", "intersentence", "both"] = "both"
    n_samples: int = Field(100_000, ge=1, description="SEAT permutation samples")
    scorer: Optional[str] = Field(None, description="default: the one the models' architecture calls for")
    protocol: Optional[str] = Field(None, description="a paper protocol (docs/fidelity.md); default: the release's")
    method: Optional[str] = None
    unit: Optional[Literal["token", "word"]] = None
    split: Optional[Literal["dev", "test"]] = "test"
    lang: Optional[str] = None
    batch_size: int = Field(32, ge=1)
    device: str = "auto"
    seed: int = 0
    runs: Optional[int] = Field(None, ge=1)
    fraction: Optional[float] = Field(None, gt=0, le=1)
    out: Optional[str] = None

    @field_validator("protocol")
    @classmethod
    def _protocol(cls, v: Optional[str]) -> Optional[str]:
        from ..evaluation.protocols import CHOICES

        return None if v is None else _registry_name(v, list(CHOICES), "protocol")

    @field_validator("scorer")
    @classmethod
    def _scorer(cls, v: Optional[str]) -> Optional[str]:
        from ..evaluation.scorers import SCORERS

        return None if v is None else _registry_name(v, SCORERS.names(), "scorer")


class Stages(_Table):
    tuples: Optional[TuplesStage] = None
    tuple_review: Optional[ReviewStage] = None
    sentences: Optional[SentencesStage] = None
    antistereo: Optional[AntistereoStage] = None
    sentence_review: Optional[ReviewStage] = None
    pairs: Optional[PairsStage] = None
    adapt: Optional[AdaptStage] = None
    check: Optional[CheckStage] = None
    pair_review: Optional[PairReviewStage] = None
    translate: Optional[TranslateStage] = None
    translation_review: Optional[ReviewStage] = None
    cats: Optional[CatsStage] = None
    cat_review: Optional[CatReviewStage] = None
    cat_translate: Optional[CatTranslateStage] = None
    cat_translation_review: Optional[ReviewStage] = None
    release: Optional[ReleaseStage] = None
    seat_tests: Optional[SeatTestsStage] = None
    evaluate: Optional[EvaluateStage] = None


class ProjectFile(_Table):
    project: ProjectMeta
    llm: LLMSettings = Field(default_factory=LLMSettings)
    labelstudio: LabelStudioSettings = Field(default_factory=LabelStudioSettings)
    stages: Stages = Field(default_factory=Stages)


def _registry_name(v: str, names: list[str], what: str) -> str:
    if v.lower() in names:
        return v.lower()
    close = difflib.get_close_matches(v.lower(), names, n=1)
    raise ValueError(f"unknown {what} '{v}'" + (f" (did you mean '{close[0]}'?)" if close else "")
                     + f"; use one of {', '.join(names)}")


# ------------------------------------------------------------------------------------------ the project
class Project:
    """A loaded, validated project: ``file`` (its path), ``root`` (the folder paths in it are relative
    to), ``workdir`` (where the outputs and the state go) and ``config`` (:class:`ProjectFile`)."""

    def __init__(self, file: Path, config: ProjectFile, text: str, workdir: Optional[Path] = None):
        self.file = file
        self.root = file.parent
        self.workdir = (workdir or self.root).resolve()
        self.config = config
        self.text = text

    @property
    def name(self) -> str:
        return self.config.project.name

    def stage(self, name: str) -> Optional[Stage]:
        s = getattr(self.config.stages, name)
        return s if s is not None and s.enabled else None

    def enabled(self) -> list[str]:
        """The enabled stages, in run order."""
        return [n for n in STAGE_ORDER if self.stage(n) is not None]

    def path(self, p: Optional[str]) -> Optional[Path]:
        """A path from the project file: ``~`` expanded, relative ones taken from the project's folder."""
        if p is None:
            return None
        q = Path(os.path.expanduser(p))
        return q if q.is_absolute() else (self.root / q)

    def llm(self, stage: Optional[str] = None) -> LLMSettings:
        """The ``[llm]`` settings with the stage's own ``llm`` table applied."""
        base = self.config.llm
        s = self.stage(stage) if stage else None
        over = getattr(s, "llm", None)
        if over is None:
            return base
        upd = {k: v for k, v in over.model_dump().items() if v is not None}
        return LLMSettings.model_validate({**base.model_dump(), **upd})

    def line_of(self, key: str) -> Optional[int]:
        return key_line(self.text, key.split("."))

    def error(self, key: str, message: str, fix: str) -> InputError:
        line = self.line_of(key)
        return InputError(f"key '{key}'" + (f" (line {line})" if line else "") + f": {message}", path=self.file,
                          fix=fix)


def find_project_file(path: Optional[str | Path]) -> Path:
    """``path`` itself (a file), ``path/biaskit.toml`` (a folder), or ``./biaskit.toml``."""
    p = Path(path) if path is not None else Path(PROJECT_FILE)
    if p.is_dir():
        p = p / PROJECT_FILE
    if not p.is_file():
        raise InputError("no project file here.", path=p,
                         fix="run `biaskit init` to write one, or pass --project PATH (a biaskit.toml or its folder).")
    return p


def load_project(path: Optional[str | Path] = None, *, workdir: Optional[str | Path] = None,
                 check_inputs: bool = True) -> Project:
    """Read, check and validate a project file (see the module docstring); ``check_inputs``: also
    that every file it names exists (``biaskit status`` shows a project whose inputs are missing)."""
    import tomllib

    file = find_project_file(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason}).", path=file, fix="save the file as UTF-8.") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}.", path=file,
                         fix="fix the syntax there (strings need quotes, tables are written [stages.name]).") from None
    secrets = find_secrets(raw)
    if secrets:
        key, why = secrets[0]
        top = key.split(".")[0]
        env = SECRET_ENV.get(top) or (SECRET_ENV["llm"] if "llm" in key else
                                      SECRET_ENV["labelstudio"] if "label" in key else "an environment variable")
        line = key_line(text, key.split("."))
        raise InputError(f"key '{key}'" + (f" (line {line})" if line else "") + f" holds a secret ({why}); a project "
                         "file is shared and committed, so biaskit refuses it.", path=file,
                         fix=f"delete it from the file and set {env} in the environment instead "
                             "(the file may name endpoints, never keys, tokens or passwords).")
    try:
        config = ProjectFile.model_validate(raw)
    except ValidationError as exc:
        raise_problems(_validation_errors(file, text, exc))
    project = Project(file.resolve(), config, text, Path(workdir) if workdir is not None else None)
    check_project(project, check_inputs=check_inputs)
    return project


def find_secrets(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    """``(dotted key, why)`` for every value that is (or looks like) a secret."""
    out: list[tuple[str, str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if _SECRET_KEY.search(str(k).replace("-", "_")) and v not in (None, "", False):
                out.append((key, f"'{k}' names a secret"))
            else:
                out += find_secrets(v, key)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += find_secrets(v, prefix)
    elif isinstance(obj, str):
        if _SECRET_VALUE.match(obj.strip()):
            out.append((prefix, "the value looks like an API key"))
        elif _URL_PASSWORD.match(obj.strip()):
            out.append((prefix, "the URL carries a password"))
    return out


def key_line(text: str, loc: list[str]) -> Optional[int]:
    """The line of ``text`` (TOML) where the dotted key ``loc`` (or its longest prefix) is set."""
    loc = [str(x) for x in loc]
    table: list[str] = []
    best: tuple[int, Optional[int]] = (0, None)
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.split("#", 1)[0].strip()
        m = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?$", s)
        if m:
            table = [p.strip().strip("\"'") for p in m.group(1).split(".")]
            key = table
        else:
            m = re.match(r"^([A-Za-z0-9_.\"' -]+?)\s*=", s)
            if not m:
                continue
            key = table + [p.strip().strip("\"'") for p in m.group(1).split(".")]
        if loc[: len(key)] == key and len(key) > best[0]:
            best = (len(key), i)
    return best[1]


_FIXES = {
    "missing": "add it",
    "int_parsing": "give a whole number (no quotes)",
    "int_type": "give a whole number (no quotes)",
    "float_parsing": "give a number (no quotes)",
    "float_type": "give a number (no quotes)",
    "bool_type": "give true or false (no quotes)",
    "bool_parsing": "give true or false (no quotes)",
    "string_type": "give a quoted string",
    "list_type": "give a list, e.g. [\"a\", \"b\"]",
    "dict_type": "give a table",
    "model_type": "give a table ([section] or {key = value})",
    "too_short": "give at least one value",
}


def _allowed_keys(loc: tuple) -> list[str]:
    """The keys the table at ``loc`` accepts (for "did you mean")."""
    model: Any = ProjectFile
    for part in loc:
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        for cand in getattr(ann, "__args__", (ann,)):
            if isinstance(cand, type) and issubclass(cand, BaseModel):
                model = cand
                break
        else:
            return []
    return list(getattr(model, "model_fields", {}))


def _validation_errors(file: Path, text: str, exc: ValidationError) -> list[InputError]:
    """One :class:`InputError` per problem pydantic found (the same key reported once)."""
    out, seen = [], set()
    for err in exc.errors(include_url=False):
        e = _validation_error(file, text, err)
        if str(e) not in seen:
            seen.add(str(e))
            out.append(e)
    return out


def _validation_error(file: Path, text: str, err: dict) -> InputError:
    loc = tuple(x for x in err["loc"] if not isinstance(x, int) and not str(x).startswith(("function-", "literal[")))
    key = ".".join(str(x) for x in loc) or "(top level)"
    line = key_line(text, list(loc))
    typ = err["type"]
    msg = err["msg"].removeprefix("Value error, ")
    if typ == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        where = ".".join(map(str, loc[:-1]))
        msg = f"unknown setting" + (f" in [{where}]" if where else "")
        fix = (f"did you mean '{close[0]}'? " if close else "") + (f"[{where}] takes: {', '.join(allowed)}."
                                                                  if where else f"the file has the tables: "
                                                                  f"{', '.join(allowed)}.")
        if loc[:1] == ("stages",) and len(loc) == 2:
            fix = (f"did you mean '{close[0]}'? " if close else "") + f"the stages are: {', '.join(STAGE_ORDER)}."
    elif typ == "missing":
        fix = f"add {loc[-1]} = ... to [{'.'.join(map(str, loc[:-1]))}] (see docs/pipeline.md)."
    else:
        fix = _FIXES.get(typ, "see docs/pipeline.md for the allowed values") + "."
    return InputError(f"key '{key}'" + (f" (line {line})" if line else "") + f": {msg}.", path=file, fix=fix)


def check_project(p: Project, *, check_inputs: bool = True) -> None:
    """The whole project before any stage runs: something to read for every stage, one source of
    pairs, a model for LLMs; with ``check_inputs``, also every file and folder it names, the models
    the evaluate stage scores, the tuple axes and the card text (:func:`check_resources`). Every
    problem is reported (one line each), not only the first."""
    names = p.enabled()
    if not names:
        raise InputError("no stage is enabled.", path=p.file,
                         fix="add at least one [stages.NAME] table (run `biaskit init` for an example).")
    problems: list[InputError] = []
    add = problems.append
    if "pairs" in names and "adapt" in names:
        add(p.error("stages.adapt", "both [stages.pairs] and [stages.adapt] make the pairs.",
                    "keep one source of pairs (set enabled = false in the other)."))
    have: set[str] = set()
    for n in names:
        s = p.stage(n)
        reads, writes = reads_of(n), STAGE_IO[n][1]
        given = s.input if s is not None else None
        if n == "adapt" and not given:
            add(p.error("stages.adapt", "adapt needs the CrowS-Pairs file.",
                        "set input = \"crows_pairs_anonymized.csv\" (`biaskit data download crows-pairs`)."))
        if reads and not set(reads) & have and not given:
            before = [m for m in STAGE_ORDER if STAGE_IO[m][1] in reads and m != n]
            add(p.error(f"stages.{n}", f"nothing gives this stage its {' or '.join(ARTIFACT_WORDS[r] for r in reads)}.",
                        f"add one of the stages {', '.join('[stages.' + b + ']' for b in before)} before it, or "
                        f"set input = \"FILE\" in [stages.{n}]."))
        for f in ([given] if isinstance(given, str) else given or []) if check_inputs else []:
            q = p.path(f)
            if not q.exists():
                add(p.error(f"stages.{n}.input", f"'{f}' does not exist (looked for {q}).",
                            "paths are relative to the project file's folder; check the name."))
        have.add(writes)
    tu = p.stage("tuples")
    if tu is not None and set(tu.identities) - set(tu.axes):
        extra = sorted(set(tu.identities) - set(tu.axes))
        add(p.error("stages.tuples.identities", f"identities are given for {', '.join(extra)}, which is not in "
                    f"axes ({', '.join(tu.axes)}).", "add it to axes, or fix the name."))
    for n in names:
        if getattr(p.stage(n), "llm", None) is not None:
            try:
                p.llm(n)
            except ValidationError as exc:
                e = exc.errors(include_url=False)[0]
                key = f"stages.{n}.llm." + ".".join(str(x) for x in e["loc"])
                add(p.error(key, e["msg"].removeprefix("Value error, ") + ".", "see [llm] in docs/pipeline.md."))
    for n in names:
        if n in ("tuples", "sentences", "antistereo", "cats") or (n == "pairs" and p.stage("pairs").llm_fallback) or (
                n in ("translate", "cat_translate") and any(e.split(":", 1)[0].strip().lower() == "llm" and ":" not in e
                                                            for e in p.stage(n).engines)):
            try:
                s = p.llm(n)
            except ValidationError:
                continue     # reported above
            if s.backend != "dummy" and not s.model:
                key = f"stages.{n}.llm" if getattr(p.stage(n), "llm", None) else "llm"
                add(p.error(key, f"the {n} stage calls an LLM but no model is named.",
                            "set model = \"MODEL\" in [llm] (the id your endpoint serves; base_url for a local "
                            "server), or backend = \"dummy\" to try offline."))
    if check_inputs:
        problems += check_resources(p)
    raise_problems(problems)


# files and folders a project's keys name: (table, key, kind) -- kind: file, dir, or text (a file when it
# names one, else the text itself: card_text, citation)
_PATH_KEYS = (("project", "inventory", "dir"), ("project", "prompts_dir", "dir"), ("llm", "prices", "file"),
              ("stages.adapt", "lexicon", "file"), ("stages.release", "previous", "dir"),
              ("stages.release", "card_text", "text"), ("stages.release", "citation", "text"))
_TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".bib", ".bibtex")


def _looks_like_path(value: str) -> bool:
    return "\n" not in value and len(value) < 400 and Path(value).suffix.lower() in _TEXT_SUFFIXES


def check_resources(p: Project) -> list[InputError]:
    """What the project's keys name exists: files and folders, each stage's own ``llm.prices``, the
    evaluate stage's models (a folder, a ``.gguf`` file, an alias, or a hub name in the offline
    cache), the tuple axes (in the inventory, unless identities are given), and the card text of a
    release (a file that exists and holds card sections). Nothing is loaded or sent."""
    out: list[InputError] = []
    for table, key, kind in _PATH_KEYS:
        if table.startswith("stages.") and p.stage(table.split(".", 1)[1]) is None:
            continue
        obj = p.config
        for part in table.split("."):
            obj = getattr(obj, part, None)
        value = getattr(obj, key, None) if obj is not None else None
        if not value:
            continue
        q = p.path(value)
        dotted = f"{table}.{key}"
        if kind == "text":
            if not _looks_like_path(value):
                continue      # the text itself
            if not q.is_file():
                out.append(p.error(dotted, f"'{value}' does not exist (looked for {q}).",
                                   "paths are relative to the project file's folder; check the name (or write "
                                   "the text itself there)."))
            elif key == "card_text":
                try:
                    from ..release.card import read_card_text

                    if not read_card_text(q):
                        out.append(p.error(dotted, f"{q} holds no card section ('## Heading' followed by text).",
                                           "write the sections people write, e.g. '## Motivation' and "
                                           "'## Known limitations' (docs/release.md lists them)."))
                except InputError as exc:
                    out.append(p.error(dotted, exc.message, exc.fix or "fix the file."))
        elif kind == "dir" and not q.is_dir():
            out.append(p.error(dotted, f"'{value}' is not a folder (looked for {q}).",
                               "paths are relative to the project file's folder; check the name."))
        elif kind == "file" and not q.is_file():
            out.append(p.error(dotted, f"'{value}' does not exist (looked for {q}).",
                               "paths are relative to the project file's folder; check the name."))
    for n in p.enabled():
        over = getattr(p.stage(n), "llm", None)
        if over is not None and over.prices and not p.path(over.prices).is_file():
            out.append(p.error(f"stages.{n}.llm.prices", f"'{over.prices}' does not exist (looked for "
                               f"{p.path(over.prices)}).", "paths are relative to the project file's folder."))
    tu = p.stage("tuples")
    if tu is not None:
        from ..inventory import load_inventory

        try:
            axes = set(load_inventory(p.path(p.config.project.inventory)).axes())
        except InputError:
            axes = None       # a missing inventory folder is reported above
        if axes is not None:
            from ..schema import normalize_bias_type

            for a in tu.axes:
                if normalize_bias_type(a) not in axes and not tu.identities.get(a):
                    out.append(p.error("stages.tuples.axes", f"axis '{a}' has no identity terms in the inventory.",
                                       f"use one of {', '.join(sorted(axes))}, or give its groups: identities = "
                                       f"{{ {a} = [\"...\"] }}."))
    for n in p.enabled():      # an LLM stage needs an endpoint: known before anything runs
        if n not in ("tuples", "sentences", "antistereo", "cats", "translate", "cat_translate") and \
                not (n == "pairs" and p.stage("pairs").llm_fallback):
            continue
        if n in ("translate", "cat_translate") and \
                not any(e.split(":", 1)[0].strip().lower() == "llm" for e in p.stage(n).engines):
            continue
        try:
            s = p.llm(n)
        except ValidationError:
            continue
        if s.backend == "openai" and not s.base_url and not os.environ.get("OPENAI_BASE_URL") \
                and not os.environ.get("OPENAI_API_KEY"):
            key = f"stages.{n}.llm" if getattr(p.stage(n), "llm", None) else "llm"
            out.append(p.error(f"{key}.base_url", f"the {n} stage sends requests to an LLM, but no endpoint is "
                               "given.", f"set base_url = \"URL\" in [{key}], the API root of an OpenAI-compatible "
                               "server (e.g. \"http://127.0.0.1:8000/v1\"; or the environment variable "
                               "OPENAI_BASE_URL); for OpenAI's API set OPENAI_API_KEY; or backend = \"dummy\" in "
                               f"[{key}] to try it offline."))
            break
        if s.base_url and s.backend == "openai":
            from ..curation.llm.openai_backend import check_base_url

            try:
                check_base_url(s.base_url)
            except BiaskitError as exc:
                key = f"stages.{n}.llm" if getattr(p.stage(n), "llm", None) and p.stage(n).llm.base_url else "llm"
                out.append(p.error(f"{key}.base_url", str(exc).split(" Fix:")[0],
                                   f"set base_url = \"URL\" in [{key}] to your server's API root, e.g. "
                                   "\"http://127.0.0.1:8000/v1\"."))
    ev = p.stage("evaluate")
    if ev is not None:
        for m in ev.models:
            why = _model_problem(p, m)
            if why:
                out.append(p.error("stages.evaluate.models", why[0], why[1]))
    return out


def _model_problem(p: Project, model: str) -> Optional[tuple[str, str]]:
    """Why ``model`` cannot be found without loading it, or None (a folder with config.json, a .gguf
    file, an alias, or a hub name in the offline cache)."""
    from ..evaluation.models import MODEL_ALIASES

    q = p.path(model)
    if q is not None and q.exists():
        if q.is_dir() and not (q / "config.json").exists():
            return (f"model folder {q} has no config.json.", "pass a folder written by save_pretrained, or a .gguf file.")
        return None
    if model.lower() in MODEL_ALIASES:
        return None
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(model, local_files_only=True)
        return None
    except Exception:  # noqa: BLE001 - any failure: not in the offline cache
        pass
    return (f"model '{model}' not found: not a path (looked for {q}), not an alias, not in the Hugging Face cache.",
            f"use an alias ({', '.join(MODEL_ALIASES.names())}), a local folder or .gguf file (relative to the "
            "project file's folder), or a hub name downloaded before.")


def init_project(directory: str | Path, *, template: str = "generate", hindi: bool = True,
                 name: Optional[str] = None) -> Path:
    """``biaskit init``: write a commented ``biaskit.toml`` into ``directory`` (never over an existing one)."""
    from ..io import atomic_open
    from .templates import project_template

    d = Path(directory)
    f = d / PROJECT_FILE
    if f.exists():
        raise InputError("a project file is already there; biaskit init never overwrites one.", path=f,
                         fix="edit it, or choose another folder.")
    if d.exists() and not d.is_dir():
        raise InputError("exists and is not a folder.", path=d, fix="choose a folder for the project.")
    name = name or re.sub(r"[^A-Za-z0-9._-]+", "-", d.resolve().name).strip("-._") or "my-benchmark"
    try:
        ProjectMeta(name=name)
    except ValidationError:
        raise InputError(f"'{name}' is not a usable project name.", fix="pass --name with letters, digits, "
                         "'.', '_' and '-'.") from None
    text = project_template(name, template=template, hindi=hindi)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{PROJECT_FILE}.new"
    with atomic_open(tmp) as fh:
        fh.write(text)
    try:
        os.link(tmp, f)   # whole, and only if no file appeared meanwhile
    except FileExistsError:
        raise InputError("a project file is already there; biaskit init never overwrites one.", path=f,
                         fix="edit it, or choose another folder.") from None
    finally:
        tmp.unlink(missing_ok=True)
    return f
