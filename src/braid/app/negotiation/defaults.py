"""Every default of a negotiation, written once, for both ends of it.

The orchestrator's settings (`OrchestratorConfig`), the agent's service, the
gRPC pool, the composition roots and the command line all take their
defaults from here. No braid import: the command line reads it to show its
options' defaults without loading the negotiation.
"""

from __future__ import annotations

from typing import Final

# How a request that names none is split (one of core.negotiation.strategies' names).
STRATEGY: Final = "partial-offers"
# Candidate domain paths of a request that names no number.
MAX_PATHS: Final = 2
# How long the orchestrator asks each Prep's hold to last, seconds.
HOLD_SECONDS: Final = 60
# The longest an agent keeps a hold, whatever a Prep asks (a Prep asking 0 gets it), seconds.
MAX_HOLD_SECONDS: Final = 300
# The deadline of each call to an agent, seconds.
CALL_TIMEOUT: Final = 2.0
# How long a batch to an agent may wait for other negotiations' messages, seconds.
BATCH_LINGER: Final = 0.010
# How often the orchestrator asks the agents for their views, seconds.
REFRESH_PERIOD: Final = 5.0
