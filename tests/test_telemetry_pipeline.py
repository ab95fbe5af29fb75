"""The bundled telemetry sample through Dagster: batches into raw_telemetry, the day into
episodes and SFT examples, then a sender forgotten end to end (landing, every lake table, the
checks, the release)."""

# ruff: noqa: E501 - long literal expectations read better whole

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import orjson
import pyarrow.dataset as ds
import pytest
from planted import PLANTED, stored_text

from bigaction_assets.definitions import defs
from bigaction_assets.defs.hub_resource import HubResource
from bigaction_assets.defs.release.assets import release_asset
from bigaction_assets.defs.release.push import revision_asset
from bigaction_assets.privacy.forget import record_request
from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.telemetry.sample import SAMPLE, land_sample
from bigaction_assets.telemetry_batches import batch_files

DAY = "telemetry.2025-05-14"
DAY_BUILD = dg.AssetSelection.assets(
    "raw_records", "sft_examples", "telemetry_report"
) | dg.AssetSelection.groups("standardized")
FORGET = "forget_users"
ANA = Pseudonymizer.from_env(dev=True).user("ana.garcia@example.org")
ANA_TASK = "Log in to billing.acme.example.com as"  # her objective, scrubbed: still hers
TABLES = [("telemetry", "raw_telemetry"), ("raw", "raw_records"), ("standardized", "episodes"),
          ("standardized", "events"), ("standardized", "dom_snapshots"), ("sft", "sft_examples")]  # fmt: skip


def rows(lake: Path, group: str, asset: str) -> list[dict[str, Any]]:
    folder = lake / group / asset
    if not any(folder.glob("*.parquet")):
        return []
    return ds.dataset(sorted(folder.glob("*.parquet")), format="parquet").to_table().to_pylist()


def lake_text(lake: Path) -> str:
    return "\n".join(orjson.dumps(rows(lake, g, a), default=str).decode() for g, a in TABLES)


@pytest.fixture(scope="module")
def code_location() -> dg.Definitions:
    return defs()


@pytest.fixture(scope="module")
def built(code_location, tmp_path_factory) -> Iterator[tuple[Any, dg.DagsterInstance]]:
    """The sample landed, its batches ingested in one ranged run, its day built with checks."""
    from conftest import DagsterLake

    root = tmp_path_factory.mktemp("telemetry")
    target = DagsterLake(landing=root / "landing", data=root / "data")
    land_sample(target.landing, Pseudonymizer.from_env(dev=True))
    everything = [*code_location.assets, *code_location.asset_checks]
    with dg.DagsterInstance.ephemeral() as instance:
        batches = sorted(batch_files(target.landing))
        instance.add_dynamic_partitions("telemetry_batches", batches)
        instance.add_dynamic_partitions("datasets", [DAY])
        ranged = {"dagster/asset_partition_range_start": batches[0],
                  "dagster/asset_partition_range_end": batches[-1]}  # fmt: skip
        resources = {"lake": target.resource}
        raw = dg.materialize(everything, instance=instance, resources=resources, tags=ranged,
                             selection=dg.AssetSelection.assets("raw_telemetry"))  # fmt: skip
        # a damaged line of the sender forgotten below, with no run: rejected, so kept as text
        first = batch_files(target.landing)[batches[0]]
        damaged = {"batch_id": batches[0], "user": ANA, "session": ANA, "step": 7, "record": {}}
        first.write_bytes(first.read_bytes() + orjson.dumps(damaged) + b"\n")
        day = dg.materialize(everything, instance=instance, resources=resources,
                             partition_key=DAY, selection=DAY_BUILD)  # fmt: skip
        assert raw.success and day.success
        yield target, instance


def test_sample_lands_only_consented_steps(built) -> None:
    target, _ = built
    sent = [r for line in SAMPLE.read_bytes().splitlines() for r in orjson.loads(line)]
    stored = rows(target.root, "telemetry", "raw_telemetry")
    assert len(stored) == sum(r.get("level") in ("LOW", "MED", "HIGH") for r in sent) == 9
    assert {r["level"] for r in stored} == {"LOW", "MED", "HIGH"}


