package io.lakeprune.trino;

import com.google.inject.Binder;
import com.google.inject.Module;
import com.google.inject.Scopes;

import static io.airlift.configuration.ConfigBinder.configBinder;

public class LakepruneModule
        implements Module
{
    @Override
    public void configure(Binder binder)
    {
        configBinder(binder).bindConfig(LakepruneConfig.class);
        binder.bind(SidecarClient.class).in(Scopes.SINGLETON);
        binder.bind(LakepruneStatistics.class).in(Scopes.SINGLETON);
        binder.bind(LakepruneSessionProperties.class).in(Scopes.SINGLETON);
        binder.bind(LakepruneSplitManager.class).in(Scopes.SINGLETON);
        binder.bind(LakeprunePageSourceProvider.class).in(Scopes.SINGLETON);
        binder.bind(LakepruneConnector.class).in(Scopes.SINGLETON);
    }
}
