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


def test_instant_options_read_here_or_go_to_the_server_as_given() -> None:
    import pytest
    import typer

    from braid.cli.common import cli_instant

    now = 1_893_456_000  # 2030-01-01T00:00:00Z
    assert cli_instant("now+1h", "--start", None, now) == "2030-01-01T01:00:00Z"
    assert cli_instant("now - 30m", "--start", None, now) == "2029-12-31T23:30:00Z"
    assert cli_instant("2030-01-01T00:00:00Z", "--start", None, now) == "2030-01-01T00:00:00Z"
    assert cli_instant(None, "--start", None, now) is None
    paris = cli_instant("2030-01-02 10:00", "--start", "Europe/Paris", now)
    assert paris == "2030-01-02T09:00:00Z"
    assert cli_instant("tomorrow 10:00", "--end", "Europe/Paris", now) == "2030-01-02T09:00:00Z"
    # no --tz: a zoneless local time is the server's to read, in the user's tz setting
    assert cli_instant("2030-01-02 10:00", "--start", None, now) == "2030-01-02 10:00"
    with pytest.raises(typer.BadParameter, match="duration"):
        cli_instant("now+soon", "--start", None, now)
    with pytest.raises(typer.BadParameter, match="does not exist"):
        cli_instant("2030-03-31 02:30", "--start", "Europe/Paris", now)


def test_views_show_wire_times_in_a_zone_and_say_which() -> None:
    from rich.console import Console

    from braid.cli.client_views import reservations, when

    assert when("2030-01-02T09:00:00Z", "Europe/Paris") == "2030-01-02 10:00:00 CET (+01:00)"
    assert when("2030-01-02T09:00:00Z", None) == "2030-01-02T09:00:00Z"
    assert when(None, "Europe/Paris") == "None"
    row = {"id": "r-1", "state": "reserved", "start": "2030-01-02T09:00:00Z", "end": "x"}
    console = Console(width=200, record=True)
    console.print(reservations([row], "Europe/Paris"))
    text = console.export_text()
    assert "2030-01-02 10:00:00 CET" in text and "times in Europe/Paris" in text


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
