"""``annotate judge-agreement``: the LLM as a measured judge. How well do an LLM's answers (``annotate
prelabel``) match the people's (``annotate pull``), and could it stand in for one of them?

For every choice question the LLM answered (each deciding question of the kind first), overall and per
axis (the tasks' ``bias_type``):

- **Cohen's kappa** between the LLM and the people's majority (items whose people have a unique
  plurality label), with the plain agreement rate and the **confusion table** (LLM label x majority);
- **Krippendorff's alpha** of the people alone and with the LLM as one more rater (the same
  :func:`.agreement.metrics` as ``annotate agreement``, on the same items);
- at the level of the kind's decision (all deciding questions), the **precision / coverage curve** of
  "accept when the LLM and the first k people agree" (people in the order of the judgments file): for ``k = 0, 1, ...``,
  the share of items
  where the LLM and the first ``k`` people give the same label (coverage) and, of those, the share
  whose decision under the kind's rule with everyone's judgments is the one that label gives
  (precision); next to it the same curve for the first ``k + 1`` people without the LLM. The LLM
  can stand in for one person at ``k`` when its curve is as precise as the people's (within
  ``tolerance``) and decides as many tasks; the judgments that saves against full overlap are counted.

The report ends with a plain verdict; when the LLM is not precise enough at any ``k`` it says that it
would not save any judgment.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from biaskit.errors import InputError
from biaskit.options import say
from biaskit.tables import md_table, num

if TYPE_CHECKING:
    from .judgment_options import JudgeOptions

JUDGE_FILES = ("judge.json", "judge.md")
#: fewer items than this and the verdict says the figures are too few to rely on
MIN_ITEMS = 50


def _prep(df, kind, source):
    from .aggregate import prepare

    if "question" not in df.columns:
        df = df.assign(question=next(iter(kind.decision_rules())))
    df = kind.votes(df)
    if "qtype" in df.columns:
        df = df[df["qtype"].astype(str) != "text"]
    return prepare(df, duplicates="last", source=source).df


def _majority(labels: list[str]) -> str | None:
    from collections import Counter

    c = Counter(labels).most_common()
    if not c or (len(c) > 1 and c[0][1] == c[1][1]):
        return None
    return c[0][0]


def _kappa(a: list[str], b: list[str]) -> float | None:
    """Cohen's kappa of two raters over the same items (:func:`.agreement.pairwise_cohen` on one pair)."""
    import pandas as pd

    from .agreement import pairwise_cohen

    if len(a) < 2:
        return None
    n = len(a)
    df = pd.DataFrame(
        {
            "task": [str(i) for i in range(n)] * 2,
            "question": "q",
            "worker": ["a"] * n + ["b"] * n,
            "label": list(a) + list(b),
        }
    )
    k = pairwise_cohen(df, min_overlap=2)["mean_pairwise_cohen_kappa"]
    return None if k is None or np.isnan(k) else round(float(k), 4)


def _alpha(rows: list[tuple]) -> float | None:
    import pandas as pd

    from .agreement import metrics

    df = pd.DataFrame(rows, columns=["task", "question", "worker", "label"])
    if df.empty or df["label"].nunique() < 2:
        return None
    try:
        a = metrics(df)["krippendorff_alpha"]
    except Exception:  # undefined on degenerate data
        return None
    return None if a is None else round(float(a), 4)


def _section(items: list[dict]) -> dict[str, Any]:
    """The figures of one question on ``items`` (``{task, llm, people: [labels in order], bias_type}``)."""
    import pandas as pd

    maj = [(it, _majority(it["people"])) for it in items]
    with_maj = [(it["llm"], m) for it, m in maj if m is not None]
    llm_l, maj_l = [x for x, _ in with_maj], [m for _, m in with_maj]
    out: dict[str, Any] = {
        "items": len(items),
        "items_with_majority": len(with_maj),
        "people_per_item": round(float(np.mean([len(it["people"]) for it in items])), 3) if items else None,
        "agreement_with_majority": round(float(np.mean([a == b for a, b in with_maj])), 4) if with_maj else None,
        "cohen_kappa_vs_majority": _kappa(llm_l, maj_l),
    }
    if with_maj:
        ct = pd.crosstab(pd.Series(llm_l, name="llm"), pd.Series(maj_l, name="majority"))
        out["confusion"] = {str(r): {str(c): int(ct.loc[r, c]) for c in ct.columns} for r in ct.index}
    people_rows = [
        (it["task"], "q", f"p{i}:{w}", lab)
        for it in items
        for i, (w, lab) in enumerate(zip(it["workers"], it["people"], strict=False))
    ]
    llm_rows = [(it["task"], "q", "llm", it["llm"]) for it in items]
    out["alpha_people"] = _alpha(people_rows)
    out["alpha_people_and_llm"] = _alpha(people_rows + llm_rows)
    return out


