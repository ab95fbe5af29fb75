"""Chunks and their examples passed between processes as memory-mapped Arrow files.

Through a pipe a table is copied four times: pickled, written, read and unpickled, with the
writer and the reader both working for every byte. On synatra x20,000 that was 277 MB of
chunks out and 490 MB of examples back, ~2 CPU s of a 2-worker run's ~13, spread over all three
processes. Written once into an Arrow IPC file, a table is read by the other process through a
memory map, with no copy and no parsing; the file is unlinked as soon as it is mapped, so the
memory goes back when the last table using it is dropped.

The files live in a scratch folder in /dev/shm (memory) when it has room, else in the system's
temporary folder, whose pages a reader takes from the page cache long before they would be
written to disk. The folder is removed when the run ends, however it ends; a process killed
outright (kill -9, the OOM killer) cannot, so the next run removes folders whose process is gone
and that nothing has written to for a while: /dev/shm is memory until the machine restarts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from bigaction_assets.episodes.chunks import EpisodeChunk

SHARED_MEMORY = Path("/dev/shm")
# /dev/shm is used only with this much free: a container's may be 64 MB, and a full one fails
# the write (a few chunks in flight hold tens of MB each on web pages).
SHARED_MEMORY_FREE_BYTES = 1 << 30
FOLDER_PREFIX = "bigaction-sft-"
# A folder is abandoned when its process is gone and it has not changed for this long (another
# PID namespace sharing the folder could show a live process as gone; its run writes often).
ABANDONED_AFTER_SECONDS = 600


def scratch_root() -> Path:
    """/dev/shm when writable with room, else the system's temporary folder."""
    try:
        if os.access(SHARED_MEMORY, os.W_OK) and (
            shutil.disk_usage(SHARED_MEMORY).free >= SHARED_MEMORY_FREE_BYTES
        ):
            return SHARED_MEMORY
    except OSError:
        pass
    return Path(tempfile.gettempdir())


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A fresh folder for one run's handoff files (only this user may read them: they hold the
    data), removed with whatever is left in it. Abandoned folders of killed runs go first."""
    root = scratch_root()
    remove_abandoned(root)
    folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-", dir=root))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def remove_abandoned(root: Path, now: float | None = None) -> list[Path]:
    """Remove the scratch folders under `root` of processes that are gone, untouched for
    `ABANDONED_AFTER_SECONDS`; the folders removed."""
    now = time.time() if now is None else now
    removed = []
    for folder in root.glob(f"{FOLDER_PREFIX}*"):
        pid = folder.name.removeprefix(FOLDER_PREFIX).split("-", 1)[0]
        try:
            idle = now - folder.stat().st_mtime
        except OSError:  # removed meanwhile
            continue
        if pid.isdigit() and not _alive(int(pid)) and idle >= ABANDONED_AFTER_SECONDS:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def put_table(table: pa.Table, path: Path) -> None:
    """Write `table` to `path` as an Arrow IPC file (buffers as they are, uncompressed)."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def take_table(path: Path) -> pa.Table:
    """The table of an IPC file, memory-mapped (no copy), and the file unlinked: its memory
    lives as long as the table's buffers."""
    with pa.memory_map(str(path)) as mapped:
        table = pa.ipc.open_file(mapped).read_all()
    path.unlink()
    return table


@dataclass(frozen=True)
class ChunkFiles:
    """Where a chunk's tables were put: `<stem>.<part>.arrow` for each part it has."""

    stem: Path
    parts: tuple[str, ...]

    def path(self, part: str) -> Path:
        return self.stem.with_name(f"{self.stem.name}.{part}.arrow")


def put_chunk(chunk: EpisodeChunk, stem: Path) -> ChunkFiles:
    """The chunk's tables and lookups written beside `stem`, for `take_chunk` in any process."""
    tables = {"episodes": chunk.episodes, "events": chunk.events}
    if chunk.pages:
        tables["pages"] = pa.table(
            {"html_sha": list(chunk.pages), "page": list(chunk.pages.values())}
        )
    if chunk.thoughts:
        keys = list(chunk.thoughts)
        tables["thoughts"] = pa.table({
            "episode_id": [episode_id for episode_id, _ in keys],
            "idx": pa.array([idx for _, idx in keys], pa.int64()),
            "thought": list(chunk.thoughts.values()),
        })  # fmt: skip
    if chunk.image_names:
        tables["image_names"] = pa.table(
            {"image_sha": list(chunk.image_names), "name": list(chunk.image_names.values())}
        )
    files = ChunkFiles(stem, tuple(tables))
    for part, table in tables.items():
        put_table(table, files.path(part))
    return files


def take_chunk(files: ChunkFiles) -> EpisodeChunk:
    """The chunk `put_chunk` wrote, its files unlinked."""
    tables = {part: take_table(files.path(part)) for part in files.parts}
    pages = _pairs(tables.get("pages"), "html_sha", "page")
    names = _pairs(tables.get("image_names"), "image_sha", "name")
    thoughts: dict[tuple[str, int], str] = {}
    if "thoughts" in tables:
        table = tables["thoughts"]
        keys = zip(table["episode_id"].to_pylist(), table["idx"].to_pylist(), strict=True)
        thoughts = dict(zip(keys, table["thought"].to_pylist(), strict=True))
    return EpisodeChunk(
        episodes=tables["episodes"],
        events=tables["events"],
        pages=pages,
        thoughts=thoughts,
        image_names=names,
    )


def _pairs(table: pa.Table | None, key: str, value: str) -> dict[str, str]:
    if table is None:
        return {}
    return dict(zip(table[key].to_pylist(), table[value].to_pylist(), strict=True))
