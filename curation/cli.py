"""`biaskit curate` commands (thin typer wrappers around pure functions).

Commands live in one module per family, each registering itself on ``app``:
``gen_cli`` (prompts, tuples, sentences, pairs, adapt, check) and ``translate_cli`` (MT + review).
"""
from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False)

from . import gen_cli  # noqa: E402,F401
from . import translate_cli  # noqa: E402,F401
