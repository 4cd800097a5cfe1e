"""Annotator guidelines: one Markdown file per task kind and language, ``data/guidelines/<kind>.<lang>.md``.

They are written for the people who annotate (what the task is, the definitions it rests on,
examples of good and bad answers) and are used twice: ``push`` puts them in Label Studio's
instructions panel (the project's ``expert_instruction``, shown before the first task with
``show_instruction``), and ``biaskit annotate guidelines --kind K`` prints them as Markdown to
hand to a vendor. The Hindi files are the team's own translation, marked as waiting for a
native speaker's review.

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

GUIDELINE_LANGS = ("en", "hi")


def guidelines_dir() -> Path:
    return Path(str(files("biaskit.data") / "guidelines"))


@functools.cache
def load_guidelines(kind: str) -> dict[str, str]:
    """language -> the Markdown guidelines of ``kind`` (the languages that have a file)."""
    out = {}
    for lang in GUIDELINE_LANGS:
        p = guidelines_dir() / f"{kind}.{lang}.md"
        if p.exists():
            out[lang] = p.read_text(encoding="utf-8")
    return out


def parse_langs(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"en,hi"`` / ``["hi"]`` / ``"none"`` -> the languages to show (checked)."""
    if spec is None:
        return GUIDELINE_LANGS
    parts = [x.strip() for x in (spec.split(",") if isinstance(spec, str) else spec) if x and x.strip()]
    if parts in ([], ["none"]):
        return ()
    bad = [x for x in parts if x not in GUIDELINE_LANGS]
    if bad:
        raise InputError(
            f"no guidelines in language '{bad[0]}'.",
            fix=f"use {', '.join(GUIDELINE_LANGS)} (comma-separated), or none.",
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
            fix="write them, or choose another --lang.",
        )
    return [(lang, text[lang].strip()) for lang in want]


def guidelines_markdown(kind: Kind, langs: str | Iterable[str] | None = None) -> str:
    """The Markdown guidelines of ``kind`` in ``langs`` (default: all), one after the other."""
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
