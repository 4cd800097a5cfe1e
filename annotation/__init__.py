"""biaskit.annotation (the `annotation/` folder)."""
