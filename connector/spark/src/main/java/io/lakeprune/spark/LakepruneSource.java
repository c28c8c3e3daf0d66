package io.lakeprune.spark;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import lakeprune.v1.PruningServiceOuterClass.Column;
import lakeprune.v1.PruningServiceOuterClass.GetTableRequest;
import lakeprune.v1.PruningServiceOuterClass.GetTableResponse;
import lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsRequest;
import lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsResponse;
import lakeprune.v1.PruningServiceOuterClass.TableName;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import org.apache.spark.sql.sources.SchemaRelationProvider;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code spark.read.format("lakeprune")}: a Parquet relation over a lakeprune table whose file
 * list comes from the planner ({@link LakepruneFileIndex}). The schema is the table's, from its
 * {@code GetTableResponse} (no file is opened to infer one); the snapshot is resolved once, here,
 * so one relation reads one snapshot. An adopted table's partition columns (its files may keep
 * them only in their paths) are Spark partition columns, valued from each file's typed partition
 * values.
 */
public final class LakepruneSource implements DataSourceRegister, RelationProvider, SchemaRelationProvider, CreatableRelationProvider {
    static final String NAME = "lakeprune";
    /** The read option naming a snapshot by its instant ({@code VERSION AS OF}). */
    static final String SNAPSHOT_OPTION = "snapshot";
    /**
     * The read option naming the latest snapshot committed at or before a point in time ({@code
     * TIMESTAMP AS OF}): ISO 8601, UTC unless it carries an offset. Not Delta's {@code
     * timestampAsOf}: Spark takes that option of a catalog table as its own time travel, which it
     * refuses on a DataSource V1 table.
     */
    static final String AS_OF_TIME_OPTION = "asOfTime";

    @Override
    public String shortName() {
        return NAME;
    }

    /**
     * {@code df.write.format("lakeprune").mode(...).save(...)}: the planner's Python half writes the
     * DataFrame through lakeprune's write path (one instant, every index maintained); the relation
     * returned reads the table as written.
     */
    @Override
    public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode, scala.collection.immutable.Map<String, String> parameters, Dataset<Row> data) {
        Map<String, String> options = new HashMap<>(CollectionConverters.asJava(parameters));
        String error = Planners.get().write(mode.name(), options, data);
        if (error != null) {
            throw UserErrors.analysis(error);
        }
        String catalogTable = options.get(LakepruneWrites.CATALOG_TABLE_OPTION);
        if (catalogTable != null) {
            // Spark keeps a catalog table's relation, pinned to the snapshot it was made at
            sqlContext.sparkSession().catalog().refreshTable(catalogTable);
        }
        return createRelation(sqlContext, parameters);
    }

    /**
     * Spark SQL's {@code CREATE TABLE t (columns) USING lakeprune ...} (and a catalog table's reads,
     * which hand over the schema the catalog holds): a table missing at the location is created
     * with {@code schema} and the writer's options ({@code recordKey} / {@code primaryKey}, {@code
     * partitionBy}, {@code orderingField}: {@link LakepruneWrites} copies a CREATE TABLE's
     * TBLPROPERTIES and PARTITIONED BY there); an existing table must have {@code schema}'s columns.
     */
    @Override
    public BaseRelation createRelation(SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters, StructType schema) {
        Map<String, String> options = new HashMap<>(CollectionConverters.asJava(parameters));
        String error = Planners.get().write(SaveMode.Ignore.name(), options, sqlContext.sparkSession().createDataFrame(List.of(), schema));
        if (error != null) {
            throw UserErrors.analysis(error);
        }
        BaseRelation relation = createRelation(sqlContext, parameters);
        if (!columns(relation.schema()).equals(columns(schema))) {
            throw UserErrors.analysis("lakeprune: the table at " + options.getOrDefault("path", "") + " has the columns "
                    + relation.schema().toDDL() + ", not " + schema.toDDL());
        }
        return relation;
    }

    /**
     * The snapshot a relation's options ask for, as a key that differs between any two requests
     * (an instant, a point in time, the latest); {@code options}' keys in lower case.
     */
    static String requested(Map<String, String> options) {
        return options.getOrDefault(SNAPSHOT_OPTION, "") + "@" + options.getOrDefault(AS_OF_TIME_OPTION.toLowerCase(Locale.ROOT), "");
    }

    private static Map<String, DataType> columns(StructType schema) {
        Map<String, DataType> columns = new HashMap<>();
        for (StructField field : schema.fields()) {
            columns.put(field.name().toLowerCase(Locale.ROOT), field.dataType());
        }
        return columns;
    }

    @Override
    public BaseRelation createRelation(SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters) {
        // before Spark can plan an INSERT into this relation as plain Parquet files in its root
        LakepruneWrites.addTo(sqlContext.sparkSession());
        Map<String, String> options = new HashMap<>();
        CollectionConverters.asJava(parameters).forEach((key, value) -> options.put(key.toLowerCase(Locale.ROOT), value));
        TableName name = TableName.newBuilder()
                .setSchema(options.getOrDefault("warehouse", ""))
                .setTable(options.getOrDefault("table", options.getOrDefault("path", "")))
                .build();
        GetTableResponse table = Wire.call(
                "GetTable",
                GetTableRequest.newBuilder()
                        .setTable(name)
                        .setSnapshot(options.getOrDefault(SNAPSHOT_OPTION, ""))
                        .setAsOfTime(options.getOrDefault(AS_OF_TIME_OPTION.toLowerCase(Locale.ROOT), ""))
                        .build(),
                GetTableResponse.parser());
        StructType schema = new StructType();
        Map<String, StructField> fields = new HashMap<>();
        for (Column column : table.getColumnsList()) {
            StructField field = SparkValues.field(column);
            schema = schema.add(field);
            fields.put(column.getName(), field);
        }
        StructType partitionSchema = new StructType();
        if (!table.getPartitionColumnsInFiles()) {
            for (String column : table.getPartitionColumnsList()) {
                partitionSchema = partitionSchema.add(fields.get(column));
            }
        }
        String snapshot = table.getSnapshot().isEmpty() ? null : table.getSnapshot();
        long size = 0;
        if (snapshot != null) {
            GetTableStatisticsResponse statistics = Wire.call(
                    "GetTableStatistics",
                    GetTableStatisticsRequest.newBuilder().setTable(name).setSnapshot(snapshot).build(),
                    GetTableStatisticsResponse.parser());
            size = statistics.getTotalBytes();
        }
        LakepruneFileIndex index = new LakepruneFileIndex(
                table.getLocation(), requested(options), snapshot, size, partitionSchema, table.getRecordKeyList());
        // The partition schema's columns (an adopted table's, whose files may keep them only in
        // their paths) also stand in the data schema: Spark keeps the table's column order and
        // takes their values from each file's partition directory, not from the file.
        return new HadoopFsRelation(
                index,
                partitionSchema,
                schema,
                Option.empty(),
                new ParquetFileFormat(),
                parameters,
                sqlContext.sparkSession());
    }
}
