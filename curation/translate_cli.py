"""`biaskit curate translate` (a thin wrapper around :func:`biaskit.curation.translate.translate_file`).

The blind review of the candidates is the ``translation`` annotation kind: ``biaskit annotate push /
pull / apply / report --kind translation`` (:mod:`biaskit.annotation.kinds.translation`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.clitools import echo, echo_error

from .options import CatTranslateOptions, TranslateOptions

app = typer.Typer(add_completion=False)


def _console():
    from biaskit.clitools import console

    return console(stderr=True)


@app.command("translate")
@TranslateOptions.cli("o")
def translate_cmd(o: TranslateOptions) -> None:
    """Translate both sentences of every pair with every engine; check each candidate."""
    from .translate import translate_file

    out = o.out
    res = translate_file(o, progress=True)
    s = res.summary()
    _report(
        s,
        out,
        "pairs",
        f"{s['pairs']} pairs -> {s['candidates']} candidates in {out} ({s['resumed']} resumed "
        f"from an earlier run, {s['retried']} asked again after an engine failure, "
        f"{s['seconds']} s)",
    )


@app.command("cat-translate")
@CatTranslateOptions.cli("o")
def cat_translate_cmd(o: CatTranslateOptions) -> None:
    """Translate StereoSet CATs (context, BLANK and the three options together) with every engine;
    check each candidate. Review: `annotate push|pull|apply --kind cat_translation`."""
    from .cat_translate import translate_cats_file

    out = o.out
    res = translate_cats_file(o, progress=True)
    s = res.summary()
    _report(
        s,
        out,
        "cats",
        f"{s['cats']} CATs -> {s['candidates']} candidates in {out} ({s['resumed']} resumed "
        f"from an earlier run, {s['seconds']} s)",
    )


def _report(s: dict, out: Path, unit: str, line: str) -> None:
    """Notes, the summary line, the engine and flag tables; exit 1 when every record failed."""
    for note in s["notes"]:
        echo(f"warning: {note}", err=True)
    echo(line, err=True)
    from rich.table import Table

    t = Table("engine", "sent to engine", "from cache")
    for e, st in s["engines"].items():
        t.add_row(e, str(st["requested"]), str(st["cache_hits"]))
    con = _console()
    con.print(t)
    if s["flags"]:
        ft = Table("flag", "candidates")
        for code, n in s["flags"].items():
            ft.add_row(code, str(n))
        con.print(ft)
    if s["engine_failed"]:
        msg = (
            f"{s['engine_failed']} of {s[unit]} {unit[:-1] if unit == 'pairs' else 'CAT'}(s) have an engine_failed "
            f"candidate (see the engine's errors file beside {out}); re-run the same command to ask again."
        )
        if s["engine_failed"] == s[unit]:
            echo_error(f"every {unit[:-1] if unit == 'pairs' else 'CAT'} failed: " + msg)
            raise SystemExit(1)
        echo(f"warning: {msg}", err=True)
