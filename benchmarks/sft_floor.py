"""The floor under `sft_examples`: what rendering costs with no windows and no checks.

    .venv/bin/python benchmarks/sft.py --dataset swe-smith --episodes 5000 --workers 1
    .venv/bin/python benchmarks/sft_floor.py --lake benchmarks/out/sft/swe-smith-5000/data/lake

On a lake the SFT benchmark built, it takes the first `--chunks` chunks of episodes as the stage
reads them and times, in turn in one process, the stage's own rendering of each chunk
(`render_chunk`: windows, the three formats, the in-stage checks, the Arrow table) and the
floor: the same rows read, observations made and conversations built, then each conversation
rendered whole in the three formats, serialized, keyed, and put in Arrow columns. Every part
of the floor is work any example needs, whatever the windows and checks cost; it prints CPU
milliseconds per episode for each. With `--adp-checkout` (as in `sft.py`) each round also runs
ADP's converter over the benchmark's landing file and prints its CPU milliseconds per
trajectory, whole process, and half of that: what issue 13's 2x per core leaves for ours.

    .venv/bin/python benchmarks/sft_floor.py --lake benchmarks/out/sft/swe-smith-5000/data/lake \
        --adp-checkout /path/to/agent-data-protocol --dataset swe-smith
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from bigaction_assets.episodes.chunks import EpisodeChunk
from bigaction_assets.episodes.reader import iter_chunks
from bigaction_assets.gc_pause import collection_paused
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.sft import SftExampleSchema
from bigaction_assets.sft.conversation import MissingTask, build_conversation
from bigaction_assets.sft.examples import RENDERERS, ExampleSettings, content_key
from bigaction_assets.sft.observations import (
    make_observation_renderer,
    observations_ahead,
    shown_ahead,
)
from bigaction_assets.sft.parallel import render_chunk
from bigaction_assets.sft.turns import Conversation
from bigaction_assets.sft.worker_start import start_worker

PARTS = ("rows", "observations", "conversations", "renderings", "arrow")


def up_to_the_last_action(conversation: Conversation) -> Conversation:
    """The conversation as one window: what follows its last assistant turn is in no window."""
    turns = conversation.turns
    last = max((k for k, turn in enumerate(turns) if turn.role == "assistant"), default=-1)
    return replace(conversation, turns=turns[: last + 1])


def floor_rows(
    chunk: EpisodeChunk, settings: ExampleSettings, seconds: dict[str, float]
) -> list[dict[str, Any]]:
    """The chunk's episodes each rendered whole (no windows, no checks): its id, content key
    and renderings, as `sft_examples` stores them. Adds the CPU time of each part to
    `seconds`."""
    clock = time.process_time
    with collection_paused():  # as `render_chunk` does
        started = clock()
        episodes = list(chunk.episode_rows())
        read = clock()
        shown = observations_ahead(
            ((events, pages) for _, events, pages in episodes),
            settings.observation_tokens,
            settings.representation,
        )
        made = clock()
        conversations = []
        for record, events, pages in episodes:
            render = make_observation_renderer(
                pages, settings.observation_tokens, settings.representation
            )
            try:
                conversation = build_conversation(
                    record,
                    events,
                    render_observation=shown_ahead(shown, render),
                    images=settings.images,
                )
            except MissingTask:
                continue
            conversations.append(up_to_the_last_action(conversation))
        built = clock()
        rows = [
            {
                "episode_id": conversation.episode_id,
                "content_sha": content_key(conversation),
                **{name: orjson.dumps(render(conversation)) for name, render in RENDERERS.items()},
            }
            for conversation in conversations
        ]
        rendered = clock()
        pa.table({name: [row[name] for row in rows] for name in rows[0]} if rows else {})
        done = clock()
    marks = [started, read, made, built, rendered, done]
    for part, begin, end in zip(PARTS, marks, marks[1:], strict=False):
        seconds[part] = seconds.get(part, 0.0) + end - begin
    return rows


def first_chunks(lake: Path, key: str, count: int) -> Iterator[EpisodeChunk]:
    for number, chunk in enumerate(iter_chunks(lake, key, with_generated_thoughts=True)):
        if number >= count:
            return
        yield chunk


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--lake", type=Path, required=True)
    parser.add_argument("--key", default="adp.sft_bench", help="the dataset partition")
    parser.add_argument("--chunks", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--adp-checkout", type=Path, help="time ADP's converter each round too")
    parser.add_argument("--adp-python", type=Path, help="the Python of the converter")
    parser.add_argument("--dataset", help="the dataset the lake scaled (synatra, swe-smith)")
    args = parser.parse_args()
    work = args.lake.resolve().parents[1]  # <out>/<name>-<episodes>/data/lake
    landing_file = work / "landing" / Path(*args.key.split(".", 1)).with_suffix(".jsonl")
    reference = None
    if args.adp_checkout:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from adp_converter import ReferenceRuns

        reference = ReferenceRuns(args.adp_checkout, args.adp_python, args.dataset, work)
    start_worker()
    chunks = list(first_chunks(args.lake, args.key, args.chunks))
    if not chunks:
        sys.exit(f"no episodes of {args.key} in {args.lake}")
    episodes = sum(len(chunk) for chunk in chunks)
    settings, schema = ExampleSettings(), arrow_schema(SftExampleSchema)
    for chunk in chunks:  # once first, so neither side pays for filling the count memo
        render_chunk(chunk, settings, schema)
    adp = ["ADP ms/trajectory", "half of it"] if reference else []
    print(" | ".join(["round", "episodes", *adp, "stage ms/episode", "floor ms/episode", *PARTS]))
    for number in range(1, args.rounds + 1):
        if reference:
            run = reference.run(landing_file)
            adp = [1000 * run.cpu / run.trajectories, 500 * run.cpu / run.trajectories]
        started = time.process_time()
        for chunk in chunks:
            render_chunk(chunk, settings, schema)
        stage = time.process_time() - started
        seconds: dict[str, float] = {}
        for chunk in chunks:
            floor_rows(chunk, settings, seconds)
        per_episode = [1000 * seconds[part] / episodes for part in PARTS]
        figures = [number, episodes, *adp, 1000 * stage / episodes, sum(per_episode), *per_episode]
        print(" | ".join(f"{f:.2f}" if isinstance(f, float) else str(f) for f in figures))


if __name__ == "__main__":
    main()
