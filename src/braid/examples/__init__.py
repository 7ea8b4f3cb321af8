"""Example networks and requests shipped with braid (`braid example`, `braid demo`)."""
