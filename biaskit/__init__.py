"""biaskit: build, validate and use social-bias benchmarks for language models.

Stages live in sub-packages that map the repository folders:
``biaskit.curation`` (curation/), ``biaskit.annotation`` (annotation/),
``biaskit.evaluation`` (evaluation/), ``biaskit.prompts`` (prompts/), ``biaskit.data`` (data/).
What all stages share lives here: the record schema, readers, registries, cache, errors, I/O.
"""

__version__ = "0.1.0"
