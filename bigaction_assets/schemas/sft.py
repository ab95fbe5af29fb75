"""Contract of the SFT table: one row per training example, in every format."""

from __future__ import annotations

from itertools import combinations

import pandera.polars as pa
import polars as pl

from bigaction_assets.sft.formats import SFT_FORMATS, THOUGHT_KINDS  # noqa: F401 - re-exported

THOUGHT_SOURCES = tuple(
    "+".join(kinds)
    for size in range(1, len(THOUGHT_KINDS) + 1)
    for kinds in combinations(THOUGHT_KINDS, size)
)


class SftExampleSchema(pa.DataFrameModel):
    """One row per training example: a window of an episode, rendered in every SFT format."""

    example_id: str = pa.Field(unique=True, description="`<episode_id>#<window>`.")
    episode_id: str = pa.Field(description="The standardized episode it comes from.")
    dataset: str = pa.Field(description="Partition key of the landing dataset.")
    source: str = pa.Field(description="Dataset the episode belongs to.")
    window: pl.Int32 = pa.Field(ge=0, description="Window number within the episode, from 0.")
    windows: pl.Int32 = pa.Field(ge=1, description="How many windows the episode was cut into.")
    split: str = pa.Field(description="train / validation / test, by a hash of the episode id.")
    tokens: pl.Int32 = pa.Field(
        ge=0, description="cl100k_base tokens of its longest format, as a chat model sees it."
    )
    context_tokens: pl.Int32 = pa.Field(gt=0, description="Context length it had to fit.")
    turns: pl.Int32 = pa.Field(ge=0, description="Messages after the system prompt.")
    thought_source: str = pa.Field(
        isin=THOUGHT_SOURCES,
        description="Where its actions' thoughts came from: the kinds they show, joined by + "
        "(recorded, adp_generated, generated; none: an action without one).",
    )
    content_sha: str = pa.Field(description="Hash of the trained-on content, for dedup.")
    images: pl.List(pl.Utf8) = pa.Field(
        description="File names (`<image_sha>.<format>`) of the screenshots it shows, in the "
        "order its renderings show them; `sft_files` writes each under `images/`."
    )
    image_tokens: pl.Int32 = pa.Field(
        ge=0, description="What one screenshot costs in `tokens` (openai and sharegpt)."
    )
    openai: str = pa.Field(
        nullable=True, description="OpenAI chat example: {messages, tools}, JSON (null: not made)."
    )
    sharegpt: str = pa.Field(
        nullable=True, description="LLaMA-Factory sharegpt example, JSON (null: not made)."
    )
    openhands: str = pa.Field(
        nullable=True, description="OpenHands text example (ADP's SFT form), JSON (null: not made)."
    )

    class Config:
        name = "sft_examples"
        strict = True
        coerce = True
