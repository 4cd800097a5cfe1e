"""ILPS: the increased log probability score (Kurita et al. 2019), for masked LMs.

Kurita et al. measure how much an attribute raises a masked LM's probability of a target word in a
template such as "[TARGET] is [ATTRIBUTE]." (reference code ``lib/bias_calculator.py``, "GGG is XXX"):

1. ``p_tgt``: the template with the attribute filled in and the target masked; the probability of
   the target at its mask;
2. ``p_prior``: the attribute masked as well (one ``[MASK]``); the probability of the target again;
3. ``ILPS = log p_tgt − log p_prior``.

Cao et al. (2022 §2) use it per protected group the other way round ("the increase in probability
of the attribute ... for the <mask> token given a protected group"): ``predict="attribute"`` masks the
attribute and takes the prior with the group masked. A word cut into several pieces is masked piece
by piece in one input (every piece a ``[MASK]``) and its log-probability is the sum over its pieces
(the reference scores single-piece words only); the other word of the prior is one ``[MASK]``, as
the reference's template replacement.

A group's score for an attribute set is the mean ILPS over its words, the set's words and the
templates; ``groups.csv`` holds it for the first set (``A``), the second (``B``) and their difference
``A − B``, the group-level scores ``evaluate correlate`` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from biaskit.errors import BiaskitError
from biaskit.tables import md_table, num

from .choices import PREDICT
from .engine import Request
from .results import IlpsRun

if TYPE_CHECKING:
    from .options import IlpsOptions

TEMPLATES = ("{target} is {attribute}.",)  # the reference code's "GGG is XXX" (lib/bias_calculator.py)
PLACEHOLDERS = ("target", "attribute")


@dataclass(frozen=True)
class Item:
    template: str
    target: str
    attribute: str


def check_template(template: str) -> str:
    """``template`` as :func:`requests` fills it: ``{target}`` and ``{attribute}`` once each and nothing
    else ``str.format`` would replace. Refused, in one line: an unknown placeholder (``{x}``), a
    positional one (``{}``), a conversion or format spec (``{target!r}``, ``{target:>9}``), a doubled
    brace (``{{x}}``: ``format`` prints ``{x}``, so the words' character offsets, read from the
    template, would point at other characters) and a lone brace."""
    import string

    from biaskit.options import OptionError, say

    def bad(why: str) -> OptionError:
        return OptionError(
            f"{say('template', repr(template))}: {why}.",
            f"write a template such as {say('template', repr(TEMPLATES[0]))}: {{target}} and {{attribute}} "
            "once each, no other braces.",
        )

    try:
        fields = [(n, spec, conv) for _, n, spec, conv in string.Formatter().parse(template) if n is not None]
    except ValueError as exc:  # a lone '{' or '}'
        raise bad(f"not a template ({exc})") from None
    for name, spec, conv in fields:
        if name not in PLACEHOLDERS:
            raise bad(f"unknown placeholder '{{{name}}}' (only {{target}} and {{attribute}})")
        if spec or conv:
            raise bad(f"'{{{name}}}' has a conversion or format spec")
    names = [n for n, _, _ in fields]
    if names.count("target") != 1 or names.count("attribute") != 1:
        raise bad("it needs {target} and {attribute} once each")
    if "{{" in template or "}}" in template:
        raise bad("a doubled brace ('{{' or '}}') would be printed as one brace and shift the words' positions")
    return template


def _pieces(tok, text: str, spans: dict[str, tuple[int, int]]) -> tuple[list[int], dict[str, list[int]]]:
    enc = tok(text, return_offsets_mapping=True, add_special_tokens=True)
    where = {
        k: [i for i, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s < b and e > a]
        for k, (a, b) in spans.items()
    }
    for k, idx in where.items():
        if not idx:
            raise BiaskitError(
                f"the {k} in {text!r} maps to no token. Fix: write the word as plain text (the tokenizer "
                "drops some characters), or leave it out"
            )
    return list(enc["input_ids"]), where


def requests(tok, item: Item, predict: str = "target") -> tuple[Request, Request]:
    """The two engine requests of one (template, target, attribute): the word to predict masked with
    the other word filled in, and with the other word masked too (the prior)."""
    if tok.mask_token_id is None:
        raise BiaskitError("ILPS needs a masked LM (its tokenizer has no mask token). Fix: pass a masked LM")
    if not getattr(tok, "is_fast", False):
        raise BiaskitError("ILPS needs a fast tokenizer (character offsets). Fix: save the model with tokenizer.json")
    t = check_template(item.template)
    text = t.format(target=item.target, attribute=item.attribute)
    a_t = t.index("{target}")
    a_a = t.index("{attribute}")
    if a_t < a_a:
        spans = {"target": (a_t, a_t + len(item.target))}
        off = len(item.target) - len("{target}")
        spans["attribute"] = (a_a + off, a_a + off + len(item.attribute))
    else:
        spans = {"attribute": (a_a, a_a + len(item.attribute))}
        off = len(item.attribute) - len("{attribute}")
        spans["target"] = (a_t + off, a_t + off + len(item.target))
    ids, where = _pieces(tok, text, spans)
    scored, other = (
        (where["target"], where["attribute"]) if predict == "target" else (where["attribute"], where["target"])
    )
    m = tok.mask_token_id
    x = [m if i in scored else v for i, v in enumerate(ids)]
    req = Request(ids=tuple(x), positions=tuple(scored), targets=tuple(ids[i] for i in scored), text=text)
    # the prior: the other word becomes one [MASK]
    first = other[0]
    prior = [v for i, v in enumerate(x) if i not in other[1:]]
    prior[first] = m
    shift = len(other) - 1 if first < scored[0] else 0
    pos = tuple(i - shift for i in scored)
    return req, Request(ids=tuple(prior), positions=pos, targets=req.targets, text=text + " (prior)")


def ilps_scores(
    lm: Any,
    items: Sequence[Item],
    *,
    predict: str = "target",
    batch_size: int = 32,
    cache: Any = None,
    progress: bool = False,
) -> list[float]:
    """``log p − log p_prior`` for every item (:func:`requests`), through the scoring engine."""
    from .engine import make_engine

    if predict not in PREDICT:
        from biaskit.options import say

        raise BiaskitError(
            f"unknown ILPS direction '{predict}'. Fix: use {say('predict', 'target')} or {say('predict', 'attribute')}"
        )
    reqs = [r for it in items for r in requests(lm.tokenizer, it, predict)]
    engine = make_engine(
        lm,
        batch_size=batch_size,
        cache=cache if cache is not None else False,
        progress=progress,
        label=f"ilps {lm.name}",
    )
    lps = engine.loglikelihood(reqs)
    return [sum(lps[2 * i]) - sum(lps[2 * i + 1]) for i in range(len(items))]


def run_ilps(opts: IlpsOptions, *, progress: bool = False, command: str | None = None, cache: Any = None) -> IlpsRun:
    """ILPS of every protected group (``opts.groups``: JSON, default Cao et al. 2022's Table 4 groups
    with pleasant / unpleasant words) for a masked LM. Writes results.csv (one row per group, word,
    attribute and template), groups.csv, summary.json and report.md. ``progress``, ``command`` and
    ``cache`` (default: not ``no_cache``) are not options."""
    from .ceat import check_known_words, read_groups
    from .models import load_lm
    from .published import model_protocol
    from .result_folder import write_result_folder
    from .score_cache import open_cache

    applied = _protocol(opts)
    predict = applied.values["predict"]
    templates = [check_template(t) for t in opts.template or []] or list(TEMPLATES)
    domains, A, B, names = read_groups(opts.groups, "ilps")
    lm = load_lm(opts.model, kind="mlm", device=opts.device, dtype=opts.dtype)
    if lm.kind != "mlm":
        raise BiaskitError(f"ILPS needs a masked LM; '{opts.model}' is a {lm.kind} LM. Fix: pass a masked LM")
    check_known_words(lm.tokenizer, [w for g in domains.values() for ws in g.values() for w in ws] + A + B, opts.groups)
    keys = [
        (dom, g, w, side, a, t)
        for dom, gs in domains.items()
        for g, ws in gs.items()
        for w in ws
        for side, attrs in (("A", A), ("B", B))
        for a in attrs
        for t in templates
    ]
    dc = open_cache(not opts.no_cache if cache is None else cache)
    items = [Item(t, w, a) for _, _, w, _, a, t in keys]
    scores = ilps_scores(lm, items, predict=predict, batch_size=opts.batch_size, cache=dc, progress=progress)
    df = _results_frame(keys, scores)
    applied, checkpoint = model_protocol(applied, opts.model, lm)
    summary = {
        "benchmark": "ilps",
        "kind": "ilps",
        "model": opts.model,
        "fingerprint": lm.fingerprint,
        "checkpoint": checkpoint,
        "predict": predict,
        "templates": templates,
        "attributes": names,
        "groups": group_scores(df),
        "protocol": applied.as_dict(),
        "command": command,
    }
    write_result_folder(opts.out, summary, render_ilps(summary), results=df, groups=summary["groups"])
    return IlpsRun.from_summary(summary, opts.out)


def _protocol(o: IlpsOptions):
    """ILPS's direction: the protocol's by name (``cao2022``: the attribute), else Kurita et al.'s."""
    from biaskit.options import say

    from .protocols import apply_protocol, get_protocol
    from .protocols import words as W

    proto = get_protocol(o.protocol) if o.protocol not in (None, "auto") else None
    return apply_protocol(
        proto,
        "ilps",
        {"predict": o.predict},
        {"predict": "target"},
        chosen_by=say("protocol") if proto else "no data origin: Kurita et al.'s method",
        words={"predict": W.PREDICT},
    )


