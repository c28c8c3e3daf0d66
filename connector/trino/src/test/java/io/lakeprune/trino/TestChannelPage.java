package io.lakeprune.trino;

import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.SourcePage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.ObjLongConsumer;

import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.TypeUtils.readNativeValue;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The page source's pages stay lazy: a channel's block is asked of the reader's page only when the
 * engine asks for it, and narrowing the page to selected positions narrows every channel alike.
 */
class TestChannelPage
{
    private static final LakepruneColumnHandle NAME = LakepruneColumnHandle.regular("name", VARCHAR);
    private static final IndexFunctions.Computation LENGTH = IndexFunctions.computation(
            LakepruneColumnHandle.virtual("name_length", BIGINT, "length(name)", Optional.of(NAME)));

    @Test
    void testOnlyTheBlocksAskedForAreLoaded()
    {
        RecordingPage source = new RecordingPage(new Page(ids(1, 2, 3), names("a", "bb", "ccc")));
        LakeprunePageSource.ChannelPage page = new LakeprunePageSource.ChannelPage(source, List.of(
                LakeprunePageSource.Channel.read(0),
                LakeprunePageSource.Channel.read(1),
                LakeprunePageSource.Channel.computed(1, LENGTH),
                LakeprunePageSource.Channel.constant(VARCHAR, utf8Slice("x"))));

        assertThat(values(page, 0)).containsExactly(1L, 2L, 3L);
        assertThat(source.loaded).containsExactly(0);
        assertThat(values(page, 3)).containsExactly("x", "x", "x");
        assertThat(source.loaded).containsExactly(0);
    }

    @Test
    void testSelectedPositionsNarrowEveryChannel()
    {
        RecordingPage source = new RecordingPage(new Page(ids(1, 2, 3, 4), names("a", "bb", "ccc", "dddd")));
        LakeprunePageSource.ChannelPage page = new LakeprunePageSource.ChannelPage(source, List.of(
                LakeprunePageSource.Channel.read(0),
                LakeprunePageSource.Channel.read(1),
                LakeprunePageSource.Channel.computed(1, LENGTH),
                LakeprunePageSource.Channel.constant(VARCHAR, utf8Slice("x"))));
        // the engine's filter reads two channels, then keeps positions 1 and 3
        page.getBlock(0);
        page.getBlock(2);
        page.selectPositions(new int[] {9, 1, 3}, 1, 2);

        assertThat(page.getPositionCount()).isEqualTo(2);
        assertThat(values(page, 0)).containsExactly(2L, 4L);
        assertThat(values(page, 1)).containsExactly("bb", "dddd");
        assertThat(values(page, 2)).containsExactly(2L, 4L);
        assertThat(values(page, 3)).containsExactly("x", "x");
        Page all = page.getPage();
        assertThat(all.getPositionCount()).isEqualTo(2);
        assertThat(all.getChannelCount()).isEqualTo(4);
    }

    private static List<Object> values(SourcePage page, int channel)
    {
        Block block = page.getBlock(channel);
        assertThat(block.getPositionCount()).isEqualTo(page.getPositionCount());
        io.trino.spi.type.Type type = channel == 0 || channel == 2 ? BIGINT : VARCHAR;
        List<Object> values = new ArrayList<>();
        for (int position = 0; position < block.getPositionCount(); position++) {
            Object value = readNativeValue(type, block, position);
            values.add(value instanceof io.airlift.slice.Slice slice ? slice.toStringUtf8() : value);
        }
        return values;
    }

    private static Block ids(long... values)
    {
        BlockBuilder builder = BIGINT.createBlockBuilder(null, values.length);
        for (long value : values) {
            BIGINT.writeLong(builder, value);
        }
        return builder.build();
    }

    private static Block names(String... values)
    {
        BlockBuilder builder = VARCHAR.createBlockBuilder(null, values.length);
        for (String value : values) {
            VARCHAR.writeSlice(builder, utf8Slice(value));
        }
        return builder.build();
    }

    /** A reader's page that records which channels were loaded. */
    private static final class RecordingPage
            implements SourcePage
    {
        private final SourcePage delegate;
        private final List<Integer> loaded = new ArrayList<>();

        RecordingPage(Page page)
        {
            this.delegate = SourcePage.create(page);
        }

        @Override
        public int getPositionCount()
        {
            return delegate.getPositionCount();
        }

        @Override
        public long getSizeInBytes()
        {
            return delegate.getSizeInBytes();
        }

        @Override
        public long getRetainedSizeInBytes()
        {
            return delegate.getRetainedSizeInBytes();
        }

        @Override
        public void retainedBytesForEachPart(ObjLongConsumer<Object> consumer)
        {
            delegate.retainedBytesForEachPart(consumer);
        }

        @Override
        public int getChannelCount()
        {
            return delegate.getChannelCount();
        }

        @Override
        public Block getBlock(int channel)
        {
            if (!loaded.contains(channel)) {
                loaded.add(channel);
            }
            return delegate.getBlock(channel);
        }

        @Override
        public Page getPage()
        {
            return delegate.getPage();
        }

        @Override
        public void selectPositions(int[] positions, int offset, int size)
        {
            delegate.selectPositions(positions, offset, size);
        }
    }
}
