"""What each setting means, and the configuration reference written from it.

docs/configuration.md is this module's `reference_markdown()`; a test keeps
the two equal and checks that every setting of `Settings` is described here,
so the reference cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Final

from braid.app.settings import COMMAND_LINE_ONLY, LIMITS, NESTED, Settings

__all__ = ["HELP", "reference_markdown"]

HELP: Final = {
    "database_url": "SQLAlchemy URL of the store: `sqlite:///braid.db` (a file beside the "
    "process) or `postgresql+psycopg://USER:PASSWORD@HOST/DB` for replicas.",
    "topology_file": "Topology loaded into an empty store at the first start (YAML/JSON, "
    "Topology Zoo GraphML, OSCARS JSON); later changes go through `PUT /v1/topology`.",
    "host": "Address the REST API listens on.",
    "port": "Port the REST API listens on.",
    "hold_seconds": "How long a hold (`hold: true`) keeps its bandwidth before it expires "
    "unless confirmed.",
    "max_body_bytes": "Largest request body accepted; larger bodies are refused with 413.",
    "tick_seconds": "How often the lifecycle tick records holds that expired and "
    "reservations that started or ended.",
    "enforce_rates": "Provisioning: hold each reservation to its booked rate on the wire "
    "(a meter at the ingress edge for `hard` policing, a queue per path share on every "
    "port its paths leave by); `false` for switches without meters or queues.",
    "failback": "Fail-over: a protected reservation that a link going down moved to its "
    "standby path goes back to its primary when the link comes up (`false`: it stays).",
    "sqlite_synchronous": "SQLite only: `full` syncs the log at every commit; `normal` at "
    "checkpoints (faster; a power cut may lose the last commits, a crash does not).",
    "southbound_file": "Wiring file (switches, ports, hosts): when set, braid programs the "
    "switches for each reservation (docs/provisioning.md).",
    "provision_lead_seconds": "How long before a reservation starts its rules go into the "
    "switches.",
    "reconcile_seconds": "How often every switch is read back and brought to the desired state.",
    "delivery_seconds": "How often the counters of every installed reservation are read "
    "(on the second; `GET /v1/reservations/{id}/delivery`).",
    "delivery_samples": "How many delivery samples are kept per reservation, in memory.",
    "log_format": "braid's own log lines on stderr: `text`, or `json` (one object per line: "
    "time, level, logger, message, and the request id of a line made while serving a "
    "request — the id the response's `X-Request-ID` and the audit log carry).",
    "tls_cert": "PEM certificate chain: with `tls_key`, the REST API is served over HTTPS.",
    "tls_key": "PEM private key of `tls_cert` (keep it readable by braid's user only).",
    "nsi_domain": "NSI domain name (e.g. `example.net`): when set, braid serves the NSI "
    "CS 2.0 provider at `/NSI/services/CS2`, its NML topology and discovery document "
    "(docs/nsi.md).",
    "nsi_url": "Base URL the NSI discovery document gives requesters (default "
    "`https://HOST:PORT` of the server, `http://` without TLS).",
    "metrics_open": "`/metrics` for anyone, without a token (`--metrics-open`; warned at "
    "every start). Otherwise it wants an operator's or a monitor's bearer token "
    "(docs/service.md, Metrics).",
    "nsi_requesters": "With `nsi_domain`: the YAML file that maps each NSI requester's client "
    "certificate (its subject) to the requester NSA ids it may act as and their replyTo "
    "endpoints (docs/nsi.md, Who may use it). Required, with `tls_client_ca`, unless "
    "`--insecure`.",
    "tls_client_ca": "PEM CA file: with `tls_cert`, HTTPS clients are asked for a "
    "certificate it signed (not required of REST callers, who use tokens); NSI requesters "
    "are known by theirs.",
    "insecure": "Command line only (`--insecure`; refused in a file or the environment): "
    "the NSI provider without client certificates or allow-list, and `/metrics` open. "
    "Warned at every start; for test benches.",
    "booking_horizon_days": "Bookings must end within this many days of now (refused with "
    "403, `field: horizon`), unless a `horizon` rule of the policy for the user or their "
    "role says otherwise; `0` drops this default (then only policy rules bound it).",
    "policy": "Booking policy per role and per user: `horizon`, `max_duration`, "
    "`max_bandwidth`, `quota`, `endpoints` (docs/service.md, Booking policy).",
}

_INTRO = """\
# Configuration reference

`braid serve` reads its settings from, in order (later wins): the defaults
below, a YAML file given with `--config FILE`, `BRAID_*` environment
variables (the setting's name in capitals, e.g. `BRAID_PORT=8443`), and the
command line's options (`--database`, `--topology`, `--host`, `--port`,
`--southbound`, `--tls-cert`, `--tls-key`, `--tls-client-ca`, `--nsi-domain`,
`--nsi-requesters`, `--metrics-open`, `--insecure`). A value that is not allowed
stops the server with an error naming the setting and where it came from.

This page is generated from the code (`scripts/gen-config-doc`); a test
fails when they differ.

| setting | default | allowed | meaning |
|---|---|---|---|
"""


def _default(name: str) -> str:
    found = next(f for f in fields(Settings) if f.name == name)
    if found.default is not MISSING:
        return "none" if found.default is None else f"`{found.default}`"
    return "no limits" if name == "policy" else "—"


def _allowed(name: str) -> str:
    if name in LIMITS:
        return LIMITS[name][2]
    if name == "sqlite_synchronous":
        return "`full` or `normal`"
    if name == "log_format":
        return "`text` or `json`"
    if name in ("failback", "metrics_open", "enforce_rates"):
        return "`true` or `false`"
    if name in COMMAND_LINE_ONLY:
        return "`--insecure`"
    if name in NESTED:
        return "a mapping (config file only)"
    paths = ("_file", "_cert", "_key", "_ca", "_requesters")
    return "a path" if name.endswith(paths) else "text"


def reference_markdown() -> str:
    rows = [
        f"| `{f.name}` | {_default(f.name)} | {_allowed(f.name)} | {HELP[f.name]} |"
        for f in fields(Settings)
    ]
    return _INTRO + "\n".join(rows) + "\n"
