package io.lakeprune.trino;

import io.trino.spi.SplitWeight;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

class TestLakepruneSplit
{
    @Test
    void testWeightIsTheSizeRelativeToAStandardSplitWithAFloor()
    {
        assertThat(split(64L << 20).getSplitWeight()).isEqualTo(SplitWeight.standard());
        assertThat(split(1L << 30).getSplitWeight()).isEqualTo(SplitWeight.standard());
        assertThat(split(16L << 20).getSplitWeight()).isEqualTo(SplitWeight.fromProportion(0.25));
        // a 90 kB file weighs the minimum: twenty of them are queued where one standard split is
        assertThat(split(90_000).getSplitWeight()).isEqualTo(SplitWeight.fromProportion(LakepruneSplit.MINIMUM_WEIGHT));
        assertThat(split(0).getSplitWeight()).isEqualTo(SplitWeight.fromProportion(LakepruneSplit.MINIMUM_WEIGHT));
    }

    private static LakepruneSplit split(long length)
    {
        return new LakepruneSplit("/wh/t/a.parquet", 0, length, 1, OptionalLong.empty(), List.of());
    }
}
