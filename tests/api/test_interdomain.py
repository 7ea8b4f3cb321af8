"""`/v1/interdomain/reservations` over HTTP, negotiating with real agents (seed 000 Fig. 6a)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import pytest
from fastapi.testclient import TestClient

from braid.adapters.api.interdomain import mount_interdomain
from braid.adapters.rpc.ledgers import check_ledgers
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.interdomain import InterdomainService
from braid.app.negotiation.config import OrchestratorConfig
from braid.bootstrap.local_cluster import LocalCluster
from braid.bootstrap.orchestrator import open_interdomain
from braid.core.policy import Limits, Policy
from tests.api.harness import Api, build

pytestmark = pytest.mark.slow

FIG6A = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "fig6a.yaml"
# Real time, since the agents check windows against their own clocks; far enough ahead
# that no test's window starts in the past, and each test takes its own day.
BASE = (int(datetime.now(UTC).timestamp()) // 86400 + 30) * 86400


def iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def body(gbps: float, day: int, **extra: Any) -> dict[str, Any]:
    start = BASE + day * 86400
    return {
        "src": {"domain": "site-a", "point": "a-dtn"},
        "dst": {"domain": "site-c", "point": "c-dtn"},
        "bandwidth": f"{gbps}G",
        "start": iso(start),
        "end": iso(start + 3600),
        **extra,
    }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    workdir = tmp_path_factory.mktemp("fig6a")
    with LocalCluster(FIG6A, workdir / "run") as running:
        yield running


@pytest.fixture(scope="module")
def interdomain(
    cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InterdomainService]:
    db = tmp_path_factory.mktemp("serve") / "negotiation.db"
    service = open_interdomain(
        cluster.file, db, config=OrchestratorConfig(hold_seconds=30), token=cluster.peer_token
    )
    yield service
    service.close()


@pytest.fixture
def api(interdomain: InterdomainService) -> Api:
    built = build()
    mount_interdomain(built.app, interdomain)
    return built


def post(api: Api, who: str, sent: dict[str, Any]) -> Any:
    return api.client.post("/v1/interdomain/reservations", json=sent, headers=api.auth(who))


def reports_once_up(cluster: LocalCluster, timeout: float = 15.0) -> dict[str, Any]:
    """Every agent's Status; a restarted agent's channel may take a moment to reconnect."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return cluster.reports()
        except grpc.RpcError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def committed_of(views: list[dict[str, Any]]) -> dict[str, frozenset[str]]:
    return {v["transaction"]: frozenset(v["domains"]) for v in views if v["status"] == "committed"}


def all_committed(api: Api) -> list[dict[str, Any]]:
    answer = api.client.get("/v1/interdomain/reservations", headers=api.auth("olga"))
    assert answer.status_code == 200
    views: list[dict[str, Any]] = answer.json()["reservations"]
    return views


def test_a_fitting_reservation_commits_with_its_plan(api: Api, cluster: LocalCluster) -> None:
    answer = post(api, "alice", body(4, day=0))
    assert answer.status_code == 201, answer.text
    view = answer.json()
    assert view["status"] == "committed" and view["owner"] == "alice"
    assert sum(p["bandwidth"] for p in view["paths"]) == view["bandwidth"] == 4000
    assert view["domains"]["site-a"] == 4000 and view["domains"]["site-c"] == 4000
    assert all(p["vlans"] for p in view["paths"])
    assert view["switches"], "a committed reservation carries its rule plan"
    shown = api.client.get(f"/v1/interdomain/reservations/{view['id']}", headers=api.auth("alice"))
    assert shown.status_code == 200 and shown.json()["paths"] == view["paths"]
    check = check_ledgers(cluster.reports(), committed_of(all_committed(api)))
    assert check.ok, check.summary()


def test_every_way_between_domains_carries_its_rate_and_the_policing(api: Api) -> None:
    answer = post(api, "alice", body(15, day=6, policing="hard"))
    assert answer.status_code == 201, answer.text
    view = answer.json()
    assert view["policing"] == "hard"
    assert {sw["policing"] for sw in view["switches"]} == {"hard"}
    rates = [w["rate"] for sw in view["switches"] for r in sw["rules"] for w in r["out"]]
    shares = {p["bandwidth"] for p in view["paths"]}
    assert {r for r in rates if r is not None} == shares  # towards LANs: no rate
    wrong = post(api, "alice", body(1, day=6, policing="strict"))
    assert wrong.status_code == 422 and "policing" in wrong.text


