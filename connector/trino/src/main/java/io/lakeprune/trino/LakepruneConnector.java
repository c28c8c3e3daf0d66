package io.lakeprune.trino;

import com.google.inject.Inject;
import io.airlift.bootstrap.LifeCycleManager;
import io.trino.plugin.base.classloader.ClassLoaderSafeConnectorMetadata;
import io.trino.plugin.base.classloader.ClassLoaderSafeConnectorPageSourceProvider;
import io.trino.plugin.base.classloader.ClassLoaderSafeConnectorSplitManager;
import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorPageSourceProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.session.PropertyMetadata;
import io.trino.spi.transaction.IsolationLevel;

import java.util.List;

import static io.trino.spi.transaction.IsolationLevel.READ_COMMITTED;
import static io.trino.spi.transaction.IsolationLevel.checkConnectorSupports;
import static java.util.Objects.requireNonNull;

public class LakepruneConnector
        implements Connector
{
    private final LifeCycleManager lifeCycleManager;
    private final SidecarClient client;
    private final LakepruneStatistics statistics;
    private final ConnectorSplitManager splitManager;
    private final ConnectorPageSourceProvider pageSourceProvider;
    private final List<PropertyMetadata<?>> sessionProperties;

    @Inject
    public LakepruneConnector(
            LifeCycleManager lifeCycleManager,
            SidecarClient client,
            LakepruneStatistics statistics,
            LakepruneSplitManager splitManager,
            LakeprunePageSourceProvider pageSourceProvider,
            LakepruneSessionProperties sessionProperties)
    {
        this.lifeCycleManager = requireNonNull(lifeCycleManager, "lifeCycleManager is null");
        this.client = requireNonNull(client, "client is null");
        this.statistics = requireNonNull(statistics, "statistics is null");
        ClassLoader classLoader = getClass().getClassLoader();
        this.splitManager = new ClassLoaderSafeConnectorSplitManager(splitManager, classLoader);
        this.pageSourceProvider = new ClassLoaderSafeConnectorPageSourceProvider(pageSourceProvider, classLoader);
        this.sessionProperties = sessionProperties.getSessionProperties();
    }

    @Override
    public ConnectorTransactionHandle beginTransaction(IsolationLevel isolationLevel, boolean readOnly, boolean autoCommit)
    {
        checkConnectorSupports(READ_COMMITTED, isolationLevel);
        return LakepruneTransactionHandle.INSTANCE;
    }

    @Override
    public ConnectorMetadata getMetadata(ConnectorSession session, ConnectorTransactionHandle transaction)
    {
        // one per transaction: it remembers the tables it described
        return new ClassLoaderSafeConnectorMetadata(new LakepruneMetadata(client, statistics), getClass().getClassLoader());
    }

    @Override
    public ConnectorSplitManager getSplitManager()
    {
        return splitManager;
    }

    @Override
    public ConnectorPageSourceProvider getPageSourceProvider()
    {
        return pageSourceProvider;
    }

    @Override
    public List<PropertyMetadata<?>> getSessionProperties()
    {
        return sessionProperties;
    }

    @Override
    public void shutdown()
    {
        lifeCycleManager.stop();
    }
}
