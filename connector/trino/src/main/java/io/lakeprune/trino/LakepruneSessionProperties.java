package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.airlift.units.Duration;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.session.PropertyMetadata;

import java.util.List;

import static io.trino.plugin.base.session.PropertyMetadataUtil.durationProperty;

public final class LakepruneSessionProperties
{
    public static final String DYNAMIC_FILTERING_WAIT_TIMEOUT = "dynamic_filtering_wait_timeout";

    private final List<PropertyMetadata<?>> sessionProperties;

    @Inject
    public LakepruneSessionProperties(LakepruneConfig config)
    {
        sessionProperties = ImmutableList.of(durationProperty(
                DYNAMIC_FILTERING_WAIT_TIMEOUT,
                "How long split enumeration waits for dynamic filters before pruning without them",
                config.getDynamicFilteringWaitTimeout(),
                false));
    }

    public List<PropertyMetadata<?>> getSessionProperties()
    {
        return sessionProperties;
    }

    public static Duration getDynamicFilteringWaitTimeout(ConnectorSession session)
    {
        return session.getProperty(DYNAMIC_FILTERING_WAIT_TIMEOUT, Duration.class);
    }
}
