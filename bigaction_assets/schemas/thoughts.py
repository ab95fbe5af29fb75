"""Contract of the thoughts table: one row per (episode, action, model, prompt)."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

# generated: the model's thought passed validation; failed: it did not (or the call failed),
# with the reason; deferred: the run's budget ran out before it was asked (next run asks).
THOUGHT_STATUSES = ("generated", "failed", "deferred")
SHA256_HEX = r"^[0-9a-f]{64}$"


class ThoughtSchema(pa.DataFrameModel):
    """One row per agent action without a recorded thought, for the configured model."""

    episode_id: str = pa.Field(description="The standardized episode.")
    idx: pl.Int32 = pa.Field(ge=0, description="Position of the action in the episode.")
    dataset: str = pa.Field(description="Partition key of the landing dataset.")
    action_kind: str = pa.Field(
        isin=("api_action", "code_action", "message_action"), description="Kind of action."
    )
    model: str = pa.Field(description="Model that was asked.")
    prompt_version: str = pa.Field(description="Version of the prompt templates.")
    prompt_sha: str = pa.Field(str_matches=SHA256_HEX, description="sha256 of the messages.")
    params_sha: str = pa.Field(str_matches=SHA256_HEX, description="sha256 of the sampling.")
    status: str = pa.Field(isin=THOUGHT_STATUSES, description="generated, failed or deferred.")
    thought: str = pa.Field(nullable=True, description="The thought; only when generated.")
    failure_reason: str = pa.Field(nullable=True, description="Why it failed, as a code.")
    failure_detail: str = pa.Field(nullable=True, description="Why it failed, for a person.")
    prompt_tokens: pl.Int64 = pa.Field(ge=0, description="Tokens in, as the server counted.")
    completion_tokens: pl.Int64 = pa.Field(ge=0, description="Tokens out, as counted.")
    cost_usd: pl.Float64 = pa.Field(ge=0, description="Cost from the price table.")

    class Config:
        name = "thoughts"
        strict = True
        coerce = True
        unique = ["episode_id", "idx", "model", "prompt_sha"]  # noqa: RUF012 - pandera reads it

    @pa.dataframe_check
    def thought_only_when_generated(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """A generated row holds a thought and no failure; any other row holds no thought."""
        generated = pl.col("status") == "generated"
        has_thought = pl.col("thought").is_not_null() & (pl.col("thought").str.len_chars() > 0)
        return data.lazyframe.select(
            pl.when(generated)
            .then(has_thought & pl.col("failure_reason").is_null())
            .otherwise(pl.col("thought").is_null())
        )
