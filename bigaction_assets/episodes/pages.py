"""Pages of one partition's `dom_snapshots` by `html_sha`, read a row group at a time.

Pages are content-addressed and written in the order they first appear, so their hashes say
nothing of where they are: a query by hash scans the whole file, for every batch of episodes.
The reader learns once where each page is (its hash column only), then reads just the row
groups a batch needs: for SFT, cleaned HTML first and raw HTML only for pages that have no
cleaned form; for the benchmark, both; for an ADP export, raw HTML. A row group of small pages
is read whole and kept: consecutive episodes mostly show pages written together. A large one
(raw HTML runs to megabytes a page) is read a few rows at a time, keeping only the wanted rows.
Memory follows a small row group or a few large pages, never the file.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# A page's place as one int: row group << _ROW_BITS | row within it (no tuple per page).
_ROW_BITS = 32
# Rows decoded at once where only some rows of a large row group are wanted: raw pages run to
# megabytes each. A row group of at most WHOLE_GROUP_BYTES (small pages) is read whole and kept.
ROWS_PER_READ = 16
WHOLE_GROUP_BYTES = 16 * 2**20


def _key(sha: str) -> bytes:
    """32 bytes for a sha256 in hex (every adapter's page key); any other text as it is."""
    try:
        return bytes.fromhex(sha)
    except ValueError:
        return sha.encode()


class PageReader:
    """A partition's pages by hash: `pages` for what SFT shows, `raw_and_cleaned` for the
    benchmark, `raw` for an ADP export."""

    def __init__(self, source: Path | pq.ParquetFile | None) -> None:
        """`source`: the dom_snapshots partition (a path, or a reader from
        lake_reader.open_parquet); None or a missing path: no pages."""
        if isinstance(source, Path):
            source = pq.ParquetFile(source) if source.exists() else None
        self._file = source
        self._where: dict[bytes, int] = {}
        # per set of columns, the small row group read last, whole: (row group, its columns)
        self._kept: dict[tuple[str, ...], tuple[int, pa.Table]] = {}
        if self._file is None:
            return
        for group in range(self._file.num_row_groups):
            shas = self._file.read_row_group(group, columns=["html_sha"]).column(0)
            for row, sha in enumerate(shas.to_pylist()):
                self._where[_key(sha)] = group << _ROW_BITS | row

    def _by_group(self, shas: Iterable[str]) -> list[tuple[int, list[tuple[int, str]]]]:
        """The known shas as (row group, [(row, sha)]), in file order."""
        by_group: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for sha in shas:
            place = self._where.get(_key(sha))
            if place is not None:
                by_group[place >> _ROW_BITS].append((place & ((1 << _ROW_BITS) - 1), sha))
        return sorted(by_group.items())

    def raw_and_cleaned(self, shas: Iterable[str]) -> dict[str, tuple[str | None, str | None]]:
        """{html_sha: (raw HTML, cleaned HTML)} for the known shas: what the benchmark shows.
        Only the wanted rows are kept from each row group, read a few rows at a time."""
        found = self._columns(shas, ("raw_html", "cleaned_html"))
        return {sha: (raw, cleaned) for sha, (raw, cleaned) in found.items()}

    def raw(self, shas: Iterable[str]) -> dict[str, str | None]:
        """{html_sha: raw HTML} for the known shas: what an ADP export writes back."""
        return {sha: values[0] for sha, values in self._columns(shas, ("raw_html",)).items()}

    def _columns(self, shas: Iterable[str], columns: tuple[str, ...]) -> dict[str, tuple]:
        found: dict[str, tuple] = {}
        for group, wanted in self._by_group(shas):
            rows = self._take(group, [row for row, _ in wanted], columns)
            for row, sha in wanted:
                found[sha] = rows[row]
        return found

    def _take(self, group: int, rows: list[int], columns: tuple[str, ...]) -> dict[int, tuple]:
        """{row: its values of `columns`} for `rows` of a row group. A row group whose columns
        hold at most `WHOLE_GROUP_BYTES` is read whole and kept (small pages: one read serves
        the batches after it); a larger one is read `ROWS_PER_READ` rows at a time, keeping only
        the wanted rows: read whole (and grown into its column) it would take about twice its
        size, ~130 MB for the ~64 MB row groups of raw pages ingest writes."""
        assert self._file is not None
        wanted = sorted(set(rows))
        if self._bytes(group, columns) <= WHOLE_GROUP_BYTES:
            kept = self._kept.get(columns)
            if kept is None or kept[0] != group:
                self._kept.pop(columns, None)  # let the old group go before the new one is read
                kept = self._kept[columns] = (
                    group,
                    self._file.read_row_group(group, list(columns)),
                )
            return self._picked(kept[1], wanted, 0)
        taken: dict[int, tuple] = {}
        start = 0
        batches = self._file.iter_batches(
            ROWS_PER_READ, row_groups=[group], columns=list(columns), use_threads=False
        )
        for batch in batches:
            end = start + batch.num_rows
            inside = wanted[bisect_left(wanted, start) : bisect_left(wanted, end)]
            if inside:
                taken.update(self._picked(batch, inside, start))
            if end > wanted[-1]:
                break
            start = end
        return taken

    @staticmethod
    def _picked(rows: pa.Table | pa.RecordBatch, wanted: list[int], first: int) -> dict:
        """{row: its values} for `wanted` rows of `rows`, whose first row is row `first`."""
        picked = rows.take([row - first for row in wanted])
        values = zip(*(column.to_pylist() for column in picked.columns), strict=True)
        return dict(zip(wanted, values, strict=True))

    def _bytes(self, group: int, columns: tuple[str, ...]) -> int:
        """Uncompressed bytes of `columns` in a row group, from the file's footer."""
        assert self._file is not None
        meta = self._file.metadata.row_group(group)
        chunks = (meta.column(i) for i in range(meta.num_columns))
        return sum(c.total_uncompressed_size for c in chunks if c.path_in_schema in columns)

    def pages(self, shas: Iterable[str]) -> dict[str, str]:
        """{html_sha: cleaned HTML, else raw HTML} for the known shas: what SFT shows."""
        found: dict[str, str] = {}
        for group, wanted in self._by_group(shas):
            rows = [row for row, _ in wanted]
            shown = self._take(group, rows, ("cleaned_html",))
            cleaned = [shown[row][0] for row in rows]
            missing = [k for k, html in enumerate(cleaned) if html is None]
            if missing:
                raw = self._take(group, [rows[k] for k in missing], ("raw_html",))
                for k in missing:
                    cleaned[k] = raw[rows[k]][0]
            for (_, sha), html in zip(wanted, cleaned, strict=True):
                if html is not None:
                    found[sha] = html
        return found
