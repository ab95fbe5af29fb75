"""ADP codec: import then export gives back the same trajectories, directly and via the lake."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from big_pages import write_big_pages

from bigaction_assets import adp_export
from bigaction_assets.sources.adp import ADAPTER, export_trajectory, import_trajectory
from bigaction_assets.sources.adp_thoughts import CACHE_SUFFIX
from bigaction_assets.sources.base import RecordRejected, StandardRecord

ROOT = Path(__file__).resolve().parents[1]
LANDING = ROOT / "landing"
BUNDLED = sorted((LANDING / "adp").glob("*.json"))
SHARED_ADP = ROOT.parent / "shared" / "data" / "adp"
# Every dataset folder there, found by listing it: a folder the test cannot read fails it.
SHARED = sorted(p for p in SHARED_ADP.iterdir() if p.is_dir()) if SHARED_ADP.is_dir() else []


def round_trip(standard: StandardRecord) -> dict[str, Any]:
    pages = {page["html_sha"]: page["raw_html"] for page in standard.snapshots}
    return export_trajectory(standard.episode, standard.events, pages)


def load(path: Path) -> list[dict[str, Any]]:
    trajectories = orjson.loads(path.read_bytes())
    assert isinstance(trajectories, list) and trajectories
    return trajectories


def assert_codec_round_trip(path: Path) -> None:
    for trajectory in load(path):
        original = copy.deepcopy(trajectory)
        standard = import_trajectory(trajectory, source=path.stem)
        assert trajectory == original, "import must not change its input"
        assert round_trip(standard) == original


def assert_lake_round_trip(path: Path, name: str, lake: Path, ingest_dataset, write_tables):
    result = ingest_dataset(ADAPTER, name, [path], path.parent.parent)
    assert result.rows("rejects") == []
    partition = f"adp.{name}"
    write_tables(lake, partition, result.tables)
    assert list(adp_export.iter_trajectories(lake, partition)) == load(path)


def test_bundled_samples_exist():
    assert {p.stem for p in BUNDLED} >= {"synatra", "nnetnav-wa", "swe-smith"}


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_codec_round_trip(path):
    assert_codec_round_trip(path)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_lake_round_trip(path, tmp_lake, ingest_dataset, write_std_tables):
    assert_lake_round_trip(path, path.stem, tmp_lake, ingest_dataset, write_std_tables)


@pytest.mark.skipif(not SHARED, reason=f"no shared ADP samples at {SHARED_ADP}")
@pytest.mark.parametrize("folder", SHARED, ids=lambda p: p.name)
def test_shared_samples_load_and_round_trip(folder, tmp_path, ingest_dataset, write_std_tables):
    """Every ADP dataset folder: its standardized sample loads with 0 rejects and comes back
    from the codec and from the lake exactly as it was, with ADP's thought cache beside it
    where the folder has one."""
    sample = folder / "sample_std.json"
    assert sample.is_file(), f"{folder.name} has no sample_std.json"
    assert_codec_round_trip(sample)
    # the landing layout wants `<landing>/adp/<name>.json` (+ `<name>.generated_thoughts.json`)
    landing = tmp_path / "landing" / "adp"
    landing.mkdir(parents=True)
    (landing / f"{folder.name}.json").write_bytes(sample.read_bytes())
    cache = folder / "generated_thoughts.json"
    if cache.is_file():
        (landing / f"{folder.name}{CACHE_SUFFIX}").write_bytes(cache.read_bytes())
    files = ADAPTER.dataset_files(landing)[folder.name]
    assert len(files) == 1 + cache.is_file()
    result = ingest_dataset(ADAPTER, folder.name, files, landing.parent)
    assert result.rows("rejects") == []
    used = {r["name"]: r["count"] for r in result.rows("tallies")}.get("adp_thoughts_used", 0)
    assert (used > 0) == cache.is_file()
    write_std_tables(tmp_path / "lake", f"adp.{folder.name}", result.tables)
    exported = adp_export.iter_trajectories(tmp_path / "lake", f"adp.{folder.name}")
    assert list(exported) == load(sample)


def test_repeated_ids_in_a_dataset_survive_the_lake(tmp_path, ingest_dataset, write_std_tables):
    """Two trajectories with one id come back as two, in order, with their own content."""
    trajectories = [
        {"id": "same", "content": [{"class_": "message_action", "content": "one"}]},
        {"id": "same", "content": [{"class_": "message_action", "content": "two"}]},
        {"id": 7, "content": []},
    ]
    path = tmp_path / "landing" / "adp" / "dupes.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps(trajectories))
    assert_lake_round_trip(path, "dupes", tmp_path / "lake", ingest_dataset, write_std_tables)


# --- the codec itself ----------------------------------------------------------------------


def trajectory(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "t1",
        "content": [
            {"class_": "text_observation", "content": "Buy milk", "source": "user"},
            {
                "class_": "web_observation",
                "html": "<html><body>hi</body></html>",
                "axtree": "[1] RootWebArea",
                "url": "https://shop.example.com/a",
                "viewport_size": [1280, 720],
                "image_observation": None,
            },
            {
                "class_": "api_action",
                "function": "click",
                "kwargs": {"bid": '"93"'},
                "description": "I click the button.",
            },
            {"class_": "message_action", "content": "done", "description": None},
        ],
        "details": {"task_description": "Buy milk"},
    }
    base.update(changes)
    return base


def with_item(position: int, item: Any) -> dict[str, Any]:
    value = trajectory()
    value["content"][position] = item
    return value


def test_codec_round_trip_of_a_hand_built_trajectory():
    value = trajectory(extra_top="kept")
    standard = import_trajectory(copy.deepcopy(value), source="hand")
    assert standard.episode["task"] == "Buy milk"
    assert standard.episode["website"] == "shop.example.com"
    assert [e["kind"] for e in standard.events] == [
        "text_observation",
        "web_observation",
        "api_action",
        "message_action",
    ]
    web = standard.events[1]
    assert (web["viewport_width"], web["viewport_height"]) == (1280, 720)
    html = value["content"][1]["html"]
    assert standard.snapshots == [
        {
            "html_sha": web["html_sha"],
            "raw_html": html,
            "cleaned_html": None,
            "raw_bytes": len(html.encode()),
        }
    ]
    assert round_trip(standard) == value


def test_the_task_of_a_trajectory_that_opens_with_its_goal_as_a_message():
    """ADP's Android converters put the goal in a message before anything is seen."""
    goal = {"class_": "message_action", "content": "Open the app.", "description": None}
    shot = {"class_": "image_observation", "content": "0.png", "source": "user"}
    value = trajectory(content=[goal, shot, trajectory()["content"][2]], details={})
    standard = import_trajectory(copy.deepcopy(value), source="hand")
    assert standard.episode["task"] == "Open the app."
    assert round_trip(standard) == value
    no_goal = trajectory(content=[shot, goal], details={})
    assert import_trajectory(no_goal, source="hand").episode["task"] is None


