package io.lakeprune.trino;

import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import com.google.common.net.HostAndPort;
import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.configuration.ConfigSecuritySensitive;
import io.airlift.configuration.validation.FileExists;
import io.airlift.units.DataSize;
import io.airlift.units.Duration;
import io.airlift.units.MinDataSize;
import io.airlift.units.MinDuration;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import java.util.List;
import java.util.Optional;

import static io.airlift.units.DataSize.Unit.MEGABYTE;
import static java.util.concurrent.TimeUnit.SECONDS;

/**
 * The catalog properties of a lakeprune catalog. The Python launcher writes these names; keep them
 * in step with connector/trino/README.md.
 */
public class LakepruneConfig
{
    /** The sidecar's smallest byte range (pruner.service.codec.MIN_SPLIT_BYTES). */
    static final String MIN_SPLIT_SIZE = "64kB";

    private List<HostAndPort> sidecarAddresses = ImmutableList.of();
    private Duration requestTimeout = new Duration(30, SECONDS);
    private int maxAttempts = 3;
    private String token;
    private boolean tlsEnabled;
    private String tlsTrustCertificate;
    private Duration dynamicFilteringWaitTimeout = new Duration(1, SECONDS);
    private DataSize maxSplitSize = DataSize.of(64, MEGABYTE);

    @NotNull
    public List<HostAndPort> getSidecarAddresses()
    {
        return sidecarAddresses;
    }

    @Config("lakeprune.sidecar.addresses")
    @ConfigDescription("The lakeprune sidecar's gRPC endpoints, host:port[,host:port...]; tried in order on failure")
    public LakepruneConfig setSidecarAddresses(String addresses)
    {
        this.sidecarAddresses = addresses == null ? null : Splitter.on(',').trimResults().omitEmptyStrings().splitToStream(addresses)
                .map(address -> HostAndPort.fromString(address).requireBracketsForIPv6())
                .collect(ImmutableList.toImmutableList());
        return this;
    }

    @AssertTrue(message = "lakeprune.sidecar.addresses must name at least one host:port")
    public boolean isSidecarAddressesValid()
    {
        return sidecarAddresses != null && !sidecarAddresses.isEmpty() && sidecarAddresses.stream().allMatch(HostAndPort::hasPort);
    }

    @NotNull
    @MinDuration("1ms")
    public Duration getRequestTimeout()
    {
        return requestTimeout;
    }

    @Config("lakeprune.sidecar.request-timeout")
    @ConfigDescription("Deadline of each call to the sidecar (on a stream: of each wait for a response)")
    public LakepruneConfig setRequestTimeout(Duration requestTimeout)
    {
        this.requestTimeout = requestTimeout;
        return this;
    }

    @Min(1)
    @Max(100)
    public int getMaxAttempts()
    {
        return maxAttempts;
    }

    @Config("lakeprune.sidecar.max-attempts")
    @ConfigDescription("Attempts per call across the address list when the sidecar is unavailable or times out")
    public LakepruneConfig setMaxAttempts(int maxAttempts)
    {
        this.maxAttempts = maxAttempts;
        return this;
    }

    public Optional<String> getToken()
    {
        return Optional.ofNullable(token);
    }

    @Config("lakeprune.sidecar.token")
    @ConfigSecuritySensitive
    @ConfigDescription("Bearer token sent to the sidecar as 'authorization: Bearer <token>'")
    public LakepruneConfig setToken(String token)
    {
        this.token = token;
        return this;
    }

    public boolean isTlsEnabled()
    {
        return tlsEnabled;
    }

    @Config("lakeprune.sidecar.tls.enabled")
    @ConfigDescription("Talk to the sidecar over TLS")
    public LakepruneConfig setTlsEnabled(boolean tlsEnabled)
    {
        this.tlsEnabled = tlsEnabled;
        return this;
    }

    public Optional<@FileExists String> getTlsTrustCertificate()
    {
        return Optional.ofNullable(tlsTrustCertificate);
    }

    @Config("lakeprune.sidecar.tls.trust-certificate")
    @ConfigDescription("PEM file of the certificates to trust for the sidecar (default: the JVM's trust store)")
    public LakepruneConfig setTlsTrustCertificate(String tlsTrustCertificate)
    {
        this.tlsTrustCertificate = tlsTrustCertificate;
        return this;
    }

    @NotNull
    public Duration getDynamicFilteringWaitTimeout()
    {
        return dynamicFilteringWaitTimeout;
    }

    @Config("lakeprune.dynamic-filtering.wait-timeout")
    @ConfigDescription("How long split enumeration waits for dynamic filters before pruning without them")
    public LakepruneConfig setDynamicFilteringWaitTimeout(Duration dynamicFilteringWaitTimeout)
    {
        this.dynamicFilteringWaitTimeout = dynamicFilteringWaitTimeout;
        return this;
    }

    @NotNull
    @MinDataSize(MIN_SPLIT_SIZE)
    public DataSize getMaxSplitSize()
    {
        return maxSplitSize;
    }

    @Config("lakeprune.max-split-size")
    @ConfigDescription("Largest split: a larger data file is read as several splits of consecutive byte ranges (row groups)")
    public LakepruneConfig setMaxSplitSize(DataSize maxSplitSize)
    {
        this.maxSplitSize = maxSplitSize;
        return this;
    }
}
