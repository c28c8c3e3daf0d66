package io.lakeprune.trino;

import io.trino.spi.TrinoException;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Decimals;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.HexFormat;

import static io.airlift.slice.Slices.utf8Slice;
import static io.airlift.slice.Slices.wrappedBuffer;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_BAD_DATA;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DoubleType.DOUBLE;
import static io.trino.spi.type.IntegerType.INTEGER;
import static io.trino.spi.type.LongTimestampWithTimeZone.fromEpochMillisAndFraction;
import static io.trino.spi.type.RealType.REAL;
import static io.trino.spi.type.SmallintType.SMALLINT;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TinyintType.TINYINT;
import static io.trino.spi.type.VarbinaryType.VARBINARY;
import static java.lang.Float.floatToRawIntBits;
import static java.math.RoundingMode.UNNECESSARY;

/** A partition path's value (text) as a Trino value of the column's type, exactly. */
final class PartitionValues
{
    private PartitionValues() {}

    static Object parse(String column, Type type, String value)
    {
        try {
            if (type instanceof VarcharType) {
                return utf8Slice(value);
            }
            if (type.equals(BOOLEAN)) {
                if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
                    throw new IllegalArgumentException("not a boolean");
                }
                return Boolean.parseBoolean(value);
            }
            if (type.equals(TINYINT) || type.equals(SMALLINT) || type.equals(INTEGER) || type.equals(BIGINT)) {
                long number = Long.parseLong(value);
                long bits = type.equals(TINYINT) ? 8 : type.equals(SMALLINT) ? 16 : type.equals(INTEGER) ? 32 : 64;
                if (bits < 64 && (number < -(1L << (bits - 1)) || number >= (1L << (bits - 1)))) {
                    throw new IllegalArgumentException("out of range");
                }
                return number;
            }
            if (type.equals(REAL)) {
                return (long) floatToRawIntBits(Float.parseFloat(value));
            }
            if (type.equals(DOUBLE)) {
                return Double.parseDouble(value);
            }
            if (type instanceof DecimalType decimal) {
                BigDecimal number = new BigDecimal(value).setScale(decimal.getScale(), UNNECESSARY);
                return decimal.isShort() ? number.unscaledValue().longValueExact() : Decimals.valueOf(number.unscaledValue());
            }
            if (type.equals(DATE)) {
                return LocalDate.parse(value).toEpochDay();
            }
            if (type.equals(VARBINARY)) {
                return wrappedBuffer(HexFormat.of().parseHex(value));
            }
            if (type.equals(TIMESTAMP_TZ_MICROS)) {
                Instant instant = parseInstant(value);
                long micros = Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000);
                if (instant.getNano() % 1000 != 0) {
                    throw new IllegalArgumentException("below the microsecond");
                }
                return fromEpochMillisAndFraction(Math.floorDiv(micros, 1000), Math.floorMod(micros, 1000) * 1_000_000, UTC_KEY);
            }
        }
        catch (RuntimeException e) {
            throw new TrinoException(LAKEPRUNE_BAD_DATA, "Partition value '%s' of column %s is not a valid %s".formatted(value, column, type), e);
        }
        throw new TrinoException(LAKEPRUNE_BAD_DATA, "Partition column %s has unsupported type %s".formatted(column, type));
    }

    private static Instant parseInstant(String value)
    {
        try {
            return OffsetDateTime.parse(value).toInstant();
        }
        catch (DateTimeParseException e) {
            return Instant.parse(value);
        }
    }
}