def test_kwargs_stay_verbatim():
    standard = import_trajectory(trajectory(), source="hand")
    action = standard.events[2]
    assert orjson.loads(action["kwargs"]) == {"bid": '"93"'}
    assert round_trip(standard)["content"][2]["kwargs"] == {"bid": '"93"'}


@pytest.mark.parametrize(
    "value",
    [
        {"id": 12, "content": []},  # int id, no details
        {"id": "x", "content": [], "details": {}},
        {"id": "x", "content": [], "details": None},
        {"id": "x", "content": [], "top_level_extra": [1, None]},  # no details, an extra key
        {"id": 3, "content": [], "details": None, "top_level_extra": {"a": "b"}},
        {"id": "x", "content": [{"class_": "web_observation", "html": None, "url": None}]},
        {"id": "x", "content": [{"class_": "api_action", "function": "noop", "kwargs": {}}]},
        {"id": "x", "content": [{"class_": "text_observation", "content": "", "source": "agent"}]},
        {"id": "x", "content": [{"content": "c", "class_": "code_action", "language": "python"}]},
    ],
)
def test_codec_round_trip_edge_cases(value):
    assert round_trip(import_trajectory(copy.deepcopy(value), source="edge")) == value


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"content": []}, "missing_field"),
        ({"id": "x"}, "missing_field"),
        ({"id": "x", "content": "not a list"}, "wrong_type"),
        ({"id": "x", "content": {"class_": "text_observation"}}, "wrong_type"),
        ({"id": None, "content": []}, "wrong_type"),
        ({"id": ["x"], "content": []}, "wrong_type"),
        ({"id": "x", "content": [], "details": "text"}, "wrong_type"),
        ("not an object", "wrong_type"),
        (with_item(0, {"class_": "video_observation", "content": "v"}), "unknown_class"),
        (with_item(0, {"content": "no class", "source": "user"}), "missing_field"),
        (with_item(0, "just text"), "wrong_type"),
        (
            with_item(0, {"class_": "text_observation", "content": 5, "source": "user"}),
            "wrong_type",
        ),
        (with_item(0, {"class_": "text_observation", "source": "user"}), "missing_field"),
        (with_item(0, {"class_": "text_observation", "content": "hi"}), "missing_field"),
        (
            with_item(2, {"class_": "api_action", "function": "click", "kwargs": "bid=1"}),
            "wrong_type",
        ),
        (with_item(2, {"class_": "api_action", "kwargs": {}}), "missing_field"),
        (with_item(2, {"class_": "api_action", "function": True}), "wrong_type"),
        (with_item(1, {"class_": "web_observation", "html": 3}), "wrong_type"),
        (with_item(1, {"class_": "web_observation", "viewport_size": [1280]}), "wrong_type"),
        (with_item(1, {"class_": "web_observation", "viewport_size": "1280x720"}), "wrong_type"),
        (with_item(1, {"class_": "web_observation", "viewport_size": [-1, 720]}), "wrong_type"),
        (with_item(1, {"class_": "web_observation", "viewport_size": [True, 720]}), "wrong_type"),
        (with_item(1, {"class_": "web_observation", "viewport_size": [1280.5, 720]}), "wrong_type"),
    ],
)
def test_codec_rejections(value, reason):
    with pytest.raises(RecordRejected) as caught:
        import_trajectory(value, source="bad")
    assert caught.value.reason == reason
    assert caught.value.detail


