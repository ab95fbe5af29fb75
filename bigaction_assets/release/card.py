"""The dataset card (`README.md`): YAML metadata the Hub reads, statistics and provenance."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bigaction_assets.release.images import CONFIG as IMAGES_CONFIG
from bigaction_assets.release.images import FEATURES as IMAGE_FEATURES
from bigaction_assets.release.provenance import DatasetProvenance
from bigaction_assets.sft.sharegpt_format import dataset_entry

SIZE_CATEGORIES = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)  # fmt: skip
CONFIG_DESCRIPTIONS = {
    "episodes": "one row per episode (a task attempted from start to end), standardized",
    "events": "one row per (episode_id, idx): an observation or an action, in order",
    "images": (
        "one row per distinct image (screenshot) of the events, stored once: `image` (an "
        "`Image` feature, decoded by `datasets`), `image_sha` (what `events.image_sha` and "
        "`answer_image_sha` hold), `format`, `width`, `height`, `byte_size`"
    ),
    "sft_openai": (
        "OpenAI chat format for OpenAI-style fine-tuning and TRL: `messages` (role, content, "
        "`tool_calls` with JSON-string arguments, `tool_call_id`; fields a message does not "
        "have are null) and `tools` (the functions offered, as a JSON string)"
    ),
    "sft_sharegpt": (
        "LLaMA-Factory sharegpt: `conversations` (from, value), `system`, `tools` (JSON "
        "string); loads in LLaMA-Factory from the Hub with the entry below"
    ),
    "sft_openhands": (
        "OpenHands text (ADP's SFT form, element ids whole): `conversations` (from, value) "
        "and `system`"
    ),
    "reward_judge": (
        "judge SFT from human verdicts (ProactiveAgent's rules), LLaMA-Factory sharegpt: "
        "`conversations` (the observations and proposed task, then the answer "
        '`{"thought", "judgement"}`) and `system`; `episode_id` joins to `episodes`'
    ),
    "reward_preference": (
        "preference pairs from human verdicts, LLaMA-Factory ranking data: `conversations`, "
        "`chosen`, `rejected` (each from, value) and `system`; `episode_id` (chosen) and "
        "`rejected_item_id` join to `episodes`"
    ),
}


@dataclass
class CardData:
    """Everything the card says; built from the release, so the card is deterministic."""

    pretty_name: str
    license: str
    rows: dict[str, dict[str, int]]
    """Rows per config and split (splits with no rows are left out of `configs`)."""
    by_source: dict[str, dict[str, dict[str, int]]]
    """Rows per config, source and split."""
    histogram_file: str
    token_summary: dict[str, int]
    provenance: list[DatasetProvenance]
    excluded: list[str] = field(default_factory=list)
    pipeline: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    repo_id: str | None = None
    """The Hub repository the release goes to; the examples name `<repo>` without one."""
    image_summary: dict[str, Any] = field(default_factory=dict)
    """Images released: `images`, `bytes`, `by_format`."""


def data_files_pattern(config: str, split: str) -> str:
    """Every partition's shards of one split: `data/<config>/<partition>/<split>-*.parquet`."""
    return f"data/{config}/*/{split}-*.parquet"


def size_category(rows: int) -> str:
    return next((name for limit, name in SIZE_CATEGORIES if rows < limit), "n>1B")


