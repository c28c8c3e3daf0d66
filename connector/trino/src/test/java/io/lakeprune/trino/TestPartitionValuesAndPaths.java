package io.lakeprune.trino;

import io.trino.spi.TrinoException;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DecimalType.createDecimalType;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TinyintType.TINYINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TestPartitionValuesAndPaths
{
    @Test
    void testPartitionValues()
    {
        assertThat(PartitionValues.parse("city", VARCHAR, "sf")).isEqualTo(utf8Slice("sf"));
        assertThat(PartitionValues.parse("n", BIGINT, "-42")).isEqualTo(-42L);
        assertThat(PartitionValues.parse("b", BOOLEAN, "true")).isEqualTo(true);
        assertThat(PartitionValues.parse("d", DATE, "1970-01-02")).isEqualTo(1L);
        assertThat(PartitionValues.parse("p", createDecimalType(10, 2), "12.3")).isEqualTo(1230L);
        assertThat(PartitionValues.parse("p", createDecimalType(30, 2), "12.34")).isEqualTo(Int128.valueOf(1234));
        LongTimestampWithTimeZone ts = (LongTimestampWithTimeZone) PartitionValues.parse("ts", TIMESTAMP_TZ_MICROS, "1970-01-01T00:00:00.001002Z");
        assertThat(ts.getEpochMillis()).isEqualTo(1);
        assertThat(ts.getPicosOfMilli()).isEqualTo(2_000_000);
    }

    @Test
    void testPartitionValuesAreNeverRounded()
    {
        assertThatThrownBy(() -> PartitionValues.parse("p", createDecimalType(10, 2), "12.345")).isInstanceOf(TrinoException.class).hasMessageContaining("12.345");
        assertThatThrownBy(() -> PartitionValues.parse("t", TINYINT, "128")).isInstanceOf(TrinoException.class);
        assertThatThrownBy(() -> PartitionValues.parse("b", BOOLEAN, "yes")).isInstanceOf(TrinoException.class);
    }

    @Test
    void testDataFilePaths()
    {
        assertThat(DataFiles.localPath("/wh/t/a.parquet")).isEqualTo(Path.of("/wh/t/a.parquet"));
        assertThat(DataFiles.localPath("file:///wh/t/a%20b.parquet")).isEqualTo(Path.of("/wh/t/a b.parquet"));
        assertThatThrownBy(() -> DataFiles.localPath("relative/a.parquet")).isInstanceOf(TrinoException.class).hasMessageContaining("relative");
        assertThatThrownBy(() -> DataFiles.localPath("/wh/t/../../etc/passwd")).isInstanceOf(TrinoException.class).hasMessageContaining("normalized");
        assertThatThrownBy(() -> DataFiles.localPath("s3://bucket/a.parquet")).isInstanceOf(TrinoException.class).hasMessageContaining("s3://bucket/a.parquet");
    }
}
