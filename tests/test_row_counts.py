"""A table's totals read each partition's footer once per file version on a machine."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from s3_server import s3_server

from bigaction_assets import lake, lake_rows, lake_writer
from bigaction_assets.lake_uri import parse_lake
from bigaction_assets.row_counts import RowCounts


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as name:
        yield name


@pytest.fixture(params=["disk", "store"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> lake.Lake:
    if request.param == "disk":
        return tmp_path / "lake"
    return parse_lake(f"s3://{request.getfixturevalue('bucket')}/{tmp_path.name}/lake")


def write(root: lake.Lake, partition: str, rows: int) -> None:
    lake_writer.write_partition(
        root, "raw", "things", partition, pl.DataFrame({"n": list(range(rows))})
    )


def test_a_new_process_reads_only_the_footers_new_to_the_machine(
    root: lake.Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remembered = RowCounts(tmp_path / "cache" / "footer-rows.sqlite")
    reads: list[object] = []
    footer_rows = lake_rows.footer_rows

    def counting(lake_: lake.Lake, file: Path | str) -> int:
        reads.append(file)
        return footer_rows(lake_, file)

    monkeypatch.setattr(lake_rows, "footer_rows", counting)

    def totals() -> tuple[int, int]:
        lake_rows._footer_memo.clear()  # what a fresh run process starts with
        reads.clear()
        return lake_rows.table_rows(root, "raw", "things", remembered=remembered)

    for name, rows in (("a", 3), ("b", 5), ("c", 1)):
        write(root, name, rows)
    assert totals() == (9, 3) and len(reads) == 3
    assert totals() == (9, 3) and reads == []
    write(root, "b", 7)  # rewritten
    write(root, "d", 2)  # added
    assert totals() == (13, 4) and len(reads) == 2
    assert len(remembered.known("")) == 4, "the old version of b is forgotten"
    gone = lake.partition_file(root, "raw", "things", "a")
    if isinstance(gone, Path):
        gone.unlink()
    else:
        root.delete(gone)  # type: ignore[union-attr]
    assert totals() == (10, 3) and reads == []
    assert len(remembered.known("")) == 3


def test_the_counts_outlive_the_process_that_read_them(tmp_path: Path) -> None:
    root, cache = tmp_path / "lake", tmp_path / "footer-rows.sqlite"
    write(root, "a", 4)
    assert lake_rows.table_rows(root, "raw", "things", remembered=RowCounts(cache)) == (4, 1)
    script = (
        "import sys; from pathlib import Path\n"
        "from bigaction_assets import lake_rows\n"
        "from bigaction_assets.row_counts import RowCounts\n"
        "def refuse(*_): raise AssertionError('read a footer it had counted')\n"
        "lake_rows.footer_rows = refuse\n"
        "print(lake_rows.table_rows(Path(sys.argv[1]), 'raw', 'things', "
        "RowCounts(Path(sys.argv[2]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(root), str(cache)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(4, 1)"


def test_a_damaged_cache_is_reported_and_read_around(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root, cache = tmp_path / "lake", tmp_path / "footer-rows.sqlite"
    write(root, "a", 4)
    cache.write_bytes(b"not a database, whatever a crash or a disk left" * 100)
    with caplog.at_level(logging.WARNING, "bigaction_assets.row_counts"):
        assert lake_rows.table_rows(root, "raw", "things", remembered=RowCounts(cache)) == (4, 1)
    assert "unreadable" in caplog.text and "not kept" in caplog.text
