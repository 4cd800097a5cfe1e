"""Data shipped with biaskit: inventories, word lists, demo sample, dataset registry."""
