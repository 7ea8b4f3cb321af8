"""`--cpu N` keeps an agent or an orchestrator on one CPU; a CPU it may not use is refused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from braid.adapters.cpu_affinity import allowed_cpus
from braid.cli.agent_cmd import app


def test_a_process_and_every_thread_it_has_stay_on_the_cpu() -> None:
    cpu = allowed_cpus()[-1]
    script = (
        "import os, threading, time\n"
        "from braid.adapters.cpu_affinity import pin_to_cpu\n"
        "t = threading.Thread(target=time.sleep, args=(0.5,)); t.start()\n"  # before pinning
        f"pin_to_cpu({cpu})\n"
        "later = []\n"
        "u = threading.Thread(target=lambda: later.append(os.sched_getaffinity(0))); u.start()\n"
        "u.join()\n"
        "print(sorted(os.sched_getaffinity(0)), sorted(os.sched_getaffinity(t.native_id)),"
        " sorted(later[0]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [f"[{cpu}]"] * 3


@pytest.mark.parametrize("command", ["agent", "orchestrator"])
def test_a_cpu_it_may_not_use_is_refused_naming_the_option(command: str) -> None:
    beyond = max(allowed_cpus()) + 1
    args = ["--store", os.devnull, "--cpu", str(beyond)]
    if command == "agent":
        args += ["--topology", os.devnull, "--domain", "x"]
    result = CliRunner().invoke(app, [command, *args])
    assert result.exit_code != 0
    assert "--cpu" in result.output and f"CPU {beyond}" in result.output
