package io.lakeprune.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code spark.read.format("lakeprune")}: a Parquet relation over a lakeprune table whose file
 * list comes from the planner ({@link LakepruneFileIndex}). The schema is the table's (no file is
 * opened to infer one); the snapshot is resolved once, here, so one relation reads one snapshot.
 * An adopted table's partition columns are Spark partition columns, valued from each file's path.
 */
public final class LakepruneSource implements DataSourceRegister, RelationProvider {
    @Override
    public String shortName() {
        return "lakeprune";
    }

    @Override
    public BaseRelation createRelation(SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters) {
        Map<String, String> options = CollectionConverters.asJava(parameters);
        JsonNode table = Json.reply(Planners.get().describe(Json.write(options)));
        StructType schema = StructType.fromDDL(table.get("schema").asText());
        String fromPaths = table.path("partition_schema").asText("");
        StructType partitionSchema = fromPaths.isEmpty() ? new StructType() : StructType.fromDDL(fromPaths);
        JsonNode snapshot = table.get("snapshot");
        LakepruneFileIndex index = new LakepruneFileIndex(
                table.get("table").asText(),
                snapshot == null || snapshot.isNull() ? null : snapshot.asText(),
                table.get("size").asLong(),
                partitionSchema);
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
