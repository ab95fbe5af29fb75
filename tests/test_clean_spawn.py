"""Workers started with `clean_spawn_context` do not run the parent's main module again."""

import subprocess
import sys
from pathlib import Path

# The parent's main imports `announced`, which writes its process id into a file on import,
# as the `dagster` console script imports Dagster's CLI; then it starts one worker, waits for
# its process id, and checks its own main module is still in place.
ANNOUNCED = """
import os
with open(os.environ["ANNOUNCED"], "a") as log:
    log.write(f"{os.getpid()}\\n")
"""
MAIN = """
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


def pids_that_imported_main(tmp_path: Path, context: str) -> tuple[set[int], int, int]:
    (tmp_path / "announced.py").write_text(ANNOUNCED)
    (tmp_path / "main.py").write_text(MAIN)
    log = tmp_path / "imported_by"
    done = subprocess.run(
        [sys.executable, str(tmp_path / "main.py"), context],
        capture_output=True,
        text=True,
        env={"ANNOUNCED": str(log), "PYTHONPATH": str(Path.cwd()), "PATH": ""},
        cwd=Path.cwd(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    parent, worker = map(int, done.stdout.split())
    return {int(line) for line in log.read_text().split()}, parent, worker


def test_a_clean_worker_does_not_import_the_parents_main(tmp_path: Path) -> None:
    imported_by, parent, worker = pids_that_imported_main(tmp_path, "clean")
    assert worker != parent
    assert imported_by == {parent}


def test_a_plain_spawned_worker_imports_it_again(tmp_path: Path) -> None:
    """The cost `clean_spawn` removes: Python's own spawn runs the parent's main in each worker."""
    imported_by, parent, worker = pids_that_imported_main(tmp_path, "plain")
    assert imported_by == {parent, worker}
