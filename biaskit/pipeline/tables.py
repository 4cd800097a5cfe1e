"""The tables of ``biaskit.toml`` that are not one stage's: ``[project]``, ``[llm]`` (and a stage's own
``llm`` table), ``[labelstudio]``, and what every stage table has (:class:`StageTable`). Each stage's
own table is declared with its stage class (:mod:`.stages`), and the project file's ``[stages]``
table is made from those classes (:mod:`.project`)."""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Optional

from pydantic import Field, create_model, field_validator

from ..options import Options, option, spec_of


class Table(Options):
    """A table of biaskit.toml: unknown keys are errors; fields declared with :func:`~biaskit.options.option`
    get their choices checked ("did you mean") and their path kind (files and folders the project
    names are checked before any stage runs)."""


# ------------------------------------------------------------------------------------------ shared tables
class ProjectMeta(Table):
    """``[project]``"""

    name: str = Field(..., description="the dataset's name (release name, Label Studio project titles)")
    version: str = Field("0.1.0", description="release version X.Y.Z")
    inventory: str | None = option(None, path="in_dir", help="folder with edited inventory JSON files")
    prompts_dir: str | None = option(None, path="in_dir", help="extra folder of prompt templates (*.toml)")

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
            raise ValueError('use semantic versioning X.Y.Z, e.g. "0.1.0"')
        return v


def _llm_table(name: str, doc: str, override: bool) -> type[Table]:
    """``[llm]`` (``override``: a stage's own ``llm`` table, every key optional) from the LLM block of
    the curation commands (:class:`biaskit.curation.cli_options.LLMOptions`): one key per option, same
    type, default, checks, choices and help (``--llm`` is ``backend``; ``cache`` is ``--no-cache``
    inverted; ``--retry-failed`` is ``biaskit run``'s)."""
    from ..curation.cli_options import LLM_TOML_KEYS, LLMOptions

    fields: dict[str, Any] = {}
    for n, key in LLM_TOML_KEYS.items():
        fi = LLMOptions.model_fields[n]
        spec = spec_of(fi)
        ann: Any = Optional[str] if spec is not None and spec.path else fi.annotation  # noqa: UP045 (a runtime value pydantic reads)
        if fi.metadata:
            ann = Annotated[(ann, *fi.metadata)]
        fields[key] = (
            Optional[ann] if override else ann,  # noqa: UP045 (a runtime value pydantic reads)
            Field(None if override else fi.default, description=fi.description, json_schema_extra=spec),
        )
    fields["cache"] = (
        Optional[bool] if override else bool,  # noqa: UP045 (a runtime value pydantic reads)
        Field(None if override else True, description="read and write the response cache (false: --no-cache)"),
    )
    model = create_model(name, __base__=Table, **fields)
    model.__doc__ = doc
    return model


if TYPE_CHECKING:  # built at run time from LLMOptions' fields (_llm_table): to a type checker, each key is Any

    class LLMSettings(Table):
        def __getattr__(self, name: str) -> Any: ...

    class LLMOverride(LLMSettings): ...

else:
    LLMSettings = _llm_table(
        "LLMSettings", "``[llm]`` (and a stage's own ``llm`` table, which overrides it field by field).", override=False
    )
    LLMOverride = _llm_table(
        "LLMOverride", "A stage's ``llm`` table: any ``[llm]`` field, for this stage only.", override=True
    )


class LabelStudioSettings(Table):
    """``[labelstudio]`` (the token comes from $LABEL_STUDIO_API_KEY only)."""

    url: str | None = Field(None, description="default $LABEL_STUDIO_URL")


class StageTable(Table):
    """What every stage's table has (``[stages.NAME]``)."""

    enabled: bool = True
    input: str | None = Field(None, description="a file to read instead of the previous stage's output")

    #: a table made by :func:`~.stages.base.stage_table`: the stage's own keys (not from a command) and its
    #: own defaults where its command has none (tests/test_options.py reads both)
    own_keys: ClassVar[tuple[str, ...]] = ()
    stage_defaults: ClassVar[dict[str, Any]] = {}


class LLMStageTable(StageTable):
    """A stage that calls the LLM: its own ``llm`` table (any ``[llm]`` key) and prompt."""

    llm: LLMOverride | None = None
    prompt: str | None = Field(None, description="prompt template id (or id@version)")


def registry_name(v: str, names: list[str], what: str) -> str:
    if v.lower() in names:
        return v.lower()
    close = difflib.get_close_matches(v.lower(), names, n=1)
    raise ValueError(
        f"unknown {what} '{v}'"
        + (f" (did you mean '{close[0]}'?)" if close else "")
        + f"; use one of {', '.join(names)}"
    )
