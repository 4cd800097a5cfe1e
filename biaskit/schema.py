"""The shared record schema every stage reads and writes.

Records are pydantic models; :func:`to_frame` / :func:`from_frame` convert to and from pandas
DataFrames whose columns are the model fields (nested ``provenance``/``meta`` stay dicts).

- :class:`SentencePair` — a CrowS-Pairs-style minimal pair (``sent_more`` is the sentence about the
  more disadvantaged group / the one the paper counts a preference for as bias).
- :class:`BiasTuple` — an (identity term, stereotypical attribute) tuple from curation.
- :class:`Sentence` — a generated sentence expressing one tuple (``curate sentences``).
- :class:`CAT` — a StereoSet Context Association Test: a context and three options (with the
  validators' :class:`HumanLabel` s when the source has them).
- :class:`TranslationCandidates` — one pair's machine translations awaiting blind review
  (``curate translate`` -> the ``translation`` annotation kind); :class:`CATTranslationCandidates`
  the same for a CAT (``curate cat-translate`` -> the ``cat_translation`` kind).
- :class:`Judgment` — one annotator's label on one question of one task (crowd-kit's
  ``task, worker, label`` long format, plus ``question``).

Ids are computed by :mod:`biaskit.ids` (content hashes; see there for what each id covers).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from . import ids
from .ids import normalize_text, stable_id  # noqa: F401  (part of the schema's public names)

SCHEMA_VERSION = "1"


def check_lang(v: Any) -> Any:
    """A record's language code is part of file names (a release's ``csv/crows-<lang>-<split>.csv``):
    refuse one that :func:`biaskit.paths.component_problem` refuses (``/``, zero-width or
    bidirectional-override characters, too long)."""
    from .paths import component_problem

    if isinstance(v, str):
        problem = component_problem(v, max_len=35)  # BCP 47 tags are at most 35 characters
        if problem:
            raise ValueError(f"language code {v[:40]!r} {problem}; use a code such as en, hi or hi-Latn")
        return unicodedata.normalize("NFC", v)
    return v


class Direction(str, Enum):  # noqa: UP042 (StrEnum changes str() and format() of members: not in a lint sweep)
    stereo = "stereo"
    antistereo = "antistereo"


class PairStatus(str, Enum):  # noqa: UP042 (StrEnum changes str() and format() of members: not in a lint sweep)
    raw = "raw"  # freshly read / generated
    flagged = "flagged"  # the minimal-pair checker found problems
    needs_review = "needs_review"  # sent to / returned to human review
    accepted = "accepted"  # validated by annotators
    rejected = "rejected"  # dropped by annotators or curators
    released = "released"  # part of a published dataset


_BIAS_TYPE_ALIASES = {
    "socio-economic": "socioeconomic",
    "socioeconomic-status": "socioeconomic",
    "ses": "socioeconomic",
    "race-colour": "race-color",
    "physical": "physical-appearance",
    "appearance": "physical-appearance",
    "sexual": "sexual-orientation",
    "orientation": "sexual-orientation",
}


@functools.lru_cache(maxsize=4096)
def _normalize_bias_type(v: str) -> str:
    v = unicodedata.normalize("NFKC", v).strip().lower()
    v = re.sub(r"[\s_/]+", "-", v)
    v = re.sub(r"-{2,}", "-", v).strip("-")
    return _BIAS_TYPE_ALIASES.get(v, v)


def normalize_bias_type(value: str) -> str:
    """Lower-case, trim and hyphenate a bias type: ``'Physical Appearance'`` -> ``'physical-appearance'``.

    IndiBias writes ``Caste``/``Religion`` next to ``gender``: all become lower case.
    Only spelling variants are merged (``socio-economic`` -> ``socioeconomic``); StereoSet's
    ``race`` stays distinct from CrowS-Pairs' ``race-color`` (different label sets).
    """
    return _normalize_bias_type(str(value))


_DIRECTION_ALIASES = {"antistereotype": "antistereo", "stereotype": "stereo"}
_DIRECTIONS = frozenset(d.value for d in Direction)


def normalize_direction(v: Any) -> Any:
    """``"Anti-Stereo"``, ``"anti_stereotype"`` ... -> ``"antistereo"``; ``"Stereotype"`` -> ``"stereo"``.
    Other strings come back lower-cased without ``-``/``_`` (validation rejects them); non-strings as given."""
    if v.__class__ is str and v in _DIRECTIONS:  # the common case: already canonical
        return v
    if isinstance(v, str):
        s = v.strip().lower().replace("-", "").replace("_", "")
        return _DIRECTION_ALIASES.get(s, s)
    return v


def make_pair_id(sent_more: str, sent_less: str, lang: str = "en") -> str:
    return ids.pair_id(sent_more, sent_less, lang)


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=True, populate_by_name=True, validate_default=True)

    provenance: dict[str, Any] = Field(
        default_factory=dict, description="where the record came from: source file/row, model, prompt, ..."
    )
    meta: dict[str, Any] = Field(default_factory=dict, description="free-form extra fields (kept through every stage)")


class SentencePair(Record):
    pair_id: str = ""
    sent_more: str
    sent_less: str
    direction: Direction
    bias_type: str
    lang: str = "en"
    group_more: str | None = None
    group_less: str | None = None
    status: PairStatus = PairStatus.raw
    source_id: str | None = Field(
        default=None,
        description="links language views of the same pair (IndiBias en/hi) and translations to their source",
    )

    @field_validator("sent_more", "sent_less")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        v = unicodedata.normalize("NFC", v).strip()  # v is a str: this validator runs after pydantic's
        if not v:
            raise ValueError("sentence is empty")
        return v

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, v: Any) -> Any:
        return normalize_direction(v)

    @field_validator("bias_type", mode="before")
    @classmethod
    def _bias_type(cls, v: Any) -> str:
        v = normalize_bias_type(v if v is not None else "")
        if not v:
            raise ValueError("bias_type is empty")
        return v

    @field_validator("lang", mode="before")
    @classmethod
    def _lang(cls, v: Any) -> str:
        return check_lang(str(v or "en").strip().lower())

    @model_validator(mode="after")
    def _check(self) -> SentencePair:
        # the sentences are NFC already (_non_empty): comparing their words = comparing normalize_text()
        if self.sent_more.split() == self.sent_less.split():
            raise ValueError("sent_more and sent_less are identical")
        if not self.pair_id:
            self.pair_id = make_pair_id(self.sent_more, self.sent_less, self.lang)
        return self


RELEASE_SPLITS = ("dev", "test")


class PairView(BaseModel):
    """One language's text of a released pair (inside :class:`ReleasePair`)."""

    model_config = ConfigDict(extra="forbid")
    sent_more: str
    sent_less: str
    pair_id: str = Field(description="the id this language view had in the validated records")
    group_more: str | None = None
    group_less: str | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)


