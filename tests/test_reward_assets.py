"""The reward stage through Dagster on a small lake: items into the store, labels into
`annotations` (kappa, the sensor), `reward_examples` from bundled and app judgements with
LLaMA-Factory files, and a forgotten sender leaving every reward table and the store."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import dagster as dg
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from annotate_server import add_users
from conftest import SHARED_DATA, DagsterLake, run_ingest, write_standardized

import bigaction_assets.defs.reward.assets as reward_assets
from bigaction_assets.annotate.items import annotation_items as find_items
from bigaction_assets.definitions import defs
from bigaction_assets.defs.reward.resources import open_store
from bigaction_assets.defs.reward.sensors import new_labels_sensor
from bigaction_assets.lake_reader import iter_table_rows
from bigaction_assets.privacy.forget import record_request
from bigaction_assets.release.build import ReleaseSettings, build_release
from bigaction_assets.sft.llama_factory import sharegpt_rules
from bigaction_assets.sources.proactive import ADAPTER

ROOT = Path(__file__).resolve().parents[1]
DAY = "telemetry.2025-05-14"
PAGE = "<html><body><h1>Shop</h1><button backend_node_id=5>Add milk</button>" \
       "<button backend_node_id=7>Checkout</button></body></html>"  # fmt: skip
SHA = hashlib.sha256(PAGE.encode()).hexdigest()
RUNS = {"runA": ("ana", "5"), "runB": ("bo", "7"), "runC": ("bo", "5")}
PSEUDONYMS = {"ana": "a1" * 16, "bo": "b2" * 16}
REWARD = dg.AssetSelection.assets("annotation_items", "annotations", "reward_examples")


def web_episodes() -> dict[str, list[dict]]:
    """Three runs of one task on one page: A and C click 5, B clicks 7."""
    tables: dict[str, list[dict]] = {"episodes": [], "events": [], "dom_snapshots": []}
    for run, (_, bid) in RUNS.items():
        episode_id = f"telemetry/2025-05-14/{run}"
        tables["episodes"].append({
            "episode_id": episode_id, "dataset": DAY, "source": "telemetry",
            "source_format": "telemetry", "source_split": None, "source_id": run,
            "source_file": "x.jsonl", "source_record": 0, "task": "Add milk to the cart",
            "website": "shop.example", "domain": None, "subdomain": None, "details": "{}",
            "num_events": 2, "content_sha": "0" * 64, "schema_version": 1,
        })  # fmt: skip
        tables["events"] += [
            {"episode_id": episode_id, "idx": 0, "kind": "web_observation",
             "actor": "environment", "url": "https://shop.example/", "html_sha": SHA},
            {"episode_id": episode_id, "idx": 1, "kind": "api_action", "actor": "agent",
             "function": "click", "kwargs": orjson.dumps({"bid": bid}).decode(),
             "extra": '{"success": true}'},
        ]  # fmt: skip
    tables["dom_snapshots"].append(
        {"html_sha": SHA, "raw_html": PAGE, "cleaned_html": None, "raw_bytes": len(PAGE)}
    )
    return tables


def raw_telemetry(lake_root: Path) -> None:
    """The columns the forget register reads: whose runs are whose."""
    folder = lake_root / "telemetry" / "raw_telemetry"
    folder.mkdir(parents=True)
    rows = [
        {"user_pseudonym": PSEUDONYMS[who], "session_pseudonym": PSEUDONYMS[who][::-1],
         "episode_id": f"telemetry/2025-05-14/{run}"}
        for run, (who, _) in RUNS.items()
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows), folder / "b1.parquet")


def rows(target: DagsterLake, asset: str) -> list[dict]:
    path = target.root / "reward" / asset / "all.parquet"
    return pq.read_table(path).to_pylist() if path.exists() else []


@pytest.fixture(scope="module")
def code_location() -> dg.Definitions:
    return defs()


@pytest.fixture(scope="module")
def stage(code_location, tmp_path_factory):
    root = tmp_path_factory.mktemp("reward")
    target = DagsterLake(landing=root / "landing", data=root / "data")
    landing = ROOT / "landing"
    for dataset, files in ADAPTER.dataset_files(landing / "proactive").items():
        tables = run_ingest(ADAPTER, dataset, files, landing).tables
        write_standardized(target.root, f"proactive.{dataset}", tables)
    write_standardized(target.root, DAY, web_episodes())
    raw_telemetry(target.root)
    store = target.resource
    add_users(store.annotation_store, ["u1", "u2", "u3"])
    resources = {"lake": store}
    everything = [*code_location.assets, *code_location.asset_checks]
    with dg.DagsterInstance.ephemeral() as instance:
        built = dg.materialize(everything, instance=instance, resources=resources,
                               selection=dg.AssetSelection.assets("annotation_items"))  # fmt: skip
        assert built.success
        yield target, store, instance, resources, everything


def label_everything(lake) -> None:
    """Three annotators: web run B correct, A incorrect (with one unsure), C correct; on
    code_11's first turn all accept task 0 and one also task 1; its second turn (no task
    proposed) all say no help is needed."""
    app = open_store(lake)
    web = {"runA": ["incorrect", "incorrect", "unsure"], "runB": ["correct"] * 3,
           "runC": ["correct"] * 3}  # fmt: skip
    turns = {"proactive/code_11#1": [[0], [0, 1], [0]], "proactive/code_11#3": [[], [], []]}
    numbers = {
        r["item_id"]: r["item_no"] for r in app.db.connection().execute("select * from items")
    }
    for user in (1, 2, 3):
        for run, verdicts in web.items():
            item = numbers[f"telemetry/2025-05-14/{run}#0"]
            app.db.connection().execute(
                "insert into assignments values (?, ?, 'open', 0)", (item, user)
            )
            app.save_label(user, item, {"verdict": verdicts[user - 1]})
        for item_id, accepted in turns.items():
            item = numbers[item_id]
            app.db.connection().execute(
                "insert into assignments values (?, ?, 'open', 0)", (item, user)
            )
            chosen = accepted[user - 1]
            app.save_label(user, item, {"accepted_tasks": chosen, "help_needed": bool(chosen)})


def test_items_are_proactive_turns_and_web_steps_with_their_page(stage) -> None:
    target, store, *_ = stage
    items = rows(target, "annotation_items")
    kinds = Counter(item["item_kind"] for item in items)
    assert kinds["web_step"] == 3 and kinds["proactive_turn"] > 150
    assert all(item["item_id"].startswith(item["episode_id"] + "#") for item in items)
    web = next(i for i in items if i["item_id"] == "telemetry/2025-05-14/runB#0")
    payload = orjson.loads(web["payload"])
    assert payload["actions"] == ['click(bid="7")'] and payload["success_claim"] is True
    assert "bnid=7 data-ba-target" in web["page_html"] and "<script" not in web["page_html"]
    turn = next(i for i in items if i["item_id"] == "proactive/code_11#3")
    payload = orjson.loads(turn["payload"])
    assert payload["candidate_tasks"] == [] and len(payload["observations"]) == 2
    assert open_store(store).count_items() == len(items)


def test_labels_reach_annotations_with_kappa_through_the_sensor(stage, code_location) -> None:
    target, store, instance, resources, everything = stage
    with dg.build_sensor_context(instance=instance, resources=resources) as context:
        assert isinstance(new_labels_sensor(context), dg.SkipReason)  # no labels yet
    label_everything(store)
    with dg.build_sensor_context(instance=instance, resources=resources) as context:
        request = new_labels_sensor(context)
        assert isinstance(request, dg.RunRequest) and request.run_key == "labels-15"
        assert isinstance(new_labels_sensor(context), dg.SkipReason)  # once per revision
    job = code_location.resolve_job_def("collect_annotations")
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == {
        "annotations",
        "reward_examples",
    }
    result = dg.materialize(everything, instance=instance, resources=resources,
                            selection=dg.AssetSelection.assets("annotations"))  # fmt: skip
    labels = rows(target, "annotations")
    assert len(labels) == 15 and {r["annotator_id"] for r in labels} == {"a1", "a2", "a3"}
    [materialization] = result.asset_materializations_for_node("annotations")
    metadata = materialization.metadata
    assert metadata["fleiss_kappa/web_step"].value == pytest.approx(0.55, abs=1e-4)  # 22/40
    assert metadata["fleiss_kappa/proactive_help"].value == pytest.approx(1.0)
    kappa = metadata["fleiss_kappa"].data
    assert kappa["proactive_task"]["items"] == 5 and kappa["web_step"]["ratings"] == 9


def test_reward_examples_follow_the_rules_and_join_to_episodes(stage) -> None:
    target, _, instance, resources, everything = stage
    selection = dg.AssetSelection.assets("reward_examples")
    assert dg.materialize(everything, instance=instance, resources=resources,
                          selection=selection).success  # fmt: skip
    examples = {r["example_id"]: r for r in rows(target, "reward_examples")}
    judge = [r for r in examples.values() if r["kind"] == "judge"]
    # each file keeps its split; ProactiveAgent's draw (30 per category) takes all 7 app ones
    by_split = Counter((r["origin"], r["split"]) for r in judge)
    assert by_split == {("bundled", "test"): 120, ("bundled", "train"): 12, ("app", "test"): 7}
    app = {r["example_id"]: r["category"] for r in judge if r["origin"] == "app"}
    assert app == {
        "proactive/code_11#1.none": "MN", "proactive/code_11#1.task0": "CD",
        **{f"proactive/code_11#1.task{k}": "FA" for k in range(1, 5)},
        "proactive/code_11#3.none": "CR",
    }  # fmt: skip
    test = Counter(
        r["category"] for r in judge if r["split"] == "test" and r["origin"] == "bundled"
    )
    assert test == {"MN": 30, "CR": 30, "CD": 30, "FA": 30}
    source_splits = {
        r["episode_id"]: r["source_split"]
        for key in ("proactive.reward_test", "proactive.reward_train")
        for r in iter_table_rows(
            target.root, "standardized", "episodes", ["episode_id", "source_split"], key
        )
    }
    bundled = [r for r in examples.values() if r["origin"] == "bundled"]
    assert all(r["split"] == source_splits[r["episode_id"]] for r in bundled)
    assert {r["split"] for r in bundled if r["kind"] == "preference"} == {"train", "test"}
    [web] = [r for r in examples.values() if r["item_kind"] == "web_step"]
    assert web["item_id"] == "telemetry/2025-05-14/runB#0"
    assert web["rejected_item_id"] == "telemetry/2025-05-14/runA#0"
    record = orjson.loads(web["record"])
    assert record["chosen"]["value"] == 'click(bid="7")'
    assert record["rejected"]["value"] == 'click(bid="5")'
    assert "data-ba-target" not in record["conversations"][0]["value"]
    answer = orjson.loads(orjson.loads(examples["proactive/code_11#1.task0"]["record"])
                          ["conversations"][1]["value"])  # fmt: skip
    assert answer["judgement"] == "accepted" and answer["thought"]
    episodes = {
        r["episode_id"]
        for key in ("proactive.traces", "proactive.reward_test", "proactive.reward_train", DAY)
        for r in iter_table_rows(target.root, "standardized", "episodes", ["episode_id"], key)
    }
    assert {r["episode_id"] for r in examples.values()} <= episodes
    out = target.data / "reward" / "llama_factory"
    info = orjson.loads((out / "dataset_info.json").read_bytes())
    assert info["bigaction_preference_train"]["ranking"] is True
    assert "ranking" not in info["bigaction_judge_train"]
    for entry in info.values():
        lines = (out / entry["file_name"]).read_text().splitlines()
        assert lines and all(set(entry["columns"].values()) <= set(orjson.loads(x)) for x in lines)
        # LLaMA-Factory's loader keeps every line: plain SFT, or ranking data as it expects it
        ranking = entry.get("ranking", False)
        assert [x for x in lines if sharegpt_rules(orjson.loads(x), ranking=ranking)] == []


@pytest.mark.skipif(not (SHARED_DATA / "llama_factory").exists(), reason="../shared is absent")
def test_preference_entries_have_llama_factorys_shape(stage) -> None:
    target, *_ = stage
    reference = orjson.loads((SHARED_DATA / "llama_factory" / "dataset_info.json").read_bytes())
    ours = orjson.loads(
        (target.data / "reward" / "llama_factory" / "dataset_info.json").read_bytes()
    )
    dpo = reference["dpo_en_demo"]
    entry = ours["bigaction_preference_test"]
    assert {k: entry[k] for k in ("formatting", "ranking")} == {
        k: dpo[k] for k in ("formatting", "ranking")
    }
    assert dpo["columns"].items() <= entry["columns"].items()
    sample = orjson.loads((SHARED_DATA / "llama_factory" / "dpo_en_demo.head20.json").read_bytes())[
        0
    ]
    mine = orjson.loads(
        (target.data / "reward" / "llama_factory" / entry["file_name"]).read_text().splitlines()[0]
    )
    assert set(sample) <= set(mine) and mine["chosen"].keys() == sample["chosen"].keys()


def test_the_release_carries_the_reward_sets_that_join_to_its_episodes(stage, tmp_path) -> None:
    target, *_ = stage
    proactive_only = ["proactive.reward_test", "proactive.traces"]
    release = build_release(target.root, target.landing, tmp_path / "release", proactive_only,
                            ReleaseSettings())  # fmt: skip
    assert {"reward_judge", "reward_preference"} <= set(release.rows)
    # the test file's 120 and the app's 7 on code_11 (a trace); the train file is not released
    assert release.rows["reward_judge"] == {"test": 127}
    shards = sorted((release.folder / "data" / "reward_preference" / "all").glob("*.parquet"))
    pairs = pa.concat_tables([pq.read_table(s) for s in shards]).to_pylist()
    assert pairs and all(p["item_kind"] == "proactive_turn" for p in pairs)  # web pair left out
    # LLaMA-Factory's own columns, each pair exactly the lake's record
    lake = {r["example_id"]: r for r in rows(target, "reward_examples")}
    for pair in pairs:
        record = orjson.loads(lake[pair["example_id"]]["record"])
        assert {k: pair[k] for k in ("conversations", "chosen", "rejected", "system")} == record
        assert pair["chosen"]["from"] == pair["rejected"]["from"] == "gpt"
    card = (release.folder / "README.md").read_text()
    assert 'config_name: "reward_judge"' in card and "joins to `episodes`" in card


def test_a_forgotten_sender_leaves_the_reward_tables_and_the_store(stage, code_location) -> None:
    target, store, instance, resources, everything = stage
    record_request(target.landing, PSEUDONYMS["ana"], via="cli")
    job = code_location.resolve_job_def("forget_users")
    checks = job.asset_layer.asset_graph.asset_check_keys
    reward_checks = [k for k in checks if k.asset_key.to_user_string() in
                     ("annotation_items", "annotations", "reward_examples")]  # fmt: skip
    assert len(reward_checks) == 4
    selection = dg.AssetSelection.checks(*reward_checks)
    before = dg.materialize(everything, instance=instance, resources=resources,
                            selection=selection, raise_on_error=False)  # fmt: skip
    assert not all(e.passed for e in before.get_asset_check_evaluations())
    erased = dg.materialize(
        everything, instance=instance, resources=resources,
        selection=dg.AssetSelection.assets("forgotten_users", "annotations")
        | dg.AssetSelection.checks(*reward_checks),
    )  # fmt: skip
    assert erased.success
    assert all(e.passed for e in erased.get_asset_check_evaluations())
    gone = "telemetry/2025-05-14/runA"
    for asset in ("annotation_items", "annotations", "reward_examples"):
        assert gone not in orjson.dumps(rows(target, asset)).decode(), asset
    assert open_store(store).items_of([gone]) == set()
    assert [r for r in rows(target, "annotation_items") if "runB" in r["item_id"]]
    rebuilt = dg.materialize(everything, instance=instance, resources=resources, selection=REWARD)
    assert rebuilt.success
    assert gone not in orjson.dumps(rows(target, "annotation_items")).decode()


def sharded_web_lake(root: Path) -> Path:
    """The three web runs landed as three shards of one day (each shard its own episode ids)."""
    lake_root = root / "lake"
    for shard in ("a", "b", "c"):
        tables = web_episodes()
        key = f"{DAY}~{shard}"
        for table in tables.values():
            for row in table:
                if "episode_id" in row:
                    row["episode_id"] = row["episode_id"].replace("/run", f"/{shard}-run")
                if "dataset" in row:
                    row["dataset"] = key
        write_standardized(lake_root, key, tables)
    return lake_root


def test_the_items_cap_holds_per_dataset_however_many_shards_it_landed_as(tmp_path) -> None:
    lake_root = sharded_web_lake(tmp_path)
    everything = list(find_items(lake_root))
    assert len(everything) == 9 and len({i["item_id"] for i in everything}) == 9
    capped = list(find_items(lake_root, per_dataset=4))
    assert [i["item_id"] for i in capped] == [i["item_id"] for i in everything[:4]]
    assert len(list(find_items(lake_root, datasets=[DAY]))) == 9, "a name takes every shard"
    one = list(find_items(lake_root, datasets=[f"{DAY}~b"]))
    assert {i["dataset"] for i in one} == {f"{DAY}~b"} and len(one) == 3


def test_a_dataset_named_that_is_not_in_the_lake_is_an_error_not_nothing(tmp_path) -> None:
    lake_root = sharded_web_lake(tmp_path)
    with pytest.raises(
        ValueError, match=r"telemetry\.2025-05-15.*there are: .*telemetry\.2025-05-14"
    ):
        list(find_items(lake_root, datasets=["telemetry.2025-05-15"]))


def test_the_app_is_loaded_only_from_a_whole_items_partition(
    tmp_path, code_location, monkeypatch
) -> None:
    """Items are validated and written a batch at a time; an item refused late fails the step
    before the app's store sees any of this build."""
    target = DagsterLake(landing=tmp_path / "landing", data=tmp_path / "data")
    sharded_web_lake(target.data)
    everything = [*code_location.assets, *code_location.asset_checks]
    items = dg.AssetSelection.assets("annotation_items")

    def build() -> bool:
        with dg.DagsterInstance.ephemeral() as instance:
            return dg.materialize(
                everything, instance=instance, resources={"lake": target.resource},
                selection=items, raise_on_error=False,
            ).success  # fmt: skip

    assert build()
    assert open_store(target.resource).count_items() == 9 == len(rows(target, "annotation_items"))
    found = reward_assets.find_items

    def then_a_bad_one(*args, **kwargs):
        made = list(found(*args, **kwargs))
        yield from ({**item, "item_id": f"{item['item_id']}.again"} for item in made)
        yield {**made[0], "item_id": "bad#0", "item_kind": "not_a_kind"}

    monkeypatch.setattr(reward_assets, "find_items", then_a_bad_one)
    assert not build()
    assert open_store(target.resource).count_items() == 9, "nothing of the failed build loaded"
    assert len(rows(target, "annotation_items")) == 9, "the partition is the old one"
