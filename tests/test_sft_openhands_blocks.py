"""OpenHands blocks read by OpenHands' own rules: what round-trips, what cannot be written (a data
reason to leave an episode out), and finish calls an agent wrote as text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import SHARED_DATA

from bigaction_assets.sft.examples import (
    FORMAT_MARKUP,
    EpisodeSkipped,
    ExampleSettings,
    episode_examples,
)
from bigaction_assets.sft.openhands_blocks import (
    block_text,
    read_message,
    unwritable,
    written_finish,
)

DONE = "<parameter=message>Done.</parameter>"
SWE_PLAY = SHARED_DATA / "adp" / "swe-play-trajectories" / "sample_std.json"


@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "ls -la"},
        {"message": "Done.\nIt works.", "code": "x = '<function=f>'"},  # markup that opens nothing
        {"text": "see <parameter=path> in the docs"},
        {"page_number": 3, "options": ["a", "b"]},
    ],
)
def test_writable_calls_read_back_as_written(arguments):
    assert unwritable("tool", arguments, "Thinking.") == []
    text = f"Thinking.\n\n{block_text('tool', arguments)}"
    thought, call = read_message(text)
    expected = {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
    assert thought == "Thinking." and call == ("tool", expected)


@pytest.mark.parametrize(
    ("arguments", "thought", "found"),
    [
        ({"message": "<parameter=m>x</parameter>"}, "", "</parameter>"),
        ({"file_text": "a </function> b"}, "", "</function"),
        ({"file_text": "stop at </function"}, "", "</function"),
        ({"x": "1"}, "I call <function=x> next", "<function="),
        ({"": "1"}, "", "empty"),
    ],
)
def test_unwritable_calls_are_named_and_would_not_read_back(arguments, thought, found):
    problems = unwritable("tool", arguments, thought)
    assert problems and found in problems[0]
    text = f"{thought}\n\n{block_text('tool', arguments)}".strip()
    try:
        read = read_message(text)
    except ValueError:
        return  # OpenHands' rules cannot read it at all
    assert read != (thought, ("tool", {k: str(v) for k, v in arguments.items()}))


def test_what_openhands_would_misread_is_refused():
    for text, problem in [
        ("<function=f>\n<parameter=a>1</parameter>", "not closed"),
        ("<function=f>\n<parameter=a>1</parameter>\n</function>\nafter", "text after the call"),
        ("<function=f>\nloose<parameter=a>1</parameter>\n</function>", "outside its parameters"),
    ]:
        with pytest.raises(ValueError, match=problem):
            read_message(text)
    assert read_message("No call here.") == ("No call here.", None)


@pytest.mark.parametrize(
    ("text", "parameters"),
    [
        # SWE-Play: the stop word cut the closing tag
        (f"<function=finish>\n{DONE}\n<parameter=task_completed>true</parameter>",
         {"message": "Done.", "task_completed": "true"}),
        ("<function=finish>\n<parameter=message>\nDone.\n</parameter>\n</function>",
         {"message": "Done."}),
        (f"<finish>\n{DONE}\n</finish>", {"message": "Done."}),
        ("<finish> Done. </finish>", None),  # NNetNav's answer: plain text, not parameters
        (f"<function=finish>\n{DONE} and more", None),
        ("<function=click>\n<parameter=bid>3</parameter>", None),
        ("Done.", None),
    ],
)  # fmt: skip
def test_finish_calls_written_as_text(text, parameters):
    assert written_finish(text) == parameters


def adp_episode(content: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An episode and its events as the spine stores them (kwargs as ADP's literal strings)."""
    events = [{"episode_id": "t/1", "idx": idx, **event} for idx, event in enumerate(content)]
    episode = {"episode_id": "t/1", "dataset": "adp.t", "source": "t", "task": "Edit it."}
    return episode, events


def test_an_episode_whose_call_cannot_be_written_is_left_out_for_its_data():
    episode, events = adp_episode([
        {"kind": "text_observation", "actor": "user", "content": "Edit it."},
        {"kind": "api_action", "actor": "agent", "function": "str_replace_editor",
         "kwargs": json.dumps({"new_str": json.dumps("x</parameter>y")})},
    ])  # fmt: skip
    with pytest.raises(EpisodeSkipped) as skipped:
        episode_examples(episode, events, {}, ExampleSettings())
    assert skipped.value.reason == FORMAT_MARKUP
    assert "str_replace_editor.new_str holds </parameter>" in skipped.value.detail
    # without the OpenHands format, nothing stops it
    assert episode_examples(episode, events, {}, ExampleSettings(formats=("openai", "sharegpt")))


@pytest.mark.skipif(not SWE_PLAY.exists(), reason=f"{SWE_PLAY} is absent (../shared)")
def test_swe_plays_written_finishes_read_as_calls():
    trajectories = json.loads(SWE_PLAY.read_text())
    finals = [trajectory["content"][-1]["content"] for trajectory in trajectories]
    read = [written_finish(text) for text in finals]
    assert all(parameters is not None for parameters in read)
    for parameters in read:
        assert set(parameters) == {"message", "task_completed"}
        assert unwritable("finish", parameters, "") == []
