"""Six domains for the request-to-traffic bench: agents program their own bridges.

A chain site-a — x1 — x2 — x3 — x4 — site-b: two sites and four SDXs, each
domain with one switch (a userspace Open vSwitch bridge of the Mininet
network) that its own `braid agent --southbound` programs. `braid serve
--domains` negotiates each reservation with the six agents over gRPC
(offers, then two-phase commit); every agent installs its part of the
rules when its hold commits. h1 sits on site-a's LAN port, h2 on site-b's.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from braid.adapters.emulation.network import EmulatedNetwork
from braid.adapters.emulation.ovs import RUN_DIR
from braid.adapters.free_ports import free_port
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.bootstrap.local_cluster import LocalCluster
from braid.core.model.instants import format_instant

BRAID = str(Path(sys.executable).with_name("braid"))
CHAIN = ("site-a", "x1", "x2", "x3", "x4", "site-b")
SWITCH = {"site-a": "a-edge", "x1": "x1-sw", "x2": "x2-sw", "x3": "x3-sw", "x4": "x4-sw",
          "site-b": "b-edge"}  # fmt: skip
LANS = {"site-a": ("a-lan", "a-host"), "site-b": ("b-lan", "b-host")}
HOST_AT = {"a-edge": "h1", "b-edge": "h2"}


def _border_links() -> list[tuple[str, str, str]]:
    """(link id, one switch, the next) between consecutive domains of the chain."""
    switches = [SWITCH[d] for d in CHAIN]
    return [(f"{a}~{b}", a, b) for a, b in itertools.pairwise(switches)]


def multidomain() -> dict[str, Any]:
    """The `--domains` file: six domains in a chain, 1 Gbit/s borders with VLAN ranges."""
    nodes = [{"id": SWITCH[d], "domain": d} for d in CHAIN]
    nodes += [{"id": host, "domain": d} for d, (_, host) in LANS.items()]
    links = [
        {
            "id": link,
            "a": a,
            "b": b,
            "capacity": "1G",
            "vlans": f"{100 * (i + 1)}-{100 * (i + 1) + 99}",
        }
        for i, (link, a, b) in enumerate(_border_links())
    ]
    links += [
        {"id": lan, "a": host, "b": SWITCH[d], "capacity": "1G"} for d, (lan, host) in LANS.items()
    ]
    domains = [
        {"id": d, "kind": "site" if d.startswith("site") else "sdx", "agent": "127.0.0.1:1"}
        for d in CHAIN
    ]
    return {"domains": domains, "nodes": nodes, "links": links}


def switch_topology() -> dict[str, Any]:
    """What Mininet builds: the six switches and the links between them (the hosts are added
    as Mininet hosts on the two edges)."""
    return {
        "nodes": [{"id": SWITCH[d]} for d in CHAIN],
        "links": [{"id": link, "a": a, "b": b, "capacity": "1G"} for link, a, b in _border_links()],
    }


def domain_wiring(net: EmulatedNetwork, domain: str) -> dict[str, Any]:
    """One agent's `--southbound` file: its one bridge; an edge's LAN is its host's port."""
    node = SWITCH[domain]
    switch = net.port_map.switches[node]
    ports = dict(switch.link_ports)
    if domain in LANS:
        ports[LANS[domain][0]] = net.port_map.hosts[HOST_AT[node]].port
    return {
        "drivers": {"direct": {"rundir": str(RUN_DIR)}},
        "switches": [{"node": node, "dpid": switch.dpid, "driver": "direct",
                      "bridge": net.bridges[node], "ports": ports}],
    }  # fmt: skip


class DomainsServe:
    """Six agents (each programming its bridge) and `braid serve --domains` over them."""

    def __init__(self, net: EmulatedNetwork, workdir: Path) -> None:
        self.net, self.workdir = net, workdir
        source = workdir / "domains.yaml"
        source.write_text(yaml.safe_dump(multidomain(), sort_keys=False))
        args: dict[str, list[str]] = {}
        for domain in CHAIN:
            wiring = workdir / f"{domain}-wiring.yaml"
            wiring.write_text(yaml.safe_dump(domain_wiring(net, domain)))
            args[domain] = ["--southbound", str(wiring), "--provision-lead", "1"]
        self.cluster = LocalCluster(source, workdir / "run", domain_args=args)
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.client: httpx.Client | None = None

    def __enter__(self) -> DomainsServe:
        cluster = self.cluster
        cluster.start_files_only()
        try:
            for domain in cluster.domains:
                cluster.start_agent(domain)
            self._start_serve()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start_serve(self) -> None:
        cluster = self.cluster
        log = (self.workdir / "serve.log").open("wb")
        self.process = subprocess.Popen(
            [BRAID, "serve", "--database", cluster.database, "--port", str(self.port),
             "--domains", str(cluster.file), "--negotiation-db", str(self.workdir / "neg.db"),
             "--peer-token-file", str(cluster.peer_token_file)],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.client = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}",
            headers={"Authorization": f"Bearer {cluster.operator_token}"},
            timeout=30,
        )
        deadline = time.monotonic() + 60
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"braid serve --domains did not come up; see {log.name}")
            time.sleep(0.2)

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.cluster.stop()

    def _healthy(self) -> bool:
        assert self.client is not None
        try:
            return self.client.get("/healthz").status_code == 200
        except httpx.HTTPError:
            return False

    def reserve_now(self, bandwidth_bps: int, seconds: int) -> tuple[str, float, float]:
        assert self.client is not None
        sent = time.time()
        start = int(sent)  # agents allow a few seconds' grace for a window begun just now
        body = {
            "src": {"domain": "site-a", "point": "a-host"},
            "dst": {"domain": "site-b", "point": "b-host"},
            "bandwidth": f"{bandwidth_bps}bps",
            "start": format_instant(start),
            "end": format_instant(start + seconds),
            "max_paths": 1,
        }
        answer = self.client.post("/v1/interdomain/reservations", json=body)
        if answer.status_code != 201:
            raise SystemExit(f"interdomain booking refused: {answer.status_code} {answer.text}")
        return str(answer.json()["id"]), sent, time.time()

    def cancel_and_wait(self, rid: str, timeout: float = 15.0) -> float:
        assert self.client is not None
        cancelled = time.time()
        self.client.delete(f"/v1/interdomain/reservations/{rid}").raise_for_status()
        bridges = {SWITCH[d]: self.net.bridges[SWITCH[d]] for d in CHAIN}
        driver = OfctlDriver(bridges, ofctl_runner(str(RUN_DIR)))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(table.empty for table in driver.dump().values()):
                return cancelled
            time.sleep(0.1)
        raise SystemExit(f"{rid}: braid's rules still on a bridge {timeout:g} s after the cancel")
