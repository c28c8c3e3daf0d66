package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
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
import io.trino.spi.predicate.TupleDomain;
import lakeprune.v1.PruningServiceOuterClass.PartitionValue;
import lakeprune.v1.PruningServiceOuterClass.PruneRequest;
import lakeprune.v1.PruningServiceOuterClass.PruneResponse;
import lakeprune.v1.PruningServiceOuterClass.Split;
import lakeprune.v1.PruningServiceOuterClass.TableName;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.CompletableFuture.completedFuture;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

/**
 * Splits from the sidecar's PruneStream, for the table handle's predicate ANDed with the query's
 * dynamic filter. When the dynamic filter covers a column the sidecar declared prunable (the
 * table handle's prunableColumns: a partition column, or one an index or column statistics can
 * use), split enumeration first waits, up to the session's dynamic_filtering_wait_timeout, for the
 * filter to complete, then prunes with whatever it has narrowed to by then. A dynamic filter on
 * other columns cannot remove a file: splits flow at once, and Trino still applies the filter to
 * the rows it reads. The connector decides nothing about pruning here: it only intersects the
 * filter's columns with what the sidecar declared.
 * A file larger than the session's max_split_size comes as several splits of consecutive byte
 * ranges (cut by the sidecar), as Hive and Iceberg split files, so that a large file is read by
 * several drivers.
 */
public class LakepruneSplitManager
        implements ConnectorSplitManager
{
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

    List<ConnectorSplit> prune(LakepruneTableHandle table, TupleDomain<LakepruneColumnHandle> predicate, long maxSplitBytes)
    {
        PruneRequest.Builder request = PruneRequest.newBuilder()
                .setTable(TableName.newBuilder().setSchema(table.schemaName()).setTable(table.tableName()))
                .setSnapshot(table.snapshot().orElse(""))
                .setMaxSplitBytes(maxSplitBytes);
        if (!predicate.isAll()) {
            request.setPredicate(DomainEncoder.encode(predicate));
        }
        List<Split> splits;
        try {
            splits = client.call("PruneStream", stub -> {
                List<Split> all = new ArrayList<>();
                Iterator<PruneResponse> responses = stub.pruneStream(request.build());
                responses.forEachRemaining(response -> all.addAll(response.getSplitsList()));
                return all;
            });
        }
        catch (SidecarClient.NotFoundException e) {
            throw new TableNotFoundException(table.toSchemaTableName(), e.getMessage());
        }
        return splits.stream().map(LakepruneSplitManager::toSplit).collect(toImmutableList());
    }

    static LakepruneSplit toSplit(Split split)
    {
        ImmutableList.Builder<LakepruneSplit.PartitionKey> keys = ImmutableList.builder();
        for (PartitionValue value : split.getPartitionValuesList()) {
            keys.add(new LakepruneSplit.PartitionKey(value.getColumn(), value.hasValue() ? Optional.of(value.getValue()) : Optional.empty()));
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
        private List<ConnectorSplit> splits;
        private int position;

        PruneSplitSource(LakepruneTableHandle table, DynamicFilter dynamicFilter, long waitDeadlineNanos, long maxSplitBytes)
        {
            this.table = table;
            this.dynamicFilter = dynamicFilter;
            this.waitDeadlineNanos = waitDeadlineNanos;
            this.waitForDynamicFilter = prunesBy(table, dynamicFilter);
            this.maxSplitBytes = maxSplitBytes;
        }

        @Override
        public CompletableFuture<ConnectorSplitBatch> getNextBatch(int maxSize)
        {
            if (splits == null) {
                long remaining = waitDeadlineNanos - System.nanoTime();
                if (waitForDynamicFilter && dynamicFilter.isAwaitable() && !dynamicFilter.isComplete() && remaining > 0) {
                    // come back when the dynamic filter narrowed, or the wait is over
                    return dynamicFilter.isBlocked()
                            .thenApply(ignored -> new ConnectorSplitBatch(ImmutableList.of(), false))
                            .completeOnTimeout(new ConnectorSplitBatch(ImmutableList.of(), false), remaining, NANOSECONDS);
                }
                TupleDomain<LakepruneColumnHandle> predicate = predicate(table, dynamicFilter);
                splits = predicate.isNone() ? ImmutableList.of() : prune(table, predicate, maxSplitBytes);
            }
            int end = Math.min(splits.size(), position + maxSize);
            List<ConnectorSplit> batch = splits.subList(position, end);
            position = end;
            return completedFuture(new ConnectorSplitBatch(ImmutableList.copyOf(batch), position >= splits.size()));
        }

        @Override
        public void close() {}

        @Override
        public boolean isFinished()
        {
            return splits != null && position >= splits.size();
        }
    }
}
