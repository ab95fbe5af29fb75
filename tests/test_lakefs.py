"""The lake's URI layer against a real S3-protocol server (moto's, started on 127.0.0.1): the
same partition bytes as on a local disk, published whole, read back and queried by DuckDB."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from s3_server import s3_server

from bigaction_assets import (
    lake,
    lake_reader,
    lake_rows,
    lake_sql,
    lake_writer,
    lakefs,
    upload_spools,
)
from bigaction_assets.catalog import lake_tables, refresh_catalog
from bigaction_assets.lake_uri import parse_lake
from bigaction_assets.lakefs import ChangedWhileRead, LakeRoot

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def numbers(count: int, name: str = "x") -> pl.DataFrame:
    return pl.DataFrame({"id": list(range(count)), "name": [name] * count})


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as name:
        yield name


@pytest.fixture
def s3_lake(bucket: str, request: pytest.FixtureRequest) -> LakeRoot:
    """A fresh prefix of the bucket per test, read with the server's settings."""
    with pytest.MonkeyPatch.context():
        return parse_lake(f"s3://{bucket}/{request.node.name}/lake")


@pytest.fixture(params=["whole", "ranged"])
def read_way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Objects read in one GET (small ones, the default), or by ranged GETs (large ones)."""
    if request.param == "ranged":
        monkeypatch.setattr(lakefs, "WHOLE_READ_BYTES", 0)
    return str(request.param)


def all_keys(root: LakeRoot) -> list[str]:
    selector = pafs.FileSelector(root.base, recursive=True, allow_not_found=True)
    infos = root.filesystem.get_file_info(selector)
    return sorted(i.path for i in infos if i.type == pafs.FileType.File)


# --- parsing --------------------------------------------------------------------------------


def test_a_path_or_file_uri_is_a_local_root(tmp_path: Path) -> None:
    for given in (tmp_path / "lake", str(tmp_path / "lake"), f"file://{tmp_path}/lake"):
        root = parse_lake(given)
        assert root.is_local and isinstance(root.filesystem, pafs.LocalFileSystem)
        assert root.base == (tmp_path / "lake").as_posix()
        assert lake.local_root(root) == tmp_path / "lake"


def test_an_s3_uri_names_bucket_and_prefix(bucket: str) -> None:
    root = parse_lake(f"s3://{bucket}/some/prefix/")
    assert not root.is_local and isinstance(root.filesystem, pafs.S3FileSystem)
    assert root.base == f"{bucket}/some/prefix"
    assert root.key("raw", "t") == f"{bucket}/some/prefix/raw/t"
    assert lake.local_root(root) is None


@pytest.mark.parametrize(
    ("uri", "says"),
    [("gs://bucket/lake", "local path or at s3://"), ("s3:///lake", "names no bucket")],
)
def test_a_uri_the_lake_cannot_live_at_is_refused(uri: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_lake(uri)


# --- writing and reading --------------------------------------------------------------------


def test_a_partition_on_s3_holds_the_bytes_it_holds_on_disk(
    s3_lake: LakeRoot, tmp_path: Path
) -> None:
    frame = pl.DataFrame({"id": list(range(5000)), "name": [f"n{i}" for i in range(5000)]})
    local = lake_writer.write_partition(tmp_path, "raw", "things", "adp.one", frame)
    remote = lake_writer.write_partition(s3_lake, "raw", "things", "adp.one", frame)
    assert remote == f"s3://{s3_lake.base}/raw/things/adp.one.parquet"
    key = lake.partition_key(s3_lake, "raw", "things", "adp.one")
    assert s3_lake.read_bytes(key) == Path(local).read_bytes()
    assert all_keys(s3_lake) == [key], "no temporary object is left beside it"


def test_what_is_written_to_s3_reads_back_every_way(s3_lake: LakeRoot, read_way: str) -> None:
    with lake_writer.open_partition(s3_lake, "raw", "things", "p1", SCHEMA) as writer:
        writer.write(numbers(3, "a"))
        writer.write(numbers(2, "b").to_arrow())
    assert writer.rows == 5
    lake_writer.write_partition(s3_lake, "raw", "things", "p2", numbers(1, "c"))
    assert lake_reader.read_partition(s3_lake, "raw", "things", "p1", ["name"])[
        "name"
    ].to_list() == [*"aaabb"]
    batches = list(lake_reader.iter_partition_batches(s3_lake, "raw", "things", "p1", batch_rows=2))
    assert [b.num_rows for b in batches] == [2, 1, 2]  # a row group per write, in bounded batches
    rows = lake_reader.iter_table_rows(s3_lake, "raw", "things", ["name"])
    assert [r["name"] for r in rows] == [*"aaabbc"]  # every partition, in key order


def test_an_error_while_writing_leaves_the_old_partition_and_no_object_behind(
    s3_lake: LakeRoot,
) -> None:
    lake_writer.write_partition(s3_lake, "raw", "things", "p", numbers(2))
    key = lake.partition_key(s3_lake, "raw", "things", "p")
    before = s3_lake.read_bytes(key)
    with (
        pytest.raises(RuntimeError, match="midway"),
        lake_writer.open_partition(s3_lake, "raw", "things", "p", SCHEMA) as writer,
    ):
        writer.write(numbers(1000))
        raise RuntimeError("midway")
    assert s3_lake.read_bytes(key) == before
    assert all_keys(s3_lake) == [key]


class StoreWentAway(OSError):
    pass


class MoveFails(pafs.FileSystemHandler):
    """The store as it is, except that the connection is lost between upload and publish."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        self.inner = inner

    def move(self, src: str, dest: str) -> None:
        raise StoreWentAway("connection reset")

    def get_type_name(self) -> str:
        return "move-fails"

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.inner.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.inner.get_file_info(selector)

    def delete_file(self, path: str) -> None:
        self.inner.delete_file(path)

    def open_output_stream(self, path: str, metadata: dict[str, str]) -> pa.NativeFile:
        return self.inner.open_output_stream(path, metadata=metadata)

    def open_input_file(self, path: str) -> pa.NativeFile:
        return self.inner.open_input_file(path)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.inner.open_input_stream(path)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.inner.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        raise NotImplementedError

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        raise NotImplementedError

    def delete_root_dir_contents(self) -> None:
        raise NotImplementedError

    def copy_file(self, src: str, dest: str) -> None:
        raise NotImplementedError

    def open_append_stream(self, path: str, metadata: dict[str, str]) -> pa.NativeFile:
        raise NotImplementedError


