"""`braid sim success-rate`: the runner, its JSON, its figure and its command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from braid.cli import sim_cmd
from braid.studies.success_rate.evaluate import SIM_STRATEGIES
from braid.studies.success_rate.plot import plot_success_rate
from braid.studies.success_rate.study import run_success_rate
from braid.studies.success_rate.workload import SimConfig
from tests.unit.figure_files import png_dpi

TINY = SimConfig(entries=80, requests=15, repetitions=4, calibration_requests=300)


def test_workers_do_not_change_the_result() -> None:
    alone = run_success_rate(TINY, seed=5, workers=1)
    shared = run_success_rate(TINY, seed=5, workers=2)
    assert alone.as_json() == shared.as_json()


def test_the_seed_changes_the_result() -> None:
    assert run_success_rate(TINY, seed=1).as_json() != run_success_rate(TINY, seed=2).as_json()


def test_progress_reports_every_repetition() -> None:
    seen: list[tuple[int, int]] = []
    run_success_rate(TINY, seed=3, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_json_has_every_strategy_and_the_paper_figures() -> None:
    data = run_success_rate(TINY, seed=3).as_json()
    assert set(data["success_percent"]) == set(SIM_STRATEGIES)
    assert all(len(v) == TINY.domains for v in data["success_percent"].values())
    assert data["paper_vs_braid"][0]["figure"] == "single domain"
    assert data["paper_vs_braid"][0]["paper"] == 49.56
    json.dumps(data)


def test_zero_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="workers"):
        run_success_rate(TINY, seed=1, workers=0)


@pytest.mark.parametrize(
    ("name", "vector", "magic"),
    [
        ("fig.png", "fig.pdf", b"%PDF"),
        ("fig.svg", "fig.svg", b"<?xml"),
        ("fig.pdf", "fig.pdf", b"%PDF"),
    ],
)
def test_plot_writes_a_300_dpi_png_and_a_vector_file(
    tmp_path: Path, name: str, vector: str, magic: bytes
) -> None:
    study = run_success_rate(TINY, seed=3)
    written = plot_success_rate(study, tmp_path / name)
    assert written == [tmp_path / "fig.png", tmp_path / vector]
    assert (tmp_path / vector).read_bytes().startswith(magic)
    assert png_dpi(tmp_path / "fig.png") == pytest.approx(300, abs=0.5)


def test_plot_refuses_unknown_formats(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--plot"):
        plot_success_rate(run_success_rate(TINY, seed=3), tmp_path / "fig.gif")


def test_command_prints_json_and_writes_the_plot(tmp_path: Path) -> None:
    figure = tmp_path / "rate.png"
    args = ["--repetitions", "2", "--requests", "10", "--entries", "50", "--seed", "9"]
    result = CliRunner().invoke(sim_cmd.app, [*args, "--json", "--plot", str(figure)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["seed"] == 9 and data["config"]["repetitions"] == 2
    assert figure.read_bytes().startswith(b"\x89PNG")
    assert figure.with_suffix(".pdf").read_bytes().startswith(b"%PDF")


def test_command_prints_tables() -> None:
    args = ["--repetitions", "2", "--requests", "10", "--entries", "50"]
    result = CliRunner().invoke(sim_cmd.app, args)
    assert result.exit_code == 0, result.output
    assert "full-offers" in result.stdout and "seed 000 beside braid" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-duration", "100", "--entries", "50"], "--max-duration"),
        (["--target", "1.5"], "--target:"),
        (["--plot", "out.gif"], "--plot"),
        (["--entries", "20", "--repetitions", "1", "--plot", "no/such/dir/x.png"], "--plot"),
    ],
)
def test_command_rejects_bad_options(args: list[str], message: str) -> None:
    result = CliRunner().invoke(sim_cmd.app, args)
    assert result.exit_code == 2
    assert message in result.output
