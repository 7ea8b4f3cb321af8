"""The checked-in gRPC code matches proto/ (run scripts/gen-proto after editing a .proto)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_generated_code_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-proto"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"stale generated code; run scripts/gen-proto\n{result.stdout}"


def test_every_table_1_message_is_defined() -> None:
    from braid.adapters.rpc.v1 import negotiation_pb2 as pb

    names = set(pb.DESCRIPTOR.message_types_by_name)
    table_1 = {"Reservation", "ReqOffers", "SendOffers", "ReservationPrep", "Commit", "Abort"}
    assert table_1 | {"ReservationResp"} <= names
    assert "token" in pb.SendOffers.DESCRIPTOR.fields_by_name
