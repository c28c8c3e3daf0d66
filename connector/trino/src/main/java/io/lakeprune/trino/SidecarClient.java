package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.net.HostAndPort;
import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.airlift.units.Duration;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.trino.spi.TrinoException;
import jakarta.annotation.PreDestroy;
import lakeprune.v1.PruningServiceGrpc;
import lakeprune.v1.PruningServiceGrpc.PruningServiceBlockingStub;

import javax.net.ssl.SSLException;

import java.io.File;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_BAD_DATA;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_INVALID_REQUEST;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_SIDECAR_ERROR;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_SIDECAR_UNAVAILABLE;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_UNAUTHENTICATED;
import static java.lang.String.format;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MILLISECONDS;

/**
 * The sidecar's gRPC API, with the catalog's deadline, bearer token and bounded retries across its
 * address list. Every failure becomes a {@link TrinoException} naming the sidecar, except NOT_FOUND,
 * which callers translate into what Trino expects ({@link NotFoundException}).
 * <p>
 * One channel per address, and each call starts at the next address (a shared counter): calls, not
 * connections, are spread. That is what balances a sidecar run with {@code --workers N
 * --worker-grpc-port P} when the catalog lists the workers' own ports: each port reaches one worker,
 * so the workers take turns by construction. Several channels to one shared SO_REUSEPORT port would
 * not do it: the kernel places each connection by a hash of its addresses, so all of them may land
 * on one worker.
 */
public class SidecarClient
{
    private static final Logger log = Logger.get(SidecarClient.class);
    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    // Why a call failed, where its status alone does not say (the sidecar's serving/errors.py).
    static final Metadata.Key<String> REASON = Metadata.Key.of("lakeprune-reason", Metadata.ASCII_STRING_MARSHALLER);
    static final String TABLE_DAMAGED = "TABLE_DAMAGED";

    private final List<Endpoint> endpoints;
    private final Duration requestTimeout;
    private final int maxAttempts;
    private final AtomicInteger next = new AtomicInteger();

    public record Endpoint(String address, ManagedChannel channel) {}

    /** The sidecar answered NOT_FOUND: an unknown schema, table or snapshot. */
    public static class NotFoundException
            extends RuntimeException
    {
        public NotFoundException(String message)
        {
            super(message);
        }
    }

    @Inject
    public SidecarClient(LakepruneConfig config)
    {
        this(config.getSidecarAddresses().stream()
                        .map(address -> new Endpoint(address.toString(), channel(address, config)))
                        .collect(toImmutableList()),
                config.getRequestTimeout(),
                config.getMaxAttempts());
    }

    public SidecarClient(List<Endpoint> endpoints, Duration requestTimeout, int maxAttempts)
    {
        this.endpoints = ImmutableList.copyOf(endpoints);
        this.requestTimeout = requireNonNull(requestTimeout, "requestTimeout is null");
        this.maxAttempts = maxAttempts;
        if (this.endpoints.isEmpty() || maxAttempts < 1) {
            throw new IllegalArgumentException("a sidecar client needs at least one address and one attempt");
        }
    }

    private static ManagedChannel channel(HostAndPort address, LakepruneConfig config)
    {
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(address.getHost(), address.getPort())
                .maxInboundMessageSize(256 * 1024 * 1024);
        if (config.isTlsEnabled()) {
            try {
                var ssl = GrpcSslContexts.forClient();
                config.getTlsTrustCertificate().ifPresent(path -> ssl.trustManager(new File(path)));
                builder.sslContext(ssl.build()).useTransportSecurity();
            }
            catch (SSLException e) {
                throw new TrinoException(LAKEPRUNE_SIDECAR_UNAVAILABLE, "Cannot set up TLS for the lakeprune sidecar at " + address + ": " + e.getMessage(), e);
            }
        }
        else {
            builder.usePlaintext();
        }
        Optional<String> token = config.getToken();
        if (token.isPresent()) {
            Metadata headers = new Metadata();
            headers.put(AUTHORIZATION, "Bearer " + token.get());
            builder.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
        }
        return builder.build();
    }

    public String addresses()
    {
        return String.join(",", endpoints.stream().map(Endpoint::address).toList());
    }

    /**
     * Runs one call (a unary call, or a server-streaming call read to its end inside {@code call}),
     * each attempt with its own deadline, moving to the next address when the sidecar is
     * unavailable or too slow; at most max-attempts attempts.
     */
    public <T> T call(String method, Function<PruningServiceBlockingStub, T> call)
    {
        int first = Math.floorMod(next.getAndIncrement(), endpoints.size());
        StatusRuntimeException last = null;
        String lastAddress = null;
        for (int attempt = 0; attempt < maxAttempts; attempt++) {
            Endpoint endpoint = endpoints.get((first + attempt) % endpoints.size());
            PruningServiceBlockingStub stub = PruningServiceGrpc.newBlockingStub(endpoint.channel())
                    .withDeadlineAfter(requestTimeout.toMillis(), MILLISECONDS);
            try {
                return call.apply(stub);
            }
            catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if (code != Status.Code.UNAVAILABLE && code != Status.Code.DEADLINE_EXCEEDED) {
                    throw translate(method, endpoint.address(), e);
                }
                log.debug("lakeprune sidecar %s: %s failed (%s), attempt %s of %s", endpoint.address(), method, code, attempt + 1, maxAttempts);
                last = e;
                lastAddress = endpoint.address();
            }
        }
        String reason = last.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED
                ? format("did not answer within %s", requestTimeout)
                : "is unavailable";
        throw new TrinoException(LAKEPRUNE_SIDECAR_UNAVAILABLE, format(
                "lakeprune sidecar %s %s: %s failed after %s attempt(s) across [%s]; last error from %s: %s",
                endpoints.size() == 1 ? endpoints.getFirst().address() : "(" + addresses() + ")",
                reason, method, maxAttempts, addresses(), lastAddress, describe(last.getStatus())), last);
    }

    static RuntimeException translate(String method, String address, StatusRuntimeException e)
    {
        Status status = e.getStatus();
        String message = format("lakeprune sidecar %s: %s: %s", address, method, describe(status));
        Metadata trailers = e.getTrailers();
        if (trailers != null && TABLE_DAMAGED.equals(trailers.get(REASON))) {
            return new TrinoException(LAKEPRUNE_BAD_DATA, message, e);
        }
        return switch (status.getCode()) {
            case NOT_FOUND -> new NotFoundException(Optional.ofNullable(status.getDescription()).orElse(message));
            case INVALID_ARGUMENT, OUT_OF_RANGE, FAILED_PRECONDITION -> new TrinoException(LAKEPRUNE_INVALID_REQUEST, message, e);
            case UNAUTHENTICATED, PERMISSION_DENIED -> new TrinoException(LAKEPRUNE_UNAUTHENTICATED, message + " (check lakeprune.sidecar.token)", e);
            case UNAVAILABLE, DEADLINE_EXCEEDED -> new TrinoException(LAKEPRUNE_SIDECAR_UNAVAILABLE, message, e);
            default -> new TrinoException(LAKEPRUNE_SIDECAR_ERROR, message, e);
        };
    }

    private static String describe(Status status)
    {
        return status.getDescription() == null ? status.getCode().toString() : status.getCode() + " " + status.getDescription();
    }

    @PreDestroy
    public void close()
    {
        for (Endpoint endpoint : endpoints) {
            endpoint.channel().shutdownNow();
        }
        for (Endpoint endpoint : endpoints) {
            try {
                endpoint.channel().awaitTermination(5, TimeUnit.SECONDS);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
