"""biaskit.evaluation (the `evaluation/` folder)."""
