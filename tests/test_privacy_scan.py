"""The fast search finds exactly what the slow one does: windows, needles and joining a
record's texts change how much text each pattern reads, never what is found."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st
from test_privacy_property import SECRETS, bearers

from bigaction_assets.privacy.detectors import DETECTORS
from bigaction_assets.privacy.scan import SEPARATOR, _scan, find, find_each, resolve


def everywhere(text: str) -> list:
    """Every pattern over the whole text: the reference the windows must agree with."""
    found = set()
    for detector in DETECTORS:
        found.update(_scan(detector, text, [(0, len(text))]))
    return resolve(found)


# Noise that looks like the signs the windows key on: digits, dots, colons, `@`, names.
NOISE = st.one_of(
    st.text(string.ascii_letters + string.digits + " .:-/()@=&?%_'\"<>\n", max_size=40),
    st.sampled_from(["password=", "token: ", "Bearer ", "api_key=", "::", "a::before", "v 1.2",
                     "09:34:12", "sk-", "hf_", "eyJ", "%40", "session=", "pin:", "AKIA"]),
)  # fmt: skip
SECRET = st.one_of(*SECRETS.values(), bearers.map(lambda t: f"Bearer {t}"))
TEXTS = st.lists(st.one_of(NOISE, SECRET, NOISE), min_size=1, max_size=10).map("".join)


@given(text=TEXTS)
def test_windows_change_nothing_found(text) -> None:
    assert find(text) == everywhere(text)


@given(texts=st.lists(TEXTS, min_size=1, max_size=6))
def test_texts_searched_together_are_found_as_alone(texts) -> None:
    texts = [t.replace(SEPARATOR, "") for t in texts]
    assert find_each(texts) == [find(t) for t in texts]


def test_a_value_that_swallows_the_next_name_hides_no_secret() -> None:
    """`Bearer`'s value may run over `/Bearer` into the next header: both tokens go."""
    from bigaction_assets.privacy.scrub import Scrubber

    for joint in ("/", ",", "+", "="):
        text = f"Authorization: Bearer abcdefghijk1{joint}Bearer 0a1b2c3d4e5f6g"
        scrubbed = Scrubber().text(text)
        assert "0a1b2c3d4e5f6g" not in scrubbed and "abcdefghijk1" not in scrubbed, scrubbed
