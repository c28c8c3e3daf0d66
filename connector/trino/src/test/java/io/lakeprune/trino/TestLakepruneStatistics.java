package io.lakeprune.trino;

import io.trino.spi.statistics.DoubleRange;
import io.trino.spi.statistics.StatsUtil;
import io.trino.spi.type.LongTimestampWithTimeZone;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
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
}
