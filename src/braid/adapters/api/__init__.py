"""The REST API (FastAPI): thin handlers over `braid.app`'s service functions."""

from __future__ import annotations

from braid.adapters.api.app import create_app

__all__ = ["create_app"]
