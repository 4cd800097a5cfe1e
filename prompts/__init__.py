"""Versioned prompt templates (TOML files) used by curation and translation."""
