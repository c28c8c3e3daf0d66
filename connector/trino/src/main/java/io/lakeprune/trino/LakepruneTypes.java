package io.lakeprune.trino;

import io.trino.spi.TrinoException;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;
import lakeprune.v1.PruningServiceOuterClass.ColumnType;
import lakeprune.v1.PruningServiceOuterClass.TypeKind;

import java.util.Arrays;
import java.util.Optional;

import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_UNSUPPORTED;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DecimalType.createDecimalType;
import static io.trino.spi.type.DoubleType.DOUBLE;
import static io.trino.spi.type.IntegerType.INTEGER;
import static io.trino.spi.type.RealType.REAL;
import static io.trino.spi.type.SmallintType.SMALLINT;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TinyintType.TINYINT;
import static io.trino.spi.type.VarbinaryType.VARBINARY;
import static io.trino.spi.type.VarcharType.VARCHAR;

/** lakeprune's column types as Trino types and back: exact, as Trino's Iceberg connector maps timestamptz. */
public final class LakepruneTypes
{
    private LakepruneTypes() {}

    public static Type toTrinoType(ColumnType type)
    {
        return switch (type.getKind()) {
            case TYPE_KIND_BOOLEAN -> BOOLEAN;
            case TYPE_KIND_TINYINT -> TINYINT;
            case TYPE_KIND_SMALLINT -> SMALLINT;
            case TYPE_KIND_INT -> INTEGER;
            case TYPE_KIND_BIGINT -> BIGINT;
            case TYPE_KIND_FLOAT -> REAL;
            case TYPE_KIND_DOUBLE -> DOUBLE;
            case TYPE_KIND_DECIMAL -> createDecimalType(type.getPrecision(), type.getScale());
            case TYPE_KIND_STRING -> VARCHAR;
            case TYPE_KIND_BINARY -> VARBINARY;
            case TYPE_KIND_DATE -> DATE;
            // UTC instants in microseconds
            case TYPE_KIND_TIMESTAMP -> TIMESTAMP_TZ_MICROS;
            case TYPE_KIND_UNSPECIFIED, UNRECOGNIZED -> throw new TrinoException(LAKEPRUNE_UNSUPPORTED, "Unsupported lakeprune column type: " + type.getName());
        };
    }

    /** A Trino type as lakeprune's column type (the inverse of toTrinoType); empty for a type lakeprune does not have. */
    public static Optional<ColumnType> toColumnType(Type type)
    {
        if (type instanceof DecimalType decimal) {
            return Optional.of(ColumnType.newBuilder()
                    .setKind(TypeKind.TYPE_KIND_DECIMAL)
                    .setPrecision(decimal.getPrecision())
                    .setScale(decimal.getScale())
                    .setName("decimal(%s,%s)".formatted(decimal.getPrecision(), decimal.getScale()))
                    .build());
        }
        if (type instanceof VarcharType) {
            return Optional.of(ColumnType.newBuilder().setKind(TypeKind.TYPE_KIND_STRING).setName("string").build());
        }
        return Arrays.stream(TypeKind.values())
                .filter(kind -> kind != TypeKind.TYPE_KIND_UNSPECIFIED && kind != TypeKind.UNRECOGNIZED && kind != TypeKind.TYPE_KIND_DECIMAL)
                .map(kind -> ColumnType.newBuilder().setKind(kind).setName(type.getDisplayName()).build())
                .filter(candidate -> toTrinoType(candidate).equals(type))
                .findFirst();
    }
}
