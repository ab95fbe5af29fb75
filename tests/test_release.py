"""The release: local folder loadable with `datasets`, gates, redistribution, and Hub pushes."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest
import yaml
from PIL import Image

from bigaction_assets.definitions import defs
from bigaction_assets.defs.hub_resource import HubResource
from bigaction_assets.defs.release.assets import release_asset
from bigaction_assets.defs.release.push import revision_asset
from bigaction_assets.release.build import MANIFEST
from bigaction_assets.sft import windows
from tests.conftest import BUNDLED_LANDING, DagsterLake
from tests.hub_server import FakeHub

PARTITIONS = "datasets"
KEY = dg.AssetKey("hub_release")
REVISION = dg.AssetKey("hub_revision")
BUILD = dg.AssetSelection.groups("raw", "standardized") | dg.AssetSelection.assets("sft_examples")
TEST_SPLIT = "mind2web.test_task_demo"
TOKEN = "hf_SECRET_release_token_0123456789"
SHARD_RE = re.compile(r"(?P<split>\w+)-(?P<i>\d{5})-of-(?P<n>\d{5})\.parquet")


def _land_test_split(target: DagsterLake) -> None:
    """A Mind2Web `test_task` file: the demo tasks under new ids (a test set we may not publish)."""
    tasks = json.loads((BUNDLED_LANDING / "mind2web" / "train_demo.json").read_text())
    for task in tasks:
        task["annotation_id"] = "test-" + task["annotation_id"]
    target.write_landing("mind2web/test_task_demo.json", json.dumps(tasks))


def _build(pipeline: list[Any], target: DagsterLake, instance: dg.DagsterInstance, key: str):
    if not instance.has_dynamic_partition(PARTITIONS, key):
        instance.add_dynamic_partitions(PARTITIONS, [key])
    return dg.materialize(
        pipeline, partition_key=key, instance=instance, selection=BUILD,
        resources={"lake": target.resource}, raise_on_error=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def pipeline() -> list[Any]:
    code_location = defs()
    return [*code_location.assets, *(code_location.asset_checks or [])]


@pytest.fixture(scope="module")
def built(pipeline, tmp_path_factory) -> Iterator[tuple[DagsterLake, dg.DagsterInstance]]:
    """ADP synatra, Mind2Web train and a Mind2Web test split, built once with their checks."""
    root = tmp_path_factory.mktemp("release")
    (root / "landing").mkdir()
    target = DagsterLake(landing=root / "landing", data=root / "data")
    target.add_bundled("adp", "synatra")
    target.add_bundled("mind2web", "train_demo", images=True)
    _land_test_split(target)
    with dg.DagsterInstance.ephemeral() as instance:
        for key in ("adp.synatra", "mind2web.train_demo", TEST_SPLIT):
            assert _build(pipeline, target, instance, key).success, key
        yield target, instance


def release(pipeline, target, instance, hub: HubResource | None = None, **config: Any):
    """Materializes `hub_release` alone (the local folder), or with `hub` the way
    `publish_release` does: the folder, then `hub_revision` pushing it through `hub`."""
    ours = (KEY, REVISION)
    assets = [
        a for a in pipeline if not (isinstance(a, dg.AssetsDefinition) and set(ours) & a.keys)
    ]
    bound = hub or HubResource()
    return dg.materialize(
        [*assets, release_asset(bound), revision_asset(bound)],
        instance=instance,
        selection=dg.AssetSelection.assets(*(ours if hub else [KEY])),
        resources={"lake": target.resource},
        run_config={"ops": {"hub_release": {"config": config}}},
        raise_on_error=False,
    )


def metadata(result: dg.ExecuteInProcessResult, asset: dg.AssetKey = KEY) -> dict[str, Any]:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == asset]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def failure(result: dg.ExecuteInProcessResult) -> str:
    [event] = [e for e in result.all_events if e.is_step_failure]
    return event.step_failure_data.error.message


def front_matter(folder: Path) -> dict[str, Any]:
    return yaml.safe_load((folder / "README.md").read_text().split("---")[1])


def lake_counts(target: DagsterLake, datasets: tuple[str, ...]) -> dict[str, dict[str, int]]:
    files = lambda group, asset: [  # noqa: E731
        str(target.table(group, asset, d))
        for d in datasets
        if target.table(group, asset, d).exists()
    ]
    with duckdb.connect() as con:
        count = lambda sql, g, a: con.execute(sql.format(f"read_parquet({files(g, a)})")).fetchall()  # noqa: E731
        sft = dict(count("select split, count(*) from {} group by 1", "sft", "sft_examples"))
        [[episodes]] = count("select count(*) from {}", "standardized", "episodes")
        [[events]] = count("select count(*) from {}", "standardized", "events")
        [[images]] = count("select count(*) from {}", "standardized", "images")
    counts = {"episodes": {"train": episodes}, "events": {"train": events}}
    counts |= {"images": {"train": images}} if images else {}
    return counts | {f"sft_{f}": sft for f in ("openai", "sharegpt", "openhands")}


def assert_same_images(loaded: list[Any], paths: list[str], stored: dict[str, bytes]) -> None:
    """Images `datasets` decoded are the lake's images the example names, pixel for pixel."""
    assert len(loaded) == len(paths) > 0
    for image, path in zip(loaded, paths, strict=True):
        with Image.open(io.BytesIO(stored[Path(path).stem])) as lake_image:
            assert image.size == lake_image.size
            assert image.tobytes() == lake_image.tobytes()


