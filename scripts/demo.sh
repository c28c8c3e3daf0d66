#!/usr/bin/env bash
# The demo: the main job on the embedded default (Spark local[*]). Creates a partitioned table of
# trips, inserts 200,000 rows, upserts 1% (some records change partition), deletes some keys,
# re-inserts one, then shows the table, its history, time travel, compaction and clean, and checks
# the final contents against a reference computed independently by scripts/demo_data.py.
# Output goes to $LAKEPRUNE_DEMO_DIR (default ./demo-output), recreated on every run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
VENV=${LAKEPRUNE_VENV:-.venv}
LP="$VENV/bin/lakeprune"
PY="$VENV/bin/python"
DEMO=${LAKEPRUNE_DEMO_DIR:-$PWD/demo-output}
rm -rf "$DEMO" && mkdir -p "$DEMO/input"
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "generating input files in $DEMO/input"
"$PY" scripts/demo_data.py generate "$DEMO/input"

step "lakeprune table create (warehouse $DEMO/warehouse, table trips)"
"$LP" table create trips -w "$DEMO/warehouse" --schema-from "$DEMO/input/trips.parquet" \
  --record-key trip_id --partition-by city --ordering-field updated_at --property clean.retain_commits=2

step "insert 200,000 trips"
"$LP" write trips -w "$DEMO/warehouse" --input "$DEMO/input/trips.parquet" --mode insert
FIRST=$("$LP" table history trips -w "$DEMO/warehouse" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["instant"])')

step "upsert 1% (2,000 trips; every 10th moves to another city; the batch has duplicate keys)"
"$LP" write trips -w "$DEMO/warehouse" --input "$DEMO/input/updates.parquet" --mode upsert

step "delete 500 trips by key"
"$LP" write trips -w "$DEMO/warehouse" --input "$DEMO/input/deletes.parquet" --mode delete

step "re-insert one deleted trip"
"$LP" write trips -w "$DEMO/warehouse" --input "$DEMO/input/reinsert.parquet" --mode insert

step "table show / history"
"$LP" table show trips -w "$DEMO/warehouse"
"$LP" table history trips -w "$DEMO/warehouse"

step "read the latest snapshot (5 rows) and time-travel to the first one"
"$LP" table read trips -w "$DEMO/warehouse" --limit 5 --columns trip_id,city,fare,updated_at
"$LP" table read trips -w "$DEMO/warehouse" --snapshot "$FIRST" --out "$DEMO/first_snapshot.parquet"
"$LP" table read trips -w "$DEMO/warehouse" --out "$DEMO/latest.parquet"

step "compact index partitions, then clean files the 2 newest commits' snapshots do not need"
"$LP" compact trips -w "$DEMO/warehouse"
"$LP" clean trips -w "$DEMO/warehouse"
if "$LP" table read trips -w "$DEMO/warehouse" --snapshot "$FIRST" --limit 1; then
  echo "the first snapshot should have been cleaned" >&2; exit 1
fi

step "checking the table against the independently computed reference"
"$PY" scripts/demo_data.py verify "$DEMO/input" "$DEMO/latest.parquet" "$DEMO/first_snapshot.parquet"
