"""What the Hugging Face Hub would reject in a release folder (``release build --hub-ready``,
``release verify --hub-ready``).

The folder is uploaded unchanged (``hf upload USER/NAME DIR . --repo-type dataset``, docs/release.md),
so what is checked is the folder itself, offline:

- the card's YAML parses as a Hub dataset card (``huggingface_hub.DatasetCard`` /
  ``DatasetCardData``) and its ``configs`` as ``datasets`` reads them (``MetadataConfigs``: split names
  ``\\w+(\\.\\w+)*``, one ``split``/``path`` per entry); config names have none of
  ``<>:/\\|?*`` (``datasets``' builder refuses them) and are unique;
- ``license`` is one of the Hub's licence ids (``data/hub_licenses.json``, from the Hub's
  documentation); ``other`` needs ``license_name`` and a LICENSE file. biaskit also refuses
  ``unknown`` (the Hub takes it, but a dataset without a licence cannot be reused);
- ``language`` holds language codes (ISO 639-1/2/3, optionally with a region or script subtag);
- file sizes and counts: no file over 500 GB (the Hub's hard limit per file; 200 GB is its
  recommended largest), no folder with more than 10,000 entries, fewer than 100,000 files.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..options import say, tell
from . import layout as L

MAX_FILE_BYTES = 500 * 10**9  # "no single file will exceed 500GB" (Hub docs, storage limits)
RECOMMENDED_FILE_BYTES = 200 * 10**9  # "chunks <200GB"
MAX_FOLDER_ENTRIES = 10_000  # "cannot exceed 10k files per folder"
MAX_FILES = 100_000  # "keeping the total number of files under 100k"
BAD_CONFIG_CHARS = r"<>:/\|?*"  # datasets.naming.INVALID_WINDOWS_CHARACTERS_IN_PATH
_LANG_RE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")


@functools.lru_cache(maxsize=1)
def hub_licenses() -> dict[str, str | None]:
    """``{Hub licence id: SPDX id or None}`` (data/hub_licenses.json)."""
    import json
    from importlib import resources

    text = resources.files("biaskit.data").joinpath("hub_licenses.json").read_text(encoding="utf-8")
    return json.loads(text)["licenses"]


def license_problem(license: str | None) -> str | None:
    """Why the Hub (or biaskit's --hub-ready) refuses this licence id, or None."""
    if not license or license == "unknown":
        return (
            "no licence: the Hub takes `unknown`, but a dataset without a licence cannot be reused. "
            f"Fix: {tell('license', 'cc-by-sa-4.0')} (a Hub licence id)."
        )
    ids = hub_licenses()
    if license not in ids:
        import difflib

        close = difflib.get_close_matches(license.lower(), list(ids), n=3)
        return (
            f"'{license}' is not a Hugging Face Hub licence id"
            + (f" (did you mean {', '.join(close)}?)" if close else "")
            + f". Fix: {tell('license')} with an id from the Hub's list (data/hub_licenses.json), e.g. cc-by-4.0."
        )
    return None


def check_license(license: str | None) -> None:
    """Refuse a licence the Hub would not take, before any work (``build --hub-ready``)."""
    why = license_problem(license)
    if why:
        from ..errors import BiaskitError

        raise BiaskitError(f"{say('license', license or '(none)')}: {why}")


def config_name_problem(name: str) -> str | None:
    if not name or any(c in BAD_CONFIG_CHARS for c in name) or name != name.strip():
        return (
            f"config name {name!r} is not one the Hub and `datasets` accept (no {BAD_CONFIG_CHARS}, no spaces around)"
        )
    return None


def hub_problems(folder: str | Path) -> list[str]:
    """Every reason the Hub would reject the release folder as it is (empty when ready): the card's front
    matter, then what the Hub reads of the card (licence, languages, configs), then the folder's sizes."""
    folder = Path(folder)
    out: list[str] = []
    card_path = folder / L.README
    if not card_path.exists():
        return [str(InputError("missing: the dataset card.", path=card_path, fix="rebuild the release."))]
    from huggingface_hub import DatasetCard

    from ..readers import read_text
    from .meta import card_front_matter, check_card

    try:  # the front matter's structure and types first (a config given as a string, a licence of lists)
        fm = card_front_matter(read_text(card_path))
        if fm is not None:
            check_card(fm, card_path)
    except InputError as exc:
        return [str(exc)]

    def add(
        msg: str, path: Path = card_path, fix: str = "rebuild the release (`biaskit release build --hub-ready`)."
    ) -> None:
        out.append(str(InputError(msg, path=path, fix=fix)))

    try:
        card = DatasetCard.load(card_path, ignore_metadata_errors=False)
    except Exception as exc:  # the card's YAML does not parse, or a field has the wrong type
        add(f"not a valid Hub dataset card ({type(exc).__name__}: {str(exc).splitlines()[0][:160]}).")
        return out
    data = card.data.to_dict()
    _license_problems(data, folder, add)
    _language_problems(data, add)
    _config_problems(card, data, add)
    _size_problems(folder, add)
    return out


def _license_problems(data: dict, folder: Path, add: Callable[..., None]) -> None:
    """A licence id the Hub does not know; ``other`` without its name or LICENSE file."""
    why = license_problem(data.get("license") if isinstance(data.get("license"), str) else None)
    if isinstance(data.get("license"), list):
        bad = [x for x in data["license"] if x not in hub_licenses()]
        why = f"licence ids {bad} are not Hub licence ids." if bad else None
    if why:
        msg, _, fix = why.partition(" Fix: ")
        add(msg, fix=fix or f"{tell('license')} with a Hub licence id.")
    if data.get("license") == "other":
        if not data.get("license_name"):
            add("license is 'other' without license_name.", fix="pass a licence id from the Hub's list instead.")
        if not (folder / "LICENSE").exists():
            add("license is 'other' but the folder has no LICENSE file.", fix="pass a Hub licence id instead.")


def _language_problems(data: dict, add: Callable[..., None]) -> None:
    for lg in data.get("language") or []:
        if not isinstance(lg, str) or not _LANG_RE.match(lg):
            add(
                f"language {lg!r} is not a language code (ISO 639-1/2/3, e.g. en, hi).",
                fix="rebuild from records with plain language codes.",
            )


def _config_problems(card: Any, data: dict, add: Callable[..., None]) -> None:
    """Configs the Hub's `datasets` cannot read, a config name it refuses, a name given twice."""
    try:
        from datasets.utils.metadata import MetadataConfigs

        MetadataConfigs.from_dataset_card_data(card.data)
    except Exception as exc:
        add(f"the card's configs are not what the Hub reads ({str(exc).strip().splitlines()[0][:160]}).")
    names = [c.get("config_name") for c in data.get("configs") or []]
    for n in names:
        p = config_name_problem(str(n) if n is not None else "")
        if p:
            add(p + ".")
    if len(names) != len(set(names)):
        add("the card names a config twice.")


def _size_problems(folder: Path, add: Callable[..., None]) -> None:
    """Too many entries in a folder, a file too large, too many files."""
    n_files = 0
    for root, dirs, files in os.walk(folder):
        n_files += len(files)
        if len(dirs) + len(files) > MAX_FOLDER_ENTRIES:
            add(
                f"{len(dirs) + len(files)} entries in one folder (the Hub takes at most {MAX_FOLDER_ENTRIES:,}).",
                path=Path(root),
                fix="split the release into fewer, larger files.",
            )
        for f in files:
            size = (Path(root) / f).stat().st_size
            if size > MAX_FILE_BYTES:
                add(
                    f"{size / 1e9:.1f} GB: the Hub refuses files over {MAX_FILE_BYTES // 10**9} GB.",
                    path=Path(root) / f,
                    fix="split the data into smaller files.",
                )
    if n_files >= MAX_FILES:
        add(
            f"{n_files:,} files (the Hub asks for fewer than {MAX_FILES:,}).",
            path=folder,
            fix="merge records into fewer files.",
        )
