package io.lakeprune.trino;

import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.trino.filesystem.TrinoInput;
import io.trino.filesystem.TrinoInputFile;
import io.trino.parquet.AbstractParquetDataSource;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.ParquetReaderOptions;

import java.io.IOException;

import static java.lang.Math.toIntExact;

/**
 * A Parquet data source over a trino-filesystem input file. A file no larger than the reader's
 * small-file threshold is read whole with its first read (as Hive's reader does): one read instead
 * of a footer read and one per column chunk, which matters for tables of many small files.
 */
final class TrinoInputDataSource
        extends AbstractParquetDataSource
{
    private final TrinoInput input;
    private final long length;
    private final boolean small;
    private byte[] whole;

    TrinoInputDataSource(TrinoInputFile file, ParquetReaderOptions options)
            throws IOException
    {
        this(file, file.length(), options);
    }

    private TrinoInputDataSource(TrinoInputFile file, long length, ParquetReaderOptions options)
            throws IOException
    {
        super(new ParquetDataSourceId(file.location().toString()), length, options);
        this.input = file.newInput();
        this.length = length;
        this.small = length <= options.getSmallFileThreshold().toBytes();
    }

    private byte[] whole()
            throws IOException
    {
        if (whole == null) {
            byte[] bytes = new byte[toIntExact(length)];
            input.readFully(0, bytes, 0, bytes.length);
            whole = bytes;
        }
        return whole;
    }

    @Override
    protected Slice readTailInternal(int tailLength)
            throws IOException
    {
        if (small) {
            int size = toIntExact(Math.min(length, tailLength));
            return Slices.wrappedBuffer(whole(), toIntExact(length) - size, size);
        }
        return input.readTail(tailLength);
    }

    @Override
    protected void readInternal(long position, byte[] buffer, int bufferOffset, int bufferLength)
            throws IOException
    {
        if (small) {
            System.arraycopy(whole(), toIntExact(position), buffer, bufferOffset, bufferLength);
            return;
        }
        input.readFully(position, buffer, bufferOffset, bufferLength);
    }

    @Override
    public void close()
            throws IOException
    {
        whole = null;
        input.close();
    }
}
