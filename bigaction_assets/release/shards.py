"""Writes a stream of Arrow tables as Parquet shards under a byte cap, named the Hub's way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_SHARD_BYTES = 256 * 2**20
COMPRESSION = "zstd"
HF_METADATA_KEY = b"huggingface"


def shard_name(split: str, index: int, count: int) -> str:
    """`<split>-NNNNN-of-NNNNN.parquet`, the pattern the Hub's dataset viewer recognises."""
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def pieces(table: pa.Table, max_bytes: int) -> Iterator[pa.Table]:
    """`table` in consecutive slices of at most `max_bytes` (Arrow bytes); a row larger than
    the cap is a slice of its own."""
    if table.num_rows == 0:
        return
    if table.nbytes <= max_bytes or table.num_rows == 1:
        yield table
        return
    half = table.num_rows // 2
    yield from pieces(table.slice(0, half), max_bytes)
    yield from pieces(table.slice(half), max_bytes)


class ParquetShardWriter:
    """One split of one config: rows go to the current shard until the next would pass the cap.

    The cap counts in-memory Arrow bytes, as `datasets.push_to_hub(max_shard_size=...)` does, so
    a compressed file on disk is at most about that size. Shards get their final
    `-of-NNNNN` names only on `close`, when their number is known.
    """

    def __init__(
        self,
        folder: Path,
        split: str,
        schema: pa.Schema,
        max_bytes: int,
        compression: str | dict[str, str] = COMPRESSION,
    ) -> None:
        self.folder = folder
        self.compression = compression
        self.split = split
        # no writer-specific metadata (same input, same bytes), but the feature description
        # `datasets` reads (an `Image` column is a struct without it)
        kept = {k: v for k, v in (schema.metadata or {}).items() if k == HF_METADATA_KEY}
        self.schema = schema.remove_metadata()
        if kept:
            self.schema = self.schema.with_metadata(kept)
        self.max_bytes = max_bytes
        self.rows = 0
        self._paths: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._shard_bytes = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, table: pa.Table) -> None:
        table = table.select(self.schema.names).cast(self.schema).replace_schema_metadata(None)
        for piece in pieces(table, self.max_bytes):
            if self._writer is not None and self._shard_bytes + piece.nbytes > self.max_bytes:
                self._close_shard()
            if self._writer is None:
                self._open_shard()
            assert self._writer is not None
            self._writer.write_table(piece, row_group_size=piece.num_rows)
            self._shard_bytes += piece.nbytes
            self.rows += piece.num_rows

    def close(self) -> list[Path]:
        """Finish the last shard and give every shard its final name; returns them in order."""
        if self._writer is not None:
            self._close_shard()
        final = []
        for index, path in enumerate(self._paths):
            target = path.with_name(shard_name(self.split, index, len(self._paths)))
            path.rename(target)
            final.append(target)
        return final

    def _open_shard(self) -> None:
        path = self.folder / f".{self.split}-{len(self._paths):05d}.parquet.tmp"
        # Content-defined chunking keeps unchanged pages byte-identical across releases, so the
        # Hub's storage deduplicates them; the page index lets readers skip pages.
        self._writer = pq.ParquetWriter(
            path,
            self.schema,
            compression=self.compression,
            use_content_defined_chunking=True,
            write_page_index=True,
        )
        self._paths.append(path)
        self._shard_bytes = 0

    def _close_shard(self) -> None:
        assert self._writer is not None
        self._writer.close()
        self._writer = None