def test_no_planted_secret_or_raw_id_reaches_the_lake(built) -> None:
    target, _ = built
    text = lake_text(target.root)
    sent = [r for line in SAMPLE.read_bytes().splitlines() for r in orjson.loads(line)]
    for secret in PLANTED + [r["user_id"] for r in sent] + [r["run_id"] for r in sent]:
        assert secret not in text, secret
    assert re.findall(r"Bearer [^<\\]", text) == [], "a bearer header kept its token"


def test_runs_become_episodes_with_tasks_observations_actions_and_details(built) -> None:
    target, _ = built
    episodes = {
        e["task"]: e
        for e in rows(target.root, "standardized", "episodes")
        if e["source"] == "telemetry"
    }
    assert len(episodes) == 5  # 7 runs sent, 2 opted out
    invoice = episodes[
        "Log in to billing.acme.example.com as <EMAIL_1> and download my April invoice; if it fails text me at <PHONE_1>"
    ]
    details = orjson.loads(invoice["details"])
    assert details["engines"] == {"Navigation Engine": 2, "Python Engine": 1}
    assert details["llms"] == ["gpt-4o-2024-08-06"] and details["success"] is True
    assert details["cost"]["total_step_cost"] == pytest.approx(3 * 0.0155962)
    events = sorted(
        (
            e
            for e in rows(target.root, "standardized", "events")
            if e["episode_id"] == invoice["episode_id"]
        ),
        key=lambda e: e["idx"],
    )
    kinds = [e["kind"] for e in events]
    assert kinds[:4] == ["text_observation", "web_observation", "api_action", "api_action"]
    assert "code_action" in kinds and kinds[-1] == "message_action"
    page = events[1]
    assert page["url"].startswith("https://billing.acme.example.com/login")
    assert (page["viewport_width"], page["viewport_height"]) == (1280, 800)
    assert page["bbox"] == [412.0, 300.0, 456.0, 40.0] and page["html_sha"]
    login, password = events[2], events[3]
    assert (login["function"], password["function"]) == ("setValue", "setValueAndEnter")
    assert orjson.loads(password["kwargs"])["value"] == "<PASSWORD_1>"
    assert login["description"].startswith("Thoughts:")
    # the last step came in another batch: the same email keeps the same placeholder
    assert events[-1]["content"] == "Saved invoice.pdf (48 KB) for <EMAIL_1>"


def test_sft_examples_are_made_from_telemetry_episodes(built) -> None:
    target, _ = built
    examples = [
        e
        for e in rows(target.root, "sft", "sft_examples")
        if e["episode_id"].startswith("telemetry/")
    ]
    assert examples


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {
        f"{e.asset_key.to_user_string()}:{e.check_name}": e.passed
        for e in result.get_asset_check_evaluations()
    }


def run_logs(instance: dg.DagsterInstance) -> str:
    """Every event of every run, metadata included: what Dagster's own storage keeps."""
    return "\n".join(str(e) for r in instance.get_runs() for e in instance.all_logs(r.run_id))


def _release(
    everything: list, instance: dg.DagsterInstance, target: Any
) -> dg.ExecuteInProcessResult:
    ours = {dg.AssetKey("hub_release"), dg.AssetKey("hub_revision")}
    assets = [a for a in everything if not (isinstance(a, dg.AssetsDefinition) and ours & a.keys)]
    hub = HubResource()  # one object for both: a job holding both needs the same resource
    return dg.materialize(
        [*assets, release_asset(hub), revision_asset(hub)], instance=instance,
        resources={"lake": target.resource}, raise_on_error=False,
        selection=dg.AssetSelection.assets("hub_release"),
    )  # fmt: skip


