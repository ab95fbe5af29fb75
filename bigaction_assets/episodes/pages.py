"""Pages of one partition's `dom_snapshots` by `html_sha`, read a row group at a time.

Pages are content-addressed and written in the order they first appear, so their hashes say
nothing of where they are: a query by hash scans the whole file, for every batch of episodes.
The reader learns once where each page is (its hash column only), then reads just the row
groups a batch needs, cleaned HTML first and raw HTML only for pages that have no cleaned form.
The row group read last is kept: consecutive episodes mostly show pages written together.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# A page's place as one int: row group << _ROW_BITS | row within it (no tuple per page).
_ROW_BITS = 32


def _key(sha: str) -> bytes:
    """32 bytes for a sha256 in hex (every adapter's page key); any other text as it is."""
    try:
        return bytes.fromhex(sha)
    except ValueError:
        return sha.encode()


class PageReader:
    """`reader.pages(shas)` -> {html_sha: cleaned HTML, else raw HTML} for the known shas."""

    def __init__(self, source: Path | pq.ParquetFile | None) -> None:
        """`source`: the dom_snapshots partition (a path, or a reader from
        lake_reader.open_parquet); None or a missing path: no pages."""
        if isinstance(source, Path):
            source = pq.ParquetFile(source) if source.exists() else None
        self._file = source
        self._where: dict[bytes, int] = {}
        self._cached: tuple[int, pa.Table] | None = None
        if self._file is None:
            return
        for group in range(self._file.num_row_groups):
            shas = self._file.read_row_group(group, columns=["html_sha"]).column(0)
            for row, sha in enumerate(shas.to_pylist()):
                self._where[_key(sha)] = group << _ROW_BITS | row

    def _group(self, group: int) -> pa.Table:
        if self._cached is None or self._cached[0] != group:
            assert self._file is not None
            self._cached = (group, self._file.read_row_group(group, columns=["cleaned_html"]))
        return self._cached[1]

    def pages(self, shas: Iterable[str]) -> dict[str, str]:
        by_group: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for sha in shas:
            place = self._where.get(_key(sha))
            if place is not None:
                by_group[place >> _ROW_BITS].append((place & ((1 << _ROW_BITS) - 1), sha))
        found: dict[str, str] = {}
        for group, wanted in sorted(by_group.items()):
            rows = [row for row, _ in wanted]
            cleaned = self._group(group).column(0).take(rows).to_pylist()
            missing = [k for k, html in enumerate(cleaned) if html is None]
            if missing:
                assert self._file is not None
                raw = self._file.read_row_group(group, columns=["raw_html"]).column(0)
                fill = raw.take([rows[k] for k in missing]).to_pylist()
                for k, html in zip(missing, fill, strict=True):
                    cleaned[k] = html
            for (_, sha), html in zip(wanted, cleaned, strict=True):
                if html is not None:
                    found[sha] = html
        return found
