"""A release folder's own metadata files, each read by one validating loader (issue 28).

- ``release.json``: :func:`read_release_json` (:class:`ReleaseJson`: ``name`` and ``version`` are
  strings, ``counts`` integers per kind, split and language, ``data_files`` SHA-256 strings, ``rows``
  integers);
- the dataset card's YAML front matter (``README.md``): :func:`read_card` (:class:`Card`: ``configs``
  a list of ``config_name`` + ``data_files`` of ``split``/``path`` strings, ``license`` a string or a
  list of strings, ``language`` strings);
- ``croissant.json``: :func:`read_croissant` (:class:`Croissant`: an object whose ``distribution`` is
  a list of objects with string ``contentUrl`` / ``sha256``).

Types are strict (a count written ``"6"``, a ``name`` written ``12`` is refused, not converted); a file
or field that does not fit is one :class:`~biaskit.errors.InputError` naming the file, the field and
the fix. Fields biaskit does not read are kept as they are. A path one of these files names is read
only through :func:`biaskit.paths.inside` (:func:`card_files`, :func:`croissant_files`): never outside
the release folder. ``release verify`` reports the same errors as problems; ``load_release``,
``release export`` and the evaluators stop on them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import InputError
from . import layout as L

REBUILD = "rebuild the release with `biaskit release build` ({what} is written by the build, never by hand)."


class _Strict(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, populate_by_name=True)


class KindCounts(_Strict):
    """``counts.<kind>`` of release.json."""

    records: int
    by_split: dict[str, int] = Field(default_factory=dict)
    targets: int | None = None
    targets_by_split: dict[str, int] = Field(default_factory=dict)
    by_split_lang: dict[str, dict[str, int]] = Field(default_factory=dict)


class ReleaseJson(_Strict):
    name: str = Field(min_length=1)
    version: str = Field(min_length=1)
    created: str | None = None
    protocol: str | None = None
    license: str | None = None
    langs: list[str] = Field(default_factory=list)
    counts: dict[str, KindCounts] = Field(default_factory=dict)
    data_files: dict[str, str] = Field(default_factory=dict)
    rows: dict[str, int] = Field(default_factory=dict)


class DataFile(_Strict):
    split: str = Field(min_length=1)
    path: str = Field(min_length=1)


class CardConfig(_Strict):
    config_name: str = Field(min_length=1)
    data_files: list[DataFile] = Field(default_factory=list)
    default: bool = False


class Card(_Strict):
    """The card's YAML front matter as biaskit writes it (a Hugging Face dataset card)."""

    configs: list[CardConfig] = Field(default_factory=list)
    license: Any = None
    language: Any = None
    pretty_name: str | None = None

    @field_validator("license", "language")
    @classmethod
    def _names(cls, v: Any) -> Any:
        if v is None or isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            return v
        raise ValueError("must be a string or a list of strings")


class CroissantEntry(_Strict):
    type: str | None = Field(default=None, alias="@type")
    contentUrl: str | None = None  # Croissant's field name
    sha256: str | None = None


class Croissant(_Strict):
    distribution: list[CroissantEntry] = Field(default_factory=list)


def _validated(model: type[BaseModel], obj: Any, path: Path, what: str) -> Any:
    """``obj`` checked against ``model`` (the object itself is returned: extras kept as written)."""
    from ..readers import first_error

    fix = REBUILD.format(what=path.name)
    if not isinstance(obj, dict):
        raise InputError(f"not a {what}: a JSON object is expected, not a {type(obj).__name__}.", path=path, fix=fix)
    try:
        model.model_validate(obj)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise InputError(f"not a valid {what}: {msg}.", path=path, column=loc, fix=fix) from None
    return obj


def check_links(folder: str | Path) -> None:
    """A release folder holds no symbolic link that leads out of it (a file read by its fixed name,
    ``pairs.jsonl``, would otherwise be read from elsewhere): refused, naming the link."""
    import os

    from ..paths import inside

    root = Path(folder)
    for d, dirs, files in os.walk(root):  # links are not followed: each is checked where it is
        for name in dirs + files:
            f = Path(d) / name
            if f.is_symlink():
                rel = f.relative_to(root).as_posix()
                inside(root, rel, what="symbolic link", path=f, fix="replace the link by the file itself.")


def read_release_json(folder: str | Path) -> dict[str, Any]:
    """``release.json`` of a release folder, checked (see the module docstring)."""
    from ..io import read_json

    f = Path(folder) / L.RELEASE_JSON
    return _validated(ReleaseJson, read_json(f, fix=REBUILD.format(what=L.RELEASE_JSON)), f, "release.json")


def card_front_matter(text: str) -> dict | None:
    """The YAML front matter of a card's text (``---`` ... ``---``), or None when it has none or it does
    not parse as a mapping."""
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    if not m:
        return None
    import yaml

    try:
        obj = yaml.safe_load(m.group(1))
    except yaml.YAMLError:
        return None
    return obj if isinstance(obj, dict) else None


def check_card(front_matter: dict, path: Path) -> dict:
    """A card's front matter checked against :class:`Card` (returned as it is)."""
    return _validated(Card, front_matter, path, "dataset card front matter")


def read_card(folder: str | Path) -> dict[str, Any]:
    """The card's front matter (``README.md``), checked; a card without one, or without configs, is refused."""
    from ..readers import read_text

    f = Path(folder) / L.README
    fix = REBUILD.format(what="the card")
    if not f.is_file():
        raise InputError("missing: the dataset card.", path=f, fix=fix)
    fm = card_front_matter(read_text(f))
    if fm is None:
        raise InputError("no YAML front matter (--- ... ---) a Hugging Face dataset card needs.", path=f, fix=fix)
    check_card(fm, f)
    if not fm.get("configs"):
        raise InputError("the dataset card lists no configs.", path=f, fix=fix)
    return fm


def card_files(folder: str | Path, card: dict) -> list[tuple[str, str, Path]]:
    """``(config, split, file)`` of every data file the card's configs name, each inside the folder."""
    from ..paths import inside

    f = Path(folder) / L.README
    out = []
    for i, conf in enumerate(card.get("configs") or []):
        for j, df in enumerate(conf.get("data_files") or []):
            p = inside(
                folder,
                df.get("path"),
                what="data file",
                path=f,
                column=f"configs.{i}.data_files.{j}.path",
                fix=REBUILD.format(what="the card"),
            )
            out.append((str(conf["config_name"]), str(df["split"]), p))
    return out


def read_croissant(folder: str | Path) -> dict[str, Any]:
    """``croissant.json``, checked (see the module docstring)."""
    from ..io import read_json

    f = Path(folder) / L.CROISSANT
    return _validated(Croissant, read_json(f, fix=REBUILD.format(what=L.CROISSANT)), f, "croissant.json")


def croissant_files(folder: str | Path, md: dict) -> list[tuple[str, str | None, Path]]:
    """``(contentUrl, sha256, file)`` of every ``cr:FileObject`` of croissant.json, each inside the folder."""
    from ..paths import inside

    f = Path(folder) / L.CROISSANT
    out = []
    for i, d in enumerate(md.get("distribution") or []):
        if d.get("@type") != "cr:FileObject":
            continue
        url = d.get("contentUrl")
        p = inside(
            folder,
            url,
            what="contentUrl",
            path=f,
            column=f"distribution.{i}.contentUrl",
            fix=REBUILD.format(what=L.CROISSANT),
        )
        out.append((str(url), d.get("sha256"), p))
    return out
