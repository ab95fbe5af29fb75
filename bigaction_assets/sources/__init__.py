"""Source adapters, one module per raw format; a module that defines `ADAPTER` is registered."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from bigaction_assets.shard_keys import PARTITION_SEPARATOR
from bigaction_assets.sources.base import SourceAdapter

__all__ = ["PARTITION_SEPARATOR", "adapters", "partition_key", "split_partition_key"]


@cache
def adapters() -> dict[str, SourceAdapter]:
    """Every adapter in this package, by name."""
    found: dict[str, SourceAdapter] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        adapter = getattr(module, "ADAPTER", None)
        if adapter is not None:
            if adapter.name in found:
                raise ValueError(f"two source adapters are named {adapter.name!r}")
            found[adapter.name] = adapter
    return found


def partition_key(adapter_name: str, dataset: str) -> str:
    """`<adapter>.<dataset>`, where a shard's dataset is `<dataset>~<shard>` (`shard_keys`)."""
    return f"{adapter_name}{PARTITION_SEPARATOR}{dataset}"


def split_partition_key(key: str) -> tuple[SourceAdapter, str]:
    """The adapter and dataset name a partition key (`<adapter>.<dataset>`) stands for; a
    shard's name keeps its `~<shard>` (`shard_keys.dataset_of` gives the dataset)."""
    adapter_name, _, dataset = key.partition(PARTITION_SEPARATOR)
    registry = adapters()
    if adapter_name not in registry or not dataset:
        raise ValueError(
            f"partition {key!r} is not `<adapter>.<dataset>` with an adapter in {sorted(registry)}"
        )
    return registry[adapter_name], dataset
