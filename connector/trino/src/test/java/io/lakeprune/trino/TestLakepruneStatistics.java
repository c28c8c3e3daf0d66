package io.lakeprune.trino;

import io.trino.spi.statistics.ColumnStatistics;
import io.trino.spi.statistics.DoubleRange;
import io.trino.spi.statistics.Estimate;
import io.trino.spi.statistics.StatsUtil;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import lakeprune.v1.Predicate.DecimalValue;
import lakeprune.v1.PruningServiceOuterClass;
import lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsResponse;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static org.assertj.core.api.Assertions.assertThat;

class TestLakepruneStatistics
{
    @Test
    void testTimestampRangeIsTrinosMillisOutward()
    {
        assertThat(LakepruneStatistics.millisRange(0, 0)).isEqualTo(new DoubleRange(0, 0));
        assertThat(LakepruneStatistics.millisRange(1, 999)).isEqualTo(new DoubleRange(0, 1));
        assertThat(LakepruneStatistics.millisRange(-1, -1)).isEqualTo(new DoubleRange(-1, 0));
        assertThat(LakepruneStatistics.millisRange(-1001, 1001)).isEqualTo(new DoubleRange(-2, 2));
        // a micro just below a millisecond, near 2^53
        long below = 8_000_000_000_000_000L - 1;
        assertThat(LakepruneStatistics.millisRange(below, below)).isEqualTo(new DoubleRange(7_999_999_999_999L, 8_000_000_000_000L));

        // the range holds Trino's own representation of the values at its ends
        for (long micros : List.of(0L, 1L, -1L, 999L, -999L, 1_000L, -1_001L, 1_709_164_800_123_456L, IndexFunctions.MIN_MICROS, IndexFunctions.MAX_MICROS)) {
            DoubleRange range = LakepruneStatistics.millisRange(micros, micros);
            LongTimestampWithTimeZone value = LongTimestampWithTimeZone.fromEpochMillisAndFraction(Math.floorDiv(micros, 1000), Math.floorMod(micros, 1000) * 1_000_000, UTC_KEY);
            double trino = StatsUtil.toStatsRepresentation(TIMESTAMP_TZ_MICROS, value).orElseThrow();
            assertThat(trino).as("%s micros", micros).isBetween(range.getMin(), range.getMax());
            // exact micros (below 2^53): the range is the value's millisecond; beyond, it allows
            // for the double the sidecar rounded the micros to
            assertThat(range.getMax() - range.getMin()).isLessThanOrEqualTo(Math.abs(micros) < (1L << 53) ? 1 : 2);
        }
    }

    @Test
    void testDistinctValuesDataSizeAndExactDecimalsFromTheResponse()
    {
        LakepruneColumnHandle custkey = regular("o_custkey", BIGINT);
        LakepruneColumnHandle comment = regular("o_comment", VARCHAR);
        LakepruneColumnHandle price = regular("o_totalprice", DecimalType.createDecimalType(12, 2));
        LakepruneColumnHandle unknown = regular("o_orderdate", BIGINT);
        GetTableStatisticsResponse response = GetTableStatisticsResponse.newBuilder()
                .setRowCount(1000)
                .addColumns(PruningServiceOuterClass.ColumnStatistics.newBuilder().setColumn("o_custkey").setMin(1).setMax(99).setDistinctValuesCount(97.4))
                .addColumns(PruningServiceOuterClass.ColumnStatistics.newBuilder().setColumn("o_comment").setDistinctValuesCount(990).setDataSize(48_500))
                .addColumns(PruningServiceOuterClass.ColumnStatistics.newBuilder().setColumn("o_totalprice")
                        .setMin(857.7099999999999).setMax(555285.1600000001)
                        .setMinDecimal(DecimalValue.newBuilder().setUnscaled("85771").setScale(2))
                        .setMaxDecimal(DecimalValue.newBuilder().setUnscaled("55528516").setScale(2)))
                .addColumns(PruningServiceOuterClass.ColumnStatistics.newBuilder().setColumn("o_orderdate").setMin(5).setMax(9))
                .build();
        var statistics = LakepruneStatistics.toTableStatistics(response, List.of(custkey, comment, price, unknown)).getColumnStatistics();

        assertThat(statistics.get(custkey).getDistinctValuesCount()).isEqualTo(Estimate.of(97.4));
        assertThat(statistics.get(custkey).getDataSize()).isEqualTo(Estimate.unknown());  // fixed width
        assertThat(statistics.get(comment).getDataSize()).isEqualTo(Estimate.of(48_500));
        assertThat(statistics.get(comment).getRange()).isEmpty();
        assertThat(statistics.get(price).getRange()).isEqualTo(Optional.of(new DoubleRange(857.71, 555285.16)));
        // without sketches or sizes (tables indexed before them): unknown, as before
        ColumnStatistics old = statistics.get(unknown);
        assertThat(old.getDistinctValuesCount()).isEqualTo(Estimate.unknown());
        assertThat(old.getDataSize()).isEqualTo(Estimate.unknown());
        assertThat(old.getRange()).isEqualTo(Optional.of(new DoubleRange(5, 9)));
    }

    @Test
    void testDecimalValueIsTheNearestDouble()
    {
        assertThat(LakepruneStatistics.decimalValue(DecimalValue.newBuilder().setUnscaled("85771").setScale(2).build())).isEqualTo(857.71);
        assertThat(LakepruneStatistics.decimalValue(DecimalValue.newBuilder().setUnscaled("-5").setScale(0).build())).isEqualTo(-5.0);
        // beyond a long's digits
        String digits = "12345678901234567890123456789012345678";
        assertThat(LakepruneStatistics.decimalValue(DecimalValue.newBuilder().setUnscaled(digits).setScale(10).build()))
                .isEqualTo(new java.math.BigDecimal(digits).movePointLeft(10).doubleValue());
    }

    private static LakepruneColumnHandle regular(String name, io.trino.spi.type.Type type)
    {
        return new LakepruneColumnHandle(name, type, LakepruneColumnHandle.Kind.REGULAR, Optional.empty(), Optional.empty());
    }
}
