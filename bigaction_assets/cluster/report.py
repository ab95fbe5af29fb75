"""What `make cluster` adds to the demo's summary when its lake is in the S3 server: each output
folder's objects and bytes, read back from the store."""

from __future__ import annotations

from bigaction_assets.cluster.compare import Outputs, output_roots, store_objects


def store_lines(outputs: Outputs) -> list[str]:
    """Objects and bytes under each output folder of the store (none for a folder's outputs)."""
    if outputs.store is None:
        return []
    lines = ["", f"Outputs in the object store ({outputs.where()}), read back from it:"]
    for root in output_roots(outputs.store).values():
        found = store_objects(root)
        size = sum(info.size or 0 for info in found)
        lines.append(f"  {root.uri + '/':<30} {len(found):>6} objects {size:>14,} bytes")
    return lines
