package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.TrinoInputFile;
import io.trino.filesystem.local.LocalInputFile;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_CANNOT_READ_FILE;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT;
import static java.util.Objects.requireNonNull;

/**
 * Opens the data file a split names, after checking that it is one of the table's files. The
 * sidecar returns absolute local paths or {@code file:} URIs for local tables and
 * {@code scheme://bucket/key} URIs for tables on object stores ({@code s3://} and the other schemes
 * of Trino's file systems). A path is read only when it is normalized (no {@code ..}, {@code .}
 * or empty component, no user info) and lies strictly under the table's root
 * (GetTableResponse.location): local paths by path components, object-store URIs by scheme, bucket
 * and key components. A split is the sidecar's answer for its table, and the connector never reads
 * anything else.
 *
 * <p>Local files are read directly, as they always were (no catalog property needed); object-store
 * files through Trino's file system layer ({@code TrinoFileSystemFactory} from
 * {@code trino-filesystem-manager}, configured by the catalog's {@code fs.native-s3.enabled},
 * {@code s3.*} properties).
 */
final class DataFiles
{
    // scheme://authority[/key]: the authority (the bucket) ends at the first '/'
    private static final Pattern OBJECT_STORE_URI = Pattern.compile("([a-zA-Z][a-zA-Z0-9+.-]*)://([^/]*)(/.*)?", Pattern.DOTALL);

    private final TrinoFileSystemFactory fileSystemFactory;

    @Inject
    DataFiles(TrinoFileSystemFactory fileSystemFactory)
    {
        this.fileSystemFactory = requireNonNull(fileSystemFactory, "fileSystemFactory is null");
    }

    /** The file, opened with its size when known (an object store is then not asked for it). */
    TrinoInputFile open(ConnectorSession session, String path, String tableLocation, OptionalLong fileSize)
    {
        return switch (fileUnder(path, tableLocation)) {
            case LocalFile(Path file) -> new LocalInputFile(Location.of("file://" + file), file);
            case ObjectStoreFile file -> {
                Location location = Location.of(file.uri());
                try {
                    TrinoFileSystem fileSystem = fileSystemFactory.create(session);
                    yield fileSize.isPresent() ? fileSystem.newInputFile(location, fileSize.getAsLong()) : fileSystem.newInputFile(location);
                }
                catch (IllegalArgumentException e) {
                    // Trino's SwitchingFileSystemFactory when no file system is enabled for the scheme
                    throw new TrinoException(LAKEPRUNE_CANNOT_READ_FILE, "Cannot open %s with the lakeprune catalog's file systems (%s); for s3:// set fs.native-s3.enabled=true and the s3.* properties in the catalog"
                            .formatted(file.uri(), e.getMessage()), e);
                }
            }
        };
    }

    /** A data file that passed the checks. */
    sealed interface DataFile
            permits LocalFile, ObjectStoreFile {}

    /** A local file: absolute and normalized. */
    record LocalFile(Path path)
            implements DataFile {}

    /**
     * An object-store file or root: the scheme (lower case), the bucket and the key's components
     * (none empty, none {@code .} or {@code ..}).
     */
    record ObjectStoreFile(String scheme, String bucket, List<String> key)
            implements DataFile
    {
        ObjectStoreFile
        {
            key = ImmutableList.copyOf(key);
        }

        String uri()
        {
            return scheme + "://" + bucket + "/" + String.join("/", key);
        }

        boolean isStrictlyUnder(ObjectStoreFile root)
        {
            return scheme.equals(root.scheme)
                    && bucket.equals(root.bucket)
                    && key.size() > root.key.size()
                    && key.subList(0, root.key.size()).equals(root.key);
        }
    }

