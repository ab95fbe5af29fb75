"""A real browser (Playwright driving Debian's Chromium) signs in, labels a web step and a
proactive turn with the keyboard, and the labels are found in `annotations`.

Skipped, with the reason, where /usr/bin/chromium or Playwright is missing, unless
BIGACTION_REQUIRE_BROWSER=1 (CI sets it: `.ci/run` installs chromium), which makes it fail.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from annotate_server import PASSWORD, add_users, running_app, turn_item, web_item

from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.store import AnnotationStore
from bigaction_assets.annotate.web import SESSION_COOKIE
from bigaction_assets.definitions import defs
from bigaction_assets.defs.resources import LakeResource

CHROMIUM = Path("/usr/bin/chromium")
REQUIRED = os.environ.get("BIGACTION_REQUIRE_BROWSER") == "1"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
HOSTILE_PAGE = (
    "<p bnid=1>Cart</p><button bnid=2>Add milk</button>"
    "<script>document.body.setAttribute('data-ran', 'yes')</script>"
)


def browser_missing() -> str | None:
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        return "Chromium is not installed (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (uv sync --extra dev)"
    return None


@pytest.fixture
def playwright_browser():
    missing = browser_missing()
    if missing:
        if REQUIRED:
            pytest.fail(f"BIGACTION_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield browser
        browser.close()


def test_a_browser_signs_in_labels_and_the_label_reaches_annotations(
    playwright_browser, tmp_path
) -> None:
    data = tmp_path / "data"
    lake = LakeResource(landing_dir=str(tmp_path / "landing"), data_dir=str(data))
    add_users(lake.annotation_store, ["ana"])
    web = {**web_item(1, "telemetry/2025-05-14/run1"), "page_html": HOSTILE_PAGE}
    AnnotationStore(Database(lake.annotation_store)).load_items([web, turn_item(3)])
    with running_app(lake.annotation_store) as (host, port):
        base = f"http://{host}:{port}"
        page = playwright_browser.new_page()
        page.goto(f"{base}/items/1")
        assert page.url == f"{base}/login"  # no session, no item
        page.fill("input[name=username]", "ana")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        [cookie] = [c for c in page.context.cookies() if c["name"] == SESSION_COOKIE]
        assert cookie["secure"] and cookie["httpOnly"] and cookie["sameSite"] == "Strict"

        page.keyboard.press("Enter")  # "Next item"
        page.wait_for_url(f"{base}/items/*")
        frame = page.frame_locator("iframe.page")
        assert frame.locator("button").inner_text() == "Add milk"
        assert frame.locator("body").get_attribute("data-ran") is None  # its script never ran
        page.keyboard.press("c")  # correct
        page.wait_for_function("() => document.querySelector('.proactive-turn') !== null")
        page.keyboard.press("2")  # tick task 1 (keys count from 1)
        page.keyboard.press("a")  # accept the ticked tasks
        page.wait_for_url(f"{base}/?done=1")
        assert "Nothing left for you to label" in page.content()
        page.goto(f"{base}/labels")
        assert "telemetry/2025-05-14/run1#1" in page.content()

    everything = [*defs().assets, *defs().asset_checks]
    selection = dg.AssetSelection.assets("annotations")
    # in a thread of its own: this one still holds Playwright's event loop, which Dagster's
    # run would otherwise try (and fail) to shut down
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(dg.materialize, everything, resources={"lake": lake}, selection=selection)
        assert run.result().success
    rows = pq.read_table(data / "lake" / "reward" / "annotations" / "all.parquet").to_pylist()
    found = {(r["item_id"], r["verdict"], r["annotator_id"]) for r in rows}
    assert found == {
        ("telemetry/2025-05-14/run1#1", "correct", "a1"),
        ("proactive/t#3", "accepted_tasks", "a1"),
    }
    [turn] = [r for r in rows if r["item_kind"] == "proactive_turn"]
    assert turn["accepted_tasks"] == [1] and turn["help_needed"] is True
