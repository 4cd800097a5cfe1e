"""``croissant.json``: a release described in Croissant 1.1 (MLCommons) with its RAI fields.

Every release carries it (``biaskit release build`` writes it before ``SHA256SUMS``). It is made from
what the build already wrote, so it describes whatever configs the release has (``pairs``, ``cats``,
``tuples``, any later one) without knowing them:

- ``distribution``: one ``cr:FileObject`` per data file of every config in the card's ``configs``
  (relative ``contentUrl``, ``sha256``) and per record file (``pairs.jsonl`` ...), and one
  ``cr:FileSet`` per config over its Parquet files;
- ``recordSet``: ``splits`` (``cr:Split``: dev = ``cr:ValidationSplit``, test = ``cr:TestSplit``) and
  one record set per config with a field per column of the card's ``dataset_info`` (all ``sc:Text``)
  plus ``split``, read from each file's path and referring to ``splits``;
- the dataset: name, the card's summary as description, version, ``datePublished``, licence (SPDX
  URL where the card's Hugging Face id has one), ``citeAs`` (the card's BibTeX), languages, keywords;
- RAI (``rai:``, Croissant RAI 1.0): the datasheet's and data statement's sections of the card, as
  written (placeholders people have not filled are left out), models and MT engines recorded on the
  records as ``rai:machineAnnotationTools``, the generation dates as ``rai:dataCollectionTimeframe``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import layout as L

CROISSANT = L.CROISSANT
CONFORMS_TO = "http://mlcommons.org/croissant/1.1"
SPLIT_URLS = {"dev": "cr:ValidationSplit", "test": "cr:TestSplit", "train": "cr:TrainingSplit"}
# The standard @context of Croissant 1.1 (mlcroissant's make_context for 1.1, with the RAI prefix).
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
# RAI property -> the card sections (datasheet, data statement) whose text it carries
RAI_SECTIONS = {
    "rai:dataCollection": ("Collection process", "Speaker demographic", "Speech situation"),
    "rai:dataPreprocessingProtocol": ("Preprocessing, cleaning and labelling",),
    "rai:annotatorDemographics": ("Annotator demographic",),
    "rai:dataUseCases": ("Uses",),
    "rai:dataBiases": ("Curation rationale",),
    "rai:dataLimitations": ("Known limitations",),
    "rai:personalSensitiveInformation": ("Composition",),
    "rai:dataSocialImpact": ("Motivation",),
    "rai:dataReleaseMaintenancePlan": ("Maintenance",),
}
RAI_LISTS = {
    "rai:dataPreprocessingProtocol",
    "rai:annotatorDemographics",
    "rai:dataUseCases",
    "rai:dataBiases",
    "rai:dataLimitations",
    "rai:personalSensitiveInformation",
    "rai:machineAnnotationTools",
}
BIASES_NOTE = (
    "The sentences state stereotypes about social groups on purpose (that is what the benchmark "
    "measures); they can be offensive or upsetting."
)
COLUMN_NOTES = {
    "id": "release id of the record (stable across versions built from the same sources)",
    "bias_type": "bias axis (gender, religion, caste, ...)",
    "direction": "stereo or antistereo",
    "target": "target term the dev/test split is made by",
    "source_id": "id of the source record",
    "sent_more": "the sentence about the more disadvantaged group",
    "sent_less": "the same sentence about the other group",
    "group_more": "group named in sent_more",
    "group_less": "group named in sent_less",
    "pair_id": "id of the language view in the validated records",
    "type": "intrasentence or intersentence",
    "context": "the CAT's context",
    "stereotype": "stereotypical option",
    "anti-stereotype": "anti-stereotypical option",
    "unrelated": "unrelated option",
    "lang": "language (BCP-47)",
    "identity": "identity term",
    "attribute": "stereotypical attribute",
    "axis": "bias axis",
    "polarity": "polarity of the attribute",
}


def sections(card: str) -> dict[str, str]:
    """``{heading: text}`` of a Markdown card (the YAML front matter left out)."""
    body = re.sub(r"^---\n.*?\n---\n", "", card, count=1, flags=re.S)
    parts = re.split(r"(?m)^#{1,4}\s+(.+?)\s*$", body)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts), 2)}


def _written(text: str) -> str:
    """A section's text without the placeholders of what people have not written yet."""
    keep = [p for p in re.split(r"\n\s*\n", text) if L.TODO_MARK not in p]
    return "\n\n".join(p.strip() for p in keep if p.strip())


