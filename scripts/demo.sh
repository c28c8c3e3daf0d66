#!/usr/bin/env bash
# The demo: the main job on the embedded default (Spark local[*]). Creates a partitioned table of
# trips, inserts 200,000 rows, upserts 1% (some records change partition), deletes some keys,
# re-inserts one, then shows the table, its history, time travel, compaction and clean, and checks
# the final contents against a reference computed independently by scripts/demo_data.py. Then it
# indexes the table, starts the sidecar and a local Trino 476 (`lakeprune trino start`: downloaded
# from Maven Central into ~/.cache/lakeprune on first use) and queries the table through Trino: the
# native catalog `lakeprune` (gRPC; exact decimals) and the Thrift one `lakeprune_thrift` when the
# native connector's plugin is there (connector/trino/build.sh, or $LAKEPRUNE_TRINO_PLUGIN), else
# the Thrift catalog alone, as `lakeprune`.
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

step "index the table: column stats on every column, partition stats, a bloom filter on driver"
"$LP" sql "CREATE INDEX stats ON trips USING column_stats" -t "$DEMO/warehouse/trips"
"$LP" sql "CREATE INDEX pstats ON trips USING partition_stats" -t "$DEMO/warehouse/trips"
"$LP" sql "CREATE INDEX bf ON trips USING bloom_filters (driver)" -t "$DEMO/warehouse/trips"
"$LP" prune trips -w "$DEMO/warehouse" --where "trip_id = 123457" --explain

GRPC_PORT=${LAKEPRUNE_DEMO_GRPC_PORT:-17777}
THRIFT_PORT=${LAKEPRUNE_DEMO_THRIFT_PORT:-17778}
METRICS_PORT=${LAKEPRUNE_DEMO_METRICS_PORT:-19464}
TRINO_PORT=${LAKEPRUNE_DEMO_TRINO_PORT:-18080}
# The native connector's plugin, if it can be found (or built: connector/trino/build.sh).
FIND_PLUGIN='import sys
from pruner.engines.errors import PluginNotFoundError
from pruner.engines.plugin import locate_plugin
from pruner.engines.spec import TRINO
try:
    print(locate_plugin(TRINO))
except PluginNotFoundError as exc:
    sys.exit(str(exc))'
if PLUGIN=$("$PY" -c "$FIND_PLUGIN" 2>"$DEMO/plugin.err"); then
  CATALOGS=(lakeprune=grpc lakeprune_thrift=thrift)
  NATIVE=(--grpc "127.0.0.1:$GRPC_PORT" --connector-plugin "$PLUGIN")
else
  echo "showing the Thrift catalog only: $(cat "$DEMO/plugin.err")"
  CATALOGS=(lakeprune=thrift)
  NATIVE=()
fi
step "start the sidecar (schema demo = $DEMO/warehouse; gRPC :$GRPC_PORT, Thrift :$THRIFT_PORT) and Trino 476 (:$TRINO_PORT)"
"$LP" serve --warehouse "demo=$DEMO/warehouse" --grpc-port "$GRPC_PORT" --thrift-port "$THRIFT_PORT" \
  --metrics-port "$METRICS_PORT" > "$DEMO/sidecar.log" 2>&1 &
SIDECAR=$!
cleanup() {
  "$LP" trino stop --port "$TRINO_PORT" >/dev/null 2>&1 || true
  kill "$SIDECAR" 2>/dev/null && wait "$SIDECAR" 2>/dev/null || true
}
trap cleanup EXIT
# Returns once a query on each lakeprune catalog can run (the sidecar loads meanwhile).
"$LP" trino start --port "$TRINO_PORT" --sidecar "127.0.0.1:$THRIFT_PORT" "${NATIVE[@]}"

step "query the table through Trino's catalogs: ${CATALOGS[*]}"
"$PY" scripts/demo_trino.py "$DEMO/input" "$TRINO_PORT" "$METRICS_PORT" "${CATALOGS[@]}"