    /**
     * The file a split names, when it lies strictly under the table's root: local paths compared by
     * path components after both are read the same way ({@code /wh/t2/a} is not under
     * {@code /wh/t}); object-store URIs by scheme, bucket and key components
     * ({@code s3://b/t2/a} is not under {@code s3://b/t}). A local file is never under an
     * object-store root, nor the reverse.
     */
    static DataFile fileUnder(String path, String tableLocation)
    {
        if (tableLocation.isEmpty()) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar did not say where the table's root is (GetTableResponse.location), so no data file can be checked; upgrade the sidecar. Refused: " + shown(path));
        }
        boolean objectStoreRoot = isObjectStoreUri(tableLocation);
        if (objectStoreRoot != isObjectStoreUri(path)) {
            throw outsideRoot(path, tableLocation);
        }
        if (objectStoreRoot) {
            ObjectStoreFile root = objectStorePath(tableLocation, true);
            ObjectStoreFile file = objectStorePath(path, false);
            if (!file.isStrictlyUnder(root)) {
                throw outsideRoot(path, tableLocation);
            }
            return file;
        }
        Path root = localPath(tableLocation);
        Path file = localPath(path);
        if (!file.startsWith(root) || file.equals(root)) {
            throw outsideRoot(path, tableLocation);
        }
        return new LocalFile(file);
    }

    private static TrinoException outsideRoot(String path, String tableLocation)
    {
        return new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned a data file outside the table's root %s: %s".formatted(shown(tableLocation), shown(path)));
    }

    /** Whether a path is a {@code scheme://} URI other than a local {@code file:} one. */
    static boolean isObjectStoreUri(String path)
    {
        Matcher matcher = OBJECT_STORE_URI.matcher(path);
        return matcher.matches() && !matcher.group(1).equalsIgnoreCase("file");
    }

    /**
     * An object-store URI split into scheme, bucket and key components, refused unless normalized.
     * A root may end with one {@code /} and may be a whole bucket; a file needs a key.
     */
    static ObjectStoreFile objectStorePath(String uri, boolean root)
    {
        Matcher matcher = OBJECT_STORE_URI.matcher(uri);
        if (!matcher.matches()) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned an invalid object-store URI: " + shown(uri));
        }
        String bucket = matcher.group(2);
        if (bucket.contains("@")) {
            // user info may be a credential: never shown
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned an object-store URI with user info, which is refused (not shown)");
        }
        if (bucket.isEmpty()) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned an object-store URI without a bucket: " + uri);
        }
        String key = matcher.group(3) == null ? "" : matcher.group(3).substring(1);
        if (root && key.endsWith("/")) {
            key = key.substring(0, key.length() - 1);
        }
        List<String> components = key.isEmpty() ? List.of() : List.of(key.split("/", -1));
        for (String component : components) {
            if (component.isEmpty() || component.equals(".") || component.equals("..")) {
                throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned an object-store URI that is not normalized (an empty, '.' or '..' key component): " + uri);
            }
        }
        if (!root && components.isEmpty()) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned an object-store URI without a key: " + uri);
        }
        return new ObjectStoreFile(matcher.group(1).toLowerCase(Locale.ROOT), bucket, components);
    }

    static Path localPath(String path)
    {
        Path file;
        if (path.startsWith("file:")) {
            try {
                file = Path.of(new URI(path));
            }
            catch (URISyntaxException | IllegalArgumentException e) {
                throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "Invalid data file URI from the lakeprune sidecar: " + shown(path), e);
            }
        }
        else if (path.startsWith("/")) {
            file = Path.of(path);
        }
        else if (isObjectStoreUri(path)) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "Not a local path: " + shown(path));
        }
        else {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned a relative data file path: " + shown(path));
        }
        if (!file.isAbsolute() || !file.normalize().equals(file)) {
            throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "The lakeprune sidecar returned a data file path that is not absolute and normalized: " + shown(path));
        }
        return file;
    }

    /** A path for an error message: a URI's user info (perhaps a credential) is left out. */
    static String shown(String path)
    {
        Matcher matcher = OBJECT_STORE_URI.matcher(path);
        if (matcher.matches() && matcher.group(2).contains("@")) {
            String authority = matcher.group(2);
            return matcher.group(1) + "://<user info>@" + authority.substring(authority.lastIndexOf('@') + 1) + (matcher.group(3) == null ? "" : matcher.group(3));
        }
        return path;
    }
}
