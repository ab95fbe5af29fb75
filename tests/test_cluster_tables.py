"""The cluster makes Dagster's tables once, before its services start and race to make them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bigaction_assets.cluster import backing, control, processes
from bigaction_assets.cluster.layout import ClusterLayout
from bigaction_assets.cluster.store_settings import CLUSTER_LAKE_ENV, LOCAL


def home_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    env = {name: value for name, value in os.environ.items() if not name.startswith("DAGSTER_")}
    return env | {"DAGSTER_HOME": str(home)}


def test_the_tables_are_made_by_opening_the_instance(tmp_path: Path) -> None:
    layout = ClusterLayout(data_dir=tmp_path / "cluster", landing=tmp_path / "landing")
    layout.data_dir.mkdir()
    home = tmp_path / "home"  # Dagster's default storage: its SQLite files show the tables made
    processes.create_dagster_tables(layout, home_env(home))
    assert (home / "history" / "runs.db").is_file()
    assert (home / "schedules" / "schedules.db").is_file()


def test_storage_that_cannot_be_opened_stops_the_start_and_names_its_log(tmp_path: Path) -> None:
    layout = ClusterLayout(data_dir=tmp_path / "cluster", landing=tmp_path / "landing")
    layout.data_dir.mkdir()
    home = tmp_path / "home"
    env = home_env(home)
    (home / "dagster.yaml").write_text(
        "storage:\n  postgres:\n    postgres_url: postgresql://nobody@127.0.0.1:1/none\n"
    )
    with pytest.raises(backing.ServiceError, match="tables could not be created") as raised:
        processes.create_dagster_tables(layout, env)
    assert str(layout.logs / processes.TABLES_LOG) in str(raised.value)


def test_up_makes_the_tables_before_it_starts_any_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = ClusterLayout(data_dir=tmp_path / "cluster", landing=tmp_path / "landing")
    happened: list[str] = []

    class Stop(Exception):
        pass

    def start(_layout: ClusterLayout, name: str, *_args: object) -> int:
        happened.append(f"start {name}")
        raise Stop

    for name in ("install_packages", "start_postgres", "start_redis"):
        monkeypatch.setattr(backing, name, lambda *_args, name=name: happened.append(name))
    monkeypatch.setattr(
        processes, "create_dagster_tables", lambda *_args: happened.append("tables")
    )
    monkeypatch.setattr(processes, "start", start)
    with pytest.raises(Stop):
        control.up(layout, {"PATH": os.environ.get("PATH", ""), CLUSTER_LAKE_ENV: LOCAL})
    assert happened[-2:] == ["tables", "start code-server"]
    assert happened.index("start_postgres") < happened.index("tables")
