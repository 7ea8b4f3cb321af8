"""The reservation service: admission, modification, cancellation and what they move.

`service` is the one way in for REST, the CLI, NSI and every replica;
the modules beside it work through the same store, mirror and write seam
(`books`), never through the service's own attributes.
"""
