"""cl100k_base token counts work offline and budgets are never exceeded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import tiktoken.load
import tiktoken.registry
from hypothesis import given, settings
from hypothesis import strategies as st

from bigaction_assets import tokens

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

LANDING = Path(__file__).resolve().parents[1] / "landing"


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty tiktoken cache, no cached Encoding, and any download attempt failing loudly."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    tokens.encoding.cache_clear()

    def no_network(url: str) -> bytes:
        raise AssertionError(f"tried to download {url}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    yield tmp_path
    tokens.encoding.cache_clear()


def test_standard_encoding_name_loads_offline(fresh_cache):
    assert tokens.count_tokens_uncached("hello world") == 2
    cached = fresh_cache / hashlib.sha1(tokens.ENCODING_URL.encode()).hexdigest()
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == tokens.ENCODING_SHA256
    assert tiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]


def test_a_corrupt_cached_file_is_replaced(fresh_cache):
    cached = fresh_cache / hashlib.sha1(tokens.ENCODING_URL.encode()).hexdigest()
    cached.write_bytes(b"not an encoding")
    assert tokens.count_tokens_uncached("hello world") == 2


def test_special_token_text_counts_as_text():
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_short_text_is_untouched():
    assert tokens.truncate_to_tokens("a short page", 50) == "a short page"


def test_long_text_is_cut_with_a_visible_marker():
    cut = tokens.truncate_to_tokens("word " * 1000, 40)
    assert cut.endswith(tokens.TRUNCATION_MARKER.format(budget=40))
    assert cut.startswith("word word")
    assert tokens.count_tokens(cut) <= 40


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=400), budget=st.integers(min_value=20, max_value=120))
def test_truncation_never_exceeds_the_budget(text, budget):
    cut = tokens.truncate_to_tokens(text, budget)
    assert tokens.count_tokens(cut) <= budget
    if tokens.count_tokens(text) <= budget:
        assert cut == text


# Blanks, newlines and the characters whose whitespace-ness Python and tiktoken's regex
# disagree on (\x1c-\x1f), around words, digits and punctuation.
PIECES = st.sampled_from(
    ["a", "Zb", "12", "3456", " ", "  ", "\t", "\n", "\r\n", "\n\n", ":", ".\n", "'s", "é",
     "中", "\x1c", "\x85", "\u2028", "\xa0", "<", "[7]", " x", "\x0b", "\x0c", "'"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(text=st.lists(PIECES, max_size=40).map("".join))
def test_memoized_count_equals_encoding_the_whole_text(text):
    tokens.count_tokens(text)  # warm the memo with its segments
    assert tokens.count_tokens(text) == tokens.count_tokens_uncached(text)
    parts = tokens.segments(text)
    assert "".join(parts) == text
    assert sum(tokens.count_tokens_uncached(part) for part in parts) == len(tokens.encode(text))


@settings(max_examples=200, deadline=None)
@given(text=st.lists(PIECES, max_size=60).map("".join), budget=st.integers(1, 30))
def test_a_cut_head_is_a_prefix_within_budget(text, budget):
    cut = tokens.cut_to_tokens(text, budget)
    assert text.startswith(cut)
    assert tokens.count_tokens_uncached(cut) <= budget
    if tokens.count_tokens_uncached(text) <= budget:
        assert cut == text


def test_counts_agree_on_every_bundled_text():
    texts = [line for path in LANDING.rglob("*.json*") for line in path.read_text().splitlines()]
    assert len(texts) > 100
    assert all(tokens.count_tokens(t) == tokens.count_tokens_uncached(t) for t in texts)


def test_truncating_a_huge_page_encodes_only_its_head(monkeypatch):
    page = "".join(f"\t[{k}] link 'item number {k}' focused: False\n" for k in range(100_000))
    encoded: list[int] = []
    real = tokens.encode
    monkeypatch.setattr(tokens, "encode", lambda text: encoded.append(len(text)) or real(text))
    cut = tokens.truncate_to_tokens(page, 500)
    work = sum(encoded)
    assert tokens.count_tokens_uncached(cut) <= 500
    assert cut.endswith(tokens.TRUNCATION_MARKER.format(budget=500))
    assert len(cut) > 1000  # most of the budget is used
    assert work < 20 * 500 * 4  # a 4.5 MB page, a few kB of it encoded


def test_a_one_line_page_is_cut_at_a_blank_without_encoding_it_all(monkeypatch):
    page = "<div class='row'><a href='/x'>item</a></div> " * 100_000
    encoded: list[int] = []
    real = tokens.encode
    monkeypatch.setattr(tokens, "encode", lambda text: encoded.append(len(text)) or real(text))
    cut = tokens.cut_to_tokens(page, 300)
    work = sum(encoded)
    assert page.startswith(cut) and tokens.count_tokens_uncached(cut) <= 300
    assert tokens.count_tokens_uncached(cut) >= 290
    assert work < 100_000


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    return []


def _sample_texts(folder: Path) -> list[str]:
    texts = []
    for path in sorted(folder.rglob("*.json*")):
        raw = path.read_text(encoding="utf-8", errors="replace")
        try:
            values = [json.loads(raw)] if path.suffix == ".json" else [
                json.loads(line) for line in raw.splitlines() if line.strip()
            ]  # fmt: skip
        except json.JSONDecodeError:
            continue  # a deliberately broken fixture
        texts += [text for value in values for text in _strings(value)]
    return texts


def test_the_fast_counter_agrees_with_tiktoken_on_every_bundled_text():
    texts = _sample_texts(LANDING) + _sample_texts(LANDING.parent / "tests" / "fixtures")
    assert len(texts) > 1_000
    differ = [t[:80] for t in texts if tokens.count_tokens(t) != tokens.count_tokens_uncached(t)]
    assert differ == []


@pytest.mark.skipif(not SHARED_DATA.exists(), reason="../shared/data is not beside the repo")
def test_the_fast_counter_agrees_with_tiktoken_on_every_shared_sample():
    texts = _sample_texts(SHARED_DATA)
    assert len(texts) > 20_000
    encode = tokens.encoding().encode_ordinary
    assert [tokens.fast_encoding().count(t) for t in texts] == [len(encode(t)) for t in texts]


# Characters where cl100k_base's pre-tokenizer decides: contractions, digits, blanks before
# newlines, punctuation runs, letters of other scripts, marks, emoji, special-token text.
_TRICKY = list("ab Z \n\t\r'’sdtm1234567890!?.,:;<>|{}[]()=_-éàüß漢字カナ한글🙂\u200b\u00a0\u0301")
tricky_texts = st.lists(
    st.sampled_from([*_TRICKY, "<|endoftext|>", "'ll", " 's", "\r\n", "    ", "\n\n"]),
    max_size=80,
).map("".join)


@given(st.one_of(tricky_texts, st.text(max_size=200)))
@settings(deadline=None)
def test_the_fast_counter_agrees_with_tiktoken_on_generated_text(text):
    assert tokens.fast_encoding().count(text) == tokens.count_tokens_uncached(text)
    assert tokens.encode(text) == tokens.encoding().encode_ordinary(text)
