"""The orchestrator's multi-domain negotiation: phase 1 offers, phase 2 two-phase commit."""
