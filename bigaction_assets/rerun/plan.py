"""What a rerun must build: each output's expected fingerprint against its stamp.

The fingerprint of an output is a hash of its asset's name, code version and run config, the
inputs the graph does not show (`inputs.py`) and the fingerprints of the outputs it reads;
at the roots, the content of the landing files. So it chains: a no-change rerun reads the
stamps and hashes the (small) landing files, and never rereads a lake table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigaction_assets.rerun.fingerprint import combine
from bigaction_assets.rerun.graph import Graph
from bigaction_assets.rerun.inputs import EXTRA_DEPS
from bigaction_assets.rerun.objects import FOLDERS
from bigaction_assets.rerun.stamps import Stamps

Instance = tuple[str, str | None]  # (asset, partition key or None)


@dataclass
class Step:
    """One job run (and the runs of `then`, on the same partitions): `partitions` it runs on
    (none: unpartitioned; several: a range), the outputs it owns, and which are out of date."""

    job: str
    partitions: tuple[str, ...]
    owns: list[Instance] = field(default_factory=list)
    stale: list[Instance] = field(default_factory=list)
    why: dict[Instance, str] = field(default_factory=dict)
    label: str = ""
    """What the demo prints for it; the partition, or the job, when empty."""
    then: tuple[str, ...] = ()
    """Jobs run after `job` on the same partitions, as part of this step: a dataset's
    benchmark, whose partitions are defined apart from the spine's."""

    @property
    def name(self) -> str:
        return self.label or (self.partitions[0] if len(self.partitions) == 1 else self.job)


@dataclass
class Plan:
    steps: list[Step]
    fingerprints: dict[Instance, str]

    @property
    def up_to_date(self) -> bool:
        return not any(step.stale for step in self.steps)


class Fingerprints:
    """Expected fingerprints of every output, computed on demand from the roots down."""

    def __init__(
        self,
        graph: Graph,
        roots: Mapping[Instance, str],
        instances: Mapping[str, list[str | None]],
        configs: Mapping[str, Any],
        extras: Mapping[str, Any],
    ) -> None:
        self.graph, self.roots, self.instances = graph, roots, instances
        self.configs, self.extras = configs, extras
        self.memo: dict[Instance, str] = {}

    def __call__(self, asset: str, partition: str | None) -> str:
        if (asset, partition) not in self.memo:
            self.memo[asset, partition] = self._compute(asset, partition)
        return self.memo[asset, partition]

    def _compute(self, asset: str, partition: str | None) -> str:
        node = self.graph.assets[asset]
        upstream = []
        for dep in (*node.deps, *EXTRA_DEPS.get(asset, ())):
            dep_node = self.graph.assets[dep]
            if dep_node.partitions is None:
                upstream.append((dep, self(dep, None)))
            elif partition is not None:  # the same key (defs/rerun_graph.py checks the mapping)
                upstream.append((dep, self(dep, partition)))
            else:  # every partition of it: one more, one fewer or one changed counts
                keys = self.instances.get(dep, [])
                upstream.append((dep, [(key, self(dep, key)) for key in keys]))
        return combine(
            asset,
            node.code_version,
            self.configs.get(asset),
            self.extras.get(asset),
            self.roots.get((asset, partition)),
            upstream,
        )


def plan(
    graph: Graph,
    steps: list[Step],
    roots: Mapping[Instance, str],
    configs: Mapping[str, Any],
    extras: Mapping[str, Any],
    stamps: Stamps,
) -> Plan:
    """Marks in each step the outputs whose stamp does not match their fingerprint, with the
    other outputs of the same op (a multi-asset is built whole)."""
    instances: dict[str, list[str | None]] = {}
    for step in steps:
        for asset, partition in step.owns:
            instances.setdefault(asset, []).append(partition)
    expected = Fingerprints(graph, roots, instances, configs, extras)
    for step in steps:
        step.why = {
            (a, p): why for a, p in step.owns if (why := stamps.why_stale(a, p, expected(a, p)))
        }
        ops = {(graph.assets[a].op, p) for a, p in step.why}
        step.stale = [(a, p) for a, p in step.owns if (graph.assets[a].op, p) in ops]
    return Plan(steps, {i: expected(*i) for step in steps for i in step.owns})


def output_files(graph: Graph, data_dir: Path, asset: str, partition: str | None) -> list[Path]:
    """The files an output consists of, as they are now (under the data folder: its folders
    are the ones beside the lake, FOLDERS)."""
    files = [
        data_dir / "lake" / graph.assets[asset].group / asset / f"{partition or 'all'}.parquet"
    ]
    if asset in FOLDERS and (data_dir / FOLDERS[asset]).is_dir():
        files += [p for p in (data_dir / FOLDERS[asset]).rglob("*") if p.is_file()]
    return [p for p in files if p.is_file()]
