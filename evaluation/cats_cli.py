"""Commands registered on the stage app (see cli.py)."""
from __future__ import annotations

from .cli import app  # noqa: F401