def test_a_forgotten_sender_is_erased_everywhere(built, code_location) -> None:
    target, instance = built
    everything = [*code_location.assets, *code_location.asset_checks]
    resources = {"lake": target.resource}
    theirs = {
        r["episode_id"]
        for r in rows(target.root, "telemetry", "raw_telemetry")
        if r["user_pseudonym"] == ANA
    }
    assert len(theirs) == 1
    # before: SFT files and a release hold her run; her damaged line is a reject, kept as text
    files = dg.materialize(everything, instance=instance, resources=resources,
                           selection=dg.AssetSelection.assets("sft_files"))  # fmt: skip
    assert files.success and _release(everything, instance, target).success
    assert ANA_TASK in stored_text(target.data / "sft") and ANA_TASK in stored_text(
        target.data / "release"
    )
    assert [r for r in rows(target.root, "standardized", "rejects") if ANA in (r["raw_text"] or "")]
    everything_stored = stored_text(target.data)
    sent = [r for line in SAMPLE.read_bytes().splitlines() for r in orjson.loads(line)]
    for raw in PLANTED + [r["user_id"] for r in sent] + [r["run_id"] for r in sent]:
        assert raw not in everything_stored, raw  # no raw id or secret in any byte written
    assert ANA_TASK not in run_logs(instance), "previews keep senders' texts out of run storage"

    record_request(target.landing, ANA, via="cli")
    forget_job = code_location.resolve_job_def(FORGET)
    check_keys = [
        k
        for k in forget_job.asset_layer.asset_graph.asset_check_keys
        if k.name == "forgotten_users_absent"
    ]
    before = dg.materialize(everything, instance=instance, resources=resources,
                            selection=dg.AssetSelection.checks(*check_keys), raise_on_error=False)  # fmt: skip
    failed = {k.split(":")[0] for k, passed in _checks(before).items() if not passed}
    assert failed == {"raw_telemetry", "raw_records", "episodes", "events", "rejects",
                      "sft_examples", "hub_release"}  # fmt: skip

    refused = _release(everything, instance, target)
    assert not refused.success
    [failure] = [e for e in refused.all_events if e.is_step_failure]
    assert "forgotten" in failure.step_failure_data.error.message

    erased = dg.materialize(
        everything, instance=instance, resources=resources, raise_on_error=False,
        selection=dg.AssetSelection.assets("forgotten_users") | dg.AssetSelection.checks(*check_keys),
    )  # fmt: skip
    checks = _checks(erased)
    # the lake is clean at once; the local release until it is published again
    assert {k for k, passed in checks.items() if not passed} == {
        "hub_release:forgotten_users_absent"
    }
    assert _release(everything, instance, target).success
    after = dg.materialize(everything, instance=instance, resources=resources,
                           selection=dg.AssetSelection.checks(*check_keys))  # fmt: skip
    assert all(_checks(after).values()), _checks(after)

    left = stored_text(target.data)
    for trace in [ANA, ANA_TASK, *theirs]:
        assert trace not in left, trace  # no table, SFT file, release shard or card holds her
    landing_text = "".join(p.read_text() for p in batch_files(target.landing).values())
    assert ANA not in landing_text and "<PASSWORD_" not in landing_text
    pages = {r["html_sha"] for r in rows(target.root, "standardized", "dom_snapshots")}
    used = {r["html_sha"] for r in rows(target.root, "standardized", "events") if r["html_sha"]}
    assert pages == used, "the forgotten sender's pages went with their events"
    [tombstone] = rows(target.root, "privacy", "forgotten_users")
    assert tombstone["pseudonym"] == ANA and tombstone["episode_ids"] == sorted(theirs)

    rebuilt = dg.materialize(everything, instance=instance, resources=resources,
                             partition_key=DAY, selection=DAY_BUILD)  # fmt: skip
    assert rebuilt.success, "rebuilding the day from the erased landing brings nothing back"
    assert all(
        theirs.isdisjoint({r["episode_id"]}) for r in rows(target.root, "standardized", "episodes")
    )
