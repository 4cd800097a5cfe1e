"""Apply the blind human review of machine translations, and report on it.

The loop: ``biaskit curate translate`` writes candidate records -> ``biaskit annotate push --kind
translation`` shows them in Label Studio (candidates shuffled per pair with a seed, engines hidden;
the slot -> engine order stays in the task data) -> reviewers pick a slot (``A``, ``B``, ...) or
``none`` and may type a corrected S1/S2 -> ``biaskit annotate pull`` gives judgment rows ->
:func:`apply_translation_review` (what ``biaskit annotate apply --kind translation`` runs) writes

- ``OUT`` (JSONL): the released target-language pairs, :class:`~biaskit.schema.SentencePair` with
  ``lang`` = target, ``source_id`` = the English ``pair_id``, ``status = accepted`` and
  ``meta.review`` = who chose what, the winning engine, whether and by whom it was edited, the
  chosen MT text, the edit distance, the checker flags before and after review;
- ``OUT.needs_review.jsonl``: pairs *returned to review*, in the candidates format (so they can be
  pushed again) with the reviewers' edit added as a candidate (engine ``review``), ``status =
  needs_review`` and the reason: an edited or chosen pair that still fails a blocking check, a tie,
  conflicting corrections;
- ``OUT.rejected.jsonl``: pairs the reviewers rejected (``none`` and no correction).

Decision rule per pair (one or more reviewers): the reviewers' choices are counted (one vote per
reviewer; a reviewer who annotated twice counts with the latest annotation); the most voted choice
wins, a tie is never broken silently (the pair goes back to review). The final text is the
winning candidate, replaced sentence by sentence by the corrections of the reviewers who voted for
the winner (when they agree; conflicting corrections go back to review). A ``none`` win with a
correction releases the correction; without one the pair is rejected. Every final pair is
re-checked (minimal-pair checker + MT checks against the English source); one that has a
*blocking* flag (:data:`BLOCKING`) is returned to review instead of released.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from biaskit.errors import InputError
from biaskit.schema import SentencePair, normalize_text

NONE = "none"
REVIEW_ENGINE = "review"

# Flags that stop a pair from being released: it is not a usable minimal pair in the target
# language. Informational flags are reported but do not block: span_substituted, entity_missing
# (reviewers may localise names, as IndiBias did), length_ratio, untranslated_latin / mixed_scripts
# (IndiBias' own translators kept "CEO" and "IQ" in Latin letters), multi_span / attribute_changed /
# span_not_identity (they also fire when the *English* pair is not minimal; translation_not_minimal
# is the one that compares with the source).
BLOCKING = frozenset({
    "identical", "trivial_diff", "translation_collapsed", "empty_translation", "translation_not_minimal",
    "wrong_script",
})


# ------------------------------------------------------------------------------------------ distance
def levenshtein(a: str, b: str) -> int:
    """Character edit distance (insertions, deletions, substitutions cost 1) on Unicode code points
    after NFC normalisation: a Devanagari vowel sign is one character."""
    a, b = normalize_text(a), normalize_text(b)
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]


# ------------------------------------------------------------------------------------------ judgments
def _load_judgments(judgments: Any) -> list[dict]:
    if isinstance(judgments, (str, Path)):
        from biaskit.io import read_table

        df = read_table(judgments)
        rows = df.to_dict(orient="records")
        source = str(judgments)
    elif hasattr(judgments, "to_dict"):
        rows = judgments.to_dict(orient="records")
        source = "judgments"
    else:
        rows = [dict(r) for r in judgments]
        source = "judgments"
    clean = []
    for i, r in enumerate(rows, start=1):
        r = {k: v for k, v in r.items() if not (isinstance(v, float) and v != v)}
        for k in ("task", "worker", "question"):
            if r.get(k) in (None, ""):
                raise InputError(f"missing '{k}'.", path=source, row=i, column=k,
                                 fix="use the judgments written by `biaskit annotate pull` (task, worker, question, label).")
        r["task"], r["worker"], r["question"] = str(r["task"]), str(r["worker"]), str(r["question"])
        r["_row"] = i
        clean.append(r)
    return clean


def _when(r: dict) -> str:
    return str(r.get("updated_at") or r.get("created_at") or "")


def _per_worker(rows: list[dict]) -> dict[str, dict[str, Any]]:
    """task rows -> {worker: {"choice", "candidate_index", "engine", "corrected_more", "corrected_less", ...}}."""
    by_worker: dict[str, list[dict]] = {}
    for r in rows:
        by_worker.setdefault(r["worker"], []).append(r)
    out = {}
    for w, rs in by_worker.items():
        # a reviewer who annotated twice: keep the latest annotation (its rows share ls_annotation)
        latest_key = max(((_when(r), str(r.get("ls_annotation", ""))) for r in rs), default=("", ""))
        if any("ls_annotation" in r for r in rs):
            rs = [r for r in rs if (_when(r), str(r.get("ls_annotation", ""))) == latest_key]
        d: dict[str, Any] = {"worker": w}
        for r in sorted(rs, key=_when):
            q = r["question"]
            if q == "choice":
                d["choice"] = str(r.get("label"))
                for k in ("candidate_index", "engine", "model"):
                    if r.get(k) not in (None, ""):
                        d[k] = r[k]
            elif q in ("corrected_more", "corrected_less"):
                if r.get("label") not in (None, "") and str(r["label"]).strip():
                    d[q] = str(r["label"]).strip()
            if r.get("comment"):
                d["comment"] = r["comment"]
            if r.get("lead_time") is not None:
                d["lead_time"] = r.get("lead_time")
        out[w] = d
    return out


def _candidate_of(vote: dict, cands: list[dict], pair_id: str) -> Optional[int]:
    """Map a reviewer's slot choice back to the candidate (via the index stored at push)."""
    if vote.get("choice") in (None, NONE):
        return None
    idx = vote.get("candidate_index")
    if idx is not None:
        try:
            i = int(float(idx))
        except (TypeError, ValueError):
            i = -1
        if 0 <= i < len(cands):
            return i
        raise InputError(f"pair {pair_id}: candidate_index {idx!r} but the pair has {len(cands)} candidates.",
                         fix="pull the judgments from the project the candidates file was pushed to.")
    eng, model = vote.get("engine"), vote.get("model")
    if eng:
        hits = [i for i, c in enumerate(cands) if c.get("engine") == eng and (model in (None, "") or c.get("model") == model)]
        if len(hits) == 1:
            return hits[0]
    raise InputError(f"pair {pair_id}: the choice '{vote.get('choice')}' of {vote['worker']} cannot be mapped to an "
                     "engine (no candidate_index / engine column).",
                     fix="use the judgments written by `biaskit annotate pull` for the translation kind: it adds the "
                         "engine behind each slot from the task data.")


