"""What the telemetry sample plants (secrets and personal data a sender's records carry), and
every byte a run stored, as text, to look for them in."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow.parquet as pq

PLANTED = ["ana.garcia@example.org", "ana.garcia%40example.org", "Tr0ub4dor&3x", "(415) 555-0187",
           "415-555-0164", "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00",
           "DE89370400440532013000", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "10.12.0.7",
           "2001:db8:85a3::8a2e:370:7334", "hf_jUyF", "ghp_", "sk-proj-", "eyJhbGciOi",
           "li.wei%40example.net"]  # fmt: skip


def stored_text(root: Path, skip: str = "/privacy/") -> str:
    """Everything written under `root` as text: each Parquet file decoded (zstd pages hide
    their bytes) with its footer (column statistics, key-value metadata), other files raw."""
    parts = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and skip not in str(p)):
        if path.suffix == ".parquet":
            parquet = pq.ParquetFile(path)
            rows = orjson.dumps(parquet.read().to_pylist(), default=str).decode()
            parts += [rows, str(parquet.metadata.to_dict()), str(parquet.schema_arrow.metadata)]
        else:
            parts.append(path.read_bytes().decode("latin-1"))
    return "\n".join(parts)
