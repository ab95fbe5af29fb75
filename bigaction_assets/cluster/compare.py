"""Whether two data folders hold the same outputs: file by file, and the catalog by its answers.

A cluster folder whose lake is in its S3 server is read back from the store: the lake's objects
and those published beside it (`s3://bigaction/sft/`, `.../release/`, ...). The DuckDB catalog
file itself may differ (it records when and in which order views were made), so it is compared
by what every view returns, its `s3://` views read through the same store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow.fs as pafs

from bigaction_assets.lake_sql import register
from bigaction_assets.lakefs import LakeRoot

# Everything the factory publishes; the rest of a data folder is state (stamps, the Dagster
# instance, caches, the annotation app's store) that depends on how it was run.
OUTPUTS = ("lake", "sft", "release", "benchmark", "reward")
CATALOG = "bigaction.duckdb"


@dataclass(frozen=True)
class Outputs:
    """Where a data folder's outputs are: its own folders, or a store's objects (the lake at
    `store`, the other outputs beside it); and its catalog."""

    data_dir: Path
    store: LakeRoot | None = None

    @property
    def catalog(self) -> Path:
        return self.data_dir / CATALOG

    def where(self) -> str:
        """The folder, or the store URI above the lake, the outputs are read from."""
        return str(self.data_dir) if self.store is None else self.store.uri.rsplit("/", 1)[0]


def _hidden(name: str) -> bool:
    # a writer's temporary file or key (`.<name>.<id>.tmp`), a lock: never an output
    return name.startswith(".")


def _local_files(data_dir: Path) -> Iterator[tuple[str, bytes]]:
    for folder in OUTPUTS:
        for path in sorted((data_dir / folder).rglob("*")):
            if path.is_file() and not _hidden(path.name):
                yield str(path.relative_to(data_dir)), path.read_bytes()


def output_roots(store: LakeRoot) -> dict[str, LakeRoot]:
    """Each output folder's root in the store: the lake, and the folders published beside it."""
    return {folder: store if folder == "lake" else store.beside(folder) for folder in OUTPUTS}


def store_objects(root: LakeRoot) -> list[pafs.FileInfo]:
    """Every object under `root` that is an output (not a hidden temporary key), by key."""
    selector = pafs.FileSelector(root.base, recursive=True, allow_not_found=True)
    found = root.filesystem.get_file_info(selector)
    return sorted(
        (i for i in found if i.type == pafs.FileType.File and not _hidden(i.base_name)),
        key=lambda info: info.path,
    )


def _store_files(store: LakeRoot) -> Iterator[tuple[str, bytes]]:
    for folder, root in output_roots(store).items():
        for info in store_objects(root):
            name = f"{folder}/{info.path.removeprefix(root.base + '/')}"
            yield name, root.read_bytes(info.path)


def file_hashes(outputs: Outputs | Path) -> dict[str, str]:
    """sha256 of every output file or object, by its path under the data folder."""
    if isinstance(outputs, Path):
        outputs = Outputs(outputs)
    files = _local_files(outputs.data_dir) if outputs.store is None else _store_files(outputs.store)
    return {name: hashlib.sha256(data).hexdigest() for name, data in files}


def catalog_answers(catalog: Path, store: LakeRoot | None = None) -> dict[str, str]:
    """A hash of each view's rows, in a canonical order, by view name."""
    answers = {}
    with duckdb.connect(str(catalog), read_only=True) as con:
        if store is not None:
            register(con, store)  # the views read `s3://` objects
        views = [
            row[0]
            for row in con.execute(
                "select view_name from duckdb_views() where not internal order by 1"
            ).fetchall()
        ]
        for view in views:
            rows = sorted(repr(row) for row in con.execute(f'select * from "{view}"').fetchall())
            answers[view] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    return answers


def _diff(kind: str, expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    lines = [
        f"{kind} only in the expected folder: {name}"
        for name in sorted(expected.keys() - actual.keys())
    ]
    lines += [
        f"{kind} only in the actual folder: {name}"
        for name in sorted(actual.keys() - expected.keys())
    ]
    lines += [
        f"{kind} differs: {name}"
        for name in sorted(expected.keys() & actual.keys())
        if expected[name] != actual[name]
    ]
    return lines


def differences(expected: Outputs | Path, actual: Outputs | Path) -> list[str]:
    """Every output file or catalog view that is not the same in both; none: equal."""
    expected = expected if isinstance(expected, Outputs) else Outputs(expected)
    actual = actual if isinstance(actual, Outputs) else Outputs(actual)
    lines = _diff("file", file_hashes(expected), file_hashes(actual))
    return lines + _diff(
        "view",
        catalog_answers(expected.catalog, expected.store),
        catalog_answers(actual.catalog, actual.store),
    )
