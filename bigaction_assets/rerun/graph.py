"""The asset graph as the rerun planner needs it, cached so a rerun need not load Dagster.

Dagster's definitions are the truth for each asset's dependencies, code version, partitions and
default run config; loading them takes seconds, longer than a whole no-change rerun may. So the
demo keeps what it read from them in a small JSON file keyed by a hash of this package's source
files: while no source file changes, the cached graph is the graph Dagster would load.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.durable import write_durably

PACKAGE = Path(__file__).resolve().parent.parent
GRAPH_FILE = Path("rerun") / "graph.json"


@dataclass(frozen=True)
class AssetNode:
    """One asset: its op (a multi-asset's op builds several), group, code version, the
    partitions it has (None: unpartitioned), upstream assets and default run config."""

    key: str
    op: str
    group: str
    code_version: str | None
    partitions: str | None
    deps: tuple[str, ...]
    config: dict[str, Any] | None


@dataclass(frozen=True)
class Graph:
    assets: dict[str, AssetNode]
    jobs: dict[str, tuple[str, ...]]
    """Assets each job selects, by job name."""

    def to_json(self) -> dict[str, Any]:
        return {
            "assets": {k: asdict(a) for k, a in self.assets.items()},
            "jobs": {k: list(v) for k, v in self.jobs.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Graph:
        assets = {
            key: AssetNode(**{**node, "deps": tuple(node["deps"])})
            for key, node in data["assets"].items()
        }
        return cls(assets, {k: tuple(v) for k, v in data["jobs"].items()})


def source_hash(package: Path = PACKAGE) -> str:
    """A hash of every source file of the package (code, prompt templates, SQL), the Python
    and the Dagster version: what the definitions are made of."""
    digest = hashlib.sha256(f"{sys.version}\0{version('dagster')}\0".encode())
    for path in sorted(p for p in package.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def cached_graph(data_dir: Path, key: str) -> Graph | None:
    """The graph cached under `key`, if that is the one cached."""
    try:
        saved = orjson.loads((data_dir / GRAPH_FILE).read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None
    return Graph.from_json(saved["graph"]) if saved.get("source_hash") == key else None


def cache_graph(data_dir: Path, key: str, graph: Graph) -> None:
    data = {"source_hash": key, "graph": graph.to_json()}
    write_durably(data_dir / GRAPH_FILE, orjson.dumps(data, option=orjson.OPT_SORT_KEYS))
