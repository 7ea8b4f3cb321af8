"""`--tz` / BRAID_TZ: local times read in a zone, tables shown in it (braid plan, the client)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from tests.cli.test_client_cli import braid, clean_env, client_env, run_json, server

__all__ = ["client_env", "server"]  # the fixtures, used by name

TOPOLOGY = "src/braid/examples/science-net.yaml"
LINE = {"id": "r1", "src": "ORNL", "dst": "NERSC", "bandwidth": "10G", "mode": "fixed"}


def plan(*args: str, lines: Sequence[Mapping[str, object]], **env: str) -> tuple[int, str, str]:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "braid.cli.main", "plan", "--topology", TOPOLOGY, *args, "-"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=clean_env(**env),
    )
    return done.returncode, done.stdout, done.stderr


def epoch(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp())


def test_plan_reads_local_times_in_tz() -> None:
    request = {**LINE, "start": "2030-01-02 10:00", "end": "2030-01-02 12:00"}
    status, out, err = plan("--tz", "Europe/Paris", lines=[request])
    assert status == 0, err
    decision = json.loads(out)
    assert (decision["start"], decision["end"]) == (
        epoch("2030-01-02T10:00:00+01:00"),
        epoch("2030-01-02T12:00:00+01:00"),
    )


def test_plan_takes_the_zone_from_braid_tz_and_a_zone_in_the_line_wins() -> None:
    request = {**LINE, "start": "2030-01-02 10:00 UTC", "end": "2030-01-02 12:00"}
    status, out, err = plan(lines=[request], BRAID_TZ="America/Chicago")
    assert status == 0, err
    decision = json.loads(out)
    assert decision["start"] == epoch("2030-01-02T10:00:00+00:00")
    assert decision["end"] == epoch("2030-01-02T12:00:00-06:00")


def test_plan_without_a_zone_refuses_the_line_naming_both_ways() -> None:
    request = {**LINE, "start": "2030-01-02 10:00", "end": "2030-01-02 12:00"}
    status, out, _ = plan(lines=[request])
    assert status == 1  # every line invalid
    decision = json.loads(out)
    assert decision["status"] == "error" and decision["field"] == "start"
    assert "2030-01-02 10:00 Europe/Paris" in decision["reason"]
    assert "2030-01-02 10:00+01:00" in decision["reason"]


def test_plan_day_words_are_read_against_the_clock_in_tz() -> None:
    request = {**LINE, "start": "tomorrow 10:00", "end": "tomorrow 11:00"}
    status, out, err = plan("--tz", "Asia/Tokyo", lines=[request])
    assert status == 0, err
    start = datetime.fromtimestamp(json.loads(out)["start"], ZoneInfo("Asia/Tokyo"))
    today = datetime.now(ZoneInfo("Asia/Tokyo")).date()
    # the test may straddle midnight in Tokyo: tomorrow of the plan's clock or of ours
    assert start.date() in (today, today + timedelta(days=1))
    assert (start.hour, start.minute) == (10, 0)


def test_plan_refuses_an_unknown_tz_before_planning() -> None:
    status, out, err = plan("--tz", "Europe/Pariss", lines=[LINE])
    assert status == 2 and out == ""
    assert "--tz" in err and "did you mean Europe/Paris" in err


def test_the_plan_table_shows_times_in_tz_and_says_so() -> None:
    request = {**LINE, "start": "2030-07-02 10:00", "end": "2030-07-02 12:00"}
    status, out, err = plan("--tz", "Europe/Paris", "--table", lines=[request], COLUMNS="200")
    assert status == 0, err
    assert "2030-07-02 10:00:00 CEST" in out and "times in Europe/Paris" in out
    utc = {**LINE, "start": "2030-07-02T08:00:00Z", "end": "2030-07-02T10:00:00Z"}
    status, out, err = plan("--table", lines=[utc], COLUMNS="200")
    assert status == 0, err
    assert "times in UTC" in out and "2030-07-02T08:00:00Z" in out


def tomorrow_in(zone: str) -> str:
    return (datetime.now(ZoneInfo(zone)) + timedelta(days=1)).date().isoformat()


def test_the_client_reads_start_and_end_in_tz_and_shows_them_in_it(
    client_env: dict[str, str],
) -> None:
    day = tomorrow_in("America/Chicago")
    ask = ["reserve", "--src", "ORNL", "--dst", "NERSC", "--bandwidth", "1G",
           "--start", f"{day} 10:00", "--end", f"{day} 11:30"]  # fmt: skip
    view = run_json(client_env, *ask, "--tz", "America/Chicago")
    start = datetime.fromisoformat(f"{day}T10:00:00").replace(tzinfo=ZoneInfo("America/Chicago"))
    assert view["start"] == start.astimezone(UTC).isoformat().replace("+00:00", "Z")
    wide = {**client_env, "COLUMNS": "200"}
    shown = braid("show", view["id"], env={**wide, "BRAID_TZ": "America/Chicago"})
    assert shown.returncode == 0, shown.stderr
    assert f"{day} 10:00:00 C" in shown.stdout and "times in America/Chicago" in shown.stdout
    listed = braid("list", env=wide)
    assert "times in UTC" in listed.stdout


def test_the_client_sends_a_zoneless_time_to_the_server_which_asks_for_a_zone(
    client_env: dict[str, str],
) -> None:
    day = tomorrow_in("UTC")
    ask = ["reserve", "--src", "ORNL", "--dst", "NERSC", "--bandwidth", "1G",
           "--start", f"{day} 10:00", "--end", f"{day} 11:00"]  # fmt: skip
    refused = braid(*ask, env=client_env)
    assert refused.returncode == 2
    assert "start:" in refused.stderr and "Europe/Paris" in refused.stderr
    bad = braid(*ask, "--tz", "Nowhere/Atall", env=client_env)
    assert bad.returncode == 2 and "unknown time zone" in bad.stderr


def test_a_refusal_says_its_instants_in_tz(client_env: dict[str, str]) -> None:
    day = tomorrow_in("Asia/Tokyo")
    ask = ["reserve", "--src", "ORNL", "--dst", "NERSC", "--bandwidth", "500G",
           "--start", f"{day} 10:00", "--end", f"{day} 11:00", "--tz", "Asia/Tokyo"]  # fmt: skip
    refused = braid(*ask, env={**client_env, "COLUMNS": "300"})
    assert refused.returncode == 1, refused.stderr
    assert f"{day} 10:00:00 JST (+09:00)" in refused.stderr
    assert "Z," not in refused.stderr.split("alternative")[0]  # no UTC instant in the reason
