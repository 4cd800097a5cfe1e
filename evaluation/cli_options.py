"""What the `biaskit evaluate` commands print alike: the protocol line, whether a run is comparable
with the paper's figures, and the paper's figures beside the run's.

Their options are their options models (:mod:`.options`: one model per command, the options several
commands share declared once as functions there).
"""

from __future__ import annotations


def print_protocol(console, applied, model: str = "") -> None:
    """The protocol line every evaluate command prints (yellow when the run deviates from it), then
    whether the run is comparable with the paper's figures, and why not."""
    from rich.text import Text

    d = applied if isinstance(applied, dict) else applied.as_dict()
    if not d:
        return
    style = "green" if d.get("comparable") else "yellow"
    if d.get("name") == "none":
        console.print(
            Text.assemble(
                ("protocol none", style),
                f" ({d.get('chosen_by')}): biaskit's own defaults, not comparable with a paper's figures",
            ),
            soft_wrap=True,
        )
        return
    devs = d.get("deviations") or []
    console.print(
        Text.assemble(
            (f"protocol {d.get('name')}", style),
            f": {d.get('title')} (chosen by "
            f"{d.get('chosen_by')}); " + (f"{len(devs)} deviation(s):" if devs else "no deviation"),
        ),
        soft_wrap=True,
    )
    for x in devs:
        console.print(Text.assemble(("  deviation: ", "yellow"), x["text"]), soft_wrap=True)
    print_verdict(console, d, model)


def print_verdict(console, d: dict, model: str = "") -> None:
    """One line: whether a run (a model of it) is comparable with the paper's figures, and every reason
    why not (docs/fidelity.md, "What comparable means")."""
    from rich.text import Text

    from .protocols.base import verdict

    if not d or d.get("name") == "none":
        return
    text = verdict(d)
    head, _, rest = text.partition(": ")
    console.print(
        Text.assemble(
            ((f"{model}: " if model else "") + head, "green" if d.get("comparable") else "yellow"),
            (": " + rest) if rest else "",
        ),
        soft_wrap=True,
    )


def print_published(console, comp: dict) -> None:
    """The paper's figures beside the run, in the terminal (the first rows; report.md has them all)."""
    from .published import NOT_THE_PAPERS, VERIFIED

    if not comp:
        return
    if comp.get("status") == NOT_THE_PAPERS:
        console.print(
            f"published figures: named like {comp['model']} ({comp.get('hub')}) but not the paper's checkpoint "
            f"({comp.get('why')}): no figure printed",
            soft_wrap=True,
        )
        return
    if not comp.get("rows"):
        return
    rows = [r for r in comp["rows"] if r.get("biaskit") is not None]
    shown = rows[:6]
    how = "" if comp.get("status") == VERIFIED else "for orientation, checkpoint not verified; "
    console.print(
        f"published figures ({how}{comp['model']}, {comp['paper'].split('.')[0]}): "
        + (f"{comp['scope']}; " if comp.get("scope") else "")
        + "; ".join(f"{r['what']} paper {r['paper']:.2f} vs biaskit {r['biaskit']:.2f}" for r in shown)
        + (f"; ... {len(rows) - len(shown)} more in report.md" if len(rows) > len(shown) else ""),
        soft_wrap=True,
    )