class ReleasePair(Record):
    """A released minimal pair: every language view of it in one record (``views``: lang -> text).

    English and Hindi views of one pair (IndiBias' columns, or a reviewed translation whose
    ``source_id`` is the English ``pair_id``) share one ``id``, ``split``, ``bias_type``, ``direction``
    and ``target`` (the group the stereotype is about: the primary view's ``group_more``).
    :func:`release_views` turns a record back into one :class:`SentencePair` per language.
    """

    id: str
    split: Literal["dev", "test"]
    bias_type: str
    direction: Direction
    target: str
    source_id: str | None = None
    status: PairStatus = PairStatus.released
    views: dict[str, PairView]

    @model_validator(mode="after")
    def _check_views(self) -> ReleasePair:
        if not self.views:
            raise ValueError("a released pair needs at least one language view")
        nfc = unicodedata.normalize
        for lang, v in self.views.items():
            # = normalize_text(more) == normalize_text(less): joining whitespace-free words with " " is one-to-one
            if nfc("NFC", v.sent_more).split() == nfc("NFC", v.sent_less).split():
                raise ValueError(f"view '{lang}': sent_more and sent_less are identical")
        return self


def release_views(rec: ReleasePair | dict[str, Any]) -> list[dict[str, Any]]:
    """The per-language :class:`SentencePair` fields of a released record (a model or its JSON dict)."""
    d = rec.model_dump(mode="json") if hasattr(rec, "model_dump") else rec
    out = []
    for lang, v in (d.get("views") or {}).items():
        out.append(
            {
                "pair_id": v.get("pair_id") or "",
                "sent_more": v.get("sent_more"),
                "sent_less": v.get("sent_less"),
                "direction": d.get("direction"),
                "bias_type": d.get("bias_type"),
                "lang": lang,
                "group_more": v.get("group_more"),
                "group_less": v.get("group_less"),
                "status": d.get("status") or "released",
                "source_id": d.get("id"),
                "provenance": {
                    **(v.get("provenance") or {}),
                    "release_id": d.get("id"),
                    "release_split": d.get("split"),
                    "release_source_id": d.get("source_id"),
                },
                "meta": {**(v.get("meta") or {}), "target": d.get("target"), "split": d.get("split")},
            }
        )
    return out


