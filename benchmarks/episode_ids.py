"""The `episode_ids_unique` gate at ADP's full size: 1.3 million episode ids in 1,300 partitions.

    .venv/bin/python benchmarks/episode_ids.py                       # 1,300 x 1,000 ids
    .venv/bin/python benchmarks/episode_ids.py --partitions 100 --ids 3000
    .venv/bin/python benchmarks/episode_ids.py --table snapshot      # snapshot_steps_unique

With `--table snapshot` the same for the benchmark snapshot's (episode, step) pairs: each
partition's "ids" are steps, 8 to an episode.

Writes the `episodes` partitions (the two columns the gate reads; ids shaped like ADP's,
`<source>/<n>`, every partition a shard of one dataset so their id ranges overlap), then runs,
each in its own process (wall and CPU seconds of the gate's work, imports left out; peak RSS of
the whole process, ~150 MB of which is its imports):

- `group-by`: the gate as it was, DuckDB's `group by episode_id having count(*) > 1` over every
  partition under the lake's query memory limit (its yardstick, and what it fails with);
- `cold`: `episode_ids.repeated_episode_ids` with an empty cache (every partition read);
- `warm`: the same with the cache the cold run left, one partition rewritten meanwhile (what a
  step of one partition costs once the machine has looked at the table before);
- `repeat`: as `warm`, after one partition is rewritten holding 100 ids of another, so the
  repeats are confirmed from the ids.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl

from bigaction_assets import lake_writer

PHASE = """
import json, resource, sys, time
from pathlib import Path
from bigaction_assets import quality
from bigaction_assets.episode_ids import EPISODES, SNAPSHOT_STEPS, repeated_keys
from bigaction_assets.lake_sql import query_connection
started, cpu0 = time.perf_counter(), time.process_time()
root, cache, phase, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
table = {"episodes": EPISODES, "snapshot": SNAPSHOT_STEPS}[name]
result = {}
try:
    if phase == "group-by":
        key = ", ".join(table.key)
        with query_connection(root) as con:
            result["repeats"] = len(quality._rows(con, f'''
                select {key}, count(*) as copies, list(dataset) as datasets
                from {quality.relation(root, table.asset, table.group)} group by {key}
                having count(*) > 1'''))
    else:
        offenders, tally = repeated_keys(root, table, cache=cache, limit=None)
        result |= {"repeats": len(offenders), **tally}
except Exception as error:
    result["error"] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
result |= {"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu0,
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
print(json.dumps(result))
"""


STEPS_PER_EPISODE = 8


def write(root: Path, index: int, ids: list[str], table: str = "episodes") -> None:
    name = f"adp.synatra~part-{index:05d}"
    if table == "episodes":
        rows = pl.DataFrame({"episode_id": ids, "dataset": [name] * len(ids)})
        lake_writer.write_partition(root, "standardized", "episodes", name, rows)
        return
    rows = pl.DataFrame(  # the n-th "id" is a step of episode n // 8
        {"episode_id": [f"{i.rsplit('/', 1)[0]}/e{int(i.rsplit('/', 1)[1]) // STEPS_PER_EPISODE}"
                        for i in ids],
         "step": [int(i.rsplit("/", 1)[1]) % STEPS_PER_EPISODE for i in ids],
         "dataset": [name] * len(ids)},
        schema_overrides={"step": pl.Int32},
    )  # fmt: skip
    lake_writer.write_partition(root, "benchmark", "benchmark_snapshot", name, rows)


def phase(root: Path, cache: Path, name: str, table: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PHASE, str(root), str(cache), name, table],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1300)
    parser.add_argument("--ids", type=int, default=1000, help="episode ids per partition")
    parser.add_argument("--table", choices=("episodes", "snapshot"), default="episodes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root, cache = Path(scratch) / "lake", Path(scratch) / "cache"
        for index in range(args.partitions):
            first = index * args.ids
            write(root, index, [f"synatra/{n}" for n in range(first, first + args.ids)], args.table)
        print(f"{args.table}: {args.partitions:,} partitions x {args.ids:,} keys")
        print("| phase | repeats | partitions read | seconds | CPU s | peak RSS MB | error |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for name in ("group-by", "cold", "warm", "repeat"):
            if name == "warm":
                write(root, 0, [f"synatra/{n}" for n in range(args.ids)][::-1], args.table)
            if name == "repeat":
                write(root, 1, [f"synatra/{n}" for n in range(100)], args.table)
            r = phase(root, cache, name, args.table)
            print(f"| {name} | {r.get('repeats', '')} | {r.get('partitions_read', '')} | "
                  f"{r['seconds']:.2f} | {r['cpu']:.2f} | {r['peak_rss_mb']:.0f} | "
                  f"{r.get('error', '')} |")  # fmt: skip


if __name__ == "__main__":
    main()
