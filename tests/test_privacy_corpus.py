"""Recall and precision of scrubbing, per kind, on the PII corpus (tests/pii_corpus.py)."""

from __future__ import annotations

import re
from collections import Counter

import orjson
import pytest
from pii_corpus import DECOYS, cases, decoy_record

from bigaction_assets.privacy.detectors import KINDS
from bigaction_assets.privacy.scrub import Scrubber

PLACEHOLDER = re.compile(rf"<({'|'.join(sorted(KINDS, key=len, reverse=True))})_\d+>")
# What the corpus shows today (see the README's table); a change that lowers one fails here.
MIN_RECALL = dict.fromkeys(KINDS, 1.0)
MIN_PRECISION = dict.fromkeys(KINDS, 1.0)


def scrub(record: dict) -> str:
    scrubber = Scrubber()
    scrubber.add_passwords(record)
    return orjson.dumps(scrubber.value(record)).decode()


def _survives(secret: str, text: str) -> bool:
    """The secret, or its digits or its decoded form, still in the output."""
    from urllib.parse import quote_plus

    forms = {secret, secret.lower(), quote_plus(secret)}
    digits = re.sub(r"\D", "", secret)
    if len(digits) >= 9 and not re.search(r"[A-Za-z]{3}", secret):
        forms.add(digits)
    lowered = text.lower()
    return any(form.lower() in lowered for form in forms if form)


@pytest.fixture(scope="module")
def scores() -> dict[str, dict[str, float]]:
    hits, misses, false = Counter(), Counter(), Counter()
    for case in cases():
        out = scrub(case.record)
        kinds = PLACEHOLDER.findall(out)
        if _survives(case.secret, out) or case.kind not in kinds:
            misses[case.kind] += 1
        else:
            hits[case.kind] += 1
        for kind in set(kinds) - {case.kind}:  # a placeholder of another kind: a false alarm
            false[kind] += 1
    decoys = scrub(decoy_record())
    for kind in PLACEHOLDER.findall(decoys):
        false[kind] += 1
    return {
        kind: {
            "recall": hits[kind] / (hits[kind] + misses[kind]),
            "precision": hits[kind] / (hits[kind] + false[kind]) if hits[kind] else 0.0,
            "cases": hits[kind] + misses[kind],
        }
        for kind in KINDS
    }


@pytest.mark.parametrize("kind", KINDS)
def test_recall_per_kind(scores, kind) -> None:
    assert scores[kind]["cases"] >= 10, "the corpus holds every kind in several fields"
    assert scores[kind]["recall"] >= MIN_RECALL[kind], scores[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_precision_per_kind(scores, kind) -> None:
    assert scores[kind]["precision"] >= MIN_PRECISION[kind], scores[kind]


def test_look_alikes_survive_untouched() -> None:
    out = scrub(decoy_record())
    for decoy in DECOYS:
        assert decoy.replace("'", "'") in orjson.loads(out)["objective"], decoy


def test_same_value_same_placeholder_within_an_episode() -> None:
    scrubber = Scrubber()
    first = scrubber.text("Mail Ana.Garcia@Example.org or call +1 415-555-0132.")
    second = scrubber.url("https://x.example.com/?to=ana.garcia%40example.org&tel=%2B14155550132")
    third = scrubber.text("Other: li.wei@example.net, (415) 555-0132")
    assert first == "Mail <EMAIL_1> or call <PHONE_1>."
    assert second == "https://x.example.com/?to=<EMAIL_1>&tel=<PHONE_1>"
    assert third == "Other: <EMAIL_2>, <PHONE_1>"
    assert scrubber.counts == Counter({"EMAIL": 3, "PHONE": 3})


def test_scrubbing_is_idempotent() -> None:
    record = cases()[0].record
    once = scrub(record)
    assert scrub(orjson.loads(once)) == once
