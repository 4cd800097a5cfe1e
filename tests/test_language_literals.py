"""No code path names a language other than the source language: every fact about Hindi, Bengali or
any other target language is data (data/languages/<code>/), read through biaskit.languages.

What counts, precisely: in every ``.py`` file of the repository outside ``tests/`` and ``benchmarks/``
(whose synthetic inputs, like the tests', are written in whatever language they exercise) and the virtual
environments and build output, a **string literal** -- an ``ast.Constant`` of type ``str``, also a
literal part of an f-string -- that is not a docstring (the first statement of a module, class or
function) and that either

1. **equals the code of a language folder** other than the source language (``"hi"``, ``"bn"``,
   the folders of data/languages/ except the one ``languages.json`` names as ``source``); or
2. **holds a letter of such a language's script** (Devanagari, Bengali: the ``script`` of its
   language.json), i.e. a word of that language written into the code.

The prompt templates (``prompts/*.toml``) keep the team's general wording, in English: no letter of such
a script either -- a language's worked examples and advice live in its ``prompts.json``.

English, the source language the benchmarks are written in and translated from, is named in code
(``"en"``): it is the pivot of every step, not a target. Comments are not literals and may name any
language. Allowed exceptions are listed in :data:`ALLOWED` with their reason; there are none.
"""

from __future__ import annotations

import ast
import json

import regex
from conftest import REPO

SKIP_DIRS = {"tests", "benchmarks", "build", ".git", "node_modules"}
#: (file, literal) -> why it may stay (none: every language default reads data/languages/languages.json)
ALLOWED: dict[tuple[str, str], str] = {}


def _targets() -> tuple[set[str], regex.Pattern]:
    langs = REPO / "data" / "languages"
    source = json.loads((langs / "languages.json").read_text(encoding="utf-8"))["source"]
    codes, scripts = set(), set()
    for d in langs.iterdir():
        if d.is_dir() and (d / "language.json").exists() and d.name != source:
            codes.add(d.name)
            scripts.add(json.loads((d / "language.json").read_text(encoding="utf-8"))["script"])
    return codes, regex.compile("[" + "".join(rf"\p{{Script={s}}}" for s in sorted(scripts)) + "]")


def _python_files():
    for p in sorted(REPO.rglob("*.py")):
        rel = p.relative_to(REPO)
        if rel.parts[0] in SKIP_DIRS or rel.parts[0].startswith(".venv") or rel.parts[0].endswith(".egg-info"):
            continue
        yield rel, p


def _literals(tree: ast.AST):
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docs.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


def test_no_code_path_names_a_target_language():
    codes, script = _targets()
    assert {"hi", "bn"} <= codes and script.search("हि") and script.search("বা") and not script.search("en")
    found = []
    seen = 0
    for rel, path in _python_files():
        seen += 1
        for node in _literals(ast.parse(path.read_text(encoding="utf-8"))):
            v = node.value
            if (v in codes or script.search(v)) and (str(rel), v) not in ALLOWED:
                found.append(f"{rel}:{node.lineno}: {v[:60]!r}")
    assert seen > 150  # the whole tree was read (biaskit/, curation/, annotation/, evaluation/, ...)
    assert not found, "language facts in code (move them to data/languages/<code>/):\n" + "\n".join(found)


def test_the_check_sees_what_it_should(tmp_path):
    """The rule catches a code, a word in the script and an f-string part; it skips docstrings."""
    codes, script = _targets()
    src = '"""Doc: हिन्दी is fine here."""\nx = "hi"\ny = f"{x} বাংলা"\nz = ["en", "bengali"]\n'
    hits = [n.value for n in _literals(ast.parse(src)) if n.value in codes or script.search(n.value)]
    assert hits == ["hi", " বাংলা"]


def test_no_prompt_template_holds_a_target_languages_words():
    """The translation prompts' worked examples and advice are data (data/languages/<code>/prompts.json):
    a template is the team's English wording, whatever language it translates into."""
    _, script = _targets()
    templates = sorted((REPO / "prompts").glob("*.toml"))
    assert len(templates) > 10 and any(p.name == "translate_pair.toml" for p in templates)
    found = [
        f"prompts/{p.name}:{i}: {line.strip()[:60]!r}"
        for p in templates
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if script.search(line)
    ]
    assert not found, "a language's words in a prompt template (move them to its prompts.json):\n" + "\n".join(found)
