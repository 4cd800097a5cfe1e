"""`biaskit curate` commands (thin typer wrappers around pure functions).

Commands live in one module per family, each with its own typer app merged here:
``gen_cli`` (prompts, tuples, sentences, pairs, llm-task, adapt, check), ``translate_cli``
(MT + review) and ``cats_cli`` (StereoSet CATs: cats, cats-retention). The families do not import this module.
"""

from __future__ import annotations

import typer

from . import cats_cli, gen_cli, translate_cli

app = typer.Typer(no_args_is_help=True, add_completion=False)
app.add_typer(gen_cli.app)
app.add_typer(translate_cli.app)
app.add_typer(cats_cli.app)
