"""What `make cluster` prints at the end when its lake is in the S3 server: read back from it."""

from __future__ import annotations

import duckdb

from bigaction_assets.cluster.compare import Outputs, output_roots, store_objects
from bigaction_assets.lake_sql import register


def store_summary(outputs: Outputs) -> str:
    """Objects and bytes under each output folder of the store, and rows per catalog view
    counted over the store's objects."""
    assert outputs.store is not None, "a folder's outputs: demo_summary.summary says it"
    lines = ["", f"Outputs in the object store ({outputs.where()}), read back from it:"]
    for root in output_roots(outputs.store).values():
        found = store_objects(root)
        size = sum(info.size or 0 for info in found)
        lines.append(f"  {root.uri + '/':<30} {len(found):>6} objects {size:>14,} bytes")
    lines.append("Rows per table:")
    if outputs.catalog.is_file():
        with duckdb.connect(str(outputs.catalog), read_only=True) as con:
            register(con, outputs.store)
            views = con.execute(
                "select view_name from duckdb_views() where not internal order by 1"
            ).fetchall()
            for (view,) in views:
                count = con.execute(f'select count(*) from "{view}"').fetchone()[0]
                lines.append(f"  {view:<16} {count:>8}")
    lines.append(f"Catalog (DuckDB, views over the store): {outputs.catalog}")
    return "\n".join(lines)
