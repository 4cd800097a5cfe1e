"""`biaskit evaluate` commands (thin typer wrappers around pure functions)."""
from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False)
