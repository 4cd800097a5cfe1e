"""Helpers for the annotation tests (test_annot_*.py)."""

from __future__ import annotations

from biaskit.annotation.kinds import get_kind


def ls_export(kind_name: str, records: list, annotations: dict) -> list[dict]:
    """A Label Studio JSON export as the server writes it (shape copied from a real 1.23 export): task i
    (from 1) holds RECORDS[i-1]'s data and one annotation per (user id, result, was_cancelled) in
    ANNOTATIONS[i]."""
    k = get_kind(kind_name)
    out = []
    for i, rec in enumerate(records, start=1):
        anns = [
            {
                "id": i * 100 + j,
                "completed_by": uid,
                "result": result,
                "was_cancelled": cancelled,
                "ground_truth": False,
                "created_at": f"2024-05-0{j}T10:00:00Z",
                "updated_at": f"2024-05-0{j}T10:00:00Z",
                "lead_time": 2.5 * j,
                "task": i,
                "project": 1,
            }
            for j, (uid, result, cancelled) in enumerate(annotations.get(i, []), start=1)
        ]
        out.append(
            {"id": i, "annotations": anns, "predictions": [], "data": k.task(rec)["data"], "meta": {}, "project": 1}
        )
    return out
