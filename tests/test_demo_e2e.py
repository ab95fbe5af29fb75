"""One run of the README's main command (`python -m bigaction_assets.demo`) on the bundled data.

The demo runs once per module in a temporary folder; the tests then query what it made with the
DuckDB CLI and the ADP exporter, the way the README tells a newcomer to.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from planted import PLANTED, stored_text
from sft_turns import disagreements

from bigaction_assets.rerun.fingerprint import file_states
from bigaction_assets.sft.llama_factory import openai_rules, sharegpt_rules
from bigaction_assets.sft.validate import rendering_problems
from bigaction_assets.telemetry.sample import SAMPLE

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
DUCKDB_CLI = Path(sys.executable).parent / "duckdb"
SQL_FILES = sorted((REPO / "sql").glob("*.sql"))
BUNDLED_ADP = (
    "synatra", "nnetnav-wa", "webarena_successful", "agenttuning_mind2web", "swe-smith",
    "androidcontrol", "android_in_the_wild", "swe-play-trajectories",
)  # fmt: skip
MIND2WEB_LANDING = REPO / "landing" / "mind2web" / "train_demo.json"
THE_WAVE_LANDING = REPO / "landing" / "the_wave" / "test_demo.jsonl"
TIMEOUT = 300  # seconds; a guard against a hang, not a performance assertion


@dataclass(frozen=True)
class DemoRun:
    root: Path
    env: dict[str, str]
    result: subprocess.CompletedProcess[str]

    @property
    def catalog(self) -> Path:
        return self.root / "data" / "bigaction.duckdb"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(REPO / "landing", root / "landing")
    # hermetic: no Dagster home and no model a developer may have exported (`make llm`)
    env = {
        name: value for name, value in os.environ.items()
        if not name.startswith("BIGACTION_LLM_") and name not in ("DAGSTER_HOME", "OPENAI_API_KEY")
    }  # fmt: skip
    env["BIGACTION_DATA_DIR"] = str(root / "data")
    env["BIGACTION_LANDING_DIR"] = str(root / "landing")
    result = subprocess.run(
        [sys.executable, "-m", "bigaction_assets.demo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    return DemoRun(root=root, env=env, result=result)


def duckdb_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The DuckDB CLI that ships in the venv, as the README and `make sql` call it."""
    return subprocess.run(
        [str(DUCKDB_CLI), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def first_column(table: str) -> set[str]:
    """Values of the first column of a table the DuckDB CLI printed in its box format."""
    values = set()
    for line in table.splitlines():
        if line.startswith("│"):
            values.add(line.strip("│").split("│")[0].strip())
    return values - {"source", "varchar"}


def expected_sources(landing: Path) -> set[str]:
    sources = set(BUNDLED_ADP) | {"telemetry"}  # the bundled telemetry sample, landed by the demo
    if (landing / "mind2web" / MIND2WEB_LANDING.name).exists():
        sources.add("mind2web")
    if (landing / "the_wave" / THE_WAVE_LANDING.name).exists():
        sources.add("the-wave")
    if (landing / "proactive").is_dir():
        sources.add("proactive")
    return sources


def test_demo_succeeds_and_prints_a_summary(demo: DemoRun) -> None:
    out = demo.result.stdout
    assert demo.result.returncode == 0, f"stdout:\n{out}\nstderr:\n{demo.result.stderr}"
    assert "Rows per table" in out
    assert "Rejects by reason" in out
    assert "\nUnread landing files:\n  none\n" in out, "the bundled landing folder is read whole"
    for name in BUNDLED_ADP:
        assert f"ok     adp.{name}" in out
    assert "FAILED" not in out
    assert (demo.root / "data" / "dagster" / "dagster.yaml").is_file(), "runs kept for the UI"


def test_without_a_model_the_llm_stages_run_and_call_nothing(demo: DemoRun) -> None:
    assert demo.result.returncode == 0
    query = duckdb_cli(
        str(demo.catalog), "-csv", "-noheader",
        "select (select count(*) from thoughts), (select count(*) from model_answers)",
    )  # fmt: skip
    assert query.returncode == 0, query.stderr
    assert query.stdout.strip() == "0,0"
    assert not (demo.root / "data" / "llm" / "calls.sqlite").exists(), "no call was made"
    [line] = [line for line in demo.result.stdout.splitlines() if line.startswith("Thoughts:")]
    assert "no model configured" in line and "make llm" in line


def test_catalog_query_from_the_readme_lists_every_source(demo: DemoRun) -> None:
    assert demo.result.returncode == 0
    query = duckdb_cli(str(demo.catalog), "select source, count(*) from episodes group by 1")
    assert query.returncode == 0, query.stderr
    assert first_column(query.stdout) == expected_sources(demo.root / "landing")


def test_demo_stores_the_bundled_screenshots_and_says_why_others_are_missing(demo: DemoRun):
    assert demo.result.returncode == 0
    shots = REPO / "landing" / "mind2web" / "train_demo.images"
    distinct = {hashlib.sha256(p.read_bytes()).hexdigest() for p in shots.glob("*.webp")}
    query = duckdb_cli(str(demo.catalog), "-csv", "-noheader", "select image_sha from images")
    assert query.returncode == 0, query.stderr
    assert set(query.stdout.split()) == distinct  # every demo page's screenshot, stored once
    outcomes = duckdb_cli(
        str(demo.catalog), "-csv", "-noheader",
        "select ep.source, coalesce(ev.image_error, 'stored'), count(*) from events ev "
        "join episodes ep using (episode_id) where ev.image_sha is not null "
        "or ev.image_error is not null group by all order by all",
    )  # fmt: skip
    assert outcomes.stdout.split() == [
        "android_in_the_wild,outside_landing,3",  # paths on its authors' machine
        "androidcontrol,missing_file,11",  # the ADP sample names files it does not ship
        "mind2web,stored,14",
        "webarena_successful,missing_file,8",
    ]


def test_adp_export_writes_every_synatra_trajectory(demo: DemoRun) -> None:
    assert demo.result.returncode == 0
    out = demo.root / "out.jsonl"
    export = subprocess.run(
        [sys.executable, "-m", "bigaction_assets.adp_export", "adp.synatra", str(out)],
        cwd=demo.root,
        env=demo.env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert export.returncode == 0, export.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 5


@pytest.mark.parametrize("sql_file", SQL_FILES, ids=[path.name for path in SQL_FILES])
def test_sql_query_runs_read_only_on_the_catalog(demo: DemoRun, sql_file: Path) -> None:
    assert demo.result.returncode == 0
    query = duckdb_cli("-readonly", str(demo.catalog), stdin=sql_file.read_text(encoding="utf-8"))
    assert query.returncode == 0, f"{sql_file.name}: {query.stderr}"
    assert "Error" not in query.stderr


def _answer(demo: DemoRun, sql_file: str) -> list[tuple]:
    import duckdb

    with duckdb.connect(str(demo.catalog), read_only=True) as con:
        return con.execute((REPO / "sql" / sql_file).read_text(encoding="utf-8")).fetchall()


def test_pages_per_source_counts_each_distinct_page_once(demo: DemoRun) -> None:
    """Its size column is the bytes of each source's distinct pages, however often they were
    shown: the demo's Mind2Web and WebArena episodes show some pages more than once."""
    import pyarrow.parquet as pq

    lake = demo.root / "data" / "lake" / "standardized"
    tables = {
        n: pq.read_table(lake / n).to_pylist() for n in ("episodes", "events", "dom_snapshots")
    }
    source = {e["episode_id"]: e["source"] for e in tables["episodes"]}
    size = {p["html_sha"]: p["raw_bytes"] for p in tables["dom_snapshots"]}
    views: dict[str, list[str]] = {}
    for event in tables["events"]:
        if event["kind"] == "web_observation":
            views.setdefault(source[event["episode_id"]], []).append(event["html_sha"])
    repeated = [s for s, shown in views.items() if len(set(shown) - {None}) < len(shown)]
    assert repeated, "the demo must show a page twice for this to prove anything"
    for name, page_views, distinct, mb in _answer(demo, "pages_per_source.sql"):
        shown = views[name]
        pages = {sha for sha in shown if sha is not None}
        assert (page_views, distinct) == (
            len(pages) and sum(s is not None for s in shown),
            len(pages),
        )
        expected = round(sum(size[sha] for sha in pages) / 1e6, 2) if pages else None
        assert mb == expected, name


def test_longest_episodes_are_those_with_the_most_actions(demo: DemoRun) -> None:
    import pyarrow.parquet as pq

    events = pq.read_table(demo.root / "data" / "lake" / "standardized" / "events").to_pylist()
    actions: dict[str, int] = {}
    for event in events:
        actions.setdefault(event["episode_id"], 0)
        actions[event["episode_id"]] += event["kind"].endswith("_action")
    expected = sorted(actions.items(), key=lambda item: (-item[1], item[0]))[:20]
    assert [(row[0], row[2]) for row in _answer(demo, "longest_episodes.sql")] == expected


def test_demo_builds_a_snapshot_and_a_leaderboard_from_the_bundled_predictions(demo: DemoRun):
    assert demo.result.returncode == 0
    assert "ok     leaderboard" in demo.result.stdout
    assert "| demo-careful | text | all |" in demo.result.stdout  # made without screenshots
    query = duckdb_cli(
        str(demo.catalog),
        "select model from leaderboard where split = 'all' and steps > 0 order by 1",
    )
    assert query.returncode == 0, query.stderr
    assert {"demo-careful", "demo-hasty"} <= first_column(query.stdout)
    assert (demo.root / "data" / "benchmark" / "leaderboard.svg").read_text().startswith("<svg")


def test_demo_builds_reward_examples_from_the_bundled_annotated_data(demo: DemoRun) -> None:
    assert demo.result.returncode == 0
    assert "ok     reward examples" in demo.result.stdout
    query = duckdb_cli(
        "-csv",
        "-noheader",
        str(demo.catalog),
        "select category, count(*) from reward_examples where kind = 'judge' and split = 'test' "
        "group by 1 order by 1",
    )
    assert query.returncode == 0, query.stderr
    assert query.stdout.split() == ["CD,30", "CR,30", "FA,30", "MN,30"]
    out = demo.root / "data" / "reward" / "llama_factory"
    sets = {
        f"{kind}_{split}.jsonl" for kind in ("judge", "preference") for split in ("train", "test")
    }
    assert {p.name for p in out.iterdir()} >= {"dataset_info.json", *sets}
    train = (out / "judge_train.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(train) == 12  # landing/proactive/reward_train.jsonl, 3 per category
    assert (demo.root / "data" / "annotate" / "store.sqlite3").is_file(), "items for the app"


def readme_cli_command() -> list[str]:
    """The README's one-partition command, as a newcomer would copy it."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```bash\n\s*(export DAGSTER_HOME.*?)```", readme, re.S)
    command = block.split("\n", 1)[1].replace("\\\n", " ")
    return shlex.split(command.replace(".venv/bin/", str(Path(sys.executable).parent) + "/"))


def test_the_readme_cli_command_rebuilds_one_partition_and_leaves_the_release(demo: DemoRun):
    """The README's command for CI, on the demo's instance: the partition's raw table and spine
    are rebuilt, byte for byte the same, and the release (folder and push) is not touched."""
    assert demo.result.returncode == 0, demo.result.stderr[-2000:]
    lake = demo.root / "data" / "lake"
    files = sorted((lake / "standardized").glob("*/adp.synatra.parquet"))
    before = {path: path.read_bytes() for path in files}
    assert len(before) >= 4  # episodes, events, rejects, dom_snapshots, ...
    release = file_states(demo.root / "data" / "release")
    home = demo.root / "data" / "dagster"
    env = {**demo.env, "DAGSTER_HOME": str(home)}
    command = readme_cli_command()
    assert "adp.synatra" in " ".join(command)
    done = subprocess.run(
        command, cwd=demo.root, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RUN_SUCCESS" in done.stderr
    steps = set(re.findall(r" - ([\w.]+) - STEP_SUCCESS", done.stderr))
    assert {"raw_records", "standardize_dataset", "sft_examples"} <= steps, steps
    assert not steps & {"hub_release", "hub_revision", "sft_files"}, steps
    assert {path: path.read_bytes() for path in files} == before
    assert file_states(demo.root / "data" / "release") == release


def test_demo_lands_the_telemetry_sample_scrubbed_into_the_standardized_tables(demo: DemoRun):
    """The bundled client batches go through the collector's intake: their runs are episodes,
    and no secret or raw id they carried is in any byte the demo wrote."""
    assert demo.result.returncode == 0
    query = duckdb_cli(
        str(demo.catalog), "-csv", "-noheader",
        "select count(distinct e.episode_id), count(*) from events e join episodes using "
        "(episode_id) where episodes.source = 'telemetry'",
    )  # fmt: skip
    assert query.returncode == 0, query.stderr
    episodes, events = map(int, query.stdout.strip().split(","))
    assert episodes >= 3 and events > episodes
    sent = [r for line in SAMPLE.read_bytes().splitlines() for r in orjson.loads(line)]
    written = stored_text(demo.root / "data")
    for raw in PLANTED + [r["user_id"] for r in sent] + [r["run_id"] for r in sent]:
        assert raw not in written, raw


def test_demo_writes_three_sft_formats_and_a_release_that_loads(demo: DemoRun, tmp_path) -> None:
    """The SFT files of every format and split, each line valid for its consumer and the same
    examples in each format, and a release folder whose every config loads with `datasets`."""
    from datasets import load_dataset

    assert demo.result.returncode == 0
    sft = demo.root / "data" / "sft"
    counts: dict[str, int] = {}
    by_format: dict[str, list[dict]] = {}
    for fmt in ("openai", "sharegpt", "openhands"):
        lines = [
            orjson.loads(line)
            for split in ("train", "validation", "test")
            for line in (sft / fmt / f"{split}.jsonl").read_bytes().splitlines()
        ]
        assert all(not rendering_problems({fmt: example}) for example in lines), fmt
        counts[fmt] = len(lines)
        by_format[fmt] = lines
    assert counts["openai"] > 0 and len(set(counts.values())) == 1, counts
    # every example ends on the assistant's turn, LLaMA-Factory's loader keeps every one, and
    # line by line the three files hold the same turns
    last = {
        "openai": [example["messages"][-1]["role"] for example in by_format["openai"]],
        "sharegpt": [example["conversations"][-1]["from"] for example in by_format["sharegpt"]],
        "openhands": [example["conversations"][-1]["from"] for example in by_format["openhands"]],
    }
    assert set(last["openai"]) == {"assistant"} and set(last["openhands"]) == {"gpt"}
    assert set(last["sharegpt"]) <= {"function_call", "gpt"}
    # LLaMA-Factory reads screenshots from the sharegpt files: an openai example that shows
    # some follows OpenAI's rule (images in user messages only), which its openai reading
    # takes for a misplaced turn (test_sft_images covers those examples)
    text_only = [e for e in by_format["openai"] if b"image_url" not in orjson.dumps(e)]
    assert text_only and [e for e in text_only if openai_rules(e)] == []
    assert [e for e in by_format["sharegpt"] if sharegpt_rules(e)] == []
    for number in range(counts["openai"]):
        assert disagreements({fmt: lines[number] for fmt, lines in by_format.items()}) == []
    sources = {example["id"].split("/")[0] for example in by_format["openhands"]}
    assert {"androidcontrol", "android_in_the_wild", "swe-play-trajectories"} <= sources
    info = orjson.loads((sft / "sharegpt" / "dataset_info.json").read_bytes())
    assert {entry["file_name"] for entry in info.values()} <= {p.name for p in sft.glob("*/*")}
    release = demo.root / "data" / "release"
    card = (release / "README.md").read_text()
    front = card.split("---")[1]
    configs = re.findall(r'config_name: "([^"]+)"', front)
    assert {"episodes", "events", "sft_openai", "sft_sharegpt", "sft_openhands"} <= set(configs)
    for config in configs:
        files = {"data": str(release / "data" / config / "*" / "*.parquet")}
        loaded = load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "cache"))
        assert loaded["data"].num_rows > 0, config