def _task_curve(tasks: list[dict], kind, rules, tolerance: float) -> dict[str, Any]:
    """The precision / coverage curve at the level of the kind's decision (``tasks``: ``{llm: {q: label},
    people: {q: [labels in order]}}`` with every deciding question answered by the LLM)."""
    qs = list(rules)
    max_k = max((min(len(t["people"][q]) for q in qs) for t in tasks), default=0)
    curve: list[dict[str, Any]] = []
    for k in range(0, max_k + 1):
        n_k = fired = fired_h = correct = correct_h = saved = 0
        for t in tasks:
            ppl = t["people"]
            n = min(len(ppl[q]) for q in qs)
            if n < k:
                continue
            n_k += 1
            full = kind.task_outcome({q: rules[q].outcome(_counts(ppl[q])) for q in qs})
            if all(all(p == t["llm"][q] for p in ppl[q][:k]) for q in qs):
                fired += 1
                correct += kind.task_outcome({q: rules[q].outcome({t["llm"][q]: n + 1}) for q in qs}) == full
                saved += n - k
            if n >= k + 1 and all(len(set(ppl[q][: k + 1])) == 1 for q in qs):
                fired_h += 1
                correct_h += kind.task_outcome({q: rules[q].outcome({ppl[q][0]: n + 1}) for q in qs}) == full
        curve.append(
            {
                "k": k,
                "tasks": n_k,
                "llm_and_k_people": {
                    "coverage": round(fired / n_k, 4) if n_k else None,
                    "precision": round(correct / fired, 4) if fired else None,
                    "judgments_saved": saved,
                },
                "k_plus_1_people": {
                    "coverage": round(fired_h / n_k, 4) if n_k else None,
                    "precision": round(correct_h / fired_h, 4) if fired_h else None,
                },
            }
        )
    # the LLM stands in for one person at k when "LLM + k people agree" decides as many tasks as "k + 1 people
    # agree" and as rightly (within the tolerance): every task it decides then costs one judgment less
    stand_in = [
        c["k"]
        for c in curve
        if c["llm_and_k_people"]["precision"] is not None
        and c["k_plus_1_people"]["precision"] is not None
        and c["llm_and_k_people"]["precision"] >= c["k_plus_1_people"]["precision"] - tolerance
        and c["llm_and_k_people"]["coverage"] >= c["k_plus_1_people"]["coverage"] - tolerance
        and c["llm_and_k_people"]["judgments_saved"] > 0
    ]
    return {"questions": qs, "tasks": len(tasks), "curve": curve, "stands_in_at_k": stand_in}


def _counts(labels) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in labels:
        out[x] = out.get(x, 0) + 1
    return out


def judge_report(opts: JudgeOptions) -> dict:
    """The report (a JSON-able dict) comparing the LLM's judgments (``opts.llm``) with the people's
    (``opts.judgments``): one entry per LLM rater (:func:`_model_report`)."""
    from .kinds import get_kind
    from .replay import _infer_kind

    source, llm_source = str(opts.judgments), str(opts.llm)
    h, m = _read_both(opts)
    k = get_kind(opts.kind or _infer_kind(m if "kind" in m.columns else h, llm_source))
    hp, mp = _prep(h, k, source), _prep(m, k, llm_source)
    llm_workers = _llm_raters(hp, mp, llm_source)
    rules = k.decision_rules(opts.min_agree)
    people = _people_answers(hp)
    bias = _bias_types(h, m)
    report: dict[str, Any] = {
        "kind": k.name,
        "min_agree": opts.min_agree,
        "tolerance": opts.tolerance,
        "models": {},
        "people": int(hp["worker"].nunique()),
        "source": source,
        "llm_source": llm_source,
    }
    for w in llm_workers:
        answers = mp[mp["worker"] == w]
        report["models"][str(w).removeprefix("llm:")] = _model_report(answers, people, bias, k, rules, opts.tolerance)
    if not any(v["questions"] for v in report["models"].values()):
        raise InputError(
            "the LLM and the people answered no question of the same task.",
            path=llm_source,
            fix="pre-label the file that was pushed: `biaskit annotate prelabel --data FILE` with --shuffle-seed "
            "equal to the seed the push used.",
        )
    return report


