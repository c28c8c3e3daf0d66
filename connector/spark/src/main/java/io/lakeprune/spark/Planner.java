package io.lakeprune.spark;

/**
 * The Python side of the source: every decision is made there. Requests and responses are the
 * serialized {@code lakeprune.v1} messages of the PruningService method named (proto/ is the one
 * source of truth for this wire as for gRPC):
 *
 * <ul>
 *   <li>{@code GetTable}: {@code GetTableRequest} -> {@code GetTableResponse}. The table is named by
 *       {@code TableName.table}, a table path or URI, or a name under the warehouse root given as
 *       {@code TableName.schema} (the load's {@code path} / {@code table} and {@code warehouse}).
 *   <li>{@code GetTableStatistics}: {@code GetTableStatisticsRequest} -> {@code
 *       GetTableStatisticsResponse} (the relation's size).
 *   <li>{@code Prune}: {@code PruneRequest} with Spark's pushed filters as its {@code sql_predicate}
 *       -> {@code PruneResponse}: one split per kept file, with its typed partition values.
 * </ul>
 *
 * A user mistake (unknown table, bad snapshot) is answered with a String instead of the response's
 * bytes: the one line the source raises as an {@code AnalysisException} ({@link UserErrors}).
 */
public interface Planner {
    Object call(String method, byte[] request);

    /**
     * Writes {@code data} (a {@code Dataset<Row>}) to the table the options name, as the save mode
     * ({@code SaveMode.name()}) and options say, through lakeprune's write path; null when done, or
     * the one line of a user mistake.
     */
    String write(String mode, java.util.Map<String, String> options, Object data);

    /**
     * Runs an index statement of Spark SQL ({@link IndexStatements}) on the table at {@code
     * location}, which the session's catalog resolved: its rows, each a {@code java.util.List} of
     * {@code columns}' values as strings (SHOW INDEXES), or one row holding the statement's message;
     * or the one line of a user mistake, a String.
     */
    Object index(String location, String statement, java.util.List<String> columns);
}