def test_a_reservation_too_big_for_one_wan_splits_over_both(api: Api) -> None:
    answer = post(api, "alice", body(15, day=1))
    assert answer.status_code == 201, answer.text
    view = answer.json()
    wans = {d for p in view["paths"] for d in p["domains"] if d.startswith("re")}
    assert wans == {"re1", "re2"}
    assert sum(p["bandwidth"] for p in view["paths"]) == 15000
    assert view["domains"]["site-a"] == 15000 and view["domains"]["rn1"] == 15000


def test_too_big_is_409_and_nothing_is_held(api: Api, cluster: LocalCluster) -> None:
    answer = post(api, "bob", body(25, day=2))
    assert answer.status_code == 409, answer.text
    error = answer.json()["error"]
    assert error["code"] == "rejected" and error["message"]
    shown = api.client.get(
        f"/v1/interdomain/reservations/{error['reservation']}", headers=api.auth("bob")
    )
    assert shown.json()["status"] == "failed"
    check = check_ledgers(cluster.reports(), committed_of(all_committed(api)))
    assert check.ok, check.summary()
    assert not check.held


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"bandwidth": "lots"}, "bandwidth"),
        ({"bandwidth": 0}, "bandwidth"),
        ({"start": "2030-01-01T10:00:00"}, "start"),
        ({"end": iso(BASE)}, "end"),
        ({"src": {"domain": "nowhere", "point": "x"}}, "src.domain"),
        ({"dst": {"domain": "re1", "point": "re1-east"}}, "dst.domain"),
        ({"dst": {"domain": "site-c"}}, "dst.point"),
        ({"strategy": "greedy"}, "strategy"),
        ({"max_paths": 9}, "max_paths"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_422_naming_the_field(api: Api, change: dict[str, Any], field: str) -> None:
    before = len(all_committed(api))
    answer = post(api, "alice", body(1, day=3) | change)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field
    assert len(all_committed(api)) == before


def test_another_users_reservation_is_not_revealed(api: Api) -> None:
    made = post(api, "alice", body(1, day=4))
    assert made.status_code == 201, made.text
    rid = made.json()["id"]
    theirs = api.client.get(f"/v1/interdomain/reservations/{rid}", headers=api.auth("bob"))
    missing = api.client.get("/v1/interdomain/reservations/x-nosuch", headers=api.auth("bob"))
    assert theirs.status_code == missing.status_code == 404
    # the same answer as for an id nobody has: nothing about alice's reservation leaks
    assert theirs.text.replace(rid, "?") == missing.text.replace("x-nosuch", "?")
    assert "alice" not in theirs.text and theirs.json()["error"]["code"] == "not_found"
    listed = api.client.get("/v1/interdomain/reservations", headers=api.auth("bob"))
    assert rid not in {v["id"] for v in listed.json()["reservations"]}
    assert api.client.get(f"/v1/interdomain/reservations/{rid}").status_code == 401


def test_without_domains_every_route_answers_503() -> None:
    built = build()
    mount_interdomain(built.app, None)
    client: TestClient = built.client
    answer = client.post(
        "/v1/interdomain/reservations", json=body(1, day=5), headers=built.auth("alice")
    )
    assert answer.status_code == 503
    assert "--domains" in answer.json()["error"]["message"]


def test_unreachable_agents_answer_503_and_hold_nothing(api: Api, cluster: LocalCluster) -> None:
    cluster.kill("site-c")
    try:
        answer = post(api, "alice", body(1, day=6))
    finally:
        cluster.start_agent("site-c")
    assert answer.status_code == 503, answer.text
    assert "site-c" in answer.json()["error"]["message"]
    check = check_ledgers(reports_once_up(cluster), committed_of(all_committed(api)))
    assert check.ok, check.summary()


def test_cancel_frees_every_domain_and_a_repeat_changes_nothing(
    api: Api, cluster: LocalCluster
) -> None:
    made = post(api, "alice", body(15, day=7))  # both WANs, most of their room
    assert made.status_code == 201, made.text
    rid = made.json()["id"]
    url = f"/v1/interdomain/reservations/{rid}"
    assert api.client.delete(url, headers=api.auth("bob")).status_code == 404
    cancelled = api.client.delete(url, headers=api.auth("alice"))
    assert cancelled.status_code == 200, cancelled.text
    view = cancelled.json()
    assert view["status"] == "cancelled"
    assert set(view["holdings"].values()) == {"released"}
    assert set(view["holdings"]) == set(made.json()["domains"])
    again = api.client.delete(url, headers=api.auth("olga"))  # an operator may; nothing changes
    assert again.status_code == 200 and again.json()["holdings"] == view["holdings"]
    assert api.client.get(url, headers=api.auth("alice")).json()["status"] == "cancelled"
    check = check_ledgers(cluster.reports(), committed_of(all_committed(api)))
    assert check.ok, check.summary()
    refill = post(api, "alice", body(15, day=7))  # the same room again: all of it was freed
    assert refill.status_code == 201, refill.text


def test_a_failed_reservation_cannot_be_cancelled(api: Api) -> None:
    refused = post(api, "bob", body(25, day=8))
    assert refused.status_code == 409
    rid = refused.json()["error"]["reservation"]
    answer = api.client.delete(f"/v1/interdomain/reservations/{rid}", headers=api.auth("bob"))
    assert answer.status_code == 409 and "nothing to cancel" in answer.text


@pytest.mark.parametrize(
    ("limits", "rule"),
    [
        (Limits(max_bandwidth=5 * 10**9), "max_bandwidth"),
        (Limits(endpoints=frozenset({"site-a:a-dtn"})), "endpoints"),
        (Limits(max_duration=1800), "max_duration"),
    ],
)
def test_the_booking_policy_holds_across_domains_too(
    api: Api, cluster: LocalCluster, interdomain: InterdomainService, limits: Limits, rule: str
) -> None:
    interdomain.policy = Policy(roles={"user": limits})
    try:
        answer = post(api, "bob", body(6, day=5))
    finally:
        interdomain.policy = Policy()
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"]["field"] == rule
    check = check_ledgers(cluster.reports(), committed_of(all_committed(api)))
    assert check.ok, check.summary()
    assert not check.held


def patch(api: Api, who: str, rid: str, sent: dict[str, Any]) -> Any:
    url = f"/v1/interdomain/reservations/{rid}"
    return api.client.patch(url, json=sent, headers=api.auth(who))


def test_modify_commits_the_new_version_and_releases_the_old(
    api: Api, cluster: LocalCluster
) -> None:
    made = post(api, "alice", body(4, day=9))
    assert made.status_code == 201, made.text
    old = made.json()
    assert patch(api, "bob", old["id"], {"bandwidth": "15G"}).status_code == 404
    changed = patch(
        api, "alice", old["id"], {"bandwidth": "15G", "end": iso(BASE + 9 * 86400 + 7200)}
    )
    assert changed.status_code == 200, changed.text
    view = changed.json()
    assert view["status"] == "committed" and view["transaction"] != old["transaction"]
    assert view["bandwidth"] == 15000 and view["granted"] == 15000
    assert view["end"] == iso(BASE + 9 * 86400 + 7200) and view["start"] == old["start"]
    assert {d for p in view["paths"] for d in p["domains"]} >= {"re1", "re2"}
    shown = api.client.get(f"/v1/interdomain/reservations/{old['id']}", headers=api.auth("alice"))
    assert shown.json()["transaction"] == view["transaction"] and shown.json()["bandwidth"] == 15000
    held = {
        d: t.state
        for d, r in cluster.reports().items()
        for t in r.transactions
        if t.transaction_id == old["transaction"]
    }
    assert held and set(held.values()) == {pb.HOLD_STATE_RELEASED}
    check = check_ledgers(cluster.reports(), committed_of(all_committed(api)))
    assert check.ok, check.summary()


def test_a_modify_that_does_not_fit_is_409_and_changes_nothing(
    api: Api, cluster: LocalCluster
) -> None:
    made = post(api, "alice", body(15, day=10))
    assert made.status_code == 201, made.text
    rid = made.json()["id"]
    refused = patch(api, "olga", rid, {"bandwidth": "21G"})  # more than 2 x 10G carry
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "rejected" and refused.json()["error"]["message"]
    shown = api.client.get(f"/v1/interdomain/reservations/{rid}", headers=api.auth("alice"))
    assert shown.json()["transaction"] == made.json()["transaction"]
    assert shown.json()["bandwidth"] == 15000 and shown.json()["status"] == "committed"
    check = check_ledgers(cluster.reports(), committed_of(all_committed(api)))
    assert check.ok, check.summary()
    assert not check.held


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({}, "body"),
        ({"bandwidth": "lots"}, "bandwidth"),
        ({"bandwidth": 0}, "bandwidth"),
        ({"start": "2030-01-01T10:00:00"}, "start"),
        ({"start": iso(BASE - 30 * 86400)}, "start"),
        ({"end": iso(BASE)}, "end"),
        ({"src": {"domain": "site-b", "point": "b-dtn"}}, "src"),
        ({"strategy": "greedy"}, "strategy"),
        ({"max_paths": 9}, "max_paths"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_modify_is_422_naming_the_field_and_changes_nothing(
    api: Api, change: dict[str, Any], field: str
) -> None:
    made = post(api, "alice", body(1, day=11))
    assert made.status_code == 201, made.text
    answer = patch(api, "alice", made.json()["id"], change)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field
    shown = api.client.get(
        f"/v1/interdomain/reservations/{made.json()['id']}", headers=api.auth("alice")
    )
    assert shown.json()["transaction"] == made.json()["transaction"]


def test_only_a_committed_reservation_is_modified(api: Api) -> None:
    assert patch(api, "alice", "x-nosuch", {"bandwidth": 1000}).status_code == 404
    made = post(api, "alice", body(1, day=12))
    rid = made.json()["id"]
    assert api.client.delete(f"/v1/interdomain/reservations/{rid}", headers=api.auth("alice"))
    answer = patch(api, "alice", rid, {"bandwidth": 2000})
    assert answer.status_code == 409 and "cancelled" in answer.text


# -- volumes (offers over time, one decision for every step) --------------------


def volume_body(volume: str, day: int, seconds: int = 3600, **extra: Any) -> dict[str, Any]:
    start = BASE + day * 86400
    return {
        "src": {"domain": "site-a", "point": "a-dtn"},
        "dst": {"domain": "site-c", "point": "c-dtn"},
        "volume": volume,
        "not_before": iso(start),
        "deadline": iso(start + seconds),
        **extra,
    }


def test_a_volume_commits_a_profile_in_every_domain_and_cancel_frees_it(
    api: Api, cluster: LocalCluster
) -> None:
    # Two 10G WAN cores: 20G from a to c. 4.5 TB = 36 Tbit takes 1800 s.
    start = BASE + 40 * 86400
    answer = post(api, "alice", volume_body("4.5TB", day=40))
    assert answer.status_code == 201, answer.text
    view = answer.json()
    assert view["status"] == "committed" and view["volume_bytes"] == 45 * 10**11
    assert view["completion"] == iso(start + 1800)
    assert [(s["start"], s["end"], s["rate"]) for s in view["profile"]] == [
        (iso(start), iso(start + 1800), 20000)
    ]
    shown = api.client.get(f"/v1/interdomain/reservations/{view['id']}", headers=api.auth("alice"))
    assert shown.status_code == 200 and shown.json()["profile"] == view["profile"]
    listed = [v["id"] for v in all_committed(api)]
    assert view["id"] in listed
    steps = [t for t in reports_once_up(cluster).values() for t in t.transactions]
    assert any(t.transaction_id.startswith(view["transaction"]) for t in steps)
    refused = patch(api, "alice", view["id"], {"bandwidth": "1G"})  # a window's field
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "bandwidth"
    gone = api.client.delete(
        f"/v1/interdomain/reservations/{view['id']}", headers=api.auth("alice")
    )
    assert gone.status_code == 200 and gone.json()["status"] == "cancelled"


def test_a_hard_volume_is_policed_hard_at_every_step(
    api: Api, interdomain: InterdomainService
) -> None:
    answer = post(api, "alice", volume_body("1TB", day=45, policing="hard"))
    assert answer.status_code == 201, answer.text
    view = answer.json()
    assert view["status"] == "committed" and view["policing"] == "hard"
    shown = api.client.get(f"/v1/interdomain/reservations/{view['id']}", headers=api.auth("alice"))
    assert shown.json()["policing"] == "hard"
    logged = interdomain.orchestrator.decisions.result(view["id"])
    assert logged is not None and logged["policing"] == "hard"
    policings = {sw["policing"] for step in logged["step_switches"] for sw in step}
    assert policings == {"hard"}


def test_a_volume_too_big_is_409_with_the_most_by_the_deadline(api: Api) -> None:
    start = BASE + 41 * 86400
    # 20G for 100 s is 250 GB; 500 GB would be done after 200 s.
    answer = post(api, "bob", volume_body("500GB", day=41, seconds=100))
    assert answer.status_code == 409, answer.text
    rid = answer.json()["error"]["reservation"]
    shown = api.client.get(f"/v1/interdomain/reservations/{rid}", headers=api.auth("bob")).json()
    assert shown["status"] == "failed"
    assert shown["most_by_deadline"] == 250 * 10**9
    assert shown["earliest_completion"] == iso(start + 200)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"bandwidth": "1G"}, "bandwidth"),
        ({"deadline": None}, "deadline"),
        ({"volume": "40Tb"}, "volume"),
        ({"policing": "strict"}, "policing"),
        ({"not_before": iso(BASE + 42 * 86400 + 7200)}, "deadline"),
    ],
)
def test_a_bad_volume_is_422_naming_the_field(api: Api, change: dict[str, Any], field: str) -> None:
    sent = {k: v for k, v in {**volume_body("1TB", day=42), **change}.items() if v is not None}
    answer = post(api, "alice", sent)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field


