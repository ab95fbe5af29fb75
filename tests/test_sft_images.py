"""Screenshots in SFT examples: each format carries them as its consumer reads them, windows
carry their own images only, and each image costs its configured tokens."""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import BUNDLED_LANDING
from PIL import Image
from sft_turns import disagreements
from test_sft_assets import build, pipeline, write_files  # noqa: F401 - fixtures

from bigaction_assets.sft.conversation import IMAGE_NAME, build_conversation
from bigaction_assets.sft.counting import conversation_tokens
from bigaction_assets.sft.examples import (
    FORMAT_MARKUP,
    EpisodeSkipped,
    ExampleSettings,
    episode_examples,
)
from bigaction_assets.sft.image_files import PartitionImages, inline_images
from bigaction_assets.sft.llama_factory import sharegpt_rules
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_format import render_openhands
from bigaction_assets.sft.sharegpt_format import render_sharegpt
from bigaction_assets.sft.validate import openai_problems, rendering_problems
from bigaction_assets.sft.windows import split_into_windows

STEPS = 6
EPISODE = {
    "episode_id": "m2w/1", "dataset": "mind2web.t", "source": "mind2web",
    "task": "Book a flight to Chicago.", "task_completed": True,
}  # fmt: skip
PLACEHOLDER_LINE = re.compile(r"\[Image: images/([0-9a-f]+\.\w+)\]")


def screenshot(step: int) -> str:
    return f"{step:064x}.webp"


def web_episode(with_images: set[int] | None = None) -> list[dict[str, Any]]:
    """Mind2Web-shaped events: a page (with its screenshot) before each click, then the end."""
    events: list[dict[str, Any]] = []
    shown = set(range(STEPS)) if with_images is None else with_images
    for step in range(STEPS):
        page = {
            "idx": 2 * step,
            "kind": "web_observation",
            "actor": "environment",
            "url": f"https://example.com/{step}",
            "axtree": f"[{step}] button 'Next {step}'",
        }
        if step in shown:
            page[IMAGE_NAME] = screenshot(step)
        events.append(page)
        events.append({
            "idx": 2 * step + 1, "kind": "api_action", "actor": "agent", "function": "click",
            "kwargs": json.dumps({"bid": str(step)}), "description": f"Step {step}.",
        })  # fmt: skip
    return events


def conversation(**options: Any):
    return build_conversation(EPISODE, web_episode(), **options)


