"""Resources shared by every stage: the lake (landing, Parquet files, DuckDB catalog), the Hub,
and the LLM."""

import functools
import json
import os
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource
from huggingface_hub import HfApi
from pydantic import Field

from bigaction_assets.annotate import STORE_FILE
from bigaction_assets.catalog import refresh_catalog
from bigaction_assets.lake import Lake, local_root
from bigaction_assets.lake_uri import LAKE_URI_ENV, parse_lake
from bigaction_assets.llm.budget import Price, PriceTable
from bigaction_assets.llm.cache import CacheLocation
from bigaction_assets.llm.client import ClientSettings
from bigaction_assets.llm.session import LLMConfig
from bigaction_assets.release import hub
from bigaction_assets.settings import LLM_CACHE_URL_ENV, Paths


class LakeResource(dg.ConfigurableResource):
    """Where landing files are read and lake tables written; the local disk by default."""

    landing_dir: str
    data_dir: str
    lake_uri: str | None = None
    """The lake's root as a URI (`s3://bucket/prefix`, lakefs.py); `<data_dir>/lake` when unset."""

    @property
    def landing(self) -> Path:
        return Path(self.landing_dir)

    @property
    def store(self) -> Lake:
        """The lake for the stages that read and write it through lake.py: a local folder, or
        an object store when `lake_uri` names one."""
        if self.lake_uri:
            return _lake_at(self.lake_uri)
        return Path(self.data_dir) / "lake"

    @property
    def is_local(self) -> bool:
        return isinstance(self.store, Path)

    @property
    def root(self) -> Path:
        """The lake as a local folder, for the stages that still read it as files."""
        store = self.store
        if not isinstance(store, Path):
            raise NotOnObjectStore(
                f"the lake is {self.lake_uri}, and this stage still reads the lake as local "
                "files (docs/deploy.md, 'The lake on object storage', lists the stages that "
                "run on an object store)"
            )
        return store

    @property
    def catalog(self) -> Path:
        return Path(self.data_dir) / "bigaction.duckdb"

    @property
    def caches(self) -> Path:
        """This machine's caches of what it read from the lake (by file version: any of them
        may be deleted, at the cost of reading again)."""
        return Path(self.data_dir) / "cache"

    @property
    def row_counts(self) -> Path:
        return self.caches / "footer-rows.sqlite"

    annotation_store_path: str | None = None
    """The annotation app's SQLite store; `<data_dir>/annotate/store.sqlite3` when unset (where
    `make annotate` serves it from)."""

    @property
    def annotation_store(self) -> Path:
        default = Path(self.data_dir) / "annotate" / STORE_FILE
        return Path(self.annotation_store_path) if self.annotation_store_path else default

    llm_cache_url: str | None = None
    """A PostgreSQL URL for an LLM call cache every worker shares (cache_postgres.py); the
    SQLite file `<data_dir>/llm/calls.sqlite` when unset."""

    @property
    def llm_cache(self) -> CacheLocation:
        """The durable LLM call cache; erasure of forgotten senders reaches it here."""
        return self.llm_cache_url or Path(self.data_dir) / "llm" / "calls.sqlite"

    def refresh_catalog(self, log: dg.DagsterLogManager | None = None) -> list[str]:
        """Views over every table; a locked catalog is reported, not fatal (views glob files,
        so new partitions of known tables show up without a refresh)."""
        try:
            return refresh_catalog(self.store, self.catalog)
        except Exception as exc:  # the catalog is a convenience; the lake is the truth
            if log is not None:
                log.warning(f"DuckDB catalog {self.catalog} not refreshed: {exc}")
            return []


@functools.cache
def _lake_at(uri: str) -> Lake:
    """One filesystem per lake URI for the process (pyarrow's S3 client is costly to make)."""
    root = parse_lake(uri)
    return local_root(root) or root


class NotOnObjectStore(RuntimeError):
    """A stage that reads the lake as local files met an object-store lake."""


HUB_REPO_ENV = "BIGACTION_HUB_REPO"
HUB_TOKEN_ENV = "HF_TOKEN"


