"""Contracts of the reward tables: items to label, human labels, training examples."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

ITEM_KINDS = ("web_step", "proactive_turn")


class AnnotationItemSchema(pa.DataFrameModel):
    """One row per item people can label: a web-agent step or a proactive-assistant turn."""

    item_id: str = pa.Field(unique=True, description="`<episode id>#<event idx>`.")
    item_kind: str = pa.Field(isin=ITEM_KINDS, description="web_step or proactive_turn.")
    episode_id: str = pa.Field(description="The episode the item comes from.")
    dataset: str = pa.Field(description="Partition key of the episode's landing dataset.")
    payload: str = pa.Field(description="What the item page shows, JSON.")
    page_html: str = pa.Field(nullable=True, description="The cleaned page of a web step.")
    content_sha: str = pa.Field(description="sha256 of kind, payload and page.")

    class Config:
        name = "annotation_items"
        strict = True
        coerce = True


class AnnotationSchema(pa.DataFrameModel):
    """One row per human judgement: one annotator's latest label on one item."""

    annotation_id: str = pa.Field(unique=True, description="`<item id>@<annotator id>`.")
    item_id: str = pa.Field(description="The labelled item, `<episode id>#<event idx>`.")
    item_kind: str = pa.Field(isin=ITEM_KINDS, description="web_step or proactive_turn.")
    episode_id: str = pa.Field(description="The item's episode.")
    annotator_id: str = pa.Field(description="Opaque id of the annotator (`a<n>`), not a name.")
    verdict: str = pa.Field(
        isin=("correct", "incorrect", "unsure", "accepted_tasks", "rejected_all"),
        description="A web step's verdict; for a turn, whether any task was accepted.",
    )
    accepted_tasks: pl.List(pl.Int32) = pa.Field(
        nullable=True, description="Positions of the candidate tasks accepted (turns only)."
    )
    help_needed: bool = pa.Field(nullable=True, description="Help needed (turns only).")
    revision: pl.Int64 = pa.Field(unique=True, description="Store revision of the last change.")
    labelled_at: str = pa.Field(description="When the label was first saved (UTC, ISO 8601).")
    updated_at: str = pa.Field(description="When it last changed (UTC, ISO 8601).")

    class Config:
        name = "annotations"
        strict = True
        coerce = True


class RewardExampleSchema(pa.DataFrameModel):
    """One row per training example: a judge conversation or a preference pair."""

    example_id: str = pa.Field(unique=True, description="Starts with `<episode id>#<n>`.")
    kind: str = pa.Field(isin=("judge", "preference"), description="Which training set.")
    origin: str = pa.Field(isin=("bundled", "app"), description="Bundled data or the app.")
    item_kind: str = pa.Field(isin=ITEM_KINDS, description="What was judged.")
    category: str = pa.Field(
        nullable=True, description="MN/CR/CD/FA (judge); `<chosen>><rejected>` (proactive pairs)."
    )
    split: str = pa.Field(
        isin=("train", "test"),
        description="The source file's split; ProactiveAgent's draw without one.",
    )
    episode_id: str = pa.Field(description="Episode of the judged (or chosen) item.")
    item_id: str = pa.Field(nullable=True, description="The judged (or chosen) item.")
    rejected_item_id: str = pa.Field(nullable=True, description="A pair's rejected item.")
    votes: pl.List(pl.Boolean) = pa.Field(
        nullable=True, description="Per annotator, agreed with the proposal (judge rows)."
    )
    thought_source: str = pa.Field(
        nullable=True, description="Where the judge's thought came from (`template`)."
    )
    record: str = pa.Field(description="The LLaMA-Factory sharegpt record, JSON.")
    prompt_version: str = pa.Field(description="Version of the prompts in `reward.prompts`.")

    class Config:
        name = "reward_examples"
        strict = True
        coerce = True
