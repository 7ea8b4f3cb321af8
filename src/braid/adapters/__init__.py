"""The outside world: files, databases, HTTP, gRPC, switches, Mininet, behind `app`'s ports."""