def assert_same_messages(
    loaded: list[dict[str, Any]], lake: list[dict[str, Any]], stored: dict[str, bytes]
) -> None:
    """Each loaded message holds the lake message's fields, and null in the fields it lacks
    (one Arrow struct holds every kind of message)."""
    assert len(loaded) == len(lake)
    for got, want in zip(loaded, lake, strict=True):
        if isinstance(want["content"], list):  # parts: released as their text and images
            parts = want["content"]
            want = {
                **want, "content": "\n\n".join(p["text"] for p in parts if p["type"] == "text")
            }  # fmt: skip
            paths = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
            assert_same_images(got["images"], paths, stored)
            got = {key: value for key, value in got.items() if key != "images"}
        assert {key: got[key] for key in want} == want
        assert all(got[key] is None for key in set(got) - set(want))


def assert_native_columns_hold_the_lake_examples(target, sft_rows) -> None:
    """Each SFT config's columns, as `datasets` loads them, are the lake's example exactly."""
    import pyarrow.parquet as pq

    lake: dict[str, dict[str, Any]] = {}
    stored: dict[str, bytes] = {}
    for dataset in ("adp.synatra", "mind2web.train_demo"):
        for row in pq.read_table(target.table("sft", "sft_examples", dataset)).to_pylist():
            lake[row["example_id"]] = row
        if target.table("standardized", "images", dataset).exists():
            images = pq.read_table(target.table("standardized", "images", dataset))
            shas, data = images["image_sha"].to_pylist(), images["bytes"].to_pylist()
            stored |= dict(zip(shas, data, strict=True))
    for config, rows in sft_rows.items():
        fmt = config.removeprefix("sft_")
        assert len(rows) == len(lake)
        for row in rows:
            example = json.loads(lake[row["example_id"]][fmt])
            if fmt == "openai":
                assert_same_messages(row["messages"], example["messages"], stored)
                assert json.loads(row["tools"]) == example["tools"]
                calls = [c for m in row["messages"] for c in m["tool_calls"] or []]
                assert calls and all(isinstance(json.loads(c["function"]["arguments"]), dict)
                                     for c in calls)  # fmt: skip
            else:
                assert row["conversations"] == example["conversations"]
                assert row["system"] == example["system"]
                if fmt == "sharegpt":
                    assert row["tools"] == example["tools"]
                    if example.get("images"):
                        assert_same_images(row["images"], example["images"], stored)
                    else:
                        assert not row["images"]


