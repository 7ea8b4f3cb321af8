"""`braid emulate failover`'s configurations, and the options it refuses before anything runs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from braid.core.errors import InputError
from braid.emulation.experiments.failover import check_options, configurations
from braid.emulation.failover.config import Config, FailoverOptions


def test_short_mode_is_the_seeds_train_with_both_methods() -> None:
    short = FailoverOptions.short()
    assert (short.period, short.events) == (10.0, 3)
    assert [c.label for c in configurations(short)] == [
        "direct, path-switch",
        "controller, path-switch",
    ]
    full = FailoverOptions()
    assert (full.period, full.events) == (50.0, 10)
    assert Config("direct", "path-switch", 100) in configurations(full)
    assert len(configurations(full)) == 6


def test_groups_meet_only_the_cut_and_monitors_every_degradation() -> None:
    options = FailoverOptions(
        methods=("direct", "ff", "ff-bfd"), degradations=("path-switch", "cut"), extra=()
    )
    assert [c.label for c in configurations(options)] == [
        "direct, path-switch",
        "direct, cut",
        "ff, cut",
        "ff-bfd, cut",
    ]
    check_options(options)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"methods": ("direct", "ff-bfd"), "degradations": ("path-switch",)}, "--methods"),
        ({"bfd_ms": 0}, "--bfd-interval"),
        ({"bfd_ms": 120_000}, "--bfd-interval"),
    ],
)
def test_options_that_cannot_run_are_refused_naming_the_option(
    changes: dict[str, object], field: str
) -> None:
    options = replace(FailoverOptions(degradations=("cut",)), **changes)  # type: ignore[arg-type]
    with pytest.raises(InputError) as caught:
        check_options(options)
    assert caught.value.field == field
