"""The bundled landing samples as standardized episodes, for tests of the SFT core."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from conftest import run_ingest

from bigaction_assets.sources.adp import ADAPTER as ADP
from bigaction_assets.sources.mind2web import ADAPTER as MIND2WEB

LANDING = Path(__file__).resolve().parents[1] / "landing"
Sample = tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, str]]


@cache
def bundled_episodes() -> tuple[Sample, ...]:
    """(dataset, episode, its events, pages by html_sha) for every bundled ADP and Mind2Web
    episode, ingested the way the assets do it."""
    files = [(ADP, path) for path in sorted((LANDING / "adp").glob("*.json"))]
    files.append((MIND2WEB, LANDING / "mind2web" / "train_demo.json"))
    samples = []
    for adapter, path in files:
        ingested = run_ingest(adapter, path.stem, [path], LANDING)
        pages = {
            row["html_sha"]: row["cleaned_html"] or row["raw_html"]
            for row in ingested.rows("dom_snapshots")
        }
        by_episode: dict[str, list[dict[str, Any]]] = {}
        for event in ingested.rows("events"):
            by_episode.setdefault(event["episode_id"], []).append(event)
        for ep in ingested.rows("episodes"):
            samples.append((path.stem, ep, by_episode.get(ep["episode_id"], []), pages))
    return tuple(samples)
