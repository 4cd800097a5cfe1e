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


def load_release(path: str | Path) -> Release:
    """Read a release folder (``biaskit release build``) into DataFrames (see the module docstring)."""
    import pandas as pd

    from .read import release_meta
    from .verify import card_front_matter

    p = Path(path)
    meta = release_meta(p)
    readme = p / L.README
    card = card_front_matter(readme.read_text(encoding="utf-8")) if readme.exists() else None
    if not card or not card.get("configs"):
        raise InputError(
            "the dataset card lists no configs.", path=readme, fix="rebuild the release with `biaskit release build`."
        )
    configs: dict[str, dict[str, Any]] = {}
    for conf in card["configs"]:
        parts = {}
        for df in conf.get("data_files") or []:
            f = p / str(df["path"])
            if not f.is_file():
                raise InputError(
                    f"config '{conf['config_name']}' names a missing file {df['path']}.",
                    path=readme,
                    fix="restore the release (`biaskit release verify` lists what is wrong).",
                )
            parts[df["split"]] = pd.read_parquet(f)
        configs[conf["config_name"]] = parts
    return Release(path=p, meta=meta, card=card, configs=configs)
