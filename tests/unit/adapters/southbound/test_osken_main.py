from __future__ import annotations

from pathlib import Path

import pytest

from braid.adapters.southbound.osken_main import parse_args, reporter_from


def test_defaults_listen_on_loopback() -> None:
    args = parse_args([])
    assert args.api == "127.0.0.1:7300"
    assert args.openflow == ("127.0.0.1", 6653)
    assert args.state is None


def test_unix_api_and_state_file() -> None:
    args = parse_args(["--api", "unix:/run/braid.sock", "--state", "s.json"])
    assert args.api == "unix:/run/braid.sock"
    assert args.state == Path("s.json")


@pytest.mark.parametrize("argv", [["--api", "nowhere"], ["--openflow", "unix:/x"]])
def test_bad_addresses_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(argv)


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "topology.yaml").write_text(
        "nodes: [{id: s1}, {id: s2}]\nlinks: [{id: l12, a: s1, b: s2, capacity: 1G}]\n"
    )
    (tmp_path / "wiring.yaml").write_text(
        "switches:\n"
        "  - {node: s1, dpid: 1, bridge: s1, ports: {l12: 1}}\n"
        "  - {node: s2, dpid: 2, bridge: s2, ports: {l12: 1}}\n"
    )
    (tmp_path / "token").write_text("tok-1\n")
    return ["--service", "http://127.0.0.1:8080", "--service-token-file", str(tmp_path / "token"),
            "--topology", str(tmp_path / "topology.yaml"),
            "--wiring", str(tmp_path / "wiring.yaml")]  # fmt: skip


def test_no_service_no_reporter() -> None:
    assert reporter_from(parse_args([])) is None


def test_the_service_options_make_a_reporter_of_the_wiring(tmp_path: Path) -> None:
    reporter = reporter_from(parse_args(_files(tmp_path)))
    assert reporter is not None
    reporter.close()


@pytest.mark.parametrize(
    ("drop", "named"),
    [("--wiring", "--wiring"), ("--service-token-file", "--service-token-file")],
)
def test_a_missing_service_option_stops_the_controller_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], drop: str, named: str
) -> None:
    argv = _files(tmp_path)
    at = argv.index(drop)
    del argv[at : at + 2]
    with pytest.raises(SystemExit) as stopped:
        reporter_from(parse_args(argv))
    assert stopped.value.code == 2
    assert named in capsys.readouterr().err


def test_a_bad_wiring_file_stops_the_controller_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _files(tmp_path)
    (tmp_path / "wiring.yaml").write_text(
        "switches:\n  - {node: s9, dpid: 1, bridge: s9, ports: {l12: 1}}\n"
    )
    with pytest.raises(SystemExit):
        reporter_from(parse_args(argv))
    assert "wiring.yaml" in capsys.readouterr().err
