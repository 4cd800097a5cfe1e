"""Turning a model's reply into data: lenient JSON parsing and repair, shape coercion, validation.

- :func:`parse_json_lenient` strips code fences and prose and repairs trailing commas, single
  quotes, unquoted keys and unclosed brackets with the ``json-repair`` library. A reply cut off in
  the middle (``max_tokens`` reached) is recognised (``cut_off`` among the repairs): the string it
  was cut in is dropped rather than kept as a fragment ("lou" for "loud").
- :func:`coerce_to_schema` fixes common shape slips before validation (a bare list for a
  one-array object, a misnamed single list key, a comma-separated string for a list of strings, a
  missing property whose schema allows one value only).
- :func:`validate_schema` checks against the template's JSON Schema (``jsonschema``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from biaskit.errors import require

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.S)


def _scan(s: str) -> tuple[int, int | None]:
    """Bracket depth at the end of ``s`` (from its first ``{``/``[``), and where an unterminated
    string starts (None when every string is closed)."""
    start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    if start < 0:
        return 0, None
    depth, in_str, str_start, esc = 0, False, None, False
    for i in range(start, len(s)):
        c = s[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str, str_start = False, None
        elif c == '"':
            in_str, str_start = True, i
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
    return depth, str_start if in_str else None


def parse_json_lenient(text: str | None) -> tuple[Any, list[str], str | None]:
    """Parse a model's reply as JSON, repairing common junk.

    Returns ``(data, repairs, error)``: ``repairs`` names what was fixed (``code_fence``,
    ``json_repair``, ``cut_off``), ``error`` is None on success. Never raises.
    """
    repairs: list[str] = []
    if text is None or not str(text).strip():
        return None, repairs, "empty response"
    s = str(text).strip()
    m = _FENCE.search(s)
    if m and m.group(1).strip():
        s = m.group(1).strip()
        repairs.append("code_fence")
    try:
        return json.loads(s), repairs, None
    except json.JSONDecodeError as exc:
        first_err = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if not re.search(r"[\[{]", s):
        return None, repairs, f"no JSON object or array in the response ({first_err})"
    depth, open_string = _scan(s)
    if depth > 0:
        repairs.append("cut_off")
        if open_string is not None:  # cut inside a string: that value is a fragment, not an answer
            s = s[:open_string].rstrip().rstrip(",:").rstrip()
    json_repair = require("json_repair", "curation", "repairing LLM replies")
    try:
        data = json_repair.repair_json(s, return_objects=True, skip_json_loads=True)
    except Exception as exc:  # the repair library must never crash a run
        return None, repairs, f"invalid JSON ({first_err}); repair failed: {exc}"
    if data in ("", None) or (isinstance(data, (list, dict)) and not data and not re.search(r"\[\s*\]|\{\s*\}", s)):
        return None, repairs, f"invalid JSON ({first_err}); nothing recoverable"
    repairs.append("json_repair")
    return data, repairs, None


def _fixed_value(prop: Any) -> tuple[bool, Any]:
    """``(True, value)`` when a property's schema allows one value only (``const``, a one-item ``enum``)."""
    if isinstance(prop, dict):
        if "const" in prop:
            return True, prop["const"]
        if isinstance(prop.get("enum"), list) and len(prop["enum"]) == 1:
            return True, prop["enum"][0]
    return False, None


def coerce_to_schema(data: Any, schema: dict | None) -> tuple[Any, list[str]]:
    """Light shape fixes before validation: a bare list for an object whose only required
    property is an array; a single-key object whose key is misnamed; a list of one-key objects
    for an array of strings; a comma-separated string for an array of strings; items that break
    the item schema are dropped (when at least one valid item remains). Required properties that
    allow one value only (a task fixed them for the request, e.g. the group a ``tuples`` reply is
    about) do not count as a second property: when missing they are filled in."""
    fixes: list[str] = []
    if not schema or schema.get("type") != "object":
        return data, fixes
    props = schema.get("properties") or {}
    arrays = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "array"]
    required = schema.get("required") or list(props)
    fixed = {k: v for k, (is_fixed, v) in ((k, _fixed_value(p)) for k, p in props.items()) if is_fixed}
    if len(arrays) != 1 or not set(required) <= {arrays[0], *fixed}:
        return data, fixes
    key = arrays[0]
    if isinstance(data, list):
        data = {key: data}
        fixes.append("wrapped_bare_list")
    elif isinstance(data, dict) and key not in data:
        lists = [k for k, v in data.items() if isinstance(v, list)]
        if len(lists) == 1:
            data = {**{k: data[k] for k in fixed if k in data}, key: data[lists[0]]}
            fixes.append(f"renamed_key:{lists[0]}->{key}")
    if not (isinstance(data, dict) and key in data):
        return data, fixes
    missing = [k for k in fixed if k in required and k not in data]
    if missing:
        data = {**{k: fixed[k] for k in missing}, **data}
        fixes.append(f"filled_fixed:{','.join(missing)}")
    items = props[key].get("items") or {}
    val = data[key]
    if items.get("type") == "string":
        if isinstance(val, str):
            data = {**data, key: [x.strip() for x in re.split(r"[,;\n]", val) if x.strip()]}
            fixes.append("split_string")
        elif isinstance(val, list) and any(isinstance(x, dict) for x in val):
            flat = []
            for x in val:
                if isinstance(x, dict):
                    strs = [v for v in x.values() if isinstance(v, str)]
                    if strs:
                        flat.append(strs[0])
                elif isinstance(x, str):
                    flat.append(x)
            data = {**data, key: flat}
            fixes.append("flattened_objects")
    val = data[key]
    if isinstance(val, list) and items:
        v = _validator(items)
        good = [x for x in val if v.is_valid(x)]
        if good and len(good) < len(val):
            data = {**data, key: good}
            fixes.append(f"dropped_invalid_items:{len(val) - len(good)}")
    return data, fixes


def _validator(schema: dict):
    jsonschema = require("jsonschema", "curation", "checking LLM replies against the template's schema")
    return jsonschema.Draft202012Validator(schema)


def validate_schema(data: Any, schema: dict | None) -> str | None:
    """None when ``data`` satisfies ``schema`` (JSON Schema draft 2020-12), else the first error."""
    if not schema:
        return None
    errors = sorted(_validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if not errors:
        return None
    e = errors[0]
    where = "/".join(str(p) for p in e.path) or "(root)"
    return f"{where}: {e.message[:200]}"