def test_local_release_loads_with_datasets(pipeline, built, tmp_path):
    from datasets import load_dataset

    target, instance = built
    result = release(
        pipeline, target, instance, exclude_datasets=[TEST_SPLIT], max_shard_bytes=5_000
    )
    assert result.success
    folder = target.data / "release"
    expected = lake_counts(target, ("adp.synatra", "mind2web.train_demo"))
    meta = front_matter(folder)
    assert meta["license"] and meta["task_categories"] and meta["size_categories"]
    loaded: dict[str, dict[str, int]] = {}
    sft_rows: dict[str, list[dict[str, Any]]] = {}
    for config in meta["configs"]:
        files = {d["split"]: str(folder / d["path"]) for d in config["data_files"]}
        ds = load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "cache"))
        loaded[config["config_name"]] = {split: ds[split].num_rows for split in ds}
        if config["config_name"].startswith("sft_"):
            sft_rows[config["config_name"]] = [row for split in ds for row in ds[split]]
    assert loaded == expected
    assert_native_columns_hold_the_lake_examples(target, sft_rows)
    assert {c["config_name"] for c in meta["configs"]} == {
        "episodes", "events", "images", "sft_openai", "sft_sharegpt", "sft_openhands"
    }  # fmt: skip
    shards = list(folder.glob("data/*/*/*.parquet"))
    assert shards and all(SHARD_RE.fullmatch(p.name) for p in shards)
    assert {p.parent.name for p in shards} == {"adp.synatra", "mind2web.train_demo"}
    assert len(list(folder.glob("data/events/adp.synatra/train-*.parquet"))) > 1, (
        "a small cap gives shards"
    )
    card = (folder / "README.md").read_text()
    assert "token_lengths.svg" in card and (folder / "token_lengths.svg").read_text().startswith(
        "<svg"
    )
    assert TEST_SPLIT in card.split("Excluded from this release")[1]
    # the card's LLaMA-Factory entry reads the released sharegpt config from the Hub
    [entry_text] = re.findall(r"```json\n(\{\n  \"bigaction_sft\".*?)\n```", card, re.S)
    entry = json.loads(entry_text)["bigaction_sft"]
    assert entry["subset"] == "sft_sharegpt" and entry["hf_hub_url"] == "<repo>"
    assert entry["formatting"] == "sharegpt" and entry["columns"] == {
        "messages": "conversations", "system": "system", "tools": "tools"
    }  # fmt: skip
    assert entry["tags"]["role_tag"] == "from" and entry["tags"]["function_tag"] == "function_call"
    synatra_sha = __import__("hashlib").sha256((target.landing / "adp/synatra.json").read_bytes())
    assert synatra_sha.hexdigest() in card
    values = metadata(result)
    assert values["rows_by_config"] == {
        c: {s: n for s, n in splits.items()} for c, splits in json.loads(
            (folder / MANIFEST).read_text())["rows"].items()
    }  # fmt: skip
    assert "hub_commit" not in values, "the folder asset never pushes"
    assert values["excluded_datasets"] == [TEST_SPLIT]
    assert not list(target.data.glob(".release*")), "no temporary folder is left behind"


def lake_images(target: DagsterLake, dataset: str) -> dict[str, dict[str, Any]]:
    import pyarrow.parquet as pq

    rows = pq.read_table(target.table("standardized", "images", dataset)).to_pylist()
    return {row["image_sha"]: row for row in rows}


