"""What each turn of a conversation adds to each SFT format's length, worked out once: the
facts the message lengths (`message_lengths`) add up, and the tokens of an assistant run's
sharegpt value (its calls after its thought, in LLaMA-Factory's thought words)."""

from __future__ import annotations

from bigaction_assets.joined_tokens import Facts, facts, joined
from bigaction_assets.sft.images import IMAGE_TOKENS, openhands_parts
from bigaction_assets.sft.lengths import CALL_OVERHEAD, MESSAGE_OVERHEAD
from bigaction_assets.sft.openhands_format import function_block, result_header
from bigaction_assets.sft.sharegpt_format import THOUGHT_WORDS, with_thought
from bigaction_assets.sft.turns import Turn
from bigaction_assets.tokens import count_tokens

BLANK_LINE = "\n\n"


class TurnFacts:
    """What each turn of one conversation contributes to each format, worked out once.

    Turns are remembered by identity: windows of a conversation share its turn objects.
    `image_tokens` is what one screenshot costs in the formats that carry images.
    """

    def __init__(self, image_tokens: int = IMAGE_TOKENS) -> None:
        self.image_tokens = image_tokens
        self._known: dict[int, tuple[Turn, int, Facts, Facts]] = {}
        self._gpt: dict[int, tuple[Turn, int]] = {}

    def gpt_tokens(self, turn: Turn) -> int:
        """Tokens of an assistant turn's sharegpt message, when it is a run of its own."""
        known = self._gpt.get(id(turn))
        if known is None or known[0] is not turn:
            known = self._gpt[id(turn)] = (turn, MESSAGE_OVERHEAD + gpt_tokens([turn], self))
        return known[1]

    def of(self, turn: Turn) -> tuple[int, Facts, Facts]:
        """(its openai tokens besides its content, its openhands value, its content)."""
        known = self._known.get(id(turn))
        if known is None or known[0] is not turn:
            content = facts(turn.content)
            extra = 0
            if turn.role == "assistant":
                for call in turn.tool_calls:
                    extra += CALL_OVERHEAD + count_tokens(call.id) + count_tokens(call.name)
                    extra += facts(call.arguments_json).tokens
                blocks = [facts(function_block(call)) for call in turn.tool_calls]
                value = joined(BLANK_LINE, ([content] if turn.content else []) + blocks)
            elif turn.role == "tool":
                extra += count_tokens(turn.tool_call_id) if turn.tool_call_id else 0
                shown = [facts(part) for part in openhands_parts(turn)[: len(turn.images)]]
                rest = [content] if turn.content or not turn.images else []
                value = joined("\n", [facts(result_header(turn)), *shown, *rest])
            elif turn.images:
                value = joined("\n", [facts(part) for part in openhands_parts(turn)])
            else:
                value = content
            known = self._known[id(turn)] = (turn, extra, value, content)
        return known[1], known[2], known[3]


TurnInfo = tuple[int, Facts, Facts]  # TurnFacts.of: openai extra tokens, openhands value, content


def thought_and_calls_tokens(thought: Facts, calls: Facts) -> int:
    """Tokens of `with_thought(thought, calls)`. With thought words that end a segment where
    they meet the text (LLaMA-Factory's default ones do: the opening ends, and the closing
    starts and ends, with a newline), that is the words' own counts, the parts' counts, and
    the one seam where the thought's last segment meets the newline of the closing word."""
    opening, closing = THOUGHT_WORDS
    composable = opening.endswith("\n") and closing.endswith("\n") and closing[:1] == "\n"
    if composable and thought.clean_start and calls.clean_start and facts(closing[1:]).clean_start:
        seam = count_tokens(thought.last + "\n") - count_tokens(thought.last)
        tokens = count_tokens(opening) + thought.tokens + seam + count_tokens(closing[1:])
        return tokens + calls.tokens
    return count_tokens(with_thought(thought.text, calls.text))


def gpt_tokens(group: list[Turn], turns: TurnFacts) -> int:
    """Tokens of an assistant run's sharegpt value: its calls after its thought, or its text."""
    texts = [turns.of(turn)[2] for turn in group if turn.content]
    text = joined(BLANK_LINE, texts)
    payload = [call.call_json for turn in group for call in turn.tool_calls]
    if not payload:
        return text.tokens
    calls = facts(payload[0] if len(payload) == 1 else f"[{', '.join(payload)}]")
    return thought_and_calls_tokens(text, calls) if texts else calls.tokens
