package io.lakeprune.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EvalMode$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal$;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The files of one snapshot of a lakeprune table, as the planner prunes them. Spark's filters are
 * handed over as their SQL text (an expression that cannot be rendered is left out: the prune
 * then keeps more files, never fewer); which files are kept is the planner's decision alone. An
 * adopted table's partition columns are valued per file from the path values the planner sends.
 */
public final class LakepruneFileIndex implements FileIndex {
    private static final long BLOCK_SIZE = 128L << 20;

    private final String table;
    private final String snapshot;
    private final long size;
    private volatile String lastSummary = "not pruned yet";
    private volatile String[] allFiles;

    private final StructType partitionSchema;

    LakepruneFileIndex(String table, String snapshot, long size, StructType partitionSchema) {
        this.table = table;
        this.snapshot = snapshot;
        this.size = size;
        this.partitionSchema = partitionSchema;
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
        JsonNode reply = prune(filters);
        // one directory per distinct partition value list (a single one without path columns)
        Map<List<String>, List<FileStatus>> byPartition = new LinkedHashMap<>();
        for (JsonNode file : reply.get("files")) {
            List<String> values = new ArrayList<>();
            for (JsonNode value : file.path("partition")) {
                values.add(value.isNull() ? null : value.asText());
            }
            byPartition.computeIfAbsent(values, key -> new ArrayList<>()).add(new FileStatus(
                    file.get("size").asLong(),
                    false,
                    1,
                    BLOCK_SIZE,
                    file.get("modified").asLong(),
                    new Path(file.get("path").asText())));
        }
        lastSummary = reply.get("summary").asText();
        List<PartitionDirectory> directories = new ArrayList<>();
        for (Map.Entry<List<String>, List<FileStatus>> entry : byPartition.entrySet()) {
            directories.add(PartitionDirectory.apply(
                    partitionRow(entry.getKey()), entry.getValue().toArray(new FileStatus[0])));
        }
        return seq(directories);
    }

    /** A partition path's values (text, as the planner sends them) cast to the partition schema. */
    private InternalRow partitionRow(List<String> values) {
        StructField[] fields = partitionSchema.fields();
        if (values.size() != fields.length) {
            throw new IllegalStateException("lakeprune: " + values.size() + " partition values for "
                    + fields.length + " partition columns");
        }
        Object[] row = new Object[fields.length];
        for (int i = 0; i < fields.length; i++) {
            String text = values.get(i);
            row[i] = text == null ? null : new Cast(
                    Literal$.MODULE$.apply(text),
                    fields[i].dataType(),
                    Option.apply(SQLConf.get().sessionLocalTimeZone()),
                    EvalMode$.MODULE$.ANSI()).eval(InternalRow.empty());
        }
        return new GenericInternalRow(row);
    }

    private static <T> Seq<T> seq(List<T> items) {
        return scala.collection.immutable.List$.MODULE$.from(CollectionConverters.asScala(items));
    }

    private JsonNode prune(List<String> filters) {
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("table", table);
        request.put("snapshot", snapshot);
        request.put("filters", filters);
        request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
        return Json.reply(Planners.get().prune(Json.write(request)));
    }

    @Override
    public String[] inputFiles() {
        String[] files = allFiles;
        if (files == null) {
            List<String> paths = new ArrayList<>();
            for (JsonNode file : prune(List.of()).get("files")) {
                paths.add(file.get("path").asText());
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
