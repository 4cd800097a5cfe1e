"""Versioned prompt templates (TOML) for curation and translation.

A template file (``prompts/*.toml`` in the package, plus any folder given with ``--prompts-dir``
or ``$BIASKIT_PROMPTS_DIR``, separated by ``os.pathsep``) looks like::

    id = "attributes"
    version = "1"
    description = "One-word stereotypical attributes for an identity term (IndiBias step 1)."
    task = "tuples"                      # optional: which command uses it

    [variables]                          # every {name} used in the templates, with a description
    identity = "identity term, e.g. 'Dalit'"
    n = "number of attributes"

    [template]
    system = "You are ..."
    user = "List {n} ... about {identity} ..."

    [schema]                             # JSON Schema of the expected reply (or schema = '''{...}''')
    type = "object"
    ...

    [[examples]]                         # optional: worked examples a task picks from and renders
    group = "lawyers"                    # (``attributes@3``: per request, three about other groups)
    ...

A translation template shows the target language's own worked examples instead
(``data/languages/<code>/prompts.json``, :class:`biaskit.languages.TaskPrompt`): its ``[template]``
has an ``example`` text, the format of one worked example (``{source_language}``,
``{target_language}``, the example's source texts by the request's variable names and ``{reply}``,
its translation as the reply's JSON), and the task puts the examples so rendered, one after the
other, into the ``{examples}`` placeholder (:meth:`Prompt.render_examples`).

Placeholders are ``{name}`` (letters, digits, underscore); anything else in braces (JSON examples)
is left alone, and ``{{`` / ``}}`` give literal braces. A template is identified in provenance by
``id``, ``version`` and ``hash`` (the first 12 hex digits of the SHA-256 of its system + user
templates, schema, example format and worked examples, if any), so an edited template without a version bump
is still told apart.

A curator adds a template by dropping a TOML file in a prompts folder: no code changes. A user
file may override a packaged template only with a different ``version``; :func:`get_prompt`
returns the highest version unless ``id@version`` is asked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import InputError, require
from biaskit.options import say

PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def package_prompts_dir() -> Path:
    from biaskit import prompts as _pkg

    return Path(_pkg.__file__).resolve().parent


@dataclass
class Prompt:
    id: str
    version: str
    description: str
    system: str
    user: str
    variables: dict[str, str]
    schema: dict[str, Any] | None = None
    task: str | None = None
    path: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    #: worked examples (the ``[[examples]]`` tables) that the template's task chooses from and renders
    examples: list[dict[str, Any]] = field(default_factory=list)
    #: the format of one of the target language's worked examples (``[template] example``)
    example: str | None = None

    @property
    def hash(self) -> str:
        body: dict[str, Any] = {"system": self.system, "user": self.user, "schema": self.schema}
        if self.examples:
            body["examples"] = self.examples
        if self.example is not None:
            body["example"] = self.example
        payload = json.dumps(body, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def placeholders(self) -> set[str]:
        return set(PLACEHOLDER.findall(self.system)) | set(PLACEHOLDER.findall(self.user))

    def render(self, **values: Any) -> list[dict[str, str]]:
        """Chat messages with every ``{name}`` filled in; missing variables raise InputError."""
        vals = {**self.defaults, **values}
        missing = sorted(self.placeholders() - set(vals))
        if missing:
            raise InputError(
                f"prompt '{self.ref}' needs variable(s) {', '.join(missing)}.",
                path=self.path,
                fix=f"pass values for: {', '.join(sorted(self.variables))}.",
            )

        def fill(text: str) -> str:
            out = PLACEHOLDER.sub(lambda m: str(vals[m.group(1)]), text)
            return out.replace("{{", "{").replace("}}", "}")

        msgs = []
        if self.system.strip():
            msgs.append({"role": "system", "content": fill(self.system).strip()})
        msgs.append({"role": "user", "content": fill(self.user).strip()})
        return msgs

    def render_examples(self, examples: Iterable[tuple[Mapping[str, str], Mapping[str, str]]], **values: Any) -> str:
        """Worked examples ``(source, translation)`` in the template's ``example`` format, one after
        the other: ``values`` (the request's, for ``{source_language}``/``{target_language}``) and the
        example's source texts fill its placeholders, ``{reply}`` is the translation as the JSON the
        reply is asked in (the schema's ``required`` fields first). Braces are left as they are: the
        text goes into ``{examples}``, and :meth:`render` makes ``{{`` a brace once."""
        if self.example is None:
            raise InputError(
                f"prompt '{self.ref}' has no [template] example: it cannot show a language's worked examples.",
                path=self.path,
                fix='add example = """...""" under [template] (the format of one worked example).',
            )
        order = list((self.schema or {}).get("required") or [])
        out = []
        for source, translation in examples:
            keys = [k for k in order if k in translation] + [k for k in translation if k not in order]
            vals = {**values, **source, "reply": json.dumps({k: translation[k] for k in keys}, ensure_ascii=False)}
            missing = sorted(set(PLACEHOLDER.findall(self.example)) - set(vals))
            if missing:
                raise InputError(
                    f"a worked example for prompt '{self.ref}' has no {', '.join(missing)}.",
                    path=self.path,
                    fix="give every text the example format names (`biaskit data check-language CODE`).",
                )
            out.append(_substitute(self.example, vals))
        return "".join(out)

    def provenance(self) -> dict[str, str]:
        return {"prompt_id": self.id, "prompt_version": self.version, "prompt_hash": self.hash}


def _substitute(text: str, values: Mapping[str, Any]) -> str:
    """``text`` with every ``{name}`` placeholder replaced by its value (braces otherwise left as they are)."""
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)


def _parse_prompt(path: Path) -> Prompt:
    """The template in ``path``, checked step by step (each bad key is one line naming the file and
    the fix; the checks run in the order of the file's keys)."""
    obj = _read_toml(path)
    pid = _prompt_id(obj, path)
    version = obj.get("version")
    if version is None:
        raise InputError("missing key 'version'.", path=path, fix='add `version = "1"` and bump it on every edit.')
    system, user, example = _template_texts(obj, path)
    variables = _variables(obj, path)
    schema = _schema(obj, path)
    examples = _examples(obj, path)
    p = Prompt(
        id=pid,
        version=str(version),
        description=str(obj.get("description", "")),
        system=system,
        user=user,
        variables={str(k): str(v) for k, v in variables.items()},
        schema=schema,
        task=obj.get("task"),
        path=str(path),
        defaults=dict(obj.get("defaults", {})),
        examples=examples,
        example=example,
    )
    _check_placeholders(p, path)
    return p


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8.", path=path, fix="save the template as UTF-8.") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(
            f"invalid TOML ({exc}).", path=path, fix="check quoting; use '''...''' for multi-line text."
        ) from None


def _need(obj: Mapping[str, Any], path: Path, key: str, kind: type = str) -> Any:
    """``obj[key]``, which must be there and of type ``kind``."""
    if key not in obj:
        raise InputError(f"missing key '{key}'.", path=path, fix=f"add `{key} = ...` at the top of the file.")
    if not isinstance(obj[key], kind):
        raise InputError(f"'{key}' must be a {kind.__name__}.", path=path, fix=f'write `{key} = "..."`.')
    return obj[key]


def _prompt_id(obj: Mapping[str, Any], path: Path) -> str:
    pid = _need(obj, path, "id")
    if not _ID.match(pid):
        raise InputError(
            f"id '{pid}' must be lower-case letters, digits, '_', '-' or '.'.",
            path=path,
            fix='rename the id, e.g. id = "attributes_hi".',
        )
    return pid


def _template_texts(obj: Mapping[str, Any], path: Path) -> tuple[str, str, str | None]:
    """``[template]``'s system, user and example texts."""
    template = _need(obj, path, "template", dict)
    user = template.get("user")
    if not isinstance(user, str) or not user.strip():
        raise InputError(
            "[template] needs a non-empty 'user' text.", path=path, fix="add user = '''...''' under [template]."
        )
    system = template.get("system", "")
    if not isinstance(system, str):
        raise InputError("[template] 'system' must be text.", path=path, fix="write system = '''...'''.")
    example = template.get("example")
    if example is not None and not isinstance(example, str):
        raise InputError("[template] 'example' must be text.", path=path, fix='write example = """...""".')
    return system, user, example


def _variables(obj: Mapping[str, Any], path: Path) -> dict:
    variables = obj.get("variables", {})
    if not isinstance(variables, dict):
        raise InputError(
            '[variables] must be a table of name = "description".',
            path=path,
            fix='write e.g. identity = "the identity term" under [variables].',
        )
    return variables


def _schema(obj: Mapping[str, Any], path: Path) -> dict | None:
    """The reply's JSON Schema (a ``[schema]`` table or JSON text), checked as a schema."""
    schema = obj.get("schema")
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"'schema' is not valid JSON ({exc.msg}, line {exc.lineno}).",
                path=path,
                fix="write the JSON Schema as a [schema] table or valid JSON text.",
            ) from None
    if schema is None:
        return None
    if not isinstance(schema, dict):
        raise InputError("'schema' must be a JSON Schema object.", path=path, fix='e.g. [schema] type = "object" ...')
    jsonschema = require("jsonschema", "curation", "checking prompt templates' JSON Schemas")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InputError(
            f"'schema' is not a valid JSON Schema ({str(exc).splitlines()[0]}).",
            path=path,
            fix="see https://json-schema.org/understanding-json-schema/.",
        ) from None
    return schema


def _examples(obj: Mapping[str, Any], path: Path) -> list:
    examples = obj.get("examples", [])
    if not isinstance(examples, list) or not all(isinstance(e, dict) for e in examples):
        raise InputError(
            "'examples' must be an array of tables.",
            path=path,
            fix="write each worked example as a [[examples]] table (key = value lines below it).",
        )
    return examples


def _check_placeholders(p: Prompt, path: Path) -> None:
    """Every ``{name}`` of the texts is a declared variable and every declared variable is used; an
    ``example`` is shown (``{examples}``) and uses only the variables and ``{reply}``."""
    used = p.placeholders()
    if p.example is not None:
        if "examples" not in used:
            raise InputError(
                "[template] 'example' is never shown: the system or user text has no {examples}.",
                path=path,
                fix="put {examples} where the worked examples go, or remove 'example'.",
            )
        odd = sorted(set(PLACEHOLDER.findall(p.example)) - set(p.variables) - {"reply"})
        if odd:
            raise InputError(
                f"[template] 'example' uses undeclared variable(s) {', '.join('{' + u + '}' for u in odd)}.",
                path=path,
                fix="use the template's variables (an example's source texts by their names) and {reply}.",
            )
    undeclared = sorted(used - set(p.variables))
    if undeclared:
        raise InputError(
            f"template uses undeclared variable(s) {', '.join('{' + u + '}' for u in undeclared)}.",
            path=path,
            fix='declare them under [variables] (name = "description"), or write {{ and }} for literal braces.',
        )
    unused = sorted(set(p.variables) - used)
    if unused:
        raise InputError(
            f"declared variable(s) {', '.join(unused)} are not used in the template.",
            path=path,
            fix="remove them from [variables] or use them as {name} in the template.",
        )


def prompt_dirs(extra: Iterable[str | Path] | str | Path | None = None) -> list[Path]:
    dirs = [package_prompts_dir()]
    env = os.environ.get("BIASKIT_PROMPTS_DIR")
    if env:
        dirs += [Path(d) for d in env.split(os.pathsep) if d]
    if extra:
        if isinstance(extra, (str, Path)):
            extra = [extra]
        dirs += [Path(d) for d in extra]
    return dirs


def load_prompts(extra_dirs: Iterable[str | Path] | str | Path | None = None) -> dict[str, Prompt]:
    """All templates, keyed ``id@version``, from the package folder and the user folders."""
    out: dict[str, Prompt] = {}
    for d in prompt_dirs(extra_dirs):
        if not d.exists():
            raise InputError(
                "prompts folder not found.", path=d, fix=f"check {say('prompts_dir')} / $BIASKIT_PROMPTS_DIR."
            )
        if not d.is_dir():
            raise InputError(
                "is not a folder.", path=d, fix=f"point {say('prompts_dir')} at a folder of *.toml templates."
            )
        for f in sorted(d.glob("*.toml")):
            p = _parse_prompt(f)
            if p.ref in out:
                other = out[p.ref]
                if Path(other.path or "").resolve() == f.resolve():
                    continue
                raise InputError(
                    f"template '{p.ref}' is defined twice (also in {other.path}).",
                    path=f,
                    fix="bump `version` in the copy you edited.",
                )
            out[p.ref] = p
    return out


def _version_key(v: str) -> tuple:
    return tuple((0, int(x)) if x.isdigit() else (1, x) for x in re.split(r"[.\-]", v))


def get_prompt(
    ref: str,
    extra_dirs: Iterable[str | Path] | str | Path | None = None,
    prompts: dict[str, Prompt] | None = None,
) -> Prompt:
    """``"attributes"`` (highest version) or ``"attributes@1"``."""
    prompts = prompts if prompts is not None else load_prompts(extra_dirs)
    if "@" in ref:
        if ref in prompts:
            return prompts[ref]
        pid = ref.split("@")[0]
    else:
        pid = ref
        cands = [p for p in prompts.values() if p.id == pid]
        if cands:
            return max(cands, key=lambda p: _version_key(p.version))
    import difflib

    ids = sorted({p.id for p in prompts.values()})
    refs = sorted(prompts)
    close = difflib.get_close_matches(ref, refs + ids, n=3)
    raise InputError(
        f"unknown prompt template '{ref}'." + (f" Did you mean {', '.join(close)}?" if close else ""),
        fix=f"`biaskit curate prompts` lists them; available: {', '.join(refs)}.",
    )
