"""DOM cleaning for web benchmarks: raw HTML to a compact tree of salient elements and texts."""

from bigaction_assets.dom.render import render, render_pruned
from bigaction_assets.dom.tree import Element, Page, Text, clean_page

__all__ = ["Element", "Page", "Text", "clean_page", "render", "render_pruned"]
