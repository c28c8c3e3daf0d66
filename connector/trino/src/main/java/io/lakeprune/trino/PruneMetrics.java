package io.lakeprune.trino;

import com.google.common.collect.ImmutableMap;
import io.airlift.units.Duration;
import io.trino.plugin.base.metrics.DurationTiming;
import io.trino.plugin.base.metrics.LongCount;
import io.trino.spi.metrics.Metric;
import io.trino.spi.metrics.Metrics;
import lakeprune.v1.PruningServiceOuterClass.IndexReport;
import lakeprune.v1.PruningServiceOuterClass.PruneResponse;

import java.util.Optional;
import java.util.OptionalLong;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

/**
 * A scan's prune summary as the split source's metrics, which Trino shows under "splits generation
 * metrics" in {@code EXPLAIN ANALYZE VERBOSE} (and keeps in the query's stage statistics): the files
 * the sidecar considered and kept, its fallbacks, how long the prune took and the wait for a dynamic
 * filter before it, and for every index of the table the files it pruned or, when it pruned none, why
 * (the sidecar's report per index, its words in the metric's name, since a metric holds numbers
 * only). Values only: the sidecar decided all of it.
 */
final class PruneMetrics
{
    static final String FILES = "lakeprune files considered";
    static final String FILES_KEPT = "lakeprune files kept";
    static final String FALLBACKS = "lakeprune fallbacks";
    static final String PRUNE_TIME = "lakeprune prune time";
    static final String DYNAMIC_FILTER_WAIT = "lakeprune dynamic filter wait";
    static final String INDEX = "lakeprune index ";

    private PruneMetrics() {}

    /**
     * The metrics of a prune: {@code summary} is the stream's last message (empty while the prune is
     * under way, or when none was asked for: a predicate that matches nothing), {@code pruneNanos}
     * how long it took, {@code waitNanos} how long split enumeration waited for a dynamic filter.
     */
    static Metrics of(Optional<PruneResponse> summary, OptionalLong pruneNanos, OptionalLong waitNanos)
    {
        ImmutableMap.Builder<String, Metric<?>> metrics = ImmutableMap.builder();
        summary.ifPresent(header -> {
            metrics.put(FILES, new LongCount(header.getFilesTotal()));
            metrics.put(FILES_KEPT, new LongCount(header.getFilesSelected()));
            metrics.put(FALLBACKS, new LongCount(header.getFallbacks()));
            for (IndexReport index : header.getIndexReportList()) {
                metrics.put(indexKey(index), new LongCount(index.getFilesPruned()));
            }
        });
        pruneNanos.ifPresent(nanos -> metrics.put(PRUNE_TIME, timing(nanos)));
        waitNanos.ifPresent(nanos -> metrics.put(DYNAMIC_FILTER_WAIT, timing(nanos)));
        return new Metrics(metrics.buildKeepingLast());
    }

    /**
     * "lakeprune index by_driver (secondary_index) files pruned", or "... pruned none: why". Trino
     * prints a metric's name between single quotes, so the sidecar's words have theirs as double.
     */
    static String indexKey(IndexReport index)
    {
        String name = INDEX + index.getIndex() + " (" + index.getKind() + ")";
        if (index.getFilesPruned() > 0 || !index.hasWhyNot()) {
            return name + " files pruned";
        }
        return name + " pruned none: " + index.getWhyNot().replace('\'', '"');
    }

    private static DurationTiming timing(long nanos)
    {
        return new DurationTiming(new Duration(nanos, NANOSECONDS));
    }
}