def test_released_images_load_as_images_with_the_lakes_bytes(pipeline, built, tmp_path):
    """`images` holds HF `Image` features: `load_dataset` on the folder (its card's configs and
    `dataset_info`) decodes them, and undecoded they are the lake's bytes, each shard under the
    cap; the card counts them."""
    import pyarrow.parquet as pq
    from datasets import Image, load_dataset

    target, instance = built
    cap = 40_000  # two or three 15-20 KB screenshots a shard
    result = release(pipeline, target, instance, exclude_datasets=[TEST_SPLIT], max_shard_bytes=cap)
    assert result.success
    folder = target.data / "release"
    stored = lake_images(target, "mind2web.train_demo")
    assert len(stored) > 2
    ds = load_dataset(str(folder), "images", split="train", cache_dir=str(tmp_path / "cache"))
    assert isinstance(ds.features["image"], Image) and ds.num_rows == len(stored)
    for row in ds:
        want = stored[row["image_sha"]]
        assert row["image"].size == (want["width"], want["height"])  # a decoded PIL image
        assert row["image"].format.lower() == want["format"] == row["format"]
    raw = ds.cast_column("image", Image(decode=False))
    assert {row["image_sha"]: row["image"]["bytes"] for row in raw} == {
        sha: row["bytes"] for sha, row in stored.items()
    }
    shards = sorted(folder.glob("data/images/mind2web.train_demo/train-*.parquet"))
    assert len(shards) > 1 and all(SHARD_RE.fullmatch(p.name) for p in shards)
    for shard in shards:
        table = pq.read_table(shard)
        assert table.nbytes <= cap or table.num_rows == 1
        assert b'"_type": "Image"' in table.schema.metadata[b"huggingface"]
    meta = front_matter(folder)
    [info] = meta["dataset_info"]
    assert info["config_name"] == "images"
    assert {"name": "image", "dtype": "image"} in info["features"]
    card = (folder / "README.md").read_text()
    statistics = card.split("### `images`")[1].split("###")[0]
    assert f"| **total** | {len(stored)} |" in statistics
    formats = sorted({row["format"] for row in stored.values()})
    assert f"{len(stored)} images ({len(stored)} {formats[0]})" in card
    assert metadata(result)["rows_by_config"]["images"] == {"train": len(stored)}


def test_a_partition_added_writes_its_own_shards_and_keeps_every_other(pipeline, built):
    target, instance = built
    folder = target.data / "release"
    before = release(
        pipeline, target, instance, exclude_datasets=[TEST_SPLIT, "mind2web.train_demo"]
    )
    assert before.success
    kept = {p: p.stat().st_ino for p in folder.glob("data/*/*/*.parquet")}
    assert kept and {p.parent.name for p in kept} == {"adp.synatra"}
    after = release(pipeline, target, instance, exclude_datasets=[TEST_SPLIT])
    assert after.success
    shards = {p: p.stat().st_ino for p in folder.glob("data/*/*/*.parquet")}
    # the same files, not rewritten (hard links keep their inode), and only the new partition's
    assert {p: shards[p] for p in kept} == kept
    added = {p.parent.name for p in set(shards) - set(kept)}
    assert added == {"mind2web.train_demo"}
    rows = json.loads((folder / MANIFEST).read_text())["rows"]
    rows = {config: {s: n for s, n in splits.items() if n} for config, splits in rows.items()}
    assert rows == lake_counts(target, ("adp.synatra", "mind2web.train_demo"))


def test_mind2web_test_data_is_refused(pipeline, built):
    target, instance = built
    result = release(pipeline, target, instance)
    assert not result.success
    message = failure(result)
    assert "forbids redistribution" in message and TEST_SPLIT in message
    assert "mind2web.train_demo" not in message


def test_push_commits_once_and_never_leaks_the_token(pipeline, built, monkeypatch, capfd):
    target, instance = built
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    server = FakeHub(TOKEN)
    try:
        hub = HubResource(repo_id="bigaction/web-agents", token=dg.EnvVar("HF_TOKEN"),
                          endpoint=server.url)  # fmt: skip
        first = release(pipeline, target, instance, hub, exclude_datasets=[TEST_SPLIT])
        assert first.success, failure(first)
        repo = server.repos["bigaction/web-agents"]
        assert repo.private and len(repo.commits) == 2  # the repo's initial commit, the release
        folder = target.data / "release"
        local = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file()
        }
        assert repo.files("main") == {
            **local,
            ".gitattributes": repo.commits[0]["files"][".gitattributes"],
        }
        card = repo.files("main")["README.md"].decode()
        assert 'load_dataset("bigaction/web-agents", "sft_openai"' in card
        assert '"hf_hub_url": "bigaction/web-agents"' in card
        values = metadata(first, REVISION)
        assert values["hub_commit"] == repo.branches["main"]
        assert repo.tags == {values["hub_tag"]: repo.branches["main"]}

        second = release(pipeline, target, instance, hub, exclude_datasets=[TEST_SPLIT])
        assert second.success and metadata(second, REVISION)["hub_commit"] == "unchanged"
        assert len(repo.commits) == 2, "the same release makes no commit"
        commits = [r for r in server.requests if r.method == "POST" and "/commit/" in r.path]
        assert len(commits) == 1

        # a smaller release: one commit, and the shards it no longer has are deleted
        third = release(pipeline, target, instance, hub,
                        exclude_datasets=[TEST_SPLIT, "mind2web.train_demo"])  # fmt: skip
        assert third.success and len(repo.commits) == 3
        local = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        assert set(repo.files("main")) == local | {".gitattributes"}
        assert all(r.authorized for r in server.requests)
        assert not server.card_errors

        logs = [repr(e) for run in (first, second, third) for e in instance.all_logs(run.run_id)]
        captured = capfd.readouterr()
        assert TOKEN not in "".join(logs) + captured.out + captured.err
        assert all(TOKEN.encode() not in content for content in repo.files("main").values())
        assert all(TOKEN not in repr(metadata(r, a)) for r in (first, second, third)
                   for a in (KEY, REVISION))  # fmt: skip
        assert all(TOKEN.encode() not in p.read_bytes() for p in folder.rglob("*") if p.is_file())
    finally:
        server.stop()


