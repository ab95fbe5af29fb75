"""Forget requests applied where data enters the lake: a record of a forgotten sender is
withheld, and counted, before anything stores it, whichever way it arrives (a batch landed
before the request, a landing file restored from a backup, a raw table not yet erased)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.privacy.erasure import Forgotten
from bigaction_assets.privacy.register import load_forgotten

# The name the count goes by in metadata and tallies: withheld, not rejected (nothing is wrong
# with the record) and not dropped silently.
WITHHELD = "records_of_forgotten_senders"


class SenderFilter:
    """Tells a record of a forgotten sender by its text, as the erasure does in telemetry
    partitions: the text holds one of their pseudonyms or one of their runs' (every landed
    line carries its sender's and its run's, even one too damaged to read)."""

    def __init__(self, forgotten: Forgotten | None = None) -> None:
        pattern = forgotten.text_pattern() if forgotten else ""
        self._pattern = re.compile(pattern.encode("ascii")) if pattern else None
        self.withheld = 0
        """How many records `keep` has withheld so far."""

    def __bool__(self) -> bool:
        return self._pattern is not None

    def holds(self, text: str | bytes | None) -> bool:
        """Whether a record's text is a forgotten sender's."""
        if self._pattern is None or text is None:
            return False
        data = text.encode("utf-8", errors="surrogatepass") if isinstance(text, str) else text
        return self._pattern.search(data) is not None

    def withholds(self, text: str | bytes | None) -> bool:
        """`holds`, counting the record as withheld when it does."""
        held = self.holds(text)
        self.withheld += held
        return held

    def keep(
        self, rows: Iterable[dict[str, Any]], column: str = "text"
    ) -> Iterator[dict[str, Any]]:
        """The rows whose `column` holds no forgotten sender's text; the others are counted."""
        return (row for row in rows if not self.withholds(row.get(column)))


def sender_filter(adapter: object, lake: Path | LakeRoot, landing: Path) -> SenderFilter:
    """The filter for a dataset of `adapter`: every forgotten sender (requested, or kept as a
    tombstone) for adapters whose records are people's (`holds_personal_data`), else none, as
    public datasets carry no sender's pseudonym."""
    if not getattr(adapter, "holds_personal_data", False):
        return SenderFilter()
    return SenderFilter(load_forgotten(lake, landing))
