"""A histogram of token lengths, counted in fixed-width bins and drawn as a standalone SVG."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 320
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 56, 16, 36, 48


@dataclass(frozen=True)
class Histogram:
    """Counts per bin; bin `i` holds values in `[i * width, (i + 1) * width)`."""

    width: int
    counts: list[int]

    @property
    def total(self) -> int:
        return sum(self.counts)


def nice_width(largest: int, bins: int) -> int:
    """A round bin width (1, 2 or 5 times a power of ten) giving at most `bins` bins."""
    raw = max(1.0, (largest + 1) / bins)
    power = 10 ** math.floor(math.log10(raw))
    for step in (1, 2, 5, 10):
        if step * power >= raw:
            return int(step * power)
    return int(10 * power)


def histogram(values: Iterable[int] | Mapping[int, int], bins: int = 20) -> Histogram:
    """Counts of `values` (or of a `{value: times}` mapping) in at most `bins` round bins."""
    tally = values if isinstance(values, Mapping) else Counter(values)
    if not tally:
        return Histogram(width=1, counts=[])
    width = nice_width(max(tally), bins)
    counts = [0] * (max(tally) // width + 1)
    for value, times in tally.items():
        counts[value // width] += times
    return Histogram(width=width, counts=counts)


def frame(title: str, x_label: str, y_label: str) -> list[str]:
    """The opening of a chart: canvas, title, both axes and their labels (the plot area is
    `MARGIN_*` inside `WIDTH` x `HEIGHT`); the caller adds its marks and `</svg>`."""
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    base = MARGIN_TOP + plot_h
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
        f'<line x1="{MARGIN_LEFT}" y1="{base}" x2="{WIDTH - MARGIN_RIGHT}" y2="{base}" '
        'stroke="black"/>',
        f'<line x1="{MARGIN_LEFT}" y1="{MARGIN_TOP}" x2="{MARGIN_LEFT}" y2="{base}" '
        'stroke="black"/>',
        f'<text x="{MARGIN_LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle">'
        f"{escape(x_label)}</text>",
        f'<text x="14" y="{MARGIN_TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {MARGIN_TOP + plot_h / 2})">{escape(y_label)}</text>',
    ]


def svg(hist: Histogram, title: str, unit: str = "tokens") -> str:
    """The histogram as an SVG document: one bar per bin, axes labelled, counts on the bars."""
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    base = MARGIN_TOP + plot_h
    parts = frame(title, f"{unit} (bins of {hist.width})", "examples")
    if not hist.counts:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no data</text>')
    else:
        tallest = max(hist.counts)
        bar_w = plot_w / len(hist.counts)
        for index, count in enumerate(hist.counts):
            h = plot_h * count / tallest
            x = MARGIN_LEFT + index * bar_w
            parts.append(
                f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{max(bar_w - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="#4c78a8"><title>{index * hist.width}–'
                f"{(index + 1) * hist.width - 1}: {count}</title></rect>"
            )
            if count:
                parts.append(
                    f'<text x="{x + bar_w / 2:.1f}" y="{base - h - 3:.1f}" '
                    f'text-anchor="middle" font-size="9">{count}</text>'
                )
        step = max(1, math.ceil(len(hist.counts) / 8))
        for index in range(0, len(hist.counts) + 1, step):
            x = MARGIN_LEFT + index * bar_w
            parts.append(
                f'<text x="{x:.1f}" y="{base + 14}" text-anchor="middle">'
                f"{index * hist.width}</text>"
            )
        parts.append(
            f'<text x="{MARGIN_LEFT - 4}" y="{MARGIN_TOP + 4}" text-anchor="end">{tallest}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
