package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import io.trino.spi.SplitWeight;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * A byte range of one Parquet data file, exactly as the sidecar returned it, and the values of the
 * file's own partition path. Its weight is its size relative to a standard 64 MB split (at least
 * 0.05), as the Hive connector weighs its splits: Trino bounds the splits queued per task by total
 * weight, so a table of many small files keeps every driver busy instead of feeding them 16
 * standard-weight splits at a time. The whole file's size, when the sidecar sends it, lets the
 * reader open an object-store file without asking the store for it (one request less per split).
 */
public record LakepruneSplit(String path, long start, long length, long rowCount, OptionalLong fileSize, List<PartitionKey> partitionKeys)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(LakepruneSplit.class);
    static final long STANDARD_SPLIT_BYTES = 64L << 20;
    static final double MINIMUM_WEIGHT = 0.05;

    /** One column of the file's partition path; an empty value is NULL. */
    public record PartitionKey(String name, Optional<String> value)
    {
        public PartitionKey
        {
            requireNonNull(name, "name is null");
            requireNonNull(value, "value is null");
        }
    }

    public LakepruneSplit
    {
        requireNonNull(path, "path is null");
        requireNonNull(fileSize, "fileSize is null");
        partitionKeys = ImmutableList.copyOf(requireNonNull(partitionKeys, "partitionKeys is null"));
    }

    @Override
    public SplitWeight getSplitWeight()
    {
        return SplitWeight.fromProportion(Math.clamp((double) length / STANDARD_SPLIT_BYTES, MINIMUM_WEIGHT, 1.0));
    }

    @Override
    public Map<String, String> getSplitInfo()
    {
        return Map.of("path", path, "start", Long.toString(start), "length", Long.toString(length), "rowCount", Long.toString(rowCount));
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + estimatedSizeOf(path) + estimatedSizeOf(partitionKeys, key -> estimatedSizeOf(key.name()) + estimatedSizeOf(key.value().orElse("")));
    }
}
