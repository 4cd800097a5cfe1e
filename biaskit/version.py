"""biaskit's version, in a module of its own: code that records it (run logs, release.json, scores)
imports it from here, not from the package (whose lazy notebook API would make an import cycle)."""

__version__ = "0.1.0"
