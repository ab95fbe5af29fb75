"""Each source's images into the lake: a good one is stored once and pointed at by hash; a
missing, damaged or oversized one is the event's `image_error` and its episode flows on."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets import adp_export, ingest, standardized_rows
from bigaction_assets.images.resolve import ImageResolver
from bigaction_assets.images.store import image_bytes, iter_images
from bigaction_assets.rerun.inputs import dataset_roots
from bigaction_assets.sources import adapters
from bigaction_assets.unread import unread_files
from tests.conftest import run_ingest, write_standardized
from tests.images import corrupt_body, encoded, png, png_bomb, truncated

GOOD, OTHER = png(seed=1), encoded("webp", (40, 30), seed=2)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ingest_named(landing: Path, adapter: str, dataset: str):
    registry = adapters()
    files = ingest.dataset_files(landing, registry[adapter], dataset)
    return run_ingest(registry[adapter], dataset, files, landing)


def tallies(result) -> dict[str, int]:
    return {r["name"]: r["count"] for r in result.rows(standardized_rows.TALLIES)}


# --- ADP: image_observation paths, resolved in the dataset's image folders -----------------


def adp_trajectory(record_id: str, shots: list[str]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {"class_": "text_observation", "content": "Open the page", "source": "user"}
    ]
    for shot in shots:
        content.append({"class_": "image_observation", "content": shot, "source": "environment"})
        content.append({"class_": "api_action", "function": "click", "kwargs": {"bid": "1"},
                        "description": None})  # fmt: skip
    return {"id": record_id, "content": content, "details": {}}


def adp_landing(tmp_path: Path, shots: list[str], images: dict[str, bytes]) -> Path:
    landing = tmp_path / "landing"
    (landing / "adp").mkdir(parents=True)
    (landing / "adp" / "shots.json").write_bytes(orjson.dumps([adp_trajectory("t1", shots)]))
    for name, data in images.items():
        path = landing / "adp" / "shots.images" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return landing


def image_events(result) -> list[dict[str, Any]]:
    return [e for e in result.rows("events") if e["kind"] == "image_observation"]


def test_adp_images_good_missing_corrupt_huge_and_foreign(tmp_path):
    shots = [
        "0/screen_0.png",  # good
        "0/screen_1.webp",  # good, another format
        "0/screen_0.png",  # the same again: stored once
        "0/gone.png",  # named, never landed
        "0/cut.png",  # a download cut short
        "0/bomb.png",  # a decompression bomb's header
        "0/text.png",  # not an image at all
        "/Users/someone/datasets/aitw/screenshots/1-0.png",  # the author's machine
        "../../secret.png",  # climbs out of the image folder
        "0/" + "x" * 300 + ".png",  # a name no filesystem takes
    ]
    images = {"0/screen_0.png": GOOD, "0/screen_1.webp": OTHER, "0/cut.png": truncated(GOOD),
              "0/bomb.png": png_bomb(), "0/text.png": b"hello"}  # fmt: skip
    (tmp_path / "secret.png").write_bytes(GOOD)
    result = ingest_named(adp_landing(tmp_path, shots, images), "adp", "shots")

    assert result.rows("rejects") == []  # the episode flows on, as text where images fail
    [episode] = result.rows("episodes")
    assert episode["num_events"] == 1 + 2 * len(shots)
    outcome = [(e["image_sha"], e["image_error"]) for e in image_events(result)]
    assert outcome == [
        (sha(GOOD), None), (sha(OTHER), None), (sha(GOOD), None), (None, "missing_file"),
        (None, "undecodable"), (None, "too_many_pixels"), (None, "unrecognized"),
        (None, "outside_landing"), (None, "outside_landing"), (None, "missing_file"),
    ]  # fmt: skip
    assert [e["image_path"] for e in image_events(result)] == shots  # kept as the source names
    stored = {r["image_sha"]: r for r in result.rows("images")}
    assert set(stored) == {sha(GOOD), sha(OTHER)}
    assert (stored[sha(OTHER)]["format"], stored[sha(OTHER)]["width"]) == ("webp", 40)
    assert stored[sha(GOOD)]["location"] == "adp/shots.images/0/screen_0.png"
    assert {k: v for k, v in tallies(result).items() if k.startswith("image:")} == {
        "image:stored": 3, "image:missing_file": 2, "image:undecodable": 1,
        "image:too_many_pixels": 1, "image:unrecognized": 1, "image:outside_landing": 2,
    }  # fmt: skip


def test_adp_images_in_a_folder_dataset_resolve_from_its_folder(tmp_path):
    folder = tmp_path / "landing" / "adp" / "android"
    (folder / "0").mkdir(parents=True)
    (folder / "std.json").write_bytes(orjson.dumps([adp_trajectory("t1", ["0/s.png"])]))
    (folder / "0" / "s.png").write_bytes(GOOD)
    result = ingest_named(tmp_path / "landing", "adp", "android~std")  # its one shard
    assert [e["image_sha"] for e in image_events(result)] == [sha(GOOD)]
    assert unread_files(tmp_path / "landing", adapters()) == []  # the image is read, not unread


def test_adp_inline_base64_images_are_stored_and_bad_base64_is_marked(tmp_path):
    inline = base64.b64encode(GOOD).decode()
    data_url = "data:image/webp;base64," + base64.b64encode(OTHER).decode()
    broken = "iVBORw0KGgo" + "!" * 80
    result = ingest_named(adp_landing(tmp_path, [inline, data_url, broken], {}), "adp", "shots")
    outcome = [(e["image_sha"], e["image_error"]) for e in image_events(result)]
    assert outcome == [(sha(GOOD), None), (sha(OTHER), None), (None, "undecodable")]
    assert {r["location"] for r in result.rows("images")} == {"inline"}
    # the bytes live in `images` only; what is not stored keeps its text in the event
    assert [e["image_path"] for e in image_events(result)] == [None, None, broken]
    write_standardized(tmp_path / "lake", "adp.shots", result.tables)
    [exported] = adp_export.iter_trajectories(tmp_path / "lake", "adp.shots")
    assert exported == adp_trajectory("t1", [inline, data_url, broken])  # written back as given


def test_an_image_folder_is_an_input_of_its_dataset_and_is_not_unread(tmp_path):
    landing = adp_landing(tmp_path, ["a.png"], {"a.png": GOOD, "notes.txt": b"x"})
    files = ingest.dataset_files(landing, adapters()["adp"], "shots")
    before = ingest.dataset_fingerprint(landing, "adp.shots", files)
    root_before = dataset_roots({"adp.shots": files}, landing)  # what `make demo` stamps
    (landing / "adp" / "shots.images" / "a.png").write_bytes(OTHER)
    assert ingest.dataset_fingerprint(landing, "adp.shots", files) != before
    assert dataset_roots({"adp.shots": files}, landing) != root_before
    assert "adp.shots" in ingest.discover(landing, adapters())  # the folder is not a dataset
    unread = {f.path: f.reason for f in unread_files(landing, adapters())}
    assert unread == {"adp/shots.images/notes.txt": "not_in_a_dataset"}
    (landing / "adp" / "orphan.images").mkdir()
    (landing / "adp" / "orphan.images" / "b.png").write_bytes(GOOD)
    unread = {f.path: f.reason for f in unread_files(landing, adapters())}
    assert unread["adp/orphan.images/b.png"] == "not_in_a_dataset"


# --- Mind2Web: Multimodal-Mind2Web's screenshot column, and screenshots named by action ---


PAGE = '<html><body><button backend_node_id="7">Go</button></body></html>'
IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def mm_row(index: int, screenshot: Any) -> dict[str, Any]:
    candidate = orjson.dumps({"tag": "button", "backend_node_id": "7"}).decode()
    return {
        "action_uid": f"u{index}", "raw_html": PAGE, "cleaned_html": PAGE,
        "operation": orjson.dumps({"op": "CLICK", "original_op": "CLICK", "value": ""}).decode(),
        "pos_candidates": [candidate], "neg_candidates": [], "annotation_id": "task-1",
        "confirmed_task": "Press go", "screenshot": screenshot,
        "action_reprs": ["[button] Go -> CLICK"] * 6, "target_action_index": str(index),
    }  # fmt: skip


def mm_landing(tmp_path: Path, screenshots: list[Any]) -> tuple[Path, Path]:
    rows = [mm_row(index, shot) for index, shot in enumerate(screenshots)]
    types = {
        "screenshot": IMAGE_TYPE,
        "pos_candidates": pa.list_(pa.string()),
        "neg_candidates": pa.list_(pa.string()),
        "action_reprs": pa.list_(pa.string()),
    }
    table = pa.table({k: pa.array([r[k] for r in rows], type=types.get(k, pa.string()))
                      for k in rows[0]})  # fmt: skip
    landing = tmp_path / "landing"
    path = landing / "mind2web" / "mm" / "data" / "train-00000-of-00001.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(table, path, row_group_size=2)
    return landing, path


def web_observations(result) -> list[dict[str, Any]]:
    return [e for e in result.rows("events") if e["kind"] == "web_observation"]


def test_multimodal_mind2web_screenshots_good_missing_corrupt_huge(tmp_path):
    shots = [
        {"bytes": GOOD, "path": None},
        None,
        {"bytes": None, "path": None},
        {"bytes": corrupt_body(png(size=(64, 48))), "path": None},  # decodes only badly
        {"bytes": truncated(OTHER), "path": None},
        {"bytes": png_bomb(), "path": None},
    ]
    landing, _ = mm_landing(tmp_path, shots)
    result = ingest_named(landing, "mind2web", "mm~data~train-00000-of-00001")  # its one shard

    assert result.rows("rejects") == []
    [episode] = result.rows("episodes")
    assert episode["num_events"] == 1 + 2 * len(shots)  # every step kept, screenshot or not
    outcome = [(e["image_sha"], e["image_error"]) for e in web_observations(result)]
    assert outcome == [
        (sha(GOOD), None), (None, "no_screenshot"), (None, "no_screenshot"),
        (sha(shots[3]["bytes"]), None),  # its header is sound: the images check decodes it
        (None, "undecodable"), (None, "too_many_pixels"),
    ]  # fmt: skip
    assert [r["location"] for r in result.rows("images")] == [
        "mind2web/mm/data/train-00000-of-00001.parquet#0/screenshot",
        "mind2web/mm/data/train-00000-of-00001.parquet#3/screenshot",
    ]


def test_a_parquet_screenshot_changed_after_reading_is_not_taken(tmp_path):
    landing, path = mm_landing(tmp_path, [{"bytes": GOOD, "path": None}])
    raw = list(ingest.raw_records(adapters()["mind2web"], "mm", [path], landing))
    mm_landing(tmp_path / "again", [{"bytes": OTHER, "path": None}])[1].replace(path)
    images = ImageResolver(landing, "mind2web", "mm")
    rows = list(standardized_rows.standardize(adapters()["mind2web"], "mm", raw, set(), images))
    [page] = [
        r.values for r in rows if r.table == "events" and r.values["kind"] == "web_observation"
    ]
    assert (page["image_sha"], page["image_error"]) == (None, "changed_since_read")
    assert not [r for r in rows if r.table == "images"]


def mind2web_task(uids: list[str]) -> dict[str, Any]:
    actions = [
        {"action_uid": uid, "raw_html": PAGE, "cleaned_html": PAGE,
         "operation": {"op": "CLICK", "original_op": "CLICK", "value": ""},
         "pos_candidates": [{"tag": "button", "backend_node_id": "7"}], "neg_candidates": []}
        for uid in uids
    ]  # fmt: skip
    return {
        "annotation_id": "t1",
        "confirmed_task": "Press go",
        "website": "example",
        "domain": "Shopping",
        "subdomain": "Shop",
        "action_reprs": [],
        "actions": actions,
    }


def test_mind2web_tasks_take_screenshots_named_by_action_from_their_image_folder(tmp_path):
    landing = tmp_path / "landing"
    (landing / "mind2web").mkdir(parents=True)
    long_uid = "u" * 300  # names no file: the filesystem refuses so long a name
    (landing / "mind2web" / "train_a.json").write_bytes(
        orjson.dumps([mind2web_task(["u0", "u1", long_uid])])
    )
    (landing / "mind2web" / "train_b.json").write_bytes(orjson.dumps([mind2web_task(["u0"])]))
    shots = landing / "mind2web" / "train_a.images"
    shots.mkdir()
    (shots / "u0.webp").write_bytes(OTHER)

    named = ingest_named(landing, "mind2web", "train_a")
    outcome = [(e["image_sha"], e["image_error"]) for e in web_observations(named)]
    assert outcome == [(sha(OTHER), None), (None, "no_screenshot"), (None, "no_screenshot")]
    without_folder = ingest_named(landing, "mind2web", "train_b")  # no images expected
    assert [(e["image_sha"], e["image_error"]) for e in web_observations(without_folder)] == [
        (None, None)
    ]


# --- the-wave: the highlighted screenshot is the label's image -------------------------------


SHARD = "clean~test-00000-of-00001"  # the dataset `clean`'s one shard


def wave_landing(tmp_path: Path, screenshots: list[Any]) -> Path:
    rows = []
    for index, shot in enumerate(screenshots):
        rows.append({
            "query": f"Press go {index}", "url": "https://shop.example/", "html": PAGE,
            "selenium_ground_truth": 'driver.find_element(By.ID, "go").click()',
            "ground_truth_outer_html": '<button backend_node_id="7">Go</button>',
            "ground_truth_highlighted_screenshot": shot,
        })  # fmt: skip
    types = {"ground_truth_highlighted_screenshot": IMAGE_TYPE}
    table = pa.table({k: pa.array([r[k] for r in rows], type=types.get(k, pa.string()))
                      for k in rows[0]})  # fmt: skip
    path = tmp_path / "landing" / "the_wave" / "clean" / "test-00000-of-00001.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)
    return tmp_path / "landing"


def test_the_wave_answer_images_good_missing_corrupt_huge(tmp_path):
    shots = [
        {"bytes": GOOD, "path": None},
        None,
        {"bytes": truncated(GOOD), "path": None},
        {"bytes": png_bomb(), "path": None},
        {"bytes": None, "path": "lost.png"},
    ]
    result = ingest_named(wave_landing(tmp_path, shots), "the_wave", SHARD)
    assert result.rows("rejects") == []
    assert len(result.rows("episodes")) == len(shots)
    answers = [e for e in result.rows("events") if e["kind"] == "api_action"]
    outcome = [(a["answer_image_sha"], a["image_error"]) for a in answers]
    assert outcome == [(sha(GOOD), None), (None, None), (None, "undecodable"),
                       (None, "too_many_pixels"), (None, "missing_file")]  # fmt: skip
    assert all(e["image_sha"] is None for e in result.rows("events"))  # never an observation


# --- reading images back by hash ---------------------------------------------------------------


def test_images_stream_back_by_hash_across_partitions(tmp_path):
    landing = adp_landing(tmp_path, ["a.png", "b.webp"], {"a.png": GOOD, "b.webp": OTHER})
    lake = tmp_path / "lake"
    write_standardized(lake, "adp.shots", ingest_named(landing, "adp", "shots").tables)
    write_standardized(lake, "adp.copy", ingest_named(landing, "adp", "shots").tables)
    assert image_bytes(lake, sha(OTHER)) == OTHER
    assert image_bytes(lake, "0" * 64) is None
    every = list(iter_images(lake, with_bytes=False))
    assert sorted(r["image_sha"] for r in every) == sorted([sha(GOOD), sha(OTHER)])  # once each
    assert "bytes" not in every[0]


# --- the ADP samples in ../shared/data: screenshots named but not shipped ---------------------

SHARED_ADP = Path(__file__).resolve().parents[2] / "shared" / "data" / "adp"
WITH_IMAGES = sorted(
    p.parent for p in SHARED_ADP.glob("*/sample_std.json") if b"image_observation" in p.read_bytes()
)


@pytest.mark.skipif(not WITH_IMAGES, reason=f"no shared ADP samples at {SHARED_ADP}")
def test_the_shared_adp_samples_flow_on_as_text_where_their_screenshots_are_missing(tmp_path):
    landing = tmp_path / "landing"
    (landing / "adp").mkdir(parents=True)
    outcomes: dict[str, dict[str, int]] = {}
    for folder in WITH_IMAGES:
        (landing / "adp" / f"{folder.name}.json").write_bytes(
            (folder / "sample_std.json").read_bytes()
        )
        result = ingest_named(landing, "adp", folder.name)
        assert result.rows("rejects") == [], folder.name
        outcomes[folder.name] = {
            k.removeprefix("image:"): v
            for k, v in tallies(result).items()
            if k.startswith("image:")
        }
    assert len(WITH_IMAGES) == 11  # as data/README.md counts them; 4 name only null images
    named = {name: counts for name, counts in outcomes.items() if counts}
    assert named["android_in_the_wild"] == {"outside_landing": 3}  # its authors' absolute paths
    assert named["androidcontrol"] == {"missing_file": 11}
    assert named["openhands"] == {"stored": 5}  # inline base64 PNGs: the one sample that has them
    assert set(named) == {"android_in_the_wild", "androidcontrol", "llava_plus", "omniact",
                          "openhands", "webarena_successful", "weblinx"}  # fmt: skip
    missing = [c for n, c in named.items() if n != "openhands"]
    assert all(set(counts) <= {"missing_file", "outside_landing"} for counts in missing)


def test_image_bytes_are_stored_uncompressed_and_their_metadata_with_zstd(tmp_path):
    landing = adp_landing(tmp_path, ["a.png"], {"a.png": GOOD})
    write_standardized(tmp_path / "lake", "adp.shots", ingest_named(landing, "adp", "shots").tables)
    path = tmp_path / "lake" / "standardized" / "images" / "adp.shots.parquet"
    group = pq.read_metadata(path).row_group(0)
    codecs = {group.column(i).path_in_schema: group.column(i).compression for i in range(7)}
    assert codecs["bytes"] == "UNCOMPRESSED"  # PNG, JPEG, WebP: compressed already
    assert {codec for name, codec in codecs.items() if name != "bytes"} == {"ZSTD"}
