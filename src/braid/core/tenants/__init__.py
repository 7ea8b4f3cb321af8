"""Per-tenant throughput guarantees: TALON's allocation with main-path priority (seed 004).

A tenant names the main path its own controller chose; the allocator books
what that path can carry, preempts other requests' sub-paths on it when it
falls short (main paths are never preempted), tops the request up on
sub-paths and reallocates what the preempted requests lost.
"""

from braid.core.tenants.allocator import TenantAllocator
from braid.core.tenants.model import TenantOutcome, TenantRequest, TenantState
from braid.core.tenants.routes import check_main_path

__all__ = ["TenantAllocator", "TenantOutcome", "TenantRequest", "TenantState", "check_main_path"]
