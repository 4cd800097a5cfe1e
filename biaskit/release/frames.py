"""A release as pandas DataFrames: ``biaskit.load_release(DIR)`` (docs/python-api.md).

Every config the card lists (``pairs``, ``cats``, ``tuples``, any later one) is read from its Parquet
files, one DataFrame per split, exactly as Hugging Face ``datasets`` loads them::

    rel = biaskit.load_release("out/demo-release")
    rel["pairs"]["test"]           # the Parquet rows: one per pair, columns per language (sent_more_hi ...)
    rel.pairs(split="test")        # one row per language view: lang, sent_more, sent_less, ...
    rel.meta["counts"]             # release.json
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import layout as L

VIEW_COLUMNS = [
    "id",
    "split",
    "lang",
    "bias_type",
    "direction",
    "target",
    "source_id",
    "pair_id",
    "sent_more",
    "sent_less",
    "group_more",
    "group_less",
]


@dataclass
class Release:
    """A loaded release: ``configs[config][split]`` DataFrames, ``meta`` (release.json), ``card`` (the
    card's YAML front matter)."""

    path: Path
    meta: dict[str, Any]
    card: dict[str, Any]
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.meta["name"]

    @property
    def version(self) -> str:
        return self.meta["version"]

    @property
    def langs(self) -> list[str]:
        return list(self.meta.get("langs") or [])

    def __getitem__(self, config: str) -> dict[str, Any]:
        try:
            return self.configs[config]
        except KeyError:
            raise InputError(
                f"this release has no config '{config}' (it has {', '.join(self.configs) or 'none'}).",
                path=self.path,
                fix="use one of the release's configs.",
            ) from None

    def frame(self, config: str = "pairs", split: str | None = None):
        """One config as one DataFrame (``split`` column added), or one split of it."""
        import pandas as pd

        parts = self[config]
        if split is not None:
            if split not in parts:
                raise InputError(
                    f"config '{config}' has no split '{split}' (it has {', '.join(parts)}).",
                    path=self.path,
                    fix=f"use split={' or split='.join(repr(s) for s in parts)}.",
                )
            parts = {split: parts[split]}
        return pd.concat([df.assign(split=sp) for sp, df in parts.items()], ignore_index=True)

    def pairs(self, split: str | None = None, lang: str | None = None):
        """The pairs with one row per language view (``VIEW_COLUMNS``): what ``evaluate_pairs`` scores."""
        import pandas as pd

        wide = self.frame("pairs", split)
        langs = [lang] if lang else [lg for lg in self.langs if f"sent_more_{lg}" in wide.columns]
        rows = []
        for lg in langs:
            if f"sent_more_{lg}" not in wide.columns:
                raise InputError(
                    f"no '{lg}' view in this release (languages: {', '.join(self.langs)}).",
                    path=self.path,
                    fix="pick one of the release's languages.",
                )
            sub = wide[wide[f"sent_more_{lg}"].notna()]
            rows.append(
                pd.DataFrame(
                    {
                        "id": sub["id"],
                        "split": sub["split"],
                        "lang": lg,
                        "bias_type": sub["bias_type"],
                        "direction": sub["direction"],
                        "target": sub["target"],
                        "source_id": sub["source_id"],
                        **{
                            c: sub[f"{c}_{lg}"]
                            for c in ("pair_id", "sent_more", "sent_less", "group_more", "group_less")
                        },
                    }
                )
            )
        out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=VIEW_COLUMNS)
        return out[VIEW_COLUMNS]

    def __repr__(self) -> str:
        shapes = "; ".join(
            f"{c}: " + ", ".join(f"{sp} {len(df)}" for sp, df in parts.items()) for c, parts in self.configs.items()
        )
        return f"Release({self.name} {self.version}, {', '.join(self.langs)}; {shapes}; {self.path})"


def load_release(path: str | Path, *, verify: bool = True) -> Release:
    """Read a release folder (``biaskit release build``) into DataFrames (see the module docstring).

    ``release.json`` and the card are checked (:mod:`.meta`), every file the card's configs name must
    lie inside the folder, and with ``verify`` (the default) ``release.json``, the card and every Parquet
    file read must have the checksum ``SHA256SUMS`` gives them: an edited release is refused, naming
    the file. ``verify=False`` loads an edited release anyway (the other checks still hold)."""
    from .meta import card_files, read_card
    from .read import check_sums, release_meta

    p = Path(path)
    meta = release_meta(p)
    card = read_card(p)
    files = card_files(p, card)
    if verify:
        check_sums(p, [p / L.RELEASE_JSON, p / L.README, *(f for _, _, f in files)])
    configs: dict[str, dict[str, Any]] = {}
    for config, split, f in files:
        configs.setdefault(config, {})[split] = _read_parquet(f, config, p / L.README)
    return Release(path=p, meta=meta, card=card, configs=configs)


def _read_parquet(f: Path, config: str, readme: Path):
    import pandas as pd
    import pyarrow as pa

    fix = "restore the release (`biaskit release verify` lists what is wrong)."
    if not f.is_file():
        rel = f.relative_to(readme.parent).as_posix()
        raise InputError(f"config '{config}' names a missing file {rel}.", path=readme, fix=fix)
    try:
        return pd.read_parquet(f)
    except (pa.ArrowException, OSError, ValueError) as exc:
        why = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise InputError(f"not a readable Parquet file ({why}).", path=f, fix=fix) from None
