"""The Dagster home `make demo` and `make ui` share: the project's settings, kept up to date
in a copy nobody edited, left alone in one somebody did."""

from __future__ import annotations

import hashlib

import pytest

from bigaction_assets import dagster_home
from bigaction_assets.dagster_home import SHIPPED, prepare_dagster_home
from bigaction_assets.settings import Paths

OLD = b"telemetry:\n  enabled: false\n"  # stands for a dagster.yaml shipped earlier


@pytest.fixture
def paths(tmp_path, monkeypatch) -> Paths:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    earlier = {*dagster_home.EARLIER_SHIPPED, hashlib.sha256(OLD).hexdigest()}
    monkeypatch.setattr(dagster_home, "EARLIER_SHIPPED", frozenset(earlier))
    return Paths(tmp_path / "landing", tmp_path / "data" / "lake", tmp_path / "data" / "c.duckdb")


def test_a_new_home_gets_the_shipped_settings(paths) -> None:
    home = prepare_dagster_home(paths)
    assert home == paths.lake.parent / "dagster"
    assert (home / "dagster.yaml").read_bytes() == SHIPPED.read_bytes()


def test_an_unedited_earlier_copy_is_brought_up_to_date(paths) -> None:
    home = paths.lake.parent / "dagster"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_bytes(OLD)
    prepare_dagster_home(paths)
    assert (home / "dagster.yaml").read_bytes() == SHIPPED.read_bytes()


def test_an_edited_copy_is_left_alone(paths) -> None:
    home = paths.lake.parent / "dagster"
    home.mkdir(parents=True)
    mine = OLD + b"# my own run queue\n"
    (home / "dagster.yaml").write_bytes(mine)
    prepare_dagster_home(paths)
    assert (home / "dagster.yaml").read_bytes() == mine


def test_the_current_settings_are_not_listed_as_earlier_ones() -> None:
    """Listing the current file's hash would be harmless today and wrong after the next
    change: an edited-back copy would be overwritten."""
    assert hashlib.sha256(SHIPPED.read_bytes()).hexdigest() not in dagster_home.EARLIER_SHIPPED
