"""The cluster benchmark's input: the shard files it writes are the partitions it times."""

from __future__ import annotations

from pathlib import Path

from benchmark_scripts import load_benchmark

from bigaction_assets.ingest import discover
from bigaction_assets.sources import adapters


def test_the_shard_files_are_the_partitions_the_benchmark_submits(tmp_path: Path) -> None:
    cluster = load_benchmark("cluster")
    written = cluster.write_input(tmp_path, shards=3, total_mb=1)
    found = discover(tmp_path, adapters())
    assert sorted(found) == sorted([cluster.SMALL, *cluster.shard_keys(3)])
    shards = sorted((tmp_path / "mind2web" / cluster.DATASET).iterdir())
    assert written == sum(path.stat().st_size for path in shards) > 0


def test_a_new_size_rewrites_the_shards_and_fewer_shards_leave_none_behind(
    tmp_path: Path,
) -> None:
    cluster = load_benchmark("cluster")
    small = cluster.write_input(tmp_path, shards=2, total_mb=1)
    larger = cluster.write_input(tmp_path, shards=2, total_mb=30)
    assert larger > small
    cluster.write_input(tmp_path, shards=1, total_mb=30)
    assert sorted(discover(tmp_path, adapters())) == sorted([cluster.SMALL, *cluster.shard_keys(1)])


def test_the_command_line_writes_the_input_and_stops(tmp_path: Path) -> None:
    cluster = load_benchmark("cluster")
    assert cluster.main(["--shards", "2", "--mb", "1", "--out", str(tmp_path), "--input-only"]) == 0
    assert len(list((tmp_path / "landing" / "mind2web" / cluster.DATASET).glob("*.json"))) == 2
