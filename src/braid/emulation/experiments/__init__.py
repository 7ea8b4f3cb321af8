"""The experiments `braid emulate` runs, each reproducing one of the papers' results."""