class Polarity(str, Enum):  # noqa: UP042 (StrEnum changes str() and format() of members: not in a lint sweep)
    positive = "positive"
    negative = "negative"


class BiasTuple(Record):
    tuple_id: str = ""
    identity: str
    attribute: str
    axis: str
    polarity: Polarity
    lang: str = "en"
    status: PairStatus = PairStatus.raw

    _check_lang = field_validator("lang")(classmethod(lambda cls, v: check_lang(v)))

    @field_validator("axis", mode="before")
    @classmethod
    def _axis(cls, v: Any) -> str:
        return normalize_bias_type(v)

    @field_validator("identity", "attribute")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        v = normalize_text(v)
        if not v:
            raise ValueError("empty")
        return v

    @model_validator(mode="after")
    def _id(self) -> BiasTuple:
        if not self.tuple_id:
            self.tuple_id = ids.tuple_id(self.lang, self.axis, self.identity, self.attribute, self.polarity)
        return self


class Sentence(Record):
    """A generated sentence that expresses one tuple's stereotype (``biaskit curate sentences``)."""

    model_config = ConfigDict(extra="allow")
    sentence_id: str = ""
    sentence: str
    identity: str
    axis: str | None = None
    attribute: str | None = None
    polarity: str | None = None
    tuple_id: str | None = None
    lang: str = "en"
    status: str = "raw"  # raw | rejected (does not mention the identity) | parse_error | request_error

    _check_lang = field_validator("lang")(classmethod(lambda cls, v: check_lang(v)))

    @field_validator("sentence", "identity")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        v = unicodedata.normalize("NFC", str(v)).strip()
        if not v:
            raise ValueError("empty")
        return v

    @model_validator(mode="after")
    def _id(self) -> Sentence:
        if not self.sentence_id:
            self.sentence_id = ids.sentence_id(self.tuple_id or "", self.sentence)
        return self


CATLabel = Literal["stereotype", "anti-stereotype", "unrelated"]


class HumanLabel(BaseModel):
    """One validator's label of a CAT option (StereoSet's ``{"human_id", "label"}``, or a biaskit
    annotator's answer from ``annotate apply``). ``label`` is free text: StereoSet's validators also
    answered ``related``."""

    model_config = ConfigDict(extra="forbid")
    label: str
    annotator: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_other_shapes(cls, v: Any) -> Any:
        if isinstance(v, str):  # files written before annotator ids were kept
            return {"label": v}
        if isinstance(v, dict) and "human_id" in v:  # StereoSet's dev.json
            return {"label": v.get("label"), "annotator": v.get("human_id")}
        return v