def test_the_folder_alone_never_pushes_and_a_push_checks_the_folder_first(
    pipeline, built, monkeypatch
) -> None:
    """`hub_release` (what runs by itself under `make ui`) leaves the Hub alone even when one
    is configured; `hub_revision` launched on its own refuses a folder that is not as built."""
    target, instance = built
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    server = FakeHub(TOKEN)
    try:
        hub = HubResource(repo_id="bigaction/web-agents", token=dg.EnvVar("HF_TOKEN"),
                          endpoint=server.url)  # fmt: skip
        assets = [a for a in pipeline if not (isinstance(a, dg.AssetsDefinition)
                                              and {KEY, REVISION} & a.keys)]  # fmt: skip
        folder_only = dg.materialize(
            [*assets, release_asset(hub), revision_asset(hub)], instance=instance,
            selection=dg.AssetSelection.assets(KEY), resources={"lake": target.resource},
            run_config={"ops": {"hub_release": {"config": {"exclude_datasets": [TEST_SPLIT]}}}},
        )  # fmt: skip
        assert folder_only.success
        assert (target.data / "release" / "README.md").is_file()
        assert not server.repos and not [r for r in server.requests if r.method == "POST"]

        shard = sorted((target.data / "release" / "data").rglob("*.parquet"))[0]
        shard.write_bytes(shard.read_bytes() + b"tampered")
        pushed = dg.materialize(
            [*assets, release_asset(hub), revision_asset(hub)], instance=instance,
            selection=dg.AssetSelection.assets(REVISION), resources={"lake": target.resource},
            raise_on_error=False,
        )  # fmt: skip
        assert not pushed.success
        message = failure(pushed)
        assert "push blocked" in message and shard.name in message
        assert not server.repos, "nothing reached the Hub"
    finally:
        server.stop()


def test_release_refuses_when_a_blocking_check_failed(pipeline, dagster_lake, ephemeral_instance):
    dagster_lake.add_bundled("adp", "synatra")
    never = release(pipeline, dagster_lake, ephemeral_instance)
    assert not never.success and "never evaluated" in failure(never)

    assert _build(pipeline, dagster_lake, ephemeral_instance, "adp.synatra").success
    assert release(pipeline, dagster_lake, ephemeral_instance).success

    # an undercounting windowing makes the partition's blocking length check fail
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(windows.LengthCounter, "total", lambda counter, tallies: 1)
        assert not _build(pipeline, dagster_lake, ephemeral_instance, "adp.synatra").success
    # a later, passing evaluation of another dataset does not hide it
    dagster_lake.add_bundled("adp", "swe-smith")
    assert _build(pipeline, dagster_lake, ephemeral_instance, "adp.swe-smith").success
    blocked = release(pipeline, dagster_lake, ephemeral_instance)
    assert not blocked.success
    assert "sft_examples:examples_fit_context [adp.synatra] failed" in failure(blocked)
