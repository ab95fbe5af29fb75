"""`reward_examples` rows: judge conversations and preference pairs, in LLaMA-Factory's shapes.

- Judge SFT (one per judged proposal): system, the user's observations and the proposed task,
  the answer `{"thought", "judgement"}` (sharegpt `conversations` with `system`).
- Proactive preference pairs: for the same observations, a proposal people found right (a
  valid task, or nothing when no help was needed) is `chosen` over one they found wrong (an
  invalid task, or nothing when help was needed).
- Web preference pairs: for the same task, page and previous actions, an action people judged
  correct is `chosen` over one they judged incorrect (each by at least 2 annotators).

Ids start with the judged item's `<episode id>#<n>`, and `rejected_item_id` names the other
side of a pair, so erasure finds both and the release joins back to episodes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bigaction_assets.reward import prompts
from bigaction_assets.reward.rules import Judgement, verdict

JUDGE, PREFERENCE = "judge", "preference"
CORRECT, INCORRECT = "correct", "incorrect"


@dataclass(frozen=True)
class RewardSettings:
    test_per_category: int = 30
    seed: int = 42
    web_test_share: float = 0.1
    web_page_chars: int = 16_000


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _record(**fields: Any) -> str:
    return json.dumps(fields, ensure_ascii=False)


def _row(example_id: str, kind: str, origin: str, item_kind: str, split: str, episode_id: str,
         item_id: str | None, record: str, **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {
        "example_id": example_id, "kind": kind, "origin": origin, "item_kind": item_kind,
        "category": None, "split": split, "episode_id": episode_id, "item_id": item_id,
        "rejected_item_id": None, "votes": None, "thought_source": None, "record": record,
        "prompt_version": prompts.PROMPT_VERSION, **extra,
    }  # fmt: skip


def judge_rows(
    judgements: Iterable[Judgement], splits: Mapping[str, str]
) -> Iterator[dict[str, Any]]:
    """One judge conversation per judgement, in the split `splits` gives its id."""
    for j in judgements:
        record = _record(
            conversations=[
                {"from": "human", "value": prompts.judge_user_message(j)},
                {"from": "gpt", "value": prompts.judge_answer(j)},
            ],
            system=prompts.JUDGE_SYSTEM,
        )
        yield _row(
            j.example_id, JUDGE, j.origin, "proactive_turn", splits[j.example_id],
            j.episode_id, j.example_id, record,
            category=j.category, votes=list(j.votes), thought_source="template",
        )  # fmt: skip


def _preferred(j: Judgement) -> bool:
    """Whether proposing `j.task` was right: a valid task, or nothing when none was needed."""
    return j.valid


def proactive_pairs(
    judgements: Iterable[Judgement], splits: Mapping[str, str]
) -> Iterator[dict[str, Any]]:
    """Pairs of a right and a wrong proposal after the same observations, both of one split:
    a pair across splits would put a judgement of one into the other."""
    turns: dict[tuple[Any, ...], list[Judgement]] = {}
    for j in judgements:
        turns.setdefault((splits[j.example_id], j.observations), []).append(j)
    for (split, observations), judged in turns.items():
        ordered = sorted(judged, key=lambda j: j.example_id)
        good = [j for j in ordered if _preferred(j)]
        bad = [j for j in ordered if not _preferred(j)]
        for chosen in good:
            for rejected in bad:
                if chosen.task == rejected.task:
                    continue
                record = _record(
                    conversations=[
                        {"from": "human", "value": prompts.assistant_user_message(observations)}
                    ],
                    chosen={"from": "gpt", "value": prompts.proposal(chosen.task)},
                    rejected={"from": "gpt", "value": prompts.proposal(rejected.task)},
                    system=prompts.ASSISTANT_SYSTEM,
                )
                yield _row(
                    f"{chosen.example_id}~vs~{_short(rejected.example_id)}", PREFERENCE,
                    chosen.origin, "proactive_turn", split, chosen.episode_id,
                    chosen.example_id, record, category=f"{chosen.category}>{rejected.category}",
                    rejected_item_id=rejected.example_id,
                )  # fmt: skip


def web_verdicts(labels: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """`correct` or `incorrect` per web step at least 2 annotators agree on (unsure counts
    against both)."""
    votes: dict[str, list[str]] = {}
    for label in labels:
        votes.setdefault(label["item_id"], []).append(label["verdict"])
    decided = {}
    for item_id, given in votes.items():
        agreed = verdict([v == CORRECT for v in given if v in (CORRECT, INCORRECT)])
        if agreed is not None:
            decided[item_id] = CORRECT if agreed else INCORRECT
    return decided


def web_pairs(
    items: Mapping[str, Mapping[str, Any]],
    labels: Iterable[Mapping[str, Any]],
    settings: RewardSettings,
) -> Iterator[dict[str, Any]]:
    """Pairs of a correct and an incorrect action shown the same prompt (task, page, history).

    Args:
        items: `annotation_items` rows of web steps by item id (`payload` parsed).
    """
    prompts_by_key: dict[str, dict[str, list[str]]] = {}
    for item_id, decided in sorted(web_verdicts(labels).items()):
        payload = items[item_id]["payload"]
        key = _short(
            json.dumps([payload["task"], payload["html_sha"], payload["previous_actions"]])
        )
        prompts_by_key.setdefault(key, {CORRECT: [], INCORRECT: []})[decided].append(item_id)
    for key, sides in sorted(prompts_by_key.items()):
        rank = int(hashlib.sha256(f"{settings.seed}\0{key}".encode()).hexdigest()[:8], 16)
        split = "test" if rank / 0xFFFFFFFF < settings.web_test_share else "train"
        for good in sides[CORRECT]:
            for bad in sides[INCORRECT]:
                chosen, rejected = items[good], items[bad]
                if chosen["payload"]["actions"] == rejected["payload"]["actions"]:
                    continue
                page = (chosen.get("page_html") or "").replace(" data-ba-target", "")
                payload = chosen["payload"]
                message = prompts.web_user_message(
                    payload["task"], payload["previous_actions"], page[: settings.web_page_chars]
                )
                record = _record(
                    conversations=[{"from": "human", "value": message}],
                    chosen={"from": "gpt", "value": "\n".join(payload["actions"])},
                    rejected={"from": "gpt", "value": "\n".join(rejected["payload"]["actions"])},
                    system=prompts.WEB_SYSTEM,
                )
                yield _row(
                    f"{good}~vs~{_short(bad)}", PREFERENCE, "app", "web_step", split,
                    chosen["episode_id"], good, record, rejected_item_id=bad,
                )  # fmt: skip