def test_export_of_one_dataset_ignores_other_datasets(tmp_path, ingest_dataset, write_std_tables):
    """Two datasets that saw the same page each store it; exporting one must not double it."""
    source = LANDING / "adp" / "webarena_successful.json"
    landing = tmp_path / "landing"
    (landing / "adp").mkdir(parents=True)
    for name in ("copy_a", "copy_b"):
        (landing / "adp" / f"{name}.json").write_bytes(source.read_bytes())
        result = ingest_dataset(ADAPTER, name, [landing / "adp" / f"{name}.json"], landing)
        assert result.rows("dom_snapshots"), "the sample must carry pages for this test"
        write_std_tables(tmp_path / "lake", f"adp.{name}", result.tables)
    for name in ("copy_a", "copy_b"):
        assert list(adp_export.iter_trajectories(tmp_path / "lake", f"adp.{name}")) == load(source)


def test_a_dataset_exports_beside_one_whose_pages_outsize_the_memory_limit(
    tmp_path, ingest_dataset, write_std_tables
):
    """A web dataset with pages, exported from a lake that also holds ~600 MB of another
    dataset's pages: the export read every partition's pages into one DuckDB aggregate, which
    ran out of its memory limit; a dataset's export reads its own partition only."""
    source = LANDING / "adp" / "webarena_successful.json"
    landing = tmp_path / "landing"
    (landing / "adp").mkdir(parents=True)
    (landing / "adp" / "small.json").write_bytes(source.read_bytes())
    result = ingest_dataset(ADAPTER, "small", [landing / "adp" / "small.json"], landing)
    assert result.rows("dom_snapshots"), "the sample must carry pages for this test"
    write_std_tables(tmp_path / "lake", "adp.small", result.tables)
    write_big_pages(tmp_path / "lake")
    assert list(adp_export.iter_trajectories(tmp_path / "lake", "adp.small")) == load(source)


@pytest.mark.parametrize(
    ("details", "source", "expected"),
    [
        ({"resolved": "True"}, "swe-gym", True),  # SWE-Gym writes Python's spelling
        ({"resolved": False}, "swe-gym", False),
        ({"resolved": "maybe"}, "swe-gym", None),
        ({"exit_status": "submitted"}, "nebius", None),  # a run's own claim records nothing
        ({}, "webarena_successful", True),  # a dataset of successful runs
        ({"resolved": "False"}, "webarena_successful", False),  # the record itself comes first
        ({}, "synatra", None),
    ],
)
def test_task_completed_only_where_the_source_records_it(details, source, expected):
    value = trajectory(details=details)
    standard = import_trajectory(copy.deepcopy(value), source=source)
    assert standard.episode["task_completed"] is expected
    assert round_trip(standard) == value
