"""`braid emulate failover --short`: two sites, their monitors, both methods (root, braid-dp)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from braid.adapters.dataplane import BraidDpMissingError, find_braid_dp
from braid.cli.emulate_cmd import app
from tests.e2e.emulation_fixtures import emulation_host

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
__all__ = ["emulation_host"]


def _require_braid_dp() -> None:
    try:
        find_braid_dp()
    except BraidDpMissingError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{exc} (CI=true: failing instead of skipping)")
        pytest.skip(str(exc))


def _emulators_left() -> list[str]:
    """braid-dp processes this test started (children of this process), not other runs'."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "braid-dp":
                parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                if int(parent) == os.getpid():
                    found.append(entry.name)
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.mark.usefixtures("emulation_host")
def test_failover_short_runs_both_methods_and_writes_the_figures(tmp_path: Path) -> None:
    _require_braid_dp()
    out = tmp_path / "failover"
    result = CliRunner().invoke(app, ["failover", "--short", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    data = json.loads((out / "results.json").read_text())
    assert [(r["method"], r["degradation"]) for r in data["rows"]] == [
        ("direct", "path-switch"),
        ("controller", "path-switch"),
    ]
    for row in data["rows"]:
        assert row["events"] == 3
        assert row["pre_mbps"] > 0  # real TCP through the rules the sites put in
        # each site acted on every degradation (more only if the host stalled a probe)
        assert all(int(n) >= 3 for n in row["actions"].split(" / ")), row
        assert row["rules_ms"] is not None and row["moved_ms"] is not None
    names = {f["name"] for f in data["floors"]}
    assert any(n.startswith("direct: detection") for n in names)
    assert any(n.startswith("fast-failover") for n in names)
    assert data["series"]["fast_failover_outage_ms"] < 1000  # the standby carried the probes
    for plot in ("failover-traces.png", "failover-impulse-path-switch.png"):
        assert (out / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / plot).with_suffix(".pdf").read_bytes().startswith(b"%PDF")
    assert _emulators_left() == []  # every link emulator it started is gone


@pytest.mark.usefixtures("emulation_host")
def test_a_cut_mid_path_is_seen_by_bfd_and_not_by_a_plain_group(tmp_path: Path) -> None:
    _require_braid_dp()
    out = tmp_path / "failover-bfd"
    argv = ["failover", "--short", "--methods", "ff,ff-bfd", "--degradations", "cut",
            "--events", "1", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output + repr(result.exception)
    rows = {r["method"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    # The border port stays up: the plain group keeps sending into the cut ...
    assert rows["ff"]["moved_ms_per_event"] == [None], rows["ff"]
    # ... and BFD across the long haul takes the watched port's liveness down with it.
    assert rows["ff-bfd"]["moved_ms_per_event"][0] is not None, rows["ff-bfd"]
    assert rows["ff-bfd"]["pre_mbps"] > 0
    assert _emulators_left() == []
