"""Workers started with `clean_spawn_context` do not run the parent's main module again."""

import subprocess
import sys
from pathlib import Path

# Each parent's main imports `announced`, which writes its process id into a file on import, as
# the `dagster` console script imports Dagster's CLI; it prints its own process id and what its
# workers did.
ANNOUNCED = """
import os
with open(os.environ["ANNOUNCED"], "a") as log:
    log.write(f"{os.getpid()}\\n")
"""
# One worker started plainly or cleanly; it answers with its process id.
POOL_MAIN = """
import sys
import announced

if __name__ == "__main__":
    import multiprocessing, os
    from concurrent.futures import ProcessPoolExecutor
    from bigaction_assets.clean_spawn import clean_spawn_context

    main = sys.modules["__main__"]
    plain = multiprocessing.get_context("spawn")
    context = clean_spawn_context() if sys.argv[1] == "clean" else plain
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        worker = pool.submit(os.getpid).result()
    assert sys.modules["__main__"] is main, "the parent's main module was not put back"
    print(os.getpid(), worker)
"""
# The SFT stage's own pool: 4 bundled episodes rendered by 2 workers.
SFT_MAIN = """
import sys
import announced

if __name__ == "__main__":
    import os
    sys.path.insert(0, "tests")
    from bundled import bundled_episodes
    from test_sft_parallel import SCHEMA, chunks_of
    from bigaction_assets.sft.examples import ExampleSettings
    from bigaction_assets.sft.parallel import render_chunks

    chunks = chunks_of(bundled_episodes()[:4], 2)
    outcomes = list(render_chunks(chunks, ExampleSettings(), SCHEMA, workers=2))
    print(os.getpid(), sum(outcome.episodes for outcome in outcomes))
"""


def run_main(tmp_path: Path, main: str, *args: str) -> tuple[set[int], int, int]:
    """(the processes that imported the main's `announced`, the parent, what it printed)."""
    (tmp_path / "announced.py").write_text(ANNOUNCED)
    (tmp_path / "main.py").write_text(main)
    log = tmp_path / "imported_by"
    done = subprocess.run(
        [sys.executable, str(tmp_path / "main.py"), *args],
        capture_output=True,
        text=True,
        env={"ANNOUNCED": str(log), "PYTHONPATH": str(Path.cwd()), "PATH": ""},
        cwd=Path.cwd(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    parent, answer = map(int, done.stdout.split())
    return {int(line) for line in log.read_text().split()}, parent, answer


def test_a_clean_worker_does_not_import_the_parents_main(tmp_path: Path) -> None:
    imported_by, parent, worker = run_main(tmp_path, POOL_MAIN, "clean")
    assert worker != parent
    assert imported_by == {parent}


def test_a_plain_spawned_worker_imports_it_again(tmp_path: Path) -> None:
    """The cost `clean_spawn` removes: Python's own spawn runs the parent's main in each worker."""
    imported_by, parent, worker = run_main(tmp_path, POOL_MAIN, "plain")
    assert imported_by == {parent, worker}


def test_the_sft_workers_render_without_the_parents_main(tmp_path: Path) -> None:
    imported_by, parent, episodes = run_main(tmp_path, SFT_MAIN)
    assert episodes == 4
    assert imported_by == {parent}
