"""Reads the rerun planner's view of the asset graph out of the loaded definitions."""

import dagster as dg
from dagster._core.definitions.assets.graph.base_asset_graph import BaseAssetGraph

from bigaction_assets.rerun.graph import AssetNode, Graph


def _default_config(assets_def: dg.AssetsDefinition) -> dict | None:
    """The run config the asset gets when none is given (None: it takes none)."""
    field = assets_def.op.config_field
    return field.default_value if field is not None and field.default_provided else None


def _check_same_key(asset_graph: BaseAssetGraph, key: dg.AssetKey) -> None:
    """The planner reads a partitioned parent of a partitioned asset at the same key: say so
    loudly if the definitions ever map partitions otherwise."""
    for parent in asset_graph.get(key).parent_keys:
        if asset_graph.get(parent).partitions_def is None:
            continue
        mapping = asset_graph.get_partition_mapping(key, parent)
        if not isinstance(mapping, dg.IdentityPartitionMapping):
            how = type(mapping).__name__
            raise ValueError(
                f"{key.to_user_string()} reads {parent.to_user_string()} through {how}; "
                "the rerun planner knows only the same key"
            )


def graph_of(definitions: dg.Definitions, jobs: list[str]) -> Graph:
    """Every asset's op, group, code version, partitions, deps and default config, and the
    assets each of `jobs` selects."""
    asset_graph = definitions.resolve_asset_graph()
    assets = {}
    for key in asset_graph.get_all_asset_keys():
        node = asset_graph.get(key)
        partitions = node.partitions_def
        if partitions is not None:
            _check_same_key(asset_graph, key)
        assets[key.to_user_string()] = AssetNode(
            key=key.to_user_string(),
            op=node.assets_def.op.name,
            group=node.group_name,
            code_version=node.code_version,
            partitions=getattr(partitions, "name", None) if partitions else None,
            deps=tuple(sorted(k.to_user_string() for k in node.parent_keys)),
            config=_default_config(node.assets_def),
        )
    selected = {
        name: tuple(
            sorted(
                k.to_user_string()
                for k in definitions.resolve_job_def(name).asset_layer.selected_asset_keys
            )
        )
        for name in jobs
    }
    return Graph(dict(sorted(assets.items())), selected)