# ------------------------------------------------------------------------------------------ apply
@dataclass
class ReviewResult:
    out: Path
    accepted: list[SentencePair] = field(default_factory=list)
    needs_review: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    not_reviewed: int = 0
    report: Optional[dict] = None

    @property
    def needs_review_path(self) -> Path:
        return _sibling(self.out, "needs_review")

    @property
    def rejected_path(self) -> Path:
        return _sibling(self.out, "rejected")

    def summary(self) -> dict[str, Any]:
        return {"out": str(self.out), "accepted": len(self.accepted), "needs_review": len(self.needs_review),
                "rejected": len(self.rejected), "not_reviewed": self.not_reviewed,
                "needs_review_file": str(self.needs_review_path), "rejected_file": str(self.rejected_path)}


def _sibling(out: Path, what: str) -> Path:
    return out.with_name(f"{out.stem}.{what}.jsonl")


def _source_pair(rec: dict) -> SentencePair:
    s = rec["source"]
    return SentencePair(sent_more=s["sent_more"], sent_less=s["sent_less"], direction=rec.get("direction") or "stereo",
                        bias_type=rec.get("bias_type") or "unknown", lang=rec.get("source_lang", "en"),
                        pair_id=rec["pair_id"])


def apply_translation_review(candidates_path: str | Path, judgments: Any, out_path: str | Path, *,
                             blocking: Iterable[str] = BLOCKING, min_votes: int = 1,
                             report_dir: Optional[str | Path] = None) -> ReviewResult:
    """Turn reviewed candidates into released target-language pairs (see the module docstring).

    ``judgments``: a CSV/JSONL path, a DataFrame or a list of dicts with ``task`` (= ``pair_id``),
    ``worker``, ``question`` (``choice`` / ``corrected_more`` / ``corrected_less``), ``label`` and,
    on choice rows, ``candidate_index`` (or ``engine`` [+ ``model``]). ``min_votes``: how many
    reviewers must back the winning choice for release (e.g. 2 of 3); fewer -> back to review.
    """
    from biaskit.io import write_jsonl

    from .translate import check_candidate, iter_candidates

    blocking = frozenset(blocking)
    out = Path(out_path)
    cand_records = [rec for _, rec in iter_candidates(candidates_path)]
    known = {r["pair_id"] for r in cand_records}
    rows = _load_judgments(judgments)
    by_task: dict[str, list[dict]] = {}
    for r in rows:
        by_task.setdefault(r["task"], []).append(r)
    unknown = sorted(set(by_task) - known)
    if unknown:
        raise InputError(f"{len(unknown)} judged task(s) are not in the candidates file, e.g. {unknown[:3]}.",
                         path=str(candidates_path), fix="pass the candidates file that was pushed to this project.")
    res = ReviewResult(out=out)
    for rec in cand_records:
        pid = rec["pair_id"]
        if pid not in by_task:
            res.not_reviewed += 1
            continue
        cands = rec["candidates"]
        tgt = rec.get("target_lang") or "hi"
        src_pair = _source_pair(rec)
        votes = _per_worker(by_task[pid])
        decided = [v for v in votes.values() if "choice" in v]
        for v in decided:
            v["candidate_index"] = _candidate_of(v, cands, pid)
            if v["candidate_index"] is not None:
                c = cands[v["candidate_index"]]
                v["engine"], v["model"] = c.get("engine"), c.get("model")
        tally = Counter("none" if v["candidate_index"] is None else v["candidate_index"] for v in decided)
        reviewers = [{k: v.get(k) for k in ("worker", "choice", "engine", "model", "corrected_more", "corrected_less",
                                             "comment", "lead_time") if v.get(k) is not None}
                     for v in sorted(votes.values(), key=lambda d: d["worker"])]
        review: dict[str, Any] = {"reviewers": reviewers, "votes": {str(k): n for k, n in tally.items()},
                                  "n_reviewers": len(decided)}

        def back(reason: str, extra: Optional[dict] = None) -> None:
            r2 = {**rec, "status": "needs_review", "review": {**review, "reason": reason}}
            if extra:
                r2["candidates"] = cands + [extra]
            res.needs_review.append(r2)

        if not decided:
            back("no reviewer made a choice (only corrections or comments).")
            continue
        ranked = tally.most_common()
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            back(f"tie between choices {', '.join(str(k) for k, n in ranked if n == ranked[0][1])}: adjudicate.")
            continue
        winner, n_win = ranked[0]
        review["agreement"] = round(n_win / len(decided), 4)
        if n_win < min_votes:
            back(f"only {n_win} reviewer(s) back the winning choice, {min_votes} needed.")
            continue
        backers = [v for v in decided if ("none" if v["candidate_index"] is None else v["candidate_index"]) == winner]
        corr: dict[str, Optional[str]] = {}
        conflict = None
        for side in ("corrected_more", "corrected_less"):
            texts = {normalize_text(v[side]) for v in backers if v.get(side)}
            if len(texts) > 1:
                conflict = side
            corr[side] = next(iter(texts)) if len(texts) == 1 else None
        if conflict:
            back(f"the reviewers who chose {winner} typed different corrections ({conflict}).")
            continue
        if winner == "none":
            if not (corr["corrected_more"] and corr["corrected_less"]):
                res.rejected.append({**rec, "status": "rejected", "review": {
                    **review, "reason": "no candidate was good enough and no complete correction was given."}})
                continue
            chosen = None
            mt_more = mt_less = None
        else:
            chosen = cands[int(winner)]
            mt_more, mt_less = chosen["sent_more"], chosen["sent_less"]
        final_more = corr["corrected_more"] or mt_more
        final_less = corr["corrected_less"] or mt_less
        edited = bool(chosen is None or normalize_text(final_more) != normalize_text(mt_more)
                      or normalize_text(final_less) != normalize_text(mt_less))
        editors = sorted(v["worker"] for v in backers if v.get("corrected_more") or v.get("corrected_less"))
        flags_after = check_candidate(src_pair, final_more, final_less, tgt)
        review.update({
            "winner_engine": chosen.get("engine") if chosen else REVIEW_ENGINE,
            "winner_model": chosen.get("model") if chosen else None,
            "winner_index": None if chosen is None else int(winner),
            "edited": edited, "editors": editors,
            "chosen_mt": None if chosen is None else {"sent_more": mt_more, "sent_less": mt_less},
            "edit_distance": None if chosen is None else {
                "sent_more": levenshtein(mt_more, final_more), "sent_less": levenshtein(mt_less, final_less)},
            "flags_before": (chosen or {}).get("flags", []),
            "flags_after": flags_after,
        })
        blockers = sorted({f["code"] for f in flags_after} & blocking)
        if blockers or normalize_text(final_more) == normalize_text(final_less):
            extra = None
            if edited:
                extra = {"engine": REVIEW_ENGINE, "model": ",".join(editors) or None, "sent_more": final_more,
                         "sent_less": final_less, "flags": flags_after, "strategy": "human-edit",
                         "provenance": {"editors": editors}}
            back(f"the {'edited' if edited else 'chosen'} pair still fails the checker: {', '.join(blockers or ['identical'])}.",
                 extra)
            continue
        pair = SentencePair(
            sent_more=final_more, sent_less=final_less, direction=rec.get("direction") or "stereo",
            bias_type=rec.get("bias_type") or "unknown", lang=tgt, source_id=pid, status="accepted",
            group_more=None, group_less=None,
            provenance={"source": "translation-review", "candidates_file": str(candidates_path),
                        "source_pair_id": pid, "source_lang": rec.get("source_lang", "en"),
                        "engine": review["winner_engine"], "model": review["winner_model"],
                        "source_provenance": rec.get("provenance", {})},
            meta={"review": review, "source": rec["source"]})
        res.accepted.append(pair)
    write_jsonl(out, res.accepted)
    write_jsonl(res.needs_review_path, res.needs_review)
    write_jsonl(res.rejected_path, res.rejected)
    res.report = translation_report(cand_records, res, out_dir=report_dir)
    return res


