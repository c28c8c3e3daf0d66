package io.lakeprune.trino;

import com.google.common.collect.ImmutableSet;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;

import java.util.Optional;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * A table at one snapshot (the one a time-travel query named, else the latest when the query was
 * planned) and the predicate the sidecar prunes with: the query's domains on its columns
 * ({@code constraint}) and the rest of the filter as Trino's expression trees ({@code filter},
 * ExpressionFilter: calls the sidecar matches against index expressions).
 * {@code location} is the table's root as the sidecar names it (GetTableResponse.location): splits
 * naming a file outside it are refused. {@code prunableColumns} are the columns the sidecar declared it
 * can prune by (GetTableResponse.prunable_columns): split enumeration waits for a dynamic filter
 * only when it covers one of them. {@code text} is what the filter requires of string columns' text,
 * for text indexes (TextFilter; empty: nothing).
 */
public record LakepruneTableHandle(
        String schemaName,
        String tableName,
        Optional<String> snapshot,
        String location,
        Set<String> prunableColumns,
        TupleDomain<LakepruneColumnHandle> constraint,
        Optional<ExpressionFilter> filter,
        Optional<TextFilter> text)
        implements ConnectorTableHandle
{
    public LakepruneTableHandle
    {
        requireNonNull(schemaName, "schemaName is null");
        requireNonNull(tableName, "tableName is null");
        requireNonNull(snapshot, "snapshot is null");
        requireNonNull(location, "location is null");
        prunableColumns = ImmutableSet.copyOf(requireNonNull(prunableColumns, "prunableColumns is null"));
        requireNonNull(constraint, "constraint is null");
        requireNonNull(filter, "filter is null");
        requireNonNull(text, "text is null");
    }

    public SchemaTableName toSchemaTableName()
    {
        return new SchemaTableName(schemaName, tableName);
    }

    public LakepruneTableHandle withConstraint(TupleDomain<LakepruneColumnHandle> constraint)
    {
        return new LakepruneTableHandle(schemaName, tableName, snapshot, location, prunableColumns, constraint, filter, text);
    }

    public LakepruneTableHandle withFilter(Optional<ExpressionFilter> filter)
    {
        return new LakepruneTableHandle(schemaName, tableName, snapshot, location, prunableColumns, constraint, filter, text);
    }

    public LakepruneTableHandle withText(Optional<TextFilter> text)
    {
        return new LakepruneTableHandle(schemaName, tableName, snapshot, location, prunableColumns, constraint, filter, text);
    }

    @Override
    public String toString()
    {
        return schemaName + "." + tableName + snapshot.map(instant -> "@" + instant).orElse("") + filter.map(expressions -> " filter: " + expressions).orElse("") + text.map(filter -> " text: " + filter).orElse("");
    }
}