def test_a_volume_modify_counts_the_old_profile_as_free_or_changes_nothing(
    api: Api, cluster: LocalCluster
) -> None:
    start = BASE + 46 * 86400
    made = post(api, "alice", volume_body("4.5TB", day=46)).json()  # 20G over [0, 1800)
    url = f"/v1/interdomain/reservations/{made['id']}"
    # 9 TB by 3600 s needs 20G throughout: only with the old profile's 20G counted as free.
    changed = patch(api, "alice", made["id"], {"volume": "9TB"})
    assert changed.status_code == 200, changed.text
    view = changed.json()
    assert view["status"] == "committed" and view["transaction"] != made["transaction"]
    assert view["volume_bytes"] == 9 * 10**12 and view["completion"] == iso(start + 3600)
    assert [(s["start"], s["end"], s["rate"]) for s in view["profile"]] == [
        (iso(start), iso(start + 3600), 20000)
    ]
    held = {
        t.state
        for r in cluster.reports().values()
        for t in r.transactions
        if t.transaction_id.startswith(made["transaction"])
    }
    assert held == {pb.HOLD_STATE_RELEASED}
    too_big = patch(api, "alice", made["id"], {"volume": "12TB"})
    assert too_big.status_code == 409, too_big.text
    error = too_big.json()["error"]
    assert error["most_by_deadline"] == 9 * 10**12
    assert error["earliest_completion"] == iso(start + 4800)
    for sent, field in (({"bandwidth": "1G"}, "bandwidth"), ({"deadline": iso(start)}, "deadline")):
        bad = patch(api, "alice", made["id"], sent)
        assert bad.status_code == 422 and bad.json()["error"]["field"] == field, bad.text
    assert api.client.get(url, headers=api.auth("alice")).json()["profile"] == view["profile"]
    gone = api.client.delete(url, headers=api.auth("alice"))  # the new steps go too
    assert gone.status_code == 200 and gone.json()["status"] == "cancelled"


def test_volume_fields_without_a_volume_are_422(api: Api) -> None:
    answer = post(api, "alice", body(1, day=43, deadline=iso(BASE + 44 * 86400)))
    assert answer.status_code == 422 and answer.json()["error"]["field"] == "deadline"


def test_an_interdomain_answer_comes_in_a_zone_on_request(api: Api) -> None:
    answer = api.client.post(
        "/v1/interdomain/reservations",
        json=body(1, day=13),
        params={"tz": "America/Chicago"},
        headers=api.auth("alice"),
    )
    assert answer.status_code == 201, answer.text
    view = answer.json()
    assert view["local_tz"] == "America/Chicago"
    start = datetime.fromisoformat(view["start"])
    assert datetime.fromisoformat(view["start_local"]) == start
    assert view["start_local"].endswith(("-06:00", "-05:00"))
    listed = api.client.get(
        "/v1/interdomain/reservations", params={"tz": "me"}, headers=api.auth("alice")
    )
    assert listed.status_code == 422 and listed.json()["error"]["field"] == "tz"
