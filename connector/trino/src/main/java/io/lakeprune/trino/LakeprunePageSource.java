package io.lakeprune.trino;

import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.reader.ParquetReader;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.RunLengthEncodedBlock;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.type.Type;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.ObjLongConsumer;
import java.util.function.ToLongFunction;

import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_BAD_DATA;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_CANNOT_READ_FILE;
import static java.util.Objects.requireNonNull;

/**
 * The pages of one split: the Parquet reader's columns, hidden columns computed from them, and
 * constants (partition values, NULLs). Pages stay lazy as the reader's are: a column is decoded only
 * when the engine asks for its block, so a filter that rejects a batch by one column never decodes
 * the others (as Hive's and Iceberg's page sources do).
 */
public class LakeprunePageSource
        implements ConnectorPageSource
{
    private final ParquetReader reader;
    private final List<Channel> channels;
    private boolean closed;
    private long completedPositions;

    /**
     * One output column: the reader's column {@code ordinal}, a hidden column computed from it, or
     * a constant of {@code type}.
     */
    record Channel(int ordinal, Type type, Object value, IndexFunctions.Computation computation)
    {
        static Channel read(int ordinal)
        {
            return new Channel(ordinal, null, null, null);
        }

        static Channel computed(int ordinal, IndexFunctions.Computation computation)
        {
            return new Channel(ordinal, null, null, requireNonNull(computation, "computation is null"));
        }

        static Channel constant(Type type, Object value)
        {
            return new Channel(-1, requireNonNull(type, "type is null"), value, null);
        }

        boolean isRead()
        {
            return ordinal >= 0 && computation == null;
        }

        Block block(SourcePage page, int positions)
        {
            if (ordinal < 0) {
                return RunLengthEncodedBlock.create(type, value, positions);
            }
            Block block = page.getBlock(ordinal);
            return computation == null ? block : computation.applyToBlock(block);
        }
    }

    LakeprunePageSource(ParquetReader reader, List<Channel> channels)
    {
        this.reader = requireNonNull(reader, "reader is null");
        this.channels = List.copyOf(channels);
    }

    @Override
    public long getCompletedBytes()
    {
        return reader.getDataSource().getReadBytes();
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return OptionalLong.of(completedPositions);
    }

    @Override
    public long getReadTimeNanos()
    {
        return reader.getDataSource().getReadTimeNanos();
    }

    @Override
    public boolean isFinished()
    {
        return closed;
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (closed) {
            return null;
        }
        SourcePage page;
        try {
            page = reader.nextPage();
        }
        catch (IOException | RuntimeException e) {
            try {
                close();
            }
            catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw handleException(reader.getDataSource().getId().toString(), e);
        }
        if (page == null) {
            close();
            return null;
        }
        completedPositions += page.getPositionCount();
        return new ChannelPage(page, channels);
    }

    @Override
    public long getMemoryUsage()
    {
        return reader.getMemoryContext().getBytes();
    }

    @Override
    public Metrics getMetrics()
    {
        return reader.getMetrics();
    }

    @Override
    public void close()
    {
        if (closed) {
            return;
        }
        closed = true;
        try {
            reader.close();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static TrinoException handleException(String file, Exception exception)
    {
        if (exception instanceof TrinoException trinoException) {
            return trinoException;
        }
        if (exception instanceof ParquetCorruptionException) {
            return new TrinoException(LAKEPRUNE_BAD_DATA, exception);
        }
        return new TrinoException(LAKEPRUNE_CANNOT_READ_FILE, "Failed to read Parquet file " + file, exception);
    }

    /**
     * The output channels over one lazy page of the reader. Blocks are made on first access and
     * kept; {@link #selectPositions} narrows the reader's page and every block made so far.
     */
    static final class ChannelPage
            implements SourcePage
    {
        private final SourcePage source;
        private final List<Channel> channels;
        private final Block[] blocks;
        private int positionCount;

        ChannelPage(SourcePage source, List<Channel> channels)
        {
            this.source = requireNonNull(source, "source is null");
            this.channels = requireNonNull(channels, "channels is null");
            this.blocks = new Block[channels.size()];
            this.positionCount = source.getPositionCount();
        }

        @Override
        public int getPositionCount()
        {
            return positionCount;
        }

        @Override
        public long getSizeInBytes()
        {
            return source.getSizeInBytes() + madeHere(Block::getSizeInBytes);
        }

        @Override
        public long getRetainedSizeInBytes()
        {
            return source.getRetainedSizeInBytes() + madeHere(Block::getRetainedSizeInBytes);
        }

        /** The sizes of the blocks made so far that are not the reader's own (computed, constant). */
        private long madeHere(ToLongFunction<Block> size)
        {
            long total = 0;
            for (int i = 0; i < blocks.length; i++) {
                if (blocks[i] != null && !channels.get(i).isRead()) {
                    total += size.applyAsLong(blocks[i]);
                }
            }
            return total;
        }

        @Override
        public void retainedBytesForEachPart(ObjLongConsumer<Object> consumer)
        {
            source.retainedBytesForEachPart(consumer);
            for (int i = 0; i < blocks.length; i++) {
                if (blocks[i] != null && !channels.get(i).isRead()) {
                    blocks[i].retainedBytesForEachPart(consumer);
                }
            }
        }

        @Override
        public int getChannelCount()
        {
            return blocks.length;
        }

        @Override
        public Block getBlock(int channel)
        {
            Block block = blocks[channel];
            if (block == null) {
                block = channels.get(channel).block(source, positionCount);
                blocks[channel] = block;
            }
            return block;
        }

        @Override
        public Page getPage()
        {
            for (int channel = 0; channel < blocks.length; channel++) {
                getBlock(channel);
            }
            return new Page(positionCount, blocks.clone());
        }

        @Override
        public void selectPositions(int[] positions, int offset, int size)
        {
            source.selectPositions(positions, offset, size);
            for (int i = 0; i < blocks.length; i++) {
                if (blocks[i] != null) {
                    // a read column comes again from the narrowed source; a constant is remade at
                    // the new size; a computed column keeps the values already computed
                    blocks[i] = channels.get(i).computation() == null ? null : blocks[i].getPositions(positions, offset, size);
                }
            }
            positionCount = size;
        }
    }

    /** A split the dynamic filter excludes entirely. */
    static final class Empty
            implements ConnectorPageSource
    {
        private boolean finished;

        @Override
        public long getCompletedBytes()
        {
            return 0;
        }

        @Override
        public long getReadTimeNanos()
        {
            return 0;
        }

        @Override
        public boolean isFinished()
        {
            return finished;
        }

        @Override
        public SourcePage getNextSourcePage()
        {
            finished = true;
            return null;
        }

        @Override
        public long getMemoryUsage()
        {
            return 0;
        }

        @Override
        public void close()
        {
            finished = true;
        }
    }
}
