"""Token counts of joined texts, composed from their parts without building or rescanning them.

A chat example shows texts made by joining others: turns merged with a blank line, a tool
result under its header line. Counting such a text means hashing it, cutting it into segments
and looking each up (`tokens.count_tokens`), for every window tried and every format. But
cl100k_base pieces never cross a segment start (a newline followed by blanks and a non-blank
character, see `tokens.segments`): when `b` starts with a non-blank character,

    segments(a + "\\n\\n" + b) == segments(a)[:-1] + [last(a) + "\\n\\n"] + segments(b)

so the count of the join is known from the counts of `a` and `b`, the last segment of `a`, and
one count of that short last segment followed by the separator. `Facts` keeps exactly that much
of a text; a join whose part does not start cleanly is built and counted whole instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bigaction_assets.tokens import count_tokens

# A segment starts after a newline when blanks (not newlines) and then a non-blank follow.
_CLEAN_START = re.compile(r"[^\S\r\n]*\S")


@dataclass(frozen=True, slots=True)
class Facts:
    """What joining needs to know of a text.

    Attributes:
        tokens: its cl100k_base count.
        clean_start: whether it starts with blanks and then a non-blank character, so that a
            newline before it ends a segment.
        last: its last segment, whose pieces may merge with what is appended.
        text: the text itself, built only when a join cannot be composed.
    """

    tokens: int
    clean_start: bool
    last: str
    parts: tuple[str, tuple[Facts, ...]] | str

    @property
    def text(self) -> str:
        if isinstance(self.parts, str):
            return self.parts
        separator, parts = self.parts
        return separator.join(part.text for part in parts)


_EMPTY = Facts(0, False, "", "")
# Characters of texts remembered (keys hold them alive); emptied when full, so memory is bounded.
MEMO_CHARACTERS = 8_000_000
_memo: dict[str, Facts] = {}
_memo_characters = 0


def last_segment(text: str) -> str:
    """`segments(text)[-1]`, found from the end: what follows the last newline that blanks
    and a non-blank character follow (a page's last line, without cutting up the page)."""
    position = text.rfind("\n")
    while position >= 0:
        if _CLEAN_START.match(text, position + 1):
            return text[position + 1 :]
        position = text.rfind("\n", 0, position)
    return text


def facts(text: str) -> Facts:
    """The facts of `text`, remembered: a turn's text is looked at in every window and format."""
    known = _memo.get(text)
    if known is not None:
        return known
    if not text:
        return _EMPTY
    found = Facts(count_tokens(text), bool(_CLEAN_START.match(text)), last_segment(text), text)
    _remember(text, found)
    return found


def _remember(text: str, found: Facts) -> None:
    global _memo_characters
    if _memo_characters + len(text) > MEMO_CHARACTERS:
        _memo.clear()
        _memo_characters = 0
    _memo[text] = found
    _memo_characters += len(text)


def join_counted(separator: str, first: str, second: str) -> str:
    """`first + separator + second`, its facts composed from the parts' and remembered: a
    message made of two observations is then counted without another tokenizer pass over
    texts that were counted when they were cut to their budget."""
    text = f"{first}{separator}{second}"
    if text not in _memo:
        found = joined(separator, [facts(first), facts(second)])
        _remember(text, Facts(found.tokens, found.clean_start, found.last, text))
    return text


def joined(separator: str, parts: Sequence[Facts]) -> Facts:
    """The facts of `separator.join(texts of parts)`, composed when every boundary is clean.

    Args:
        separator: Text between parts; composing needs it to end with a newline.
        parts: Facts of the texts, in order.
    """
    if not parts:
        return _EMPTY
    first = parts[0]
    if len(parts) == 1:
        return first
    if not separator.endswith("\n") or not all(part.clean_start for part in parts[1:]):
        return facts(separator.join(part.text for part in parts))  # rare: count it whole
    tokens, last = first.tokens, first.last
    for part in parts[1:]:
        tokens += count_tokens(last + separator) - count_tokens(last) + part.tokens
        last = part.last
    return Facts(tokens, first.clean_start, last, (separator, tuple(parts)))
