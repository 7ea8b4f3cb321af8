import pytest

from braid.core.errors import InputError
from braid.core.model.topology import topology_from_dict
from braid.core.model.units import FOREVER
from braid.core.planning.requests import Release, Request, parse_request

TOPOLOGY = topology_from_dict(
    {
        "nodes": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
        "links": [
            {"id": "AB", "a": "A", "b": "B", "capacity": 100},
            {"id": "BC", "a": "B", "b": "C", "capacity": 100},
        ],
    }
)
FIXED = {"id": "r", "src": "A", "dst": "C", "bandwidth": "50M", "start": 0, "end": 60}


def test_fixed_is_the_default_mode() -> None:
    request = parse_request(FIXED, TOPOLOGY)
    assert isinstance(request, Request)
    assert (request.mode, request.bandwidth, request.symmetric, request.max_paths) == (
        "fixed",
        50 * 10**6,
        True,
        1,
    )


def test_every_mode_parses() -> None:
    assert isinstance(parse_request({"id": "x", "op": "release"}, TOPOLOGY), Release)
    earliest = parse_request(
        {
            "id": "e",
            "mode": "earliest",
            "src": "A",
            "dst": "C",
            "bandwidth": 5,
            "duration": 60,
            "not_before": 10,
        },
        TOPOLOGY,
    )
    assert isinstance(earliest, Request) and earliest.not_after is None
    slots = parse_request(
        {
            "id": "s",
            "mode": "all-slots",
            "src": "A",
            "dst": "C",
            "bandwidth": 5,
            "duration": 60,
            "window_start": 0,
            "window_end": 600,
        },
        TOPOLOGY,
    )
    assert isinstance(slots, Request) and (slots.start, slots.end) == (0, 600)
    split_slots = parse_request(
        {
            "id": "s2",
            "mode": "all-slots",
            "src": "A",
            "dst": "C",
            "bandwidth": 5,
            "duration": 60,
            "window_start": 0,
            "window_end": 600,
            "max_paths": 3,
            "split": "packet",
        },
        TOPOLOGY,
    )
    assert isinstance(split_slots, Request)
    assert (split_slots.max_paths, split_slots.split) == (3, "packet")
    tenant = parse_request(
        {
            "id": "t",
            "mode": "tenant",
            "tenant": "cms",
            "src": "A",
            "dst": "C",
            "bandwidth": 5,
            "start": 0,
            "main_path": ["A", "B", "C"],
        },
        TOPOLOGY,
    )
    assert (
        isinstance(tenant, Request)
        and tenant.end == FOREVER
        and tenant.main_path == ("A", "B", "C")
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"id": ""}, "id"),
        ({"op": "book"}, "op"),
        ({"mode": "asap"}, "mode"),
        ({"src": "Z"}, "src"),
        ({"dst": "A"}, "dst"),
        ({"bandwidth": 0}, "bandwidth"),
        ({"bandwidth": "-5G"}, "bandwidth"),
        ({"end": 0}, "end"),
        ({"start": "noon"}, "start"),
        ({"max_paths": 0}, "max_paths"),
        ({"max_paths": 2.5}, "max_paths"),
        ({"split": "byte"}, "split"),
        ({"directional": "yes"}, "directional"),
        ({"colour": "red"}, "colour"),
        ({"duration": 60}, "duration"),
    ],
)
def test_bad_fields_are_named(change: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_request({**FIXED, **change}, TOPOLOGY)
    assert caught.value.field == field


def test_missing_fields_are_named() -> None:
    with pytest.raises(InputError) as caught:
        parse_request({"id": "r", "src": "A", "dst": "C", "bandwidth": 5, "start": 0}, TOPOLOGY)
    assert caught.value.field == "end"
    with pytest.raises(InputError, match="not_after"):
        parse_request(
            {
                "id": "e",
                "mode": "earliest",
                "src": "A",
                "dst": "C",
                "bandwidth": 5,
                "duration": 60,
                "not_before": 10,
                "not_after": 30,
            },
            TOPOLOGY,
        )
    with pytest.raises(InputError, match="main_path"):
        parse_request(
            {
                "id": "t",
                "mode": "tenant",
                "tenant": "x",
                "src": "A",
                "dst": "C",
                "bandwidth": 5,
                "start": 0,
                "main_path": ["B", "C"],
            },
            TOPOLOGY,
        )
    with pytest.raises(InputError, match="max_paths"):
        parse_request(
            {
                "id": "s",
                "mode": "all-slots",
                "src": "A",
                "dst": "C",
                "bandwidth": 5,
                "duration": 60,
                "window_start": 0,
                "window_end": 600,
                "max_paths": 17,
            },
            TOPOLOGY,
        )


def test_not_a_mapping() -> None:
    with pytest.raises(InputError, match="JSON object"):
        parse_request([1, 2], TOPOLOGY)
