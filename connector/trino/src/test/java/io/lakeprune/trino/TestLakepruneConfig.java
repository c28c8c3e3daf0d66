package io.lakeprune.trino;

import com.google.common.collect.ImmutableMap;
import com.google.common.net.HostAndPort;
import io.airlift.units.DataSize;
import io.airlift.units.Duration;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.airlift.configuration.testing.ConfigAssertions.assertFullMapping;
import static io.airlift.configuration.testing.ConfigAssertions.assertRecordedDefaults;
import static io.airlift.configuration.testing.ConfigAssertions.recordDefaults;
import static io.airlift.units.DataSize.Unit.MEGABYTE;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

class TestLakepruneConfig
{
    @Test
    void testDefaults()
    {
        assertRecordedDefaults(recordDefaults(LakepruneConfig.class)
                .setSidecarAddresses("")
                .setRequestTimeout(new Duration(30, SECONDS))
                .setMaxAttempts(3)
                .setToken(null)
                .setTlsEnabled(false)
                .setTlsTrustCertificate(null)
                .setDynamicFilteringWaitTimeout(new Duration(1, SECONDS))
                .setMaxSplitSize(DataSize.of(64, MEGABYTE)));
    }

    @Test
    void testExplicitPropertyMappings()
            throws IOException
    {
        Path certificate = Files.createTempFile("sidecar", ".pem");
        Map<String, String> properties = ImmutableMap.<String, String>builder()
                .put("lakeprune.sidecar.addresses", "127.0.0.1:50051, sidecar-2:50052")
                .put("lakeprune.sidecar.request-timeout", "250ms")
                .put("lakeprune.sidecar.max-attempts", "5")
                .put("lakeprune.sidecar.token", "s3cret")
                .put("lakeprune.sidecar.tls.enabled", "true")
                .put("lakeprune.sidecar.tls.trust-certificate", certificate.toString())
                .put("lakeprune.dynamic-filtering.wait-timeout", "10s")
                .put("lakeprune.max-split-size", "128MB")
                .buildOrThrow();

        LakepruneConfig expected = new LakepruneConfig()
                .setSidecarAddresses("127.0.0.1:50051,sidecar-2:50052")
                .setRequestTimeout(new Duration(250, MILLISECONDS))
                .setMaxAttempts(5)
                .setToken("s3cret")
                .setTlsEnabled(true)
                .setTlsTrustCertificate(certificate.toString())
                .setDynamicFilteringWaitTimeout(new Duration(10, SECONDS))
                .setMaxSplitSize(DataSize.of(128, MEGABYTE));

        assertFullMapping(properties, expected);
    }

    @Test
    void testAddressList()
    {
        LakepruneConfig config = new LakepruneConfig().setSidecarAddresses(" a:1 ,b:2,, ");
        assertThat(config.getSidecarAddresses()).containsExactly(HostAndPort.fromParts("a", 1), HostAndPort.fromParts("b", 2));
        assertThat(config.isSidecarAddressesValid()).isTrue();
        assertThat(new LakepruneConfig().isSidecarAddressesValid()).isFalse();
        assertThat(new LakepruneConfig().setSidecarAddresses("host-without-port").isSidecarAddressesValid()).isFalse();
        assertThat(new LakepruneConfig().setSidecarAddresses("a:1").getSidecarAddresses()).isEqualTo(List.of(HostAndPort.fromParts("a", 1)));
    }
}
