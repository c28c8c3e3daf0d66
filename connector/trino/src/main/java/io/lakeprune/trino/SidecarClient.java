package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.net.HostAndPort;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.airlift.units.Duration;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.trino.spi.TrinoException;
import jakarta.annotation.PreDestroy;
import lakeprune.v1.PruningServiceGrpc;
import lakeprune.v1.PruningServiceGrpc.PruningServiceBlockingStub;
import lakeprune.v1.PruningServiceGrpc.PruningServiceStub;

import javax.net.ssl.SSLException;

import java.io.Closeable;
import java.io.File;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_BAD_DATA;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_INVALID_REQUEST;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_SIDECAR_ERROR;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_SIDECAR_UNAVAILABLE;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_UNAUTHENTICATED;
import static java.lang.String.format;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.CompletableFuture.completedFuture;
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
 * <p>
 * A server-streaming call whose responses are consumed as they arrive ({@link #stream}) keeps the
 * same deadline, token, retries and error mapping, with two differences: it is retried only until
 * its first response arrived (a retry after that would deliver those responses twice), and the
 * timeout bounds each wait for the sidecar rather than the whole call, since the caller may take
 * its time to consume what it asked for.
 */
public class SidecarClient
{
    private static final Logger log = Logger.get(SidecarClient.class);
    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    // Why a call failed, where its status alone does not say (the sidecar's serving/errors.py).
    static final Metadata.Key<String> REASON = Metadata.Key.of("lakeprune-reason", Metadata.ASCII_STRING_MARSHALLER);
    static final String TABLE_DAMAGED = "TABLE_DAMAGED";
    static final String USER_AGENT = "lakeprune-trino";

    private final List<Endpoint> endpoints;
    private final Duration requestTimeout;
    private final int maxAttempts;
    private final AtomicInteger next = new AtomicInteger();
    // fails a stream's attempt when the sidecar does not answer in time (streams have no gRPC deadline)
    private final ScheduledExecutorService timeouts;

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
        ScheduledThreadPoolExecutor timeouts = new ScheduledThreadPoolExecutor(1, new ThreadFactoryBuilder()
                .setNameFormat("lakeprune-sidecar-timeout-%s")
                .setDaemon(true)
                .build());
        // most timeouts are cancelled (the sidecar answered): do not keep them queued until they are due
        timeouts.setRemoveOnCancelPolicy(true);
        this.timeouts = timeouts;
    }

    private static ManagedChannel channel(HostAndPort address, LakepruneConfig config)
    {
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(address.getHost(), address.getPort())
                .maxInboundMessageSize(256 * 1024 * 1024)
                // names Trino in the sidecar's workload log (lakeprune advise: which engine asked)
                .userAgent(USER_AGENT);
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
                if (!retryable(e.getStatus())) {
                    throw translate(method, endpoint.address(), e);
                }
                log.debug("lakeprune sidecar %s: %s failed (%s), attempt %s of %s", endpoint.address(), method, e.getStatus().getCode(), attempt + 1, maxAttempts);
                last = e;
                lastAddress = endpoint.address();
            }
        }
        throw attemptsExhausted(method, lastAddress, last);
    }

    private static boolean retryable(Status status)
    {
        return status.getCode() == Status.Code.UNAVAILABLE || status.getCode() == Status.Code.DEADLINE_EXCEEDED;
    }

    private TrinoException attemptsExhausted(String method, String lastAddress, StatusRuntimeException last)
    {
        String reason = last.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED
                ? format("did not answer within %s", requestTimeout)
                : "is unavailable";
        return new TrinoException(LAKEPRUNE_SIDECAR_UNAVAILABLE, format(
                "lakeprune sidecar %s %s: %s failed after %s attempt(s) across [%s]; last error from %s: %s",
                endpoints.size() == 1 ? endpoints.getFirst().address() : "(" + addresses() + ")",
                reason, method, maxAttempts, addresses(), lastAddress, describe(last.getStatus())), last);
    }

    /** Starts a server-streaming call on a stub: {@code (stub, observer) -> stub.pruneStream(request, observer)}. */
    @FunctionalInterface
    public interface StreamingCall<T>
    {
        void start(PruningServiceStub stub, StreamObserver<T> responseObserver);
    }

    /**
     * Starts a server-streaming call whose responses the caller takes as it is ready for them, see
     * {@link ResponseStream}. At most {@code bufferedResponses} responses are asked of the sidecar
     * ahead of the caller: while the caller does not take them, gRPC's flow control holds the sidecar
     * back. Attempts move across the addresses as in {@link #call}, but only until the first response
     * arrived; a failure after it fails the stream. The request timeout bounds each wait for a response
     * the caller asked for (the first one, and each later one), not the whole call.
     */
    public <T> ResponseStream<T> stream(String method, StreamingCall<T> call, int bufferedResponses)
    {
        ResponseStream<T> stream = new ResponseStream<>(method, call, bufferedResponses);
        synchronized (stream) {
            stream.start();
        }
        return stream;
    }

    /**
     * The responses of one server-streaming call, in the order the sidecar sent them, taken without
     * blocking: {@link #poll} the ones that arrived, {@link #whenReady} to learn when there are more.
     * {@link #close} cancels the call when it is still open. Thread-safe.
     */
    public final class ResponseStream<T>
            implements Closeable
    {
        private final String method;
        private final StreamingCall<T> call;
        private final int bufferedResponses;
        private final int firstEndpoint;

        @GuardedBy("this")
        private final Deque<T> buffer = new ArrayDeque<>();
        @GuardedBy("this")
        private Attempt current;
        @GuardedBy("this")
        private int attempts;
        @GuardedBy("this")
        private boolean received;
        @GuardedBy("this")
        private boolean completed;
        @GuardedBy("this")
        private RuntimeException failure;
        @GuardedBy("this")
        private boolean closed;
        @GuardedBy("this")
        private CompletableFuture<Void> ready = new CompletableFuture<>();

        private ResponseStream(String method, StreamingCall<T> call, int bufferedResponses)
        {
            checkArgument(bufferedResponses > 0, "bufferedResponses must be positive");
            this.method = requireNonNull(method, "method is null");
            this.call = requireNonNull(call, "call is null");
            this.bufferedResponses = bufferedResponses;
            this.firstEndpoint = Math.floorMod(next.getAndIncrement(), endpoints.size());
        }

        /**
         * The next response that arrived, or null when none is there yet (or the stream ended or was
         * closed). Throws the stream's failure, translated as {@link #call} does, once it failed.
         */
        public synchronized T poll()
        {
            if (failure != null) {
                throw failure;
            }
            T response = buffer.poll();
            if (response != null && !completed && !closed) {
                // room for one more: ask the sidecar for it
                current.request(1);
            }
            return response;
        }

        /** Completes when a response can be polled, or the stream completed, failed or was closed. */
        public synchronized CompletableFuture<Void> whenReady()
        {
            if (!buffer.isEmpty() || ended()) {
                return completedFuture(null);
            }
            if (ready.isDone()) {
                ready = new CompletableFuture<>();
            }
            return ready;
        }

        /** Whether the sidecar completed the stream and every response was polled. */
        public synchronized boolean isFinished()
        {
            return completed && buffer.isEmpty();
        }

        /** Cancels the call, when it is still open; responses not polled yet are dropped. */
        @Override
        public void close()
        {
            CompletableFuture<Void> wake;
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                buffer.clear();
                if (current != null && !completed && failure == null) {
                    current.cancel("the caller closed the stream");
                }
                wake = ready;
            }
            wake.complete(null);
        }

        @GuardedBy("this")
        private boolean ended()
        {
            return completed || failure != null || closed;
        }

        @GuardedBy("this")
        private void start()
        {
            Endpoint endpoint = endpoints.get((firstEndpoint + attempts) % endpoints.size());
            attempts++;
            Attempt attempt = new Attempt(endpoint);
            current = attempt;
            // no gRPC deadline: it would bound the whole stream, however slowly the caller consumes it
            call.start(PruningServiceGrpc.newStub(endpoint.channel()), attempt);
        }

        /** The attempt failed: retry it while nothing arrived yet, else fail the stream. Returns what to wake, if anything. */
        @GuardedBy("this")
        private CompletableFuture<Void> failed(Attempt attempt, StatusRuntimeException e)
        {
            attempt.stopTimeout();
            String address = attempt.endpoint.address();
            if (!received && retryable(e.getStatus())) {
                log.debug("lakeprune sidecar %s: %s failed (%s), attempt %s of %s", address, method, e.getStatus().getCode(), attempts, maxAttempts);
                if (attempts < maxAttempts) {
                    start();
                    return null;
                }
                failure = attemptsExhausted(method, address, e);
            }
            else {
                failure = translate(method, address, e);
            }
            return ready;
        }

        /** One call to one address; its callbacks are ignored once it is no longer the stream's current attempt. */
        private final class Attempt
                implements ClientResponseObserver<Object, T>
        {
            private final Endpoint endpoint;
            @GuardedBy("ResponseStream.this")
            private ClientCallStreamObserver<?> requestStream;
            // responses asked of the sidecar that have not arrived yet
            @GuardedBy("ResponseStream.this")
            private int outstanding;
            @GuardedBy("ResponseStream.this")
            private ScheduledFuture<?> timeout;
            // which timeout is the current one: a timeout that fires as a response arrives is stale
            @GuardedBy("ResponseStream.this")
            private long timeoutGeneration;

            Attempt(Endpoint endpoint)
            {
                this.endpoint = endpoint;
            }

            @Override
            public void beforeStart(ClientCallStreamObserver<Object> requestStream)
            {
                synchronized (ResponseStream.this) {
                    this.requestStream = requestStream;
                    requestStream.disableAutoRequestWithInitial(bufferedResponses);
                    outstanding = bufferedResponses;
                    startTimeout();
                }
            }

            @GuardedBy("ResponseStream.this")
            void request(int count)
            {
                if (outstanding == 0) {
                    // the sidecar was held back: its time starts now
                    startTimeout();
                }
                outstanding += count;
                requestStream.request(count);
            }

            @GuardedBy("ResponseStream.this")
            void cancel(String reason)
            {
                stopTimeout();
                if (requestStream != null) {
                    requestStream.cancel(reason, null);
                }
            }

            @GuardedBy("ResponseStream.this")
            private void startTimeout()
            {
                stopTimeout();
                long generation = timeoutGeneration;
                timeout = timeouts.schedule(() -> timedOut(generation), requestTimeout.toMillis(), MILLISECONDS);
            }

            @GuardedBy("ResponseStream.this")
            void stopTimeout()
            {
                timeoutGeneration++;
                if (timeout != null) {
                    timeout.cancel(false);
                    timeout = null;
                }
            }

            private void timedOut(long generation)
            {
                CompletableFuture<Void> wake;
                synchronized (ResponseStream.this) {
                    if (current != this || ended() || generation != timeoutGeneration) {
                        return;
                    }
                    String reason = format("no response within %s", requestTimeout);
                    cancel(reason);
                    wake = failed(this, Status.DEADLINE_EXCEEDED.withDescription(reason).asRuntimeException());
                }
                if (wake != null) {
                    wake.complete(null);
                }
            }

            @Override
            public void onNext(T response)
            {
                CompletableFuture<Void> wake;
                synchronized (ResponseStream.this) {
                    if (current != this || ended()) {
                        return;
                    }
                    received = true;
                    buffer.add(response);
                    outstanding--;
                    if (outstanding > 0) {
                        startTimeout();
                    }
                    else {
                        stopTimeout();
                    }
                    wake = ready;
                }
                wake.complete(null);
            }

            @Override
            public void onError(Throwable t)
            {
                StatusRuntimeException e = t instanceof StatusRuntimeException statusException
                        ? statusException
                        : Status.fromThrowable(t).asRuntimeException(Status.trailersFromThrowable(t));
                CompletableFuture<Void> wake;
                synchronized (ResponseStream.this) {
                    if (current != this || ended()) {
                        return;
                    }
                    wake = failed(this, e);
                }
                if (wake != null) {
                    wake.complete(null);
                }
            }

            @Override
            public void onCompleted()
            {
                CompletableFuture<Void> wake;
                synchronized (ResponseStream.this) {
                    if (current != this || ended()) {
                        return;
                    }
                    stopTimeout();
                    completed = true;
                    wake = ready;
                }
                wake.complete(null);
            }
        }
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
        timeouts.shutdownNow();
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
