"""Volume reservations through REST: booked as a profile, seen by every later request."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from braid.adapters.store import open_repository
from braid.app.reservations.mirror import held_bookings
from braid.app.reservations.service import ReservationService
from braid.core.policy import Limits, Policy
from tests.api.harness import NOW, Api, body, build, iso

TB = 10**12


def volume(**fields: Any) -> dict[str, Any]:
    """1 TB ORNL -> NERSC from NOW + 1h, as soon as possible, changed by `fields`."""
    sent: dict[str, Any] = {
        "mode": "volume",
        "src": "ORNL",
        "dst": "NERSC",
        "volume": "1TB",
        "not_before": iso(3600),
    }
    sent.update(fields)
    return {k: v for k, v in sent.items() if v is not None}


def post(api: Api, sent: dict[str, Any], who: str = "alice") -> Any:
    return api.client.post("/v1/reservations", json=sent, headers=api.auth(who))


def test_a_volume_is_booked_as_a_profile_and_read_back() -> None:
    api = build()
    response = post(api, volume())
    assert response.status_code == 201, response.text
    view = response.json()
    assert view["kind"] == "volume" and view["start"] == iso(3600)
    shown = view["volume"]
    assert shown["bytes"] == TB and shown["completion"] == view["end"]
    steps = shown["profile"]
    assert steps[0]["start"] == iso(3600) and steps[-1]["end"] == view["end"]
    assert all(step["paths"] for step in steps)
    # 90 Gbit/s is the max flow ORNL -> NERSC (50G north + 40G south): 1 TB takes 89 s.
    assert shown["peak"] == 90000 and view["end"] == iso(3600 + 89)
    url = f"/v1/reservations/{view['id']}"
    assert api.client.get(url, headers=api.auth("alice")).json() == view
    [created] = api.client.get(url + "/audit", headers=api.auth("alice")).json()["entries"]
    assert created["detail"]["volume"] == TB
    assert created["detail"]["completion"] == NOW + 3600 + 89


def test_later_requests_see_every_step_and_cancel_frees_them() -> None:
    api = build()
    booked = post(api, volume()).json()
    during = body(bandwidth="10G", start=iso(3600 + 10), end=iso(3600 + 20))
    assert post(api, during).status_code == 409
    cancelled = api.client.delete(f"/v1/reservations/{booked['id']}", headers=api.auth("alice"))
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    assert post(api, during).status_code == 201


def test_a_missed_deadline_is_refused_with_offers_and_changes_nothing() -> None:
    api = build()
    before = api.snapshot()
    response = post(api, volume(deadline=iso(3600 + 40)))
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    offers = {a["kind"]: a["body"] for a in error["alternatives"]}
    assert offers["earliest_completion"]["deadline"] == iso(3600 + 89)
    assert offers["most_by_deadline"]["volume"] == 450 * 10**9  # 90 Gbit/s for 40 s
    assert api.snapshot() == before
    for kind in ("earliest_completion", "most_by_deadline"):  # each fits, one at a time
        assert post(build(), offers[kind]).status_code == 201


def test_flattest_spreads_to_the_deadline() -> None:
    api = build()
    view = post(api, volume(deadline=iso(3600 + 1600), objective="flattest")).json()
    assert view["volume"]["peak"] == 5000 and view["end"] == iso(3600 + 1600)


def test_a_volume_modified_under_way_keeps_what_moved() -> None:
    api = build()
    view = post(api, volume()).json()
    url, alice = f"/v1/reservations/{view['id']}", api.auth("alice")
    api.clock.advance(3600 + 40)  # 40 s at 90 Gbit/s: 450 GB moved, 550 GB to go
    spread = {"objective": "flattest", "deadline": iso(3600 + 40 + 550)}
    response = api.client.patch(url, json=spread, headers=alice)
    assert response.status_code == 200, response.text
    changed = response.json()
    first, rest = changed["volume"]["profile"]
    assert (first["start"], first["end"]) == (iso(3600), iso(3640))
    assert first["paths"] == view["volume"]["profile"][0]["paths"]
    assert (rest["start"], rest["end"]) == (iso(3640), iso(3640 + 550))
    assert sum(p["bandwidth"] for p in rest["paths"]) == 8000  # 4400 Gbit over 550 s
    assert changed["end"] == iso(3640 + 550) and changed["version"] == view["version"] + 1
    entries = api.client.get(url + "/audit", headers=alice).json()["entries"]
    assert [e["action"] for e in entries] == ["created", "modified"]


def test_a_volume_change_that_does_not_fit_offers_what_does() -> None:
    api = build()
    view = post(api, volume()).json()
    url, alice = f"/v1/reservations/{view['id']}", api.auth("alice")
    api.clock.advance(3600 + 40)
    before = api.snapshot()
    response = api.client.patch(
        url, json={"volume": "2TB", "deadline": iso(3600 + 80)}, headers=alice
    )
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert "of it moved already" in error["message"]
    offers = {a["kind"]: a["body"] for a in error["alternatives"]}
    assert offers["most_by_deadline"]["volume"] == 900 * 10**9  # 80 s at 90 Gbit/s
    assert offers["earliest_completion"]["deadline"] == iso(3600 + 178)
    assert api.snapshot() == before
    accepted = api.client.patch(url, json=offers["earliest_completion"], headers=alice)
    assert accepted.status_code == 200 and accepted.json()["end"] == iso(3600 + 178)
    wrong = api.client.patch(url, json={"end": iso(9000)}, headers=alice)
    assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "end"


def test_bad_volume_fields_are_named_and_change_nothing() -> None:
    api = build()
    before = api.snapshot()
    for sent, field in (
        (volume(objective="flattest"), "deadline"),
        (volume(volume="1Tb"), "volume"),
        (volume(deadline=iso(1800)), "deadline"),
        (volume(protect=True), "protect"),
        (volume(max_rate="fast"), "max_rate"),
    ):
        response = post(api, sent)
        assert response.status_code == 422, (sent, response.text)
        assert response.json()["error"]["field"] == field
    assert api.snapshot() == before


def test_the_quota_counts_each_step_at_its_rate() -> None:
    api = build(policy=Policy(roles={"user": Limits(quota=50 * 10**9)}))
    assert post(api, volume(max_rate="40G")).status_code == 201  # 200 s at 40G
    over = post(api, body(bandwidth="20G", start=iso(3600 + 100), end=iso(3600 + 300)))
    assert over.status_code == 403 and over.json()["error"]["field"] == "quota"
    after = body(bandwidth="20G", start=iso(3600 + 200), end=iso(3600 + 300))
    assert post(api, after).status_code == 201
    # A second volume over the fixed booking would peak at 40G + 20G: over the quota.
    assert post(api, volume(not_before=iso(3600 + 200), max_rate="40G")).status_code == 403


def test_the_byte_quota_counts_fixed_bookings_and_volumes_alike() -> None:
    api = build(policy=Policy(roles={"user": Limits(byte_quota=2_100 * 10**9)}))
    # A volume's steps are whole seconds, so it books its bytes rounded up to a second.
    assert post(api, volume(volume="1TB")).status_code == 201
    fixed = body(bandwidth="40G", start=iso(7200), end=iso(7200 + 200))  # 1 TB
    assert post(api, fixed).status_code == 201, post(api, fixed).text
    before = api.snapshot()
    over = post(api, volume(volume="200GB"))
    assert over.status_code == 403 and over.json()["error"]["field"] == "byte_quota"
    assert "byte quota of 2.1 TB" in over.json()["error"]["message"]
    assert api.snapshot() == before


def test_availability_answers_quickest_and_volume_without_booking() -> None:
    api = build()
    before = api.snapshot()
    query = {"mode": "quickest", "src": "ORNL", "dst": "NERSC", "volume": "1TB"}
    quickest = api.client.get(
        "/v1/availability", params={**query, "not_before": iso(3600)}, headers=api.auth("bob")
    )
    assert quickest.status_code == 200, quickest.text
    answer = quickest.json()
    assert answer["status"] == "answered" and answer["completion"] == iso(3600 + 89)
    assert answer["profile"][0]["start"] == iso(3600)
    fits = api.client.get(
        "/v1/availability",
        params={**query, "mode": "volume", "not_before": iso(3600), "deadline": iso(3640)},
        headers=api.auth("bob"),
    ).json()
    assert fits["status"] == "rejected" and fits["earliest_completion"] == iso(3600 + 89)
    assert fits["most_by_deadline"] == 450 * 10**9
    assert api.snapshot() == before


def test_a_restarted_service_books_every_step_of_a_stored_volume(tmp_path: Path) -> None:
    repo = open_repository(f"sqlite:///{tmp_path}/b.db")
    try:
        api = build(repo)
        booked = post(api, volume(max_rate="40G", not_before=iso(3600))).json()
        fixed = post(api, body(bandwidth="40G", start=iso(3600), end=iso(3700))).json()
        later = post(api, volume(volume="2TB", not_before=iso(3600))).json()
        # 10G beside both for 100 s, 50G beside the first volume, then all 90G.
        assert [s["rate"] for s in later["volume"]["profile"]] == [10000, 50000, 90000]
        restarted = ReservationService(api.repo, clock=api.clock)
        restarted.start()
        network = restarted.books.mirror.network
        steps = len(booked["volume"]["profile"]) + len(later["volume"]["profile"])
        assert len(network.bookings) == steps + 1 and fixed["id"] in network.bookings
        ends = [
            int(datetime.fromisoformat(s["end"]).timestamp()) for s in later["volume"]["profile"]
        ]
        assert [b.end for b in held_bookings(network, later["id"])] == ends
    finally:
        repo.close()
