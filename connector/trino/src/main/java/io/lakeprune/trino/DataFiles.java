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
 * those, normalized (no '..'), are read: a split is the sidecar's answer for its table, and the
 * connector never reads anything else.
 */
final class DataFiles
{
    private DataFiles() {}

    static TrinoInputFile open(String path)
    {
        Path file = localPath(path);
        return new LocalInputFile(Location.of("file://" + file), file);
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
