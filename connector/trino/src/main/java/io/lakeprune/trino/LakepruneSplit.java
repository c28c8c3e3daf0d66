package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TextFormat;
import io.trino.spi.TrinoException;
import io.trino.spi.SplitWeight;
import io.trino.spi.connector.ConnectorSplit;
import lakeprune.v1.Predicate;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static io.airlift.slice.SizeOf.sizeOf;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT;
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

    /**
     * One column of the file's partition path: its typed value as the sidecar sent it, the bytes of
     * a {@code lakeprune.v1.Value} (none set: NULL), decoded where the column's type is at hand.
     */
    public record PartitionKey(String name, byte[] value)
    {
        public PartitionKey
        {
            requireNonNull(name, "name is null");
            requireNonNull(value, "value is null");
        }

        public static PartitionKey of(String name, Predicate.Value value)
        {
            return new PartitionKey(name, value.toByteArray());
        }

        public Predicate.Value typedValue()
        {
            try {
                return Predicate.Value.parseFrom(value);
            }
            catch (InvalidProtocolBufferException e) {
                throw new TrinoException(LAKEPRUNE_INVALID_SPLIT, "Partition value of column %s is not a lakeprune.v1.Value".formatted(name), e);
            }
        }

        @Override
        public boolean equals(Object other)
        {
            return other instanceof PartitionKey key && name.equals(key.name) && Arrays.equals(value, key.value);
        }

        @Override
        public int hashCode()
        {
            return 31 * name.hashCode() + Arrays.hashCode(value);
        }

        @Override
        public String toString()
        {
            return name + "=" + TextFormat.shortDebugString(typedValue());
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
        return INSTANCE_SIZE + estimatedSizeOf(path) + estimatedSizeOf(partitionKeys, key -> estimatedSizeOf(key.name()) + sizeOf(key.value()));
    }
}
