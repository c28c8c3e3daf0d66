package io.lakeprune.trino;

import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.type.Type;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * A column of a lakeprune table. A VIRTUAL column is a functional index's hidden column: the
 * sidecar prunes by it; it is not stored in the data files, but computed from its {@code source}
 * column when read (IndexFunctions).
 */
public record LakepruneColumnHandle(String name, Type type, Kind kind, Optional<String> expression, Optional<LakepruneColumnHandle> source)
        implements ColumnHandle
{
    public enum Kind
    {
        REGULAR,
        VIRTUAL,
    }

    public LakepruneColumnHandle
    {
        requireNonNull(name, "name is null");
        requireNonNull(type, "type is null");
        requireNonNull(kind, "kind is null");
        requireNonNull(expression, "expression is null");
        requireNonNull(source, "source is null");
    }

    public static LakepruneColumnHandle regular(String name, Type type)
    {
        return new LakepruneColumnHandle(name, type, Kind.REGULAR, Optional.empty(), Optional.empty());
    }

    /** A functional index's hidden column: {@code expression} over {@code source}, when the table has that column. */
    public static LakepruneColumnHandle virtual(String name, Type type, String expression, Optional<LakepruneColumnHandle> source)
    {
        return new LakepruneColumnHandle(name, type, Kind.VIRTUAL, Optional.of(expression), source);
    }

    public boolean isVirtual()
    {
        return kind == Kind.VIRTUAL;
    }

    public ColumnMetadata toColumnMetadata()
    {
        return ColumnMetadata.builder()
                .setName(name)
                .setType(type)
                .setHidden(isVirtual())
                .setComment(expression.map(call -> "functional index on " + call))
                .build();
    }
}
