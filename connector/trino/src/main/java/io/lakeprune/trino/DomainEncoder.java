package io.lakeprune.trino;

import com.google.protobuf.ByteString;
import com.google.protobuf.TextFormat;
import io.trino.spi.TrinoException;
import io.airlift.slice.Slice;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.EquatableValueSet;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.SortedRangeSet;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;
import lakeprune.v1.Predicate;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.airlift.slice.Slices.wrappedBuffer;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_BAD_DATA;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
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
import static java.lang.Float.intBitsToFloat;
import static java.lang.Math.toIntExact;
import static java.math.RoundingMode.UNNECESSARY;
import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * A Trino TupleDomain as the sidecar's predicate, exactly. A column whose domain cannot be written
 * exactly (a NaN, an exclusion set, a string that is not valid UTF-8, a timestamp below the
 * microsecond) is left out of the request, which only widens it: the sidecar then keeps every file
 * that column could have excluded, and Trino still filters the rows. A predicate is never narrowed.
 * The values the sidecar sends (a split's partition values) come back through {@link #decodeValue},
 * the inverse of {@link #encodeValue}: one codec for the wire's {@code Value} in both directions.
 */
public final class DomainEncoder
{
    private static final int PICOSECONDS_PER_MICROSECOND = 1_000_000;

    private DomainEncoder() {}

    public static Predicate.TupleDomain encode(TupleDomain<LakepruneColumnHandle> tupleDomain)
    {
        Predicate.TupleDomain.Builder builder = Predicate.TupleDomain.newBuilder();
        if (tupleDomain.isNone()) {
            return builder.setNone(true).build();
        }
        Map<LakepruneColumnHandle, Domain> domains = tupleDomain.getDomains().orElseThrow();
        domains.entrySet().stream()
                .sorted(Map.Entry.comparingByKey((left, right) -> left.name().compareTo(right.name())))
                .forEach(entry -> encode(entry.getKey().type(), entry.getValue()).ifPresent(domain -> builder.addColumns(
                        Predicate.ColumnDomain.newBuilder().setColumn(entry.getKey().name()).setDomain(domain))));
        return builder.build();
    }

    /** The domain, or empty when it cannot be written exactly (or is unconstrained). */
    public static Optional<Predicate.Domain> encode(Type type, Domain domain)
    {
        if (domain.isAll()) {
            return Optional.empty();
        }
        return encodeValues(type, domain.getValues())
                .map(values -> Predicate.Domain.newBuilder().setValues(values).setNullAllowed(domain.isNullAllowed()).build());
    }

    private static Optional<Predicate.ValueSet> encodeValues(Type type, ValueSet values)
    {
        Predicate.ValueSet.Builder builder = Predicate.ValueSet.newBuilder();
        if (values.isAll() || values.isNone()) {
            return Optional.of(builder.setAllOrNone(Predicate.AllOrNone.newBuilder().setAll(values.isAll())).build());
        }
        if (values instanceof SortedRangeSet ranges) {
            List<Range> ordered = ranges.getOrderedRanges();
            if (ordered.stream().allMatch(Range::isSingleValue)) {
                Predicate.DiscreteValues.Builder discrete = Predicate.DiscreteValues.newBuilder();
                if (isInteger(type)) {
                    // packed: a join's dynamic filter of 100,000 keys is read in bulk by the sidecar
                    for (Range range : ordered) {
                        discrete.addIntegers((Long) range.getSingleValue());
                    }
                    return Optional.of(builder.setDiscrete(discrete).build());
                }
                if (type instanceof VarcharType) {
                    for (Range range : ordered) {
                        Optional<String> text = utf8((Slice) range.getSingleValue());
                        if (text.isEmpty()) {
                            return Optional.empty();
                        }
                        discrete.addStrings(text.get());
                    }
                    return Optional.of(builder.setDiscrete(discrete).build());
                }
                for (Range range : ordered) {
                    Optional<Predicate.Value> value = encodeValue(type, range.getSingleValue());
                    if (value.isEmpty()) {
                        return Optional.empty();
                    }
                    discrete.addValues(value.get());
                }
                return Optional.of(builder.setDiscrete(discrete).build());
            }
            Predicate.RangeSet.Builder rangeSet = Predicate.RangeSet.newBuilder();
            for (Range range : ordered) {
                Predicate.Range.Builder encoded = Predicate.Range.newBuilder();
                if (!range.isLowUnbounded()) {
                    Optional<Predicate.Value> low = encodeValue(type, range.getLowBoundedValue());
                    if (low.isEmpty()) {
                        return Optional.empty();
                    }
                    encoded.setLow(low.get()).setLowInclusive(range.isLowInclusive());
                }
                if (!range.isHighUnbounded()) {
                    Optional<Predicate.Value> high = encodeValue(type, range.getHighBoundedValue());
                    if (high.isEmpty()) {
                        return Optional.empty();
                    }
                    encoded.setHigh(high.get()).setHighInclusive(range.isHighInclusive());
                }
                rangeSet.addRanges(encoded);
            }
            return Optional.of(builder.setRanges(rangeSet).build());
        }
        if (values instanceof EquatableValueSet equatable && equatable.inclusive()) {
            Predicate.DiscreteValues.Builder discrete = Predicate.DiscreteValues.newBuilder();
            for (Object value : equatable.getValues()) {
                Optional<Predicate.Value> encoded = encodeValue(type, value);
                if (encoded.isEmpty()) {
                    return Optional.empty();
                }
                discrete.addValues(encoded.get());
            }
            return Optional.of(builder.setDiscrete(discrete).build());
        }
        // an exclusion set (NOT IN) has no exact form in the protocol
        return Optional.empty();
    }

    private static boolean isInteger(Type type)
    {
        return type.equals(TINYINT) || type.equals(SMALLINT) || type.equals(INTEGER) || type.equals(BIGINT);
    }

    /** One value of the column's type, or empty when it has no exact form. */
    public static Optional<Predicate.Value> encodeValue(Type type, Object value)
    {
        Predicate.Value.Builder builder = Predicate.Value.newBuilder();
        if (type.equals(BOOLEAN)) {
            return Optional.of(builder.setBooleanValue((Boolean) value).build());
        }
        if (isInteger(type)) {
            return Optional.of(builder.setIntegerValue((Long) value).build());
        }
        if (type.equals(REAL)) {
            // widened to double exactly: every float is a double
            return finite(intBitsToFloat(toIntExact((Long) value))).map(number -> builder.setDoubleValue(number).build());
        }
        if (type.equals(DOUBLE)) {
            return finite((Double) value).map(number -> builder.setDoubleValue(number).build());
        }
        if (type instanceof DecimalType decimal) {
            String unscaled = decimal.isShort() ? Long.toString((Long) value) : ((Int128) value).toBigInteger().toString();
            return Optional.of(builder.setDecimalValue(Predicate.DecimalValue.newBuilder().setUnscaled(unscaled).setScale(decimal.getScale())).build());
        }
        if (type.equals(VARBINARY)) {
            return Optional.of(builder.setBinaryValue(ByteString.copyFrom(((Slice) value).getBytes())).build());
        }
        if (type instanceof VarcharType) {
            return utf8((Slice) value).map(text -> builder.setStringValue(text).build());
        }
        if (type.equals(DATE)) {
            return Optional.of(builder.setDateDays(toIntExact((Long) value)).build());
        }
        if (type instanceof TimestampWithTimeZoneType zoned && zoned.isShort()) {
            // timestamp(0..3) with time zone (from_unixtime's): milliseconds, exact in microseconds
            try {
                return Optional.of(builder.setTimestampMicros(Math.multiplyExact(unpackMillisUtc((Long) value), 1000L)).build());
            }
            catch (ArithmeticException e) {
                return Optional.empty();
            }
        }
        if (type.equals(TIMESTAMP_TZ_MICROS)) {
            LongTimestampWithTimeZone timestamp = (LongTimestampWithTimeZone) value;
            if (timestamp.getPicosOfMilli() % PICOSECONDS_PER_MICROSECOND != 0) {
                return Optional.empty();
            }
            try {
                long micros = Math.addExact(Math.multiplyExact(timestamp.getEpochMillis(), 1000L), timestamp.getPicosOfMilli() / PICOSECONDS_PER_MICROSECOND);
                return Optional.of(builder.setTimestampMicros(micros).build());
            }
            catch (ArithmeticException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /**
     * The Trino value of a {@code Value} the sidecar sent for a column of {@code type}; null when it
     * sets no field (NULL). A field the column's type does not take, or a value it cannot hold
     * exactly, is bad data: the sidecar typed it from the table's schema.
     */
    public static Object decodeValue(String column, Type type, Predicate.Value value)
    {
        Predicate.Value.KindCase kind = value.getKindCase();
        if (kind == Predicate.Value.KindCase.KIND_NOT_SET) {
            return null;
        }
        try {
            if (type.equals(BOOLEAN) && kind == Predicate.Value.KindCase.BOOLEAN_VALUE) {
                return value.getBooleanValue();
            }
            if (kind == Predicate.Value.KindCase.INTEGER_VALUE && (type.equals(TINYINT) || type.equals(SMALLINT) || type.equals(INTEGER) || type.equals(BIGINT))) {
                long number = value.getIntegerValue();
                int bits = type.equals(TINYINT) ? 8 : type.equals(SMALLINT) ? 16 : type.equals(INTEGER) ? 32 : 64;
                if (bits < 64 && (number < -(1L << (bits - 1)) || number >= (1L << (bits - 1)))) {
                    throw new IllegalArgumentException("out of range");
                }
                return number;
            }
            if ((type.equals(REAL) || type.equals(DOUBLE)) && (kind == Predicate.Value.KindCase.DOUBLE_VALUE || kind == Predicate.Value.KindCase.FLOAT_VALUE)) {
                double number = kind == Predicate.Value.KindCase.DOUBLE_VALUE ? value.getDoubleValue() : value.getFloatValue();
                if (type.equals(DOUBLE)) {
                    return number;
                }
                float single = (float) number;
                if (single != number && !Double.isNaN(number)) {
                    throw new IllegalArgumentException("not a float");
                }
                return (long) floatToRawIntBits(single);
            }
            if (type instanceof DecimalType decimal && kind == Predicate.Value.KindCase.DECIMAL_VALUE) {
                BigDecimal number = new BigDecimal(new BigInteger(value.getDecimalValue().getUnscaled()), value.getDecimalValue().getScale())
                        .setScale(decimal.getScale(), UNNECESSARY);
                if (number.precision() - number.scale() > decimal.getPrecision() - decimal.getScale()) {
                    throw new IllegalArgumentException("too many digits");
                }
                return decimal.isShort() ? number.unscaledValue().longValueExact() : Int128.valueOf(number.unscaledValue());
            }
            if (type instanceof VarcharType && kind == Predicate.Value.KindCase.STRING_VALUE) {
                return utf8Slice(value.getStringValue());
            }
            if (type.equals(VARBINARY) && kind == Predicate.Value.KindCase.BINARY_VALUE) {
                return wrappedBuffer(value.getBinaryValue().toByteArray());
            }
            if (type.equals(DATE) && kind == Predicate.Value.KindCase.DATE_DAYS) {
                return (long) value.getDateDays();
            }
            if (type.equals(TIMESTAMP_TZ_MICROS) && kind == Predicate.Value.KindCase.TIMESTAMP_MICROS) {
                long micros = value.getTimestampMicros();
                return fromEpochMillisAndFraction(Math.floorDiv(micros, 1000), Math.floorMod(micros, 1000) * PICOSECONDS_PER_MICROSECOND, UTC_KEY);
            }
        }
        catch (RuntimeException e) {
            throw new TrinoException(LAKEPRUNE_BAD_DATA, "Value %s of column %s is not a valid %s".formatted(shortDebugString(value), column, type), e);
        }
        throw new TrinoException(LAKEPRUNE_BAD_DATA, "Column %s of type %s cannot take the value %s".formatted(column, type, shortDebugString(value)));
    }

    private static String shortDebugString(Predicate.Value value)
    {
        return TextFormat.shortDebugString(value);
    }

    private static Optional<Double> finite(double value)
    {
        // NaN is no value the protocol accepts; infinities are
        return Double.isNaN(value) ? Optional.empty() : Optional.of(value);
    }

    private static Optional<String> utf8(Slice slice)
    {
        try {
            return Optional.of(UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(slice.toByteBuffer())
                    .toString());
        }
        catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }
}
