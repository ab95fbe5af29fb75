"""Finding datasets in a landing folder: a file is a dataset, and so is a folder of shards."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from bigaction_assets.images.refs import IMAGES_FOLDER
from bigaction_assets.shard_keys import check_key_length, shard_name

_VALID_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]*$")
# The Hub's shard names, `<split>-00000-of-00003.parquet` (older uploads add `-<hex hash>`).
_SHARD = re.compile(r"^(?P<split>\w+)-\d{5}-of-\d{5}(?:-[0-9a-f]+)?\.[a-z]+$")


def shard_split(file: str) -> str | None:
    """The split a Hub shard's file name gives (`test-00000-of-00001.parquet`: `test`)."""
    found = _SHARD.match(file.rsplit("/", 1)[-1])
    return found.group("split") if found else None


def find_datasets(
    folder: Path, suffixes: tuple[str, ...], companions: tuple[str, ...] = ()
) -> dict[str, list[Path]]:
    """`<folder>/<name>.<suffix>` and `<folder>/<name>/*.<suffix>` are both dataset `name`.

    Files named `<name><companion>` beside them are not datasets: the adapter that names the
    companion suffix attaches them to dataset `name` itself.
    """
    datasets: dict[str, list[Path]] = {}
    if not folder.is_dir():
        return datasets
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name.endswith((*companions, IMAGES_FOLDER)):
            continue  # a companion file, or `<name>.images/`: the images of dataset `name`
        if entry.is_dir():
            files = sorted(
                p
                for p in entry.rglob("*")
                if p.is_file() and p.suffix in suffixes and not _hidden(p.relative_to(entry))
            )
            name = entry.name
        elif entry.suffix in suffixes:
            files, name = [entry], entry.name[: -len(entry.suffix)]
        else:
            continue
        if not files:
            continue
        if not _VALID_NAME.match(name):
            raise ValueError(
                f"landing dataset name {name!r} ({entry}) must use only letters, digits, - and _"
            )
        if name in datasets:
            raise ValueError(f"two landing entries are both dataset {name!r} in {folder}")
        datasets[name] = files
    return datasets


def _hidden(below: Path) -> bool:
    """A file under a hidden folder or hidden itself (the Hub client's `.cache/`, a download's
    temp file): not data, as the unread-files table does not count it either."""
    return any(part.startswith(".") for part in below.parts)


ShardFiles = Callable[[str, list[Path]], list[list[Path]] | None]


def split_shards(
    folder: Path, datasets: dict[str, list[Path]], shard_files: ShardFiles
) -> dict[str, list[Path]]:
    """Each folder dataset that `shard_files` cuts becomes one entry per shard,
    `<dataset>~<shard>` (`shard_keys.shard_name`) named after the shard's own file (first in
    its list, before any neighbour its partition also reads); a file dataset, or a folder
    whose files belong together (`shard_files` gives None), stays one entry under its name.

    Raises:
        ValueError: a shard's path cannot name a partition, or two files name one shard
            (`part-0.json` beside `part-0.jsonl`).
    """
    found: dict[str, list[Path]] = {}
    for name, files in datasets.items():
        root = folder / name
        shards = shard_files(name, files) if root.is_dir() else None
        if shards is None:
            found[name] = files
            continue
        for inputs in shards:
            path = inputs[0]
            shard = shard_name(name, PurePosixPath(path.relative_to(root).as_posix()))
            check_key_length(f"{folder.name}.{shard}")
            if shard in found:
                raise ValueError(
                    f"{found[shard][0]} and {path} are both landing shard {shard!r}: "
                    "keep one of them, or rename one"
                )
            found[shard] = inputs
    return found
