"""biaskit: build, validate and use social-bias benchmarks for language models.

Stages live in sub-packages that map the repository folders:
``biaskit.curation`` (curation/), ``biaskit.annotation`` (annotation/),
``biaskit.evaluation`` (evaluation/), ``biaskit.prompts`` (prompts/), ``biaskit.data`` (data/).
What all stages share lives here: the record schema, readers, registries, cache, errors, I/O.

The notebook API (docs/python-api.md): ``biaskit.load_release(DIR)`` and
``biaskit.evaluate_pairs(data, model=...)``, imported from :mod:`biaskit.api` on first use.
"""

from .version import __version__ as __version__  # the package's version (biaskit.__version__)

_API = ("load_release", "evaluate_pairs", "Release", "PairsResult")


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'biaskit' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_API))
