"""The `braid` command line: thin commands over `bootstrap` and `app`."""
