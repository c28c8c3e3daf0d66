package io.lakeprune.trino;

import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoInputFile;
import io.trino.filesystem.local.LocalInputFile;
import io.trino.spi.TrinoException;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;

import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;

/**
 * Opens the data file a split names. The sidecar returns absolute local paths or file: URIs; only
 * those, normalized (no '..'), and only under the table's root (GetTableResponse.location) are
 * read: a split is the sidecar's answer for its table, and the connector never reads anything
 * else.
 */
final class DataFiles
{
    private DataFiles() {}

    static TrinoInputFile open(String path, String tableLocation)
    {
        Path file = fileUnder(path, tableLocation);
        return new LocalInputFile(Location.of("file://" + file), file);
    }

    /**
     * The local file a split names, when it lies strictly under the table's root (compared by path
     * components, after both are read the same way: {@code /wh/t2/a} is not under {@code /wh/t}).
     */
    static Path fileUnder(String path, String tableLocation)
    {
        if (tableLocation.isEmpty()) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar did not say where the table's root is (GetTableResponse.location), so no data file can be checked; upgrade the sidecar. Refused: " + path);
        }
        Path root = localPath(tableLocation);
        Path file = localPath(path);
        if (!file.startsWith(root) || file.equals(root)) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned a data file outside the table's root %s: %s".formatted(tableLocation, path));
        }
        return file;
    }

    static Path localPath(String path)
    {
        Path file;
        if (path.startsWith("file:")) {
            try {
                file = Path.of(new URI(path));
            }
            catch (URISyntaxException | IllegalArgumentException e) {
                throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "Invalid data file URI from the lakeprune sidecar: " + path, e);
            }
        }
        else if (path.startsWith("/")) {
            file = Path.of(path);
        }
        else if (path.contains("://")) {
            throw new TrinoException(NOT_SUPPORTED, "The lakeprune connector reads local files only so far; the sidecar returned " + path);
        }
        else {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned a relative data file path: " + path);
        }
        if (!file.isAbsolute() || !file.normalize().equals(file)) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned a data file path that is not absolute and normalized: " + path);
        }
        return file;
    }
}
