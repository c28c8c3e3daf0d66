package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.airlift.units.DataSize;
import io.airlift.units.Duration;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.session.PropertyMetadata;

import io.trino.spi.TrinoException;

import java.util.List;

import static io.trino.plugin.base.session.PropertyMetadataUtil.dataSizeProperty;
import static io.trino.plugin.base.session.PropertyMetadataUtil.durationProperty;
import static io.trino.spi.StandardErrorCode.INVALID_SESSION_PROPERTY;

public final class LakepruneSessionProperties
{
    public static final String DYNAMIC_FILTERING_WAIT_TIMEOUT = "dynamic_filtering_wait_timeout";
    public static final String MAX_SPLIT_SIZE = "max_split_size";

    private final List<PropertyMetadata<?>> sessionProperties;

    @Inject
    public LakepruneSessionProperties(LakepruneConfig config)
    {
        sessionProperties = ImmutableList.of(
                durationProperty(
                        DYNAMIC_FILTERING_WAIT_TIMEOUT,
                        "How long split enumeration waits for dynamic filters before pruning without them",
                        config.getDynamicFilteringWaitTimeout(),
                        false),
                dataSizeProperty(
                        MAX_SPLIT_SIZE,
                        "Largest split: a larger data file is read as several splits of consecutive byte ranges (row groups)",
                        config.getMaxSplitSize(),
                        LakepruneSessionProperties::checkMaxSplitSize,
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

    public static DataSize getMaxSplitSize(ConnectorSession session)
    {
        return session.getProperty(MAX_SPLIT_SIZE, DataSize.class);
    }

    private static void checkMaxSplitSize(DataSize size)
    {
        if (size.compareTo(DataSize.valueOf(LakepruneConfig.MIN_SPLIT_SIZE)) < 0) {
            throw new TrinoException(INVALID_SESSION_PROPERTY, "%s must be at least %s: %s".formatted(MAX_SPLIT_SIZE, LakepruneConfig.MIN_SPLIT_SIZE, size));
        }
    }
}
