package io.lakeprune.trino;

import com.google.common.collect.ImmutableMap;
import com.google.inject.Injector;
import com.sun.net.httpserver.HttpServer;
import io.airlift.bootstrap.Bootstrap;
import io.airlift.bootstrap.LifeCycleManager;
import io.opentelemetry.api.OpenTelemetry;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoInputFile;
import io.trino.filesystem.local.LocalInputFile;
import io.trino.spi.Node;
import io.trino.spi.NodeManager;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.security.ConnectorIdentity;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The catalog's file system properties wire Trino's own S3 file system (trino-filesystem-manager)
 * into the connector: a loopback HTTP server stands in for the S3 endpoint and records what the
 * file system asks it.
 */
class TestLakepruneFileSystem
{
    @Test
    void testS3PropertiesConfigureTrinosS3FileSystem()
            throws IOException
    {
        List<String> requests = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath() + " " + exchange.getRequestHeaders().getFirst("Authorization"));
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
        });
        server.start();
        Injector injector = null;
        try {
            injector = injector(ImmutableMap.<String, String>builder()
                    .put("fs.native-s3.enabled", "true")
                    .put("s3.endpoint", "http://127.0.0.1:" + server.getAddress().getPort())
                    .put("s3.region", "us-east-1")
                    .put("s3.path-style-access", "true")
                    .put("s3.aws-access-key", "AKIDLAKEPRUNE")
                    .put("s3.aws-secret-key", "lakeprune-secret-key")
                    .put("s3.max-error-retries", "1")
                    .buildOrThrow());
            DataFiles dataFiles = injector.getInstance(DataFiles.class);

            TrinoInputFile file = dataFiles.open(session(), "s3://bucket/wh/t/p=1/a.parquet", "s3://bucket/wh/t", OptionalLong.empty());
            assertThat(file.location()).isEqualTo(Location.of("s3://bucket/wh/t/p=1/a.parquet"));
            assertThat(file.exists()).isFalse(); // the server's 404
            // path-style (the bucket in the path), signed with the catalog's key for its region
            assertThat(requests).singleElement().satisfies(request -> assertThat(request)
                    .startsWith("HEAD /bucket/wh/t/p=1/a.parquet ")
                    .contains("Credential=AKIDLAKEPRUNE/")
                    .contains("/us-east-1/s3/aws4_request")
                    .doesNotContain("lakeprune-secret-key"));

            // with the size from the split, opening and sizing the file asks the store nothing
            TrinoInputFile sized = dataFiles.open(session(), "s3://bucket/wh/t/p=1/b.parquet", "s3://bucket/wh/t", OptionalLong.of(1234));
            assertThat(sized.length()).isEqualTo(1234);
            assertThat(requests).hasSize(1);

            // local files still open directly, with the same checks
            assertThat(dataFiles.open(null, "/wh/t/a.parquet", "/wh/t", OptionalLong.empty())).isInstanceOf(LocalInputFile.class);
            assertThatThrownBy(() -> dataFiles.open(session(), "s3://other/wh/t/a.parquet", "s3://bucket/wh/t", OptionalLong.empty()))
                    .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT.toErrorCode()));
            assertThat(requests).hasSize(1);
        }
        finally {
            if (injector != null) {
                injector.getInstance(LifeCycleManager.class).stop();
            }
            server.stop(0);
        }
    }

    @Test
    void testWithoutFileSystemPropertiesOnlyLocalFilesAreRead()
    {
        Injector injector = injector(Map.of());
        try {
            DataFiles dataFiles = injector.getInstance(DataFiles.class);
            TrinoInputFile local = dataFiles.open(null, "file:///wh/t/a%20b.parquet", "/wh/t", OptionalLong.empty());
            assertThat(local).isInstanceOf(LocalInputFile.class);
            assertThat(local.location()).isEqualTo(Location.of("file:///wh/t/a b.parquet"));
            assertThatThrownBy(() -> dataFiles.open(session(), "s3://bucket/wh/t/a.parquet", "s3://bucket/wh/t", OptionalLong.empty()))
                    .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LakepruneErrorCode.LAKEPRUNE_CANNOT_READ_FILE.toErrorCode()))
                    .hasMessageContaining("s3://bucket/wh/t/a.parquet")
                    .hasMessageContaining("fs.native-s3.enabled=true");
        }
        finally {
            injector.getInstance(LifeCycleManager.class).stop();
        }
    }

    @Test
    void testS3PropertiesNeedTheS3FileSystem()
    {
        // as in Trino's own connectors, a property nothing reads fails the catalog (a typo too)
        assertThatThrownBy(() -> injector(Map.of("s3.endpoint", "http://127.0.0.1:9000", "s3.aws-secret-key", "lakeprune-secret-key")))
                .hasMessageContaining("s3.endpoint")
                .hasMessageNotContaining("lakeprune-secret-key");
        assertThatThrownBy(() -> injector(Map.of("fs.native-s3.enabled", "true", "s3.regoin", "us-east-1")))
                .hasMessageContaining("s3.regoin");
    }

    private static Injector injector(Map<String, String> properties)
    {
        OpenTelemetry openTelemetry = OpenTelemetry.noop();
        return new Bootstrap(new LakepruneFileSystemModule("lakeprune", nodeManager(), openTelemetry, openTelemetry.getTracer("lakeprune")))
                .doNotInitializeLogging()
                .quiet()
                .setRequiredConfigurationProperties(properties)
                .initialize();
    }

    private static ConnectorSession session()
    {
        return stub(ConnectorSession.class, Map.of("getIdentity", ConnectorIdentity.ofUser("lakeprune")));
    }

    private static NodeManager nodeManager()
    {
        Node node = stub(Node.class, Map.of("isCoordinator", true, "getNodeIdentifier", "node-1", "getVersion", "476"));
        return stub(NodeManager.class, Map.of("getCurrentNode", node, "getEnvironment", "test"));
    }

    /** An implementation of `type` that answers the named methods and fails on any other. */
    private static <T> T stub(Class<T> type, Map<String, Object> answers)
    {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (_, method, _) -> {
            if (!answers.containsKey(method.getName())) {
                throw new UnsupportedOperationException(type.getSimpleName() + "." + method.getName());
            }
            return answers.get(method.getName());
        }));
    }
}
