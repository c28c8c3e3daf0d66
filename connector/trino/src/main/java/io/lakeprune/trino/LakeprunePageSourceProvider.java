package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.inject.Inject;
import io.trino.filesystem.TrinoInputFile;
import io.trino.memory.context.AggregatedMemoryContext;
import io.trino.parquet.Column;
import io.trino.parquet.Field;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.ParquetDataSource;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.metadata.FileMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.predicate.TupleDomainParquetPredicate;
import io.trino.parquet.reader.MetadataReader;
import io.trino.parquet.reader.ParquetReader;
import io.trino.parquet.reader.RowGroupInfo;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorPageSourceProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
import lakeprune.v1.Predicate;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.ColumnIO;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;
import org.joda.time.DateTimeZone;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_BAD_DATA;
import static io.lakeprune.trino.LakepruneErrorCode.LAKEPRUNE_CANNOT_READ_FILE;
import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static io.trino.parquet.ParquetTypeUtils.constructField;
import static io.trino.parquet.ParquetTypeUtils.getColumnIO;
import static io.trino.parquet.ParquetTypeUtils.getDescriptors;
import static io.trino.parquet.ParquetTypeUtils.lookupColumnByName;
import static io.trino.parquet.predicate.PredicateUtils.buildPredicate;
import static io.trino.parquet.predicate.PredicateUtils.getFilteredRowGroups;
import static java.util.Objects.requireNonNull;

/**
 * Reads a split with Trino's own Parquet reader: only the projected columns, row groups skipped by
 * the table handle's predicate and the dynamic filter (min/max, dictionaries, column indexes, bloom
 * filters), timestamps in UTC. Partition columns come from the split's partition values.
 */
