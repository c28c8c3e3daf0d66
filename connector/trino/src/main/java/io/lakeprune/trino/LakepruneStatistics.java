package io.lakeprune.trino;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import com.google.inject.Inject;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.statistics.ColumnStatistics;
import io.trino.spi.statistics.DoubleRange;
import io.trino.spi.statistics.Estimate;
import io.trino.spi.statistics.TableStatistics;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Type;
import lakeprune.v1.Predicate.DecimalValue;
import lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsRequest;
import lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsResponse;
import lakeprune.v1.PruningServiceOuterClass.TableName;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DoubleType.DOUBLE;
import static io.trino.spi.type.IntegerType.INTEGER;
import static io.trino.spi.type.RealType.REAL;
import static io.trino.spi.type.SmallintType.SMALLINT;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TinyintType.TINYINT;
import static java.util.Objects.requireNonNull;

/**
 * Table statistics for Trino's cost-based optimizer from the sidecar's GetTableStatistics, for the
 * files the table handle's predicate may match. A snapshot never changes, so the statistics of a
 * (table, snapshot, predicate) are kept (up to CACHED_STATISTICS of them, the least recently used
 * dropped first): the optimizer asks for every table of every query, and a repeated query, or one
 * over the same tables, then plans without a call to the sidecar per table. A handle without a
 * snapshot (a table that has none yet) is always asked for.
 */
public class LakepruneStatistics
{
    static final int CACHED_STATISTICS = 1_000;

    private final SidecarClient client;
    private final Cache<StatisticsKey, GetTableStatisticsResponse> cache = CacheBuilder.newBuilder()
            .maximumSize(CACHED_STATISTICS)
            .build();

    private record StatisticsKey(String schema, String table, String snapshot, TupleDomain<LakepruneColumnHandle> constraint) {}

    @Inject
    public LakepruneStatistics(SidecarClient client)
    {
        this.client = requireNonNull(client, "client is null");
    }

    public TableStatistics statistics(LakepruneTableHandle handle, List<LakepruneColumnHandle> columns)
    {
        if (handle.snapshot().isEmpty()) {
            return fetch(handle).map(response -> toTableStatistics(response, columns)).orElseGet(TableStatistics::empty);
        }
        StatisticsKey key = new StatisticsKey(handle.schemaName(), handle.tableName(), handle.snapshot().get(), handle.constraint());
        GetTableStatisticsResponse cached = cache.getIfPresent(key);
        if (cached == null) {
            Optional<GetTableStatisticsResponse> fetched = fetch(handle);
            if (fetched.isEmpty()) {
                return TableStatistics.empty();
            }
            cached = fetched.get();
            cache.put(key, cached);
        }
        return toTableStatistics(cached, columns);
    }

    /** The sidecar's statistics for the handle; empty when the table is gone. */
    private Optional<GetTableStatisticsResponse> fetch(LakepruneTableHandle handle)
    {
        GetTableStatisticsRequest.Builder request = GetTableStatisticsRequest.newBuilder()
                .setTable(TableName.newBuilder().setSchema(handle.schemaName()).setTable(handle.tableName()))
                .setSnapshot(handle.snapshot().orElse(""));
        if (!handle.constraint().isAll()) {
            request.setPredicate(DomainEncoder.encode(handle.constraint()));
        }
        try {
            return Optional.of(client.call("GetTableStatistics", stub -> stub.getTableStatistics(request.build())));
        }
        catch (SidecarClient.NotFoundException e) {
            return Optional.empty();
        }
    }

    static TableStatistics toTableStatistics(GetTableStatisticsResponse response, List<LakepruneColumnHandle> columns)
    {
        long rowCount = response.getRowCount();
        TableStatistics.Builder builder = TableStatistics.builder().setRowCount(Estimate.of(rowCount));
        Map<String, LakepruneColumnHandle> byName = columns.stream().collect(toImmutableMap(LakepruneColumnHandle::name, Function.identity()));
        for (var column : response.getColumnsList()) {
            LakepruneColumnHandle handle = byName.get(column.getColumn());
            if (handle == null || handle.isVirtual()) {
                continue;
            }
            ColumnStatistics.Builder statistics = ColumnStatistics.builder();
            if (rowCount > 0) {
                statistics.setNullsFraction(Estimate.of(Math.min(1.0, (double) column.getNullCount() / rowCount)));
            }
            else {
                statistics.setNullsFraction(Estimate.zero());
            }
            if (column.hasDistinctValuesCount()) {
                statistics.setDistinctValuesCount(Estimate.of(column.getDistinctValuesCount()));
            }
            if (column.hasDataSize()) {
                statistics.setDataSize(Estimate.of(column.getDataSize()));
            }
            if (handle.type() instanceof DecimalType && column.hasMinDecimal() && column.hasMaxDecimal()) {
                statistics.setRange(new DoubleRange(decimalValue(column.getMinDecimal()), decimalValue(column.getMaxDecimal())));
            }
            else if (column.hasMin() && column.hasMax()) {
                if (hasStatsRange(handle.type())) {
                    statistics.setRange(new DoubleRange(column.getMin(), column.getMax()));
                }
                else if (handle.type().equals(TIMESTAMP_TZ_MICROS)) {
                    statistics.setRange(millisRange(column.getMin(), column.getMax()));
                }
            }
            builder.setColumnStatistics(handle, statistics.build());
        }
        return builder.build();
    }

    /**
     * An exact decimal as Trino's optimizer represents decimals (io.trino.spi.statistics.StatsUtil:
     * the nearest double), as Hive's statistics give them: 857.71, not the outward-rounded double
     * 857.7099999999999 the sidecar's plain min would be.
     */
    static double decimalValue(DecimalValue value)
    {
        return new BigDecimal(new BigInteger(value.getUnscaled()), value.getScale()).doubleValue();
    }

    /**
     * A timestamp column's range as Trino's optimizer represents {@code timestamp with time zone}
     * values (io.trino.spi.statistics.StatsUtil.toStatsRepresentation: epoch millis), from the
     * sidecar's UTC micros, outward: the min floored and the max ceiled to the millisecond, so the
     * range holds every value's representation.
     */
    static DoubleRange millisRange(double minMicros, double maxMicros)
    {
        // in longs: a double's division by 1000 could round a micro just below a millisecond up
        long min = Math.floorDiv((long) Math.floor(minMicros - inexact(minMicros)), 1000L);
        long max = Math.ceilDiv((long) Math.ceil(maxMicros + inexact(maxMicros)), 1000L);
        return new DoubleRange(min, max);
    }

    /**
     * How far a double the sidecar rounded micros to may be from them: nothing below 2^53, where
     * doubles hold every integer; beyond (after the year 2255) up to an ulp.
     */
    private static double inexact(double micros)
    {
        double ulp = Math.ulp(micros);
        return ulp > 1 ? ulp : 0;
    }

    /**
     * Types whose range Trino's optimizer reads as plain numbers, as the sidecar sends them (numbers,
     * decimals by value, dates as days). Timestamps with time zone have their own (millisRange).
     */
    private static boolean hasStatsRange(Type type)
    {
        return type.equals(TINYINT) || type.equals(SMALLINT) || type.equals(INTEGER) || type.equals(BIGINT)
                || type.equals(REAL) || type.equals(DOUBLE) || type.equals(DATE) || type instanceof DecimalType;
    }
}
