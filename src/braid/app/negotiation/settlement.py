"""What a reservation stands at now, from the decision log's transactions.

The result written with the decision says what was decided (paths, shares,
VLANs, rule plan); what each domain holds since then follows from the
reservation's transaction (acknowledged, or refused by a domain that could
not honour its Commit) and from its release, if any (a cancel, or the undoing
of a commit one domain refused). Reading both at lookup keeps the answer
true without rewriting the stored result whenever an acknowledgement
arrives.
"""

from __future__ import annotations

from dataclasses import replace

from braid.app.negotiation.results import NegotiationResult
from braid.core.negotiation.transaction import Decision, Phase, Transaction

_WORDS = {
    Decision.COMMIT: ("committed", "committing"),
    Decision.ABORT: ("aborted", "aborting"),
    Decision.RELEASE: ("released", "releasing"),
}


def holdings(main: Transaction, release: Transaction | None) -> tuple[tuple[str, str], ...]:
    """Each participant's state as far as the orchestrator knows."""
    out = []
    for domain in main.participants:
        if domain in main.refused:
            state = "refused-commit"
        elif release is not None:
            state = "released" if domain in release.acked else "releasing"
        elif main.decision is None:
            state = "prepared"
        else:
            done, underway = _WORDS[main.decision]
            state = done if domain in main.acked else underway
        out.append((domain, state))
    return tuple(out)


def current(
    result: NegotiationResult, main: Transaction | None, release: Transaction | None
) -> NegotiationResult:
    """The stored result with its present status and every domain's holding."""
    if main is None or main.decision is not Decision.COMMIT:
        return result
    held = holdings(main, release)
    if main.refused:
        who = ", ".join(sorted(main.refused))
        rest = "released in every other domain" if release is not None else ""
        done = rest if release is None or release.phase is Phase.DONE else "releasing the others"
        reason = f"{who} could not honour the commit; {done}".rstrip("; ")
        return replace(result, success=False, status="failed", reason=reason, holdings=held)
    if release is not None:
        return replace(result, success=False, status="cancelled", holdings=held)
    return replace(result, holdings=held)


def answer(main: Transaction | None, release: Transaction | None, domain: str, live: bool) -> str:
    """A participant's question about the outcome: commit, abort or pending.

    `live`: the negotiation is still running here (read before the log, so a
    decision written in between is seen). Unknown, undecided and not running,
    or released: abort (presumed abort; a released booking is freed anyway).
    """
    if main is None or release is not None:
        return "abort"
    if main.decision is None:
        return "pending" if live else "abort"
    if main.decision is Decision.COMMIT and domain in main.participants:
        return "commit"
    return "abort"
