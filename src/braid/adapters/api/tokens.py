"""`/v1/tokens`: list and revoke API tokens over REST (creating one stays `braid token create`).

Users see and revoke their own tokens; operators anyone's. A token is named
by its id (the start of its hash), never by the secret.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from braid.adapters.api.deps import Authorized
from braid.adapters.api.fastjson import FastJSON
from braid.adapters.api.offload import off_loop
from braid.adapters.api.responses import errors
from braid.app.records import TokenInfo
from braid.core.model.instants import format_instant

router = APIRouter(prefix="/v1/tokens", tags=["health"])
OneUser = Annotated[str | None, Query(description="Operators: one user's tokens.")]


class TokenOut(BaseModel):
    id: str
    user: str
    role: str
    created_at: str
    expires_at: str | None = None
    revoked_at: str | None = None


class TokensOut(BaseModel):
    tokens: list[TokenOut]


def token_view(token: TokenInfo) -> dict[str, str | None]:
    return {
        "id": token.id,
        "user": token.user,
        "role": token.role,
        "created_at": format_instant(token.created_at),
        "expires_at": format_instant(token.expires_at),
        "revoked_at": format_instant(token.revoked_at),
    }


@router.get("", response_model=TokensOut, responses=errors(401, 403))
async def list_tokens(
    caller: Authorized,
    user: Annotated[str | None, Query(description="Operators: one user's.")] = None,
) -> FastJSON:
    """Your tokens (operators: everyone's, or one user's): ids and dates, never the secrets."""
    found = await off_loop(caller.service.identities.visible, caller.user, user)
    return FastJSON({"tokens": [token_view(t) for t in found]})


@router.delete("/{token_id}", response_model=TokensOut, responses=errors(401, 403, 404, 422))
async def revoke(token_id: str, caller: Authorized) -> FastJSON:
    """Revoke a token by its id (or a start of at least 6 digits); it is refused at once here."""
    revoked = await off_loop(caller.service.identities.revoke, caller.user, token_id)
    return FastJSON({"tokens": [token_view(t) for t in revoked]})
