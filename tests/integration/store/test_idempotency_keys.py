"""Idempotency keys are stored with the booking: they hold across restarts and replicas."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from braid.app.ports import ConflictError
from tests.api.harness import Api, body, build
from tests.integration.store.conftest import Backend


def _post(api: Api, key: str, sent: dict[str, Any]) -> Any:
    return api.client.post(
        "/v1/reservations", json=sent, headers={**api.auth("alice"), "Idempotency-Key": key}
    )


def _created(api: Api) -> list[str]:
    return [e.reservation_id or "" for e in api.repo.audit() if e.action == "created"]


def test_a_retry_after_a_restart_gets_the_first_booking(sql_backend: Backend) -> None:
    first = _post(build(sql_backend.open()), "after-restart", body(bandwidth="20G"))
    assert first.status_code == 201, first.text
    restarted = build(sql_backend.open())  # a new process on the same store
    again = _post(restarted, "after-restart", body(bandwidth="20G"))
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert _created(restarted) == [first.json()["id"]]
    other = _post(restarted, "after-restart", body(bandwidth="10G"))
    assert other.status_code == 409 and other.json()["error"]["field"] == "Idempotency-Key"


def test_replicas_sharing_a_store_book_a_key_once(sql_backend: Backend) -> None:
    replicas = [build(sql_backend.open()) for _ in range(2)]
    for replica in replicas[1:]:
        replica.tokens = replicas[0].tokens  # the same users' tokens on every replica
    with ThreadPoolExecutor(4) as pool:
        answers = list(
            pool.map(lambda n: _post(replicas[n % 2], "both", body(bandwidth="20G")), range(4))
        )
    assert {a.status_code for a in answers} == {201}, [a.text for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1
    assert _created(replicas[0]) == [answers[0].json()["id"]]


def test_the_store_refuses_a_second_row_with_an_owner_s_key(backend: Backend) -> None:
    api = build(backend.open())
    booked = _post(api, "unique", body(bandwidth="1G")).json()["id"]
    stored = api.repo.get(booked)
    assert stored is not None and stored.idempotency_key == "unique"
    assert api.repo.keyed("alice", "unique") == stored
    assert api.repo.keyed("bob", "unique") is None
    # A second row with the same owner and key, as another replica would write it,
    # is refused; the same row without the key (the control) is stored.
    for twin_id, key, refused in (("r-twin", "unique", True), ("r-other", None, False)):
        twin = replace(stored, id=twin_id, token=f"{twin_id}-token", idempotency_key=key)
        step = replace(api.service.books.write_step(twin, "created"), expected_version=None)
        outcome = _written(api, step)
        assert isinstance(outcome, ConflictError) is refused, outcome
        assert (api.repo.get(twin_id) is None) is refused


def _written(api: Api, step: Any) -> object:
    try:
        return api.repo.write_new([(step, "alice")], now=api.clock())[0]
    except ConflictError as refused:  # the SQL stores refuse the whole batch
        return refused
