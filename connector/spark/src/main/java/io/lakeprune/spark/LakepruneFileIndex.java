package io.lakeprune.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import lakeprune.v1.Predicate;
import lakeprune.v1.PruningServiceOuterClass.PartitionValue;
import lakeprune.v1.PruningServiceOuterClass.PruneRequest;
import lakeprune.v1.PruningServiceOuterClass.PruneResponse;
import lakeprune.v1.PruningServiceOuterClass.Split;
import lakeprune.v1.PruningServiceOuterClass.SqlDialect;
import lakeprune.v1.PruningServiceOuterClass.SqlPredicate;
import lakeprune.v1.PruningServiceOuterClass.TableName;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The files of one snapshot of a lakeprune table, as the planner prunes them. Spark's filters are
 * handed over as their SQL texts in the {@code PruneRequest}'s {@code sql_predicate} (an
 * expression that cannot be rendered is left out: the prune then keeps more files, never fewer);
 * which files are kept is the planner's decision alone. An adopted table's partition columns are
 * valued per file from the typed partition values of its split.
 */
public final class LakepruneFileIndex implements FileIndex {
    private static final long BLOCK_SIZE = 128L << 20;

    private final String table;
    private final String snapshot;
    private final long size;
    private volatile String lastSummary = "not pruned yet";
    private volatile String[] allFiles;

    private final StructType partitionSchema;
    private final List<String> recordKey;
    private final String requested;

    /** {@code table}: the table's location; {@code snapshot}: its resolved instant, null when it has none. */
    LakepruneFileIndex(String table, String requested, String snapshot, long size, StructType partitionSchema, List<String> recordKey) {
        this.table = table;
        this.requested = requested;
        this.recordKey = List.copyOf(recordKey);
        this.snapshot = snapshot;
        this.size = size;
        this.partitionSchema = partitionSchema;
    }

    /** The table's location. */
    String table() {
        return table;
    }

    /** The snapshot the relation's options asked for ({@link LakepruneSource#requested}). */
    String requested() {
        return requested;
    }

    /** The table's record key columns. */
    List<String> recordKey() {
        return recordKey;
    }

    @Override
    public Seq<Path> rootPaths() {
        return seq(List.of(new Path(table)));
    }

    @Override
    public Seq<PartitionDirectory> listFiles(Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
        List<String> filters = new ArrayList<>();
        for (Seq<Expression> group : List.of(partitionFilters, dataFilters)) {
            for (Expression expression : CollectionConverters.asJava(group)) {
                try {
                    filters.add(expression.sql());
                } catch (RuntimeException e) {
                    // not renderable: left out, the prune keeps more files
                }
            }
        }
        List<Split> splits = prune(filters);
        // one directory per distinct partition value list (a single one without path columns)
        Map<List<Predicate.Value>, List<FileStatus>> byPartition = new LinkedHashMap<>();
        for (Split split : splits) {
            byPartition.computeIfAbsent(partitionValues(split), key -> new ArrayList<>()).add(new FileStatus(
                    split.getFileSize(), false, 1, BLOCK_SIZE, 0, new Path(uri(split.getPath()))));
        }
        List<PartitionDirectory> directories = new ArrayList<>();
        for (Map.Entry<List<Predicate.Value>, List<FileStatus>> entry : byPartition.entrySet()) {
            directories.add(PartitionDirectory.apply(
                    partitionRow(entry.getKey()), entry.getValue().toArray(new FileStatus[0])));
        }
        return seq(directories);
    }

    /** The split's values of the partition schema's columns, in its order (a column it lacks: NULL). */
    private List<Predicate.Value> partitionValues(Split split) {
        Map<String, Predicate.Value> sent = new LinkedHashMap<>();
        for (PartitionValue value : split.getPartitionValuesList()) {
            sent.put(value.getColumn(), value.getTypedValue());
        }
        List<Predicate.Value> values = new ArrayList<>();
        for (StructField field : partitionSchema.fields()) {
            values.add(sent.getOrDefault(field.name(), Predicate.Value.getDefaultInstance()));
        }
        return values;
    }

    /** A partition directory's row: each typed value as Spark's internal value of its field's type. */
    private InternalRow partitionRow(List<Predicate.Value> values) {
        StructField[] fields = partitionSchema.fields();
        Object[] row = new Object[fields.length];
        for (int i = 0; i < fields.length; i++) {
            row[i] = SparkValues.internal(fields[i].name(), fields[i].dataType(), values.get(i));
        }
        return new GenericInternalRow(row);
    }

    private static String uri(String path) {
        return path.contains("://") ? path : "file://" + path;
    }

    static <T> Seq<T> seq(List<T> items) {
        return scala.collection.immutable.List$.MODULE$.from(CollectionConverters.asScala(items));
    }

    /** The splits the planner keeps for {@code filters} (their AND); none when the table has no snapshot. */
    private List<Split> prune(List<String> filters) {
        if (snapshot == null) {
            lastSummary = "no snapshot, no files";
            return List.of();
        }
        PruneRequest request = PruneRequest.newBuilder()
                .setTable(TableName.newBuilder().setTable(table))
                .setSnapshot(snapshot)
                .setSqlPredicate(SqlPredicate.newBuilder()
                        .setDialect(SqlDialect.SQL_DIALECT_SPARK)
                        .addAllFilters(filters)
                        .setTimeZone(SQLConf.get().sessionLocalTimeZone())
                        .setAnsi(SQLConf.get().ansiEnabled()))
                .build();
        PruneResponse response = Wire.call("Prune", request, PruneResponse.parser());
        lastSummary = "kept " + response.getFilesSelected() + " of " + response.getFilesTotal() + " files"
                + (response.getWidenedCount() > 0 ? ", " + response.getWidenedCount() + " filter(s) not used for pruning" : "");
        return response.getSplitsList();
    }

    @Override
    public String[] inputFiles() {
        String[] files = allFiles;
        if (files == null) {
            List<String> paths = new ArrayList<>();
            for (Split split : prune(List.of())) {
                paths.add(uri(split.getPath()));
            }
            files = paths.toArray(new String[0]);
            allFiles = files;
        }
        return files.clone();
    }

    @Override
    public void refresh() {
        // pinned to one snapshot: nothing to refresh
    }

    @Override
    public long sizeInBytes() {
        return size;
    }

    @Override
    public StructType partitionSchema() {
        return partitionSchema;
    }

    /** The table, its snapshot and what the last prune kept (shown by the logical plan). */
    @Override
    public String toString() {
        return "LakepruneFileIndex[" + table + " @ " + snapshot + ": " + lastSummary + "]";
    }
}
