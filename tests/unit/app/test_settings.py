"""Settings: every bad value is refused with an error naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from braid.app.settings import Settings, check_settings, load_settings
from braid.core.errors import InputError
from braid.core.policy import Limits, Policy


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


def test_the_policy_comes_from_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "braid.yaml"
    config.write_text(
        "hold_seconds: 60\n"
        "policy:\n"
        "  roles:\n"
        "    user: {horizon: 90d, max_bandwidth: 40G}\n"
        "  users:\n"
        "    alice: {quota: 100G}\n"
    )
    settings = load_settings(config, env={})
    assert settings.hold_seconds == 60
    assert settings.policy.limits_for("alice", "user") == Limits(
        horizon=90 * 86400, max_bandwidth=40 * 10**9, quota=100 * 10**9
    )


def test_a_bad_policy_rule_names_its_path(tmp_path: Path) -> None:
    config = tmp_path / "braid.yaml"
    config.write_text("policy:\n  roles:\n    user: {max_bandwith: 40G}\n")
    with pytest.raises(InputError) as caught:
        load_settings(config, env={})
    assert caught.value.field == "policy.roles.user.max_bandwith"


def test_the_policy_cannot_come_from_one_environment_variable() -> None:
    assert load_settings(None, env={"BRAID_POLICY": "anything"}).policy == Policy()


def test_failback_is_a_flag_from_file_or_environment(tmp_path: Path) -> None:
    assert load_settings(env={}).failback is True
    assert load_settings(env={"BRAID_FAILBACK": "false"}).failback is False
    config = tmp_path / "braid.yaml"
    config.write_text("failback: no\n")
    assert load_settings(config, env={}).failback is False
    with pytest.raises(InputError) as bad:
        load_settings(env={"BRAID_FAILBACK": "sometimes"})
    assert bad.value.field == "failback"


def test_insecure_is_a_command_line_choice_only(tmp_path: Path) -> None:
    config = tmp_path / "braid.yaml"
    config.write_text("insecure: true\n")
    with pytest.raises(InputError, match="command-line option only"):
        load_settings(config)
    assert not load_settings(None, {"BRAID_INSECURE": "1"}).insecure  # ignored, never opens
    assert load_settings(None, {"BRAID_METRICS_OPEN": "true"}).metrics_open


def test_client_certificates_need_tls() -> None:
    with pytest.raises(InputError, match="tls_client_ca"):
        check_settings(Settings(tls_client_ca="ca.pem"))


def test_bookings_must_end_within_a_year_by_default() -> None:
    settings = load_settings(None, env={})
    assert settings.booking_horizon_days == 365
    assert settings.booking_policy().limits_for("alice", "user").horizon == 365 * 86400
    assert settings.booking_policy().limits_for("olga", "operator").horizon == 365 * 86400


def test_the_default_horizon_is_the_operator_s_to_change_or_drop(tmp_path: Path) -> None:
    longer = load_settings(None, env={"BRAID_BOOKING_HORIZON_DAYS": "730"})
    assert longer.booking_policy().limits_for("alice", "user").horizon == 730 * 86400
    none = load_settings(None, env={"BRAID_BOOKING_HORIZON_DAYS": "0"})
    assert none.booking_policy().limits_for("alice", "user").horizon is None
    config = tmp_path / "braid.yaml"
    config.write_text("policy:\n  roles:\n    operator: {horizon: 3650d}\n")
    ruled = load_settings(config, env={}).booking_policy()
    assert ruled.limits_for("olga", "operator").horizon == 3650 * 86400
    assert ruled.limits_for("alice", "user").horizon == 365 * 86400
    for bad in ("-1", "36526", "a year"):
        with pytest.raises(InputError) as caught:
            load_settings(None, env={"BRAID_BOOKING_HORIZON_DAYS": bad})
        assert caught.value.field == "booking_horizon_days"
