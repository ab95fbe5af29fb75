"""The images gates: every image an event points at is stored, and every stored image is what
its row says and decodes to its dimensions."""

from __future__ import annotations

import hashlib

import dagster as dg
import orjson
import pytest

from bigaction_assets.defs.standardized.checks import ImagesDecodeConfig, images_decode
from bigaction_assets.images.verify import (
    decode_problem,
    sampled,
    undecodable_images,
    unresolved_image_shas,
)
from bigaction_assets.lake_sql import query_connection
from tests.conftest import write_standardized
from tests.images import corrupt_body, encoded, png

GOOD = png(seed=4)


def image_row(data: bytes, **changes) -> dict:
    row = {"image_sha": hashlib.sha256(data).hexdigest(), "format": "png", "width": 24,
           "height": 16, "byte_size": len(data), "location": "test", "bytes": data}  # fmt: skip
    return {**row, **changes}


def tables(images: list[dict], image_shas: list[str | None]) -> dict[str, list[dict]]:
    episode = {
        "episode_id": "s/1", "dataset": "adp.s", "source": "s", "source_format": "adp",
        "source_split": None, "source_id": "1", "source_file": "adp/s.json", "source_record": 0,
        "task": None, "website": None, "domain": None, "subdomain": None, "details": "{}",
        "task_completed": None, "num_events": len(image_shas), "content_sha": "0" * 64,
        "schema_version": 4,
    }  # fmt: skip
    events = [
        {"episode_id": "s/1", "idx": idx, "kind": "image_observation", "actor": "environment",
         "image_sha": sha, "extra": orjson.dumps({}).decode()}
        for idx, sha in enumerate(image_shas)
    ]  # fmt: skip
    return {"episodes": [episode], "events": events, "images": images}


def test_every_event_image_must_be_stored(tmp_path):
    stored = image_row(GOOD)
    write_standardized(tmp_path, "adp.s", tables([stored], [stored["image_sha"], None, "f" * 64]))
    with query_connection() as con:
        offenders = unresolved_image_shas(con, tmp_path)
    assert offenders == [{"episode_id": "s/1", "idx": 2, "image_sha": "f" * 64}]


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (image_row(GOOD), None),
        (image_row(encoded("gif", (24, 16)), format="gif"), None),
        (image_row(GOOD, width=25), "the header says"),
        (image_row(GOOD, format="webp"), "the header says"),
        (image_row(GOOD, image_sha="0" * 64), "do not hash"),
        (image_row(GOOD, byte_size=3), "byte_size says"),
        (image_row(corrupt_body(png(size=(64, 48))), width=64, height=48), "Pillow cannot decode"),
    ],
)
def test_decode_problem_names_what_is_wrong(row, problem):
    found = decode_problem(row)
    assert (found is None) if problem is None else (problem in found)


def test_the_check_fails_on_a_stored_image_that_does_not_decode(tmp_path):
    bad = corrupt_body(png(size=(64, 48)))
    rows = [image_row(GOOD), image_row(bad, width=64, height=48)]
    write_standardized(tmp_path, "adp.s", tables(rows, [r["image_sha"] for r in rows]))
    [offender] = undecodable_images(tmp_path)
    assert offender["image_sha"] == rows[1]["image_sha"]
    assert undecodable_images(tmp_path, share=0.0) == []  # a share of none decodes none

    fake = type("Lake", (), {"root": tmp_path, "store": tmp_path})()
    lake = dg.ResourceDefinition.hardcoded_resource(fake)
    result = images_decode(dg.build_asset_check_context(resources={"lake": lake}),
                           config=ImagesDecodeConfig())  # fmt: skip
    assert not result.passed
    assert "1 images that do not decode" in result.description


def test_a_sample_is_the_same_share_of_hashes_every_run():
    shas = [hashlib.sha256(bytes([k])).hexdigest() for k in range(256)]
    picked = [s for s in shas if sampled(s, 0.25)]
    assert 40 < len(picked) < 90
    assert picked == [s for s in shas if sampled(s, 0.25)]
    assert all(sampled(s, 1.0) for s in shas)
