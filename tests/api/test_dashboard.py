"""The Grafana dashboard in docs/ asks only for metrics braid serve exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.api.harness import Api

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "braid-dashboard.json"
METRIC = re.compile(r"\bbraid_[a-z_]+")
SUFFIXES = ("_bucket", "_count", "_sum", "_total")


def test_every_metric_the_dashboard_names_is_exported(api: Api) -> None:
    declared = re.findall(
        r"^# TYPE (braid_[a-z_]+) (\w+)",
        api.client.get("/metrics", headers=api.auth("olga")).text,
        re.M,
    )
    exported = {name for name, _ in declared}
    exported |= {f"{n}{s}" for n, kind in declared if kind == "histogram" for s in SUFFIXES}
    panels = json.loads(DASHBOARD.read_text())["panels"]
    asked = {m for p in panels for t in p["targets"] for m in METRIC.findall(t["expr"])}
    assert asked, "the dashboard asks for nothing"
    missing = asked - exported
    assert not missing, f"the dashboard asks for metrics braid does not export: {sorted(missing)}"
    assert len({p["id"] for p in panels}) == len(panels)
