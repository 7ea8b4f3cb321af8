"""The web interface: static pages served at `/` that call `/v1` and nothing else.

The files ship inside the package (no CDN, no build step); every answer
carries a Content-Security-Policy that allows this origin's scripts, styles
and API alone, so a string that slipped into the DOM still could not load or
run anything from elsewhere.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Final

from fastapi import FastAPI, HTTPException
from fastapi.responses import Response

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS: Final = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # The assets change with braid's version; a reload picks a new one up.
    "Cache-Control": "no-cache",
}
_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_STATIC = files(__name__) / "static"


def _asset(name: str) -> Response:
    # Only plain file names with a known type: nothing can climb out of static/.
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or "\\" in name or name.startswith(".") or suffix not in _TYPES:
        raise HTTPException(404)
    resource = _STATIC / name
    if not resource.is_file():
        raise HTTPException(404)
    return Response(resource.read_bytes(), media_type=_TYPES[suffix], headers=HEADERS)


def mount_ui(app: FastAPI) -> None:
    """`/` (the page) and `/ui/<file>` (its scripts and styles), outside the API schema."""

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        return _asset("index.html")

    @app.get("/ui/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        return _asset(name)
