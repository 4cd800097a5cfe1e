"""StereoSet's validation rule for CATs (Nadeem et al., 2021, sec. 4.3).

Five validators label each of a CAT's three sentences as a stereotype, an anti-stereotype or
unrelated; a CAT is kept only when, for *every* sentence, at least three of them give the label
its writer gave (its ``gold_label``). :func:`option_verdict` applies that rule to one sentence:

- **accepted** when at least ``min_agree`` (default 3) validators gave the writer's label and no
  other label got as many votes. With five validators and ``min_agree`` 3 the second condition
  always holds (3 + 3 > 5), so this is exactly the paper's rule; with more validators it keeps a
  sentence only when the writer's label also wins the vote.
- **needs_adjudication** when fewer than ``min_agree`` validators answered (more annotations can
  still decide it), or when the writer's label reached ``min_agree`` but ties with another label.
- **rejected** otherwise: enough validators answered and fewer than ``min_agree`` agree with the
  writer.

The votes come from the judgments themselves when they are given (each validator counted once, with
their last answer), else from ``annotate aggregate``'s table, whose ``label``/``votes``/
``tied_labels`` give the writer's label's count whenever it can matter (it is the winner or tied
for first; a label with ``min_agree`` votes out of at most ``2 * min_agree - 1`` always is). The
aggregate's own ``status`` (its ``--min-agree``) is not used: the rule is this module's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, cast

STEREOSET_MIN_AGREE = 3
STEREOSET_VALIDATORS = 5


def judgment_counts(judgments) -> dict[tuple[str, str], Counter]:
    """``(task, question) -> Counter(label)`` with each annotator's last answer only (rows in file
    order; ``updated_at`` decides when present)."""
    import pandas as pd

    from biaskit.io import read_table

    df = judgments if isinstance(judgments, pd.DataFrame) else read_table(judgments)
    if not len(df):
        return {}
    df = df.copy()
    if "question" not in df.columns:
        df["question"] = "label"
    df = df[df["label"].notna() & (df["label"].astype(str).str.strip() != "")]
    df["_row"] = range(len(df))
    order = ["_row"]
    if "updated_at" in df.columns:
        df["_ts"] = pd.to_datetime(df["updated_at"], errors="coerce", utc=True)
        order = ["_ts", "_row"]
    df = df.sort_values(order, kind="stable", na_position="first")
    df = df.drop_duplicates(["task", "question", "worker"], keep="last")
    out: dict[tuple[str, str], Counter] = {}
    for t, q, lab in zip(
        df["task"].astype(str), df["question"].astype(str), df["label"].astype(str).str.strip(), strict=False
    ):
        out.setdefault((t, q), Counter())[lab] += 1
    return out


def option_verdict(
    gold: str,
    *,
    votes: Counter | None = None,
    aggregated: Mapping[str, Any] | None = None,
    min_agree: int = STEREOSET_MIN_AGREE,
) -> dict[str, Any]:
    """The rule for one CAT sentence whose writer's label is ``gold``: ``{"status", "reason",
    "agree", "n"}`` (``agree``: validators who gave ``gold``, None when the aggregated table cannot
    tell; ``status`` one of accepted / rejected / needs_adjudication / not_annotated)."""
    if votes:
        n = sum(votes.values())
        agree = votes.get(gold, 0)
        best_other = max((c for lab, c in votes.items() if lab != gold), default=0)
        tie, beaten = agree == best_other, agree < best_other
        winner = max(votes, key=lambda lab: (votes[lab], lab == gold))
    elif aggregated is not None:
        n = int(aggregated.get("n_annotators") or 0)
        label, top = aggregated.get("label"), int(aggregated.get("votes") or 0)
        tied = [x for x in str(aggregated.get("tied_labels") or "").split("|") if x]
        if label == gold and not tied:
            agree, tie, beaten, winner = top, False, False, gold
        elif gold in tied:
            agree, tie, beaten, winner = top, True, False, gold
        else:
            agree, tie, beaten, winner = None, False, True, label or "|".join(tied) or None
    else:
        return {"status": "not_annotated", "reason": "no validator labelled this sentence", "agree": 0, "n": 0}
    # agree is None only from the aggregated row (not None there)
    said = (
        f"{agree} of {n}"
        if agree is not None
        else f"fewer than {int(cast(Mapping[str, Any], aggregated).get('votes') or 0)} of {n}"
    )
    if agree is not None and agree >= min_agree and not tie and not beaten:
        return {"status": "accepted", "reason": "", "agree": agree, "n": n}
    if n < min_agree:
        return {
            "status": "needs_adjudication",
            "agree": agree,
            "n": n,
            "reason": f"only {n} validator(s) answered; the rule needs {min_agree} who agree with the writer",
        }
    if agree is not None and agree >= min_agree and tie:
        return {
            "status": "needs_adjudication",
            "agree": agree,
            "n": n,
            "reason": f"the writer's label '{gold}' ties with another label ({agree} of {n} each)",
        }
    if beaten:
        tail = f"most chose '{winner}'"
    elif tie:
        tail = "it ties with another label"
    else:
        tail = "no other label did better, but it falls short"
    return {
        "status": "rejected",
        "agree": agree,
        "n": n,
        "reason": f"{said} validators gave the writer's label '{gold}' (needs {min_agree}); {tail}",
    }


def cat_verdict(options: Mapping[str, dict[str, Any]]) -> tuple[str, str]:
    """A whole CAT from its options' verdicts (gold label -> :func:`option_verdict`): accepted when
    every option is; rejected when any is (no adjudication can save it); else needs_adjudication;
    not_annotated when no option was labelled."""
    st = {g: v["status"] for g, v in options.items()}
    if all(s == "not_annotated" for s in st.values()):
        return "not_annotated", ""
    if all(s == "accepted" for s in st.values()):
        return "accepted", ""
    status = "rejected" if "rejected" in st.values() else "needs_adjudication"
    reason = "; ".join(f"{g}: {v['reason']}" for g, v in options.items() if v["status"] != "accepted")
    return status, reason