def openai_images(example: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, url) of every image part, in order."""
    return [
        (message["role"], part["image_url"]["url"])
        for message in example["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]


def test_each_format_carries_the_screenshots_its_consumer_reads():
    conv = conversation()
    names = [screenshot(step) for step in range(STEPS)]
    sharegpt = render_sharegpt(conv)
    assert sharegpt["images"] == [f"images/{name}" for name in names]
    placeholders = sum(entry["value"].count("<image>") for entry in sharegpt["conversations"])
    assert placeholders == STEPS and sharegpt_rules(sharegpt) == []
    openai = render_openai(conv)
    assert [url for _, url in openai_images(openai)] == [f"images/{name}" for name in names]
    assert {role for role, _ in openai_images(openai)} == {"user"}  # never a tool's
    assert openai_problems(openai) == []
    text = "\n".join(entry["value"] for entry in render_openhands(conv)["conversations"])
    assert PLACEHOLDER_LINE.findall(text) == names  # a line naming each, no image
    assert rendering_problems({"openai": openai, "sharegpt": sharegpt}) == []
    # read back, the three formats hold the same turns, each image where the others have it
    renderings = {"openai": openai, "sharegpt": sharegpt, "openhands": render_openhands(conv)}
    assert disagreements(renderings) == []
    broken = {**renderings, "sharegpt": {**sharegpt, "images": sharegpt["images"][::-1]}}
    assert disagreements(broken) != []


def test_a_result_that_shows_a_screenshot_is_followed_by_a_user_message_holding_it():
    messages = render_openai(conversation())["messages"]
    for before, after in itertools.pairwise(messages):
        if before["role"] == "tool":
            assert isinstance(before["content"], str)
            assert after["role"] == "user"
            assert [part["type"] for part in after["content"]] == ["image_url"]


def test_a_window_refers_only_to_the_images_it_carries():
    conv = conversation()
    windows = split_into_windows(conv, max_tokens=4_000, image_tokens=1_105)
    assert len(windows) > 1
    seen: list[str] = []
    for window in windows:
        carried = [name for turn in window.turns for name in turn.images]
        assert carried  # each step shows its page
        sharegpt, openai = render_sharegpt(window), render_openai(window)
        assert sharegpt["images"] == [f"images/{name}" for name in carried]
        assert sharegpt_rules(sharegpt) == []
        assert [url for _, url in openai_images(openai)] == [f"images/{n}" for n in carried]
        text = json.dumps(render_openhands(window))
        assert PLACEHOLDER_LINE.findall(text.replace("\\n", "\n")) == carried
        seen += carried
    assert set(seen) == {screenshot(step) for step in range(STEPS)}


def test_each_image_costs_its_configured_tokens():
    conv = conversation()
    text_only = build_conversation(EPISODE, web_episode(with_images=set()))
    for name in ("openai", "sharegpt"):
        base = conversation_tokens(text_only, (name,), image_tokens=500)
        # the openai results' images take a message of their own: its frame is counted too
        frames = 4 * (STEPS - 1) if name == "openai" else 0
        assert conversation_tokens(conv, (name,), image_tokens=500) == base + STEPS * 500 + frames
        assert conversation_tokens(conv, (name,), image_tokens=0) == base + frames
    cheap = split_into_windows(conv, max_tokens=4_000, image_tokens=100)
    dear = split_into_windows(conv, max_tokens=4_000, image_tokens=1_000)
    assert len(dear) > len(cheap)
    assert all(window.tokens <= 4_000 for window in [*cheap, *dear])


def test_examples_store_their_images_and_cost_and_count_within_the_context():
    settings = ExampleSettings(max_tokens=3_000, image_tokens=700)
    rows = episode_examples(EPISODE, web_episode(), {}, settings)
    assert len(rows) > 1
    for row in rows:
        assert row["image_tokens"] == 700 and row["images"]
        assert row["tokens"] <= 3_000
        sharegpt = json.loads(row["sharegpt"])
        assert sharegpt["images"] == [f"images/{name}" for name in row["images"]]


def test_text_only_sets_show_no_image():
    rows = episode_examples(EPISODE, web_episode(), {}, ExampleSettings(images=False))
    assert rows and all(row["images"] == [] for row in rows)
    assert all(
        b"<image>" not in row["sharegpt"] and b"image_url" not in row["openai"] for row in rows
    )


def test_a_text_holding_the_image_placeholder_keeps_the_episode_out():
    events = web_episode()
    events[1]["description"] = "The page shows an <image> tag."
    with pytest.raises(EpisodeSkipped) as skipped:
        episode_examples(EPISODE, events, {}, ExampleSettings())
    assert skipped.value.reason == FORMAT_MARKUP and "placeholder" in skipped.value.detail
    # without sharegpt, nothing reads the placeholder: the episode stays
    assert episode_examples(EPISODE, events, {}, ExampleSettings(formats=("openai",)))


@pytest.mark.parametrize(
    ("example", "problem"),
    [
        ({"conversations": [{"from": "human", "value": "<image>hi"},
                            {"from": "gpt", "value": "ok"}]},
         "0 images for 1 <image> placeholders"),
        ({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "ok"}],
          "images": ["a.png"]}, "1 images for 0 <image> placeholders"),
        ({"conversations": [{"from": "human", "value": "<image>"}, {"from": "gpt", "value": "ok"}],
          "images": [3]}, "images is not a list of paths"),
    ],
)  # fmt: skip
def test_llama_factory_pairs_every_placeholder_with_an_image(example, problem):
    assert problem in sharegpt_rules(example)


def _image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "tool", "tool_call_id": "c", "content": [_image("data:image/png;base64,AA")]}],
         "tool content is not text"),
        ([{"role": "assistant", "content": [_image("data:image/png;base64,AA")]}],
         "assistant content is not text"),
        ([{"role": "user", "content": [_image("data:image/gif;base64,AA")]}],
         "image of format 'gif'"),
        ([{"role": "user", "content": [_image("images/a.png")] * 65}], "65 images"),
        ([{"role": "user", "content": [{"type": "audio"}]}], "neither text nor an image"),
    ],
)  # fmt: skip
def test_openai_takes_images_in_user_messages_only(messages, problem):
    example = {"messages": [*messages, {"role": "assistant", "content": "ok"}], "tools": []}
    found = openai_problems(example)
    assert any(problem in text for text in found), found


def test_a_data_url_image_in_a_user_message_is_valid():
    url = "data:image/webp;base64," + base64.b64encode(b"RIFF").decode()
    example = {
        "messages": [
            {"role": "user", "content": [_image(url), {"type": "text", "text": "What now?"}]},
            {"role": "assistant", "content": "Click."},
        ],
        "tools": [],
    }
    assert openai_problems(example) == []


def test_the_training_files_carry_the_lake_s_screenshot_bytes(
    build,  # noqa: F811 - the fixtures imported above
    pipeline,  # noqa: F811
    dagster_lake,
    ephemeral_instance,
):
    dagster_lake.add_bundled("mind2web", "train_demo")
    shutil.copytree(
        BUNDLED_LANDING / "mind2web" / "train_demo.images",
        dagster_lake.landing / "mind2web" / "train_demo.images",
    )
    assert build("mind2web.train_demo").success
    write_files(pipeline, dagster_lake, ephemeral_instance)
    stored = pq.read_table(
        dagster_lake.root / "standardized" / "images" / "mind2web.train_demo.parquet"
    )
    lake_bytes = dict(
        zip(stored["image_sha"].to_pylist(), stored["bytes"].to_pylist(), strict=True)
    )
    out = dagster_lake.data / "sft"
    shown: set[str] = set()
    for path in (out / "sharegpt").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            example = json.loads(line)
            assert sharegpt_rules(example) == []
            for relative in example.get("images", []):
                image = out / "sharegpt" / relative  # LLaMA-Factory: relative to its folder
                assert image.read_bytes() == lake_bytes[image.stem]
                shown.add(image.stem)
    assert shown == set(lake_bytes)  # every screenshot of the demo is trained on
    # as LLaMA-Factory loads it: the JSON lines through `datasets`, each path joined to the
    # dataset folder (its media_dir) and opened as an image of the lake's size
    train = datasets.load_dataset(
        "json", data_files=str(out / "sharegpt" / "train.jsonl"), split="train"
    )
    sizes = dict(zip(stored["image_sha"].to_pylist(), stored["width"].to_pylist(), strict=True))
    opened = 0
    for example in train:
        for relative in example["images"] or []:
            with Image.open(out / "sharegpt" / relative) as image:
                assert image.width == sizes[Path(relative).stem]
                opened += 1
    assert opened
    info = json.loads((out / "sharegpt" / "dataset_info.json").read_text())
    assert all(entry["columns"].get("images") == "images" for entry in info.values())
    inlined = 0
    for path in (out / "openai").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            example = json.loads(line)
            assert openai_problems(example) == []
            for _, url in openai_images(example):
                media, data = url.removeprefix("data:").split(";base64,")
                decoded = base64.b64decode(data)
                assert media == "image/webp" and decoded in lake_bytes.values()
                inlined += 1
    assert inlined >= len(lake_bytes)
    assert (out / "openhands").is_dir()
    assert sorted(p.name for p in (out / "sharegpt" / "images").iterdir()) == sorted(
        f"{sha}.webp" for sha in lake_bytes
    )


def _gif_bytes() -> bytes:
    """A two-frame GIF: the first frame red, the second blue."""
    frames = [Image.new("P", (8, 6), color) for color in (1, 2)]
    for frame in frames:
        frame.putpalette([0, 0, 0, 255, 0, 0, 0, 0, 255] + [0] * 759)
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    return out.getvalue()


def test_a_gif_screenshot_reaches_openai_as_the_png_of_its_first_frame(tmp_path):
    """OpenAI takes no GIF: its example names the PNG the image becomes and carries that PNG;
    LLaMA-Factory, which reads a GIF, gets the lake's own bytes, and the episode stays in."""
    gif = _gif_bytes()
    sha = hashlib.sha256(gif).hexdigest()
    events = web_episode(with_images={0})
    events[0][IMAGE_NAME] = f"{sha}.gif"
    [row, *_] = episode_examples(EPISODE, events, {}, ExampleSettings())
    openai, sharegpt = json.loads(row["openai"]), json.loads(row["sharegpt"])
    assert [url for _, url in openai_images(openai)] == [f"images/{sha}.png"]
    assert openai_problems(openai) == [] and sharegpt["images"] == [f"images/{sha}.gif"]
    lake = tmp_path / "lake"
    (lake / "standardized" / "images").mkdir(parents=True)
    table = pa.table({"image_sha": [sha], "bytes": [gif]})
    pq.write_table(table, lake / "standardized" / "images" / "mind2web.t.parquet")
    images = PartitionImages(lake, "mind2web.t")
    inlined = json.loads(inline_images(row["openai"], row["images"], images))
    [(_, url)] = openai_images(inlined)
    media, data = url.removeprefix("data:").split(";base64,")
    assert media == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(data))) as png:
        assert png.format == "PNG" and png.size == (8, 6)
        assert png.convert("RGB").getpixel((0, 0)) == (255, 0, 0)  # the first frame's red
    assert images.read(f"{sha}.gif") == gif  # the sharegpt folder's file: the lake's bytes