class CATOption(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sentence: str
    gold_label: CATLabel
    sentence_id: str = ""
    source_id: str | None = Field(default=None, description="the upstream sentence id (StereoSet's), when known")
    human_labels: list[HumanLabel] = Field(default_factory=list)


class CAT(Record):
    """A StereoSet Context Association Test (intrasentence: context has ``BLANK``)."""

    cat_id: str = ""
    split: Literal["intrasentence", "intersentence"]
    target: str
    bias_type: str
    context: str
    options: list[CATOption]
    lang: str = "en"
    source_id: str | None = Field(default=None, description="the upstream example id (StereoSet's), when known")

    _check_lang = field_validator("lang")(classmethod(lambda cls, v: check_lang(v)))

    @field_validator("bias_type", mode="before")
    @classmethod
    def _bias_type(cls, v: Any) -> str:
        return normalize_bias_type(v)

    @model_validator(mode="after")
    def _check(self) -> CAT:
        labels = sorted(o.gold_label for o in self.options)
        if labels != ["anti-stereotype", "stereotype", "unrelated"]:
            raise ValueError(f"a CAT needs exactly one stereotype, anti-stereotype and unrelated option, got {labels}")
        if not self.cat_id:
            self.cat_id = ids.cat_id(
                self.lang, self.split, self.target, self.context, {o.gold_label: o.sentence for o in self.options}
            )
        for o in self.options:
            if not o.sentence_id:
                o.sentence_id = ids.cat_sentence_id(self.cat_id, o.gold_label, o.sentence)
        return self

    def option(self, label: str) -> CATOption:
        return next(o for o in self.options if o.gold_label == label)


class TranslationCandidate(BaseModel):
    """One engine's translation of a pair, with the checker's flags (``curate translate``)."""

    model_config = ConfigDict(extra="allow")  # strategy, provenance, ...
    engine: str
    model: str | None = None
    sent_more: str  # may be empty: the engine returned nothing (flag empty_translation)
    sent_less: str
    flags: list[dict[str, Any]] = Field(default_factory=list)


class PairText(BaseModel):
    model_config = ConfigDict(extra="allow")
    sent_more: str
    sent_less: str


class TranslationCandidates(BaseModel):
    """A source pair and its candidate translations: the contract between ``curate translate`` and
    the ``translation`` annotation kind. Records returned to review keep ``status`` and ``review``
    (extra fields are kept)."""

    model_config = ConfigDict(extra="allow")
    pair_id: str
    source_lang: str = "en"
    target_lang: str
    bias_type: str | None = None
    direction: str | None = None
    source: PairText
    candidates: list[TranslationCandidate]
    provenance: dict[str, Any] = Field(default_factory=dict)

    _check_lang = field_validator("source_lang", "target_lang")(classmethod(lambda cls, v: check_lang(v)))


class CATCandidate(BaseModel):
    """One engine's translation of a CAT (``curate cat-translate``): the target term, the context and
    the three options (fills of ``BLANK`` for an intrasentence CAT, sentences for an intersentence one)."""

    model_config = ConfigDict(extra="allow")  # strategy, provenance, ...
    engine: str
    model: str | None = None
    target: str = ""
    context: str = ""
    stereotype: str = ""
    anti_stereotype: str = ""
    unrelated: str = ""
    flags: list[dict[str, Any]] = Field(default_factory=list)


class CATText(BaseModel):
    model_config = ConfigDict(extra="allow")
    target: str
    context: str
    stereotype: str
    anti_stereotype: str
    unrelated: str


class CATTranslationCandidates(BaseModel):
    """A source CAT and its candidate translations: the contract between ``curate cat-translate``
    and the ``cat_translation`` annotation kind (records returned to review keep ``status`` and ``review``)."""

    model_config = ConfigDict(extra="allow")
    cat_id: str
    source_lang: str = "en"
    target_lang: str
    split: Literal["intrasentence", "intersentence"]
    bias_type: str | None = None
    target: str | None = None
    source: CATText
    candidates: list[CATCandidate]
    provenance: dict[str, Any] = Field(default_factory=dict)


class Judgment(BaseModel):
    """One annotator's answer: crowd-kit's long format plus the question it answers."""

    model_config = ConfigDict(extra="allow")
    task: str
    worker: str
    label: str | None
    question: str = "label"
    comment: str | None = None
    lead_time: float | None = None
    created_at: str | None = None
    updated_at: str | None = None


JUDGMENT_COLUMNS = ["task", "worker", "label", "question"]
PAIR_COLUMNS = list(SentencePair.model_fields)

M = TypeVar("M", bound=BaseModel)


def to_frame(records: Iterable[BaseModel]):
    """Records -> DataFrame (one column per field; enums as their values)."""
    import pandas as pd

    rows = [r.model_dump(mode="json") for r in records]
    if not rows:
        return pd.DataFrame(columns=list(getattr(records, "model_fields", {})) or None)
    return pd.DataFrame(rows)


def from_frame(df, model: type[M]) -> list[M]:
    """DataFrame -> records (NaN treated as missing)."""
    out = []
    for rec in df.to_dict(orient="records"):
        clean = {k: v for k, v in rec.items() if not (isinstance(v, float) and v != v)}
        out.append(model.model_validate(clean))
    return out


def pairs_to_frame(pairs: Sequence[SentencePair]):
    import pandas as pd

    if not pairs:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    return to_frame(pairs)