# ------------------------------------------------------------------------------------------ report
def _stats(xs: list[float]) -> dict[str, Any]:
    import statistics

    if not xs:
        return {"n": 0, "mean": None, "median": None, "max": None}
    return {"n": len(xs), "mean": round(statistics.fmean(xs), 4), "median": statistics.median(xs), "max": max(xs)}


def translation_report(candidates: Any, reviewed: Any, out_dir: Optional[str | Path] = None) -> dict[str, Any]:
    """Engine win rates, edit rate, character edit distance, checker flags before/after review.

    ``candidates``: the candidates file (or its records); ``reviewed``: a :class:`ReviewResult`, or
    the path of the released pairs file written by :func:`apply_translation_review` (its
    ``.needs_review`` / ``.rejected`` siblings are read when present). Writes ``report.json`` and
    ``report.md`` to ``out_dir`` when given.
    """
    from biaskit.io import read_jsonl, write_json

    if isinstance(candidates, (str, Path)):
        from .translate import iter_candidates

        candidates = [rec for _, rec in iter_candidates(candidates)]
    if isinstance(reviewed, ReviewResult):
        accepted = [p.model_dump(mode="json") for p in reviewed.accepted]
        back, rejected = reviewed.needs_review, reviewed.rejected
    else:
        p = Path(reviewed)
        accepted = read_jsonl(p)
        back = read_jsonl(_sibling(p, "needs_review")) if _sibling(p, "needs_review").exists() else []
        rejected = read_jsonl(_sibling(p, "rejected")) if _sibling(p, "rejected").exists() else []
    engines = sorted({f"{c.get('engine')}:{c.get('model')}" for r in candidates for c in r["candidates"]})
    shown = Counter(f"{c.get('engine')}:{c.get('model')}" for r in candidates for c in r["candidates"])
    reviews = [a["meta"]["review"] for a in accepted] + [r.get("review", {}) for r in back + rejected]
    # final decisions (accepted pairs only: a win means the text was released)
    wins = Counter(f"{rv['winner_engine']}:{rv['winner_model']}" for rv in (a["meta"]["review"] for a in accepted))
    # individual reviewer choices over all reviewed pairs
    choices = Counter()
    n_choices = 0
    for rv in reviews:
        for v in rv.get("reviewers", []):
            if "choice" in v:
                n_choices += 1
                choices[f"{v['engine']}:{v.get('model') or ''}" if v.get("engine") else "none"] += 1
    n_released = len(accepted)
    engine_rows = {}
    for e in engines:
        engine_rows[e] = {
            "candidates_shown": shown[e],
            "final_wins": wins[e], "final_win_rate": round(wins[e] / n_released, 4) if n_released else None,
            "reviewer_choices": choices[e], "reviewer_choice_rate": round(choices[e] / n_choices, 4) if n_choices else None,
            "flag_rate_before": None,
        }
    for e in engines:
        cs = [c for r in candidates for c in r["candidates"] if f"{c.get('engine')}:{c.get('model')}" == e]
        engine_rows[e]["flag_rate_before"] = round(sum(1 for c in cs if c.get("flags")) / len(cs), 4) if cs else None
    edited = [a for a in accepted if a["meta"]["review"].get("edited")]
    dists_all, dists_edited, norm = [], [], []
    for a in accepted:
        rv = a["meta"]["review"]
        ed = rv.get("edit_distance")
        if not ed:
            continue
        for side in ("sent_more", "sent_less"):
            d = ed[side]
            dists_all.append(d)
            if rv.get("edited"):
                dists_edited.append(d)
                mt = rv["chosen_mt"][side]
                norm.append(d / max(1, max(len(mt), len(a[side]))))
    before, after = Counter(), Counter()
    for rv in reviews:
        if "flags_before" in rv:
            before.update(f["code"] for f in rv["flags_before"])
        if "flags_after" in rv:
            after.update(f["code"] for f in rv["flags_after"])
    all_before = Counter(f["code"] for r in candidates for c in r["candidates"] for f in c.get("flags", []))
    reasons = Counter(r.get("review", {}).get("reason", "").split(":")[0] for r in back)
    report = {
        "pairs": {"candidates": len(candidates), "reviewed": len(accepted) + len(back) + len(rejected),
                  "released": n_released, "returned_to_review": len(back), "rejected": len(rejected)},
        "engines": engine_rows,
        "none_choices": choices["none"],
        "edit_rate": round(len(edited) / n_released, 4) if n_released else None,
        "edited_pairs": len(edited),
        "char_edit_distance": {"all_sentences": _stats(dists_all), "edited_sentences": _stats(dists_edited),
                               "edited_normalised": _stats(norm)},
        "flags": {"all_candidates_before": dict(sorted(all_before.items())),
                  "chosen_before": dict(sorted(before.items())), "final_after": dict(sorted(after.items()))},
        "returned_reasons": dict(reasons),
    }
    if out_dir is not None:
        out_dir = Path(out_dir)
        write_json(out_dir / "report.json", report)
        from biaskit.io import atomic_write_text

        atomic_write_text(out_dir / "report.md", report_markdown(report))
    return report