def _q(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid YAML double-quoted scalar


def front_matter(card: CardData) -> str:
    largest = max((sum(splits.values()) for splits in card.rows.values()), default=0)
    lines = ["---", f"pretty_name: {_q(card.pretty_name)}", f"license: {_q(card.license)}"]
    if card.license == "other":
        lines.append('license_name: "mixed"')
    lines += [
        "task_categories:", '- "text-generation"',
        "tags:", '- "agents"', '- "web-agents"', '- "sft"',
        "size_categories:", f"- {_q(size_category(largest))}",
    ]  # fmt: skip
    if any(card.rows.get(IMAGES_CONFIG, {}).values()):
        lines += dataset_info()
    lines.append("configs:")
    for config, splits in card.rows.items():
        present = [split for split, rows in splits.items() if rows]
        if not present:
            continue
        lines += [f"- config_name: {_q(config)}", "  data_files:"]
        for split in present:
            lines += [
                f"  - split: {_q(split)}",
                f"    path: {_q(data_files_pattern(config, split))}",
            ]
    lines.append("---")
    return "\n".join(lines)


def dataset_info() -> list[str]:
    """The `images` config's features for the Hub, as the Parquet files describe them too: the
    `image` column is an `Image` (the viewer shows it), not a struct of bytes and a path."""
    lines = ["dataset_info:", f"- config_name: {_q(IMAGES_CONFIG)}", "  features:"]
    for name, feature in IMAGE_FEATURES.items():
        dtype = "image" if feature["_type"] == "Image" else feature["dtype"]
        lines += [f"  - name: {_q(name)}", f"    dtype: {_q(dtype)}"]
    return lines


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def statistics(card: CardData) -> list[str]:
    lines = ["## Statistics", ""]
    for config, by_source in card.by_source.items():
        splits = list(card.rows[config])
        lines += [f"### `{config}`", "", CONFIG_DESCRIPTIONS.get(config, config) + ".", ""]
        rows = [[s, *(by_source[s].get(x, 0) for x in splits)] for s in sorted(by_source)]
        rows.append(["**total**", *(card.rows[config][x] for x in splits)])
        lines += [*_table(["source", *splits], rows), ""]
    shots = card.image_summary
    if shots.get("images"):
        formats = ", ".join(f"{n} {f}" for f, n in sorted(shots["by_format"].items()))
        lines += [
            f"{shots['images']} images ({formats}), {shots['bytes']:,} bytes, in `images`.",
            "",
        ]
    summary = card.token_summary
    lines += [
        "### Token lengths of the SFT examples",
        "",
        f"{summary.get('examples', 0)} examples, mean {summary.get('mean', 0)} tokens, "
        f"longest {summary.get('max', 0)} (cl100k_base).",
        "",
        f"![Histogram of SFT example token lengths]({card.histogram_file})",
        "",
    ]
    return lines


def provenance(card: CardData) -> list[str]:
    lines = ["## Provenance", "", "Source datasets, with the sha256 of each landing file:", ""]
    rows = [
        [f"`{p.dataset}`", p.source_format, f"`{f.path}`", f.bytes, f"`{f.sha256}`"]
        for p in card.provenance
        for f in p.files or []
    ] + [
        [f"`{p.dataset}`", p.source_format, "_not found_", "", ""]
        for p in card.provenance
        if not p.files
    ]
    lines += [*_table(["dataset", "format", "landing file", "bytes", "sha256"], rows), ""]
    if card.excluded:
        lines += ["Excluded from this release (by the release config; e.g. licenses that forbid "
                  "redistribution):", ""]  # fmt: skip
        lines += [f"- `{name}`" for name in card.excluded] + [""]
    lines += ["Pipeline:", ""] + [f"- {k}: `{v}`" for k, v in card.pipeline.items()] + [""]
    lines += ["Release config:", "", "```json", json.dumps(card.config, indent=2, sort_keys=True)]
    return [*lines, "```", ""]


def usage(repo_id: str | None) -> list[str]:
    """How to load the SFT configs with `datasets`, TRL and LLaMA-Factory."""
    repo = repo_id or "<repo>"
    hub_entry = dataset_entry({"hf_hub_url": repo, "subset": "sft_sharegpt", "split": "train"})
    return [
        "## Use it",
        "",
        "```python",
        "import json",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("{repo}", "sft_openai", split="train")',
        'example = ds[0]  # example["messages"]: the chat; json.loads(example["tools"]): the tools',
        "```",
        "",
        "LLaMA-Factory reads `sft_sharegpt` from the Hub with this `dataset_info.json` entry:",
        "",
        "```json",
        json.dumps({"bigaction_sft": hub_entry}, indent=2),
        "```",
        "",
    ]


def render_card(card: CardData) -> str:
    """The whole `README.md`."""
    body = [
        f"# {card.pretty_name}",
        "",
        "Web-agent trajectories standardized from public datasets (a superset of the Agent Data "
        "Protocol format), and supervised fine-tuning examples rendered from them in three "
        "formats. Each source dataset keeps its own license; see Provenance.",
        "",
        *usage(card.repo_id),
        *statistics(card),
        *provenance(card),
    ]
    return front_matter(card) + "\n\n" + "\n".join(body)