class HubResource(dg.ConfigurableResource):
    """Where a release is published beyond its local folder: a Hub dataset repository when a
    repo id and a token are set, nowhere else otherwise."""

    repo_id: str | None = None
    """`<namespace>/<name>` of the dataset repository; unset keeps releases local."""
    token: str | None = Field(default=None, repr=False)
    """A write token; bind it with `dg.EnvVar("HF_TOKEN")` so its value is never stored."""
    private: bool = True
    """Visibility of the repository when the push creates it."""
    revision: str = "main"
    """Branch the release is committed to (it must exist; `main` always does)."""
    tag_template: str = "v{version}-{hash}"
    """Tag of each new release: `{version}` is the pipeline version, `{hash}` 12 hex digits
    of the release's content hash."""
    endpoint: str | None = None
    """Hub URL; unset means huggingface_hub's default (`HF_ENDPOINT`, else huggingface.co)."""

    @property
    def enabled(self) -> bool:
        return bool(self.repo_id and self.token)

    def publish(self, folder: Path, version: str, content_sha256: str) -> hub.PushOutcome | None:
        """Push the release in `folder`; None when this resource is not set up to push."""
        if not self.enabled:
            return None
        api = HfApi(endpoint=self.endpoint, token=self.token, library_name="bigaction-assets")
        tag = self.tag_template.format(version=version, hash=content_sha256[:12])
        return hub.push_release(
            api, folder, self.repo_id, tag=tag, revision=self.revision, private=self.private
        )


def hub_from_env() -> HubResource:
    """Pushes only when `BIGACTION_HUB_REPO` and `HF_TOKEN` are both set."""
    token = dg.EnvVar(HUB_TOKEN_ENV) if os.environ.get(HUB_TOKEN_ENV) else None
    return HubResource(repo_id=os.environ.get(HUB_REPO_ENV) or None, token=token)


class ModelPrice(dg.Config):
    input_per_million: float
    """US dollars per million prompt tokens."""
    output_per_million: float
    """US dollars per million completion tokens."""


class LLMResource(dg.ConfigurableResource):
    """A chat model behind any OpenAI-compatible server (OpenAI, vLLM, llama.cpp); with no model
    set it is unconfigured and the stages that need it say so instead of calling anything."""

    base_url: str | None = None
    """The server's root, e.g. `http://127.0.0.1:8080/v1`; unset means OpenAI itself."""
    model: str | None = None
    """The model name the server knows; unset means no model is configured."""
    api_key: str | None = Field(default=None, repr=False)
    """Bind with `dg.EnvVar("OPENAI_API_KEY")` so the value is never stored or shown."""
    temperature: float = 0.0
    max_tokens: int = 256
    """Most tokens of one reply."""
    concurrency: int = 8
    """Calls in flight at once, per run (the `llm` pool limits runs that call at once)."""
    timeout_seconds: float = 60.0
    max_attempts: int = 6
    """Requests per call on 429, 5xx, timeouts and connection errors, the first included."""
    max_output_attempts: int = 3
    """Requests per call when replies are malformed or fail validation."""
    max_failed_runs: int = 3
    """Runs a failing call is tried in before it stays failed (raise it to try again)."""
    prices: dict[str, ModelPrice] = {}  # noqa: RUF012 - pydantic copies defaults
    """Prices by model; a model not listed is counted as free (local servers)."""
    budget_tokens: int | None = None
    """Tokens (in and out) one run may spend; None for no limit."""
    budget_usd: float | None = None
    """US dollars one run may spend; None for no limit."""

    @property
    def configured(self) -> bool:
        return bool(self.model)

    def config(self) -> LLMConfig:
        if not self.model:
            raise ValueError(f"no model configured: set {LLM_MODEL_ENV}")
        if not self.base_url and not self.api_key:
            raise ValueError(f"{LLM_KEY_ENV} is needed to call OpenAI (or set {LLM_URL_ENV})")
        prices = {
            name: Price(price.input_per_million, price.output_per_million)
            for name, price in self.prices.items()
        }
        return LLMConfig(
            client=ClientSettings(
                model=self.model, base_url=self.base_url, api_key=self.api_key,
                temperature=self.temperature, max_tokens=self.max_tokens,
                timeout_seconds=self.timeout_seconds, max_attempts=self.max_attempts,
            ),
            prices=PriceTable(prices), concurrency=self.concurrency,
            budget_tokens=self.budget_tokens, budget_usd=self.budget_usd,
            max_output_attempts=self.max_output_attempts, max_failed_runs=self.max_failed_runs,
        )  # fmt: skip


