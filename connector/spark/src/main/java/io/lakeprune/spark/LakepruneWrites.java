package io.lakeprune.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.command.ExecutedCommandExec;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand;
import org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand;
import org.apache.spark.sql.execution.datasources.WriteFiles;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark SQL's {@code INSERT INTO} / {@code INSERT OVERWRITE} of a lakeprune table (and {@code
 * DataFrameWriter.insertInto}), through lakeprune's write path. A lakeprune relation is a Parquet
 * relation, so Spark would plan an insert into it as plain Parquet files written into the table's
 * root, never committed (the rows lost), and an overwrite would first delete that root, the
 * table's timeline and indexes with it. This planner strategy, added to every session that makes
 * a lakeprune relation ({@link #addTo}), plans such an insert as the source's DataFrame write
 * instead: an append as an insert, an overwrite as the replacement of every record, in one
 * instant with every index maintained. An overwrite of some partitions only (a {@code PARTITION}
 * clause, dynamic partition overwrite) is refused.
 */
public final class LakepruneWrites extends SparkStrategy {
    /** The option that names the inserted columns, in order, as the table's (see builder/spark_writer.py). */
    static final String COLUMNS_OPTION = "__lakeprune_columns";
    /** The option that names the catalog table inserted into, refreshed after the write. */
    static final String CATALOG_TABLE_OPTION = "__lakeprune_catalog_table";

    /** Adds the strategy to {@code session}'s planner, once. */
    static void addTo(SparkSession session) {
        List<SparkStrategy> strategies = new ArrayList<>(CollectionConverters.asJava(session.experimental().extraStrategies()));
        if (strategies.stream().noneMatch(LakepruneWrites.class::isInstance)) {
            strategies.add(new LakepruneWrites());
            session.experimental().extraStrategies_$eq(LakepruneFileIndex.seq(strategies));
        }
    }

    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
        if (!(plan instanceof InsertIntoHadoopFsRelationCommand insert)) {
            return LakepruneFileIndex.seq(List.of());
        }
        Option<FileIndex> index = insert.fileIndex();
        if (index.isEmpty() || !(index.get() instanceof LakepruneFileIndex table)) {
            return LakepruneFileIndex.seq(List.of());
        }
        if (insert.mode() == SaveMode.Overwrite && (!CollectionConverters.asJava(insert.staticPartitions()).isEmpty() || insert.dynamicPartitionOverwrite())) {
            throw new IllegalArgumentException("lakeprune: INSERT OVERWRITE of some partitions is not supported: "
                    + "an overwrite replaces every record of the table (leave out the PARTITION clause and "
                    + "spark.sql.sources.partitionOverwriteMode=dynamic), or upsert the partition's rows with "
                    + "df.write.format(\"lakeprune\").mode(\"append\").option(\"operation\", \"upsert\")");
        }
        // Spark's planned writes put the query under a WriteFiles node, which only its own file writer runs
        LogicalPlan query = insert.query() instanceof WriteFiles files ? files.child() : insert.query();
        Map<String, String> options = new HashMap<>();
        options.put("path", table.table());
        options.put(COLUMNS_OPTION, String.join("\u0000", CollectionConverters.asJava(insert.outputColumnNames())));
        if (insert.catalogTable().isDefined()) {
            options.put(CATALOG_TABLE_OPTION, insert.catalogTable().get().identifier().quotedString());
        }
        SaveIntoDataSourceCommand write = new SaveIntoDataSourceCommand(
                query, new LakepruneSource(), scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(options)), insert.mode());
        return LakepruneFileIndex.seq(List.of(new ExecutedCommandExec(write)));
    }
}
