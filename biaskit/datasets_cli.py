"""`biaskit data` commands (filled in by the data-registry module)."""
from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False)
