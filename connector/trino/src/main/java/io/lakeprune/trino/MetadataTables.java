package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableMetadata;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.RecordCursor;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.connector.SystemTable;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.Type;
import lakeprune.v1.Predicate;
import lakeprune.v1.PruningServiceOuterClass.DataFile;
import lakeprune.v1.PruningServiceOuterClass.GetHistoryRequest;
import lakeprune.v1.PruningServiceOuterClass.GetHistoryResponse;
import lakeprune.v1.PruningServiceOuterClass.GetTableResponse;
import lakeprune.v1.PruningServiceOuterClass.HistoryEntry;
import lakeprune.v1.PruningServiceOuterClass.IndexInfo;
import lakeprune.v1.PruningServiceOuterClass.ListFilesRequest;
import lakeprune.v1.PruningServiceOuterClass.PartitionValue;
import lakeprune.v1.PruningServiceOuterClass.TableName;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static io.trino.spi.connector.SystemTable.Distribution.SINGLE_COORDINATOR;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.stream.Collectors.joining;

/**
 * The metadata tables of a lakeprune table: {@code "t$history"} (GetHistory), {@code "t$files"}
 * (ListFiles of the latest snapshot) and {@code "t$indexes"} (GetTable's indexes).
 */
public final class MetadataTables
{
    private MetadataTables() {}

    public static Optional<SystemTable> of(SidecarClient client, SchemaTableName name, LakepruneMetadata metadata)
    {
        String full = name.getTableName();
        int dollar = full.indexOf('$');
        if (dollar <= 0) {
            return Optional.empty();
        }
        String table = full.substring(0, dollar);
        String kind = full.substring(dollar + 1);
        TableName tableName = TableName.newBuilder().setSchema(name.getSchemaName()).setTable(table).build();
        Optional<GetTableResponse> described = metadata.describe(name.getSchemaName(), table, Optional.empty());
        if (described.isEmpty()) {
            return Optional.empty();
        }
        return switch (kind) {
            case "history" -> Optional.of(new Table(name, columns("instant", VARCHAR, "action", VARCHAR, "operation", VARCHAR, "counts", VARCHAR, "earliest_retained", VARCHAR), () -> {
                GetHistoryResponse response = client.call("GetHistory", stub -> stub.getHistory(GetHistoryRequest.newBuilder().setTable(tableName).build()));
                List<List<Object>> rows = new ArrayList<>();
                for (HistoryEntry entry : response.getEntriesList()) {
                    rows.add(row(entry.getInstant(), entry.getAction(), entry.getOperation(), render(new TreeMap<>(entry.getCountsMap())), entry.getEarliestRetained()));
                }
                return rows;
            }));
            case "files" -> Optional.of(new Table(name, columns("path", VARCHAR, "partition", VARCHAR, "partition_values", VARCHAR, "file_group", VARCHAR, "instant", VARCHAR, "size", BIGINT, "row_count", BIGINT), () -> {
                List<DataFile> files = client.call("ListFiles", stub -> {
                    List<DataFile> all = new ArrayList<>();
                    stub.listFiles(ListFilesRequest.newBuilder().setTable(tableName).build()).forEachRemaining(response -> all.addAll(response.getFilesList()));
                    return all;
                });
                List<List<Object>> rows = new ArrayList<>();
                for (DataFile file : files) {
                    rows.add(row(file.getPath(), file.getPartition(), partitionValues(file.getPartitionValuesList()), file.getFileGroup(), file.getInstant(), file.getSize(), file.getRowCount()));
                }
                return rows;
            }));
            case "indexes" -> Optional.of(new Table(name, columns("name", VARCHAR, "type", VARCHAR, "columns", VARCHAR, "options", VARCHAR, "state", VARCHAR, "complete_up_to", VARCHAR, "partition", VARCHAR), () -> {
                List<List<Object>> rows = new ArrayList<>();
                for (IndexInfo index : described.get().getIndexesList()) {
                    rows.add(row(index.getName(), enumName(index.getType().name(), "INDEX_TYPE_"), String.join(",", index.getColumnsList()), render(new TreeMap<>(index.getOptionsMap())), enumName(index.getState().name(), "INDEX_STATE_"), index.getCompleteUpTo(), index.getPartition()));
                }
                return rows;
            }));
            default -> Optional.empty();
        };
    }

    /** A wire enum constant as the sidecar names it in text: {@code INDEX_TYPE_BLOOM_FILTERS} is {@code bloom_filters}. */
    private static String enumName(String constant, String prefix)
    {
        return constant.substring(prefix.length()).toLowerCase(Locale.ROOT);
    }

    private static String partitionValues(List<PartitionValue> values)
    {
        return values.stream().map(value -> value.getColumn() + "=" + render(value.getTypedValue())).collect(joining("/"));
    }

    /** A typed value as text for reading: numbers as they are, dates and timestamps in ISO-8601, binaries in hex. */
    static String render(Predicate.Value value)
    {
        return switch (value.getKindCase()) {
            case KIND_NOT_SET -> "NULL";
            case BOOLEAN_VALUE -> Boolean.toString(value.getBooleanValue());
            case INTEGER_VALUE -> Long.toString(value.getIntegerValue());
            case FLOAT_VALUE -> Float.toString(value.getFloatValue());
            case DOUBLE_VALUE -> Double.toString(value.getDoubleValue());
            case DECIMAL_VALUE -> new BigDecimal(new BigInteger(value.getDecimalValue().getUnscaled()), value.getDecimalValue().getScale()).toPlainString();
            case STRING_VALUE -> value.getStringValue();
            case BINARY_VALUE -> HexFormat.of().formatHex(value.getBinaryValue().toByteArray());
            case DATE_DAYS -> LocalDate.ofEpochDay(value.getDateDays()).toString();
            case TIMESTAMP_MICROS -> Instant.EPOCH.plus(value.getTimestampMicros(), ChronoUnit.MICROS).toString();
        };
    }

    private static String render(Map<String, ?> values)
    {
        return values.entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue()).collect(joining(", "));
    }

    private static List<Object> row(Object... values)
    {
        List<Object> row = new ArrayList<>();
        for (Object value : values) {
            row.add(value instanceof String text && text.isEmpty() ? null : value);
        }
        return row;
    }

    private static List<ColumnMetadata> columns(Object... nameAndType)
    {
        ImmutableList.Builder<ColumnMetadata> columns = ImmutableList.builder();
        for (int i = 0; i < nameAndType.length; i += 2) {
            columns.add(new ColumnMetadata((String) nameAndType[i], (Type) nameAndType[i + 1]));
        }
        return columns.build();
    }

    private interface Rows
    {
        List<List<Object>> load();
    }

    private record Table(SchemaTableName name, List<ColumnMetadata> columns, Rows rows)
            implements SystemTable
    {
        @Override
        public Distribution getDistribution()
        {
            return SINGLE_COORDINATOR;
        }

        @Override
        public ConnectorTableMetadata getTableMetadata()
        {
            return new ConnectorTableMetadata(name, columns);
        }

        @Override
        public RecordCursor cursor(ConnectorTransactionHandle transactionHandle, ConnectorSession session, TupleDomain<Integer> constraint)
        {
            InMemoryRecordSet.Builder records = InMemoryRecordSet.builder(columns.stream().map(ColumnMetadata::getType).collect(ImmutableList.toImmutableList()));
            rows.load().forEach(row -> records.addRow(row.toArray()));
            return records.build().cursor();
        }
    }
}