def _citation(text: str) -> str | None:
    m = re.search(r"```(?:bibtex)?\n(.*?)\n```", text or "", re.S)
    return m.group(1).strip() if m else None


def license_url(hf_id: str | None) -> str | None:
    """The SPDX URL of a Hugging Face licence id where SPDX has one, else the id itself."""
    if not hf_id or hf_id == "unknown":
        return None
    from .hub import hub_licenses

    spdx = hub_licenses().get(hf_id)
    return f"https://spdx.org/licenses/{spdx}.html" if spdx else hf_id


def _split_regex(config: str) -> str:
    # idempotent: matches the file's path and the split name itself (mlcroissant applies it again on joins)
    return rf"^(?:.*/)?(?:{re.escape(config)}-)?({'|'.join(L.SPLITS)})(?:\.parquet)?$"


def _record_set(config: dict, features: list[str], fileset: str) -> dict:
    name = config["config_name"]
    src = {"fileSet": {"@id": fileset}}
    fields = [
        {
            "@type": "cr:Field",
            "@id": f"{name}/split",
            "name": "split",
            "dataType": "sc:Text",
            "description": "split of the record (the file it is read from)",
            "references": {"field": {"@id": "splits/name"}},
            "source": {**src, "extract": {"fileProperty": "fullpath"}, "transform": {"regex": _split_regex(name)}},
        }
    ]
    for f in features:
        base, _, lang = f.rpartition("_") if f.rpartition("_")[0] in COLUMN_NOTES else (f, "", "")
        note = COLUMN_NOTES.get(base, f"column {f}")
        fields.append(
            {
                "@type": "cr:Field",
                "@id": f"{name}/{f}",
                "name": f,
                "dataType": "sc:Text",
                "description": note + (f" ({lang} view; empty when the record has none)" if lang else ""),
                "source": {**src, "extract": {"column": f}},
            }
        )
    rs = {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": f"config `{name}` of the release (Hugging Face `datasets` config of the same name)",
        "field": fields,
    }
    if "id" in features:
        rs["key"] = {"@id": f"{name}/id"}
    return rs


def croissant_metadata(folder: str | Path, known_sha: dict[str, str] | None = None) -> dict[str, Any]:
    """The Croissant JSON-LD of the release folder ``folder`` (its README.md and release.json written):
    the dataset's fields, its RAI fields, its files and its record sets."""
    from ..io import read_json, sha256_file
    from .meta import card_front_matter

    folder = Path(folder)
    known = known_sha or {}
    meta = read_json(folder / L.RELEASE_JSON)
    card = (folder / L.README).read_text(encoding="utf-8")
    fm = card_front_matter(card) or {}
    secs = sections(card)
    dist, record_sets, splits_seen = _distribution(folder, fm, lambda rel: known.get(rel) or sha256_file(folder / rel))
    md = _dataset(meta, fm, card, secs)
    md.update(_rai(secs, meta.get("provenance") or {}))
    md["distribution"] = dist
    md["recordSet"] = [_splits_record_set(splits_seen), *record_sets]
    return md


def _file_object(rel: str, fmt: str, sha256: str, description: str) -> dict[str, Any]:
    return {
        "@type": "cr:FileObject",
        "@id": rel,
        "name": rel,
        "contentUrl": rel,
        "encodingFormat": fmt,
        "sha256": sha256,
        "description": description,
    }


