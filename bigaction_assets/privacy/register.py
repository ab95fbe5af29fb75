"""The register of forgotten senders: their requests, the tombstones kept in the lake (which
episodes of theirs were erased), and where rows of theirs are still held."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

from bigaction_assets.lake import Lake, partition_exists
from bigaction_assets.lake_reader import read_arrow, table_files
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.privacy import forget
from bigaction_assets.privacy.erasure import Forgotten, count_in_file

GROUP, ASSET, PARTITION = "privacy", "forgotten_users", "all"


def tombstones(lake: Lake) -> dict[str, dict[str, Any]]:
    """The `forgotten_users` rows, by pseudonym (empty before its first materialization)."""
    if not partition_exists(lake, GROUP, ASSET, PARTITION):
        return {}
    return {row["pseudonym"]: row for row in read_arrow(lake, GROUP, ASSET, PARTITION).to_pylist()}


def raw_episodes(lake: Lake, pseudonyms: Iterable[str]) -> dict[str, set[str]]:
    """Episodes that `raw_telemetry` holds for each of the pseudonyms."""
    files = table_files(lake, "telemetry", "raw_telemetry")
    wanted = sorted(set(pseudonyms))
    if not wanted or not files:
        return {}
    if isinstance(lake, Path):
        dataset = ds.dataset(files, format="parquet")
    else:
        dataset = ds.dataset(files, format="parquet", filesystem=lake.filesystem)
    user, session = ds.field("user_pseudonym"), ds.field("session_pseudonym")
    table = dataset.to_table(
        columns=["user_pseudonym", "session_pseudonym", "episode_id"],
        filter=user.isin(wanted) | session.isin(wanted),
    )
    found: dict[str, set[str]] = {}
    for row in table.to_pylist():
        user_matched = row["user_pseudonym"] in wanted
        owner = row["user_pseudonym"] if user_matched else row["session_pseudonym"]
        found.setdefault(owner, set()).add(row["episode_id"])
    return found


def forgotten_pseudonyms(lake: Lake, landing: Path) -> frozenset[str]:
    """Everyone who asked to be forgotten: the requests, and the tombstones (which outlive a
    request file removed by hand)."""
    return frozenset(forget.requests(landing)) | frozenset(tombstones(lake))


def load_forgotten(lake: Lake, landing: Path) -> Forgotten:
    """Everyone who asked to be forgotten, and every episode of theirs we know of."""
    kept = tombstones(lake)
    pseudonyms = frozenset(forget.requests(landing)) | frozenset(kept)
    episodes = {e for row in kept.values() for e in row["episode_ids"]}
    for found in raw_episodes(lake, pseudonyms).values():
        episodes |= found
    return Forgotten(pseudonyms, frozenset(episodes))


def tombstone_rows(landing: Path, lake: Lake, erased: dict[str, set[str]]) -> list[dict[str, Any]]:
    """The new `forgotten_users` rows: earlier tombstones plus the episodes just erased."""
    requests = forget.requests(landing)
    kept = tombstones(lake)
    rows = []
    for pseudonym in sorted(set(requests) | set(kept)):
        previous = kept.get(pseudonym)
        request = requests.get(pseudonym)
        episodes = set(previous["episode_ids"]) if previous else set()
        episodes |= erased.get(pseudonym, set())
        rows.append({
            "pseudonym": pseudonym,
            "requested_at": previous["requested_at"] if previous else request.requested_at,
            "via": previous["via"] if previous else request.via,
            "episode_ids": sorted(episodes),
        })  # fmt: skip
    return rows


def table_offenders(
    lake: Lake,
    group: str,
    asset: str,
    forgotten: Forgotten,
    partitions: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """Partitions of a lake table (all, or those of `partitions`) that still hold rows of
    forgotten senders, with counts."""
    paths = table_files(lake, group, asset)
    if partitions is not None:
        wanted = set(partitions)
        paths = [path for path in paths if _stem(path) in wanted]
    return files_offenders(paths, forgotten, lake)


def _stem(path: Path | str) -> str:
    return path.stem if isinstance(path, Path) else path.rsplit("/", 1)[-1].removesuffix(".parquet")


def files_offenders(
    paths: Iterable[Path | str], forgotten: Forgotten, lake: Lake | None = None
) -> list[dict[str, Any]]:
    offenders = []
    for path in paths:
        rows = count_in_file(path, forgotten, lake)
        if rows:
            name = path.name if isinstance(path, Path) else path.rsplit("/", 1)[-1]
            offenders.append({"file": name, "rows": rows})
    return offenders


def release_offenders(release: Path | LakeRoot, forgotten: Forgotten) -> list[dict[str, Any]]:
    """Shards of a release (a local folder, or published on a store) that hold rows of
    forgotten senders."""
    if isinstance(release, LakeRoot):
        keys = [k for k in release.list_files("data") if k.endswith(".parquet")]
        return files_offenders(keys, forgotten, release)
    shards = sorted((release / "data").rglob("*.parquet")) if release.exists() else []
    return files_offenders(shards, forgotten)


def forgotten_rows(lake: Lake, landing: Path) -> dict[str, int]:
    """Rows of forgotten senders in the tables a release is built from, by table (empty when
    there are none): what a release must refuse to publish."""
    from bigaction_assets.release.provenance import CROSS_DATASET_TABLES, RELEASED_TABLES

    forgotten = load_forgotten(lake, landing)
    if not forgotten:
        return {}
    held = {}
    for group, asset in (*RELEASED_TABLES, *CROSS_DATASET_TABLES):
        rows = sum(o["rows"] for o in table_offenders(lake, group, asset, forgotten))
        if rows:
            held[asset] = rows
    return held
