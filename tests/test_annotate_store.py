"""The app's store without HTTP: slots, never the same item twice, the last slot under a race,
label checks, expiry, forgetting, and the admin command that makes accounts."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from annotate_server import FAST_PASSWORDS, PASSWORD, add_users, turn_item, web_item

from bigaction_assets.annotate.accounts import Accounts
from bigaction_assets.annotate.assignments import NotAssigned, SlotLost
from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.labels import InvalidLabel
from bigaction_assets.annotate.store import AnnotationStore


@pytest.fixture
def store(tmp_path):
    add_users(tmp_path / "s.sqlite3", [f"u{i}" for i in range(1, 7)])
    return AnnotationStore(Database(tmp_path / "s.sqlite3"))


def test_each_item_gets_at_most_n_annotators_and_nobody_twice(store) -> None:
    store.load_items([web_item(n) for n in range(3)], max_annotators=2)
    seen: dict[int, list[int]] = {}
    for user in (1, 2, 3):
        while (item := store.next_item(user)) is not None:
            assert user not in seen.setdefault(item.item_no, [])
            seen[item.item_no].append(user)
            store.save_label(user, item.item_no, {"verdict": "correct"})
    assert sorted(len(users) for users in seen.values()) == [2, 2, 2]
    # items fill one at a time, so the first two annotators take every slot
    assert store.progress(3) == {"labelled_by_you": 0, "available_to_you": 0,
                                 "items_complete": 3, "items_total": 3}  # fmt: skip


def test_an_open_item_is_handed_back_until_labelled(store) -> None:
    store.load_items([web_item(1), web_item(2)])
    first = store.next_item(1)
    assert store.next_item(1).item_no == first.item_no
    store.save_label(1, first.item_no, {"verdict": "unsure"})
    assert store.next_item(1).item_no != first.item_no


def test_two_annotators_never_share_the_last_slot(tmp_path) -> None:
    path = tmp_path / "race.sqlite3"
    add_users(path, [f"u{i}" for i in range(12)])
    AnnotationStore(Database(path)).load_items([web_item(0)], max_annotators=1)
    winners: list[int] = []
    start = threading.Barrier(12)

    def race(user: int) -> None:
        own = AnnotationStore(Database(path))  # a connection of its own, like a server thread
        start.wait()
        if own.next_item(user) is not None:
            winners.append(user)

    threads = [threading.Thread(target=race, args=(u,)) for u in range(1, 13)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1


def test_the_schema_refuses_a_slot_beyond_the_limit(store) -> None:
    store.load_items([web_item(0)], max_annotators=1)
    store.next_item(1)
    with pytest.raises(Exception, match="no free slot"), store.db.write() as con:
        con.execute("insert into assignments values (1, 2, 'open', 0)")


def test_labels_are_checked_per_kind(store) -> None:
    store.load_items([web_item(0), turn_item(1, tasks=2)])
    web, turn = store.next_item(1, "web_step"), store.next_item(1, "proactive_turn")
    with pytest.raises(InvalidLabel, match="verdict"):
        store.save_label(1, web.item_no, {"verdict": "maybe"})
    with pytest.raises(InvalidLabel, match="from 0 to 1"):
        store.save_label(1, turn.item_no, {"accepted_tasks": [2], "help_needed": True})
    with pytest.raises(InvalidLabel, match="help is needed"):
        store.save_label(1, turn.item_no, {"accepted_tasks": [0], "help_needed": False})
    with pytest.raises(InvalidLabel, match="whether help"):
        store.save_label(1, turn.item_no, {"accepted_tasks": []})
    store.save_label(1, turn.item_no, {"accepted_tasks": [1, 0]})
    assert store.label_of(1, turn.item_no) == {"accepted_tasks": [0, 1], "help_needed": True}


def test_a_slot_left_open_too_long_goes_to_someone_else(tmp_path) -> None:
    path = tmp_path / "ttl.sqlite3"
    add_users(path, ["ana", "bo"])
    store = AnnotationStore(Database(path), assignment_ttl=0.05)
    store.load_items([web_item(0)], max_annotators=1)
    late = store.next_item(1)
    time.sleep(0.1)
    assert store.next_item(2).item_no == late.item_no
    store.save_label(2, late.item_no, {"verdict": "correct"})
    with pytest.raises(SlotLost):
        store.save_label(1, late.item_no, {"verdict": "incorrect"})
    assert store.next_item(1) is None  # and never the same item again


def test_nobody_reads_or_labels_an_item_not_theirs(store) -> None:
    store.load_items([web_item(0)])
    item = store.next_item(1)
    store.save_label(1, item.item_no, {"verdict": "correct"})
    for call in (
        lambda: store.item_for(2, item.item_no),
        lambda: store.label_of(2, item.item_no),
        lambda: store.save_label(2, item.item_no, {"verdict": "incorrect"}),
    ):
        with pytest.raises(NotAssigned):
            call()
    assert store.label_of(1, item.item_no) == {"verdict": "correct"}
    assert store.labels_of(2) == []


def test_forgetting_an_episode_removes_its_items_and_labels(store) -> None:
    store.load_items([web_item(0, "telemetry/d/run1"), web_item(1, "telemetry/d/run2")])
    for _ in range(2):
        item = store.next_item(1)
        store.save_label(1, item.item_no, {"verdict": "correct"})
    assert store.forget_episodes(["telemetry/d/run1"]) == 1
    assert [row["episode_id"] for row in store.export_labels()] == ["telemetry/d/run2"]


def test_reloading_items_adds_only_new_ones(store) -> None:
    assert store.load_items([web_item(0), web_item(1)]) == 2
    assert store.load_items([web_item(1), web_item(2)]) == 1


def test_passwords_are_argon2id_and_never_default(tmp_path) -> None:
    accounts = Accounts(Database(tmp_path / "a.sqlite3"), FAST_PASSWORDS)
    accounts.add_user("ana", PASSWORD)
    [stored] = accounts.db.connection().execute("select password_hash from users").fetchone()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    with pytest.raises(ValueError, match="at least 12"):
        accounts.add_user("bo", "password")
    with pytest.raises(ValueError, match="exists"):
        accounts.add_user("ANA", PASSWORD)
    assert accounts.sign_in("ana", "password", "127.0.0.1") == (None, False)


def test_the_admin_command_reads_the_password_from_stdin(tmp_path) -> None:
    store = tmp_path / "admin.sqlite3"
    command = [sys.executable, "-m", "bigaction_assets.annotate.admin", "--store", str(store)]
    made = subprocess.run(
        [*command, "add-user", "ana", "--password-stdin"], input=PASSWORD + "\n",
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert PASSWORD not in made.stdout + made.stderr
    listed = subprocess.run([*command, "list-users"], capture_output=True, text=True, check=True)
    assert "ana" in listed.stdout and "active" in listed.stdout
    short = subprocess.run(
        [*command, "add-user", "bo", "--password-stdin"], input="short\n",
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert short.returncode == 2 and "at least 12" in short.stderr
