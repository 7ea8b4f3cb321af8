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


def test_relative_instants_in_the_cli() -> None:
    import time

    import typer

    from braid.cli.common import relative_instant
    from braid.core.model.instants import parse_instant

    now = int(time.time())
    later = relative_instant("now+1h")
    assert later is not None and abs(parse_instant(later, "start") - (now + 3600)) <= 2
    earlier = relative_instant("now - 30m")
    assert earlier is not None and abs(parse_instant(earlier, "start") - (now - 1800)) <= 2
    assert relative_instant("2030-01-01T00:00:00Z") == "2030-01-01T00:00:00Z"
    assert relative_instant(None) is None
    try:
        relative_instant("now+soon")
    except typer.BadParameter as exc:
        assert "now+1h" in str(exc) or "duration" in str(exc)
    else:
        raise AssertionError("now+soon was accepted")
