package io.lakeprune.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.command.CreateDataSourceTableCommand;
import org.apache.spark.sql.execution.command.ExecutedCommandExec;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand;
import org.apache.spark.sql.execution.datasources.WriteFiles;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark SQL's writes to a lakeprune table — {@code INSERT INTO}, {@code INSERT OVERWRITE} (and
 * {@code DataFrameWriter.insertInto}), {@code DELETE FROM}, {@code UPDATE}, {@code MERGE INTO} —
 * through lakeprune's write path. A lakeprune relation is a Parquet relation, so Spark would plan
 * an insert into it as plain Parquet files written into the table's root, never committed (the
 * rows lost), and an overwrite would first delete that root, the table's timeline and indexes with
 * it; it plans the row-level statements for DataSource V2 tables only. This planner strategy,
 * added to every session that makes a lakeprune relation ({@link #addTo}), plans each as the
 * source's DataFrame write instead, one instant with every index maintained: an append as an
 * insert, an overwrite as the replacement of every record, the row-level statements as the rows
 * {@link RowLevelPlans} computes from the statement's resolved plan (deleted, upserted, or both;
 * a merge's target narrowed to the source's keys first, {@link MergeKeys}).
 * An overwrite of some partitions only (a {@code PARTITION} clause, dynamic partition overwrite)
 * is refused.
 */
public final class LakepruneWrites extends SparkStrategy {
    /** The option that names the inserted columns, in order, as the table's (see builder/spark_writer.py). */
    static final String COLUMNS_OPTION = "__lakeprune_columns";
    /** The option that names the catalog table written to, refreshed after the write. */
    static final String CATALOG_TABLE_OPTION = "__lakeprune_catalog_table";
    /** The option that names the row-level statement whose rows are written: delete, update or merge. */
    static final String STATEMENT_OPTION = "__lakeprune_statement";
    /** The TBLPROPERTIES of a CREATE TABLE that are the writer's options (lower case). */
    private static final Set<String> WRITER_PROPERTIES = Set.of("primarykey", "recordkey", "orderingfield", "precombinefield");

    /** Adds the strategy to {@code session}'s planner, and {@link SnapshotReads} to its optimizer, once. */
    public static void addTo(SparkSession session) {
        List<SparkStrategy> strategies = new ArrayList<>(CollectionConverters.asJava(session.experimental().extraStrategies()));
        if (strategies.stream().noneMatch(LakepruneWrites.class::isInstance)) {
            strategies.add(new LakepruneWrites());
            session.experimental().extraStrategies_$eq(LakepruneFileIndex.seq(strategies));
        }
        List<Rule<LogicalPlan>> rules = new ArrayList<>(CollectionConverters.asJava(session.experimental().extraOptimizations()));
        if (rules.stream().noneMatch(SnapshotReads.class::isInstance)) {
            rules.add(new SnapshotReads());
            session.experimental().extraOptimizations_$eq(LakepruneFileIndex.seq(rules));
        }
    }

    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
        Optional<SparkPlan> planned = Optional.empty();
        if (plan instanceof InsertIntoHadoopFsRelationCommand insert) {
            planned = insert(insert);
        }
        else if (plan instanceof DeleteFromTable delete) {
            planned = target(delete.table()).map(table -> write(table, RowLevelPlans.delete(table.plan(), delete.condition()), "delete"));
        }
        else if (plan instanceof UpdateTable update) {
            planned = target(update.table()).map(table -> write(table, RowLevelPlans.update(
                    table.plan(), table.index().recordKey(), CollectionConverters.asJava(update.assignments()), update.condition()), "update"));
        }
        else if (plan instanceof CreateDataSourceTableCommand create && isLakeprune(create.table()) && !create.table().schema().isEmpty()) {
            planned = Optional.of(new ExecutedCommandExec(new CreateDataSourceTableCommand(withWriterOptions(create.table()), create.ignoreIfExists())));
        }
        else if (plan instanceof MergeIntoTable merge) {
            planned = target(merge.targetTable()).map(table -> {
                List<String> recordKey = table.index().recordKey();
                return write(table, RowLevelPlans.merge(merge, MergeKeys.narrowed(merge, table.plan(), recordKey), recordKey), "merge");
            });
        }
        return LakepruneFileIndex.seq(planned.stream().toList());
    }

    private static boolean isLakeprune(CatalogTable table) {
        return table.provider().isDefined() && table.provider().get().equalsIgnoreCase("lakeprune");
    }

    /**
     * A CREATE TABLE's catalog entry with what lakeprune creates the table with in its options (those
     * the source sees): the record key and ordering field given as TBLPROPERTIES (Hudi's spelling),
     * and the PARTITIONED BY columns as {@code partitionBy}. The entry itself then has no partition
     * columns: lakeprune partitions the table, and Spark reads it as the source describes it.
     */
    private static CatalogTable withWriterOptions(CatalogTable table) {
        Map<String, String> options = new HashMap<>(CollectionConverters.asJava(table.storage().properties()));
        CollectionConverters.asJava(table.properties()).forEach((key, value) -> {
            if (WRITER_PROPERTIES.contains(key.toLowerCase(Locale.ROOT))) {
                options.putIfAbsent(key, value);
            }
        });
        List<String> partitionedBy = CollectionConverters.asJava(table.partitionColumnNames());
        if (!partitionedBy.isEmpty()) {
            options.put("partitionBy", String.join(",", partitionedBy));
        }
        CatalogStorageFormat storage = table.storage();
        CatalogStorageFormat withOptions = storage.copy(storage.copy$default$1(), storage.copy$default$2(), storage.copy$default$3(),
                storage.copy$default$4(), storage.copy$default$5(), scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(options)),
                storage.copy$default$7());
        return table.copy(table.copy$default$1(), table.copy$default$2(), withOptions, table.copy$default$4(), table.copy$default$5(),
                LakepruneFileIndex.seq(List.of()), table.copy$default$7(), table.copy$default$8(), table.copy$default$9(), table.copy$default$10(),
                table.copy$default$11(), table.copy$default$12(), table.copy$default$13(), table.copy$default$14(), table.copy$default$15(),
                table.copy$default$16(), table.copy$default$17(), table.copy$default$18(), table.copy$default$19(), table.copy$default$20(),
                table.copy$default$21(), table.copy$default$22());
    }

    /** A lakeprune relation a statement writes to: the relation, its file index and its catalog table. */
    private record Target(LogicalPlan plan, LakepruneFileIndex index, Option<CatalogTable> catalogTable) {}

    private static Optional<Target> target(LogicalPlan plan) {
        LogicalPlan relation = plan;
        while (relation instanceof SubqueryAlias alias) {
            relation = alias.child();
        }
        if (relation instanceof LogicalRelation logical
                && logical.relation() instanceof HadoopFsRelation files
                && files.location() instanceof LakepruneFileIndex index) {
            return Optional.of(new Target(relation, index, logical.catalogTable()));
        }
        return Optional.empty();
    }

    private static Optional<SparkPlan> insert(InsertIntoHadoopFsRelationCommand insert) {
        Option<FileIndex> index = insert.fileIndex();
        if (index.isEmpty() || !(index.get() instanceof LakepruneFileIndex table)) {
            return Optional.empty();
        }
        if (insert.mode() == SaveMode.Overwrite && (!CollectionConverters.asJava(insert.staticPartitions()).isEmpty() || insert.dynamicPartitionOverwrite())) {
            throw UserErrors.analysis("lakeprune: INSERT OVERWRITE of some partitions is not supported: "
                    + "an overwrite replaces every record of the table (leave out the PARTITION clause and "
                    + "spark.sql.sources.partitionOverwriteMode=dynamic), or upsert the partition's rows with "
                    + "df.write.format(\"lakeprune\").mode(\"append\").option(\"operation\", \"upsert\")");
        }
        // Spark's planned writes put the query under a WriteFiles node, which only its own file writer runs
        LogicalPlan query = insert.query() instanceof WriteFiles files ? files.child() : insert.query();
        Map<String, String> options = options(table, insert.catalogTable());
        options.put(COLUMNS_OPTION, String.join("\u0000", CollectionConverters.asJava(insert.outputColumnNames())));
        return Optional.of(command(query, options, insert.mode()));
    }

    private static SparkPlan write(Target table, LogicalPlan rows, String statement) {
        Map<String, String> options = options(table.index(), table.catalogTable());
        options.put(STATEMENT_OPTION, statement);
        return command(rows, options, SaveMode.Append);
    }

    private static Map<String, String> options(LakepruneFileIndex table, Option<CatalogTable> catalogTable) {
        Map<String, String> options = new HashMap<>();
        options.put("path", table.table());
        if (catalogTable.isDefined()) {
            options.put(CATALOG_TABLE_OPTION, catalogTable.get().identifier().quotedString());
        }
        return options;
    }

    private static SparkPlan command(LogicalPlan rows, Map<String, String> options, SaveMode mode) {
        return new ExecutedCommandExec(new SaveIntoDataSourceCommand(
                rows, new LakepruneSource(), scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(options)), mode));
    }
}
