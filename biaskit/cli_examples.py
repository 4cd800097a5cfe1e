"""Two examples at the top of the ``--help`` of each main command (issue 20).

Each example is a command line that works from a clone's root folder: the files it reads are the
repository's own (``data/demo/...``, ``data/examples/...``) or ALL-CAPS placeholders (``MODEL``,
``PAIRS.jsonl``) to replace. tests/test_hints.py resolves every one of them (commands, options,
paths). :func:`add_examples` puts them into the commands' help when the CLI is built; a command
keeps its own docstring below them.
"""

from __future__ import annotations

LOCAL = "http://127.0.0.1:8000/v1"  # a local llama.cpp server (docs/curation.md)

EXAMPLES: dict[str, tuple[str, ...]] = {
    "init": ("biaskit init my-benchmark", "biaskit init my-adaptation --template adapt --no-hindi"),
    "run": (
        "biaskit run --project data/examples/demo-release --workdir demo-release-out",
        "biaskit run --project data/examples/demo-release --workdir demo-release-out --until release",
    ),
    "status": (
        "biaskit status --project data/examples/demo-release",
        "biaskit status --project data/examples/demo-release --json",
    ),
    "curate tuples": (
        "biaskit curate tuples --axis caste --n 5 --llm dummy --out tuples.jsonl",
        f"biaskit curate tuples --axis religion --model MODEL --base-url {LOCAL} --out tuples.jsonl",
    ),
    "curate sentences": (
        "biaskit curate sentences --tuples TUPLES.jsonl --per-tuple 3 --llm dummy --out sentences.jsonl",
        f"biaskit curate sentences --tuples TUPLES.jsonl --model MODEL --base-url {LOCAL} --out sentences.jsonl",
    ),
    "curate pairs": (
        "biaskit curate pairs --sentences SENTENCES.jsonl --out pairs.jsonl",
        f"biaskit curate pairs --sentences SENTENCES.jsonl --llm-fallback --model MODEL --base-url {LOCAL} "
        "--out pairs.jsonl",
    ),
    "curate check": (
        "biaskit curate check --pairs data/demo/demo_pairs.jsonl",
        "biaskit curate check --pairs data/demo/demo_pairs.jsonl --out checked.jsonl --strict",
    ),
    "curate translate": (
        "biaskit curate translate --pairs data/demo/demo_pairs.jsonl --source-lang en --target hi "
        "--engines llm:test --llm dummy --out candidates.jsonl",
        f"biaskit curate translate --pairs PAIRS.jsonl --target hi --engines llm:MODEL "
        f"--base-url {LOCAL} --out candidates.jsonl",
    ),
    "curate cats": (
        "biaskit curate cats --domains gender --targets mother --llm dummy --out cats.jsonl",
        "biaskit curate cats --domains religion --llm dummy --dry-run --out cats.jsonl",
    ),
    "llm serve": ("biaskit llm serve --model gemma3-270m", "biaskit llm serve --model smollm2 --port 8000"),
    "annotate serve": (
        "biaskit annotate serve --data-dir ls-data",
        "biaskit annotate serve --data-dir ls-data --port 8081",
    ),
    "annotate push": (
        "biaskit annotate push --kind pair --data data/demo/demo_pairs.jsonl --project demo-pairs",
        "biaskit annotate push --kind pair --data PAIRS.jsonl --project my-pairs --overlap 3",
    ),
    "annotate pull": (
        "biaskit annotate pull --project demo-pairs --out judgments.csv",
        "biaskit annotate pull --project demo-pairs --kind pair --out judgments.csv --raw export.json",
    ),
    "annotate apply": (
        "biaskit annotate apply --kind pair --data PAIRS.jsonl --judgments JUDGMENTS.csv --out validated.jsonl",
        "biaskit annotate apply --kind pair --data PAIRS.jsonl --judgments JUDGMENTS.csv --min-agree 2 "
        "--out validated.jsonl --json",
    ),
    "evaluate pairs": (
        "biaskit evaluate pairs --data data/demo/demo_pairs.jsonl -m gemma3-270m --out demo-out",
        "biaskit evaluate pairs --data RELEASE_DIR --split test -m MODEL -m MODEL2 --out results",
    ),
    "evaluate cats": (
        "biaskit evaluate cats --data STEREOSET_DEV.json -m gemma3-270m --out cats-out",
        "biaskit evaluate cats --data RELEASE_DIR --release-split test -m MODEL --out cats-out",
    ),
    "evaluate seat": (
        "biaskit evaluate seat --test indibias-paper -m all-minilm-l6-v2 --out seat-out",
        "biaskit evaluate seat --test data/seat/indibias-paper -m MODEL --pooling mean --out seat-out",
    ),
    "release build": (
        "biaskit release build --records data/demo/demo_pairs.jsonl --name demo --version 0.1.0 --out release-demo",
        "biaskit release build --records data/demo/demo_pairs.jsonl --name demo --version 0.1.0 "
        "--card-text data/examples/demo-release/card.md --license cc-by-4.0 --out release-demo",
    ),
    "release verify": ("biaskit release verify RELEASE_DIR", "biaskit release verify RELEASE_DIR --json"),
    "data download": (
        "biaskit data download crows-pairs --out datasets",
        "biaskit data download indibias-sample --out datasets --mirror MIRROR_DIR",
    ),
}


def examples_text(name: str) -> str:
    ex = EXAMPLES.get(name)
    if not ex:
        return ""
    return "Examples:\n\n" + "\n\n".join(f"    {e}" for e in ex)


def add_examples(app, prefix: str = "") -> None:
    """Prepend each command's examples to its help (after the first line, which is its summary in
    command lists). ``app``: the root ``typer.Typer``; sub-apps merged without a name are walked too."""
    from typer.models import DefaultPlaceholder

    for info in app.registered_commands:
        name = (prefix + " " + (info.name or info.callback.__name__.replace("_", "-"))).strip()
        text = examples_text(name)
        if not text:
            continue
        doc = info.help or (info.callback.__doc__ or "")
        import inspect

        doc = inspect.cleandoc(doc) if doc else ""
        first, _, rest = doc.partition("\n\n")
        info.help = first + "\n\n" + text + (("\n\n" + rest) if rest else "")
    for g in app.registered_groups:
        gname = g.name if not isinstance(g.name, DefaultPlaceholder) and g.name else None
        sub = g.typer_instance
        if gname is None and sub is not None:
            gname = sub.info.name if not isinstance(sub.info.name, DefaultPlaceholder) else None
        add_examples(sub, (prefix + " " + gname).strip() if gname else prefix)
