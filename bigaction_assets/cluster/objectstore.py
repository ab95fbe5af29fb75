"""The cluster's S3 server: started with its bucket (restored from the last stop), saved on stop.

moto's server keeps its objects in memory, so `make cluster-down` copies the bucket to
`services/s3/` before stopping it and the next `make cluster` loads it back, then deletes the
copy: from then on the server holds the only current copy. A bucket that comes back empty (the
first start, or a server that died without being saved) takes the demo's rerun stamps with it,
so the next build makes every output again instead of believing objects that are gone are there.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow.fs as pafs

from bigaction_assets.cluster import processes
from bigaction_assets.cluster.compare import Outputs
from bigaction_assets.cluster.layout import ClusterLayout, ClusterState
from bigaction_assets.cluster.store_settings import (
    ACCESS_KEY,
    BUCKET,
    LAKE_PREFIX,
    REGION,
    S3,
    SECRET_KEY,
    endpoint,
    lake_uri,
)
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.rerun.stamps import STAMPS_FILE
from bigaction_assets.s3_settings import S3Settings

SERVICE = "s3"
START_SECONDS = 60


class StoreError(RuntimeError):
    """The S3 server did not start, or its bucket could not be saved; the message says why."""


def settings(state: ClusterState) -> S3Settings:
    """How this process reaches the cluster's store (the same as its workers do)."""
    return S3Settings(endpoint(state.ports.s3), REGION, ACCESS_KEY, SECRET_KEY)


def lake_root(state: ClusterState) -> LakeRoot:
    """The cluster's lake in its store, as its workers open it (`BIGACTION_LAKE_URI`)."""
    store = settings(state)
    base = f"{BUCKET}/{LAKE_PREFIX}"
    return LakeRoot(uri=lake_uri(), filesystem=store.pyarrow(), base=base, s3=store)


def outputs(data_dir: Path) -> Outputs:
    """Where a data folder's outputs are: a cluster folder whose lake is in its S3 server has
    them there (the server must be running), any other folder in itself."""
    state = ClusterState.load(ClusterLayout(data_dir, data_dir).state_file)
    if state is None or state.lake != S3:
        return Outputs(data_dir)
    if not answering(state):
        raise StoreError(
            f"the outputs of {data_dir} are in its S3 server at {endpoint(state.ports.s3)}, "
            "which is not running: start it with `python -m bigaction_assets.cluster up "
            f"--no-build` (BIGACTION_CLUSTER_DIR={data_dir})"
        )
    return Outputs(data_dir, lake_root(state))


def answering(state: ClusterState) -> bool:
    """Whether the server answers HTTP (any status: moto refuses an unsigned listing)."""
    try:
        with urllib.request.urlopen(endpoint(state.ports.s3), timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def running(layout: ClusterLayout) -> bool:
    pid = processes.pid_of(layout, SERVICE)
    return pid is not None and processes.group_alive(pid)


def _log_tail(layout: ClusterLayout) -> str:
    log = layout.logs / f"{SERVICE}.log"
    text = log.read_text(errors="replace") if log.is_file() else ""
    return "\n".join(text.splitlines()[-15:])


def start_s3(layout: ClusterLayout, state: ClusterState) -> None:
    """Starts the server (unless it runs), and makes its bucket when it has none: loaded from
    the last stop's copy when there is one, else empty, and then the rerun stamps go."""
    argv = [
        sys.executable,
        "-m",
        "bigaction_assets.cluster.s3_serve",
        "--port",
        str(state.ports.s3),
    ]
    processes.start(layout, SERVICE, argv, dict(os.environ))
    deadline = time.monotonic() + START_SECONDS
    while not answering(state):
        if not running(layout):
            raise StoreError(f"the S3 server stopped at start:\n{_log_tail(layout)}")
        if time.monotonic() > deadline:
            raise StoreError(f"the S3 server did not answer within {START_SECONDS} s")
        time.sleep(0.2)
    store = settings(state).pyarrow()
    if store.get_file_info(BUCKET).type == pafs.FileType.Directory:
        return  # a server that kept running keeps its objects
    creator = pafs.S3FileSystem(
        region=REGION, endpoint_override=f"127.0.0.1:{state.ports.s3}", scheme="http",
        access_key=ACCESS_KEY, secret_key=SECRET_KEY, allow_bucket_creation=True,
    )  # fmt: skip
    creator.create_dir(BUCKET)
    if layout.s3_snapshot.is_dir():
        load_bucket(layout, store)
    else:
        (layout.data_dir / STAMPS_FILE).unlink(missing_ok=True)


def load_bucket(layout: ClusterLayout, store: pafs.FileSystem) -> None:
    """The saved copy back into the bucket, then the copy deleted: were the server to die, a
    copy older than what the stamps saw must not come back as current."""
    snapshot = layout.s3_snapshot
    if any(snapshot.iterdir()):
        pafs.copy_files(
            str(snapshot), BUCKET, source_filesystem=pafs.LocalFileSystem(),
            destination_filesystem=store,
        )  # fmt: skip
    shutil.rmtree(snapshot)


def save_bucket(layout: ClusterLayout, state: ClusterState) -> int:
    """Every object of the bucket into `services/s3/`, whole: written beside, then swapped in.
    Returns how many objects were saved."""
    store = settings(state).pyarrow()
    saving = layout.services / "s3.saving"
    shutil.rmtree(saving, ignore_errors=True)
    saving.mkdir(parents=True)
    selector = pafs.FileSelector(BUCKET, recursive=True, allow_not_found=True)
    objects = [i for i in store.get_file_info(selector) if i.type == pafs.FileType.File]
    if objects:
        pafs.copy_files(
            BUCKET, str(saving), source_filesystem=store,
            destination_filesystem=pafs.LocalFileSystem(),
        )  # fmt: skip
    saved = sum(1 for path in saving.rglob("*") if path.is_file())
    if saved != len(objects):
        raise StoreError(f"saved {saved} of the bucket's {len(objects)} objects")
    shutil.rmtree(layout.s3_snapshot, ignore_errors=True)
    saving.rename(layout.s3_snapshot)
    return saved


def stop_s3(layout: ClusterLayout, state: ClusterState | None) -> None:
    """Saves the bucket, then stops the server. A bucket that cannot be saved keeps its server
    running (StoreError), so the objects are not lost with it."""
    if not running(layout):
        processes.stop(layout, [SERVICE])  # forget its pid file
        return
    if state is not None and answering(state):
        try:
            save_bucket(layout, state)
        except (OSError, StoreError) as exc:
            raise StoreError(
                f"the S3 server at {endpoint(state.ports.s3)} is left running: its bucket could "
                f"not be saved to {layout.s3_snapshot} ({exc})"
            ) from exc
    processes.stop(layout, [SERVICE])
