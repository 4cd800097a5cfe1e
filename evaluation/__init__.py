"""biaskit.evaluation (the `evaluation/` folder)."""


def _models():
    import importlib

    importlib.import_module("biaskit.evaluation.options")


from biaskit.options import declare_models  # noqa: E402

declare_models(_models)  # hints outside a command name evaluate's flags (--model for the field models)
