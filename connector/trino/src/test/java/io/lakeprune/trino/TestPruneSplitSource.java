package io.lakeprune.trino;

import io.airlift.units.Duration;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.ConnectorSplitSource.ConnectorSplitBatch;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.TableNotFoundException;
import io.trino.spi.predicate.TupleDomain;
import io.trino.plugin.base.metrics.LongCount;
import io.trino.spi.metrics.Metric;
import lakeprune.v1.PruningServiceGrpc;
import lakeprune.v1.PruningServiceOuterClass.IndexReport;
import lakeprune.v1.PruningServiceOuterClass.PruneRequest;
import lakeprune.v1.PruningServiceOuterClass.PruneResponse;
import lakeprune.v1.PruningServiceOuterClass.Split;
import lakeprune.v1.PruningServiceOuterClass.StorageRequests;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_SIDECAR_UNAVAILABLE;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The split source streams PruneStream's responses: a batch reaches Trino while the sidecar is still
 * sending, close() cancels the call, and a stream is retried only before its first response.
 */
class TestPruneSplitSource
{
    private static final LakepruneTableHandle TABLE = new LakepruneTableHandle("demo", "trips", Optional.of("20240101000000000"), "/wh/trips", Set.of(), TupleDomain.all(), Optional.empty(), Optional.empty());

    /** What the fake sidecar does on its {@code call}-th PruneStream call (1-based). */
    private interface Behaviour
    {
        void pruneStream(int call, PruneRequest request, ServerCallStreamObserver<PruneResponse> responses)
                throws Exception;
    }

