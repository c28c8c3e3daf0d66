package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTableMetadata;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.ConstraintApplicationResult;
import io.trino.spi.connector.RelationColumnsMetadata;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.connector.SystemTable;
import io.trino.spi.connector.TableNotFoundException;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.statistics.TableStatistics;
import lakeprune.v1.PruningServiceOuterClass.Column;
import lakeprune.v1.PruningServiceOuterClass.GetTableRequest;
import lakeprune.v1.PruningServiceOuterClass.GetTableResponse;
import lakeprune.v1.PruningServiceOuterClass.ListTablesRequest;
import lakeprune.v1.PruningServiceOuterClass.ListTablesResponse;
import lakeprune.v1.PruningServiceOuterClass.TableName;
import lakeprune.v1.PruningServiceOuterClass.VirtualColumn;

import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.trino.spi.StandardErrorCode.INVALID_ARGUMENTS;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static java.util.Objects.requireNonNull;

/**
 * Schemas, tables and columns as the sidecar describes them (ListTables, GetTable). One instance
 * serves one transaction and remembers the tables it described, so a query sees one description
 * of each table.
 */
public class LakepruneMetadata
        implements ConnectorMetadata
{
    private final SidecarClient client;
    private final LakepruneStatistics statistics;
    private final Map<TableKey, GetTableResponse> tables = new HashMap<>();

    private record TableKey(String schema, String table, String snapshot) {}

    public LakepruneMetadata(SidecarClient client, LakepruneStatistics statistics)
    {
        this.client = requireNonNull(client, "client is null");
        this.statistics = requireNonNull(statistics, "statistics is null");
    }

    @Override
    public List<String> listSchemaNames(ConnectorSession session)
    {
        ListTablesResponse response = client.call("ListTables", stub -> stub.listTables(ListTablesRequest.getDefaultInstance()));
        return ImmutableList.copyOf(response.getSchemasList());
    }

    @Override
    public List<SchemaTableName> listTables(ConnectorSession session, Optional<String> schemaName)
    {
        ListTablesRequest request = ListTablesRequest.newBuilder().setSchema(schemaName.orElse("")).build();
        try {
            ListTablesResponse response = client.call("ListTables", stub -> stub.listTables(request));
            return response.getTablesList().stream()
                    .map(table -> new SchemaTableName(table.getSchema(), table.getTable()))
                    .collect(toImmutableList());
        }
        catch (SidecarClient.NotFoundException e) {
            return ImmutableList.of();
        }
    }

    @Override
    public ConnectorTableHandle getTableHandle(
            ConnectorSession session,
            SchemaTableName tableName,
            Optional<ConnectorTableVersion> startVersion,
            Optional<ConnectorTableVersion> endVersion)
    {
        if (startVersion.isPresent()) {
            throw new TrinoException(NOT_SUPPORTED, "lakeprune tables do not support reading changes between versions");
        }
        if (tableName.getTableName().contains("$")) {
            // metadata tables ("t$history", ...) are system tables, which Trino 476 reads without a
            // version (ConnectorMetadata.getSystemTable takes none; its system tables refuse one)
            if (endVersion.isPresent()) {
                throw new TrinoException(NOT_SUPPORTED, "lakeprune metadata tables cannot be read FOR VERSION AS OF: %s lists the latest snapshot".formatted(tableName));
            }
            return null;
        }
        Optional<TableVersion> version = endVersion.map(requested -> TableVersion.of(session, requested));
        Optional<GetTableResponse> table = describe(tableName.getSchemaName(), tableName.getTableName(), version);
        if (table.isEmpty()) {
            return null;
        }
        String described = table.get().getSnapshot();
        // pin the snapshot the query was planned with: every split of the query comes from it
        return new LakepruneTableHandle(
                tableName.getSchemaName(),
                tableName.getTableName(),
                described.isEmpty() ? Optional.empty() : Optional.of(described),
                table.get().getLocation(),
                ImmutableSet.copyOf(table.get().getPrunableColumnsList()),
                TupleDomain.all(),
                Optional.empty(),
                Optional.empty());
    }

    /**
     * The table as of {@code version} (the latest without one), empty when there is no such table. A
     * version the table does not have is the user's mistake, with the sidecar's reason.
     */
    Optional<GetTableResponse> describe(String schema, String table, Optional<TableVersion> version)
    {
        TableKey key = new TableKey(schema, table, version.map(TableVersion::key).orElse(""));
        GetTableResponse cached = tables.get(key);
        if (cached != null) {
            return Optional.of(cached);
        }
        GetTableRequest.Builder request = GetTableRequest.newBuilder().setTable(TableName.newBuilder().setSchema(schema).setTable(table));
        version.ifPresent(requested -> requested.addTo(request));
        try {
            GetTableResponse response = client.call("GetTable", stub -> stub.getTable(request.build()));
            tables.put(key, response);
            tables.put(new TableKey(schema, table, TableVersion.snapshot(response.getSnapshot()).key()), response);
            return Optional.of(response);
        }
        catch (SidecarClient.NotFoundException e) {
            if (version.isPresent() && describe(schema, table, Optional.empty()).isPresent()) {
                throw new TrinoException(INVALID_ARGUMENTS, "lakeprune table %s.%s has no readable snapshot %s: %s".formatted(schema, table, version.get(), e.getMessage()));
            }
            return Optional.empty();
        }
    }

    GetTableResponse describe(LakepruneTableHandle handle)
    {
        return describe(handle.schemaName(), handle.tableName(), handle.snapshot().map(TableVersion::snapshot))
                .orElseThrow(() -> new TableNotFoundException(handle.toSchemaTableName()));
    }

    public List<LakepruneColumnHandle> columns(LakepruneTableHandle handle)
    {
        return columns(describe(handle));
    }

    static List<LakepruneColumnHandle> columns(GetTableResponse table)
    {
        ImmutableList.Builder<LakepruneColumnHandle> columns = ImmutableList.builder();
        Map<String, LakepruneColumnHandle> regular = new HashMap<>();
        for (Column column : table.getColumnsList()) {
            LakepruneColumnHandle handle = LakepruneColumnHandle.regular(column.getName(), LakepruneTypes.toTrinoType(column.getType()));
            columns.add(handle);
            regular.put(column.getName(), handle);
        }
        for (VirtualColumn virtual : table.getVirtualColumnsList()) {
            columns.add(LakepruneColumnHandle.virtual(
                    virtual.getName(),
                    LakepruneTypes.toTrinoType(virtual.getType()),
                    virtual.getExpression(),
                    Optional.ofNullable(regular.get(virtual.getSourceColumn()))));
        }
        return columns.build();
    }

    @Override
    public ConnectorTableMetadata getTableMetadata(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        LakepruneTableHandle handle = (LakepruneTableHandle) tableHandle;
        List<ColumnMetadata> columns = columns(handle).stream().map(LakepruneColumnHandle::toColumnMetadata).collect(toImmutableList());
        return new ConnectorTableMetadata(handle.toSchemaTableName(), columns);
    }

    @Override
    public Iterator<RelationColumnsMetadata> streamRelationColumns(ConnectorSession session, Optional<String> schemaName, UnaryOperator<Set<SchemaTableName>> relationFilter)
    {
        Set<SchemaTableName> tables = relationFilter.apply(ImmutableSet.copyOf(listTables(session, schemaName)));
        ImmutableList.Builder<RelationColumnsMetadata> relations = ImmutableList.builder();
        for (SchemaTableName table : tables) {
            // a table dropped since it was listed is left out
            describe(table.getSchemaName(), table.getTableName(), Optional.empty()).ifPresent(response -> relations.add(RelationColumnsMetadata.forTable(
                    table,
                    columns(response).stream().filter(column -> !column.isVirtual()).map(LakepruneColumnHandle::toColumnMetadata).collect(toImmutableList()))));
        }
        return relations.build().iterator();
    }

    @Override
    public Map<String, ColumnHandle> getColumnHandles(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        ImmutableMap.Builder<String, ColumnHandle> handles = ImmutableMap.builder();
        columns((LakepruneTableHandle) tableHandle).forEach(column -> handles.put(column.name(), column));
        return handles.buildOrThrow();
    }

    @Override
    public ColumnMetadata getColumnMetadata(ConnectorSession session, ConnectorTableHandle tableHandle, ColumnHandle columnHandle)
    {
        return ((LakepruneColumnHandle) columnHandle).toColumnMetadata();
    }

    @Override
    public Optional<ConstraintApplicationResult<ConnectorTableHandle>> applyFilter(ConnectorSession session, ConnectorTableHandle tableHandle, Constraint constraint)
    {
        LakepruneTableHandle handle = (LakepruneTableHandle) tableHandle;
        TupleDomain<LakepruneColumnHandle> summary = constraint.getSummary().transformKeys(LakepruneColumnHandle.class::cast);
        TupleDomain<LakepruneColumnHandle> combined = handle.constraint().intersect(summary);
        Optional<ExpressionFilter> filter = ExpressionFilter.and(handle.filter(), ExpressionFilter.of(constraint.getExpression(), constraint.getAssignments(), session.getTimeZoneKey()));
        Optional<TextFilter> text = TextFilter.and(handle.text(), TextFilter.of(constraint.getExpression(), constraint.getAssignments()));
        if (combined.equals(handle.constraint()) && filter.equals(handle.filter()) && text.equals(handle.text())) {
            return Optional.empty();
        }
        // The sidecar prunes files, not rows: Trino keeps the whole filter (nothing is dropped).
        return Optional.of(new ConstraintApplicationResult<>(
                handle.withConstraint(combined).withFilter(filter).withText(text),
                constraint.getSummary(),
                constraint.getExpression(),
                false));
    }

    @Override
    public TableStatistics getTableStatistics(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        LakepruneTableHandle handle = (LakepruneTableHandle) tableHandle;
        return statistics.statistics(handle, columns(handle));
    }

    @Override
    public Optional<SystemTable> getSystemTable(ConnectorSession session, SchemaTableName tableName)
    {
        return MetadataTables.of(client, tableName, this);
    }
}
