#!/usr/bin/env bash
# sft_examples (and its checks) as a user runs it: Dagster's CLI, on a lake that sft.py made.
#   benchmarks/sft_via_cli.sh benchmarks/out/sft/synatra-20000 2   # the lake, the SFT workers
# Prints the whole command's time and peak memory (/usr/bin/time -v) and each step's own time.
set -euo pipefail
work=$(realpath "$1")
workers=${2:-2}
repo=$(cd "$(dirname "$0")/.." && pwd)
home=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$home" "$log"' EXIT
export DAGSTER_HOME=$home BIGACTION_DATA_DIR=$work/data BIGACTION_LANDING_DIR=$work/landing
"$repo/.venv/bin/python" -c "
import dagster as dg
dg.DagsterInstance.get().add_dynamic_partitions('datasets', ['adp.sft_bench'])" 2>/dev/null
/usr/bin/time -v "$repo/.venv/bin/dagster" asset materialize -m bigaction_assets.definitions \
  --select sft_examples --partition adp.sft_bench \
  --config-json "{\"ops\": {\"sft_examples\": {\"config\": {\"workers\": $workers}}}}" >"$log" 2>&1 ||
  { tail -40 "$log"; exit 1; }
grep -E 'Elapsed \(wall|User time|System time|Maximum resident' "$log" | sed 's/^\s*//'
grep -oE 'Finished execution of step "[a-z_]+" in [0-9.]+m?s' "$log"
