"""Settings: every bad value is refused with an error naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from braid.app.settings import Settings, check_settings, load_settings
from braid.core.errors import InputError


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc", "", "100000"])
def test_a_bad_tick_from_the_environment_names_the_setting(value: str) -> None:
    with pytest.raises(InputError) as refused:
        load_settings(env={"BRAID_TICK_SECONDS": value})
    assert refused.value.field == "tick_seconds"
    assert "tick_seconds" in str(refused.value)


def test_a_bad_tick_in_the_config_file_names_the_setting_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "braid.yaml"
    config.write_text("tick_seconds: -5\n")
    with pytest.raises(InputError, match=r"tick_seconds: must be .* not -5 \(in .*braid.yaml\)"):
        load_settings(config, env={})


def test_good_values_are_taken() -> None:
    env = {"BRAID_TICK_SECONDS": "0.5", "BRAID_SQLITE_SYNCHRONOUS": "normal"}
    settings = load_settings(env=env)
    assert settings.tick_seconds == 0.5
    assert settings.sqlite_synchronous == "normal"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("hold_seconds", "0"),
        ("port", "70000"),
        ("max_body_bytes", "-1"),
        ("sqlite_synchronous", "off"),
    ],
)
def test_other_bounded_settings_are_checked_too(name: str, value: str) -> None:
    with pytest.raises(InputError) as refused:
        load_settings(env={f"BRAID_{name.upper()}": value})
    assert refused.value.field == name


def test_check_settings_catches_values_set_in_code() -> None:
    check_settings(Settings())
    with pytest.raises(InputError, match="tick_seconds"):
        check_settings(Settings(tick_seconds=0.0))
