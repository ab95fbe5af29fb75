"""The pure parts of the thoughts stage on tiny inputs: reading replies, what a prompt shows,
template versions, and how SFT labels where its thoughts came from."""

from __future__ import annotations

import pytest

from bigaction_assets.llm.caller import InvalidOutput
from bigaction_assets.llm.client import Completion
from bigaction_assets.sft.examples import thought_source
from bigaction_assets.thoughts import prompts
from bigaction_assets.thoughts.context import ContextSettings, EpisodeContext, render_action
from bigaction_assets.thoughts.output import clean, thought_validator, validate_thought
from bigaction_assets.thoughts.requests import episode_requests


def reply(text: str, finish: str = "stop") -> Completion:
    return Completion(text, finish, 10, 10)


@pytest.mark.parametrize(
    ("raw", "thought"),
    [
        ("Thought: I open the search box first.", "I open the search box first."),
        ('"I open the search box first."', "I open the search box first."),
        ("<think>I open the\n\n search box first.</think>", "I open the search box first."),
        ("**Thought:** 'I need the cart now.'", "I need the cart now."),
        ('The agent\'s thought before this action is: "I open the cart."', "I open the cart."),
        ("The agent's thought prior to this action was: I add two packs.", "I add two packs."),
    ],
)
def test_replies_are_cleaned(raw, thought):
    assert clean(raw) == thought
    assert validate_thought(reply(raw)) == thought


@pytest.mark.parametrize(
    ("raw", "finish", "reason"),
    [
        ("   ", "stop", "empty"),
        ("I click the button because it leads to the", "length", "truncated"),
        ("I'm sorry, I cannot help with that request.", "stop", "refusal"),
        ("Task: buy tea\nNext action: click", "stop", "echoes_prompt"),
        (
            'Observation: [Current URL: unknown] <html backend_node_id="4021"> Click me!',
            "stop",
            "echoes_prompt",
        ),
        ("The agent clicks the search button to search.", "stop", "not_first_person"),
        ("I click.", "stop", "too_short"),
        ("I click " + "and wait " * 400 + "now.", "stop", "too_long"),
    ],
)
def test_invalid_replies_say_why(raw, finish, reason):
    with pytest.raises(InvalidOutput) as raised:
        validate_thought(reply(raw, finish))
    assert raised.value.reason == reason


def test_a_reply_that_copies_the_instructions_is_refused():
    validate = thought_validator("Example: I need to say where I am flying from first, so I type.")
    assert validate(reply("I need to pick the date before I search.")) == (
        "I need to pick the date before I search."
    )
    with pytest.raises(InvalidOutput) as raised:
        validate(reply("I need to say where I am flying from first, so I type it."))
    assert raised.value.reason == "copies_instructions"


def test_a_reply_cut_by_the_token_limit_keeps_its_finished_sentences():
    text = "I see the search box at the top. I type the city so the list narrows. Then I"
    assert validate_thought(reply(text, "length")) == (
        "I see the search box at the top. I type the city so the list narrows."
    )


def event(idx: int, kind: str, **fields) -> dict:
    actor = "agent" if kind.endswith("_action") else fields.pop("actor", "environment")
    return {"episode_id": "ep", "idx": idx, "kind": kind, "actor": actor, **fields}


def test_actions_render_as_calls_code_and_messages():
    click = event(0, "api_action", function="click", kwargs='{"bid": "\\"93\\""}')
    assert render_action(click) == 'click(bid="93")'
    code = event(1, "code_action", language="bash", content="ls -la")
    assert render_action(code) == "run this bash:\nls -la"
    message = event(2, "message_action", content='Done: "3 items"')
    assert render_action(message) == 'send the user this message: "Done: \\"3 items\\""'


def test_history_keeps_the_latest_events_within_its_budget():
    events = [event(0, "text_observation", actor="user", content="Buy tea")]
    for n in range(1, 40, 2):
        events.append(event(n, "text_observation", content=f"page {n} " + "word " * 40))
        events.append(event(n + 1, "api_action", function="click", kwargs='{"bid": "1"}'))
    settings = ContextSettings(observation_tokens=20, history_tokens=200, action_tokens=50)
    context = EpisodeContext(events, {}, settings, task="Buy tea")
    assert context.history(1) == "(nothing yet: this is the first step)"  # the task only
    late = context.history(39)
    assert late.startswith("[") and "earlier events left out]" in late
    assert "page 37" in late and "page 1 " not in late
    assert "[... truncated to 20 tokens ...]" in late
    from bigaction_assets.tokens import count_tokens

    assert count_tokens(late) <= 200 + 20  # the budget, plus the left-out line


def test_requests_only_for_agent_actions_without_a_recorded_thought():
    events = [
        event(0, "text_observation", actor="user", content="Buy tea"),
        event(1, "api_action", function="click", kwargs='{"bid": "1"}', description="I start."),
        event(2, "text_observation", content="page"),
        event(3, "api_action", function="click", kwargs='{"bid": "2"}', description=" "),
        event(4, "message_action", content="bought"),
    ]
    episode = {"episode_id": "ep", "task": "Buy tea"}
    made = list(episode_requests(episode, events, {}, ContextSettings()))
    assert [(r.idx, r.kind) for r in made] == [(3, "api_action"), (4, "message_action")]
    user = made[0].messages[1]["content"]
    assert 'Thought: I start.\nAction: click(bid="1")' in user  # recorded thoughts shown
    assert user.startswith("Task: Buy tea") and 'Next action: click(bid="2")' in user


def test_the_template_hash_follows_the_files(tmp_path, monkeypatch):
    for name in prompts.FILES:
        (tmp_path / "v1").mkdir(exist_ok=True)
        (tmp_path / "v1" / name).write_text(f"{name} $task $history $action")
    monkeypatch.setattr(prompts, "PROMPTS_DIR", tmp_path)
    before = prompts.template_sha.__wrapped__("v1")
    (tmp_path / "v1" / "user.txt").write_text("changed $task $history $action")
    assert prompts.template_sha.__wrapped__("v1") != before
    from bigaction_assets.defs.thoughts.assets import THOUGHTS_VERSION

    assert THOUGHTS_VERSION.endswith(prompts.template_sha()[:12])


@pytest.mark.parametrize(
    ("thoughts", "source"),
    [
        ([("x", None), ("y", None)], "recorded"),
        ([("x", "generated"), ("y", "generated")], "generated"),
        ([("x", None), ("y", "generated")], "recorded+generated"),
        ([("x", "generated"), (None, None)], "generated+none"),
        ([(None, None), (None, None)], "none"),
        ([("x", "adp_generated"), ("y", None)], "recorded+adp_generated"),
        (
            [("x", "adp_generated"), (None, None), ("z", "generated")],
            "adp_generated+generated+none",
        ),
        ([], "none"),  # no action at all
    ],
)
def test_sft_says_where_its_thoughts_came_from(thoughts, source):
    """Each action's kind: a generated mark from the thoughts stage, `events.thought_source`
    for ADP's cached ones, else recorded; an action with no text has none."""
    events = [
        {
            "kind": "api_action", "actor": "agent", "description": text,
            "thought_generated": origin == "generated",
            "thought_source": "adp_generated" if origin == "adp_generated" else None,
        }
        for text, origin in thoughts
    ]  # fmt: skip
    assert thought_source(events) == source
