"""Parity with ADP: our calls match those of ADP's own OpenHands SFT output, call by call, on the
bundled fixtures and on every ADP dataset in ../shared/data/adp that carries ADP's output."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from adp_parity import FINISH, Call, adp_layout, adp_record, normalize, unclosed_block
from conftest import run_ingest

from bigaction_assets.sft.conversation import build_conversation
from bigaction_assets.sft.openhands_blocks import read_message, unwritable
from bigaction_assets.sft.openhands_format import render_openhands, typed_arguments
from bigaction_assets.sft.tools import ToolSpec
from bigaction_assets.sources.adp import ADAPTER

ROOT = Path(__file__).resolve().parents[1]
ADP_SFT = ROOT / "tests" / "fixtures" / "adp_sft"
LANDING = ROOT / "landing"
SHARED_ADP = ROOT.parent / "shared" / "data" / "adp"
WEB = frozenset({"synatra", "nnetnav-wa", "nnetnav-live", "openhands"})


@dataclass(frozen=True)
class Tolerated:
    why: str
    datasets: frozenset[str]


# Every way our calls may differ from ADP's, why, and the datasets where it may; anything else
# fails the test.
TOLERATED = {
    "browser wrapper": Tolerated(
        "ADP wraps web actions as browser(code='click(...)'); we call click(...) directly, so "
        "one tool spec serves the openai, sharegpt and openhands formats.",
        WEB,
    ),
    "api as code": Tolerated(
        "ADP calls a dataset's own functions (KG queries, WebShop's search and click, "
        "SWE-agent's commands and submit, OpenHands' delegation, Toucan's tools) as Python-call "
        "text inside execute_ipython_cell or execute_bash; we keep them the api_actions they "
        "are in the standardized data: functions with JSON arguments and their own specs.",
        frozenset(
            {
                "agenttuning_kg",
                "agenttuning_webshop",
                "nebius_SWE-agent-trajectories",
                "openhands",
                "swe-smith",
                "toucan_1_5m",
            }
        ),
    ),
    "other languages as ipython": Tolerated(
        "ADP runs code in languages OpenHands has no tool for as execute_ipython_cell with "
        'javascript("<code>") text (the code unescaped inside the quotes); we call '
        "execute_<language> with the code itself.",
        frozenset({"code_feedback"}),
    ),
    "finish task_completed": Tolerated(
        "ADP asserts task_completed=true at every finish; we say it only where the source "
        "records the outcome (a resolved flag, a dataset of successful runs), and none of "
        "these standardized samples does.",
        frozenset(
            {
                "agenttuning_db",
                "agenttuning_kg",
                "agenttuning_mind2web",
                "agenttuning_os",
                "agenttuning_webshop",
                "code_feedback",
                "codeactinstruct",
                "nebius_SWE-agent-trajectories",
                "nnetnav-live",
                "nnetnav-wa",
                "openhands",
                "orca_agentinstruct",
                "swe-play-trajectories",
                "swe-smith",
                "synatra",
                "toucan_1_5m",
            }
        ),
    ),
    "stock closing": Tolerated(
        "Where a trajectory has no closing message ADP's converter appends one drawn at random "
        "(unseeded) from five stock phrases; its std and SFT samples came from different runs, "
        "so both messages are stock phrases, only not the same one.",
        frozenset({"nebius_SWE-agent-trajectories"}),
    ),
    "markup inside a value": Tolerated(
        "SWE-Play records the agent's own finish call as OpenHands parameters inside <finish> "
        "tags; ADP puts that markup inside the message of its own finish block, where no parser "
        "can tell the parameters apart, while we read the agent's call (its message; "
        "task_completed only from a recorded outcome). ADP's block text is compared with the "
        "agent's parameters written back inside ADP's layout.",
        frozenset({"swe-play-trajectories"}),
    ),
    "final message without <finish>": Tolerated(
        "ADP leaves a closing message that is not marked <finish> as text; we end every "
        "episode with finish(message=...). SWE-Play's records hold the agent's own finish call "
        "as OpenHands markup in that message, cut before </function>: we read the call it "
        "records.",
        frozenset({"swe-play-trajectories"}),
    ),
}


@dataclass(frozen=True)
class Case:
    dataset: str
    standardized: Path  # ADP trajectories, as landed
    adp_output: Path  # ADP's SFT output for the same trajectories


FIXTURES = [
    Case(path.stem, LANDING / "adp" / f"{path.stem}.json", path)
    for path in sorted(ADP_SFT.glob("*.json"))
]
SHARED = (
    [
        Case(folder.name, folder / "sample_std.json", folder / "sample_sft_openhands.json")
        for folder in sorted(SHARED_ADP.iterdir())
        if (folder / "sample_sft_openhands.json").is_file()
    ]
    if SHARED_ADP.is_dir()
    else []
)


def our_calls(
    episode: dict[str, Any], events: list[dict[str, Any]]
) -> tuple[list[Call], dict[str, ToolSpec]]:
    """The episode's calls as every format renders them (where OpenHands blocks can hold them,
    also exactly what its rendering parses back to), and the specs of its tools."""
    conversation = build_conversation(episode, events)
    calls = [(c.name, c.arguments) for turn in conversation.turns for c in turn.tool_calls]
    specs = {spec.name: spec for spec in conversation.tools}
    if not any(has_markup(call) for call in calls):
        rendered = render_openhands(conversation)
        read = [
            read_message(e["value"])[1] for e in rendered["conversations"] if e["from"] == "gpt"
        ]
        parsed = [
            (name, typed_arguments(params, specs.get(name)))
            for name, params in (call for call in read if call is not None)
        ]
        assert parsed == [stripped(call) for call in calls], conversation.episode_id
    return calls, specs


def stripped(call: Call) -> Call:
    """A call as OpenHands reads it back: string values without the blanks around them."""
    name, arguments = call
    return name, {k: v.strip() if isinstance(v, str) else v for k, v in arguments.items()}


def compare(case: Case, tmp_path: Path) -> Counter[str]:
    """Compare every call of every record; the tolerated differences met, by name."""
    landed = tmp_path / "adp" / f"{case.dataset}.json"
    landed.parent.mkdir(parents=True)
    landed.write_bytes(case.standardized.read_bytes())
    ingested = run_ingest(ADAPTER, case.dataset, [landed], tmp_path)
    assert ingested.rows("rejects") == []
    records = {str(r["id"]): r for r in json.loads(case.adp_output.read_text())}
    episodes = ingested.rows("episodes")
    assert {e["source_id"] for e in episodes} == set(records)
    used: Counter[str] = Counter()
    compared = 0
    for episode in episodes:
        own = [e for e in ingested.rows("events") if e["episode_id"] == episode["episode_id"]]
        ours, specs = our_calls(episode, own)
        adp = adp_record(records[episode["source_id"]])
        # ADP's parameters are block text: read them by our spec of the function, as ours are
        theirs = [(name, typed_arguments(params, specs.get(name))) for name, params in adp.calls]
        if adp.final_text is not None and ours and ours[-1][0] == FINISH:
            used["final message without <finish>"] += 1
            recorded = unclosed_block(adp.final_text)
            as_text = (FINISH, {"message": adp.final_text})
            theirs.append(recorded if recorded is not None and ours[-1] != as_text else as_text)
        assert len(ours) == len(theirs), (episode["source_id"], len(ours), len(theirs))
        for position, (mine, call) in enumerate(zip(ours, theirs, strict=True)):
            normalized, steps = normalize(call, mine, episode["task_completed"])
            if normalized != mine and position < len(adp.blocks):
                shown = written_back(mine) if mine[0] == FINISH else mine
                if has_markup(shown):
                    steps = same_text(shown, adp.blocks[position], episode["task_completed"])
                    normalized = mine if steps is not None else normalized
            assert normalized == mine, (episode["source_id"], position, mine, call, steps)
            used.update(steps)
            compared += 1
    assert compared > 0
    return used


def written_back(finish: Call) -> Call:
    """A finish we read from an agent's `<finish>` markup, with the parameters the agent wrote
    (`task_completed` true in all of SWE-Play's) back as its message's text."""
    written = f"<parameter=message>{finish[1].get('message')}</parameter>\n"
    return FINISH, {"message": f"{written}<parameter=task_completed>true</parameter>"}


def has_markup(call: Call) -> bool:
    return bool(unwritable(call[0], call[1], ""))


def same_text(mine: Call, block: str, completed: bool | None) -> list[str] | None:
    """Where a value holds block markup, no parser can tell ADP's parameters apart: compare
    ADP's block text with our call written in ADP's layout instead."""
    if adp_layout(mine) == block:
        return ["markup inside a value"]
    asserted = (mine[0], {**mine[1], "task_completed": "true"})
    if mine[0] == FINISH and completed is None and adp_layout(asserted) == block:
        return ["markup inside a value", "finish task_completed"]
    return None


def assert_tolerated(dataset: str, used: Counter[str]) -> None:
    for name in used:
        assert name in TOLERATED, name
        assert dataset in TOLERATED[name].datasets, f"{name!r} is not tolerated in {dataset}"


@pytest.mark.parametrize("case", FIXTURES, ids=lambda case: case.dataset)
def test_bundled_calls_match_adp(case: Case, tmp_path: Path) -> None:
    assert_tolerated(case.dataset, compare(case, tmp_path))


@pytest.mark.skipif(not SHARED, reason=f"no ADP samples with ADP's SFT output at {SHARED_ADP}")
@pytest.mark.parametrize("case", SHARED, ids=lambda case: case.dataset)
def test_shared_calls_match_adp(case: Case, tmp_path: Path) -> None:
    assert_tolerated(case.dataset, compare(case, tmp_path))


def test_task_completed_where_the_source_records_it(tmp_path: Path) -> None:
    """A resolved run finishes with task_completed true, a failed one false, an unknown one
    without it: ADP's `true` everywhere is tolerated only where nothing is recorded."""
    trajectories = [
        {
            "id": name,
            "content": [
                {"class_": "text_observation", "content": "Fix it", "source": "user"},
                {"class_": "message_action", "content": "<finish> Done </finish>"},
            ],
            "details": details,
        }
        for name, details in (("ok", {"resolved": "True"}), ("bad", {"resolved": False}),
                              ("unknown", {}))
    ]  # fmt: skip
    landed = tmp_path / "adp" / "runs.json"
    landed.parent.mkdir(parents=True)
    landed.write_text(json.dumps(trajectories))
    ingested = run_ingest(ADAPTER, "runs", [landed], tmp_path)
    finish = {}
    for episode in ingested.rows("episodes"):
        own = [e for e in ingested.rows("events") if e["episode_id"] == episode["episode_id"]]
        [call] = our_calls(episode, own)[0]
        finish[episode["source_id"]] = call
    assert finish == {
        "ok": (FINISH, {"message": "Done", "task_completed": "true"}),
        "bad": (FINISH, {"message": "Done", "task_completed": "false"}),
        "unknown": (FINISH, {"message": "Done"}),
    }
    adp = (FINISH, {"message": "Done", "task_completed": "true"})
    assert normalize(adp, finish["unknown"], None) == (finish["unknown"], ["finish task_completed"])
    assert normalize(adp, finish["bad"], False)[0] != finish["bad"]
