"""A forgotten sender stays forgotten across `make demo` reruns (issue 15, point 3).

One temporary data folder, the tests in order: the demo, `make forget` (the module the Makefile
target calls, with the development key) of a sender in the bundled telemetry sample, the
erasure (the `forget_users` job the UI's sensor starts), then the demo again: it must land none
of their records again, hold no row of theirs anywhere, and fail no dataset. Then a second
sender is forgotten without an erasure while another dataset changes: the demo applies the
request itself and every dataset still builds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from planted import stored_text

from bigaction_assets.privacy.erasure import Forgotten
from bigaction_assets.privacy.pseudonyms import DEV_KEY, Pseudonymizer
from bigaction_assets.privacy.register import files_offenders
from bigaction_assets.rerun.fingerprint import file_states
from bigaction_assets.telemetry_batches import batch_files, episode_id

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 600  # seconds; a guard against a hang, not a performance assertion
DAY = "2025-05-14"
DEV = Pseudonymizer(DEV_KEY.encode("utf-8"), dev=True)
# Ana sent 3 steps of one run in 2 batches; the other sender 2 steps of one run in 1 batch.
ANA = ("ana.garcia@example.org", "096d3737-42f9-4039-8320-a4737c2b3abe",
       "9623d7cf-a9ae-4a34-a544-99c7001d9a88")  # fmt: skip
OTHER = ("cd4153e4-96e3-4022-804a-8ce91f9d6396", "cd4153e4-96e3-4022-804a-8ce91f9d6396",
         "80b35782-419d-4d4e-b003-df0b5c6db724")  # fmt: skip
ANA_TASK = "Log in to billing.acme.example.com as"  # her objective, scrubbed: still hers


def sender(anonymous_id: str, user_id: str, run_id: str) -> Forgotten:
    """Who the sender is in the lake: their pseudonym and their run's episode."""
    run = episode_id(DAY, DEV.run(user_id, run_id))
    return Forgotten(frozenset({DEV.user(anonymous_id)}), frozenset({run}))


class Demo:
    def __init__(self, root: Path) -> None:
        self.root, self.data, self.landing = root, root / "data", root / "landing"
        self.env = {
            name: value for name, value in os.environ.items()
            if not name.startswith("BIGACTION_") and name not in ("DAGSTER_HOME", "OPENAI_API_KEY")
        }  # fmt: skip
        self.env |= {
            "BIGACTION_DATA_DIR": str(self.data),
            "BIGACTION_LANDING_DIR": str(self.landing),
        }

    def call(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], cwd=self.root, env=env or self.env, capture_output=True,
            text=True, timeout=TIMEOUT,
        )  # fmt: skip

    def run(self, check: bool = True) -> tuple[str, set[str]]:
        """Runs the demo (which must succeed, with `check`); its output (and why it failed) and
        the files it changed."""
        before = file_states(self.data)
        result = self.call("-m", "bigaction_assets.demo", "--explain")
        assert result.returncode == 0 or not check, result.stdout[-4000:] + result.stderr[-3000:]
        if result.returncode:
            failed = re.findall(r"^(\w+: \w+)$", result.stdout + result.stderr, flags=re.M)
            return f"{result.stdout}\nexit {result.returncode}; failed checks {failed}", set()
        after = file_states(self.data)
        return result.stdout, {
            n for n in before.keys() | after.keys() if before.get(n) != after.get(n)
        }

    def forget(self, anonymous_id: str) -> None:
        """`make forget ID=<id> DEV=1`."""
        result = self.call("-m", "bigaction_assets.privacy.forget", anonymous_id, "--dev")
        assert result.returncode == 0 and "recorded" in result.stdout, result.stderr

    def landed_lines(self, who: Forgotten) -> dict[str, int]:
        """Landing batch files holding lines of `who`, with how many."""
        [pseudonym] = who.pseudonyms
        found = {}
        for batch, path in batch_files(self.landing).items():
            lines = [line for line in path.read_text().splitlines() if pseudonym in line]
            if lines:
                found[batch] = len(lines)
        return found

    def lake_rows(self, who: Forgotten) -> dict[str, int]:
        """Rows of `who` in any lake table, by `<group>/<asset>/<partition>`."""
        lake = self.data / "lake"
        found: dict[str, int] = {}
        for path in sorted(lake.rglob("*.parquet")):
            if "/privacy/" not in path.as_posix():
                for offender in files_offenders([path], who):
                    found[path.relative_to(lake).as_posix()] = offender["rows"]
        return found


def ran(output: str) -> set[str]:
    return set(re.findall(r"^  ok {4} (\S.*)$", output, flags=re.M))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("forget")
    # one public dataset beside the telemetry sample the demo lands: what the tests change
    (root / "landing" / "adp").mkdir(parents=True)
    shutil.copy2(REPO / "landing" / "adp" / "synatra.json", root / "landing" / "adp")
    demo = Demo(root)
    demo.run()
    ana = sender(*ANA)
    assert demo.landed_lines(ana) and sum(demo.landed_lines(ana).values()) == 3
    assert demo.lake_rows(ana).get(f"raw/raw_records/telemetry.{DAY}.parquet") == 3
    return demo


def test_after_forget_and_erasure_a_demo_lands_and_builds_nothing_of_theirs(demo: Demo) -> None:
    ana = sender(*ANA)
    demo.forget(ANA[0])
    erasure = demo.call(
        "-m", "dagster", "job", "execute", "-m", "bigaction_assets.definitions",
        "-j", "forget_users", env={**demo.env, "DAGSTER_HOME": str(demo.data / "dagster")},
    )  # fmt: skip
    # the release built before the request still holds her until it is built again (documented)
    failed = re.findall(r"Steps failed: \[(.*?)\]", erasure.stderr + erasure.stdout)
    assert failed == ["'hub_release_forgotten_users_absent'"], erasure.stderr[-3000:]
    assert demo.landed_lines(ana) == {} and demo.lake_rows(ana) == {}

    output, _ = demo.run(check=False)

    assert demo.landed_lines(ana) == {}, "the bundled sample was landed again with her records"
    assert demo.lake_rows(ana) == {}
    assert "FAILED" not in output and "exit " not in output, output[-3000:]
    assert f"ok     telemetry.{DAY}" in output or f"up to date telemetry.{DAY}" in output
    for folder in ("sft", "release", "reward"):
        assert ANA_TASK not in stored_text(demo.data / folder), folder


def test_a_request_not_yet_erased_is_applied_and_fails_no_other_dataset(demo: Demo) -> None:
    other = sender(*OTHER)
    assert demo.lake_rows(other), "they are in the lake before"
    demo.forget(OTHER[0])
    synatra = demo.landing / "adp" / "synatra.json"  # an unrelated dataset changes meanwhile
    text = synatra.read_bytes()
    at = text.index(b"Objective: ") + len(b"Objective: ")
    synatra.write_bytes(text[:at] + text[at : at + 1].swapcase() + text[at + 1 :])

    output, _ = demo.run(check=False)

    assert "FAILED" not in output and "exit " not in output, output[-3000:]
    assert {"adp.synatra", f"telemetry.{DAY}"} <= ran(output), output
    assert demo.landed_lines(other) == {} and demo.lake_rows(other) == {}
    assert demo.lake_rows(sender(*ANA)) == {}


def test_then_a_rerun_finds_everything_up_to_date(demo: Demo) -> None:
    output, made = demo.run()
    assert "up to date:" in output and made == set(), (output, made)