def _read_both(opts: JudgeOptions):
    """The people's and the LLM's judgments as read (each refused when empty)."""
    from biaskit.readers import read_judgments

    h = read_judgments(opts.judgments)
    m = read_judgments(opts.llm)
    for df, src, what in ((h, opts.judgments, "people's judgments"), (m, opts.llm, "LLM judgments")):
        if not len(df):
            raise InputError(
                f"no {what} in the file.",
                path=str(src),
                fix=f"pass `annotate pull` output as {say('judgments')} and `annotate prelabel` output as "
                f"{say('llm')}.",
            )
    return h, m


def _llm_raters(hp, mp, llm_source: str) -> list[str]:
    """The LLM raters' ids, in order; one that is also among the people's is refused (files swapped)."""
    llm_workers = sorted(mp["worker"].unique())
    overlap = set(hp["worker"]) & set(llm_workers)
    if overlap:
        raise InputError(
            f"the LLM's rater id '{sorted(overlap)[0]}' is also among the people's.",
            path=llm_source,
            fix=f"pass the people's judgments (`annotate pull`) as {say('judgments')} and the LLM's "
            f"(`annotate prelabel`) as {say('llm')}.",
        )
    return llm_workers


def _bias_types(*frames) -> dict[str, str]:
    """Each task's bias type (the first one given, the people's file first)."""
    from .aggregate import normalise_ids

    bias: dict[str, str] = {}
    for df in frames:
        if "bias_type" in df.columns:
            for t, b in zip(normalise_ids(df[["task"]])["task"], df["bias_type"], strict=False):
                if b is not None and not (isinstance(b, float) and b != b):
                    bias.setdefault(t, str(b))
    return bias


def _people_answers(hp) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(task, question) -> the people's (worker, label) in the order of the judgments file."""
    people: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for t, q, w, lab in zip(hp["task"], hp["question"], hp["worker"], hp["label"], strict=False):
        people.setdefault((t, q), []).append((w, lab))
    return people


def _model_report(answers, people: dict, bias: dict[str, str], kind, rules, tolerance: float) -> dict[str, Any]:
    """One LLM rater's figures: per question (overall and per axis), the decision curve and the verdict."""
    answered = {(t, q): lab for t, q, lab in zip(answers["task"], answers["question"], answers["label"], strict=False)}
    choice_qs = [q.name for q in kind.questions if q.type == "choice"]
    qs = list(dict.fromkeys(q for q in list(rules) + choice_qs if q in set(answers["question"])))
    per_q: dict[str, Any] = {}
    for q in qs:
        items = [
            {
                "task": t,
                "llm": lab,
                "people": [x for _, x in people[(t, q)]],
                "workers": [y for y, _ in people[(t, q)]],
                "bias_type": bias.get(t),
            }
            for (t, qq), lab in answered.items()
            if qq == q and (t, q) in people
        ]
        if items:
            per_q[q] = _section(items)
            per_q[q]["per_axis"] = {
                b: _section([it for it in items if it["bias_type"] == b])
                for b in sorted({it["bias_type"] for it in items if it["bias_type"]})
            }
    decided = [
        {
            "task": t,
            "llm": {q: answered[(t, q)] for q in rules},
            "people": {q: [x for _, x in people[(t, q)]] for q in rules},
        }
        for t in sorted({t for t, _ in answered})
        if all((t, q) in answered and people.get((t, q)) for q in rules)
    ]
    curve = _task_curve(decided, kind, rules, tolerance) if decided else None
    return {"questions": per_q, "decision": curve, "verdict": _verdict(per_q, curve, rules)}


def _verdict(per_q: dict[str, Any], curve: dict[str, Any] | None, rules) -> str:
    kappas = ", ".join(
        f"'{q}' {per_q[q]['cohen_kappa_vs_majority']:.2f}"
        for q in per_q
        if q in rules and per_q[q].get("cohen_kappa_vs_majority") is not None
    )
    kap = f" (Cohen's kappa with the people's majority: {kappas})" if kappas else ""
    if not curve:
        return (
            "The LLM is not good enough to save any human judgment here: it did not answer every question "
            "that decides a task" + kap + "."
        )
    ks = curve["stands_in_at_k"]
    what = "decision" if len(curve["questions"]) == 1 else "decision (all of " + ", ".join(curve["questions"]) + ")"
    if not ks:
        return (
            f"The LLM is not good enough to save any human judgment here: at every k, accepting a task's {what} "
            f"when the LLM and the first k people agree is less precise, or decides fewer tasks, than asking one "
            f"more person" + kap + "."
        )
    k0 = ks[0]
    c = next(c for c in curve["curve"] if c["k"] == k0)
    mine = (
        "the LLM's answer alone"
        if k0 == 0
        else (
            "the LLM's answer when the first person agrees with it"
            if k0 == 1
            else f"the LLM's answer when the first {k0} people agree with it"
        )
    )
    few = f" -- but on {curve['tasks']} tasks only, too few to rely on" if curve["tasks"] < MIN_ITEMS else ""
    return (
        f"The LLM can stand in for one person at k = {k0}: accepting {mine} gives the task's {what} as precisely "
        f"as {_people(k0 + 1)} agreeing ({c['llm_and_k_people']['precision']:.3f} vs "
        f"{c['k_plus_1_people']['precision']:.3f}) on as many tasks ({c['llm_and_k_people']['coverage']:.1%} vs "
        f"{c['k_plus_1_people']['coverage']:.1%}), one judgment less on each; against full overlap that "
        f"saves {c['llm_and_k_people']['judgments_saved']} judgment(s)" + kap + few + "."
    )


