"""The leaderboard as a grouped bar chart (SVG): one group per metric, one bar per model."""

from __future__ import annotations

from html import escape
from typing import Any

from bigaction_assets.release.histogram import (
    HEIGHT,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    MARGIN_RIGHT,
    MARGIN_TOP,
    WIDTH,
    frame,
)

CHART_METRICS = (
    ("element_accuracy_macro", "element acc."),
    ("op_f1_macro", "operation F1"),
    ("op_token_f1_macro", "op. token F1"),
    ("step_success_macro", "step success"),
    ("task_success", "task success"),
)
PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d")


def run_name(row: dict[str, Any]) -> str:
    """A model and the mode it was scored in, as the legend names it."""
    return f"{row['model']} ({row['mode']})" if row.get("mode") else str(row["model"])


def leaderboard_svg(rows: list[dict[str, Any]], title: str) -> str:
    """Bars of each model's scores (0 to 1), metrics side by side, with a legend of models."""
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    base = MARGIN_TOP + plot_h
    parts = frame(title, "macro averages over tasks", "score")
    parts.append(f'<text x="{MARGIN_LEFT - 4}" y="{MARGIN_TOP + 4}" text-anchor="end">1.0</text>')
    if not rows:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no data</text>')
    group_w = plot_w / len(CHART_METRICS)
    bar_w = (group_w - 12) / max(len(rows), 1)
    for group, (metric, name) in enumerate(CHART_METRICS):
        left = MARGIN_LEFT + group * group_w + 6
        for index, row in enumerate(rows):
            value = float(row[metric])
            h = plot_h * value
            x = left + index * bar_w
            colour = PALETTE[index % len(PALETTE)]
            parts.append(
                f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{max(bar_w - 2, 1):.1f}" '
                f'height="{h:.1f}" fill="{colour}"><title>{escape(run_name(row))} {name}: '
                f"{value:.3f}</title></rect>"
            )
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{base - h - 3:.1f}" text-anchor="middle" '
                f'font-size="9">{value:.2f}</text>'
            )
        parts.append(
            f'<text x="{left + (group_w - 12) / 2:.1f}" y="{base + 14}" '
            f'text-anchor="middle">{name}</text>'
        )
    for index, row in enumerate(rows):
        y = MARGIN_TOP + 4 + index * 14
        colour = PALETTE[index % len(PALETTE)]
        parts.append(
            f'<rect x="{WIDTH - MARGIN_RIGHT - 150}" y="{y - 8}" width="10" height="10" '
            f'fill="{colour}"/><text x="{WIDTH - MARGIN_RIGHT - 136}" y="{y + 1}">'
            f"{escape(run_name(row))}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
