/*
 * The Trino / Presto Thrift connector service: the one IDL of lakeprune's Thrift sidecar.
 *
 * Source: Trino 368, docs/src/main/sphinx/include/TrinoThriftService.thrift, checked field by field
 * against the drift annotations of plugin/trino-thrift-api/src/main/java/io/trino/plugin/thrift/api
 * (TrinoThrift*.java, datatypes/*, valuesets/*) and against PrestoDB's presto-thrift-api
 * (PrestoThrift*.java and presto-docs/.../PrestoThriftService.thrift).
 *
 * Differences from Trino's file:
 *   - a `namespace py` line, so that the generated Python package is pruner.thrift.gen.trino_thrift;
 *   - structs are declared before their first use (Trino's file relies on forward references) and
 *     grouped by topic; names, field ids, types and requiredness are unchanged.
 *
 * Presto 0.287 calls the same methods with a `presto` prefix (prestoGetRows, ...) and identical
 * arguments, results and field ids; the struct names differ (PrestoThrift*), which the binary
 * protocol never sends. The server strips either prefix. Presto-only members that lakeprune does not
 * implement are left out: PrestoThriftTableMetadata.bucketedBy (field 5, optional, absent in the
 * Java struct Presto sends) and the write methods prestoAddRows / prestoFinishAddRows /
 * prestoAbortAddRows with PrestoThriftPage (their calls get TApplicationException UNKNOWN_METHOD).
 * Presto names EquatableValueSet field 1 `whiteList`; Trino names it `inclusive`; same id and type.
 *
 * Regenerate the Python code with `bash scripts/generate.sh`; never edit pruner/thrift/gen by hand.
 */

namespace py trino_thrift

// ---------------------------------------------------------------------------------------------
// Column data: one member per engine type. Every member has an optional `nulls` list; values at
// null positions still take a slot. Timestamps are milliseconds since the epoch, dates days.

struct TrinoThriftInteger {
  1: optional list<bool> nulls;
  2: optional list<i32> ints;
}

struct TrinoThriftBigint {
  1: optional list<bool> nulls;
  2: optional list<i64> longs;
}

struct TrinoThriftDouble {
  1: optional list<bool> nulls;
  2: optional list<double> doubles;
}

struct TrinoThriftVarchar {
  1: optional list<bool> nulls;
  2: optional list<i32> sizes;
  3: optional binary bytes;
}

struct TrinoThriftBoolean {
  1: optional list<bool> nulls;
  2: optional list<bool> booleans;
}

struct TrinoThriftDate {
  1: optional list<bool> nulls;
  2: optional list<i32> dates;
}

struct TrinoThriftTimestamp {
  1: optional list<bool> nulls;
  2: optional list<i64> timestamps;
}

struct TrinoThriftJson {
  1: optional list<bool> nulls;
  2: optional list<i32> sizes;
  3: optional binary bytes;
}

struct TrinoThriftHyperLogLog {
  1: optional list<bool> nulls;
  2: optional list<i32> sizes;
  3: optional binary bytes;
}

struct TrinoThriftBigintArray {
  1: optional list<bool> nulls;
  2: optional list<i32> sizes;
  3: optional TrinoThriftBigint values;
}

/** Exactly one member is present. */
struct TrinoThriftBlock {
  1: optional TrinoThriftInteger integerData;
  2: optional TrinoThriftBigint bigintData;
  3: optional TrinoThriftDouble doubleData;
  4: optional TrinoThriftVarchar varcharData;
  5: optional TrinoThriftBoolean booleanData;
  6: optional TrinoThriftDate dateData;
  7: optional TrinoThriftTimestamp timestampData;
  8: optional TrinoThriftJson jsonData;
  9: optional TrinoThriftHyperLogLog hyperLogLogData;
  10: optional TrinoThriftBigintArray bigintArrayData;
}

// ---------------------------------------------------------------------------------------------
// Names, metadata, tokens.

struct TrinoThriftSchemaTableName {
  1: string schemaName;
  2: string tableName;
}

struct TrinoThriftNullableSchemaName {
  1: optional string schemaName;
}

struct TrinoThriftColumnMetadata {
  1: string name;
  2: string type;
  3: optional string comment;
  4: bool hidden;
}

struct TrinoThriftTableMetadata {
  1: TrinoThriftSchemaTableName schemaTableName;
  2: list<TrinoThriftColumnMetadata> columns;
  3: optional string comment;
  4: optional list<set<string>> indexableKeys;
}

