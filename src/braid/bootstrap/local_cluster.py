"""An orchestrator and its domain agents as real processes on loopback.

For `braid demo`, the fault tests and the negotiation benchmark: each agent
and the orchestrator is its own Python process speaking real gRPC, with its
own SQLite file in `workdir`. Agent addresses in the topology file are
rewritten to free loopback ports (kept across restarts of one process).

Every port is closed, as braid's are by default: the cluster makes its own
credentials in `workdir` (a random peer token the orchestrator presents to
the agents, and a token store with an operator's token for the cluster's own
calls), unless the flags it is given name other credentials.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from braid.adapters.cpu_affinity import allowed_cpus
from braid.adapters.domain_files import load_multidomain, write_domain_files
from braid.adapters.free_ports import free_ports
from braid.adapters.rpc.channels import TlsFiles, open_channel
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc

READY_TIMEOUT = 20.0
# Flags that name how a server authenticates its callers: given any, the cluster
# adds no credentials of its own to that server.
AGENT_AUTH = ("--policy", "--tls-ca", "--peer-token-file", "--insecure")
ORCHESTRATOR_AUTH = ("--database", "--insecure")


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[str]
    banner: str = ""

    def alive(self) -> bool:
        return self.popen.poll() is None


@dataclass
class LocalCluster:
    """Start with `start()`; always `stop()` (or use it as a context manager)."""

    topology: Path
    workdir: Path
    orchestrator_args: list[str] = field(default_factory=list)
    agent_args: list[str] = field(default_factory=list)
    domain_args: dict[str, list[str]] = field(default_factory=dict)  # one agent's own flags
    # Each agent reads only its own domain's file and the orchestrator no file at all
    # (it learns the domain graph from the agents' published views).
    per_domain: bool = False
    # The test's own calls (Reserve, Status) over TLS with this client certificate.
    client_tls: TlsFiles | None = None
    # Each process on one CPU, the orchestrator and then the agents in turn over the
    # CPUs this process may use (`--cpu`): a process's gRPC threads then hand each
    # message over on one CPU (docs/multidomain.md, "Where the time goes").
    pin: bool = True
    # Set for every process it starts (a benchmark runs another revision's code so).
    env: dict[str, str] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    processes: dict[str, Process] = field(default_factory=dict)
    # The cluster's own credentials (made by `start_files_only`): the agents' peer
    # token, the token store's URL and its operator's token (the cluster's calls).
    peer_token: str = ""
    database: str = ""
    operator_token: str = ""
    # False: add no credentials to any process (code from before its ports were closed,
    # which knows none of the flags).
    own_credentials: bool = True
    # The token the cluster's own calls present to agents whose credentials the flags
    # name (a policy's token, say); None: none.
    agent_token: str | None = None
    _channels: dict[str, Any] = field(default_factory=dict)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def domains(self) -> list[str]:
        return [d for d in self.ports if d != "orchestrator"]

    def start(self) -> LocalCluster:
        self.start_files_only()
        try:
            # Agents start side by side (each spends most of its start importing).
            launched = [self._launch(d, self._agent_args(d), None) for d in self.domains]
            for process in launched:
                self._ready(process)
            self.start_orchestrator()
        except Exception:
            self.stop()
            raise
        return self

    def start_files_only(self) -> None:
        """Write the topology with free ports, start nothing (start processes one by one)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        data = yaml.safe_load(self.topology.read_text(encoding="utf-8"))
        # An NSI provider's domain has no braid agent.
        run = [entry for entry in data["domains"] if entry.get("kind") != "nsi"]
        ports = free_ports(len(run) + 1)
        for entry, port in zip(run, ports[:-1], strict=True):
            self.ports[entry["id"]] = port
            entry["agent"] = f"127.0.0.1:{port}"
        self.ports["orchestrator"] = ports[-1]
        self._credentials()
        self.file = self.workdir / "topology.yaml"
        self.file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        network = load_multidomain(self.file)  # fail here, not in a child, on a bad file
        self.files = (
            write_domain_files(network, self.workdir / "domains")
            if self.per_domain
            else dict.fromkeys(network.view.domains, self.file)
        )

    @property
    def peer_token_file(self) -> Path:
        return self.workdir / "peer.token"

    def _credentials(self) -> None:
        """The peer token (kept across restarts) and a token store with an operator."""
        from braid.app.auth import create_token
        from braid.bootstrap.serve import close_store, open_store

        if not self.peer_token_file.exists():
            self.peer_token_file.write_text(secrets.token_urlsafe(32) + "\n", encoding="utf-8")
            self.peer_token_file.chmod(0o600)
        self.peer_token = self.peer_token_file.read_text(encoding="utf-8").strip()
        self.database = f"sqlite:///{self.workdir / 'tokens.db'}"
        repo = open_store(self.database)
        try:
            self.operator_token = create_token(repo, "cluster", "operator", int(time.time()))
        finally:
            close_store(repo)

    def _own_agent_token(self, domain: str) -> bool:
        given = [*self.agent_args, *self.domain_args.get(domain, ())]
        return self.own_credentials and not any(flag in given for flag in AGENT_AUTH)

    def _own_tokens(self) -> bool:
        return self.own_credentials and not any(
            flag in self.orchestrator_args for flag in ORCHESTRATOR_AUTH
        )

    def _launch(self, name: str, args: list[str], extra_env: dict[str, str] | None) -> Process:
        command = [sys.executable, "-m", "braid.cli.agent_cmd", *args, *self._cpu(name)]
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.env, **(extra_env or {}))
        # stderr to a file: a pipe nobody reads would stall a chatty process.
        with (self.workdir / f"{name}.log").open("a", encoding="utf-8") as log:
            popen = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=log, text=True, env=env
            )
        process = Process(name, popen)
        self.processes[name] = process
        return process

    def _cpu(self, name: str) -> list[str]:
        """`--cpu N` for `name`: the orchestrator first, then each agent, in turn over the
        CPUs (none when not pinning, or with a single CPU)."""
        cpus = allowed_cpus()
        if not self.pin or len(cpus) < 2:
            return []
        order = ["orchestrator", *self.domains]
        return ["--cpu", str(cpus[order.index(name) % len(cpus)])]

    def _ready(self, process: Process) -> Process:
        """Wait for the process's banner line; a process that dies first is an error."""
        assert process.popen.stdout is not None
        line = process.popen.stdout.readline()
        if "listening" not in line:
            self.processes.pop(process.name, None)
            process.popen.kill()
            process.popen.communicate(timeout=READY_TIMEOUT)
            log = (self.workdir / f"{process.name}.log").read_text(encoding="utf-8")
            raise RuntimeError(f"{process.name} did not start: {line.strip()} {log[-2000:]}")
        process.banner = line.strip()
        return process

    def _agent_args(self, domain: str) -> list[str]:
        return [
            "agent", "--topology", str(self.files[domain]), "--domain", domain,
            "--store", str(self.workdir / f"{domain}.db"),
            "--listen", f"127.0.0.1:{self.ports[domain]}", *self.agent_args,
            *self.domain_args.get(domain, ()),
            *(["--peer-token-file", str(self.peer_token_file)]
              if self._own_agent_token(domain) else []),
        ]  # fmt: skip

    def start_agent(self, domain: str, env: dict[str, str] | None = None) -> Process:
        return self._ready(self._launch(domain, self._agent_args(domain), env))

    def start_orchestrator(self, env: dict[str, str] | None = None) -> Process:
        where = (
            [a for d in self.domains for a in ("--agent", f"127.0.0.1:{self.ports[d]}")]
            if self.per_domain
            else ["--topology", str(self.file)]
        )
        args = [
            "orchestrator", *where,
            "--store", str(self.workdir / "orchestrator.db"),
            "--listen", f"127.0.0.1:{self.ports['orchestrator']}", *self.orchestrator_args,
            *([] if "--peer-token-file" in self.orchestrator_args or not self.own_credentials
              else ["--peer-token-file", str(self.peer_token_file)]),
            *(["--database", self.database] if self._own_tokens() else []),
        ]  # fmt: skip
        return self._ready(self._launch("orchestrator", args, env))

    def wait_exit(self, name: str, timeout: float = 10.0) -> int:
        """Wait for a process that is meant to die by itself (an injected fault)."""
        process = self.processes.pop(name)
        process.popen.communicate(timeout=timeout)
        self._drop_channel(name)
        return int(process.popen.returncode)

    def kill(self, name: str) -> None:
        """Kill a process at once (SIGKILL): a crash, nothing flushed or said goodbye."""
        process = self.processes.pop(name)
        process.popen.kill()
        process.popen.communicate(timeout=10)
        self._drop_channel(name)

    def terminate(self, name: str) -> None:
        process = self.processes.pop(name)
        process.popen.send_signal(signal.SIGTERM)
        try:
            process.popen.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.popen.kill()
            process.popen.communicate(timeout=10)
        self._drop_channel(name)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.alive():
                process.popen.send_signal(signal.SIGTERM)
        for name in list(self.processes):
            self.terminate(name)
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()

    # -- clients -----------------------------------------------------------------

    def channel(self, name: str) -> Any:
        """A channel to `name` presenting the cluster's own token, where it made one."""
        if name not in self._channels:
            address = f"127.0.0.1:{self.ports[name]}"
            token = self._token(name)
            self._channels[name] = open_channel(address, tls=self.client_tls, token=token)
        return self._channels[name]

    def _token(self, name: str) -> str | None:
        if name == "orchestrator":
            return self.operator_token if self._own_tokens() else None
        return self.peer_token if self._own_agent_token(name) else self.agent_token

    def _drop_channel(self, name: str) -> None:
        channel = self._channels.pop(name, None)
        if channel is not None:
            channel.close()

    def orchestrator(self) -> Any:
        return pb_grpc.OrchestratorStub(self.channel("orchestrator"))

    def agent(self, domain: str) -> Any:
        return pb_grpc.DomainAgentStub(self.channel(domain))

    def reserve(self, request: pb.Reservation, timeout: float = 30.0) -> pb.ReservationResp:
        reply: pb.ReservationResp = self.orchestrator().Reserve(request, timeout=timeout)
        return reply

    def reports(self, timeout: float = 5.0) -> dict[str, pb.StatusReport]:
        """Every running agent's Status (all transactions, peak link loads)."""
        return {
            d: self.agent(d).Status(pb.StatusQuery(), timeout=timeout)
            for d in self.domains
            if d in self.processes
        }
