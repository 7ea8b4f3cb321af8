"""Read endpoints added for the web interface's operator pages and multi-domain view:
`/v1/topology/versions`, `GET /v1/maintenance` and `/v1/interdomain/domains`."""

from __future__ import annotations

import socket
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from braid.adapters.api.interdomain import mount_interdomain
from braid.app.interdomain import InterdomainService
from braid.bootstrap.orchestrator import open_interdomain
from tests.api.harness import Api, build, iso

FIG6A = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "fig6a.yaml"


def get(api: Api, who: str, path: str) -> Any:
    response = api.client.get(path, headers=api.auth(who))
    assert response.status_code == 200, response.text
    return response.json()


def test_topology_versions_say_what_changed_newest_first(api: Api) -> None:
    topology = get(api, "alice", "/v1/topology")
    first = next(link for link in topology["links"])
    first["capacity"] = first["capacity"] * 2
    dropped = topology["links"].pop()
    put = api.client.put("/v1/topology", json=topology, headers=api.auth("olga"))
    assert put.status_code == 200, put.text
    newest, oldest = get(api, "alice", "/v1/topology/versions")["versions"]
    assert (newest["version"], oldest["version"]) == (2, 1)
    assert newest["actor"] == "olga" and oldest["actor"] == "braid"
    assert (oldest["nodes"], oldest["links"]) == (14, 18) and newest["links"] == 17
    assert newest["removed"] == {"count": 1, "links": [dropped["id"]]}
    assert newest["resized"] == {"count": 1, "links": [first["id"]]}
    assert newest["added"] == {"count": 0, "links": []}
    assert oldest["added"]["count"] == 0  # the first version is compared with nothing


def test_maintenance_windows_that_have_not_ended_with_their_links(api: Api) -> None:
    windows = [
        {"node": "DENV", "start": iso(7200), "end": iso(9000), "reason": "power"},
        {"link": "DENV-SUNN", "start": iso(3600), "end": iso(5400), "reason": "fibre"},
    ]
    for window in windows:
        done = api.client.post("/v1/maintenance", json=window, headers=api.auth("olga"))
        assert done.status_code == 201, done.text
    listed = get(api, "alice", "/v1/maintenance")["maintenance"]
    assert [m["reason"] for m in listed] == ["fibre", "power"]
    assert listed[0]["links"] == ["DENV-SUNN"] and listed[0]["target"] == "link DENV-SUNN"
    assert "DENV-SUNN" in listed[1]["links"] and len(listed[1]["links"]) > 1
    assert listed[0]["owner"] == "olga"
    api.clock.now += 5400 + 1  # the first has ended
    assert [m["reason"] for m in get(api, "olga", "/v1/maintenance")["maintenance"]] == ["power"]


def test_the_domain_view_answers_503_without_domains(api: Api) -> None:
    response = api.client.get("/v1/interdomain/domains", headers=api.auth("alice"))
    assert response.status_code == 503
    assert "--domains" in response.json()["error"]["message"]


@pytest.fixture
def interdomain(tmp_path: Path) -> Any:
    """The Fig. 6a network as its file describes it, whatever listens on this host.

    No agent is needed to describe the network (nothing is negotiated), but the
    orchestrator asks the file's agent addresses for their parts and takes an
    answer over the file's: at the file's fixed ports (127.0.0.1:7101...), any
    agent another run left on this host answered with its own points (a site-a
    of 'a-edge' and 'a-host'). The copy's agents are at ports this test holds
    bound and not listening: every call is refused at once, the file's parts stand.
    """
    network = yaml.safe_load(FIG6A.read_text(encoding="utf-8"))
    with ExitStack() as held:
        for domain in network["domains"]:
            port = held.enter_context(socket.socket())
            port.bind(("127.0.0.1", 0))
            domain["agent"] = f"127.0.0.1:{port.getsockname()[1]}"
        copy = tmp_path / "fig6a.yaml"
        copy.write_text(yaml.safe_dump(network), encoding="utf-8")
        service = open_interdomain(copy, tmp_path / "negotiation.db")
        yield service
        service.close()


def test_the_domain_view_lists_sites_first_with_their_points(
    interdomain: InterdomainService,
) -> None:
    api = build()
    mount_interdomain(api.app, interdomain)
    view = get(api, "alice", "/v1/interdomain/domains")
    kinds = [d["kind"] for d in view["domains"]]
    assert kinds[:4] == ["site"] * 4 and set(kinds[4:]) == {"sdx", "wan"}
    site_a = view["domains"][0]
    assert site_a == {
        "id": "site-a",
        "kind": "site",
        "visible": True,
        "points": ["a-dtn", "a-edge"],
        "borders": ["a-edge"],
    }
    assert {d["id"]: d["visible"] for d in view["domains"]}["rn3"] is False
    link = next(k for k in view["links"] if k["id"] == "a-rn1")
    assert link["domains"] == ["site-a", "rn1"] and link["vlans"] == [100, 199]
    assert link["owner"] == "rn1" and link["capacity"] == 40000
    assert (view["strategy"], view["max_paths"]) == ("partial-offers", 2)
    assert api.client.get("/v1/interdomain/domains").status_code == 401
