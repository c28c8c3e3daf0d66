package io.lakeprune.trino;

import io.airlift.slice.Slice;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.PointerType;
import io.trino.spi.type.LongTimestamp;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimestampType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.VarcharType;
import lakeprune.v1.PruningServiceOuterClass.GetTableRequest;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
import static java.lang.Math.floorDiv;
import static java.lang.Math.floorMod;
import static java.util.Objects.requireNonNull;

/**
 * The snapshot a query names: {@code FOR VERSION AS OF 'instant'} (an instant, sent as GetTable's
 * {@code snapshot}) or {@code FOR TIMESTAMP AS OF ...} (a point in time, sent as {@code as_of_time},
 * ISO 8601 in UTC: the sidecar finds the latest snapshot committed at or before it). A timestamp
 * without a time zone is read in the session's, as Trino's Iceberg connector reads it.
 */
record TableVersion(String snapshot, String asOfTime)
{
    TableVersion
    {
        requireNonNull(snapshot, "snapshot is null");
        requireNonNull(asOfTime, "asOfTime is null");
    }

    static TableVersion snapshot(String instant)
    {
        return new TableVersion(instant, "");
    }

    static TableVersion of(ConnectorSession session, ConnectorTableVersion version)
    {
        if (version.getPointerType() == PointerType.TEMPORAL) {
            return new TableVersion("", pointInTime(session, version).toString());
        }
        if (version.getVersionType() instanceof VarcharType && version.getVersion() instanceof Slice slice) {
            return snapshot(slice.toStringUtf8());
        }
        if (version.getVersion() instanceof Long number) {
            return snapshot(Long.toString(number));
        }
        throw new TrinoException(NOT_SUPPORTED, "lakeprune time travel takes an instant as a string, FOR VERSION AS OF 'YYYYMMDDHHMMSSmmm', or a point in time, FOR TIMESTAMP AS OF ...; got " + version);
    }

    private static Instant pointInTime(ConnectorSession session, ConnectorTableVersion version)
    {
        Object value = version.getVersion();
        if (version.getVersionType() instanceof TimestampWithTimeZoneType) {
            if (value instanceof Long packed) {
                return Instant.ofEpochMilli(unpackMillisUtc(packed));
            }
            if (value instanceof LongTimestampWithTimeZone timestamp) {
                return Instant.ofEpochMilli(timestamp.getEpochMillis()).plusNanos(timestamp.getPicosOfMilli() / 1000);
            }
        }
        if (version.getVersionType() instanceof TimestampType) {
            long micros = value instanceof LongTimestamp timestamp ? timestamp.getEpochMicros() : (Long) value;
            LocalDateTime local = LocalDateTime.ofEpochSecond(floorDiv(micros, 1_000_000), (int) floorMod(micros, 1_000_000) * 1000, ZoneOffset.UTC);
            return local.atZone(session.getTimeZoneKey().getZoneId()).toInstant();
        }
        throw new TrinoException(NOT_SUPPORTED, "lakeprune FOR TIMESTAMP AS OF takes a timestamp or a timestamp with time zone, got " + version.getVersionType());
    }

    /** Sets what the request asks for. */
    void addTo(GetTableRequest.Builder request)
    {
        request.setSnapshot(snapshot).setAsOfTime(asOfTime);
    }

    /** A key that tells any two versions apart. */
    String key()
    {
        return snapshot + "@" + asOfTime;
    }

    @Override
    public String toString()
    {
        return snapshot.isEmpty() ? "as of " + asOfTime : snapshot;
    }
}
