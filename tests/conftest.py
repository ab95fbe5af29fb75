"""Shared fixtures for the test suite."""

from __future__ import annotations

# --- core pipeline fixtures (jsonstream, adp, mind2web, ingest, lake) ---------------------
# Used by test_jsonstream.py, test_adp.py, test_mind2web.py, test_ingest.py, test_lake.py.
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from bigaction_assets import ingest, lake, lake_writer, standardized_rows
from bigaction_assets.images.resolve import ImageResolver
from bigaction_assets.schemas import frame
from bigaction_assets.schemas.images import ImageSchema
from bigaction_assets.schemas.standardized import (
    DomSnapshotSchema,
    EpisodeSchema,
    EventSchema,
    RejectSchema,
    WebCandidateSchema,
)
from bigaction_assets.sources.base import SourceAdapter

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"

# Property tests take their example counts from a profile: `ci` (the default) keeps the suite
# fast; `thorough` is for hunting survivors locally, e.g.
# `pytest tests/test_privacy_property.py --hypothesis-profile=thorough --hypothesis-seed=7`.
_PROPERTY = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=300, **_PROPERTY)
settings.register_profile("thorough", max_examples=20_000, **_PROPERTY)
settings.load_profile("ci")

STANDARDIZED_MODELS = {
    "episodes": EpisodeSchema,
    "events": EventSchema,
    "dom_snapshots": DomSnapshotSchema,
    "web_candidates": WebCandidateSchema,
    "images": ImageSchema,
    "rejects": RejectSchema,
}


@dataclass
class Ingested:
    """What `ingest.raw_records` + `standardized_rows.standardize` made of one dataset."""

    raw: list[dict[str, Any]]
    tables: dict[str, list[dict[str, Any]]]

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables.get(table, [])


def land_file(landing: Path, adapter: str, name: str, data: bytes) -> Path:
    """Write one landing file at `<landing>/<adapter>/<name>` and return its path."""
    path = landing / adapter / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def run_ingest(adapter: SourceAdapter, dataset: str, files: list[Path], landing: Path) -> Ingested:
    """Raw records, then standardized rows, the way the Dagster assets chain them."""
    raw = list(ingest.raw_records(adapter, dataset, files, landing))
    ambiguous = standardized_rows.repeated_ids(row["record_id"] for row in raw)
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in STANDARDIZED_MODELS}
    tables[standardized_rows.TALLIES] = []
    images = ImageResolver(landing, adapter.name, dataset)
    for row in standardized_rows.standardize(adapter, dataset, raw, ambiguous, images):
        tables[row.table].append(row.values)
    return Ingested(raw, tables)


def write_standardized(
    lake_root: Path, partition: str, tables: dict[str, list[dict[str, Any]]]
) -> None:
    """Validate each table against its pandera contract and write it as one lake partition."""
    for name, rows in tables.items():
        if rows and name in STANDARDIZED_MODELS:  # tallies are metadata, not a table
            frame_ = frame(STANDARDIZED_MODELS[name], rows)
            lake_writer.write_partition(lake_root, "standardized", name, partition, frame_)


@pytest.fixture
def ingest_dataset() -> Callable[..., Ingested]:
    """`ingest_dataset(adapter, dataset, files, landing)` -> `Ingested`."""
    return run_ingest


@pytest.fixture
def write_std_tables() -> Callable[..., None]:
    """`write_std_tables(lake, partition, tables)` validates and writes standardized rows."""
    return write_standardized


@pytest.fixture
def tmp_lake(tmp_path: Path) -> Path:
    return tmp_path / "lake"


# --- end of core pipeline fixtures ---------------------------------------------------------


# --- Dagster-level fixtures (test_definitions, test_assets, test_sensor, test_demo_e2e) ----
# A temporary landing folder and data dir with the LakeResource pointing at them, and an
# in-memory Dagster instance. Imports sit here so this section stays self-contained.
import shutil  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import dagster as dg  # noqa: E402

