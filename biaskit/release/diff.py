"""``diff_releases``: what changed between two versions of a release, by stable id, for a changelog.

Records are matched by their id (pairs ``id``, CATs ``cat_id``, tuples ``tuple_id``); a record in
both versions is *changed* when any compared field differs, and the changed fields are named
(``split``, ``direction``, ``views.hi.sent_less``, ``views.en.meta``, ...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import layout as L

ID_KEYS = {"pairs": "id", "cats": "cat_id", "tuples": "tuple_id"}


def _load(path: Path, kind: str) -> dict[str, dict]:
    from ..io import iter_jsonl

    f = path / L.RECORD_FILES[kind]
    if not f.exists():
        return {}
    key = ID_KEYS[kind]
    return {str(obj.get(key)): obj for _, obj in iter_jsonl(f)}


def _flat(rec: dict, kind: str) -> dict[str, Any]:
    """The compared fields of a record, flattened to ``name -> JSON text``."""
    out: dict[str, Any] = {}
    for k, v in rec.items():
        if k == "views" and isinstance(v, dict):
            for lg, view in v.items():
                for vk, vv in (view or {}).items():
                    out[f"views.{lg}.{vk}"] = vv
        elif k == "meta" and kind != "pairs" and isinstance(v, dict):
            for mk, mv in v.items():
                out[f"meta.{mk}"] = mv
        else:
            out[k] = v
    return {k: json.dumps(v, ensure_ascii=False, sort_keys=True) for k, v in out.items()}


def diff_releases(old: str | Path, new: str | Path) -> dict[str, Any]:
    from .read import release_meta

    old, new = Path(old), Path(new)
    mo, mn = release_meta(old), release_meta(new)
    out: dict[str, Any] = {
        "old": {"name": mo["name"], "version": mo["version"], "path": str(old)},
        "new": {"name": mn["name"], "version": mn["version"], "path": str(new)},
        "kinds": {},
    }
    for kind in L.KINDS:
        a, b = _load(old, kind), _load(new, kind)
        if not a and not b:
            continue
        added = [i for i in b if i not in a]
        removed = [i for i in a if i not in b]
        changed = []
        for i in b:
            if i in a:
                fa, fb = _flat(a[i], kind), _flat(b[i], kind)
                fields = sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
                if fields:
                    changed.append(
                        {
                            "id": i,
                            "fields": fields,
                            "before": {k: json.loads(fa[k]) if k in fa else None for k in fields},
                            "after": {k: json.loads(fb[k]) if k in fb else None for k in fields},
                        }
                    )
        field_counts: dict[str, int] = {}
        for c in changed:
            for f in c["fields"]:
                field_counts[f] = field_counts.get(f, 0) + 1
        out["kinds"][kind] = {
            "old": len(a),
            "new": len(b),
            "added": added,
            "removed": removed,
            "changed": changed,
            "unchanged": sum(1 for i in b if i in a) - len(changed),
            "changed_fields": dict(sorted(field_counts.items(), key=lambda kv: -kv[1])),
        }
    return out


def _short(v: Any, n: int = 70) -> str:
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 1] + "…"


def diff_markdown(d: dict[str, Any], *, max_items: int = 50) -> str:
    o, n = d["old"], d["new"]
    lines = [f"# Changes from {o['name']} {o['version']} to {n['name']} {n['version']}", ""]
    if not d["kinds"]:
        lines.append("Neither release has records.")
    for kind, k in d["kinds"].items():
        lines += [
            f"## {kind}: {k['old']} -> {k['new']} records",
            "",
            f"- added: {len(k['added'])}",
            f"- removed: {len(k['removed'])}",
            f"- changed: {len(k['changed'])}"
            + (
                " (" + ", ".join(f"{f} {c}" for f, c in list(k["changed_fields"].items())[:8]) + ")"
                if k["changed_fields"]
                else ""
            ),
            f"- unchanged: {k['unchanged']}",
            "",
        ]
        for title, ids in (("Added", k["added"]), ("Removed", k["removed"])):
            if ids:
                lines += [f"### {title}", ""] + [f"- `{i}`" for i in ids[:max_items]]
                if len(ids) > max_items:
                    lines.append(f"- ... and {len(ids) - max_items} more (see the JSON)")
                lines.append("")
        if k["changed"]:
            lines += ["### Changed", ""]
            for c in k["changed"][:max_items]:
                parts = [f"{f}: {_short(c['before'][f])} -> {_short(c['after'][f])}" for f in c["fields"][:4]]
                more = f" (+{len(c['fields']) - 4} fields)" if len(c["fields"]) > 4 else ""
                lines.append(f"- `{c['id']}`: " + "; ".join(parts) + more)
            if len(k["changed"]) > max_items:
                lines.append(f"- ... and {len(k['changed']) - max_items} more (see the JSON)")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
