package io.lakeprune.trino;

import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.security.ConnectorIdentity;
import io.trino.spi.type.TimeZoneKey;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

import static io.trino.spi.type.TimeZoneKey.UTC_KEY;

/** A session of user "test" in {@code zone}, for calls of the metadata that read the session; it has no properties. */
record TestingSession(TimeZoneKey zone)
        implements ConnectorSession
{
    static final TestingSession UTC = new TestingSession(UTC_KEY);

    @Override
    public String getQueryId()
    {
        return "test";
    }

    @Override
    public Optional<String> getSource()
    {
        return Optional.empty();
    }

    @Override
    public ConnectorIdentity getIdentity()
    {
        return ConnectorIdentity.ofUser("test");
    }

    @Override
    public TimeZoneKey getTimeZoneKey()
    {
        return zone;
    }

    @Override
    public Locale getLocale()
    {
        return Locale.ROOT;
    }

    @Override
    public Optional<String> getTraceToken()
    {
        return Optional.empty();
    }

    @Override
    public Instant getStart()
    {
        return Instant.EPOCH;
    }

    @Override
    public <T> T getProperty(String name, Class<T> type)
    {
        throw new IllegalArgumentException("no session property " + name);
    }
}
