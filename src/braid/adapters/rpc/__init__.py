"""gRPC adapters: the domain agent's servicer, the orchestrator's clients, TLS."""