from bigaction_assets.defs.resources import LakeResource  # noqa: E402

BUNDLED_LANDING = Path(__file__).resolve().parents[1] / "landing"


@dataclass
class DagsterLake:
    """`<tmp>/landing` and `<tmp>/data`, as the pipeline's LakeResource sees them."""

    landing: Path
    data: Path

    @property
    def resource(self) -> LakeResource:
        return LakeResource(landing_dir=str(self.landing), data_dir=str(self.data))

    @property
    def root(self) -> Path:
        """The Parquet lake, `<data>/lake`."""
        return self.data / "lake"

    @property
    def catalog(self) -> Path:
        return self.data / "bigaction.duckdb"

    def table(self, group: str, asset: str, partition: str) -> Path:
        return lake.partition_path(self.root, group, asset, partition)

    def add_bundled(self, adapter: str, dataset: str, images: bool = False) -> Path:
        """Copy `landing/<adapter>/<dataset>.json` of the repo into the temporary landing, and
        with `images` its screenshots folder (`<dataset>.images/`) when it has one."""
        target = self.landing / adapter / f"{dataset}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(BUNDLED_LANDING / adapter / f"{dataset}.json", target)
        folder = BUNDLED_LANDING / adapter / f"{dataset}.images"
        if images and folder.is_dir():
            shutil.copytree(folder, target.with_name(f"{dataset}.images"), dirs_exist_ok=True)
        return target

    def write_landing(self, relative: str, text: str) -> Path:
        target = self.landing / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target


@pytest.fixture
def dagster_lake(tmp_path: Path) -> DagsterLake:
    (tmp_path / "landing").mkdir()
    return DagsterLake(landing=tmp_path / "landing", data=tmp_path / "data")


@pytest.fixture
def ephemeral_instance() -> Iterator[dg.DagsterInstance]:
    """An in-memory instance: runs, materializations and dynamic partitions, nothing on disk."""
    with dg.DagsterInstance.ephemeral() as instance:
        yield instance


# --- end of Dagster-level fixtures -----------------------------------------------------------


# --- LLM fixtures (test_thoughts_*, test_benchmark_live, test_llm_real) ----------------------
# The assets that call a model share one resource object; a test binds its own to all of them.
from bigaction_assets.defs.benchmark.live import model_answers_asset  # noqa: E402
from bigaction_assets.defs.llm_resource import LLMResource  # noqa: E402
from bigaction_assets.defs.thoughts.assets import thoughts_asset  # noqa: E402

LLM_ASSETS = {"thoughts": thoughts_asset, "model_answers": model_answers_asset}


@pytest.fixture(scope="module")
def graph() -> list[Any]:
    """Every asset and check of the code location, as `dg.materialize` takes them.

    Loaded under a live instance: loading reads Dagster's current definitions-state storage,
    and an earlier test's instance (test_telemetry_sensors' `instance_for_test`) can leave a
    dead one current, which failed these tests only when the whole suite ran."""
    from bigaction_assets.definitions import defs

    with dg.DagsterInstance.ephemeral():
        code_location = defs()
    return [*code_location.assets, *(code_location.asset_checks or [])]


def with_llm(definitions: list[Any], llm: LLMResource) -> list[Any]:
    """The graph's assets and checks with every model-calling asset bound to `llm`."""
    keys = {dg.AssetKey(name) for name in LLM_ASSETS}
    kept = [
        a for a in definitions
        if not (isinstance(a, dg.AssetsDefinition) and keys & set(a.keys))
    ]  # fmt: skip
    return [*kept, *(factory(llm) for factory in LLM_ASSETS.values())]


# --- end of LLM fixtures ---------------------------------------------------------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The end-to-end files first, the rest in their usual order: `make test` hands whole files
    to its workers in this order, so the files of a minute or two start early and the suite
    ends on short ones, not on one worker finishing a long file while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is None)
