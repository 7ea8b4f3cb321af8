"""What the negotiation keeps on disk: agents' holds, the orchestrator's decisions, owners."""
