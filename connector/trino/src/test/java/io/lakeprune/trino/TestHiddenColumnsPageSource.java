package io.lakeprune.trino;

import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.local.LocalInputFile;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.security.ConnectorIdentity;
import io.trino.spi.type.Type;
import lakeprune.v1.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TypeUtils.readNativeValue;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hidden columns read through the page source from a real Parquet file (hidden-columns.parquet,
 * written by pyarrow: ts timestamp[us, UTC], name string). The expected values are the Python
 * registry's for the same rows.
 */
class TestHiddenColumnsPageSource
{
    private static final LakepruneColumnHandle TS = LakepruneColumnHandle.regular("ts", TIMESTAMP_TZ_MICROS);
    private static final LakepruneColumnHandle NAME = LakepruneColumnHandle.regular("name", VARCHAR);
    private static final LakepruneColumnHandle REGION = LakepruneColumnHandle.regular("region", VARCHAR);
    private static final List<LakepruneColumnHandle> COLUMNS = List.of(
            NAME,
            LakepruneColumnHandle.virtual("hour_of_day", BIGINT, "hour(ts)", Optional.of(TS)),
            LakepruneColumnHandle.virtual("minute", VARCHAR, "date_format(ts, '%Y-%m-%d %H:%i')", Optional.of(TS)),
            LakepruneColumnHandle.virtual("lower_name", VARCHAR, "lower(name)", Optional.of(NAME)),
            LakepruneColumnHandle.virtual("tail", VARCHAR, "substring(name, 2, 5)", Optional.of(NAME)),
            LakepruneColumnHandle.virtual("name_length", BIGINT, "length(name)", Optional.of(NAME)),
            // over a partition column: one value for the whole split
            LakepruneColumnHandle.virtual("lower_region", VARCHAR, "lower(region)", Optional.of(REGION)));

    @Test
    void testHiddenColumnsAreComputedFromTheirSourceColumns(@TempDir Path directory)
            throws IOException
    {
        Path table = directory.resolve("t");
        Path file = copyTestFile(table);
        LakeprunePageSourceProvider provider = new LakeprunePageSourceProvider(new DataFiles(_ -> {
            throw new AssertionError("local files are read directly");
        }));
        assertExpectedRows(readRows(provider, table.toString(), file.toString(), Files.size(file)));
    }

    @Test
    void testObjectStoreFilesAreReadThroughTheFileSystemFactory(@TempDir Path directory)
            throws IOException
    {
        // a file system that serves s3://bucket/<key> from <directory>/<key>, recording each file opened
        Path file = copyTestFile(directory.resolve("wh/t"));
        List<Location> opened = new ArrayList<>();
        TrinoFileSystem fileSystem = (TrinoFileSystem) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {TrinoFileSystem.class}, (_, method, arguments) -> {
            if (!method.getName().equals("newInputFile") || arguments.length != 1) {
                throw new UnsupportedOperationException(method.getName());
            }
            Location location = (Location) arguments[0];
            opened.add(location);
            return new LocalInputFile(location, directory.resolve(location.path()));
        });
        List<ConnectorIdentity> identities = new ArrayList<>();
        TrinoFileSystemFactory factory = identity -> {
            identities.add(identity);
            return fileSystem;
        };
        ConnectorSession session = (ConnectorSession) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ConnectorSession.class}, (_, method, _) -> {
            if (!method.getName().equals("getIdentity")) {
                throw new UnsupportedOperationException(method.getName());
            }
            return ConnectorIdentity.ofUser("alice");
        });
        LakeprunePageSourceProvider provider = new LakeprunePageSourceProvider(new DataFiles(factory));
        assertExpectedRows(readRows(provider, session, "s3://bucket/wh/t", "s3://bucket/wh/t/region=x/hidden-columns.parquet", Files.size(file)));
        assertThat(opened).containsExactly(Location.of("s3://bucket/wh/t/region=x/hidden-columns.parquet"));
        assertThat(identities).extracting(ConnectorIdentity::getUser).containsExactly("alice");
    }

    private Path copyTestFile(Path table)
            throws IOException
    {
        Files.createDirectories(table.resolve("region=x"));
        Path file = table.resolve("region=x/hidden-columns.parquet");
        try (InputStream data = getClass().getResourceAsStream("hidden-columns.parquet")) {
            Files.copy(data, file);
        }
        return file;
    }

    private static List<List<Object>> readRows(LakeprunePageSourceProvider provider, String table, String file, long size)
    {
        return readRows(provider, null, table, file, size);
    }

    private static List<List<Object>> readRows(LakeprunePageSourceProvider provider, ConnectorSession session, String table, String file, long size)
    {
        LakepruneTableHandle handle = new LakepruneTableHandle("s", "t", Optional.empty(), table, Set.of(), TupleDomain.all(), Optional.empty(), Optional.empty());
        LakepruneSplit split = new LakepruneSplit(file, 0, size, 4, OptionalLong.empty(), List.of(LakepruneSplit.PartitionKey.of("region", Predicate.Value.newBuilder().setStringValue("ÀB").build())));

        List<List<Object>> rows = new ArrayList<>();
        try (ConnectorPageSource source = provider.createPageSource(null, session, split, handle, List.copyOf(COLUMNS), DynamicFilter.EMPTY)) {
            while (!source.isFinished()) {
                SourcePage page = source.getNextSourcePage();
                if (page == null) {
                    continue;
                }
                for (int position = 0; position < page.getPositionCount(); position++) {
                    List<Object> row = new ArrayList<>();
                    for (int channel = 0; channel < COLUMNS.size(); channel++) {
                        Type type = COLUMNS.get(channel).type();
                        Block block = page.getBlock(channel);
                        row.add(block.isNull(position) ? null : readNativeValue(type, block, position));
                    }
                    rows.add(row);
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rows;
    }

    private static void assertExpectedRows(List<List<Object>> rows)
    {
        String newer = new String(Character.toChars(0x16EB2));
        String newerLower = new String(Character.toChars(0x16ECD));
        assertThat(rows).containsExactly(
                Arrays.asList(utf8Slice("ÀB"), 12L, utf8Slice("2024-02-29 12:34"), utf8Slice("àb"), utf8Slice("B"), 2L, utf8Slice("àb")),
                Arrays.asList(null, null, null, null, null, null, utf8Slice("àb")),
                Arrays.asList(utf8Slice("X" + newer), 0L, utf8Slice("0001-01-01 00:00"), utf8Slice("x" + newerLower), utf8Slice(newer), 2L, utf8Slice("àb")),
                Arrays.asList(utf8Slice("abc"), 23L, utf8Slice("1969-12-31 23:59"), utf8Slice("abc"), utf8Slice("bc"), 3L, utf8Slice("àb")));
    }
}