def _people(n: int) -> str:
    return "1 person" if n == 1 else f"{n} people"


def judge_markdown(rep: dict[str, Any]) -> str:
    lines = [
        f"# The LLM as a judge: kind `{rep['kind']}`",
        "",
        f"People's judgments: {rep['source'] or '(table)'}; LLM judgments: {rep['llm_source'] or '(table)'}.",
        "",
    ]
    for model, m in rep["models"].items():
        lines += [f"## {model}", "", f"**Verdict.** {m['verdict']}", ""]
        if m.get("decision"):
            lines += _md_curve(m["decision"])
        for q, s in m["questions"].items():
            lines += _md_question(q, s)
    return "\n".join(lines) + "\n"


def _f(x, nd=3) -> str:
    return num(x, nd)


def _md_curve(d: dict[str, Any]) -> list[str]:
    """The precision / coverage curve of one LLM rater."""
    header = [
        "k",
        "LLM + first k people: coverage",
        "precision",
        "judgments saved",
        "first k+1 people: coverage",
        "precision",
    ]
    rows = [
        [
            c["k"],
            _f(c["llm_and_k_people"]["coverage"]),
            _f(c["llm_and_k_people"]["precision"]),
            c["llm_and_k_people"]["judgments_saved"],
            _f(c["k_plus_1_people"]["coverage"]),
            _f(c["k_plus_1_people"]["precision"]),
        ]
        for c in d["curve"]
    ]
    return [
        f"Accept a task's decision ({', '.join(d['questions'])}) when the LLM and the first k people "
        f"agree, on {d['tasks']} tasks; precision = the decision everyone's judgments give:",
        "",
        md_table(header, rows, align="rrrrrr"),
        "",
    ]


def _md_question(q: str, s: dict[str, Any]) -> list[str]:
    """One question's figures: the sentence, the confusion table, the table per axis."""
    lines = [
        f"### Question `{q}`",
        "",
        f"{s['items']} items ({s['items_with_majority']} with a unique majority of the people; "
        f"{_f(s['people_per_item'], 2)} people per item). Agreement with the people's majority "
        f"{_f(s['agreement_with_majority'])}, Cohen's kappa {_f(s['cohen_kappa_vs_majority'])}; "
        f"Krippendorff's alpha {_f(s['alpha_people'])} for the people, {_f(s['alpha_people_and_llm'])} "
        f"with the LLM as one more rater.",
        "",
    ]
    if s.get("confusion"):
        cols = sorted({c for r in s["confusion"].values() for c in r})
        rows = [[r, *(row.get(c, 0) for c in cols)] for r, row in s["confusion"].items()]
        lines += [md_table(["LLM \\ majority", *cols], rows, align="l" + "r" * len(cols)), ""]
    if s.get("per_axis"):
        rows = [
            [
                b,
                a["items"],
                _f(a["agreement_with_majority"]),
                _f(a["cohen_kappa_vs_majority"]),
                _f(a["alpha_people"]),
                _f(a["alpha_people_and_llm"]),
            ]
            for b, a in s["per_axis"].items()
        ]
        lines += [
            md_table(["axis", "items", "agreement", "kappa", "alpha people", "alpha + LLM"], rows, align="lrrrrr"),
            "",
        ]
    return lines


def judge_agreement(opts: JudgeOptions) -> dict:
    """``annotate judge-agreement``: write ``judge.json`` and ``judge.md`` to ``opts.out`` (replaced whole);
    returns the report."""
    from biaskit.io import atomic_dir, write_json

    rep = judge_report(opts)
    with atomic_dir(opts.out, owns=JUDGE_FILES) as tmp:
        write_json(Path(tmp) / "judge.json", rep)
        (Path(tmp) / "judge.md").write_text(judge_markdown(rep), encoding="utf-8")
    return rep