LLM_URL_ENV = "BIGACTION_LLM_BASE_URL"
LLM_MODEL_ENV = "BIGACTION_LLM_MODEL"
LLM_KEY_ENV = "OPENAI_API_KEY"


def _number(name: str, kind: type[int] | type[float]) -> int | float | None:
    value = os.environ.get(name)
    try:
        return kind(value) if value else None
    except ValueError:
        raise ValueError(f"{name} must be {kind.__name__}, not {value!r}") from None


def _prices() -> dict[str, ModelPrice]:
    text = os.environ.get("BIGACTION_LLM_PRICES") or "{}"
    try:
        return {
            name: ModelPrice(input_per_million=float(pair[0]), output_per_million=float(pair[1]))
            for name, pair in json.loads(text).items()
        }
    except (ValueError, TypeError, IndexError, AttributeError):
        raise ValueError(
            f'BIGACTION_LLM_PRICES must be JSON like {{"<model>": [input, output]}}, not {text!r}'
        ) from None


def llm_from_env() -> LLMResource:
    """The model of `BIGACTION_LLM_MODEL` at `BIGACTION_LLM_BASE_URL` with `OPENAI_API_KEY`;
    optional: `BIGACTION_LLM_CONCURRENCY`, `BIGACTION_LLM_MAX_TOKENS`,
    `BIGACTION_LLM_TEMPERATURE`, `BIGACTION_LLM_TIMEOUT_SECONDS`, `BIGACTION_LLM_BUDGET_TOKENS`,
    `BIGACTION_LLM_BUDGET_USD`, `BIGACTION_LLM_PRICES` (JSON: `{"<model>": [input, output]}`
    dollars per million tokens); see `.env.example`."""
    key = dg.EnvVar(LLM_KEY_ENV) if os.environ.get(LLM_KEY_ENV) else None
    optional = {
        "concurrency": _number("BIGACTION_LLM_CONCURRENCY", int),
        "max_tokens": _number("BIGACTION_LLM_MAX_TOKENS", int),
        "temperature": _number("BIGACTION_LLM_TEMPERATURE", float),
        "timeout_seconds": _number("BIGACTION_LLM_TIMEOUT_SECONDS", float),
    }
    return LLMResource(
        base_url=os.environ.get(LLM_URL_ENV) or None,
        model=os.environ.get(LLM_MODEL_ENV) or None,
        api_key=key,
        prices=_prices(),
        budget_tokens=_number("BIGACTION_LLM_BUDGET_TOKENS", int),
        budget_usd=_number("BIGACTION_LLM_BUDGET_USD", float),
        **{name: value for name, value in optional.items() if value is not None},
    )


@functools.cache
def environment_llm() -> LLMResource:
    """`llm_from_env()`, made once: the assets that call a model (thoughts, model_answers) bind
    this one object, as Dagster requires of a resource key shared by assets."""
    return llm_from_env()


def local_resources(paths: Paths | None = None) -> dict[str, object]:
    """The embedded default: everything on local disk, paths from the environment."""
    paths = paths or Paths.from_env()
    data_dir = paths.lake.parent
    return {
        "lake": LakeResource(
            landing_dir=str(paths.landing),
            data_dir=str(data_dir),
            lake_uri=os.environ.get(LAKE_URI_ENV) or None,
            llm_cache_url=os.environ.get(LLM_CACHE_URL_ENV) or None,
        ),
        "duckdb": DuckDBResource(database=str(paths.catalog)),
    }
