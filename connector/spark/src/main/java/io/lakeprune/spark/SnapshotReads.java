package io.lakeprune.spark;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractPartialFunction;

/**
 * Reads of a lakeprune catalog table at the snapshot their query asks for. Spark keeps a catalog
 * table's relation once made and reuses it for the table's later reads with only the relation's
 * options replaced by the new query's; a lakeprune relation's file index is pinned to the snapshot
 * it was made for, so a read after a time-travel read ({@code VERSION AS OF}, {@code TIMESTAMP AS
 * OF}, {@code spark.read.option("snapshot", ...).table(...)}) would list that snapshot's files, and a time-travel
 * read after a plain one the latest. This optimizer rule replaces a relation whose options ask for
 * another snapshot than its file index holds with one made for the options.
 */
final class SnapshotReads extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
        return plan.transformUp(new AbstractPartialFunction<>() {
            @Override
            public boolean isDefinedAt(LogicalPlan node) {
                return node instanceof LogicalRelation relation
                        && relation.relation() instanceof HadoopFsRelation files
                        && files.location() instanceof LakepruneFileIndex index
                        && !requested(files).equals(index.requested());
            }

            @Override
            public LogicalPlan apply(LogicalPlan node) {
                LogicalRelation relation = (LogicalRelation) node;
                HadoopFsRelation files = (HadoopFsRelation) relation.relation();
                return new LogicalRelation(
                        new LakepruneSource().createRelation(files.sparkSession().sqlContext(), files.options()),
                        relation.output(),
                        relation.catalogTable(),
                        relation.isStreaming(),
                        relation.stream());
            }
        });
    }

    /** The snapshot a relation's options ask for. */
    private static String requested(HadoopFsRelation files) {
        Map<String, String> options = new HashMap<>();
        CollectionConverters.asJava(files.options()).forEach((key, value) -> options.put(key.toLowerCase(Locale.ROOT), value));
        return LakepruneSource.requested(options);
    }
}
