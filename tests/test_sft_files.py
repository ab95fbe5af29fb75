"""The SFT training files: bounded memory at any size, first copy wins, formats left out."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from bigaction_assets.lake_writer import ROW_GROUP_ROWS, open_partition
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.sft import SFT_FORMATS, SftExampleSchema
from bigaction_assets.sft import files as sft_files
from bigaction_assets.sft.files import write_sft_files

CAP_MB = 128  # address space the writer may add to what its imports take


def examples(
    dataset: str,
    ids: list[str],
    pad: int = 0,
    formats: tuple[str, ...] = SFT_FORMATS,
    same_content_as: dict[str, str] | None = None,
) -> pa.Table:
    """`sft_examples` rows with renderings of about `pad` bytes; formats not named are null, as
    a partition built for some formats holds them; `same_content_as` gives an id the content
    digest of another, making it an exact copy."""
    copies = same_content_as or {}
    filler = "x" * pad
    n = len(ids)
    data: dict[str, list] = {
        "example_id": ids, "episode_id": [i.split("#")[0] for i in ids],
        "dataset": [dataset] * n, "source": [dataset] * n, "window": [0] * n, "windows": [1] * n,
        "split": ["test" if i.endswith("7#0") else "train" for i in ids], "tokens": [10] * n,
        "context_tokens": [100] * n, "turns": [2] * n, "thought_source": ["none"] * n,
        "content_sha": [hashlib.sha256(copies.get(i, i).encode()).hexdigest() for i in ids],
        "images": [[] for _ in ids], "image_tokens": [0] * n,
    }  # fmt: skip
    for name in SFT_FORMATS:
        data[name] = [
            json.dumps({"id": i, "format": name, "pad": filler}) if name in formats else None
            for i in ids
        ]
    return pa.Table.from_pydict(data, schema=arrow_schema(SftExampleSchema))


def write_examples(lake: Path, dataset: str, tables: list[pa.Table]) -> None:
    with open_partition(lake, "sft", "sft_examples", dataset, arrow_schema(SftExampleSchema)) as w:
        for table in tables:
            w.write(table)


def ids_in(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def stored(out: Path) -> dict[str, bytes]:
    """Every file under `out` (temporary ones too), by relative path."""
    files = sorted(p for p in out.rglob("*") if p.is_file())
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in files}


# Runs the writer in a fresh process whose address space may grow by CAP_MB past what its
# imports took. Arrow's default allocator (mimalloc) reserves address space in large segments it
# never touches, and glibc gives each thread a 64 MB arena: the system allocator with one arena
# makes address space follow the memory used, so the cap measures the writer, not allocators.
CHILD = """
import json, resource, sys
from pathlib import Path
from bigaction_assets.sft.files import write_sft_files
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
limit = int(status["VmSize"].split()[0]) * 1024 + int(sys.argv[3]) * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
print(json.dumps(write_sft_files(Path(sys.argv[1]), Path(sys.argv[2]))))
"""


def test_files_many_times_the_memory_cap_are_written_under_it(tmp_path):
    """~565 MB of renderings through a writer allowed 128 MB: a sort by example id over all
    examples (what the files were before) runs out of memory here; a stream does not."""
    lake, out = tmp_path / "lake", tmp_path / "sft"
    per_partition, pad = 8_000, 8_500
    for dataset in ("adp.a", "adp.b", "adp.c"):
        ids = [f"{dataset}/{n:05d}#0" for n in range(per_partition)]
        # the last partition repeats the first's first row group: copies for dedup to drop
        copies = {i: f"adp.a/{i[6:]}" for i in ids[:ROW_GROUP_ROWS]} if dataset == "adp.c" else {}
        chunks = [ids[k : k + ROW_GROUP_ROWS] for k in range(0, per_partition, ROW_GROUP_ROWS)]
        write_examples(
            lake, dataset, [examples(dataset, c, pad, same_content_as=copies) for c in chunks]
        )
    env = {**os.environ, "ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(lake), str(out), str(CAP_MB)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["duplicates_dropped"] == ROW_GROUP_ROWS
    assert sum(summary["examples_by_split"].values()) == 3 * per_partition - ROW_GROUP_ROWS
    written = sum(path.stat().st_size for path in out.rglob("*.jsonl"))
    assert written > 4 * CAP_MB * 2**20, "the data must be clearly larger than the cap"
    train = ids_in(out / "openhands" / "train.jsonl")
    assert train[0] == "adp.a/00000#0" and train[-1] == f"adp.c/{per_partition - 1:05d}#0"
    assert "adp.c/00000#0" not in train and "adp.c/02000#0" in train
    for name in SFT_FORMATS:
        assert ids_in(out / name / "test.jsonl") == ids_in(out / "openai" / "test.jsonl")


def test_the_first_copy_in_partition_order_wins_and_lines_keep_written_order(tmp_path):
    lake, out = tmp_path / "lake", tmp_path / "sft"
    # written order, not id order: the files follow the partition as it was written
    copy = {"b/1#0": "a/9#0"}
    write_examples(lake, "adp.b", [examples("adp.b", ["b/2#0", "b/1#0"], same_content_as=copy)])
    write_examples(lake, "adp.a", [examples("adp.a", ["a/9#0", "a/3#0"])])
    summary = write_sft_files(lake, out)
    assert summary["duplicates_dropped"] == 1
    assert ids_in(out / "openai" / "train.jsonl") == ["a/9#0", "a/3#0", "b/2#0"]
    first = stored(out)
    write_sft_files(lake, out)
    assert stored(out) == first


def test_formats_left_null_get_no_lines_and_no_stale_files(tmp_path):
    lake, out = tmp_path / "lake", tmp_path / "sft"
    write_examples(lake, "adp.a", [examples("adp.a", ["a/1#0"], formats=("openai",))])
    write_examples(lake, "adp.b", [examples("adp.b", ["b/1#0"], formats=("openai", "sharegpt"))])
    summary = write_sft_files(lake, out)
    assert summary["examples_by_split"] == {"train": 2}
    assert ids_in(out / "openai" / "train.jsonl") == ["a/1#0", "b/1#0"]
    assert ids_in(out / "sharegpt" / "train.jsonl") == ["b/1#0"]
    assert not (out / "openhands").exists()
    info = json.loads((out / "sharegpt" / "dataset_info.json").read_text())
    assert [entry["file_name"] for entry in info.values()] == ["train.jsonl"]

    # rebuilt for openai alone: the sharegpt files and their dataset_info.json must go
    write_examples(lake, "adp.b", [examples("adp.b", ["b/1#0"], formats=("openai",))])
    summary = write_sft_files(lake, out)
    assert sorted(Path(f).relative_to(out).as_posix() for f in summary["files"]) == [
        "openai/train.jsonl"
    ]
    assert list(stored(out)) == ["openai/train.jsonl"]


def test_a_failed_write_leaves_the_previous_files_whole(tmp_path, monkeypatch):
    lake, out = tmp_path / "lake", tmp_path / "sft"
    write_examples(lake, "adp.a", [examples("adp.a", ["a/1#0", "a/2#0"])])
    write_sft_files(lake, out)
    before = stored(out)
    write_examples(lake, "adp.b", [examples("adp.b", ["b/1#0"])])
    calls = []

    def fail_on_second(handle, texts) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        handle.write(b"partial\n")

    monkeypatch.setattr(sft_files, "_write_lines", fail_on_second)
    with pytest.raises(OSError, match="disk full"):
        write_sft_files(lake, out)
    assert stored(out) == before, "no half file, no temp file"


def test_a_writer_waits_for_the_one_before_it_and_then_sees_its_datasets(tmp_path):
    """Two runs may write the files at once: a second writer waits for the folder's lock, and
    what it lists then includes a dataset written while it waited."""
    import fcntl
    import threading

    lake, out = tmp_path / "lake", tmp_path / "sft"
    write_examples(lake, "adp.a", [examples("adp.a", ["a/1#0"])])
    out.mkdir()
    holder = os.open(out, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another run, writing
    summaries: list[dict] = []
    waiting = threading.Thread(target=lambda: summaries.append(write_sft_files(lake, out)))
    waiting.start()
    waiting.join(timeout=1.0)
    assert waiting.is_alive() and not list(out.glob("*/*.jsonl")), "it waits for the lock"

    write_examples(lake, "adp.b", [examples("adp.b", ["b/1#0"])])  # that run's own dataset
    os.close(holder)
    waiting.join(timeout=60)
    assert not waiting.is_alive()
    assert ids_in(out / "openai" / "train.jsonl") == ["a/1#0", "b/1#0"]
