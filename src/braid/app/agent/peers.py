"""The agent's peer policy at the door: who is calling, and what that caller may ask for.

The rules are pure (`core.negotiation.peers`); this module turns what the
transport learnt about a caller (`Caller`) into a peer, and a broken rule
into the agent's answer: a rejected call for an unknown peer or an offer it
may not have, a no vote for a Prep. Every message names the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from braid.app.agent.messages import AgentError
from braid.core.negotiation.peers import Peer, PeerPolicy, check_offer, check_prep, identify
from braid.core.policy import Violation

__all__ = ["Caller", "admit", "offer_refusal", "prep_refusal", "refusal_text"]


@dataclass(frozen=True, slots=True)
class Caller:
    """What the transport knows of a caller: the names on its verified client certificate
    (common name and subject alternative names; none without mutual TLS) and the
    bearer token it presented (None if none)."""

    subjects: tuple[str, ...] = ()
    token: str | None = None


def refusal_text(violation: Violation) -> str:
    return f"policy {violation.rule}: {violation.message}"


def admit(policy: PeerPolicy | None, caller: Caller | None, domain: str) -> Peer | None:
    """The calling peer (None when the agent has no policy: anyone may call), or an
    AgentError: UNAUTHENTICATED without credentials that name a peer, POLICY for a
    certificate that names none."""
    if policy is None:
        return None
    caller = caller or Caller()
    found = identify(policy, caller.subjects, caller.token)
    if isinstance(found, Peer):
        return found
    code = "POLICY" if caller.subjects else "UNAUTHENTICATED"
    raise AgentError(code, "", f"{refusal_text(found)} of domain {domain}")


def offer_refusal(peer: Peer | None, window: tuple[int, int], now: int) -> AgentError | None:
    """Why `peer` may be offered nothing for `window` (not allowed, too long, too far ahead)."""
    if peer is None:
        return None
    found = check_offer(peer, *window, now)
    return None if found is None else AgentError("POLICY", "", refusal_text(found))


def prep_refusal(
    peer: Peer | None, window: tuple[int, int], bandwidth: int, now: int
) -> str | None:
    """The reason of a no vote: the rule a hold of `bandwidth` (every segment of the Prep
    together: what this domain would carry for the peer) breaks."""
    if peer is None:
        return None
    found = check_prep(peer, *window, bandwidth, now)
    return None if found is None else refusal_text(found)
