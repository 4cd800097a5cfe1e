"""The release's ``README.md``: a Hugging Face dataset card that is also a datasheet (Gebru et al.,
2021) and a data statement (Bender & Friedman, 2018).

Everything the pipeline recorded is filled in (counts, splits, sources, generation models and prompt
versions, MT engines and win rates, annotators and agreement per stage, retention, flags, statistics).
What it did not record is written as "not recorded"; what only people can say (motivation, funding,
annotator demographics, the speech situation, maintenance) is a marked placeholder,
``[TO BE WRITTEN BY THE MAINTAINERS: ...]``, that ``biaskit release verify`` lists as a warning.
Maintainers write those sections once in a Markdown file (``--card-text``: ``## Heading`` then the
text) and every later build puts them in place.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..options import say
from ..tables import md_table, num
from .layout import NOT_RECORDED, TODO_MARK

SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)


def size_category(n: int) -> str:
    for limit, name in SIZE_CATEGORIES:
        if n < limit:
            return name
    return "n>10M"


def todo(what: str) -> str:
    return f"{TODO_MARK}: {what}]"


def read_card_text(path: str | Path | None) -> dict[str, str]:
    """``{heading (lower case): text}`` from a Markdown file of ``## Heading`` sections."""
    if not path:
        return {}
    from ..errors import InputError

    p = Path(path)
    if not p.exists():
        raise InputError("file not found.", path=p, fix=f"check the path ({say('card_text')}).")
    from ..readers import read_text

    text = read_text(p)
    parts = re.split(r"(?m)^#{2,4}\s+(.+?)\s*$", text)
    out = {}
    for i in range(1, len(parts), 2):
        out[parts[i].strip().lower()] = parts[i + 1].strip()
    if not out:
        raise InputError(
            "no '## Heading' sections found.",
            path=p,
            fix="write each section as '## Motivation' (a heading of the card) followed by its text.",
        )
    return out


def _q(s: Any) -> str:
    return json.dumps(s, ensure_ascii=False)