/** Absent tableMetadata = no such table. */
struct TrinoThriftNullableTableMetadata {
  1: optional TrinoThriftTableMetadata tableMetadata;
}

/** Absent columns = all columns; an empty set = no columns. */
struct TrinoThriftNullableColumnSet {
  1: optional set<string> columns;
}

struct TrinoThriftId {
  1: binary id;
}

struct TrinoThriftNullableToken {
  1: optional TrinoThriftId token;
}

// ---------------------------------------------------------------------------------------------
// Constraints (TupleDomain). Absent domains = NONE; an empty map = ALL.

enum TrinoThriftBound {
  BELOW = 1;
  EXACTLY = 2;
  ABOVE = 3;
}

/** Unbounded below: no value and ABOVE; unbounded above: no value and BELOW. */
struct TrinoThriftMarker {
  1: optional TrinoThriftBlock value;
  2: TrinoThriftBound bound;
}

struct TrinoThriftRange {
  1: TrinoThriftMarker low;
  2: TrinoThriftMarker high;
}

struct TrinoThriftAllOrNoneValueSet {
  1: bool all;
}

/** Presto calls field 1 `whiteList`. */
struct TrinoThriftEquatableValueSet {
  1: bool inclusive;
  2: list<TrinoThriftBlock> values;
}

struct TrinoThriftRangeValueSet {
  1: list<TrinoThriftRange> ranges;
}

/** Exactly one member is present. */
struct TrinoThriftValueSet {
  1: optional TrinoThriftAllOrNoneValueSet allOrNoneValueSet;
  2: optional TrinoThriftEquatableValueSet equatableValueSet;
  3: optional TrinoThriftRangeValueSet rangeValueSet;
}

struct TrinoThriftDomain {
  1: TrinoThriftValueSet valueSet;
  2: bool nullAllowed;
}

struct TrinoThriftTupleDomain {
  1: optional map<string, TrinoThriftDomain> domains;
}

// ---------------------------------------------------------------------------------------------
// Splits, pages, errors.

struct TrinoThriftHostAddress {
  1: string host;
  2: i32 port;
}

/** An empty hosts list means: any of the catalog's configured addresses. */
struct TrinoThriftSplit {
  1: TrinoThriftId splitId;
  2: list<TrinoThriftHostAddress> hosts;
}

struct TrinoThriftSplitBatch {
  1: list<TrinoThriftSplit> splits;
  2: optional TrinoThriftId nextToken;
}

/** Every block has exactly rowCount rows, in the order of the requested columns. */
struct TrinoThriftPageResult {
  1: list<TrinoThriftBlock> columnBlocks;
  2: i32 rowCount;
  3: optional TrinoThriftId nextToken;
}

exception TrinoThriftServiceException {
  1: string message;
  2: bool retryable;
}

// ---------------------------------------------------------------------------------------------

service TrinoThriftService {
  list<string> trinoListSchemaNames()
    throws (1: TrinoThriftServiceException ex1);

  list<TrinoThriftSchemaTableName> trinoListTables(
      1: TrinoThriftNullableSchemaName schemaNameOrNull)
    throws (1: TrinoThriftServiceException ex1);

  TrinoThriftNullableTableMetadata trinoGetTableMetadata(
      1: TrinoThriftSchemaTableName schemaTableName)
    throws (1: TrinoThriftServiceException ex1);

  TrinoThriftSplitBatch trinoGetSplits(
      1: TrinoThriftSchemaTableName schemaTableName,
      2: TrinoThriftNullableColumnSet desiredColumns,
      3: TrinoThriftTupleDomain outputConstraint,
      4: i32 maxSplitCount,
      5: TrinoThriftNullableToken nextToken)
    throws (1: TrinoThriftServiceException ex1);

  TrinoThriftSplitBatch trinoGetIndexSplits(
      1: TrinoThriftSchemaTableName schemaTableName,
      2: list<string> indexColumnNames,
      3: list<string> outputColumnNames,
      4: TrinoThriftPageResult keys,
      5: TrinoThriftTupleDomain outputConstraint,
      6: i32 maxSplitCount,
      7: TrinoThriftNullableToken nextToken)
    throws (1: TrinoThriftServiceException ex1);

  TrinoThriftPageResult trinoGetRows(
      1: TrinoThriftId splitId,
      2: list<string> columns,
      3: i64 maxBytes,
      4: TrinoThriftNullableToken nextToken)
    throws (1: TrinoThriftServiceException ex1);
}
