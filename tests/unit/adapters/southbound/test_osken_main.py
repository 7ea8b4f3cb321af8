from __future__ import annotations

from pathlib import Path

import pytest

from braid.adapters.southbound.osken_main import parse_args


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
