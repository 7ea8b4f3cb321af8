"""The configuration reference is written from the code and kept equal to it."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from braid.app.settings import Settings
from braid.app.settings_reference import HELP, reference_markdown

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def test_every_setting_is_described_and_nothing_else() -> None:
    assert set(HELP) == {f.name for f in fields(Settings)}


def test_docs_configuration_md_is_what_the_code_says() -> None:
    assert DOC.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/configuration.md is out of date: run scripts/gen-config-doc"
    )
