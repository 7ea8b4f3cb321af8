"""braid: guaranteed-bandwidth, multi-path, multi-domain connections for science networks.

Layers, each importing only those below it (checked by import-linter):
`cli` -> `bootstrap` / `emulation` -> `adapters` / `testing` -> `studies` -> `app` -> `core`.
"""
