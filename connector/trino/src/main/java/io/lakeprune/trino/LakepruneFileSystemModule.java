package io.lakeprune.trino;

import com.google.inject.Binder;
import com.google.inject.Scopes;
import io.airlift.configuration.AbstractConfigurationAwareModule;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.trino.filesystem.manager.FileSystemModule;
import io.trino.plugin.base.jmx.ConnectorObjectNameGeneratorModule;
import io.trino.plugin.base.jmx.MBeanServerModule;
import io.trino.spi.NodeManager;
import io.trino.spi.catalog.CatalogName;
import org.weakref.jmx.guice.MBeanModule;

import static java.util.Objects.requireNonNull;

/**
 * The data files' storage: Trino's file system layer ({@code trino-filesystem-manager}) as the
 * Hive, Iceberg and Hudi connectors install it, so that the catalog's {@code fs.native-s3.enabled}
 * and {@code s3.*} properties (and Trino's other native file systems: {@code fs.native-gcs.enabled},
 * {@code fs.native-azure.enabled}) configure how object-store files are read. Its statistics are
 * exported as JMX beans under {@code trino.plugin.lakeprune}. Local files need none of it
 * ({@link DataFiles}).
 */
public class LakepruneFileSystemModule
        extends AbstractConfigurationAwareModule
{
    private final String catalogName;
    private final NodeManager nodeManager;
    private final OpenTelemetry openTelemetry;
    private final Tracer tracer;

    public LakepruneFileSystemModule(String catalogName, NodeManager nodeManager, OpenTelemetry openTelemetry, Tracer tracer)
    {
        this.catalogName = requireNonNull(catalogName, "catalogName is null");
        this.nodeManager = requireNonNull(nodeManager, "nodeManager is null");
        this.openTelemetry = requireNonNull(openTelemetry, "openTelemetry is null");
        this.tracer = requireNonNull(tracer, "tracer is null");
    }

    @Override
    protected void setup(Binder binder)
    {
        binder.bind(CatalogName.class).toInstance(new CatalogName(catalogName));
        binder.bind(OpenTelemetry.class).toInstance(openTelemetry);
        binder.bind(Tracer.class).toInstance(tracer);
        install(new MBeanModule());
        install(new MBeanServerModule());
        install(new ConnectorObjectNameGeneratorModule("io.lakeprune.trino", "trino.plugin.lakeprune"));
        // no coordinator-side file cache: the connector reads each split's file once
        install(new FileSystemModule(catalogName, nodeManager, openTelemetry, false));
        binder.bind(DataFiles.class).in(Scopes.SINGLETON);
    }
}
