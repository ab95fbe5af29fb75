"""The rerun layer's pure parts: content fingerprints, stamps, the planner, unchanged writes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl
import pytest

from bigaction_assets import lake_writer
from bigaction_assets.catalog import refresh_catalog
from bigaction_assets.durable import write_durably
from bigaction_assets.rerun import fingerprint as digests
from bigaction_assets.rerun.fingerprint import files_fingerprint
from bigaction_assets.rerun.graph import AssetNode, Graph
from bigaction_assets.rerun.plan import Step, plan
from bigaction_assets.rerun.stamps import Stamps


def same_size_edit(path: Path) -> None:
    """One byte changed, size kept and the old mtime put back."""
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[0] = ord("B") if data[0] != ord("B") else ord("C")
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)


def test_fingerprint_follows_content_not_mtime(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b'{"id": "a"}\n')
    second.write_bytes(b'{"id": "b"}\n')
    before = files_fingerprint([first], tmp_path)
    assert files_fingerprint([first, second], tmp_path) != before

    stat = first.stat()
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touch
    assert files_fingerprint([first], tmp_path) == before

    same_size_edit(first)  # the memo must not trust (size, mtime)
    assert files_fingerprint([first], tmp_path) != before


@pytest.fixture
def digests_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Digests kept on disk as `make demo` keeps them; yields the files read to hash them."""
    read: list[Path] = []
    sha256_of = digests._sha256_of

    def counting(path: Path) -> str:
        read.append(path)
        return sha256_of(path)

    monkeypatch.setattr(digests, "_sha256_of", counting)
    monkeypatch.setattr(digests, "_MEMO", {})
    digests.keep_digests_in(tmp_path / "cache")
    yield read
    digests.keep_digests_in(None)


