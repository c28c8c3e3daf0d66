package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.TableNotFoundException;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.predicate.TupleDomain;
import lakeprune.v1.PruningServiceOuterClass.PartitionValue;
import lakeprune.v1.PruningServiceOuterClass.PruneRequest;
import lakeprune.v1.PruningServiceOuterClass.PruneResponse;
import lakeprune.v1.PruningServiceOuterClass.Split;
import lakeprune.v1.PruningServiceOuterClass.TableName;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

import static java.util.Objects.requireNonNull;
import static java.util.concurrent.CompletableFuture.completedFuture;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

/**
 * Splits from the sidecar's PruneStream, for the table handle's predicate ANDed with the query's
 * dynamic filter, and the handle's text predicate (TextFilter). When the dynamic filter covers a column the sidecar declared prunable (the
 * table handle's prunableColumns: a partition column, or one an index or column statistics can
 * use), split enumeration first waits, up to the session's dynamic_filtering_wait_timeout, for the
 * filter to complete, then prunes with whatever it has narrowed to by then. A dynamic filter on
 * other columns cannot remove a file: splits flow at once, and Trino still applies the filter to
 * the rows it reads. The connector decides nothing about pruning here: it only intersects the
 * filter's columns with what the sidecar declared.
 * A file larger than the session's max_split_size comes as several splits of consecutive byte
 * ranges (cut by the sidecar), as Hive and Iceberg split files, so that a large file is read by
 * several drivers.
 * Splits stream: the PruneStream call starts when the split source is made, or, when it waits for
 * the dynamic filter, when the first batch is asked for after the wait; each batch hands out the splits that arrived so far, or completes when
 * more arrive, so that Trino schedules the first splits of a large table while the sidecar is still
 * sending the rest. Only a few responses are asked of the sidecar ahead of Trino (gRPC flow
 * control), and closing the split source cancels the call.
 * The prune's summary (files considered and kept, the report per index, its time and the wait for
 * the dynamic filter) is the split source's metrics ({@link PruneMetrics}), shown by
 * {@code EXPLAIN ANALYZE VERBOSE}.
 */