def _distribution(folder: Path, fm: dict, sha: Callable[[str], str]) -> tuple[list[dict], list[dict], list[str]]:
    """``(files, record sets, splits)``: each config's Parquet files (a file set and a record set per
    config), then the record files; the splits in the order the configs name them."""
    features = {
        c.get("config_name"): [f["name"] for f in c.get("features") or []] for c in fm.get("dataset_info") or []
    }
    dist: list[dict] = []
    record_sets: list[dict] = []
    splits_seen: list[str] = []
    for conf in fm.get("configs") or []:
        name = conf["config_name"]
        paths = [d["path"] for d in conf.get("data_files") or []]
        splits_seen += [d["split"] for d in conf.get("data_files") or [] if d["split"] not in splits_seen]
        dist += [_file_object(rel, "application/x-parquet", sha(rel), f"config `{name}`, one split") for rel in paths]
        fileset = f"{name}-parquet-files"
        dist.append(
            {
                "@type": "cr:FileSet",
                "@id": fileset,
                "name": fileset,
                "encodingFormat": "application/x-parquet",
                "includes": paths,
                "description": f"the Parquet files of config `{name}`",
            }
        )
        record_sets.append(_record_set(conf, features.get(name) or [], fileset))
    dist += [
        _file_object(
            fn,
            "application/jsonlines",
            sha(fn),
            f"biaskit {kind} records (every field, provenance included; docs/release.md)",
        )
        for kind, fn in L.RECORD_FILES.items()
        if (folder / fn).exists()
    ]
    return dist, record_sets, splits_seen


def _splits_record_set(splits_seen: list[str]) -> dict[str, Any]:
    return {
        "@type": "cr:RecordSet",
        "@id": "splits",
        "name": "splits",
        "dataType": "cr:Split",
        "description": "the release's splits: dev and test share no target term (StereoSet §6.1)",
        "key": {"@id": "splits/name"},
        "field": [
            {"@type": "cr:Field", "@id": "splits/name", "name": "name", "dataType": "sc:Text"},
            {"@type": "cr:Field", "@id": "splits/url", "name": "url", "dataType": "sc:URL"},
        ],
        "data": [{"splits/name": sp, "splits/url": SPLIT_URLS.get(sp, "cr:Split")} for sp in splits_seen],
    }


def _dataset(meta: dict, fm: dict, card: str, secs: dict[str, str]) -> dict[str, Any]:
    """The dataset's own fields: name, description (the card's summary), version, licence, citation."""
    summary = _written(secs.get("Summary", "")) or next(
        (p for p in card.split("\n\n") if p.startswith("Version ")), f"{meta['name']} {meta['version']}"
    )
    md: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": meta["name"],
        "alternateName": fm.get("pretty_name") or meta["name"],
        "description": summary,
        "version": meta["version"],
        "datePublished": meta.get("created"),
        "inLanguage": meta.get("langs") or fm.get("language") or [],
        "keywords": fm.get("tags") or [],
        "isLiveDataset": False,
    }
    lic = license_url(meta.get("license"))
    if lic:
        md["license"] = lic
    cite = _citation(secs.get("Citation", ""))
    if cite:
        md["citeAs"] = cite
    return md


def _rai(secs: dict[str, str], prov: dict) -> dict[str, Any]:
    """The RAI fields: the card's sections people wrote, the tools that wrote text, the timeframe."""
    md: dict[str, Any] = {}
    for prop, heads in RAI_SECTIONS.items():
        texts = [t for t in (_written(secs.get(h, "")) for h in heads) if t]
        if prop == "rai:dataBiases":
            texts = [BIASES_NOTE] + texts
        if texts:
            md[prop] = texts if prop in RAI_LISTS else "\n\n".join(texts)
    tools = [f"{m} (generation)" for m in (prov.get("generation_models") or {})]
    tools += [f"{e.get('engine')} (machine translation, {e.get('lang')})" for e in prov.get("mt_engines") or []]
    if tools:
        md["rai:machineAnnotationTools"] = tools
    gb = prov.get("generated_between")
    if gb and all(gb):
        md["rai:dataCollectionTimeframe"] = [str(gb[0]), str(gb[1])]
    return md


def write_croissant(folder: str | Path, known_sha: dict[str, str] | None = None) -> Path:
    """Write ``croissant.json`` into the release folder ``folder``; returns its path."""
    from ..io import write_json

    return write_json(Path(folder) / CROISSANT, croissant_metadata(folder, known_sha))
