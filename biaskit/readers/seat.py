"""SEAT / WEAT test files (May et al. 2019; the sent-bias JSON format).

A test is one JSON document ``{"targ1": {"category": ..., "examples": [...]}, "targ2": ...,
"attr1": ..., "attr2": ...}`` (sent-bias names the files ``.jsonl``). Examples are trimmed and
de-duplicated within a set (sent-bias keys its encodings by text). The language is told by the script
of the examples (:func:`biaskit.languages.by_script`: Hindi when any example is in Devanagari, Bengali
in Bengali script, else English); an ``index.json`` next to the test (biaskit's shipped tests) may set
the language and each set's template kind (for bleaching word lists into sentences).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import regex

from ..errors import InputError
from ..languages import by_script

SETS = ("targ1", "targ2", "attr1", "attr2")
TEMPLATE_KINDS = ("name", "person", "noun", "adjective", "term")
SENT_END = regex.compile(r"\p{Sentence_Terminal}\s*$")  # a sentence's end mark, in any script


@dataclass
class SeatSet:
    category: str
    examples: list[str]
    template: str | None = None  # template kind (word-list tests), from the index or the CLI


@dataclass
class SeatTest:
    name: str
    sets: dict[str, SeatSet]
    path: str | None = None
    lang: str = "en"
    meta: dict = field(default_factory=dict)

    @property
    def is_word_list(self) -> bool:
        return all(not SENT_END.search(e) for s in self.sets.values() for e in s.examples)

    def to_json(self) -> dict:
        return {k: {"category": s.category, "examples": list(s.examples)} for k, s in self.sets.items()}


def read_seat_test(path: str | Path, lang: str | None = None) -> SeatTest:
    """Read a sent-bias test file (one JSON document; JSON Lines with one object also accepted)."""
    from ..io import read_json

    path = Path(path)
    obj = read_json(
        path,
        fix="a SEAT test is one JSON object with targ1, targ2, attr1, attr2.",
        missing_fix="check the --test path (a sent-bias .jsonl test).",
    )
    if not isinstance(obj, dict):
        raise InputError(
            "expected a JSON object with targ1, targ2, attr1, attr2.",
            path=path,
            fix='write {"targ1": {"category": ..., "examples": [...]}, ...}.',
        )
    sets: dict[str, SeatSet] = {}
    for key in SETS:
        v = obj.get(key)
        if not isinstance(v, dict) or not isinstance(v.get("examples"), list):
            raise InputError(
                f"missing or malformed '{key}'.",
                path=path,
                column=key,
                fix=f'add "{key}": {{"category": NAME, "examples": [..]}}.',
            )
        ex = []
        for j, e in enumerate(v["examples"], start=1):
            if not isinstance(e, str) or not e.strip():
                raise InputError(
                    f"{key}.examples[{j}] is empty or not a string.",
                    path=path,
                    column=key,
                    fix="every example must be a non-empty string.",
                )
            ex.append(re.sub(r"\s+", " ", e).strip())
        ex = list(dict.fromkeys(ex))  # de-duplicate, keep order (sent-bias keys encodings by text)
        if len(ex) < 2:
            raise InputError(
                f"'{key}' has {len(ex)} distinct example(s); a test needs at least 2 per set.",
                path=path,
                column=key,
                fix="add examples.",
            )
        sets[key] = SeatSet(
            category=str(v.get("category") or key),
            examples=ex,
            template=v.get("template") if v.get("template") in TEMPLATE_KINDS else None,
        )
    extra = sorted(set(obj) - set(SETS))
    all_text = " ".join(e for s in sets.values() for e in s.examples)
    detected = by_script(all_text)
    name = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.stem
    test = SeatTest(
        name=name, sets=sets, path=str(path), lang=lang or detected, meta={"extra_keys": extra} if extra else {}
    )
    _apply_index(test, path)
    return test


def _apply_index(test: SeatTest, path: Path) -> None:
    """Template kinds and language from an ``index.json`` next to the test (biaskit's shipped tests)."""
    for idx_path in [p / "index.json" for p in list(path.resolve().parents)[:3]]:
        if idx_path.exists():
            try:
                index = json.loads(idx_path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                return
            rel = path.resolve().relative_to(idx_path.parent.resolve()).as_posix()
            entry = (index.get("tests") or {}).get(rel)
            if entry:
                test.lang = entry.get("lang", test.lang)
                for k, kind in (entry.get("templates") or {}).items():
                    if k in test.sets and kind in TEMPLATE_KINDS:
                        test.sets[k].template = kind
                test.meta.update({k: v for k, v in entry.items() if k not in ("templates",)})
            return