def _yaml(meta: dict[str, Any]) -> str:
    """Front matter (a JSON-compatible subset of YAML, so any YAML parser reads it)."""
    lines = ["---"]
    for k in (
        "pretty_name",
        "license",
        "language",
        "multilinguality",
        "task_categories",
        "task_ids",
        "size_categories",
        "tags",
    ):
        v = meta.get(k)
        if v is None:
            continue
        if isinstance(v, list):
            lines.append(f"{k}:")
            lines += [f"- {_q(x)}" for x in v]
        else:
            lines.append(f"{k}: {_q(v)}")
    lines.append("configs:")
    for c in meta["configs"]:
        lines.append(f"- config_name: {c['name']}")
        if c.get("default"):
            lines.append("  default: true")
        lines.append("  data_files:")
        for sp, path in c["data_files"].items():
            lines.append(f"  - split: {sp}")
            lines.append(f"    path: {path}")
    lines.append("dataset_info:")
    for c in meta["configs"]:
        lines.append(f"- config_name: {c['name']}")
        lines.append("  features:")
        for f in c["features"]:
            lines.append(f"  - name: {_q(f)}")
            lines.append("    dtype: string")
        lines.append("  splits:")
        for sp, info in c["splits"].items():
            lines.append(f"  - name: {sp}")
            lines.append(f"    num_bytes: {int(info['num_bytes'])}")
            lines.append(f"    num_examples: {int(info['num_examples'])}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def _fmt(x: Any, nd: int = 3) -> str:
    return num(x, nd, missing=NOT_RECORDED)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    return md_table(header, rows, fmt=_fmt)


def render_card(ctx: dict[str, Any], human: dict[str, str] | None = None) -> str:
    """The card's text from the build context (see :func:`biaskit.release.build.build_release`): the YAML
    header, the introduction, the structure, the datasheet, the data statement, statistics, limitations
    and citation, each section from its own function; ``human``: the sections people wrote
    (:func:`read_card_text`)."""
    o = ctx["options"]
    sec = _Sections(human or {})
    kinds_txt = ", ".join(f"{c['records']} {k}" for k, c in ctx["counts"].items())
    parts: list[str] = [_yaml(_card_meta(ctx)), f"# {o.get('pretty_name') or o['name']}\n", *_intro(ctx, kinds_txt)]
    parts.append(sec("Summary", "", "what the dataset measures and for whom, in two or three sentences.", 2))
    parts.append(sec("Dataset structure", _structure(ctx), None, 2))
    parts += _datasheet(ctx, sec, kinds_txt)
    parts += _data_statement(ctx, sec)
    parts += _closing(ctx, sec)
    return "\n".join(parts)


class _Sections:
    """``sec(title, auto, ask, level)``: a section of the card: what the build computed (``auto``), then
    what people wrote under that heading (``--card-text``), else a placeholder asking for it (``ask``)."""

    def __init__(self, human: dict[str, str]):
        self.human = human

    def __call__(self, title: str, auto: str, ask: str | None = None, level: int = 3) -> str:
        text = self.human.get(title.lower())
        body = auto.strip()
        if text:
            body = (body + "\n\n" if body else "") + text
        elif ask:
            body = (body + "\n\n" if body else "") + todo(ask)
        return f"{'#' * level} {title}\n\n{body}\n"


def _card_meta(ctx: dict[str, Any]) -> dict[str, Any]:
    """The card's YAML header (the Hub's dataset card metadata)."""
    o, langs, counts = ctx["options"], ctx["langs"], ctx["counts"]
    n_total = sum(counts[k]["records"] for k in counts)
    return {
        "pretty_name": o.get("pretty_name") or o["name"],
        "license": o.get("license") or "unknown",
        "language": langs,
        "multilinguality": "monolingual" if len(langs) == 1 else "multilingual",
        "task_categories": ["text-classification"],
        "task_ids": ["text-scoring"],
        "size_categories": [size_category(n_total)],
        "tags": ["bias-evaluation", "stereotypes", "social-bias"]
        + (["minimal-pairs"] if "pairs" in counts else [])
        + (["stereoset"] if "cats" in counts else [])
        + ["biaskit"],
        "configs": ctx["configs"],
    }


def _intro(ctx: dict[str, Any], kinds_txt: str) -> list[str]:
    """What the release is, and the evaluation protocol it records."""
    o = ctx["options"]
    parts = [
        f"Version {o['version']} of `{o['name']}` ({o['created']}): {kinds_txt} in {', '.join(ctx['langs'])}, "
        f"split into `dev` and `test` with no target term in both (StereoSet §6.1). Built with biaskit "
        f"{ctx['biaskit_version']} from the records and stage reports listed under *Collection process*; "
        "`release.json` records the command that built it (this machine's paths shortened, secrets masked).\n"
    ]
    if o.get("protocol"):
        parts.append(
            f"Evaluation protocol: `{o['protocol']}` (`biaskit evaluate` scores this release the way that "
            "paper did unless told otherwise; docs/fidelity.md).\n"
        )
    return parts


def _structure(ctx: dict[str, Any]) -> str:
    """Splits per kind and language, the files, and how to load and score the release."""
    langs, counts = ctx["langs"], ctx["counts"]
    rows = []
    for kind, c in counts.items():
        for sp in ("dev", "test"):
            rows.append(
                [kind, sp, c["by_split"].get(sp, 0), c["targets_by_split"].get(sp, 0)]
                + [c["by_split_lang"].get(sp, {}).get(lg, 0) for lg in langs]
            )
    files = "\n".join(f"- `{f}`: {d}" for f, d in ctx["file_notes"].items())
    return (
        "Splits (records, target terms, and language views per split):\n\n"
        + _table(["kind", "split", "records", "targets"] + [f"{lg} views" for lg in langs], rows)
        + "\n\n"
        + _split_shares(ctx.get("split_report") or {}, ctx["options"])
        + " There is no training split: like StereoSet, the data is for measuring models, not for training "
        "them.\n\nFiles:\n\n"
        + files
        + '\n\nLoad it with `datasets.load_dataset("path/to/this/folder")` (configs: '
        + ", ".join(f"`{c['name']}`" for c in ctx["configs"])
        + "), or score a model on it with "
        "`biaskit evaluate pairs --data DIR --split test --lang LANG --model MODEL --out OUT`. The CSV files "
        "in `csv/` keep the original CrowS-Pairs and IndiBias columns so that their scripts run unchanged."
    )


def _datasheet(ctx: dict[str, Any], sec: _Sections, kinds_txt: str) -> list[str]:
    """The datasheet's sections (Gebru et al., 2021)."""
    o = ctx["options"]
    sums = ", ".join(f"`{f}` {s[:16]}…" for f, s in ctx["data_sha256"].items())
    return [
        "## Datasheet\n\nFollowing *Datasheets for Datasets* (Gebru et al., 2021).\n",
        sec(
            "Motivation",
            "",
            "for what purpose was the dataset created; who created it, on behalf of whom, and who funded it?",
        ),
        sec(
            "Composition",
            _composition(ctx, kinds_txt),
            "is any information missing from instances, are there "
            "known errors or redundancies, does the data identify "
            "people?",
        ),
        sec(
            "Collection process",
            _collection(ctx["history"], ctx["provenance"]),
            "who took part in the collection (students, crowd workers, experts), how were they "
            "recruited and paid, over what timeframe, and was there an ethical review?",
        ),
        sec("Preprocessing, cleaning and labelling", _cleaning(ctx["history"], ctx), None),
        sec(
            "Uses",
            "Intended: measuring social bias in language models (CrowS-Pairs / IndiBias bias "
            "scores on minimal pairs, StereoSet LMS/SS/ICAT on CATs) on the `test` split, with "
            "`dev` for any choices made before (prompts, thresholds). Not intended: training "
            "or fine-tuning models, or judging individuals.",
            "other tasks the dataset has been or could be used for, and uses to avoid.",
        ),
        sec(
            "Distribution",
            f"License: {o.get('license') or NOT_RECORDED}. Version {o['version']}; "
            f"`SHA256SUMS` lists every file (`sha256sum -c SHA256SUMS`); data files: "
            f"{sums}.",
            "where and how the dataset is distributed (hub repository, DOI), and any restrictions."
            if not o.get("license")
            else None,
        ),
        sec(
            "Maintenance",
            "Versions are compared record by record with "
            "`biaskit release diff OLD NEW` (added, removed and changed ids).",
            "who maintains the dataset, how to contact them, how errata are reported and how often it is updated.",
        ),
    ]


def _composition(ctx: dict[str, Any], kinds_txt: str) -> str:
    """What an instance is, the pairs per bias type and direction, the target terms."""
    comp = [
        f"Instances: {kinds_txt}. A minimal pair is two sentences that differ only in the group they mention; "
        "`sent_more` is about the more disadvantaged group, and `direction` says whether it states "
        "(`stereo`) or violates (`antistereo`) a stereotype. Every language view of a pair is one record "
        "(`views` in `pairs.jsonl`, `*_en`/`*_hi` columns in the Parquet files).",
        "The data states stereotypes about social groups on purpose: it can be offensive or upsetting.",
    ]
    stats, langs = ctx["stats"], ctx["langs"]
    if "pairs" in stats:
        bt: dict[tuple[str, str], dict[str, int]] = {}
        for r in stats["pairs"]["counts"]:
            key = (r["bias_type"], r["direction"])
            bt.setdefault(key, {}).setdefault(r["lang"], 0)
            bt[key][r["lang"]] += r["n"]
        comp.append(
            "Pairs per bias type and direction (language views):\n\n"
            + _table(
                ["bias type", "direction"] + langs,
                [[b, d] + [v.get(lg, 0) for lg in langs] for (b, d), v in sorted(bt.items())],
            )
        )
    comp.append(f"Target terms: {ctx['n_targets']} ({ctx['targets_from']}).")
    return "\n\n".join(comp)


def _data_statement(ctx: dict[str, Any], sec: _Sections) -> list[str]:
    """The data statement's sections (Bender & Friedman, 2018)."""
    gb = ctx["provenance"].get("generated_between")
    return [
        "## Data statement\n\nFollowing *Data Statements for NLP* (Bender & Friedman, 2018).\n",
        sec(
            "Curation rationale",
            "Records were kept when they were validated (status `accepted` from "
            "`biaskit annotate apply`, or read from a published dataset) and not "
            "flagged by the minimal-pair checker; see *Preprocessing*.",
            "why these texts, groups and bias types were chosen.",
        ),
        sec(
            "Language variety",
            "BCP-47: " + ", ".join(ctx["langs"]) + ".",
            "the variety of each language (e.g. en-IN Indian English, hi-Deva standard Hindi).",
        ),
        sec(
            "Speaker demographic",
            _speakers(ctx["provenance"]),
            "who wrote the texts (age, gender, native language, region) where people did.",
        ),
        sec(
            "Annotator demographic",
            _annotators(ctx["history"], ctx["provenance"]),
            "annotators' age, gender, native language, region, training and pay.",
        ),
        sec(
            "Speech situation",
            (f"Generated between {gb[0]} and {gb[1]}." if gb else ""),
            "when and where the texts were written, for what audience, spontaneous or edited.",
        ),
        sec("Text characteristics", _text_chars(ctx["stats"]), None),
    ]


def _speakers(prov: dict[str, Any]) -> str:
    """Who wrote the released text, from the records' provenance."""
    speakers = []
    wb = [w for w in prov.get("written_by") or [] if w.get("written_by") != NOT_RECORDED]
    if wb:
        speakers.append(
            "Who wrote the released text, from each record's provenance:\n\n"
            + _table(["lang", "written by", "views"], [[w["lang"], w["written_by"], w["records"]] for w in wb])
        )
    if prov.get("crowd_writers"):
        speakers.append(f"{prov['crowd_writers']} pseudonymous crowd writers (CrowS-Pairs `anon_writer`).")
    if prov.get("mt_engines") and not wb:
        speakers.append(
            "Translations by "
            + ", ".join(f"{e['engine']} ({e['released']} {e['lang']} views)" for e in prov["mt_engines"])
            + ", reviewed by people."
        )
    return " ".join(speakers) or f"Writers: {NOT_RECORDED}."


def _annotators(hist: dict[str, Any], prov: dict[str, Any]) -> str:
    """The annotators per stage (counts; they are pseudonymous)."""
    ann = [f"{a['label']}: {a['n_annotators']} annotators" for a in hist["agreement"]]
    if prov.get("translation_reviewers"):
        ann.append(f"translation review: {prov['translation_reviewers']} reviewers")
    ann += [_people_per_record(v) for v in prov.get("validation") or []]
    return ("Annotators per stage (pseudonymous): " + "; ".join(ann) + ".") if ann else f"Annotators: {NOT_RECORDED}."


def _closing(ctx: dict[str, Any], sec: _Sections) -> list[str]:
    """Statistics (and plots), known limitations, citation."""
    plots = "\n".join(f"![{Path(p).stem}]({p})" for p in ctx["plots"])
    lim = ctx["limitations"]
    cit = ctx["options"].get("citation")
    return [
        sec(
            "Statistics",
            "Counts, sentence lengths, vocabulary and keyness are in `stats.json` (definitions included).\n\n" + plots,
            None,
            2,
        ),
        sec(
            "Known limitations",
            "\n".join(f"- {x}" for x in lim) if lim else "",
            "limitations the maintainers know of (coverage of groups, translation artefacts, annotator pool).",
            2,
        ),
        sec(
            "Citation",
            f"```bibtex\n{cit.strip()}\n```" if cit else "",
            "the BibTeX entry to cite this dataset." if not cit else None,
            2,
        ),
    ]


def _split_shares(rep: dict, o: dict) -> str:
    """What the split achieved, stratum by stratum, as built (not the goal)."""
    by = rep.get("records_by_stratum") or {}
    if o.get("split_policy") == "keep":
        return "The splits are the records' own (`--split-policy keep`)."
    goal = (
        f"The goal was {o['dev_fraction']:.0%} of the records of every stratum (kind x bias type x direction) "
        f"in dev (seed {o['seed']}, policy `{o['split_policy']}`); all records of a target term go to the same "
        "split, so the shares achieved differ"
    )
    if not by:
        return goal + "."
    none = [st for st, c in by.items() if not c["dev"]]
    rows = [
        [*(st.split("|") + ["", "", ""])[:3], c["dev"], c["test"], f"{c['dev'] / max(1, c['dev'] + c['test']):.0%}"]
        for st, c in by.items()
    ]
    return (
        goal
        + (f": {len(none)} of {len(by)} strata have no record in dev" if none else "")
        + ". As built:\n\n"
        + _table(["kind", "bias type", "direction", "dev", "test", "dev share"], rows)
        + "\n\n"
        "(`release.json`: `split.records_by_stratum`.)"
    )


def _collection(hist: dict, prov: dict) -> str:
    """The collection process from the records' provenance and the stage reports: sources, LLM
    generation, machine translation, annotation and agreement."""
    out = _sources(prov) + _generation(hist, prov) + _translation(hist, prov) + _agreement(hist, prov)
    return "\n\n".join(out)


def _sources(prov: dict) -> list[str]:
    src = prov.get("written_by") or prov.get("sources") or []
    if not src:
        return []
    return [
        "Sources of the released views:\n\n"
        + _table(
            ["lang", "source", "written by", "views"],
            [[s["lang"], s["source"], s.get("written_by", NOT_RECORDED), s["records"]] for s in src],
        )
    ]


def _generation(hist: dict, prov: dict) -> list[str]:
    """The LLM generation runs (run logs) and the generation the released records carry."""
    out = []
    gens = hist["generation"]
    if gens:
        out.append(
            "LLM generation runs:\n\n"
            + _table(
                ["stage", "models", "prompts (id@version)", "rows", "runs", "first run"],
                [
                    [
                        g["label"],
                        ", ".join(g["models"]) or NOT_RECORDED,
                        ", ".join(g["prompts"]) or NOT_RECORDED,
                        g["rows"],
                        g["runs"],
                        g["first_run"],
                    ]
                    for g in gens
                ],
            )
        )
    if prov.get("generation_models") or prov.get("prompts"):
        out.append(
            "Generation recorded on the released records: models "
            + (", ".join(f"{m} ({n})" for m, n in prov["generation_models"].items()) or NOT_RECORDED)
            + "; prompts "
            + (", ".join(f"{p} ({n})" for p, n in prov["prompts"].items()) or NOT_RECORDED)
            + "."
        )
    elif not gens:
        out.append(f"LLM generation: {NOT_RECORDED} (no generation provenance on the records and no run log given).")
    return out


def _translation(hist: dict, prov: dict) -> list[str]:
    """Machine translation: each review report's engines and win rates, else the records' engines."""
    out = []
    for t in hist["translation"]:
        rows = [
            [e, r.get("candidates_shown"), r.get("final_wins"), r.get("final_win_rate"), r.get("reviewer_choice_rate")]
            for e, r in (t.get("engines") or {}).items()
        ]
        p = t.get("pairs") or {}
        out.append(
            f"Machine translation ({t['label']}): {p.get('candidates', NOT_RECORDED)} pairs translated, "
            f"{p.get('released', NOT_RECORDED)} released after blind review, edit rate "
            f"{_fmt(t.get('edit_rate'))}.\n\n"
            + _table(["engine:model", "candidates shown", "final wins", "win rate", "reviewer choice rate"], rows)
        )
    if prov.get("mt_engines") and not hist["translation"]:
        out.append(
            "MT engines of the released translations (from the records; win rates "
            f"{NOT_RECORDED}: no review report given): "
            + ", ".join(f"{e['engine']} ({e['released']})" for e in prov["mt_engines"])
            + "."
        )
    return out


def _agreement(hist: dict, prov: dict) -> list[str]:
    """Annotation and agreement per stage (pseudonymous annotators), or what the records carry."""
    if not hist["agreement"]:
        n = prov.get("annotated_records") or 0
        return [
            f"Agreement per stage: {NOT_RECORDED} (no `annotate agreement` report given)"
            + (f"; {n} released views carry their annotation (votes, annotators) in `meta.annotation`." if n else ".")
        ]
    out = [
        "Annotation and agreement per stage (annotators are pseudonymous):\n\n"
        + _table(
            ["stage", "annotators", "items", "judgments", "Krippendorff's alpha", "Fleiss' kappa", "% agreement"],
            [
                [
                    a["label"],
                    a["n_annotators"],
                    a["n_items"],
                    a["n_judgments"],
                    a["krippendorff_alpha"],
                    a["fleiss_kappa"],
                    a["percent_agreement"],
                ]
                for a in hist["agreement"]
            ],
        )
    ]
    for a in hist["agreement"]:
        if a["annotators"]:
            out.append(
                f"{a['label']}, items per annotator: "
                + ", ".join(f"{x['annotator']} {x['n_items']}" for x in a["annotators"])
                + "."
            )
    return out


def _latest_cat_retention(hist: dict) -> list[dict]:
    """The CAT retention reports to show: with validation when there is one (it holds the drafting
    figures too), else the drafting one."""
    reps = hist.get("cat_retention") or []
    validated = [r for r in reps if r["validated"]]
    return validated[-1:] or reps[-1:]


def _cleaning(hist: dict, ctx: dict) -> str:
    out = []
    ret = ctx["retention"]
    out.append(
        "Retention per stage:\n\n"
        + _table(
            ["stage", "records", "detail", "from"], [[r["stage"], r["records"], r["detail"], r["source"]] for r in ret]
        )
    )
    for c in hist["check"]:
        if c["flags"]:
            out.append(
                f"Minimal-pair checker ({c['file']}): " + ", ".join(f"{k} {v}" for k, v in c["flags"].items()) + "."
            )
    cat_validation = [v for v in ctx["provenance"].get("validation") or [] if v["stage"] == "CAT validation"]
    for r in _latest_cat_retention(hist):
        val = r["validated"]
        cols = ["split", "domain", "targets", "drafted", "structurally valid", "valid %"] + (
            ["validated", "rejected", "validated % of valid", "validated % of drafted"] if val else []
        )
        rows = [
            [x.get("split"), x.get("domain"), x.get("targets"), x.get("drafted"), x.get("valid"), x.get("valid_pct")]
            + ([x.get("validated"), x.get("rejected"), x.get("validated_pct"), x.get("overall_pct")] if val else [])
            for x in r["rows"]
        ]
        out.append(
            f"CAT retention ({r['file']}; StereoSet sec. 4.3 kept 83% of its CATs after validation): drafted by "
            "the LLM, structurally valid"
            + (", validated" + _cat_rule(cat_validation) if val else "")
            + ":\n\n"
            + _table(cols, rows)
        )
        if r["by_target"]:
            kept = "validated" if val else "valid"
            out.append(
                "Target terms that lost the most CATs: "
                + ", ".join(f"{t['target']} ({t.get(kept)} of {t.get('drafted')} kept)" for t in r["by_target"][:8])
                + "."
            )
        if r["problems"]:
            out.append(
                "Structural problems of the CAT drafts: "
                + ", ".join(f"{k} {v}" for k, v in r["problems"].items())
                + "."
            )
    fd = ctx["flags_dropped"]
    out.append(
        ("Flags of the pairs dropped as `flagged`: " + ", ".join(f"{k} {v}" for k, v in fd.items()) + ".")
        if fd
        else "Pairs dropped for checker flags at release: none."
    )
    return "\n\n".join(out)


def _per_record(v: dict) -> str:
    """``3`` or ``2-3`` people per record (``v``: a ``provenance.validation`` entry)."""
    ns = sorted(int(k) for k in v["people_per_record"])
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"


def _people_per_record(v: dict) -> str:
    """One stage's people per released record, as the records carry them."""
    who = "reviewers" if "review" in v["stage"] else "annotators"
    return f"{v['stage']} ({v['lang']}): {_per_record(v)} {who} per record on {v['records']} released records"


def _cat_rule(validation: list[dict]) -> str:
    """How the released CATs were validated, from their records: validators per CAT and agreement."""
    if not validation:
        return f" (validators per CAT: {NOT_RECORDED})"
    parts = []
    for v in validation:
        rule = (
            f"at least {v['rule_min_agree']} had to give the writer's label on every option"
            if v.get("rule_min_agree") is not None
            else f"the rule is {NOT_RECORDED}"
        )
        agree = f", and at least {v['fewest_agreeing']} did" if v.get("fewest_agreeing") is not None else ""
        parts.append(f"{v['lang']}: {_per_record(v)} validators per CAT ({rule}{agree})")
    return " by " + "; ".join(parts)


def _text_chars(stats: dict) -> str:
    p = stats.get("pairs")
    out = []
    if p:
        rows = [
            [
                lg,
                e["sentences"],
                e.get("mean"),
                e.get("median"),
                e.get("min"),
                e.get("max"),
                p["vocabulary"][lg]["types"],
            ]
            for lg, e in p["sentence_words"].items()
        ]
        out.append(
            "Sentence length in words and vocabulary per language:\n\n"
            + _table(["lang", "sentences", "mean", "median", "min", "max", "vocabulary (types)"], rows)
        )
        for lg, k in (p.get("keyness") or {}).items():
            st = ", ".join(x["word"] for x in k.get("stereotype_vs_anti", [])[:10]) or "none"
            gen = ", ".join(x["word"] for x in (k.get("vs_general") or {}).get("top", [])[:12]) or "none"
            out.append(
                f"Keywords ({lg}): over-used in stereotypical vs anti-stereotypical sentences "
                f"(log-likelihood): {st}; release vs general {lg} (simple maths, wordfreq): {gen}."
            )
    c = stats.get("cats")
    if c:
        out.append(
            f"CATs: {c['records']} with {c['targets']['n']} target terms; mean context length (words): "
            + ", ".join(f"{k} {v}" for k, v in c["context_words_mean"].items())
            + "."
        )
    return "\n\n".join(out)
