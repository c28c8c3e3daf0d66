package io.lakeprune.trino;

import io.airlift.units.DataSize;
import io.trino.filesystem.Location;
import io.trino.filesystem.local.LocalInputFile;
import io.trino.parquet.ParquetReaderOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

class TestTrinoInputDataSource
{
    @Test
    void testSmallAndLargeFilesReadTheSameBytes(@TempDir Path directory)
            throws IOException
    {
        byte[] content = new byte[10_000];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 31);
        }
        Path file = Files.write(directory.resolve("data.parquet"), content);
        LocalInputFile input = new LocalInputFile(Location.of("file://" + file), file);
        for (DataSize threshold : new DataSize[] {DataSize.ofBytes(0), DataSize.ofBytes(content.length)}) {
            ParquetReaderOptions options = ParquetReaderOptions.builder().withSmallFileThreshold(threshold).build();
            try (TrinoInputDataSource source = new TrinoInputDataSource(input, options)) {
                assertThat(source.readTail(100).getBytes()).isEqualTo(Arrays.copyOfRange(content, content.length - 100, content.length));
                assertThat(source.readFully(1234, 50).getBytes()).isEqualTo(Arrays.copyOfRange(content, 1234, 1284));
                assertThat(source.getEstimatedSize()).isEqualTo(content.length);
            }
        }
    }
}
