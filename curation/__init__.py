"""biaskit.curation (the `curation/` folder)."""
