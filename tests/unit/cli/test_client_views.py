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


def test_an_all_slots_answer_says_free_slots_to_the_end_of_free_time() -> None:
    from rich.console import Console

    from braid.cli.client_views import answer

    decision = {
        "status": "answered",
        "duration": 3600,
        "slots": [["2030-01-01T00:00:00Z", "2030-01-01T01:00:01Z"]],
        "free": [["2030-01-01T00:00:00Z", "2030-01-01T02:00:00Z"]],
    }
    console = Console(width=200, record=True)
    console.print(answer(decision))
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in console.export_text().splitlines()
        if line.count("│") >= 3
    }
    assert rows["free slot"] == "2030-01-01T00:00:00Z → 2030-01-01T02:00:00Z"
    assert rows["can start"] == "from 2030-01-01T00:00:00Z, before 2030-01-01T01:00:01Z"


def test_the_plan_table_says_an_all_slots_span_s_free_time_then_its_starts() -> None:
    from braid.cli.plan_cmd import _slot_spans

    spans = _slot_spans([[0, 901]], 100)
    assert spans == (
        "free [1970-01-01T00:00:00Z, 1970-01-01T00:16:40Z) "
        "(starts [1970-01-01T00:00:00Z, 1970-01-01T00:15:01Z))"
    )
    assert _slot_spans([], 100) == "slots: none"
