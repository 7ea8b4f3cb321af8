"""`braid plan`, `braid example` and `braid topology` through the real command."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples"
TOPOLOGY = EXAMPLES / "science-net.yaml"


def braid(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "braid.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_plan_writes_one_decision_per_request_in_order() -> None:
    requests = (EXAMPLES / "requests.jsonl").read_text()
    result = braid("plan", "--topology", str(TOPOLOGY), "-", stdin=requests)
    assert result.returncode == 0, result.stderr
    decisions = [json.loads(line) for line in result.stdout.splitlines()]
    sent = [json.loads(line) for line in requests.splitlines() if line.strip()]
    assert [d["id"] for d in decisions] == [s["id"] for s in sent]
    assert all(d["v"] == 1 for d in decisions)
    statuses = {d["status"] for d in decisions}
    assert statuses == {"reserved", "rejected", "answered", "released", "error"}


def test_bad_lines_get_errors_with_line_and_field_and_planning_goes_on(tmp_path: Path) -> None:
    lines = [
        '{"id": "a", "src": "ORNL", "dst": "NERSC", "bandwidth": 10, "start": 0, "end": 10}',
        "{not json",
        '{"id": "b", "src": "ORNL", "dst": "NOWHERE", "bandwidth": 10, "start": 0, "end": 10}',
        "",
        '{"id": "c", "src": "ORNL", "dst": "NERSC", "bandwidth": 10, "start": 10, "end": 5}',
        '{"id": "d", "src": "ORNL", "dst": "NERSC", "bandwidth": 10, "start": 0, "end": 10}',
    ]
    path = tmp_path / "requests.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = braid("plan", "-t", str(TOPOLOGY), str(path))
    decisions = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d["status"] for d in decisions] == ["reserved", "error", "error", "error", "reserved"]
    assert decisions[1]["line"] == 2 and "JSON" in decisions[1]["reason"]
    assert (decisions[2]["line"], decisions[2]["field"]) == (3, "dst")
    assert (decisions[3]["line"], decisions[3]["field"]) == (5, "end")


def test_absurd_numbers_are_error_lines_not_a_crash() -> None:
    lines = [
        '{"id": "a", "src": "ORNL", "dst": "NERSC", "bandwidth": "1e400G", "start": 0, "end": 10}',
        '{"id": "b", "src": "ORNL", "dst": "NERSC", "bandwidth": 1e400, "start": 0, "end": 10}',
        '{"id": "c", "src": "ORNL", "dst": "NERSC", "bandwidth": 10, "start": 0, "end": 1e400}',
        '{"id": "d", "mode": "earliest", "src": "ORNL", "dst": "NERSC", "bandwidth": 10,'
        ' "not_before": 0, "duration": 100000000000000000000}',
        '{"id": "e", "src": "ORNL", "dst": "NERSC", "bandwidth": 10, "start": 0, "end": 10}',
    ]
    result = braid("plan", "-t", str(TOPOLOGY), "-", stdin="\n".join(lines) + "\n")
    decisions = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["status"], d.get("field")) for d in decisions] == [
        ("error", "bandwidth"),
        ("error", "bandwidth"),
        ("error", "end"),
        ("error", "duration"),
        ("reserved", None),
    ], result.stderr


def test_topology_export_is_normalised(tmp_path: Path) -> None:
    result = braid("topology", "export", "--topology", str(TOPOLOGY))
    exported = json.loads(result.stdout)
    link = next(x for x in exported["links"] if x["id"] == "CHIC-NEWY-2")
    assert (link["a"], link["b"], link["capacity"]) == ("CHIC", "NEWY", 40000)
    assert link["latency_ms"] > 5


def test_missing_capacity_says_what_to_do(tmp_path: Path) -> None:
    topo = tmp_path / "t.yaml"
    topo.write_text("nodes: [{id: A}, {id: B}]\nlinks: [{id: AB, a: A, b: B}]\n")
    result = braid("topology", "export", "-t", str(topo))
    assert result.returncode == 2
    assert "links[0].capacity" in result.stderr and "--default-capacity" in result.stderr
    ok = braid("topology", "export", "-t", str(topo), "--default-capacity", "10G")
    assert json.loads(ok.stdout)["links"][0]["capacity"] == 10000


@pytest.mark.parametrize(
    "args", [["plan", "-t", "missing.yaml", "-"], ["plan", "-t", str(TOPOLOGY), "nope.jsonl"]]
)
def test_missing_files_fail_cleanly(args: list[str]) -> None:
    result = braid(*args)
    assert result.returncode == 2 and "error:" in result.stderr and "Traceback" not in result.stderr


def test_example_runs_and_shows_every_outcome() -> None:
    result = braid("example", "--json")
    assert result.returncode == 0, result.stderr
    decisions = [json.loads(line) for line in result.stdout.splitlines()]
    by_id = {d["id"]: d for d in decisions if d["status"] != "released"}
    assert len(by_id["climate-2b"]["paths"]) == 2
    assert by_id["xray-1"]["split"] == "packet"
    assert by_id["tenant-b"]["bandwidth"] == 30000
    table = braid("example")
    assert table.returncode == 0 and "decisions" in table.stdout
    # People read ISO times in the table, reasons included; the JSON keeps epoch seconds.
    wide = subprocess.run(
        [sys.executable, "-m", "braid.cli.main", "example"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400"},
        check=True,
    ).stdout
    assert "throughout [2027-01-01T09:00:00Z, 2027-01-01T11:00:00Z)" in wide
    assert not re.search(r"(?<![\d.])\d{10}(?![\d.])", wide)


def test_invalid_lines_are_counted_and_a_batch_of_nothing_valid_fails() -> None:
    bad = '{"id": "x", "src": "ORNLL", "dst": "NERSC", "bandwidth": 1, "start": 1, "end": 2}\n'
    only_bad = braid("plan", "-t", str(TOPOLOGY), "-", stdin=bad)
    assert only_bad.returncode == 1
    assert "1 of 1 line(s) were not valid requests" in only_bad.stderr
    assert "did you mean 'ORNL'?" in json.loads(only_bad.stdout)["reason"]
    good = (EXAMPLES / "requests.jsonl").read_text().splitlines()[0] + "\n"
    mixed = braid("plan", "-t", str(TOPOLOGY), "-", stdin=good + bad)
    assert mixed.returncode == 0 and "1 of 2" in mixed.stderr
    assert braid("plan", "--strict", "-t", str(TOPOLOGY), "-", stdin=good + bad).returncode == 1


def test_version() -> None:
    done = braid("--version")
    assert done.returncode == 0 and done.stdout.startswith("braid ")


def test_shell_completion_is_offered() -> None:
    # The option names no shell: it finds the one it runs under among its ancestors,
    # so it is run from bash here (`; true` keeps bash from replacing itself with it)
    # whatever started the tests.
    command = f"{shlex.quote(sys.executable)} -m braid.cli.main --show-completion; true"
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and "complete -o default -F" in done.stdout, done.stderr


def test_topology_split_writes_each_domains_own_file(tmp_path: Path) -> None:
    result = braid("topology", "split", "-t", str(EXAMPLES / "fig6a.yaml"), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    written = dict(line.split("\t") for line in result.stdout.splitlines())
    assert len(written) == 9 and Path(written["re1"]).is_file()
    re1 = Path(written["re1"]).read_text()
    assert "re1-core" in re1 and "a-lan" not in re1 and "re2-core" not in re1


def test_topology_split_of_a_file_without_domains_says_which_field(tmp_path: Path) -> None:
    result = braid("topology", "split", "-t", str(TOPOLOGY), "-o", str(tmp_path / "out"))
    assert result.returncode != 0
    assert "domains" in result.stderr and not (tmp_path / "out").exists()


def test_plan_books_a_volume_as_a_profile_and_releases_every_step() -> None:
    lines = [
        {"id": "big", "src": "ORNL", "dst": "NERSC", "mode": "volume", "volume": "40TB",
         "not_before": 1798794000, "deadline": "2027-01-03T00:00:00Z"},
        {"id": "q", "src": "ORNL", "dst": "NERSC", "mode": "quickest", "volume": "1TB",
         "not_before": 1798794000},
        {"id": "big", "op": "release"},
    ]  # fmt: skip
    stdin = "\n".join(json.dumps(line) for line in lines)
    result = braid("plan", "--topology", str(TOPOLOGY), "-", stdin=stdin)
    assert result.returncode == 0, result.stderr
    booked, quickest, released = [json.loads(line) for line in result.stdout.splitlines()]
    assert booked["status"] == "reserved" and booked["volume"] == 40 * 10**12
    assert booked["completion"] == booked["profile"][-1]["end"] <= 1798934400
    assert quickest["status"] == "answered" and quickest["completion"] > 1798794000
    assert released["status"] == "released" and released["profile"] == booked["profile"]
    table = braid("plan", "--topology", str(TOPOLOGY), "--table", "-", stdin=stdin)
    assert table.returncode == 0, table.stderr
    assert "Mbit/s:" in table.stdout  # a profile step, folded to the terminal's width
