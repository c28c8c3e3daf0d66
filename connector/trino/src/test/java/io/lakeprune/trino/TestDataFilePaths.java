package io.lakeprune.trino;

import io.trino.spi.TrinoException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TestDataFilePaths
{
    @Test
    void testDataFilePaths()
    {
        assertThat(DataFiles.localPath("/wh/t/a.parquet")).isEqualTo(Path.of("/wh/t/a.parquet"));
        assertThat(DataFiles.localPath("file:///wh/t/a%20b.parquet")).isEqualTo(Path.of("/wh/t/a b.parquet"));
        assertThatThrownBy(() -> DataFiles.localPath("relative/a.parquet")).isInstanceOf(TrinoException.class).hasMessageContaining("relative");
        assertThatThrownBy(() -> DataFiles.localPath("/wh/t/../../etc/passwd")).isInstanceOf(TrinoException.class).hasMessageContaining("normalized");
        assertThatThrownBy(() -> DataFiles.localPath("s3://bucket/a.parquet")).isInstanceOf(TrinoException.class).hasMessageContaining("Not a local path: s3://bucket/a.parquet");
    }

    @Test
    void testObjectStorePaths()
    {
        assertThat(DataFiles.objectStorePath("s3://bucket/wh/t/a.parquet", false)).isEqualTo(new DataFiles.ObjectStoreFile("s3", "bucket", List.of("wh", "t", "a.parquet")));
        // the scheme is case-insensitive; a root may end with '/' or be the whole bucket
        assertThat(DataFiles.objectStorePath("S3://bucket/wh/t/", true)).isEqualTo(new DataFiles.ObjectStoreFile("s3", "bucket", List.of("wh", "t")));
        assertThat(DataFiles.objectStorePath("s3://bucket", true)).isEqualTo(new DataFiles.ObjectStoreFile("s3", "bucket", List.of()));
        assertThat(DataFiles.objectStorePath("s3://bucket/", true).uri()).isEqualTo("s3://bucket/");
        assertThat(DataFiles.objectStorePath("gs://bucket/t/p=a%20b/x.parquet", false).uri()).isEqualTo("gs://bucket/t/p=a%20b/x.parquet");
        assertThat(DataFiles.isObjectStoreUri("s3a://b/k")).isTrue();
        assertThat(DataFiles.isObjectStoreUri("file:///wh/t")).isFalse();
        assertThat(DataFiles.isObjectStoreUri("/wh/t")).isFalse();

        assertRefusedObjectStorePath("s3://bucket/", "without a key");
        assertRefusedObjectStorePath("s3:///t/a.parquet", "without a bucket");
        assertRefusedObjectStorePath("s3://bucket/t/", "not normalized");
        assertRefusedObjectStorePath("s3://bucket//t/a.parquet", "not normalized");
        assertRefusedObjectStorePath("s3://bucket/t/../u/a.parquet", "not normalized");
        assertRefusedObjectStorePath("s3://bucket/t/./a.parquet", "not normalized");
        assertRefusedObjectStorePath("s3://bucket/t/..", "not normalized");
    }

    @Test
    void testObjectStoreUserInfoIsNeverShown()
    {
        assertThatThrownBy(() -> DataFiles.objectStorePath("s3://AKIDEXAMPLE:wJalrSECRET@bucket/t/a.parquet", false))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT.toErrorCode()))
                .hasMessageContaining("user info")
                .hasMessageNotContaining("wJalrSECRET")
                .hasMessageNotContaining("AKIDEXAMPLE");
        for (String root : List.of("s3://bucket/t", "/wh/t")) {
            assertThatThrownBy(() -> DataFiles.fileUnder("s3://AKIDEXAMPLE:wJalrSECRET@bucket/t/a.parquet", root))
                    .isInstanceOf(TrinoException.class)
                    .hasMessageNotContaining("wJalrSECRET")
                    .hasMessageNotContaining("AKIDEXAMPLE");
        }
        assertThatThrownBy(() -> DataFiles.fileUnder("/wh/t/a.parquet", "file://user:wJalrSECRET@host/wh/t"))
                .isInstanceOf(TrinoException.class)
                .hasMessageNotContaining("wJalrSECRET");
    }

    @Test
    void testOnlyObjectStoreFilesUnderTheTableRoot()
    {
        assertThat(DataFiles.fileUnder("s3://b/t/a.parquet", "s3://b/t")).isEqualTo(new DataFiles.ObjectStoreFile("s3", "b", List.of("t", "a.parquet")));
        assertThat(DataFiles.fileUnder("s3://b/wh/t/p=1/a.parquet", "s3://b/wh/t/")).isEqualTo(new DataFiles.ObjectStoreFile("s3", "b", List.of("wh", "t", "p=1", "a.parquet")));
        assertThat(DataFiles.fileUnder("s3://b/a.parquet", "s3://b")).isEqualTo(new DataFiles.ObjectStoreFile("s3", "b", List.of("a.parquet")));

        // a key prefix that is not a directory
        assertRefused("s3://b/t2/a.parquet", "s3://b/t", "outside the table's root");
        assertRefused("s3://b/t", "s3://b/t", "outside the table's root");
        assertRefused("s3://b/other/a.parquet", "s3://b/t", "outside the table's root");
        // another bucket, another scheme, or a local file
        assertRefused("s3://b2/t/a.parquet", "s3://b/t", "outside the table's root");
        assertRefused("s3://bucket/t/a.parquet", "s3://b/t", "outside the table's root");
        assertRefused("gs://b/t/a.parquet", "s3://b/t", "outside the table's root");
        assertRefused("s3a://b/t/a.parquet", "s3://b/t", "outside the table's root");
        assertRefused("/b/t/a.parquet", "s3://b/t", "outside the table's root");
        assertRefused("file:///b/t/a.parquet", "s3://b/t", "outside the table's root");
        assertRefused("s3://b/t/a.parquet", "/b/t", "outside the table's root");
        // normalized first: no way out through '..', '.' or '//'
        assertRefused("s3://b/t/../other/a.parquet", "s3://b/t", "not normalized");
        assertRefused("s3://b/t/./a.parquet", "s3://b/t", "not normalized");
        assertRefused("s3://b/t//a.parquet", "s3://b/t", "not normalized");
        assertRefused("s3://b/t/a.parquet", "s3://b/x/../t", "not normalized");
        assertRefused("s3://b/t/a.parquet", "s3://b//t", "not normalized");
    }

    @Test
    void testOnlyFilesUnderTheTableRoot()
    {
        assertThat(DataFiles.fileUnder("/wh/t/a.parquet", "/wh/t")).isEqualTo(local("/wh/t/a.parquet"));
        assertThat(DataFiles.fileUnder("/wh/t/p=1/a.parquet", "/wh/t/")).isEqualTo(local("/wh/t/p=1/a.parquet"));
        // the two forms are compared as paths: a file: URI root and plain paths, and the reverse
        assertThat(DataFiles.fileUnder("file:///wh/t/a%20b.parquet", "file:///wh/t")).isEqualTo(local("/wh/t/a b.parquet"));
        assertThat(DataFiles.fileUnder("/wh/t/a.parquet", "file:///wh/t")).isEqualTo(local("/wh/t/a.parquet"));
        assertThat(DataFiles.fileUnder("file:///wh/t/a.parquet", "/wh/t")).isEqualTo(local("/wh/t/a.parquet"));

        assertRefused("/wh/other/a.parquet", "/wh/t", "outside the table's root");
        // by path components, not by text
        assertRefused("/wh/t2/a.parquet", "/wh/t", "outside the table's root");
        assertRefused("/wh/t", "/wh/t", "outside the table's root");
        assertRefused("/wh", "/wh/t", "outside the table's root");
        // normalized first: no way out through '..'
        assertRefused("/wh/t/../other/a.parquet", "/wh/t", "normalized");
        assertRefused("/wh/t/./a.parquet", "/wh/t", "normalized");
        assertRefused("file:///wh/t/%2E%2E/other/a.parquet", "/wh/t", "normalized");
        // a root the sidecar did not say, or not in a form that can be checked
        assertRefused("/wh/t/a.parquet", "", "GetTableResponse.location");
        assertRefused("/wh/t/a.parquet", "wh/t", "relative");
        assertRefused("/wh/t/a.parquet", "/wh/x/../t", "normalized");
    }

    private static DataFiles.LocalFile local(String path)
    {
        return new DataFiles.LocalFile(Path.of(path));
    }

    private static void assertRefusedObjectStorePath(String uri, String message)
    {
        assertThatThrownBy(() -> DataFiles.objectStorePath(uri, false))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT.toErrorCode()))
                .hasMessageContaining(message);
    }

    private static void assertRefused(String path, String root, String message)
    {
        assertThatThrownBy(() -> DataFiles.fileUnder(path, root))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT.toErrorCode()))
                .hasMessageContaining(message);
    }
}