public class LakeprunePageSourceProvider
        implements ConnectorPageSourceProvider
{
    private static final int DOMAIN_COMPACTION_THRESHOLD = 1000;

    private final DataFiles dataFiles;
    private final ParquetReaderOptions options;

    @Inject
    public LakeprunePageSourceProvider(DataFiles dataFiles)
    {
        this.dataFiles = requireNonNull(dataFiles, "dataFiles is null");
        this.options = ParquetReaderOptions.defaultOptions();
    }

    @Override
    public ConnectorPageSource createPageSource(
            ConnectorTransactionHandle transaction,
            ConnectorSession session,
            ConnectorSplit connectorSplit,
            ConnectorTableHandle tableHandle,
            List<ColumnHandle> columnHandles,
            DynamicFilter dynamicFilter)
    {
        LakepruneSplit split = (LakepruneSplit) connectorSplit;
        LakepruneTableHandle table = (LakepruneTableHandle) tableHandle;
        List<LakepruneColumnHandle> columns = columnHandles.stream().map(LakepruneColumnHandle.class::cast).collect(ImmutableList.toImmutableList());
        // a hidden column the connector cannot compute fails here, before any file is opened
        Map<LakepruneColumnHandle, IndexFunctions.Computation> computations = new HashMap<>();
        for (LakepruneColumnHandle column : columns) {
            if (column.isVirtual()) {
                computations.put(column, IndexFunctions.computation(column));
            }
        }
        // refused before anything else: a split outside the table's root is never served
        TrinoInputFile file = dataFiles.open(session, split.path(), table.location(), split.fileSize());
        TupleDomain<LakepruneColumnHandle> predicate = table.constraint()
                .intersect(dynamicFilter.getCurrentPredicate().transformKeys(LakepruneColumnHandle.class::cast));
        if (predicate.isNone()) {
            return new LakeprunePageSource.Empty();
        }
        return open(file, split, columns, computations, predicate);
    }

    private ConnectorPageSource open(
            TrinoInputFile file,
            LakepruneSplit split,
            List<LakepruneColumnHandle> columns,
            Map<LakepruneColumnHandle, IndexFunctions.Computation> computations,
            TupleDomain<LakepruneColumnHandle> predicate)
    {
        Map<String, Predicate.Value> partitionValues = new HashMap<>();
        split.partitionKeys().forEach(key -> partitionValues.put(key.name(), key.typedValue()));

        ParquetDataSource dataSource = null;
        try {
            AggregatedMemoryContext memoryContext = newSimpleAggregatedMemoryContext();
            dataSource = new TrinoInputDataSource(file, options);
            ParquetMetadata parquetMetadata = MetadataReader.readFooter(dataSource, Optional.empty());
            FileMetadata fileMetadata = parquetMetadata.getFileMetaData();
            MessageType fileSchema = fileMetadata.getSchema();
            Map<String, Type> fileFields = new HashMap<>();
            for (Type field : fileSchema.getFields()) {
                fileFields.putIfAbsent(field.getName().toLowerCase(Locale.ROOT), field);
            }

            // what each output channel is: a column of the file, a partition value, NULL, or a
            // hidden column computed from one of those
            List<LakeprunePageSource.Channel> channels = new ArrayList<>();
            List<Type> requestedFields = new ArrayList<>();
            List<LakepruneColumnHandle> requestedColumns = new ArrayList<>();
            Map<String, Integer> readOrdinals = new HashMap<>();
            for (LakepruneColumnHandle column : columns) {
                IndexFunctions.Computation computation = computations.get(column);
                if (computation == null) {
                    channels.add(channel(column, partitionValues, fileFields, requestedFields, requestedColumns, readOrdinals));
                    continue;
                }
                LakeprunePageSource.Channel source = channel(column.source().orElseThrow(), partitionValues, fileFields, requestedFields, requestedColumns, readOrdinals);
                channels.add(source.ordinal() >= 0
                        ? LakeprunePageSource.Channel.computed(source.ordinal(), computation)
                        : LakeprunePageSource.Channel.constant(column.type(), computation.apply(source.value())));
            }
            MessageType requestedSchema = new MessageType(fileSchema.getName(), requestedFields);
            MessageColumnIO messageColumn = getColumnIO(fileSchema, requestedSchema);
            Map<List<String>, ColumnDescriptor> descriptorsByPath = getDescriptors(fileSchema, requestedSchema);

            TupleDomain<ColumnDescriptor> parquetDomain = parquetTupleDomain(predicate, descriptorsByPath, fileFields, partitionValues);
            TupleDomainParquetPredicate parquetPredicate = buildPredicate(requestedSchema, parquetDomain, descriptorsByPath, DateTimeZone.UTC);
            List<RowGroupInfo> rowGroups = getFilteredRowGroups(
                    split.start(),
                    split.length(),
                    dataSource,
                    parquetMetadata,
                    ImmutableList.of(parquetDomain),
                    ImmutableList.of(parquetPredicate),
                    descriptorsByPath,
                    DateTimeZone.UTC,
                    DOMAIN_COMPACTION_THRESHOLD,
                    options);

            List<Column> readColumns = new ArrayList<>();
            for (int i = 0; i < requestedFields.size(); i++) {
                String name = requestedFields.get(i).getName();
                LakepruneColumnHandle handle = requestedColumns.get(i);
                ColumnIO columnIO = lookupColumnByName(messageColumn, name);
                Optional<Field> field = constructField(handle.type(), columnIO);
                if (field.isEmpty()) {
                    throw new TrinoException(LAKEPRUNE_BAD_DATA, "Column %s of %s cannot be read as %s".formatted(name, file.location(), handle.type()));
                }
                readColumns.add(new Column(name, field.get()));
            }
            ParquetDataSource source = dataSource;
            ParquetReader reader = new ParquetReader(
                    Optional.ofNullable(fileMetadata.getCreatedBy()),
                    readColumns,
                    false,
                    rowGroups,
                    dataSource,
                    DateTimeZone.UTC,
                    memoryContext,
                    options,
                    exception -> LakeprunePageSource.handleException(source.getId().toString(), exception),
                    Optional.of(parquetPredicate),
                    Optional.empty());
            return new LakeprunePageSource(reader, channels);
        }
        catch (Exception e) {
            try {
                if (dataSource != null) {
                    dataSource.close();
                }
            }
            catch (IOException _) {
            }
            if (e instanceof TrinoException trinoException) {
                throw trinoException;
            }
            if (e instanceof ParquetCorruptionException) {
                throw new TrinoException(LAKEPRUNE_BAD_DATA, e);
            }
            throw new TrinoException(LAKEPRUNE_CANNOT_READ_FILE, "Cannot open lakeprune split %s (offset=%s, length=%s): %s".formatted(file.location(), split.start(), split.length(), e.getMessage()), e);
        }
    }

    /** A regular column's channel: its partition value, NULL when the file lacks it, else a column to read. */
    private static LakeprunePageSource.Channel channel(
            LakepruneColumnHandle column,
            Map<String, Predicate.Value> partitionValues,
            Map<String, Type> fileFields,
            List<Type> requestedFields,
            List<LakepruneColumnHandle> requestedColumns,
            Map<String, Integer> readOrdinals)
    {
        if (partitionValues.containsKey(column.name())) {
            Object value = DomainEncoder.decodeValue(column.name(), column.type(), partitionValues.get(column.name()));
            return LakeprunePageSource.Channel.constant(column.type(), value);
        }
        Type field = fileFields.get(column.name().toLowerCase(Locale.ROOT));
        if (field == null) {
            // a column added after this file was written
            return LakeprunePageSource.Channel.constant(column.type(), null);
        }
        Integer ordinal = readOrdinals.get(field.getName());
        if (ordinal == null) {
            ordinal = requestedFields.size();
            requestedFields.add(field);
            requestedColumns.add(column);
            readOrdinals.put(field.getName(), ordinal);
        }
        return LakeprunePageSource.Channel.read(ordinal);
    }

    /** The predicate on the file's own columns, for row-group skipping. */
    private static TupleDomain<ColumnDescriptor> parquetTupleDomain(
            TupleDomain<LakepruneColumnHandle> predicate,
            Map<List<String>, ColumnDescriptor> descriptorsByPath,
            Map<String, Type> fileFields,
            Map<String, Predicate.Value> partitionValues)
    {
        if (predicate.isNone()) {
            return TupleDomain.none();
        }
        ImmutableMap.Builder<ColumnDescriptor, Domain> domains = ImmutableMap.builder();
        for (Map.Entry<LakepruneColumnHandle, Domain> entry : predicate.getDomains().orElseThrow().entrySet()) {
            LakepruneColumnHandle column = entry.getKey();
            if (column.isVirtual() || partitionValues.containsKey(column.name())) {
                continue;
            }
            Type field = fileFields.get(column.name().toLowerCase(Locale.ROOT));
            if (field == null || !field.isPrimitive()) {
                continue;
            }
            ColumnDescriptor descriptor = descriptorsByPath.get(ImmutableList.of(field.getName()));
            if (descriptor != null) {
                domains.put(descriptor, entry.getValue());
            }
        }
        return TupleDomain.withColumnDomains(domains.buildOrThrow());
    }
}
