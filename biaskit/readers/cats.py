"""StereoSet Context Association Tests (CATs): one reader for every format, one set of ids.

Formats (:func:`read_cats`), all returning :class:`biaskit.schema.CAT` records:

- ``stereoset``: the original JSON (what ``biaskit data download stereoset-dev`` fetches):
  ``{"version", "data": {"intrasentence": [{id, target, bias_type, context, sentences: [{id,
  sentence, gold_label, labels: [{human_id, label}]}]}], "intersentence": [...]}}``. The validators'
  labels are kept with their annotator ids (``CATOption.human_labels``); StereoSet's example and
  sentence ids are kept as ``source_id``.
- ``flat``: the flattened JSONL (``type, target, bias_type, context, stereotype, anti-stereotype,
  unrelated``; no ids, no validator labels), as in the shared mirror.
- ``biaskit``: biaskit's own CAT JSONL (one :class:`~biaskit.schema.CAT` per line).

The same content gives the same CAT from either StereoSet format: text is trimmed, the options are
put in the order stereotype, anti-stereotype, unrelated, and the ids are content hashes computed by
:mod:`biaskit.ids` (language, split, target, context *and the three options*: the dev set has 85
CATs in 37 groups that share their split, target and context, and they all keep distinct ids).
Annotation, evaluation and releases read CATs only through this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..clitools import offer
from ..errors import InputError
from ..ids import CAT_LABEL_ORDER, Numbering
from ..schema import CAT
from ._common import UniqueIds, check_file, first_record, read_head, unknown_name

CAT_FORMATS = ("auto", "stereoset", "flat", "biaskit")
LABELS = CAT_LABEL_ORDER
SPLITS = ("intrasentence", "intersentence")

_SPLIT_ALIASES = {
    "intra": "intrasentence",
    "inter": "intersentence",
    "intrasentence": "intrasentence",
    "intersentence": "intersentence",
}
_FLAT_LABEL_KEYS = {
    "stereotype": ("stereotype",),
    "anti-stereotype": ("anti-stereotype", "anti_stereotype", "antistereotype"),
    "unrelated": ("unrelated",),
}


def read_cats(
    path: str | Path, format: str = "auto", lang: str = "en", limit: int | None = None, split: str | None = None
) -> list[CAT]:
    """Read CATs from the original StereoSet JSON, the flat JSONL or biaskit CAT JSONL.

    ``split`` keeps only ``intrasentence`` or ``intersentence``; ``limit`` keeps the first N CATs
    (after the split filter, in file order).
    """
    if format not in CAT_FORMATS:
        raise unknown_name("CAT format", format, CAT_FORMATS, path)
    if split is not None and split not in SPLITS:
        raise InputError(f"unknown split '{split}'.", path=path, fix="use intrasentence or intersentence.")
    path = check_file(path, fix="check the --data path.")
    if format == "auto":
        format = detect_cat_format(path)
    if format == "stereoset":
        cats = _read_original(path, lang)
    elif format == "flat":
        cats = _read_flat(path, lang)
    else:
        cats = _read_biaskit(path)
    if split:
        cats = [c for c in cats if c.split == split]
    if limit is not None:
        cats = cats[:limit]
    if not cats:
        raise InputError(
            "no CATs found" + (f" for split '{split}'" if split else "") + ".",
            path=path,
            fix="check that the file is a StereoSet/biaskit CAT file.",
        )
    return cats


def detect_cat_format(path: str | Path) -> str:
    path = Path(path)
    text = read_head(path)
    stripped = text.lstrip()
    if not stripped:
        raise InputError("file is empty.", path=path, fix="point at a StereoSet or biaskit CAT file.")
    if path.suffix.lower() == ".json" or (
        stripped.startswith("{")
        and '"data"' in stripped[:2000]
        and "\n" in stripped
        and not first_line_is_object(stripped)
    ):
        return "stereoset"
    first = first_record(path)
    if "options" in first:
        return "biaskit"
    if "stereotype" in first or "anti-stereotype" in first:
        return "flat"
    if "data" in first:
        return "stereoset"
    raise InputError(
        f"cannot tell the CAT format from the keys {sorted(first)}.",
        path=path,
        row=1,
        fix="use the original StereoSet JSON, the flat JSONL (type, target, bias_type, context, "
        "stereotype, anti-stereotype, unrelated) or biaskit CAT JSONL" + offer("format", "; or pass --format") + ".",
    )


def first_line_is_object(text: str) -> bool:
    """True when the first line alone is a JSON object (JSONL rather than one pretty-printed document)."""
    line = text.splitlines()[0]
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _iter_lines(path: Path) -> Iterator[tuple[int, dict]]:
    from ..io import iter_jsonl

    yield from iter_jsonl(path)


def _check_intra_context(path: Path, row: int | None, split: str, context: str, where: str = "") -> None:
    if split == "intrasentence" and "BLANK" not in context:
        raise InputError(
            f"{where}an intrasentence context must contain the placeholder BLANK.",
            path=path,
            row=row,
            column="context",
            fix="write the context with BLANK where the options differ, e.g. 'The chess player was BLANK.'",
        )


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()))
    return f"{loc + ': ' if loc else ''}{err.get('msg', 'invalid')}"


def _make_cat(
    number: Numbering,
    *,
    split: str,
    target: str,
    bias_type: Any,
    context: str,
    lang: str,
    options: dict[str, dict],
    provenance: dict,
    source_id: str | None = None,
) -> CAT:
    """The one place a StereoSet CAT is built: trimmed text, options in label order, content ids
    (numbered ``~2``... only when two CATs of the file have identical content)."""
    opts = [{"gold_label": lab, **options[lab], "sentence": str(options[lab]["sentence"]).strip()} for lab in LABELS]
    cat = CAT(
        split=split,
        target=str(target).strip(),
        bias_type=bias_type,
        context=context.strip(),
        lang=lang,
        options=opts,
        provenance=provenance,
        source_id=source_id,
    )
    numbered = number(cat.cat_id)
    if numbered != cat.cat_id:  # recompute the sentence ids from the numbered CAT id
        cat = CAT(
            **{
                **cat.model_dump(),
                "cat_id": numbered,
                "options": [{**o.model_dump(), "sentence_id": ""} for o in cat.options],
            }
        )
    return cat


def _read_flat(path: Path, lang: str) -> list[CAT]:
    cats: list[CAT] = []
    number = Numbering()
    for i, obj in _iter_lines(path):
        split_raw = obj.get("type", obj.get("split"))
        if split_raw is None:
            raise InputError(
                "missing the field 'type' (intrasentence or intersentence).",
                path=path,
                row=i,
                column="type",
                fix='add "type": "intrasentence" or "intersentence".',
            )
        split = _SPLIT_ALIASES.get(str(split_raw).strip().lower())
        if split is None:
            raise InputError(
                f"unknown type '{split_raw}'.",
                path=path,
                row=i,
                column="type",
                fix="use intrasentence or intersentence.",
            )
        options = {}
        for label, keys in _FLAT_LABEL_KEYS.items():
            val = next((obj[k] for k in keys if k in obj), None)
            if val is None or not str(val).strip():
                raise InputError(
                    f"missing or empty option '{label}'.",
                    path=path,
                    row=i,
                    column=label,
                    fix="every CAT needs a stereotype, an anti-stereotype and an unrelated sentence.",
                )
            options[label] = {"sentence": str(val)}
        for key in ("target", "bias_type", "context"):
            if not str(obj.get(key) or "").strip():
                raise InputError(
                    f"missing or empty field '{key}'.", path=path, row=i, column=key, fix=f'add a non-empty "{key}".'
                )
        context = str(obj["context"])
        _check_intra_context(path, i, split, context)
        try:
            cats.append(
                _make_cat(
                    number,
                    split=split,
                    target=obj["target"],
                    bias_type=obj["bias_type"],
                    context=context,
                    lang=str(obj.get("lang") or lang),
                    options=options,
                    provenance={"source": str(path), "row": i, "format": "flat"},
                )
            )
        except ValidationError as exc:
            raise InputError(_first_error(exc), path=path, row=i, fix="fix the CAT fields.") from None
    return cats


def _read_original(path: Path, lang: str) -> list[CAT]:
    from ..io import read_json

    obj = read_json(path, fix="the original StereoSet file is one JSON document.")
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, dict) or not (set(SPLITS) & set(data)):
        raise InputError(
            'not a StereoSet file: expected {"version": ..., "data": {"intrasentence": [...], '
            '"intersentence": [...]}}.',
            path=path,
            fix="use the original dev.json/test.json" + offer("format", ", or --format flat|biaskit") + ".",
        )
    cats: list[CAT] = []
    number = Numbering()
    for split in SPLITS:
        for j, ex in enumerate(data.get(split) or [], start=1):
            where = f"data.{split}[{j}]"
            if not isinstance(ex, dict):
                raise InputError(f"{where} is not an object.", path=path, fix="each example must be a JSON object.")
            for key in ("id", "target", "bias_type", "context", "sentences"):
                if key not in ex:
                    raise InputError(
                        f"{where} (id {ex.get('id', '?')}) lacks '{key}'.",
                        path=path,
                        column=key,
                        fix="each example needs id, target, bias_type, context and sentences.",
                    )
            _check_intra_context(path, None, split, str(ex["context"]), where=f"{where} (id {ex['id']}): ")
            options: dict[str, dict] = {}
            for s in ex["sentences"]:
                if not isinstance(s, dict) or not {"sentence", "gold_label"} <= set(s):
                    raise InputError(
                        f"{where} (id {ex['id']}) has a sentence without 'sentence'/'gold_label'.",
                        path=path,
                        fix="each sentence needs sentence, id, labels and gold_label.",
                    )
                if s["gold_label"] in options or s["gold_label"] not in LABELS:
                    got = sorted(str(x.get("gold_label")) for x in ex["sentences"] if isinstance(x, dict))
                    raise InputError(
                        f"{where} (id {ex['id']}): a CAT needs exactly one stereotype, anti-stereotype "
                        f"and unrelated sentence, got {got}.",
                        path=path,
                        fix="each example needs one stereotype, one anti-stereotype and one unrelated sentence.",
                    )
                options[s["gold_label"]] = {
                    "sentence": s["sentence"],
                    "source_id": None if s.get("id") is None else str(s["id"]),
                    "human_labels": list(s.get("labels") or []),
                }
            try:
                cats.append(
                    _make_cat(
                        number,
                        split=split,
                        target=ex["target"],
                        bias_type=ex["bias_type"],
                        context=str(ex["context"]),
                        lang=lang,
                        options=options,
                        source_id=str(ex["id"]),
                        provenance={
                            "source": str(path),
                            "example": j,
                            "format": "stereoset",
                            "version": obj.get("version"),
                        },
                    )
                )
            except (ValidationError, KeyError) as exc:
                msg = _first_error(exc) if isinstance(exc, ValidationError) else f"no {exc.args[0]} sentence"
                raise InputError(
                    f"{where} (id {ex['id']}): {msg}",
                    path=path,
                    fix="each example needs one stereotype, one anti-stereotype and one unrelated sentence.",
                ) from None
    return cats


def _read_biaskit(path: Path) -> list[CAT]:
    cats = []
    given = UniqueIds(path, "cat_id", rescan=lambda: ((i, o.get("cat_id")) for i, o in _iter_lines(path)))
    for i, obj in _iter_lines(path):
        given.add(obj.get("cat_id"), i)
        try:
            cat = CAT.model_validate(obj)
        except ValidationError as exc:
            raise InputError(
                _first_error(exc),
                path=path,
                row=i,
                fix="each line must be a CAT: split, target, bias_type, context, options [{sentence, gold_label}] x 3.",
            ) from None
        _check_intra_context(path, i, cat.split, cat.context)
        cats.append(cat)
    return cats


def cat_rows(cats: Sequence[CAT]) -> list[dict]:
    """Flat rows (one per CAT) in the shared StereoSet flat format, with ids."""
    return [
        {
            "cat_id": c.cat_id,
            "type": c.split,
            "target": c.target,
            "bias_type": c.bias_type,
            "context": c.context,
            **{lab: c.option(lab).sentence for lab in LABELS},
        }
        for c in cats
    ]