def test_a_new_process_stats_the_files_a_run_hashed_and_reads_only_what_changed(
    tmp_path: Path, digests_on_disk: list[Path]
) -> None:
    files = [tmp_path / f"{name}.jsonl" for name in "abc"]
    for path in files:
        path.write_bytes(path.name.encode() * 1000)

    def fresh_process_fingerprint() -> str:
        digests._MEMO.clear()
        digests_on_disk.clear()
        return files_fingerprint(files, tmp_path)

    before = fresh_process_fingerprint()
    assert len(digests_on_disk) == 3
    assert fresh_process_fingerprint() == before and digests_on_disk == []
    stat = files[0].stat()
    os.utime(files[0], ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touch
    assert fresh_process_fingerprint() == before and digests_on_disk == [files[0]]
    same_size_edit(files[1])  # the disk memo must not trust (size, mtime) either
    assert fresh_process_fingerprint() != before and digests_on_disk == [files[1]]


def test_a_damaged_digest_memo_is_reported_and_the_files_hashed(
    tmp_path: Path, digests_on_disk: list[Path], caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": "a"}\n')
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / digests.DIGEST_MEMO).write_bytes(b"not a database" * 100)
    with caplog.at_level("WARNING", "bigaction_assets.rerun.fingerprint"):
        assert files_fingerprint([path], tmp_path) == files_fingerprint_uncached(path, tmp_path)
    assert digests_on_disk == [path] and "unreadable" in caplog.text


def files_fingerprint_uncached(path: Path, root: Path) -> str:
    name = path.relative_to(root).as_posix()
    return digests.combine([(name, hashlib.sha256(path.read_bytes()).hexdigest())])


def test_fingerprint_names_files_relative_to_the_landing_dir(tmp_path: Path) -> None:
    for root in (tmp_path / "one", tmp_path / "two"):
        (root / "adp").mkdir(parents=True)
        (root / "adp" / "x.json").write_bytes(b"[]")
    one, two = (
        files_fingerprint([r / "adp" / "x.json"], r) for r in (tmp_path / "one", tmp_path / "two")
    )
    assert one == two


def test_a_stamp_holds_until_its_output_is_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "lake" / "g" / "a" / "p.parquet"
    out.parent.mkdir(parents=True)
    out.write_bytes(b"one")
    stamps = Stamps(tmp_path)
    stamps.record("a", "p", "f1", [out])
    stamps.save()
    assert Stamps.load(tmp_path).current("a", "p") == "f1"

    out.write_bytes(b"two")  # rewritten in place, even with its mtime put back
    assert Stamps.load(tmp_path).current("a", "p") is None
    out.unlink()
    assert Stamps.load(tmp_path).current("a", "p") is None


def node(key: str, deps: tuple[str, ...] = (), partitioned: bool = True, **kw) -> AssetNode:
    fields = {"op": key, "group": "g", "code_version": "1", "config": None, **kw}
    return AssetNode(key=key, partitions="datasets" if partitioned else None, deps=deps, **fields)


GRAPH = Graph(
    {
        "raw": node("raw"),
        "examples": node("examples", ("raw",), config={"max_tokens": 8}),
        "files": node("files", ("examples",), partitioned=False),
    },
    {},
)


def planned(graph: Graph, landing: dict[str, str], stamps: Stamps, configs=None):
    steps = [Step("job", (k,), [("raw", k), ("examples", k)]) for k in sorted(landing)]
    steps.append(Step("files", (), [("files", None)]))
    configs = configs or {k: n.config for k, n in graph.assets.items()}
    roots = {("raw", k): fp for k, fp in landing.items()}
    return plan(graph, steps, roots, configs, {}, stamps)


def stamp_all(result, stamps: Stamps, out: Path) -> None:
    for instance, fingerprint in result.fingerprints.items():
        stamps.record(*instance, fingerprint, [out])


def stale(result) -> set:
    return {i for step in result.steps for i in step.stale}


@pytest.fixture
def built(tmp_path: Path) -> tuple[Stamps, Path]:
    out = tmp_path / "out"
    out.write_bytes(b"x")
    stamps = Stamps(tmp_path)
    stamp_all(planned(GRAPH, {"a": "1", "b": "1"}, stamps), stamps, out)
    return stamps, out


def test_nothing_is_stale_when_nothing_changed(built) -> None:
    stamps, _ = built
    assert planned(GRAPH, {"a": "1", "b": "1"}, stamps).up_to_date


def test_a_changed_landing_dataset_rebuilds_its_partition_and_what_reads_all(built) -> None:
    stamps, _ = built
    assert stale(planned(GRAPH, {"a": "2", "b": "1"}, stamps)) == {
        ("raw", "a"), ("examples", "a"), ("files", None)
    }  # fmt: skip
    assert stale(planned(GRAPH, {"a": "1", "b": "1", "c": "1"}, stamps)) == {
        ("raw", "c"), ("examples", "c"), ("files", None)
    }  # fmt: skip


def test_a_code_version_or_config_change_rebuilds_that_asset_and_downstream(built) -> None:
    stamps, _ = built
    bumped = Graph({**GRAPH.assets, "examples": node("examples", ("raw",), code_version="2",
                                                     config={"max_tokens": 8})}, {})  # fmt: skip
    downstream = {("examples", "a"), ("examples", "b"), ("files", None)}
    assert stale(planned(bumped, {"a": "1", "b": "1"}, stamps)) == downstream
    configs = {"raw": None, "examples": {"max_tokens": 4}, "files": None}
    assert stale(planned(GRAPH, {"a": "1", "b": "1"}, stamps, configs)) == downstream


def test_an_output_rewritten_elsewhere_is_built_again(built) -> None:
    stamps, out = built
    out.write_bytes(b"y")
    assert not planned(GRAPH, {"a": "1", "b": "1"}, stamps).up_to_date


def test_write_durably_leaves_a_file_with_the_same_bytes_alone(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    write_durably(path, b"{}")
    before = path.stat()
    write_durably(path, b"{}")
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    write_durably(path, b"[]")
    assert path.read_bytes() == b"[]"


def test_partition_rewritten_with_the_same_rows_keeps_its_file(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": [1, 2]})
    path = lake_writer.write_partition(tmp_path, "g", "t", "p", frame)
    before = path.stat()
    lake_writer.write_partition(tmp_path, "g", "t", "p", frame)
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    lake_writer.write_partition(tmp_path, "g", "t", "p", pl.DataFrame({"a": [3]}))
    assert pl.read_parquet(path)["a"].to_list() == [3]
    assert not list(path.parent.glob(".*.tmp")), "no temp file is left behind"


def test_catalog_is_rewritten_only_when_its_views_change(tmp_path: Path) -> None:
    root, catalog = tmp_path / "lake", tmp_path / "c.duckdb"
    lake_writer.write_partition(root, "g", "t", "p", pl.DataFrame({"a": [1]}))
    refresh_catalog(root, catalog)
    before = catalog.stat().st_mtime_ns
    refresh_catalog(root, catalog)
    assert catalog.stat().st_mtime_ns == before
    lake_writer.write_partition(root, "g", "u", "p", pl.DataFrame({"b": [1]}))
    refresh_catalog(root, catalog)
    with duckdb.connect(str(catalog), read_only=True) as con:
        assert con.execute("select count(*) from u").fetchone() == (1,)


def test_the_graph_carries_the_definitions_code_versions_and_configs() -> None:
    from bigaction_assets.definitions import defs
    from bigaction_assets.defs.rerun_graph import graph_of
    from bigaction_assets.defs.sft.assets import SFT_VERSION
    from bigaction_assets.defs.thoughts.assets import THOUGHTS_VERSION

    graph = graph_of(defs(), ["build_dataset"])
    assert graph.assets["sft_examples"].code_version == SFT_VERSION
    assert graph.assets["thoughts"].code_version == THOUGHTS_VERSION  # with the templates' hash
    assert graph.assets["sft_examples"].config["max_tokens"] == 8192
    assert graph.assets["episodes"].op == graph.assets["events"].op  # one multi-asset
    assert graph.assets["sft_examples"].deps == ("dom_snapshots", "episodes", "events", "thoughts")
    assert "raw_records" in graph.jobs["build_dataset"]
    assert Graph.from_json(graph.to_json()) == graph


def test_the_cached_graph_is_used_only_under_the_same_source_hash(tmp_path: Path) -> None:
    from bigaction_assets.rerun.graph import cache_graph, cached_graph

    cache_graph(tmp_path, "one", GRAPH)
    assert cached_graph(tmp_path, "one") == GRAPH
    assert cached_graph(tmp_path, "two") is None


def test_planning_a_rerun_does_not_import_dagster() -> None:
    """What keeps a no-change rerun fast: Dagster is imported only when something runs."""
    code = (
        "import sys, bigaction_assets.demo, bigaction_assets.rerun.plan; "
        "assert 'dagster' not in sys.modules, 'dagster imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
