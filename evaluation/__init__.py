"""biaskit.evaluation (the `evaluation/` folder)."""


def _models():
    import importlib

    importlib.import_module("biaskit.evaluation.options")


from biaskit.options import declare_models  # noqa: E402 (after the loader it registers, as it reads)

declare_models(_models)  # hints outside a command name evaluate's flags (--model for the field models)