    private final AtomicInteger calls = new AtomicInteger();
    // released at the end of each test, so that no server thread stays blocked
    private final CountDownLatch testOver = new CountDownLatch(1);
    private final List<Server> servers = new ArrayList<>();
    private final List<SidecarClient> clients = new ArrayList<>();
    private final List<ConnectorSplitSource> sources = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        testOver.countDown();
        sources.forEach(ConnectorSplitSource::close);
        clients.forEach(SidecarClient::close);
        servers.forEach(Server::shutdownNow);
    }

    private ConnectorSplitSource splitSource(Behaviour behaviour, Duration timeout, int attempts)
            throws IOException
    {
        return splitSource(TABLE, behaviour, timeout, attempts);
    }

    private ConnectorSplitSource splitSource(LakepruneTableHandle table, Behaviour behaviour, Duration timeout, int attempts)
            throws IOException
    {
        String name = "split-source-" + System.nanoTime();
        servers.add(InProcessServerBuilder.forName(name).addService(new PruningServiceGrpc.PruningServiceImplBase()
        {
            @Override
            public void pruneStream(PruneRequest request, StreamObserver<PruneResponse> responseObserver)
            {
                try {
                    behaviour.pruneStream(calls.incrementAndGet(), request, (ServerCallStreamObserver<PruneResponse>) responseObserver);
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }
        }).build().start());
        SidecarClient client = new SidecarClient(List.of(new SidecarClient.Endpoint(name, InProcessChannelBuilder.forName(name).build())), timeout, attempts);
        clients.add(client);
        ConnectorSplitSource source = new LakepruneSplitManager(client).splitSource(table, DynamicFilter.EMPTY, System.nanoTime(), 0);
        sources.add(source);
        return source;
    }

    private static PruneResponse response(int first, int count)
    {
        PruneResponse.Builder response = PruneResponse.newBuilder();
        for (int file = first; file < first + count; file++) {
            response.addSplits(Split.newBuilder().setPath(path(file)).setStart(0).setLength(10).setRowCount(1).setFileSize(10));
        }
        return response.build();
    }

    private static String path(int file)
    {
        return "/wh/trips/f%06d.parquet".formatted(file);
    }

    private static List<String> paths(List<ConnectorSplit> splits)
    {
        return splits.stream().map(split -> ((LakepruneSplit) split).path()).toList();
    }

    private static List<String> paths(int first, int count)
    {
        List<String> paths = new ArrayList<>();
        for (int file = first; file < first + count; file++) {
            paths.add(path(file));
        }
        return paths;
    }

    /** The next batch, as Trino would get it: a failure is thrown whether it came at once or later. */
    private static ConnectorSplitBatch nextBatch(ConnectorSplitSource source, int maxSize)
            throws Exception
    {
        CompletableFuture<ConnectorSplitBatch> batch = source.getNextBatch(maxSize);
        try {
            return batch.get(10, SECONDS);
        }
        catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw e;
        }
    }

    /** Every split still to come, batch by batch, until the source says there are no more. */
    private static List<ConnectorSplit> drain(ConnectorSplitSource source, int maxSize)
            throws Exception
    {
        List<ConnectorSplit> splits = new ArrayList<>();
        while (true) {
            ConnectorSplitBatch batch = nextBatch(source, maxSize);
            assertThat(batch.getSplits().size()).isLessThanOrEqualTo(maxSize);
            splits.addAll(batch.getSplits());
            if (batch.isNoMoreSplits()) {
                assertThat(source.isFinished()).isTrue();
                return splits;
            }
        }
    }

    @Test
    @Timeout(20)
    void testFirstBatchArrivesWhileTheStreamIsOpen()
            throws Exception
    {
        CountDownLatch restMaySend = new CountDownLatch(1);
        ConnectorSplitSource source = splitSource((call, request, responses) -> {
            responses.onNext(response(0, 3));
            // the rest of the table is still being planned
            if (restMaySend.await(15, SECONDS)) {
                responses.onNext(response(3, 4));
                responses.onNext(response(7, 2));
                responses.onCompleted();
            }
        }, new Duration(10, SECONDS), 2);

        ConnectorSplitBatch first = nextBatch(source, 2);
        assertThat(paths(first.getSplits())).containsExactly(path(0), path(1));
        assertThat(first.isNoMoreSplits()).isFalse();
        assertThat(source.isFinished()).isFalse();
        // what arrived is handed out, without waiting for the rest
        ConnectorSplitBatch second = nextBatch(source, 10);
        assertThat(paths(second.getSplits())).containsExactly(path(2));
        assertThat(second.isNoMoreSplits()).isFalse();
        assertThat(source.isFinished()).isFalse();
        // nothing more has arrived: the next batch waits for the sidecar
        CompletableFuture<ConnectorSplitBatch> waiting = source.getNextBatch(10);
        assertThat(waiting).isNotDone();

        restMaySend.countDown();
        List<ConnectorSplit> rest = new ArrayList<>(waiting.get(10, SECONDS).getSplits());
        if (!waiting.get().isNoMoreSplits()) {
            rest.addAll(drain(source, 3));
        }
        // every split exactly once, in the sidecar's order
        assertThat(paths(rest)).containsExactlyElementsOf(paths(3, 6));
        assertThat(source.isFinished()).isTrue();
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    @Timeout(20)
    void testCloseCancelsTheCall()
            throws Exception
    {
        CountDownLatch cancelled = new CountDownLatch(1);
        ConnectorSplitSource source = splitSource((call, request, responses) -> {
            responses.setOnCancelHandler(cancelled::countDown);
            responses.onNext(response(0, 5));
            // and the rest never comes (returning, as the call's callbacks, the cancel handler's
            // among them, wait for this method)
        }, new Duration(10, SECONDS), 2);

        assertThat(paths(nextBatch(source, 10).getSplits())).containsExactlyElementsOf(paths(0, 5));
        CompletableFuture<ConnectorSplitBatch> waiting = source.getNextBatch(10);
        assertThat(waiting).isNotDone();
        source.close();
        assertThat(cancelled.await(5, SECONDS)).as("the sidecar saw the call cancelled").isTrue();
        // a batch Trino still waits for is not left hanging
        waiting.handle((batch, failure) -> null).get(5, SECONDS);
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    @Timeout(20)
    void testFailureAfterTheFirstResponseIsNotRetried()
            throws Exception
    {
        CountDownLatch firstTaken = new CountDownLatch(1);
        ConnectorSplitSource source = splitSource((call, request, responses) -> {
            responses.onNext(response(0, 4));
            if (firstTaken.await(15, SECONDS)) {
                // retryable before the first response; after it, a retry would return files twice
                responses.onError(Status.UNAVAILABLE.withDescription("storage went away").asRuntimeException());
            }
        }, new Duration(10, SECONDS), 3);

        assertThat(paths(nextBatch(source, 10).getSplits())).containsExactlyElementsOf(paths(0, 4));
        firstTaken.countDown();
        assertThatThrownBy(() -> drain(source, 10))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_SIDECAR_UNAVAILABLE.toErrorCode()))
                .hasMessageContaining("split-source-")
                .hasMessageContaining("PruneStream")
                .hasMessageContaining("storage went away");
        assertThat(calls.get()).isEqualTo(1);
        assertThat(source.isFinished()).isFalse();
    }

    @Test
    @Timeout(20)
    void testFailureBeforeAnyResponseIsRetried()
            throws Exception
    {
        ConnectorSplitSource source = splitSource((call, request, responses) -> {
            if (call == 1) {
                responses.onError(Status.UNAVAILABLE.withDescription("restarting").asRuntimeException());
                return;
            }
            responses.onNext(response(0, 3));
            responses.onNext(response(3, 3));
            responses.onCompleted();
        }, new Duration(10, SECONDS), 3);

        assertThat(paths(drain(source, 4))).containsExactlyElementsOf(paths(0, 6));
        assertThat(calls.get()).isEqualTo(2);
    }

    @Test
    @Timeout(20)
    void testSidecarThatNeverAnswersFailsWithinTheDeadline()
            throws Exception
    {
        ConnectorSplitSource source = splitSource((call, request, responses) -> testOver.await(15, SECONDS), new Duration(200, MILLISECONDS), 2);
        long start = System.nanoTime();
        assertThatThrownBy(() -> drain(source, 10))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_SIDECAR_UNAVAILABLE.toErrorCode()))
                .hasMessageContaining("did not answer within 200.00ms")
                .hasMessageContaining("2 attempt");
        // two attempts of 200 ms each, and no more
        assertThat(MILLISECONDS.convert(System.nanoTime() - start, NANOSECONDS)).isBetween(350L, 5_000L);
        assertThat(calls.get()).isEqualTo(2);
    }

    @Test
    @Timeout(20)
    void testSidecarThatStopsAnsweringMidStreamFailsWithoutRetry()
            throws Exception
    {
        ConnectorSplitSource source = splitSource((call, request, responses) -> {
            responses.onNext(response(0, 2));
            testOver.await(15, SECONDS);
        }, new Duration(1, SECONDS), 3);

        assertThat(paths(nextBatch(source, 10).getSplits())).containsExactlyElementsOf(paths(0, 2));
        assertThatThrownBy(() -> drain(source, 10))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LAKEPRUNE_SIDECAR_UNAVAILABLE.toErrorCode()))
                .hasMessageContaining("PruneStream")
                .hasMessageContaining("DEADLINE_EXCEEDED");
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    @Timeout(20)
    void testASlowConsumerHoldsTheSidecarBackAndIsNotTimedOut()
            throws Exception
    {
        int total = 100;
        AtomicInteger sent = new AtomicInteger();
        ConnectorSplitSource source = splitSource((call, request, responses) -> {
            // send only what the client asked for: its flow control is what holds the sidecar back
            responses.setOnReadyHandler(() -> {
                synchronized (sent) {
                    while (responses.isReady() && sent.get() < total) {
                        responses.onNext(response(sent.getAndIncrement(), 1));
                    }
                    if (sent.get() == total && !responses.isCancelled()) {
                        sent.incrementAndGet();
                        responses.onCompleted();
                    }
                }
            });
        }, new Duration(1, SECONDS), 2);

        List<ConnectorSplit> splits = new ArrayList<>(nextBatch(source, 1).getSplits());
        // Trino does not ask for a while (its workers' queues are full): longer than the timeout
        Thread.sleep(2_500);
        assertThat(sent.get()).as("responses sent while the consumer waits").isLessThan(10);
        splits.addAll(drain(source, 7));
        assertThat(paths(splits)).containsExactlyElementsOf(paths(0, total));
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    @Timeout(20)
    void testNotFoundIsTableNotFound()
            throws Exception
    {
        ConnectorSplitSource source = splitSource((call, request, responses) ->
                responses.onError(Status.NOT_FOUND.withDescription("snapshot 20240101000000000 of demo.trips is not readable").asRuntimeException()),
                new Duration(10, SECONDS), 3);
        assertThatThrownBy(() -> drain(source, 10))
                .isInstanceOf(TableNotFoundException.class)
                .hasMessageContaining("is not readable");
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    @Timeout(20)
    void testNonePredicateCallsNoSidecar()
            throws Exception
    {
        ConnectorSplitSource source = splitSource(TABLE.withConstraint(TupleDomain.none()), (call, request, responses) -> {
            throw new AssertionError("no call expected");
        }, new Duration(10, SECONDS), 3);
        assertThat(drain(source, 10)).isEmpty();
        assertThat(calls.get()).isZero();
    }

    @Test
    @Timeout(20)
    void testThePrunesSummaryIsTheSplitSourcesMetrics()
            throws Exception
    {
        List<PruneRequest> requests = new ArrayList<>();
        ConnectorSplitSource source = splitSource((call, request, responses) -> {
            requests.add(request);
            responses.onNext(PruneResponse.newBuilder().setFilesTotal(10).build());
            responses.onNext(response(0, 3));
            responses.onNext(PruneResponse.newBuilder()
                    .setFilesTotal(10)
                    .setFilesSelected(3)
                    .setFallbacks(1)
                    .setStorage(StorageRequests.newBuilder().setLists(1))
                    .addIndexReport(IndexReport.newBuilder().setIndex("record_index").setKind("record_index").setWhyNot("the predicate does not constrain id"))
                    .addIndexReport(IndexReport.newBuilder().setIndex("by_driver").setKind("secondary_index").setFilesPruned(7))
                    .addIndexReport(IndexReport.newBuilder().setIndex("by_note").setKind("text").setWhyNot("the fragment 'ab' is shorter than a trigram"))
                    .build());
            responses.onCompleted();
        }, new Duration(10, SECONDS), 1);
        assertThat(source.getMetrics().getMetrics()).doesNotContainKey(PruneMetrics.FILES_KEPT);
        assertThat(paths(drain(source, 10))).containsExactlyElementsOf(paths(0, 3));
        assertThat(requests).singleElement().extracting(PruneRequest::getExplain).isEqualTo(true);

        Map<String, Metric<?>> metrics = source.getMetrics().getMetrics();
        assertThat(metrics).containsEntry(PruneMetrics.FILES, new LongCount(10))
                .containsEntry(PruneMetrics.FILES_KEPT, new LongCount(3))
                .containsEntry(PruneMetrics.FALLBACKS, new LongCount(1))
                .containsEntry("lakeprune index by_driver (secondary_index) files pruned", new LongCount(7))
                .containsEntry("lakeprune index record_index (record_index) pruned none: the predicate does not constrain id", new LongCount(0))
                // Trino quotes a metric's name with single quotes: the sidecar's become double
                .containsEntry("lakeprune index by_note (text) pruned none: the fragment \"ab\" is shorter than a trigram", new LongCount(0))
                .containsKey(PruneMetrics.PRUNE_TIME)
                // the table handle's columns include no prunable one: nothing was waited for
                .doesNotContainKey(PruneMetrics.DYNAMIC_FILTER_WAIT);
    }
}
