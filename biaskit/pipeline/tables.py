"""The tables of ``biaskit.toml`` that are not one stage's: ``[project]``, ``[llm]`` (and a stage's own
``llm`` table), ``[labelstudio]``, and what every stage table has (:class:`StageTable`). Each stage's
own table is declared with its stage class (:mod:`.stages`), and the project file's ``[stages]``
table is made from those classes (:mod:`.project`)."""
from __future__ import annotations

import difflib
import re
from typing import Optional

from pydantic import Field, field_validator

from ..options import Options, option


class Table(Options):
    """A table of biaskit.toml: unknown keys are errors; fields declared with :func:`~biaskit.options.option`
    get their choices checked ("did you mean") and their path kind (files and folders the project
    names are checked before any stage runs)."""


# ------------------------------------------------------------------------------------------ shared tables
class ProjectMeta(Table):
    """``[project]``"""

    name: str = Field(..., description="the dataset's name (release name, Label Studio project titles)")
    version: str = Field("0.1.0", description="release version X.Y.Z")
    inventory: Optional[str] = option(None, path="in_dir", help="folder with edited inventory JSON files")
    prompts_dir: Optional[str] = option(None, path="in_dir", help="extra folder of prompt templates (*.toml)")

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


class LLMSettings(Table):
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
    prices: Optional[str] = option(None, path="in_file", help="model prices (TOML or JSON)")
    timeout: float = Field(120.0, gt=0)
    cache: bool = True

    @field_validator("backend")
    @classmethod
    def _backend(cls, v: str) -> str:
        from ..curation.llm import LLMS

        return registry_name(v, LLMS.names(), "LLM backend")

    @field_validator("response_format")
    @classmethod
    def _fmt(cls, v: str) -> str:
        from ..curation.llm import FORMAT_MODES

        return registry_name(v, ["auto", *FORMAT_MODES], "response format")


class LLMOverride(Table):
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


class LabelStudioSettings(Table):
    """``[labelstudio]`` (the token comes from $LABEL_STUDIO_API_KEY only)."""

    url: Optional[str] = Field(None, description="default $LABEL_STUDIO_URL")



class StageTable(Table):
    """What every stage's table has (``[stages.NAME]``)."""


    enabled: bool = True
    input: Optional[str] = Field(None, description="a file to read instead of the previous stage's output")


class LLMStageTable(StageTable):
    """A stage that calls the LLM: its own ``llm`` table (any ``[llm]`` key) and prompt."""


    llm: Optional[LLMOverride] = None
    prompt: Optional[str] = Field(None, description="prompt template id (or id@version)")


def registry_name(v: str, names: list[str], what: str) -> str:
    if v.lower() in names:
        return v.lower()
    close = difflib.get_close_matches(v.lower(), names, n=1)
    raise ValueError(f"unknown {what} '{v}'" + (f" (did you mean '{close[0]}'?)" if close else "")
                     + f"; use one of {', '.join(names)}")
