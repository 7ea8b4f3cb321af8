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


def test_without_a_token_file_the_controller_does_not_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from braid.adapters.southbound.osken_main import main

    with pytest.raises(SystemExit) as stopped:
        main(["--api", "127.0.0.1:1"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "needs a token" in err and "--api-token-file" in err and "--insecure" in err


def test_insecure_serves_without_a_token_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from braid.adapters.southbound.osken_main import _token

    assert parse_args(["--insecure"]).insecure
    assert not parse_args([]).insecure
    assert _token(None, insecure=True) is None
    assert "warning: --insecure" in capsys.readouterr().err


def test_a_token_file_is_used_whether_or_not_insecure(tmp_path: Path) -> None:
    from braid.adapters.southbound.osken_main import _token

    (tmp_path / "t").write_text("tok-9\n")
    assert _token(tmp_path / "t") == "tok-9"
    assert _token(tmp_path / "t", insecure=True) == "tok-9"


def test_the_command_refuses_to_start_an_open_api() -> None:
    from typer.testing import CliRunner

    from braid.cli.main import app

    result = CliRunner().invoke(app, ["controller", "--api", "127.0.0.1:1"])
    assert result.exit_code == 2
    assert "needs a token" in " ".join(result.output.split())
