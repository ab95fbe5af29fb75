"""Chunks and example tables cross processes as memory-mapped Arrow files, then are gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from bigaction_assets.episodes.chunks import EpisodeChunk
from bigaction_assets.sft import handoff
from bigaction_assets.sft.handoff import (
    put_chunk,
    put_table,
    scratch_folder,
    scratch_root,
    take_chunk,
    take_table,
)


def a_chunk() -> EpisodeChunk:
    episodes = pa.table({"episode_id": ["e1", "e2"], "task": ["book a flight", "find a café"]})
    events = pa.table({
        "episode_id": ["e1", "e1", "e2"],
        "idx": pa.array([0, 1, 0], pa.int32()),
        "html_sha": ["p1", None, "p2"],
        "image_sha": [None, "i1", None],
    })  # fmt: skip
    return EpisodeChunk(
        episodes=episodes,
        events=events,
        pages={"p1": "<html>one</html>", "p2": "<html>ünïcode</html>"},
        thoughts={("e1", 1): "click the search box", ("e2", 0): "scroll"},
        image_names={"i1": "i1.png"},
    )


def test_a_chunk_comes_back_whole_and_its_files_are_gone(tmp_path: Path):
    chunk = a_chunk()
    files = put_chunk(chunk, tmp_path / "7")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"7.{part}.arrow" for part in ("episodes", "events", "pages", "thoughts", "image_names")
    )
    back = take_chunk(files)
    assert back.episodes.equals(chunk.episodes) and back.events.equals(chunk.events)
    assert (back.pages, back.thoughts, back.image_names) == (
        chunk.pages,
        chunk.thoughts,
        chunk.image_names,
    )
    assert list(tmp_path.iterdir()) == []  # unlinked once mapped
    assert [e for _, events, _ in back.episode_rows() for e in events] == [
        e for _, events, _ in chunk.episode_rows() for e in events
    ]


def test_a_chunk_without_lookups_writes_only_its_two_tables(tmp_path: Path):
    chunk = EpisodeChunk(episodes=a_chunk().episodes, events=a_chunk().events)
    files = put_chunk(chunk, tmp_path / "0")
    assert files.parts == ("episodes", "events")
    back = take_chunk(files)
    assert (back.pages, back.thoughts, back.image_names) == ({}, {}, {})


def test_a_mapped_table_outlives_its_unlinked_file(tmp_path: Path):
    table = pa.table({"text": ["x" * 100_000, "y"], "n": [1, 2]})
    put_table(table, tmp_path / "t.arrow")
    allocated = pa.total_allocated_bytes()
    back = take_table(tmp_path / "t.arrow")
    assert pa.total_allocated_bytes() - allocated < 10_000  # mapped, not copied (100 KB)
    assert not (tmp_path / "t.arrow").exists()
    assert back.equals(table)


def test_the_scratch_folder_is_removed_however_the_run_ends(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(handoff, "scratch_root", lambda: tmp_path)
    with pytest.raises(RuntimeError), scratch_folder() as folder:
        put_chunk(a_chunk(), folder / "0")
        raise RuntimeError("a worker died")
    assert list(tmp_path.iterdir()) == []


def test_shared_memory_is_used_only_with_room(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(handoff, "SHARED_MEMORY", tmp_path)
    monkeypatch.setattr(handoff, "SHARED_MEMORY_FREE_BYTES", 1)
    assert scratch_root() == tmp_path
    monkeypatch.setattr(handoff, "SHARED_MEMORY_FREE_BYTES", 1 << 62)  # more than any disk
    assert scratch_root() != tmp_path
    monkeypatch.setattr(handoff, "SHARED_MEMORY", tmp_path / "absent")
    monkeypatch.setattr(handoff, "SHARED_MEMORY_FREE_BYTES", 1)
    assert scratch_root() != tmp_path / "absent"


def test_folders_of_killed_runs_are_removed_by_the_next_run(tmp_path: Path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    dead_pid = int(gone.stdout)
    abandoned = tmp_path / f"{handoff.FOLDER_PREFIX}{dead_pid}-a1"
    recent = tmp_path / f"{handoff.FOLDER_PREFIX}{dead_pid}-b2"  # written to a moment ago
    running = tmp_path / f"{handoff.FOLDER_PREFIX}{os.getpid()}-c3"
    other = tmp_path / "someone-elses"
    for folder in (abandoned, recent, running, other):
        folder.mkdir()
        (folder / "0.events.arrow").write_bytes(b"x")
    now = time.time()
    old = now - handoff.ABANDONED_AFTER_SECONDS - 1
    for folder in (abandoned, running, other):
        os.utime(folder, (old, old))
    assert handoff.remove_abandoned(tmp_path, now) == [abandoned]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (recent, running, other)
    )


def test_a_run_sweeps_before_it_makes_its_own_folder(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(handoff, "scratch_root", lambda: tmp_path)
    monkeypatch.setattr(handoff, "ABANDONED_AFTER_SECONDS", 0)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    (tmp_path / f"{handoff.FOLDER_PREFIX}{int(gone.stdout)}-x").mkdir()
    with scratch_folder() as folder:
        assert [p.name for p in tmp_path.iterdir()] == [folder.name]
        assert folder.name.startswith(f"{handoff.FOLDER_PREFIX}{os.getpid()}-")
        assert folder.stat().st_mode & 0o077 == 0  # the data's handoff: this user's alone
