package io.lakeprune.trino;

import io.airlift.slice.Slices;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.PointerType;
import io.trino.spi.type.LongTimestamp;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimeZoneKey;
import lakeprune.v1.PruningServiceOuterClass.GetTableRequest;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.DateTimeEncoding.packDateTimeWithZone;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.TimestampType.TIMESTAMP_MICROS;
import static io.trino.spi.type.TimestampType.TIMESTAMP_NANOS;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MILLIS;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** FOR VERSION AS OF and FOR TIMESTAMP AS OF as GetTable asks for them, each timestamp type read as the instant it names. */
class TestTableVersion
{
    private static final Instant MOMENT = Instant.parse("2026-03-01T12:00:00.250Z");
    private static final long MICROS = MOMENT.getEpochSecond() * 1_000_000 + MOMENT.getNano() / 1000;

    @Test
    void versionsAreInstants()
    {
        assertThat(TableVersion.of(TestingSession.UTC, new ConnectorTableVersion(PointerType.TARGET_ID, VARCHAR, Slices.utf8Slice("20260301120000250"))))
                .isEqualTo(TableVersion.snapshot("20260301120000250"));
        assertThat(TableVersion.of(TestingSession.UTC, new ConnectorTableVersion(PointerType.TARGET_ID, BIGINT, 20260301120000250L)))
                .isEqualTo(TableVersion.snapshot("20260301120000250"));
    }

    @Test
    void timestampsAreReadAsTheInstantsTheyName()
    {
        assertThat(asOf(UTC_KEY, TIMESTAMP_TZ_MILLIS, packDateTimeWithZone(MOMENT.toEpochMilli(), "Europe/Oslo"))).isEqualTo("2026-03-01T12:00:00.250Z");
        assertThat(asOf(UTC_KEY, TIMESTAMP_TZ_MICROS, LongTimestampWithTimeZone.fromEpochMillisAndFraction(MOMENT.toEpochMilli(), 999_000_000, UTC_KEY)))
                .isEqualTo("2026-03-01T12:00:00.250999Z");
        // without a zone: the session's (Oslo is UTC+1 in March)
        assertThat(asOf(TimeZoneKey.getTimeZoneKey("Europe/Oslo"), TIMESTAMP_MICROS, MICROS)).isEqualTo("2026-03-01T11:00:00.250Z");
        assertThat(asOf(UTC_KEY, TIMESTAMP_NANOS, new LongTimestamp(MICROS, 0))).isEqualTo("2026-03-01T12:00:00.250Z");
    }

    @Test
    void aRequestCarriesOneOfThem()
    {
        GetTableRequest.Builder byTime = GetTableRequest.newBuilder();
        new TableVersion("", "2026-03-01T12:00:00.250Z").addTo(byTime);
        assertThat(byTime.getAsOfTime()).isEqualTo("2026-03-01T12:00:00.250Z");
        assertThat(byTime.getSnapshot()).isEmpty();
        assertThat(TableVersion.snapshot("1").key()).isNotEqualTo(new TableVersion("", "1").key());
    }

    @Test
    void otherTypesAreRefused()
    {
        assertThatThrownBy(() -> TableVersion.of(TestingSession.UTC, new ConnectorTableVersion(PointerType.TEMPORAL, DATE, 20_000L)))
                .isInstanceOf(TrinoException.class)
                .hasMessageContaining("takes a timestamp or a timestamp with time zone");
    }

    private static String asOf(TimeZoneKey zone, io.trino.spi.type.Type type, Object value)
    {
        return TableVersion.of(new TestingSession(zone), new ConnectorTableVersion(PointerType.TEMPORAL, type, value)).asOfTime();
    }
}
