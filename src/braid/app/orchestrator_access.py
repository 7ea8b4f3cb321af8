"""Who calls the orchestrator's own service, and what each caller may see and change.

The Orchestrator service (gRPC) knows its callers as the REST API does: as a
`User` (name, role). A bearer token is one `braid token create` made, checked
against the same store (revoked and expired tokens refused as REST refuses
them); a verified client certificate names a user by its common name (its
first name), an operator when the name is listed as one. Ownership is REST's
rule too (`InterdomainService`, `service._visible`): a caller sees, cancels and
modifies only its own reservations; operators all of them; someone else's
answers exactly like one that does not exist.

A reservation id is the caller's: the same request under the same id answers
the first outcome again (a retry), a different request under a taken id is
refused, whoever asks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Final

from braid.app.errors import AuthError, ForbiddenError, NotFoundError
from braid.app.interdomain import Entry, OwnerBook
from braid.app.negotiation.modification import Modification
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import NegotiationRequest, NegotiationResult
from braid.app.negotiation.volume import (
    VolumeOutcome,
    VolumeRequest,
    lookup_volume,
)
from braid.app.negotiation.volume_modify import VolumeChange
from braid.app.ports import Repository
from braid.app.records import User
from braid.app.tokens import BearerTokens
from braid.core.errors import BraidError, InputError

__all__ = [
    "ANONYMOUS",
    "Credentials",
    "IdTakenError",
    "Identities",
    "OwnedOrchestrator",
]

# Who an orchestrator served with --insecure takes a caller without credentials for.
ANONYMOUS: Final = User("anonymous", "operator")
# Roles that may use the Orchestrator service (a monitor may only set link states).
_ROLES: Final = ("user", "operator")
_MISSING: Final = (
    "no credentials: send 'authorization: Bearer <token>' metadata (braid token create) "
    "or a client certificate signed by the orchestrator's --tls-ca"
)


class IdTakenError(BraidError):
    """A reservation id already stands for another request (or another user's)."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """What the transport learnt of a caller: the names of its verified client
    certificate (common name first; none without mutual TLS) and its `authorization`
    metadata (None if none)."""

    subjects: tuple[str, ...] = ()
    authorization: str | None = None


class Identities:
    """Credentials to a `User`. `tokens`: the store of `braid token create` (None: no
    tokens accepted); `operators`: certificate names that are operators; `open`: a
    caller without credentials is `ANONYMOUS` (--insecure) instead of refused."""

    def __init__(
        self,
        tokens: Repository | None = None,
        *,
        operators: Sequence[str] = (),
        open: bool = False,
    ) -> None:
        self.tokens = None if tokens is None else BearerTokens(tokens, _epoch_now)
        self.operators = frozenset(operators)
        self.open = open

    def user(self, credentials: Credentials) -> User:
        """The caller, or AuthError. A token, when sent, decides (a bad one is refused
        even beside a good certificate); else the certificate; else only an open service
        lets the caller in."""
        if credentials.authorization is not None:
            if self.tokens is None:
                raise AuthError("this orchestrator takes no bearer tokens (no --database)")
            user = self.tokens.authenticate(credentials.authorization)
        elif credentials.subjects:
            name = credentials.subjects[0]
            role = "operator" if self.operators.intersection(credentials.subjects) else "user"
            user = User(name, role)
        elif self.open:
            return ANONYMOUS
        else:
            raise AuthError(_MISSING)
        if user.role not in _ROLES:
            raise ForbiddenError(
                f"role {user.role} may not use the orchestrator (only {' or '.join(_ROLES)})"
            )
        return user


class OwnedOrchestrator:
    """The orchestrator's reservations on behalf of users: who owns which, who may see it."""

    def __init__(
        self, orchestrator: Orchestrator, owners: OwnerBook, clock: Callable[[], float] = time.time
    ) -> None:
        self.orchestrator = orchestrator
        self.owners = owners
        self.clock = clock
        self._lock = threading.Lock()  # an id is claimed by one caller at a time

    def reserve(self, user: User, request: NegotiationRequest) -> NegotiationResult:
        """Negotiate `request` for `user`; the same request under the same id again answers
        the first outcome; a taken id with another request (or another user's) is refused."""
        new = self._claim(user, request.id, asked_of(request))
        try:
            return self.orchestrator.reserve(request)
        except InputError:
            if new:  # refused before negotiating: nothing to remember
                self.owners.remove(request.id)
            raise

    def reserve_volume(self, user: User, request: VolumeRequest) -> dict[str, Any]:
        """Negotiate a volume for `user` (not_before 0: now), as `reserve` a window; the
        reservation as stored (`lookup_volume`), committed or refused."""
        new = self._claim(user, request.id, {"kind": "grpc-volume", **asdict(request)})
        if not new:  # a retry: the first outcome
            known = lookup_volume(self.orchestrator, request.id)
            if known is None:
                raise InputError("id", f"reservation {request.id!r} is being negotiated")
            return known
        if request.not_before == 0:
            request = replace(request, not_before=int(self.clock()))
        try:
            self.orchestrator.reserve_volume(request)
        except InputError:
            self.owners.remove(request.id)  # refused before negotiating
            raise
        stored = lookup_volume(self.orchestrator, request.id)
        assert stored is not None, "a negotiated volume keeps its outcome"
        return stored

    def _claim(self, user: User, reservation: str, asked: Mapping[str, Any]) -> bool:
        """Make `user` the owner of a new id (True), or check that a known id is this
        user's same request again (False); else IdTakenError."""
        with self._lock:
            entry = self.owners.get(reservation)
            if entry is None:
                self._unowned(reservation)
                # Before negotiating: it always has its owner.
                self.owners.add(Entry(reservation, user.name, int(self.clock()), dict(asked)))
                return True
        _same(user, entry, asked)
        return False

    def _unowned(self, reservation: str) -> None:
        """An id the log knows with no owner (made before owners were kept) is taken."""
        if self.orchestrator.decisions.result(reservation) is not None:
            raise IdTakenError(f"reservation id {reservation!r} is taken; use another id")

    def lookup(self, user: User, reservation: str) -> NegotiationResult:
        self._owned(user, reservation)
        result = self.orchestrator.lookup(reservation)
        if result is None:  # still being negotiated: no outcome yet
            raise NotFoundError(f"unknown reservation {reservation!r}")
        return result

    def volume(self, user: User, reservation: str) -> dict[str, Any] | None:
        """A volume reservation as stored (`lookup_volume`); None if it is not a volume (or
        still negotiating)."""
        self._owned(user, reservation)
        return lookup_volume(self.orchestrator, reservation)

    def cancel_volume(self, user: User, reservation: str) -> dict[str, Any] | None:
        """Release every step of a volume in every domain (idempotent), as stored after."""
        self._owned(user, reservation)
        return self.orchestrator.cancel_volume(reservation)

    def cancel(self, user: User, reservation: str) -> NegotiationResult | None:
        """Release it in every domain (owner or operator); None while being negotiated."""
        self._owned(user, reservation)
        return self.orchestrator.cancel(reservation)

    def modify(
        self, user: User, reservation: str, change: Modification
    ) -> NegotiationResult | None:
        self._owned(user, reservation)
        return self.orchestrator.modify(reservation, change)

    def modify_volume(
        self, user: User, reservation: str, change: VolumeChange
    ) -> tuple[VolumeOutcome, dict[str, Any]] | None:
        """A volume's new version (make-before-break) and the reservation as stored after
        (the old version when refused); None if it is not a volume."""
        self._owned(user, reservation)
        outcome = self.orchestrator.modify_volume(reservation, change)
        if outcome is None:
            return None
        stored = lookup_volume(self.orchestrator, reservation)
        assert stored is not None, "a modified volume keeps its outcome"
        return outcome, stored

    def _owned(self, user: User, reservation: str) -> Entry | None:
        """The owner's entry, or NotFoundError as for an id nobody used. An operator also
        reaches a reservation made before owners were kept (no entry)."""
        entry = self.owners.get(reservation)
        if entry is not None and _may_see(user, entry):
            return entry
        unowned = entry is None and user.role == "operator"
        if unowned and self.orchestrator.decisions.result(reservation) is not None:
            return None
        raise NotFoundError(f"unknown reservation {reservation!r}")


def asked_of(request: NegotiationRequest) -> dict[str, Any]:
    """The request as kept with its owner, to tell a retry from another request."""
    return {"kind": "grpc", **asdict(request)}


def _same(user: User, entry: Entry, asked: Mapping[str, Any]) -> None:
    if not _may_see(user, entry) or dict(entry.request) != dict(asked):
        raise IdTakenError(
            f"reservation id {entry.id!r} is taken by a different request; use another id "
            "(the same request again answers its first outcome)"
        )


def _may_see(user: User, entry: Entry) -> bool:
    return user.role == "operator" or entry.owner == user.name


def _epoch_now() -> int:
    """Token expiries are epoch seconds: the orchestrator judges them by the wall clock."""
    return int(time.time())