def _results_frame(keys: Sequence[tuple], scores: Sequence[float]):
    """results.csv: one row per group, word, attribute set, attribute and template."""
    import pandas as pd

    return pd.DataFrame(
        [
            {"domain": d, "group": g, "word": w, "set": side, "attribute": a, "template": t, "ilps": s}
            for (d, g, w, side, a, t), s in zip(keys, scores, strict=False)
        ]
    )


def group_scores(df) -> list[dict]:
    """groups.csv: each group's mean ILPS for the attribute sets ``A`` and ``B`` and their difference
    ``A-B`` (``count``: the group's rows of ``df``)."""
    grp = df.groupby(["domain", "group", "set"], sort=False)["ilps"].mean().unstack("set").reset_index()
    rows = []
    for _, r in grp.iterrows():
        n = int(((df["domain"] == r["domain"]) & (df["group"] == r["group"])).sum())
        for metric, v in (("A", r["A"]), ("B", r["B"]), ("A-B", r["A"] - r["B"])):
            rows.append({"domain": r["domain"], "group": r["group"], "metric": metric, "score": float(v), "count": n})
    return rows


def render_ilps(summary: dict) -> str:
    from .protocols.base import render_protocol

    lines = [
        f"# ILPS: {summary['model']}",
        "",
        f"Predicting the {summary['predict']}; templates: "
        + ", ".join(f"`{t}`" for t in summary["templates"])
        + f"; attribute sets A / B: {summary['attributes']}.",
        "",
        render_protocol(summary.get("protocol") or {}),
    ]
    by: dict = {}
    for r in summary["groups"]:
        by.setdefault((r["domain"], r["group"]), {})[r["metric"]] = r["score"]
    lines.append(
        md_table(
            ["domain", "group", "A", "B", "A − B"],
            [[d, g, num(v["A"], 3), num(v["B"], 3), num(v["A-B"], 3)] for (d, g), v in by.items()],
        )
    )
    lines += [
        "",
        "ILPS = log p(word | the other word filled in) − log p(word | the other word masked) (Kurita et al. "
        "2019), averaged over the group's words, the set's attributes and the templates.",
    ]
    return "\n".join(lines) + "\n"
