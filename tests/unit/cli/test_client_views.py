"""What `braid show` prints of a reservation's provisioning state."""

from __future__ import annotations

from braid.cli.client_views import provisioning


def test_provisioning_reads_as_a_person_would_say_it() -> None:
    assert provisioning(None) is None  # braid programs no switches here
    installed = {
        "state": "installed",
        "switch": None,
        "error": None,
        "since": "2030-01-01T10:00:00Z",
    }
    assert provisioning(installed) == "installed (since 2030-01-01T10:00:00Z)"
    failed = {**installed, "state": "failed", "switch": "s2", "error": "connection refused"}
    assert provisioning(failed) == "failed on s2: connection refused (since 2030-01-01T10:00:00Z)"
