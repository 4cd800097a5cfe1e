"""Label Studio JSON exports (what ``Export > JSON`` and the export API give): a list of tasks with
``data``, ``annotations`` (each with ``result``, ``completed_by``, ``was_cancelled``, ...) and
``predictions``. This module reads the file and the generic parts of an annotation (the values of
each control, the annotator); turning values into judgments is the task kind's job
(:mod:`biaskit.annotation.kinds`)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from ..errors import InputError

EXPORT_FIX = "export the project from Label Studio as JSON (not JSON-MIN or CSV)."


def read_export(path: str | Path) -> list[dict]:
    """The tasks of an exported Label Studio JSON file (validated shape)."""
    from ..io import read_json

    tasks = read_json(path, fix=EXPORT_FIX)
    if not isinstance(tasks, list) or any(not isinstance(t, dict) or "data" not in t for t in tasks):
        raise InputError("expected a JSON list of tasks with 'data' and 'annotations'.", path=path, fix=EXPORT_FIX)
    return tasks


def read_users(path: str | Path) -> dict[int, str]:
    """A users table ``id,email`` (to name annotators by email in offline imports)."""
    from ..io import read_table

    udf = read_table(path)
    if not {"id", "email"} <= set(udf.columns):
        raise InputError(
            "the users file needs columns id and email.",
            path=path,
            fix="write one row per Label Studio user: id,email.",
        )
    users: dict[int, str] = {}
    for row, r in enumerate(udf.to_dict(orient="records"), start=1):
        try:
            uid = int(r["id"])
        except (TypeError, ValueError):
            raise InputError(
                f"user id {str(r['id'])!r} is not a whole number.",
                path=path,
                row=row,
                column="id",
                fix="give each Label Studio user's numeric id (Organization page, or the API's /api/users).",
            ) from None
        users[uid] = str(r["email"])
    return users


def annotation_values(result: list[dict] | None) -> dict[str, list[str]]:
    """control name (``from_name``) -> the chosen choices / typed texts of one annotation."""
    vals: dict[str, list[str]] = {}
    for item in result or []:
        name = cast(str, item.get("from_name"))  # every Label Studio result names its control
        v = item.get("value") or {}
        got = v.get("choices") if "choices" in v else v.get("text") if "text" in v else None
        if got is None:
            continue
        if isinstance(got, str):
            got = [got]
        vals.setdefault(name, []).extend(got)
    return vals


def annotator(ann: dict, users: dict[int, str] | None = None) -> str:
    """The annotator of an annotation: the email when known, else ``user:<id>``."""
    users = users or {}
    cb = ann.get("completed_by")
    if isinstance(cb, dict):
        return cb.get("email") or f"user:{cb.get('id')}"
    if cb in users:
        return users[cb]
    return f"user:{cb}"