def test_an_upload_cut_off_before_its_publish_leaves_nothing(
    s3_lake: LakeRoot, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    spool.write_bytes(b"PAR1" + b"x" * 100_000)
    key = s3_lake.key("raw", "things", "p.parquet")
    failing = LakeRoot(s3_lake.uri, pafs.PyFileSystem(MoveFails(s3_lake.filesystem)), s3_lake.base)
    with pytest.raises(StoreWentAway):
        failing.put_file(spool, key)
    assert all_keys(s3_lake) == [], "neither the final key nor the temporary one"


WRITE_TO_S3 = """
import os, signal, sys
import polars as pl
import pyarrow as pa
from bigaction_assets import lake_writer
from bigaction_assets.lake_uri import parse_lake
root = parse_lake(sys.argv[1])
writer = lake_writer.partition_writer(
    root, "raw", "things", sys.argv[2], pa.schema([("id", pa.int64())])
)
writer.write(pl.DataFrame({"id": [1, 2, 3]}))
if sys.argv[3] == "die":
    os.kill(os.getpid(), signal.SIGKILL)
writer.commit()
"""


def spools(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{upload_spools.SPOOL_PREFIX}*"))


def test_spools_of_killed_workers_are_swept_by_the_next_process_and_live_ones_kept(
    s3_lake: LakeRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def writer(partition: str, end: str) -> int:
        command = [sys.executable, "-c", WRITE_TO_S3, s3_lake.uri, partition, end]
        return subprocess.run(command, check=False).returncode

    assert writer("killed", "die") == -signal.SIGKILL
    [killed] = spools(tmp_path)
    assert killed.stat().st_size > 0 and all_keys(s3_lake) == []
    live = upload_spools.new_spool()  # this process: a writer still at work
    for path in (killed, live.path):
        os.utime(path, (time.time() - 120, time.time() - 120))
    assert writer("done", "commit") == 0
    assert spools(tmp_path) == [live.path], "the killed one's swept, the live one kept"
    assert all_keys(s3_lake) == [s3_lake.key("raw", "things", "done.parquet")]
    live.release()
    assert spools(tmp_path) == []


def test_a_rewrite_of_the_same_bytes_writes_nothing(s3_lake: LakeRoot) -> None:
    def rewrite(count: int) -> bool:
        writer = lake_writer.partition_writer(s3_lake, "raw", "things", "p", SCHEMA)
        writer.write(numbers(count))
        return writer.commit()

    assert rewrite(4) is True
    assert rewrite(4) is False
    assert rewrite(5) is True
    assert lake_reader.read_partition(s3_lake, "raw", "things", "p").height == 5
    assert len(all_keys(s3_lake)) == 1


def test_table_rows_on_s3_come_from_one_listing_and_the_footers(s3_lake: LakeRoot) -> None:
    lake_writer.write_partition(s3_lake, "raw", "things", "p1", numbers(3))
    lake_writer.write_partition(s3_lake, "raw", "things", "p2", numbers(4))
    assert lake_rows.table_rows(s3_lake, "raw", "things") == (7, 2)
    lake_writer.write_partition(s3_lake, "raw", "things", "p2", numbers(40))  # a new version
    assert lake_rows.table_rows(s3_lake, "raw", "things") == (43, 2)


def test_readers_see_the_old_partition_or_the_whole_new_one(
    s3_lake: LakeRoot, read_way: str
) -> None:
    sizes = [1000 * (n + 1) for n in range(6)]
    lake_writer.write_partition(s3_lake, "raw", "things", "p", numbers(sizes[0]))
    seen: list[int] = []
    failures: list[BaseException] = []
    writing = threading.Event()

    changed: list[ChangedWhileRead] = []

    def read_while_written() -> None:
        while writing.is_set():
            try:
                seen.append(lake_reader.read_partition(s3_lake, "raw", "things", "p").height)
                rows = lake_reader.iter_table_rows(s3_lake, "raw", "things", ["id"], partition="p")
                seen.append(sum(1 for _ in rows))
            except ChangedWhileRead as exc:  # a stream cannot restart: it says so, whole
                changed.append(exc)
            except BaseException as exc:  # half an object, or two mixed, would land here
                failures.append(exc)

    writing.set()
    reader = threading.Thread(target=read_while_written)
    reader.start()
    for size in sizes[1:]:
        lake_writer.write_partition(s3_lake, "raw", "things", "p", numbers(size))
    writing.clear()
    reader.join()
    assert failures == []
    assert seen and set(seen) <= set(sizes)


def test_a_folder_published_beside_the_lake_is_exactly_its_files(
    s3_lake: LakeRoot, tmp_path: Path
) -> None:
    folder = tmp_path / "out"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "train.jsonl").write_text("one\n")
    (folder / "a" / "test.jsonl").write_text("two\n")
    (folder / ".a.tmp").write_text("a writer's temporary file")
    outputs = s3_lake.beside("sft")
    assert outputs.uri == s3_lake.uri.rsplit("/", 1)[0] + "/sft"
    urls = outputs.publish_folder(folder)
    assert urls[str(folder / "a" / "train.jsonl")] == f"s3://{outputs.base}/a/train.jsonl"
    assert len(urls) == 2
    (folder / "a" / "test.jsonl").unlink()  # a split that is gone must not linger
    (folder / "a" / "train.jsonl").write_text("one, changed\n")
    outputs.publish_folder(folder)
    assert all_keys(outputs) == [f"{outputs.base}/a/train.jsonl"]
    assert outputs.read_bytes(f"{outputs.base}/a/train.jsonl") == b"one, changed\n"
    with pytest.raises(ValueError, match="no folder above it"):
        parse_lake(f"s3://{s3_lake.base.split('/')[0]}").beside("sft")


# --- the catalog ----------------------------------------------------------------------------


def test_duckdb_reads_the_same_objects_and_the_catalog_has_a_view_per_table(
    s3_lake: LakeRoot, tmp_path: Path
) -> None:
    lake_writer.write_partition(s3_lake, "raw", "alpha", "p1", numbers(3))
    lake_writer.write_partition(s3_lake, "raw", "alpha", "p2", numbers(4))
    lake_writer.write_partition(s3_lake, "standardized", "beta", "p1", numbers(1))
    assert lake_tables(s3_lake) == {
        "alpha": f"s3://{s3_lake.base}/raw/alpha",
        "beta": f"s3://{s3_lake.base}/standardized/beta",
    }
    with lake_sql.query_connection(s3_lake) as con:
        glob = f"s3://{s3_lake.base}/raw/alpha/*.parquet"
        assert con.execute(f"select count(*) from read_parquet('{glob}')").fetchone() == (7,)
    catalog = tmp_path / "catalog.duckdb"
    assert refresh_catalog(s3_lake, catalog) == ["alpha", "beta"]
    with duckdb.connect(str(catalog)) as con:
        lake_sql.register(con, s3_lake)  # a catalog over objects is opened with the store's reader
        assert con.execute("select count(*) from alpha").fetchone() == (7,)
        assert con.execute("select count(*) from beta").fetchone() == (1,)
    assert refresh_catalog(s3_lake, catalog) == ["alpha", "beta"]  # current: left alone


def test_duckdb_looks_up_an_object_once_a_read_and_anew_after_a_moment(
    s3_lake: LakeRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB asks s3fs about an object it opens ~7 times; each was a HEAD."""
    import s3fs

    from bigaction_assets import s3_lookups

    looks: list[str] = []
    parent_info = s3fs.S3FileSystem._info

    async def counted(self: s3fs.S3FileSystem, path: str, *args: Any, **kwargs: Any) -> Any:
        looks.append(path)
        return await parent_info(self, path, *args, **kwargs)

    monkeypatch.setattr(s3fs.S3FileSystem, "_info", counted)
    lake_writer.write_partition(s3_lake, "raw", "things", "p1", numbers(3))
    url = lake.partition_url(s3_lake, "raw", "things", "p1")
    with lake_sql.query_connection(s3_lake) as con:
        assert con.execute(f"select count(*) from read_parquet('{url}')").fetchone() == (3,)
        assert len(looks) == 1, looks
        lake_writer.write_partition(
            s3_lake, "raw", "things", "p1", numbers(5)
        )  # replaced meanwhile
        monkeypatch.setattr(s3_lookups, "LOOK_SECONDS", 0.0)
        assert con.execute(f"select count(*) from read_parquet('{url}')").fetchone() == (5,)
        assert len(looks) > 1, "a look older than LOOK_SECONDS is not reused"


def test_one_s3fs_client_a_process_and_fresh_listings_for_each_user(s3_lake: LakeRoot) -> None:
    """Building a client parsed botocore's models each time (~0.25 s of CPU a connection);
    sharing it must not share a listing taken before the lake changed."""
    assert s3_lake.s3 is not None
    folder = s3_lake.key("raw", "things")
    lake_writer.write_partition(s3_lake, "raw", "things", "p1", numbers(1))

    def parquet(listing: list[str]) -> list[str]:
        return [name for name in listing if name.endswith(".parquet")]

    first = s3_lake.s3.fsspec()
    assert len(parquet(first.ls(folder))) == 1
    lake_writer.write_partition(s3_lake, "raw", "things", "p2", numbers(1))
    second = s3_lake.s3.fsspec()
    assert second is first
    assert len(parquet(second.ls(folder))) == 2, "the listing the first user cached is not reused"


# --- objects over S3's 5 GiB copy limit --------------------------------------------------------


@pytest.fixture
def copies_in_parts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The copy limit lowered to 1 MiB (and s3fs's own switch to parts to 5 MiB, its smallest
    part), so a 12 MiB object stands for one over 5 GiB; the S3 calls s3fs makes, recorded."""
    import s3fs.core

    from bigaction_assets.s3_lookups import S3LookingOnce

    monkeypatch.setattr(lakefs, "COPY_OBJECT_BYTES", 1 << 20)
    monkeypatch.setattr(s3fs.core, "MANAGED_COPY_THRESHOLD", 5 << 20)
    calls: list[str] = []
    call_s3 = S3LookingOnce._call_s3

    async def recorded(self: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(method)
        return await call_s3(self, method, *args, **kwargs)

    monkeypatch.setattr(S3LookingOnce, "_call_s3", recorded)
    return calls


def _upload(root: LakeRoot, data: bytes, key: str, tmp_path: Path) -> None:
    local = tmp_path / "upload.bin"
    local.write_bytes(data)
    pafs.copy_files(str(local), key, destination_filesystem=root.filesystem)


def _object(root: LakeRoot, key: str) -> bytes:
    with root.filesystem.open_input_stream(key) as handle:
        return handle.read()


def test_a_file_over_the_copy_limit_is_published_by_a_copy_in_parts(
    s3_lake: LakeRoot, tmp_path: Path, copies_in_parts: list[str]
) -> None:
    data = os.urandom(12 << 20)
    spool = tmp_path / "sft.jsonl"
    spool.write_bytes(data)
    key = s3_lake.key("sft", "openai_train.jsonl")
    assert s3_lake.put_file(spool, key)
    assert _object(s3_lake, key) == data
    assert "upload_part_copy" in copies_in_parts and "copy_object" not in copies_in_parts
    assert all_keys(s3_lake) == [key]  # the temporary upload is gone


def test_a_partition_over_the_copy_limit_is_handed_over_and_shared_in_parts(
    s3_lake: LakeRoot, tmp_path: Path, copies_in_parts: list[str]
) -> None:
    from bigaction_assets.staging_area import ObjectStaging

    staging = ObjectStaging(s3_lake)
    data = os.urandom(12 << 20)
    pass_id = "0" * 32
    staged = staging.staged_key("raw", "raw_pages", "adp.big", pass_id)
    _upload(s3_lake, data, staged, tmp_path)
    staging.hand_over("raw", "raw_pages", "adp.big", pass_id)
    staging.copy_partition(("raw", "raw_pages"), ("standardized", "dom_snapshots"), "adp.big")
    for group, table in (("raw", "raw_pages"), ("standardized", "dom_snapshots")):
        assert _object(s3_lake, lake.partition_key(s3_lake, group, table, "adp.big")) == data
    assert copies_in_parts.count("upload_part_copy") == 2
    assert staged not in all_keys(s3_lake)
    with pytest.raises(FileNotFoundError):  # a staged object gone is still told apart
        staging.hand_over("raw", "raw_pages", "adp.big", pass_id)


def test_objects_within_the_copy_limit_are_copied_in_one_request(
    s3_lake: LakeRoot, tmp_path: Path, copies_in_parts: list[str]
) -> None:
    spool = tmp_path / "small.jsonl"
    spool.write_bytes(b"x" * 1000)
    key = s3_lake.key("sft", "small.jsonl")
    assert s3_lake.put_file(spool, key)
    s3_lake.copy_object(key, s3_lake.key("sft", "copy.jsonl"))
    assert _object(s3_lake, s3_lake.key("sft", "copy.jsonl")) == b"x" * 1000
    assert copies_in_parts == []  # pyarrow's single CopyObject, s3fs not involved
