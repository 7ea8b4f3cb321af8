"""The composition root: the one place that builds concrete adapters and hands them to services."""
