"""Annotator guidelines: one Markdown file per task kind and language, ``data/guidelines/<kind>.<lang>.md``.

They are written for the people who annotate (what the task is, the definitions it rests on,
examples of good and bad answers) and are used twice: ``push`` puts them in Label Studio's
instructions panel (the project's ``expert_instruction``, shown before the first task with
``show_instruction``), and ``biaskit annotate guidelines --kind K`` prints them as Markdown to
hand to a vendor. Each language's files are written in that language; its folder says who wrote
them and whether a native speaker reviewed them (``data/languages/<code>/language.json``: ``guidelines``).

This module sits below the task kinds: a kind's ``guidelines`` property reads its files here
(:func:`load_guidelines`), and the renderers take a kind (or a kind's name) without importing
:mod:`biaskit.annotation.kinds`.
"""

from __future__ import annotations

import functools
import html as html_lib
import re
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Union

from biaskit.errors import InputError

if TYPE_CHECKING:
    from .kinds.base import TaskKind

Kind = Union[str, "TaskKind"]  # a task kind, or its name (its guidelines are then read from the files)


def guideline_langs() -> tuple[str, ...]:
    """The languages guidelines may be written in: every language folder (``data/languages``)."""
    from biaskit import languages as L

    return tuple(L.codes())


def default_langs(records_lang: str | None = None) -> tuple[str, ...]:
    """The guidelines shown when none are named: the source language's (English) and those of the
    records' language, or of the default target language when the records are in the source language."""
    from biaskit import languages as L

    src = L.source_code()
    other = records_lang if records_lang and records_lang != src and L.get(records_lang) else L.default_target()
    return (src, other)


def guidelines_dir() -> Path:
    return Path(str(files("biaskit.data") / "guidelines"))


@functools.cache
def load_guidelines(kind: str) -> dict[str, str]:
    """language -> the Markdown guidelines of ``kind`` (the languages that have a file)."""
    out = {}
    for lang in guideline_langs():
        p = guidelines_dir() / f"{kind}.{lang}.md"
        if p.exists():
            out[lang] = p.read_text(encoding="utf-8")
    return out


def records_language(records: Iterable) -> str | None:
    """The language of the records a task shows: a translation's target, else a record's ``lang``."""
    for rec in records:
        get = rec.get if isinstance(rec, dict) else lambda k, r=rec: getattr(r, k, None)
        lang = get("target_lang") or get("lang")
        if lang:
            return str(lang)
    return None


def parse_langs(spec: str | Iterable[str] | None, records_lang: str | None = None) -> tuple[str, ...]:
    """``"en,hi"`` / ``["bn"]`` / ``"none"`` -> the languages to show (checked); None: :func:`default_langs`."""
    if spec is None:
        return default_langs(records_lang)
    parts = [x.strip() for x in (spec.split(",") if isinstance(spec, str) else spec) if x and x.strip()]
    if parts in ([], ["none"]):
        return ()
    have = guideline_langs()
    bad = [x for x in parts if x not in have]
    if bad:
        raise InputError(
            f"no guidelines in language '{bad[0]}'.",
            fix=f"use {', '.join(have)} (comma-separated), or none.",
        )
    return tuple(dict.fromkeys(parts))


def _texts(kind: Kind, langs: str | Iterable[str] | None) -> list[tuple[str, str]]:
    name, text = (kind, load_guidelines(kind)) if isinstance(kind, str) else (kind.name, kind.guidelines)
    want = parse_langs(langs)
    missing = [lang for lang in want if lang not in text]
    if missing:
        raise InputError(
            f"kind '{name}' has no guidelines in '{missing[0]}'.",
            path=guidelines_dir() / f"{name}.{missing[0]}.md",
            fix=f"write them, or choose languages the kind has guidelines in ({', '.join(sorted(text))}).",
        )
    return [(lang, text[lang].strip()) for lang in want]


def guidelines_markdown(kind: Kind, langs: str | Iterable[str] | None = None) -> str:
    """The Markdown guidelines of ``kind`` in ``langs`` (default: :func:`default_langs`), one after the other."""
    return "\n\n---\n\n".join(t for _, t in _texts(kind, langs)) + "\n"


def guidelines_html(kind: Kind, langs: str | Iterable[str] | None = None) -> str:
    """The guidelines as HTML for Label Studio's instructions panel (raw HTML in the Markdown is
    not passed through); each language in a ``<div lang=...>`` so the browser picks its fonts.
    Label Studio drops style attributes and its CSS hides list markers, so list items carry their
    bullet or number as text. Empty when ``langs`` is ``none``."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    return "<hr>".join(f'<div lang="{lang}">{_visible_markers(md.render(t))}</div>' for lang, t in _texts(kind, langs))


def _visible_markers(html: str) -> str:
    def number(m: re.Match) -> str:
        items = iter(range(int(m.group(1) or 1), 10**6))
        return re.sub(r"<li>", lambda _: f"<li>{next(items)}. ", m.group(0))

    html = re.sub(r'<ol(?: start="(\d+)")?>.*?</ol>', number, html, flags=re.S)
    return re.sub(r"<ul>.*?</ul>", lambda m: m.group(0).replace("<li>", "<li>• "), html, flags=re.S)


def same_instructions(a: str | None, b: str | None) -> bool:
    """Do two instruction panels say the same (Label Studio sanitises the HTML it stores: compare text)?"""

    def text(h: str | None) -> str:
        return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", h or "")).split())

    return text(a) == text(b)
