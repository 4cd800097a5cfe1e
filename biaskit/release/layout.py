"""What a release folder holds: file names, the columns of every export, the card's required parts.

One place for the layout, shared by the builder, the reader, ``verify`` and ``diff`` (and the docs)::

    DIR/
      README.md            Hugging Face dataset card + datasheet + data statement
      release.json         name, version, date, counts, schema/biaskit versions, build commands, files
      SHA256SUMS           `sha256sum -c SHA256SUMS` format, every other file
      croissant.json       Croissant 1.1 metadata + RAI fields (biaskit.release.croissant)
      stats.json           counts, sentence lengths, vocabulary, keyness
      pairs.jsonl          biaskit ReleasePair records (one per pair, every language view merged)
      cats.jsonl           biaskit CAT records (meta.split = dev|test; a translation: source_id) [when CATs]
      tuples.jsonl         biaskit BiasTuple records (meta.split = dev|test)        [when tuples]
      data/pairs-dev.parquet, data/pairs-test.parquet     Hugging Face `datasets` configs
      data/cats-*.parquet, data/tuples-*.parquet                                    [when present]
      csv/crows-<lang>-<split>.csv                 CrowS-Pairs columns (nyu-mll/crows-pairs metric.py)
      csv/indibias-<split>.csv                     IndiBias columns (pairs with an English and a Hindi view)
      stereoset/dev.json, stereoset/test.json      StereoSet's original layout              [when CATs]
                                                   (the first CAT language: English when there is English)
      stereoset/dev.<lang>.json, test.<lang>.json  the same layout for each other language (e.g. hi)
      plots/*.png
"""

from __future__ import annotations

from biaskit.readers.pairs import INDIBIAS_REQUIRED

SPLITS = ("dev", "test")
KINDS = ("pairs", "cats", "tuples")
FORMAT_VERSION = "1"  # the folder layout (bumped when files or columns change)

README = "README.md"
RELEASE_JSON = "release.json"
SUMS = "SHA256SUMS"
CROISSANT = "croissant.json"
STATS = "stats.json"
RECORD_FILES = {"pairs": "pairs.jsonl", "cats": "cats.jsonl", "tuples": "tuples.jsonl"}
PARQUET_DIR = "data"
CSV_DIR = "csv"
STEREOSET_DIR = "stereoset"
PLOTS_DIR = "plots"


def parquet_path(kind: str, split: str) -> str:
    return f"{PARQUET_DIR}/{kind}-{split}.parquet"


def crows_csv_path(lang: str, split: str) -> str:
    from ..paths import safe_component

    return f"{CSV_DIR}/crows-{safe_component(lang, what='language code')}-{split}.csv"


def indibias_csv_path(split: str) -> str:
    return f"{CSV_DIR}/indibias-{split}.csv"


def stereoset_path(split: str, lang: str | None = None) -> str:
    """``stereoset/dev.json`` for the release's first CAT language (English when it has English CATs),
    ``stereoset/dev.hi.json`` for another language."""
    return f"{STEREOSET_DIR}/{split}.json" if lang is None else f"{STEREOSET_DIR}/{split}.{lang}.json"


# The original files' headers, column for column (the first, unnamed column is pandas' index):
# crows_pairs_anonymized.csv (nyu-mll/crows-pairs) and IndiBias_v1_sample.csv (sahoonihar/IndiBias).
CROWS_COLUMNS = [
    "",
    "sent_more",
    "sent_less",
    "stereo_antistereo",
    "bias_type",
    "annotations",
    "anon_writer",
    "anon_annotators",
]
# IndiBias' sentence columns are positional (S1, S2), not CrowS-Pairs' sent_more/sent_less: for antistereo
# rows S1 is the less stereotyping sentence (biaskit.readers.pairs.indibias_columns maps both ways).
INDIBIAS_COLUMNS = ["", "index", *INDIBIAS_REQUIRED]  # the layout the IndiBias reader requires, its index first

# Parquet columns. Pairs: one row per pair, one group of columns per language (suffix _<lang>).
PAIR_BASE_COLUMNS = ["id", "bias_type", "direction", "target", "source_id"]
PAIR_VIEW_COLUMNS = ["sent_more", "sent_less", "group_more", "group_less", "pair_id"]
CAT_COLUMNS = [
    "id",
    "type",
    "target",
    "bias_type",
    "context",
    "stereotype",
    "anti-stereotype",
    "unrelated",
    "lang",
    "source_id",
]  # source_id: the CAT a translated CAT was made from (its id in the same config)
TUPLE_COLUMNS = ["id", "identity", "attribute", "axis", "polarity", "lang"]


def pair_columns(langs) -> list[str]:
    return PAIR_BASE_COLUMNS + [f"{c}_{lg}" for lg in langs for c in PAIR_VIEW_COLUMNS]


# The card: YAML keys and headings `release verify` requires, and the marker of text a human writes.
CARD_YAML_KEYS = ("pretty_name", "license", "language", "task_categories", "size_categories", "configs", "tags")
CARD_SECTIONS = (
    "Dataset structure",
    "Datasheet",
    "Motivation",
    "Composition",
    "Collection process",
    "Preprocessing, cleaning and labelling",
    "Uses",
    "Distribution",
    "Maintenance",
    "Data statement",
    "Curation rationale",
    "Language variety",
    "Speaker demographic",
    "Annotator demographic",
    "Speech situation",
    "Text characteristics",
    "Statistics",
    "Known limitations",
    "Citation",
)
TODO_MARK = "[TO BE WRITTEN BY THE MAINTAINERS"
NOT_RECORDED = "not recorded"
