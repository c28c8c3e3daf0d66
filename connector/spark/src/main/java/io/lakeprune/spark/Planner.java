package io.lakeprune.spark;

/**
 * The Python side of the source: every decision is made there. Both calls take and return JSON
 * text. A reply holding an {@code "error"} field is a user mistake (unknown table, bad snapshot);
 * the source raises it as an {@link IllegalArgumentException} with that one line.
 *
 * <ul>
 *   <li>{@code describe(options)}: the load options ({@code path} or {@code warehouse} + {@code
 *       table}, {@code snapshot}) -> {@code {"table", "snapshot", "schema" (Spark DDL), "size"}}
 *   <li>{@code prune(request)}: {@code {"table", "snapshot", "filters" (Spark SQL texts, ANDed),
 *       "time_zone"}} -> {@code {"files": [{"path", "size", "modified"}], "summary"}}
 * </ul>
 */
public interface Planner {
    String describe(String optionsJson);

    String prune(String requestJson);
}
