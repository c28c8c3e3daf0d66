package io.lakeprune.trino;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.collect.ImmutableMap;
import io.airlift.json.ObjectMapperProvider;
import io.trino.spi.TrinoException;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;
import lakeprune.v1.Predicate;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static io.airlift.slice.Slices.utf8Slice;
import static io.airlift.slice.Slices.wrappedBuffer;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DecimalType.createDecimalType;
import static io.trino.spi.type.DoubleType.DOUBLE;
import static io.trino.spi.type.IntegerType.INTEGER;
import static io.trino.spi.type.RealType.REAL;
import static io.trino.spi.type.SmallintType.SMALLINT;
import static io.trino.spi.type.TinyintType.TINYINT;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.VarbinaryType.VARBINARY;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.lang.Float.floatToRawIntBits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TestDomainEncoder
{
    private static final LakepruneColumnHandle ID = LakepruneColumnHandle.regular("id", BIGINT);
    private static final LakepruneColumnHandle PRICE = LakepruneColumnHandle.regular("price", createDecimalType(10, 2));

    @Test
    void testNoneAndAll()
    {
        assertThat(DomainEncoder.encode(TupleDomain.none())).isEqualTo(Predicate.TupleDomain.newBuilder().setNone(true).build());
        assertThat(DomainEncoder.encode(TupleDomain.all())).isEqualTo(Predicate.TupleDomain.getDefaultInstance());
        assertThat(DomainEncoder.encode(BIGINT, Domain.all(BIGINT))).isEmpty();
    }

    @Test
    void testInListIsDiscrete()
    {
        // integer and string lists are packed (a dynamic filter's 100,000 keys), any other value by value
        Domain domain = Domain.multipleValues(BIGINT, List.of(3L, 1L, 2L));
        Predicate.Domain encoded = DomainEncoder.encode(BIGINT, domain).orElseThrow();
        assertThat(encoded.getNullAllowed()).isFalse();
        assertThat(encoded.getValues().getDiscrete().getIntegersList()).containsExactly(1L, 2L, 3L);
        assertThat(encoded.getValues().getDiscrete().getValuesList()).isEmpty();
        Predicate.Domain names = DomainEncoder.encode(VARCHAR, Domain.multipleValues(VARCHAR, List.of(utf8Slice("b"), utf8Slice("Zürich")))).orElseThrow();
        assertThat(names.getValues().getDiscrete().getStringsList()).containsExactly("Zürich", "b");
        Predicate.Domain days = DomainEncoder.encode(DATE, Domain.multipleValues(DATE, List.of(2L, 1L))).orElseThrow();
        assertThat(days.getValues().getDiscrete().getValuesList()).extracting(Predicate.Value::getDateDays).containsExactly(1, 2);
    }

    @Test
    void testRangesKeepInclusiveness()
    {
        Domain domain = Domain.create(ValueSet.ofRanges(Range.range(INTEGER, 1L, false, 10L, true), Range.greaterThanOrEqual(INTEGER, 20L)), true);
        Predicate.Domain encoded = DomainEncoder.encode(INTEGER, domain).orElseThrow();
        assertThat(encoded.getNullAllowed()).isTrue();
        List<Predicate.Range> ranges = encoded.getValues().getRanges().getRangesList();
        assertThat(ranges).hasSize(2);
        assertThat(ranges.get(0).getLow().getIntegerValue()).isEqualTo(1);
        assertThat(ranges.get(0).getLowInclusive()).isFalse();
        assertThat(ranges.get(0).getHigh().getIntegerValue()).isEqualTo(10);
        assertThat(ranges.get(0).getHighInclusive()).isTrue();
        assertThat(ranges.get(1).getLow().getIntegerValue()).isEqualTo(20);
        assertThat(ranges.get(1).getLowInclusive()).isTrue();
        assertThat(ranges.get(1).hasHigh()).isFalse();
    }

    @Test
    void testOnlyNulls()
    {
        Predicate.Domain encoded = DomainEncoder.encode(BIGINT, Domain.onlyNull(BIGINT)).orElseThrow();
        assertThat(encoded.getNullAllowed()).isTrue();
        assertThat(encoded.getValues().getAllOrNone().getAll()).isFalse();
        Predicate.Domain notNull = DomainEncoder.encode(BIGINT, Domain.notNull(BIGINT)).orElseThrow();
        assertThat(notNull.getNullAllowed()).isFalse();
        assertThat(notNull.getValues().getAllOrNone().getAll()).isTrue();
    }

    @Test
    void testShortDecimalIsExact()
    {
        // 12.34 as decimal(10,2): unscaled 1234, never a double
        Predicate.Value value = DomainEncoder.encodeValue(createDecimalType(10, 2), 1234L).orElseThrow();
        assertThat(value.getDecimalValue().getUnscaled()).isEqualTo("1234");
        assertThat(value.getDecimalValue().getScale()).isEqualTo(2);
        assertThat(DomainEncoder.encodeValue(createDecimalType(10, 2), -5L).orElseThrow().getDecimalValue().getUnscaled()).isEqualTo("-5");
    }

    @Test
    void testLongDecimalIsExact()
    {
        DecimalType type = createDecimalType(38, 10);
        Int128 unscaled = Int128.valueOf(new java.math.BigInteger("12345678901234567890123456789012345678"));
        Predicate.Value value = DomainEncoder.encodeValue(type, unscaled).orElseThrow();
        assertThat(value.getDecimalValue().getUnscaled()).isEqualTo("12345678901234567890123456789012345678");
        assertThat(value.getDecimalValue().getScale()).isEqualTo(10);
    }

    @Test
    void testTimestampMicros()
    {
        // 2024-01-02T03:04:05.123456Z
        long micros = 1_704_164_645_123_456L;
        LongTimestampWithTimeZone timestamp = LongTimestampWithTimeZone.fromEpochMillisAndFraction(micros / 1000, (int) (micros % 1000) * 1_000_000, UTC_KEY);
        assertThat(DomainEncoder.encodeValue(TIMESTAMP_TZ_MICROS, timestamp).orElseThrow().getTimestampMicros()).isEqualTo(micros);
        // before the epoch: floor semantics, still exact
        long negative = -1_500L;
        LongTimestampWithTimeZone before = LongTimestampWithTimeZone.fromEpochMillisAndFraction(Math.floorDiv(negative, 1000), (int) Math.floorMod(negative, 1000) * 1_000_000, UTC_KEY);
        assertThat(DomainEncoder.encodeValue(TIMESTAMP_TZ_MICROS, before).orElseThrow().getTimestampMicros()).isEqualTo(negative);
        // below the microsecond: not representable, never rounded
        LongTimestampWithTimeZone picos = LongTimestampWithTimeZone.fromEpochMillisAndFraction(0, 1, UTC_KEY);
        assertThat(DomainEncoder.encodeValue(TIMESTAMP_TZ_MICROS, picos)).isEmpty();
    }

    @Test
    void testFloatingPoint()
    {
        assertThat(DomainEncoder.encodeValue(DOUBLE, Double.POSITIVE_INFINITY).orElseThrow().getDoubleValue()).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(DomainEncoder.encodeValue(DOUBLE, Double.NEGATIVE_INFINITY).orElseThrow().getDoubleValue()).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(DomainEncoder.encodeValue(DOUBLE, Double.NaN)).isEmpty();
        assertThat(DomainEncoder.encodeValue(DOUBLE, 0.1).orElseThrow().getDoubleValue()).isEqualTo(0.1);
        // a real is sent as the double of the same value: exact
        Predicate.Value real = DomainEncoder.encodeValue(REAL, (long) floatToRawIntBits(0.1f)).orElseThrow();
        assertThat(real.getDoubleValue()).isEqualTo((double) 0.1f);
        assertThat(DomainEncoder.encodeValue(REAL, (long) floatToRawIntBits(Float.NaN))).isEmpty();
    }

    @Test
    void testOtherTypes()
    {
        assertThat(DomainEncoder.encodeValue(BOOLEAN, true).orElseThrow().getBooleanValue()).isTrue();
        assertThat(DomainEncoder.encodeValue(DATE, 19_000L).orElseThrow().getDateDays()).isEqualTo(19_000);
        assertThat(DomainEncoder.encodeValue(VARCHAR, utf8Slice("Zürich")).orElseThrow().getStringValue()).isEqualTo("Zürich");
        assertThat(DomainEncoder.encodeValue(VARBINARY, wrappedBuffer(new byte[] {0, (byte) 0xff})).orElseThrow().getBinaryValue().toByteArray())
                .containsExactly(0, 0xff);
        // not valid UTF-8: not representable as a string value
        assertThat(DomainEncoder.encodeValue(VARCHAR, wrappedBuffer(new byte[] {(byte) 0xc3}))).isEmpty();
    }

    @Test
    void testUnrepresentableColumnIsLeftOutNotNarrowed()
    {
        LakepruneColumnHandle name = LakepruneColumnHandle.regular("name", VARCHAR);
        LakepruneColumnHandle score = LakepruneColumnHandle.regular("score", DOUBLE);
        TupleDomain<LakepruneColumnHandle> predicate = TupleDomain.withColumnDomains(ImmutableMap.of(
                ID, Domain.singleValue(BIGINT, 7L),
                // one value in the IN list is not valid UTF-8: the whole column is left out
                name, Domain.multipleValues(VARCHAR, List.of(utf8Slice("a"), wrappedBuffer(new byte[] {(byte) 0xc3}))),
                score, Domain.create(ValueSet.ofRanges(Range.lessThan(DOUBLE, 1.0), Range.greaterThan(DOUBLE, 1.0)), false),
                PRICE, Domain.singleValue(createDecimalType(10, 2), 1999L)));
        Predicate.TupleDomain encoded = DomainEncoder.encode(predicate);
        assertThat(encoded.getNone()).isFalse();
        assertThat(encoded.getColumnsList()).extracting(Predicate.ColumnDomain::getColumn).containsExactly("id", "price", "score");
        assertThat(encoded.getColumnsList().get(1).getDomain().getValues().getDiscrete().getValues(0).getDecimalValue().getUnscaled()).isEqualTo("1999");
        assertThat(encoded.getColumnsList().get(2).getDomain().getValues().getRanges().getRangesCount()).isEqualTo(2);
    }

    @Test
    void testEncodedTypeMatchesEveryType()
    {
        for (Type type : List.of(BOOLEAN, BIGINT, INTEGER, DOUBLE, REAL, DATE, VARCHAR, VARBINARY, TIMESTAMP_TZ_MICROS, createDecimalType(5, 1), createDecimalType(30, 3))) {
            Domain domain = Domain.notNull(type);
            Optional<Predicate.Domain> encoded = DomainEncoder.encode(type, domain);
            assertThat(encoded).as(type.toString()).isPresent();
        }
    }

    @Test
    void testEveryTypeRoundTripsThroughTheWire()
    {
        Map<Type, List<Object>> values = new LinkedHashMap<>();
        values.put(BOOLEAN, List.of(true, false));
        values.put(TINYINT, List.of(-128L, 127L));
        values.put(SMALLINT, List.of(-32768L, 32767L));
        values.put(INTEGER, List.of((long) Integer.MIN_VALUE, (long) Integer.MAX_VALUE));
        values.put(BIGINT, List.of(Long.MIN_VALUE, 0L, Long.MAX_VALUE));
        values.put(REAL, List.of((long) floatToRawIntBits(0.1f), (long) floatToRawIntBits(-0.0f), (long) floatToRawIntBits(Float.POSITIVE_INFINITY), (long) floatToRawIntBits(Float.MAX_VALUE)));
        values.put(DOUBLE, List.of(0.1, -0.0, Double.NEGATIVE_INFINITY, Double.MIN_VALUE));
        values.put(createDecimalType(10, 2), List.of(1234L, -5L, 9_999_999_999L));
        values.put(createDecimalType(38, 10), List.of(Int128.valueOf(new BigInteger("-99999999999999999999999999999999999999")), Int128.valueOf(1)));
        values.put(VARCHAR, List.of(utf8Slice(""), utf8Slice("ÀB 東京")));
        values.put(VARBINARY, List.of(wrappedBuffer(new byte[] {0, (byte) 0xff})));
        values.put(DATE, List.of(-719_162L, -1L, 0L, 2_932_896L));
        values.put(TIMESTAMP_TZ_MICROS, List.of(
                LongTimestampWithTimeZone.fromEpochMillisAndFraction(-1, 999_000_000, UTC_KEY),
                LongTimestampWithTimeZone.fromEpochMillisAndFraction(1_700_000_000_123L, 456_000_000, UTC_KEY)));
        values.forEach((type, list) -> {
            for (Object value : list) {
                Predicate.Value encoded = DomainEncoder.encodeValue(type, value).orElseThrow();
                LakepruneSplit.PartitionKey key = LakepruneSplit.PartitionKey.of("c", encoded);
                // through the split's bytes, as a worker receives them
                Object decoded = DomainEncoder.decodeValue("c", type, new LakepruneSplit.PartitionKey(key.name(), key.value().clone()).typedValue());
                assertThat(decoded).as("%s %s", type, value).isEqualTo(value);
            }
        });
        // NULL: no field set, whatever the type
        for (Type type : values.keySet()) {
            assertThat(DomainEncoder.decodeValue("c", type, Predicate.Value.getDefaultInstance())).isNull();
        }
    }

    @Test
    void testSentValuesThatDoNotFitTheColumnAreBadData()
    {
        assertBadData(createDecimalType(10, 2), Predicate.Value.newBuilder().setDecimalValue(Predicate.DecimalValue.newBuilder().setUnscaled("12345").setScale(3)).build(), "not a valid decimal(10,2)");
        assertBadData(createDecimalType(4, 2), Predicate.Value.newBuilder().setDecimalValue(Predicate.DecimalValue.newBuilder().setUnscaled("12345").setScale(2)).build(), "not a valid decimal(4,2)");
        assertBadData(TINYINT, Predicate.Value.newBuilder().setIntegerValue(128).build(), "not a valid tinyint");
        assertBadData(REAL, Predicate.Value.newBuilder().setDoubleValue(0.1).build(), "not a valid real");
        assertBadData(BIGINT, Predicate.Value.newBuilder().setStringValue("1").build(), "cannot take the value string_value: \"1\"");
        assertThatThrownBy(() -> new LakepruneSplit.PartitionKey("c", new byte[] {(byte) 0xff}).typedValue())
                .isInstanceOf(TrinoException.class)
                .hasMessageContaining("Partition value of column c is not a lakeprune.v1.Value");
    }

    private static void assertBadData(Type type, Predicate.Value value, String message)
    {
        assertThatThrownBy(() -> DomainEncoder.decodeValue("c", type, value))
                .isInstanceOf(TrinoException.class)
                .hasMessageContaining(message)
                .extracting(e -> ((TrinoException) e).getErrorCode().getName())
                .isEqualTo("LAKEPRUNE_BAD_DATA");
    }

    @Test
    void testSplitsCarryTheirPartitionValuesThroughJson()
            throws Exception
    {
        ObjectMapper mapper = new ObjectMapperProvider().get();
        LakepruneSplit split = new LakepruneSplit("/wh/t/d=2026-01-02/a.parquet", 0, 10, 1, OptionalLong.of(10), List.of(
                LakepruneSplit.PartitionKey.of("d", Predicate.Value.newBuilder().setDateDays(20_455).build()),
                LakepruneSplit.PartitionKey.of("city", Predicate.Value.getDefaultInstance())));
        LakepruneSplit read = mapper.readValue(mapper.writeValueAsString(split), LakepruneSplit.class);
        assertThat(read).isEqualTo(split);
        assertThat(read.partitionKeys().get(0).typedValue().getDateDays()).isEqualTo(20_455);
        assertThat(read.partitionKeys().get(1).typedValue().hasDateDays()).isFalse();
    }

    @Test
    void testFilesTableShowsTypedPartitionValuesAsText()
    {
        assertThat(MetadataTables.render(Predicate.Value.getDefaultInstance())).isEqualTo("NULL");
        assertThat(MetadataTables.render(Predicate.Value.newBuilder().setDateDays(-1).build())).isEqualTo("1969-12-31");
        assertThat(MetadataTables.render(Predicate.Value.newBuilder().setTimestampMicros(1_001).build())).isEqualTo("1970-01-01T00:00:00.001001Z");
        assertThat(MetadataTables.render(Predicate.Value.newBuilder().setDecimalValue(Predicate.DecimalValue.newBuilder().setUnscaled("-5").setScale(2)).build())).isEqualTo("-0.05");
        assertThat(MetadataTables.render(Predicate.Value.newBuilder().setStringValue("new york").build())).isEqualTo("new york");
        assertThat(MetadataTables.render(Predicate.Value.newBuilder().setIntegerValue(-7).build())).isEqualTo("-7");
    }
}
