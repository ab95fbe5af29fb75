"""the-wave as the Hub publishes it: the-wave-clean's Parquet shards, the-wave-250's CSV.

Fixtures are built here from the published column lists: the-wave-clean (split `test`) holds
`query, url, html, selenium_ground_truth, ground_truth_outer_html,
ground_truth_highlighted_screenshot` (an `Image`) and `playwright_ground_truth`; the-wave-250
holds `query, html, xpath`, written by pandas with its index as a first, unnamed column.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets import ingest
from bigaction_assets.sources import adapters
from bigaction_assets.sources.the_wave import ADAPTER, NO_OPERATION
from tests.conftest import run_ingest
from tests.images import png

PAGE = (
    "<html><head><title>Shop</title><script>track()</script></head><body>"
    '<form><input id="q" name="q" placeholder="Search"><button type="submit">Go</button></form>'
    '<table><tr><td><a href="/deals">Deals</a></td></tr></table>'
    '<select id="size"><option>S</option><option>M</option></select>'
    "</body></html>"
)
SELECT_M = 'Select(driver.find_element(By.ID, "size")).select_by_visible_text("M")'
SIZE_MENU = '<select id="size"><option>S</option><option>M</option></select>'
PNG = png(seed=5)
SCREENSHOT_COLUMN = "ground_truth_highlighted_screenshot"
IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
HF_FEATURES = {
    "info": {
        "features": {
            "query": {"dtype": "string", "_type": "Value"},
            "url": {"dtype": "string", "_type": "Value"},
            "html": {"dtype": "string", "_type": "Value"},
            "selenium_ground_truth": {"dtype": "string", "_type": "Value"},
            "ground_truth_outer_html": {"dtype": "string", "_type": "Value"},
            "ground_truth_highlighted_screenshot": {"_type": "Image"},
            "playwright_ground_truth": {"dtype": "string", "_type": "Value"},
        }
    }
}
CLEAN_ROWS = [
    {
        "query": "Search for umbrellas",
        "url": "https://shop.example/",
        "html": PAGE,
        "selenium_ground_truth": 'driver.find_element(By.ID, "q").send_keys("umbrellas")',
        "ground_truth_outer_html": '<input id="q" name="q" placeholder="Search">',
        "ground_truth_highlighted_screenshot": {"bytes": PNG, "path": "0.png"},
        "playwright_ground_truth": 'page.locator("#q").fill("umbrellas")',
    },
    {
        "query": "Pick size M",
        "url": "https://shop.example/",
        "html": PAGE,
        "selenium_ground_truth": SELECT_M,
        "ground_truth_outer_html": SIZE_MENU,
        "ground_truth_highlighted_screenshot": None,
        "playwright_ground_truth": 'page.select_option("#size", "M")',
    },
]  # fmt: skip


def clean_shard(folder: Path, name: str, rows: list[dict]) -> Path:
    """A Parquet shard shaped like the Hub's the-wave-clean, `datasets` metadata included."""
    columns = list(HF_FEATURES["info"]["features"])
    types = {"ground_truth_highlighted_screenshot": IMAGE}
    table = pa.table(
        {c: pa.array([row[c] for row in rows], type=types.get(c, pa.string())) for c in columns}
    )
    table = table.replace_schema_metadata({"huggingface": json.dumps(HF_FEATURES)})
    path = folder / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def wave_250_csv(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A CSV like the-wave-250's, as `DataFrame.to_csv` writes it (index first, unnamed)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["", "query", "html", "xpath"])
    writer.writerows([index, *row] for index, row in enumerate(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def ingest_dataset(landing: Path, dataset: str):
    files = ingest.dataset_files(landing, ADAPTER, dataset)
    return run_ingest(ADAPTER, dataset, files, landing)


def action(result, episode_id: str) -> dict:
    return next(e for e in result.rows("events") if e["episode_id"] == episode_id and e["function"])


def test_the_wave_clean_parquet_shards_become_episodes_in_the_shards_split(tmp_path):
    landing = tmp_path / "landing"
    clean_shard(landing / "the_wave" / "the-wave-clean", "test-00000-of-00001.parquet", CLEAN_ROWS)
    shard = "the-wave-clean~data~test-00000-of-00001"  # a partition per shard file
    assert f"the_wave.{shard}" in ingest.discover(landing, adapters())

    result = ingest_dataset(landing, shard)

    assert result.rows("rejects") == []
    assert [r["error"] for r in result.raw] == [None, None]
    assert result.raw[0]["file"] == "the_wave/the-wave-clean/data/test-00000-of-00001.parquet"
    episodes = {e["task"]: e for e in result.rows("episodes")}
    assert {e["source_split"] for e in episodes.values()} == {"test"}
    typed = action(result, episodes["Search for umbrellas"]["episode_id"])
    extra = orjson.loads(typed["extra"])
    assert (typed["function"], orjson.loads(typed["kwargs"])["text"]) == ("type", "umbrellas")
    assert extra["target_found_by"] == "outer_html"
    # the highlighted screenshot shows the answer: the label's image, never an observation
    assert typed["answer_image_sha"] == hashlib.sha256(PNG).hexdigest()
    assert all(e["image_sha"] is None for e in result.rows("events"))
    assert [i["image_sha"] for i in result.rows("images")] == [typed["answer_image_sha"]]
    picked = action(result, episodes["Pick size M"]["episode_id"])
    assert picked["function"] == "select_option"
    assert (picked["answer_image_sha"], picked["image_error"]) == (None, None)


def test_the_split_follows_each_shards_name(tmp_path):
    folder = tmp_path / "landing" / "the_wave" / "the-wave-clean"
    clean_shard(folder, "train-00000-of-00002.parquet", CLEAN_ROWS[:1])
    clean_shard(folder, "validation-00001-of-00002.parquet", CLEAN_ROWS[1:])
    clean_shard(folder, "extra.parquet", [{**CLEAN_ROWS[0], "query": "Search again"}])

    shards = ("train-00000-of-00002", "validation-00001-of-00002", "extra")
    episodes = [
        episode
        for shard in shards
        for episode in ingest_dataset(tmp_path / "landing", f"the-wave-clean~data~{shard}").rows(
            "episodes"
        )
    ]

    splits = {e["task"]: e["source_split"] for e in episodes}
    # a file named otherwise takes the dataset name's split (`test` for this one)
    assert splits == {"Search for umbrellas": "train", "Pick size M": "validation",
                      "Search again": "test"}  # fmt: skip


def test_the_wave_250_csv_rows_find_their_target_by_xpath(tmp_path):
    landing = tmp_path / "landing"
    wave_250_csv(
        landing / "the_wave" / "the-wave-250" / "TheWaveMeta.csv",
        [
            ("Open the deals", PAGE, "/html/body/table/tbody/tr/td/a"),
            ("Search", PAGE, '//*[@id="q"]'),
            ("Press the missing button", PAGE, "//button[@id='none']"),
        ],
    )
    result = ingest_dataset(landing, "the-wave-250~TheWaveMeta")

    assert result.rows("rejects") == []
    episodes = {e["task"]: e for e in result.rows("episodes")}
    assert set(episodes) == {"Open the deals", "Search", "Press the missing button"}
    for task, found in (("Open the deals", "a"), ("Search", "input")):
        episode = episodes[task]
        details = orjson.loads(episode["details"])
        assert details["train_on"] is False and details["why"] == NO_OPERATION
        assert episode["website"] is None and episode["source_split"] == "test"
        event = action(result, episode["episode_id"])
        extra = orjson.loads(event["extra"])
        assert "op" not in extra, "no operation the row does not record"
        assert (extra["operation"], extra["target_found_by"]) == ("unknown", "xpath")
        [positive] = [
            c for c in result.rows("web_candidates")
            if c["episode_id"] == episode["episode_id"] and c["positive"]
        ]  # fmt: skip
        assert positive["tag"] == found
        assert orjson.loads(event["kwargs"])["bid"] == positive["backend_node_id"]
    missing = action(result, episodes["Press the missing button"]["episode_id"])
    assert orjson.loads(missing["extra"])["target_found_by"] is None
    assert orjson.loads(missing["kwargs"])["bid"] is None


@pytest.mark.parametrize(
    ("xpath", "detail"),
    [
        ("//a[", "is not XPath 1.0"),
        ("count(//a)", "not elements"),
        ("//a/@href", "texts or attribute values"),
        ("  ", "row.xpath is empty"),
    ],
)
def test_an_xpath_that_selects_no_elements_is_rejected_with_why(tmp_path, xpath, detail):
    landing = tmp_path / "landing"
    wave_250_csv(landing / "the_wave" / "bad.csv", [("Go", PAGE, xpath), ("Ok", PAGE, "//a")])
    result = ingest_dataset(landing, "bad")
    [reject] = result.rows("rejects")
    assert reject["reason"] == "invalid_value" and detail in reject["detail"]
    assert reject["line"] == 2 and reject["file"] == "the_wave/bad.csv"
    assert [e["task"] for e in result.rows("episodes")] == ["Ok"]


def test_a_selenium_row_whose_outer_html_is_gone_falls_back_to_its_xpath(tmp_path):
    row = {**CLEAN_ROWS[0], "ground_truth_outer_html": '<input id="gone">', "xpath": "//form/input"}
    path = tmp_path / "landing" / "the_wave" / "rows.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps({k: v for k, v in row.items() if k != SCREENSHOT_COLUMN}))
    result = ingest_dataset(tmp_path / "landing", "rows")
    [event] = [e for e in result.rows("events") if e["function"]]
    assert orjson.loads(event["extra"])["target_found_by"] == "xpath"


@pytest.mark.parametrize("screenshot", [{"bytes": "raw text", "path": "x.png"}, {"path": 7}, 5])
def test_a_malformed_screenshot_cell_is_rejected(tmp_path, screenshot):
    row = {**CLEAN_ROWS[0], SCREENSHOT_COLUMN: screenshot}
    path = tmp_path / "landing" / "the_wave" / "rows.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps(row))
    result = ingest_dataset(tmp_path / "landing", "rows")
    [reject] = result.rows("rejects")
    assert reject["reason"] == "wrong_type" and SCREENSHOT_COLUMN in reject["detail"]