public class LakepruneSplitManager
        implements ConnectorSplitManager
{
    // PruneStream responses asked of the sidecar ahead of Trino; each holds up to the sidecar's
    // limits.max_splits_per_response splits
    private static final int BUFFERED_RESPONSES = 2;

    private final SidecarClient client;

    @Inject
    public LakepruneSplitManager(SidecarClient client)
    {
        this.client = requireNonNull(client, "client is null");
    }

    @Override
    public ConnectorSplitSource getSplits(
            ConnectorTransactionHandle transaction,
            ConnectorSession session,
            ConnectorTableHandle tableHandle,
            DynamicFilter dynamicFilter,
            Constraint constraint)
    {
        LakepruneTableHandle table = (LakepruneTableHandle) tableHandle;
        long waitMillis = LakepruneSessionProperties.getDynamicFilteringWaitTimeout(session).toMillis();
        long maxSplitBytes = LakepruneSessionProperties.getMaxSplitSize(session).toBytes();
        return splitSource(table, dynamicFilter, System.nanoTime() + MILLISECONDS.toNanos(waitMillis), maxSplitBytes);
    }

    ConnectorSplitSource splitSource(LakepruneTableHandle table, DynamicFilter dynamicFilter, long waitDeadlineNanos, long maxSplitBytes)
    {
        return new PruneSplitSource(table, dynamicFilter, waitDeadlineNanos, maxSplitBytes);
    }

    /** Whether the sidecar can prune by some column the dynamic filter covers: only then does waiting for it pay. */
    static boolean prunesBy(LakepruneTableHandle table, DynamicFilter dynamicFilter)
    {
        return dynamicFilter.getColumnsCovered().stream()
                .map(column -> ((LakepruneColumnHandle) column).name())
                .anyMatch(table.prunableColumns()::contains);
    }

    /** The predicate a prune request carries: the handle's, ANDed with the dynamic filter's current one. */
    static TupleDomain<LakepruneColumnHandle> predicate(LakepruneTableHandle table, DynamicFilter dynamicFilter)
    {
        TupleDomain<ColumnHandle> dynamic = dynamicFilter.getCurrentPredicate();
        return table.constraint().intersect(dynamic.transformKeys(LakepruneColumnHandle.class::cast));
    }

    /** Starts the PruneStream call; its responses are taken as the split source hands their splits out. */
    SidecarClient.ResponseStream<PruneResponse> prune(LakepruneTableHandle table, TupleDomain<LakepruneColumnHandle> predicate, long maxSplitBytes)
    {
        PruneRequest.Builder request = PruneRequest.newBuilder()
                .setTable(TableName.newBuilder().setSchema(table.schemaName()).setTable(table.tableName()))
                .setSnapshot(table.snapshot().orElse(""))
                .setMaxSplitBytes(maxSplitBytes)
                // the report per index for the scan's metrics (the sidecar makes it for every prune)
                .setExplain(true);
        if (!predicate.isAll()) {
            request.setPredicate(DomainEncoder.encode(predicate));
        }
        table.filter().ifPresent(filter -> request.setFilter(filter.filter()));
        table.text().ifPresent(text -> request.setText(text.predicate()));
        PruneRequest pruneRequest = request.build();
        return client.stream("PruneStream", (stub, responses) -> stub.pruneStream(pruneRequest, responses), BUFFERED_RESPONSES);
    }

    static LakepruneSplit toSplit(Split split)
    {
        ImmutableList.Builder<LakepruneSplit.PartitionKey> keys = ImmutableList.builder();
        for (PartitionValue value : split.getPartitionValuesList()) {
            keys.add(LakepruneSplit.PartitionKey.of(value.getColumn(), value.getTypedValue()));
        }
        // a sidecar before file_size sends 0: the size is then asked of storage
        OptionalLong fileSize = split.getFileSize() > 0 ? OptionalLong.of(split.getFileSize()) : OptionalLong.empty();
        return new LakepruneSplit(split.getPath(), split.getStart(), split.getLength(), split.getRowCount(), fileSize, keys.build());
    }

    private class PruneSplitSource
            implements ConnectorSplitSource
    {
        private final LakepruneTableHandle table;
        private final DynamicFilter dynamicFilter;
        private final long waitDeadlineNanos;
        private final boolean waitForDynamicFilter;
        private final long maxSplitBytes;
        private final long createdNanos;
        @GuardedBy("this")
        private boolean started;
        @GuardedBy("this")
        private long startedNanos;
        // how long split enumeration waited for the dynamic filter, when it did
        @GuardedBy("this")
        private OptionalLong waitedNanos = OptionalLong.empty();
        // the stream's last message (counts, report per index), and when it came
        @GuardedBy("this")
        private Optional<PruneResponse> summary = Optional.empty();
        @GuardedBy("this")
        private OptionalLong pruneNanos = OptionalLong.empty();
        // null until pruning started, and when the predicate matches nothing
        @GuardedBy("this")
        private SidecarClient.ResponseStream<PruneResponse> responses;
        // splits of the responses taken from the stream that were not handed out yet
        @GuardedBy("this")
        private final Deque<ConnectorSplit> pending = new ArrayDeque<>();
        @GuardedBy("this")
        private boolean closed;

        PruneSplitSource(LakepruneTableHandle table, DynamicFilter dynamicFilter, long waitDeadlineNanos, long maxSplitBytes)
        {
            this.table = table;
            this.dynamicFilter = dynamicFilter;
            this.waitDeadlineNanos = waitDeadlineNanos;
            this.waitForDynamicFilter = prunesBy(table, dynamicFilter);
            this.maxSplitBytes = maxSplitBytes;
            this.createdNanos = System.nanoTime();
            if (!mustWait()) {
                // nothing to wait for: the sidecar prunes while Trino schedules the query's stages,
                // as Hive's and Iceberg's split loaders start when their split source is made
                start(predicate(table, dynamicFilter));
            }
        }

        /** Whether split enumeration has yet to wait for the dynamic filter. */
        private boolean mustWait()
        {
            return waitForDynamicFilter && dynamicFilter.isAwaitable() && !dynamicFilter.isComplete() && waitDeadlineNanos - System.nanoTime() > 0;
        }

        @Override
        public CompletableFuture<ConnectorSplitBatch> getNextBatch(int maxSize)
        {
            if (!isStarted()) {
                if (mustWait()) {
                    // come back when the dynamic filter narrowed, or the wait is over
                    return dynamicFilter.isBlocked()
                            .thenApply(ignored -> new ConnectorSplitBatch(ImmutableList.of(), false))
                            .completeOnTimeout(new ConnectorSplitBatch(ImmutableList.of(), false), waitDeadlineNanos - System.nanoTime(), NANOSECONDS);
                }
                start(predicate(table, dynamicFilter));
            }
            ConnectorSplitBatch batch = takeBatch(maxSize);
            if (!batch.getSplits().isEmpty() || batch.isNoMoreSplits()) {
                return completedFuture(batch);
            }
            // nothing has arrived since the last batch: this batch is what arrives next
            CompletableFuture<ConnectorSplitBatch> next = new CompletableFuture<>();
            whenReady().whenComplete((ignored, failure) -> {
                try {
                    next.complete(takeBatch(maxSize));
                }
                catch (RuntimeException e) {
                    next.completeExceptionally(e);
                }
            });
            return next;
        }

        private synchronized boolean isStarted()
        {
            return started;
        }

        private synchronized void start(TupleDomain<LakepruneColumnHandle> predicate)
        {
            started = true;
            startedNanos = System.nanoTime();
            if (waitForDynamicFilter) {
                waitedNanos = OptionalLong.of(startedNanos - createdNanos);
            }
            if (!predicate.isNone() && !closed) {
                responses = prune(table, predicate, maxSplitBytes);
            }
        }

        private synchronized CompletableFuture<Void> whenReady()
        {
            return responses == null ? completedFuture(null) : responses.whenReady();
        }

        /** Up to maxSize of the splits that arrived, without waiting for more; throws the stream's failure. */
        private synchronized ConnectorSplitBatch takeBatch(int maxSize)
        {
            while (responses != null && pending.size() < maxSize) {
                PruneResponse response;
                try {
                    response = responses.poll();
                }
                catch (SidecarClient.NotFoundException e) {
                    throw new TableNotFoundException(table.toSchemaTableName(), e.getMessage());
                }
                if (response == null) {
                    break;
                }
                if (response.hasStorage()) {
                    // only the last message carries what the prune asked of storage
                    summary = Optional.of(response);
                    pruneNanos = OptionalLong.of(System.nanoTime() - startedNanos);
                }
                for (Split split : response.getSplitsList()) {
                    pending.add(toSplit(split));
                }
            }
            ImmutableList.Builder<ConnectorSplit> batch = ImmutableList.builder();
            for (int count = 0; count < maxSize && !pending.isEmpty(); count++) {
                batch.add(pending.poll());
            }
            return new ConnectorSplitBatch(batch.build(), isFinished());
        }

        @Override
        public synchronized Metrics getMetrics()
        {
            return PruneMetrics.of(summary, pruneNanos, waitedNanos);
        }

        @Override
        public synchronized void close()
        {
            closed = true;
            pending.clear();
            if (responses != null) {
                // the query no longer needs splits (finished, failed, or a LIMIT was reached): stop the sidecar
                responses.close();
            }
        }

        @Override
        public synchronized boolean isFinished()
        {
            return started && pending.isEmpty() && (responses == null || responses.isFinished());
        }
    }
}
