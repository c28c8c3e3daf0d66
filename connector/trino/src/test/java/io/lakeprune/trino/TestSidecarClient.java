package io.lakeprune.trino;

import io.airlift.units.Duration;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.trino.spi.ErrorType;
import io.trino.spi.TrinoException;
import lakeprune.v1.PruningServiceGrpc;
import lakeprune.v1.PruningServiceOuterClass.ListTablesRequest;
import lakeprune.v1.PruningServiceOuterClass.ListTablesResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_BAD_DATA;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_INVALID_REQUEST;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_SIDECAR_UNAVAILABLE;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_UNAUTHENTICATED;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TestSidecarClient
{
    private final List<Server> servers = new ArrayList<>();
    private final List<SidecarClient> clients = new ArrayList<>();

    /** A sidecar that fails its first {@code failures} calls with {@code status}, then answers. */
    private static class FakeSidecar
            extends PruningServiceGrpc.PruningServiceImplBase
    {
        private final AtomicInteger calls = new AtomicInteger();
        private final int failures;
        private final Status status;
        private final boolean hang;
        private final Metadata trailers;

        FakeSidecar(int failures, Status status, boolean hang)
        {
            this(failures, status, hang, new Metadata());
        }

        FakeSidecar(int failures, Status status, boolean hang, Metadata trailers)
        {
            this.failures = failures;
            this.status = status;
            this.hang = hang;
            this.trailers = trailers;
        }

        @Override
        public void listTables(ListTablesRequest request, StreamObserver<ListTablesResponse> responseObserver)
        {
            int call = calls.incrementAndGet();
            if (hang) {
                return; // never answers: only the deadline ends the call
            }
            if (call <= failures) {
                responseObserver.onError(status.asRuntimeException(trailers));
                return;
            }
            responseObserver.onNext(ListTablesResponse.newBuilder().addSchemas("demo").build());
            responseObserver.onCompleted();
        }
    }

    private String serve(String name, FakeSidecar sidecar)
            throws IOException
    {
        servers.add(InProcessServerBuilder.forName(name).addService(sidecar).build().start());
        return name;
    }

    private SidecarClient client(Duration timeout, int attempts, String... names)
    {
        List<SidecarClient.Endpoint> endpoints = new ArrayList<>();
        for (String name : names) {
            endpoints.add(new SidecarClient.Endpoint(name, InProcessChannelBuilder.forName(name).build()));
        }
        SidecarClient client = new SidecarClient(endpoints, timeout, attempts);
        clients.add(client);
        return client;
    }

    @AfterEach
    void tearDown()
    {
        clients.forEach(SidecarClient::close);
        servers.forEach(Server::shutdownNow);
    }

    private static ListTablesResponse listTables(SidecarClient client)
    {
        return client.call("ListTables", stub -> stub.listTables(ListTablesRequest.getDefaultInstance()));
    }

    @Test
    void testRetriesUnavailableThenSucceeds()
            throws IOException
    {
        FakeSidecar sidecar = new FakeSidecar(2, Status.UNAVAILABLE.withDescription("restarting"), false);
        SidecarClient client = client(new Duration(5, SECONDS), 3, serve("flaky", sidecar));
        assertThat(listTables(client).getSchemasList()).containsExactly("demo");
        assertThat(sidecar.calls.get()).isEqualTo(3);
    }

    @Test
    void testGivesUpAfterMaxAttemptsNamingTheAddresses()
            throws IOException
    {
        FakeSidecar sidecar = new FakeSidecar(10, Status.UNAVAILABLE, false);
        SidecarClient client = client(new Duration(5, SECONDS), 3, serve("down-1", sidecar));
        assertThatThrownBy(() -> listTables(client))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_SIDECAR_UNAVAILABLE.toErrorCode()))
                .hasMessageContaining("down-1")
                .hasMessageContaining("ListTables")
                .hasMessageContaining("3 attempt");
        assertThat(sidecar.calls.get()).isEqualTo(3);
    }

    @Test
    void testMovesToTheNextAddress()
            throws IOException
    {
        // nothing serves "nowhere": its calls fail UNAVAILABLE at once
        FakeSidecar healthy = new FakeSidecar(0, Status.OK, false);
        SidecarClient client = client(new Duration(5, SECONDS), 2, "nowhere", serve("healthy", healthy));
        for (int i = 0; i < 4; i++) {
            assertThat(listTables(client).getSchemasList()).containsExactly("demo");
        }
        assertThat(healthy.calls.get()).isEqualTo(4);
    }

    @Test
    void testCallsAlternateOverTheAddresses()
            throws Exception
    {
        // the addresses of `lakeprune serve --worker-grpc-port`, one worker each: concurrent scans'
        // calls split evenly, however the connections were made
        FakeSidecar first = new FakeSidecar(0, Status.OK, false);
        FakeSidecar second = new FakeSidecar(0, Status.OK, false);
        SidecarClient client = client(new Duration(5, SECONDS), 1, serve("worker-1", first), serve("worker-2", second));
        ExecutorService scans = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int scan = 0; scan < 4; scan++) {
                running.add(scans.submit(() -> {
                    for (int call = 0; call < 25; call++) {
                        listTables(client);
                    }
                }));
            }
            for (Future<?> scan : running) {
                scan.get();
            }
        }
        finally {
            scans.shutdownNow();
        }
        assertThat(first.calls.get()).isEqualTo(50);
        assertThat(second.calls.get()).isEqualTo(50);
    }

    @Test
    void testHangingSidecarFailsWithinTheDeadline()
            throws IOException
    {
        FakeSidecar hanging = new FakeSidecar(0, Status.OK, true);
        SidecarClient client = client(new Duration(200, MILLISECONDS), 2, serve("hanging", hanging));
        long start = System.nanoTime();
        assertThatThrownBy(() -> listTables(client))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_SIDECAR_UNAVAILABLE.toErrorCode()))
                .hasMessageContaining("hanging")
                .hasMessageContaining("did not answer within 200.00ms");
        long elapsedMillis = MILLISECONDS.convert(System.nanoTime() - start, NANOSECONDS);
        // two attempts of 200 ms each, and no more
        assertThat(elapsedMillis).isBetween(350L, 3_000L);
        assertThat(hanging.calls.get()).isEqualTo(2);
    }

    @Test
    void testNotFoundIsNotRetried()
            throws IOException
    {
        FakeSidecar sidecar = new FakeSidecar(10, Status.NOT_FOUND.withDescription("unknown schema 'nope'"), false);
        SidecarClient client = client(new Duration(5, SECONDS), 3, serve("not-found", sidecar));
        assertThatThrownBy(() -> listTables(client))
                .isInstanceOf(SidecarClient.NotFoundException.class)
                .hasMessage("unknown schema 'nope'");
        assertThat(sidecar.calls.get()).isEqualTo(1);
    }

    @Test
    void testInvalidArgumentIsAUserError()
            throws IOException
    {
        FakeSidecar sidecar = new FakeSidecar(10, Status.INVALID_ARGUMENT.withDescription("unknown column 'x'"), false);
        SidecarClient client = client(new Duration(5, SECONDS), 3, serve("invalid", sidecar));
        assertThatThrownBy(() -> listTables(client))
                .isInstanceOfSatisfying(TrinoException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_INVALID_REQUEST.toErrorCode());
                    assertThat(e.getErrorCode().getType()).isEqualTo(ErrorType.USER_ERROR);
                })
                .hasMessageContaining("unknown column 'x'")
                .hasMessageContaining("invalid");
        assertThat(sidecar.calls.get()).isEqualTo(1);
    }

    @Test
    void testUnauthenticated()
            throws IOException
    {
        FakeSidecar sidecar = new FakeSidecar(10, Status.UNAUTHENTICATED.withDescription("invalid bearer token"), false);
        SidecarClient client = client(new Duration(5, SECONDS), 3, serve("auth", sidecar));
        assertThatThrownBy(() -> listTables(client))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_UNAUTHENTICATED.toErrorCode()))
                .hasMessageContaining("lakeprune.sidecar.token");
    }

    @Test
    void testADamagedTableIsBadData()
            throws IOException
    {
        Metadata trailers = new Metadata();
        trailers.put(SidecarClient.REASON, SidecarClient.TABLE_DAMAGED);
        FakeSidecar sidecar = new FakeSidecar(10, Status.FAILED_PRECONDITION.withDescription("table lake.t is damaged: ..."), false, trailers);
        SidecarClient client = client(new Duration(5, SECONDS), 3, serve("damaged", sidecar));
        assertThatThrownBy(() -> listTables(client))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_BAD_DATA.toErrorCode()))
                .hasMessageContaining("is damaged");
        assertThat(sidecar.calls.get()).isEqualTo(1);
    }
}