def report_markdown(rep: dict[str, Any]) -> str:
    p = rep["pairs"]
    lines = ["# Translation review report", "",
             f"Pairs: {p['candidates']} translated, {p['reviewed']} reviewed, **{p['released']} released**, "
             f"{p['returned_to_review']} returned to review, {p['rejected']} rejected.", "",
             "## Engines", "",
             "| engine | candidates shown | final wins | final win rate | reviewer choices | choice rate | flagged before review |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    fmt = lambda x: "–" if x is None else (f"{x:.1%}" if isinstance(x, float) else str(x))  # noqa: E731
    for e, r in rep["engines"].items():
        lines.append(f"| {e} | {r['candidates_shown']} | {r['final_wins']} | {fmt(r['final_win_rate'])} | "
                     f"{r['reviewer_choices']} | {fmt(r['reviewer_choice_rate'])} | {fmt(r['flag_rate_before'])} |")
    lines += ["", f"Reviewer choices of *none*: {rep['none_choices']}.", "",
              "## Edits", "",
              f"Edit rate: {fmt(rep['edit_rate'])} of released pairs ({rep['edited_pairs']}).", ""]
    ced = rep["char_edit_distance"]
    lines += ["| character edit distance (chosen MT -> final) | sentences | mean | median | max |",
              "|---|---:|---:|---:|---:|"]
    for k, label in (("all_sentences", "all released sentences"), ("edited_sentences", "edited sentences"),
                     ("edited_normalised", "edited, / longer length")):
        s = ced[k]
        lines.append(f"| {label} | {s['n']} | {fmt(s['mean'])} | {fmt(s['median'])} | {fmt(s['max'])} |")
    fl = rep["flags"]
    codes = sorted(set(fl["all_candidates_before"]) | set(fl["chosen_before"]) | set(fl["final_after"]))
    lines += ["", "## Checker flags before and after review", "",
              "| flag | all candidates | chosen candidates (before) | final pairs (after) |", "|---|---:|---:|---:|"]
    for c in codes:
        lines.append(f"| {c} | {fl['all_candidates_before'].get(c, 0)} | {fl['chosen_before'].get(c, 0)} | "
                     f"{fl['final_after'].get(c, 0)} |")
    if rep["returned_reasons"]:
        lines += ["", "## Returned to review", ""] + [f"- {k}: {n}" for k, n in rep["returned_reasons"].items()]
    return "\n".join(lines) + "\n"
