package io.lakeprune.trino;

import io.airlift.units.Duration;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.ConstraintApplicationResult;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.PointerType;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.Constant;
import io.trino.spi.expression.FunctionName;
import io.trino.spi.expression.Variable;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.statistics.TableStatistics;
import lakeprune.v1.Predicate;
import lakeprune.v1.PruningServiceGrpc;
import lakeprune.v1.PruningServiceOuterClass.Column;
import lakeprune.v1.PruningServiceOuterClass.ColumnStatistics;
import lakeprune.v1.PruningServiceOuterClass.ColumnType;
import lakeprune.v1.PruningServiceOuterClass.GetTableRequest;
import lakeprune.v1.PruningServiceOuterClass.GetTableResponse;
import lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsResponse;
import lakeprune.v1.PruningServiceOuterClass.PartitionValue;
import lakeprune.v1.PruningServiceOuterClass.PruneRequest;
import lakeprune.v1.PruningServiceOuterClass.PruneResponse;
import lakeprune.v1.PruningServiceOuterClass.Split;
import lakeprune.v1.PruningServiceOuterClass.TableName;
import lakeprune.v1.PruningServiceOuterClass.TypeKind;
import lakeprune.v1.PruningServiceOuterClass.VirtualColumn;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.trino.spi.expression.StandardFunctions.EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LIKE_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.NOT_FUNCTION_NAME;
import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DecimalType.createDecimalType;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static io.trino.spi.type.VarcharType.createVarcharType;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Metadata, applyFilter and split enumeration against an in-process fake sidecar. */
class TestSidecarPlanning
{
    private static final ColumnType BIGINT_TYPE = ColumnType.newBuilder().setKind(TypeKind.TYPE_KIND_BIGINT).setName("bigint").build();
    private static final GetTableResponse TABLE = GetTableResponse.newBuilder()
            .setTable(TableName.newBuilder().setSchema("demo").setTable("trips"))
            .addColumns(Column.newBuilder().setName("id").setType(BIGINT_TYPE))
            .addColumns(Column.newBuilder().setName("fare").setType(ColumnType.newBuilder().setKind(TypeKind.TYPE_KIND_DECIMAL).setPrecision(10).setScale(2).setName("decimal(10,2)")))
            .addColumns(Column.newBuilder().setName("ts").setType(ColumnType.newBuilder().setKind(TypeKind.TYPE_KIND_TIMESTAMP).setName("timestamp")))
            .addColumns(Column.newBuilder().setName("note").setType(ColumnType.newBuilder().setKind(TypeKind.TYPE_KIND_STRING).setName("string")))
            .addVirtualColumns(VirtualColumn.newBuilder().setName("hour_of_day").setType(BIGINT_TYPE).setExpression("hour(ts)").setSourceColumn("ts"))
            .setLatestSnapshot("20240101000000000")
            .setSnapshot("20240101000000000")
            .setLocation("/wh/trips")
            // what the sidecar can prune by: id (say, a record key); fare and ts have no index
            .addPrunableColumns("id")
            .build();

    private final List<PruneRequest> pruneRequests = new CopyOnWriteArrayList<>();
    private final List<lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsRequest> statisticsRequests = new CopyOnWriteArrayList<>();
    private Server server;
    private SidecarClient client;

    @BeforeEach
    void setUp()
            throws IOException
    {
        String name = "planning-" + System.nanoTime();
        server = InProcessServerBuilder.forName(name).addService(new PruningServiceGrpc.PruningServiceImplBase()
        {
            @Override
            public void getTable(GetTableRequest request, StreamObserver<GetTableResponse> responseObserver)
            {
                if (!request.getTable().getTable().equals("trips")) {
                    responseObserver.onError(io.grpc.Status.NOT_FOUND.withDescription("no table").asRuntimeException());
                    return;
                }
                responseObserver.onNext(TABLE);
                responseObserver.onCompleted();
            }

            @Override
            public void listTables(lakeprune.v1.PruningServiceOuterClass.ListTablesRequest request, StreamObserver<lakeprune.v1.PruningServiceOuterClass.ListTablesResponse> responseObserver)
            {
                responseObserver.onNext(lakeprune.v1.PruningServiceOuterClass.ListTablesResponse.newBuilder()
                        .addSchemas("demo")
                        .addTables(TableName.newBuilder().setSchema("demo").setTable("trips"))
                        .build());
                responseObserver.onCompleted();
            }

            @Override
            public void pruneStream(PruneRequest request, StreamObserver<PruneResponse> responseObserver)
            {
                pruneRequests.add(request);
                responseObserver.onNext(PruneResponse.newBuilder()
                        .addSplits(Split.newBuilder().setPath("/wh/trips/city=sf/a.parquet").setStart(0).setLength(100).setRowCount(10).setFileSize(100)
                                .addPartitionValues(PartitionValue.newBuilder().setColumn("city").setTypedValue(Predicate.Value.newBuilder().setStringValue("sf"))))
                        .build());
                responseObserver.onNext(PruneResponse.newBuilder()
                        .addSplits(Split.newBuilder().setPath("/wh/trips/b.parquet").setStart(0).setLength(50).setRowCount(5)
                                .addPartitionValues(PartitionValue.newBuilder().setColumn("city")))
                        .build());
                responseObserver.onCompleted();
            }

            @Override
            public void getTableStatistics(lakeprune.v1.PruningServiceOuterClass.GetTableStatisticsRequest request, StreamObserver<GetTableStatisticsResponse> responseObserver)
            {
                statisticsRequests.add(request);
                responseObserver.onNext(GetTableStatisticsResponse.newBuilder()
                        .setRowCount(200)
                        .addColumns(ColumnStatistics.newBuilder().setColumn("id").setNullCount(50).setMin(1).setMax(99))
                        .addColumns(ColumnStatistics.newBuilder().setColumn("ts").setNullCount(0).setMin(-1_500).setMax(1_709_164_800_123_456L))
                        .build());
                responseObserver.onCompleted();
            }
        }).build().start();
        client = new SidecarClient(List.of(new SidecarClient.Endpoint(name, InProcessChannelBuilder.forName(name).build())), new Duration(5, SECONDS), 2);
    }

    @AfterEach
    void tearDown()
    {
        client.close();
        server.shutdownNow();
    }

    private LakepruneMetadata metadata()
    {
        return new LakepruneMetadata(client, new LakepruneStatistics(client));
    }

    private static LakepruneTableHandle trips(LakepruneMetadata metadata)
    {
        return (LakepruneTableHandle) metadata.getTableHandle(null, new SchemaTableName("demo", "trips"), Optional.empty(), Optional.empty());
    }

    @Test
    void testTableHandlePinsTheSnapshot()
    {
        LakepruneTableHandle handle = (LakepruneTableHandle) metadata().getTableHandle(null, new SchemaTableName("demo", "trips"), Optional.empty(), Optional.empty());
        assertThat(handle.snapshot()).contains("20240101000000000");
        assertThat(handle.location()).isEqualTo("/wh/trips");
        assertThat(metadata().getTableHandle(null, new SchemaTableName("demo", "nope"), Optional.empty(), Optional.empty())).isNull();
        Map<String, ColumnHandle> columns = metadata().getColumnHandles(null, handle);
        assertThat(columns.keySet()).containsExactly("id", "fare", "ts", "note", "hour_of_day");
        assertThat(((LakepruneColumnHandle) columns.get("fare")).type()).isEqualTo(createDecimalType(10, 2));
        assertThat(metadata().getColumnMetadata(null, handle, columns.get("hour_of_day")).isHidden()).isTrue();
        // a hidden column knows its source column, from which the page source computes it
        assertThat(((LakepruneColumnHandle) columns.get("hour_of_day")).source()).contains((LakepruneColumnHandle) columns.get("ts"));
    }

    @Test
    void testApplyFilterSendsDomainsAndFunctionCalls()
            throws Exception
    {
        LakepruneMetadata metadata = metadata();
        LakepruneTableHandle handle = trips(metadata);
        Map<String, ColumnHandle> columns = metadata.getColumnHandles(null, handle);
        TupleDomain<ColumnHandle> summary = TupleDomain.withColumnDomains(Map.of(columns.get("id"), Domain.singleValue(BIGINT, 7L)));
        Call hourIs12 = new Call(BOOLEAN, EQUAL_OPERATOR_FUNCTION_NAME, List.of(
                new Call(BIGINT, new FunctionName("hour"), List.of(new Variable("ts", TIMESTAMP_TZ_MICROS))),
                new Constant(12L, BIGINT)));
        Constraint constraint = new Constraint(summary, hourIs12, Map.of("ts", columns.get("ts"), "id", columns.get("id")));

        Optional<ConstraintApplicationResult<ConnectorTableHandle>> result = metadata.applyFilter(TestingSession.UTC, handle, constraint);
        assertThat(result).isPresent();
        // nothing is dropped: Trino keeps the whole filter
        assertThat(result.get().getRemainingFilter()).isEqualTo(summary);
        assertThat(result.get().getRemainingExpression()).contains(hourIs12);
        LakepruneTableHandle filtered = (LakepruneTableHandle) result.get().getHandle();
        // applying the same filter again changes nothing
        assertThat(metadata.applyFilter(TestingSession.UTC, filtered, constraint)).isEmpty();

        LakepruneSplitManager splitManager = new LakepruneSplitManager(client);
        assertThat(drain(splitManager.splitSource(filtered, DynamicFilter.EMPTY, System.nanoTime(), 64L << 20))).containsExactly(
                // the file's size when the sidecar sends it; none from a sidecar before file_size
                new LakepruneSplit("/wh/trips/city=sf/a.parquet", 0, 100, 10, OptionalLong.of(100), List.of(LakepruneSplit.PartitionKey.of("city", Predicate.Value.newBuilder().setStringValue("sf").build()))),
                new LakepruneSplit("/wh/trips/b.parquet", 0, 50, 5, OptionalLong.empty(), List.of(LakepruneSplit.PartitionKey.of("city", Predicate.Value.getDefaultInstance()))));
        PruneRequest request = pruneRequests.getLast();
        assertThat(request.getSnapshot()).isEqualTo("20240101000000000");
        assertThat(request.getMaxSplitBytes()).isEqualTo(64L << 20);
        assertThat(request.getPredicate().getColumnsList()).extracting(Predicate.ColumnDomain::getColumn).containsExactly("id");
        assertThat(request.getPredicate().getColumns(0).getDomain().getValues().getDiscrete().getIntegers(0)).isEqualTo(7);
        // the function call goes as Trino's tree: the sidecar matches it against the index on hour(ts)
        assertThat(request.getFilter().getConjunctsList()).containsExactly(ExpressionFilter.encode(hourIs12, constraint.getAssignments()).orElseThrow());
        // no text atom in the filter: no text predicate
        assertThat(filtered.text()).isEmpty();
        assertThat(request.hasText()).isFalse();
    }

    @Test
    void testApplyFilterSendsTheTextPredicate()
            throws Exception
    {
        Variable note = new Variable("note", VARCHAR);
        Call late = new Call(BOOLEAN, LIKE_FUNCTION_NAME, List.of(note, new Constant(utf8Slice("%late%"), createVarcharType(6))));
        Call notLate = new Call(BOOLEAN, NOT_FUNCTION_NAME, List.of(late));
        Call startsWithCash = new Call(BOOLEAN, new FunctionName("starts_with"), List.of(note, new Constant(utf8Slice("cash"), createVarcharType(4))));
        LakepruneMetadata metadata = metadata();
        LakepruneTableHandle handle = trips(metadata);
        // the expression's variables are named as the columns
        Map<String, ColumnHandle> assignments = metadata.getColumnHandles(null, handle);

        // no text atom: no text predicate (the call goes to the sidecar as Trino's tree, see ExpressionFilter)
        LakepruneTableHandle negated = (LakepruneTableHandle) metadata.applyFilter(TestingSession.UTC, handle, new Constraint(TupleDomain.all(), notLate, assignments)).orElseThrow().getHandle();
        assertThat(negated.text()).isEmpty();
        assertThat(negated.filter()).isPresent();

        Constraint lateConstraint = new Constraint(TupleDomain.all(), late, assignments);
        Optional<ConstraintApplicationResult<ConnectorTableHandle>> result = metadata.applyFilter(TestingSession.UTC, handle, lateConstraint);
        assertThat(result).isPresent();
        // the files are pruned, not the rows: Trino keeps the whole filter
        assertThat(result.get().getRemainingExpression()).contains(late);
        assertThat(result.get().getRemainingFilter()).isEqualTo(TupleDomain.all());
        LakepruneTableHandle filtered = (LakepruneTableHandle) result.get().getHandle();
        assertThat(filtered.constraint()).isEqualTo(TupleDomain.all());
        assertThat(filtered.text()).isEqualTo(TextFilter.of(late, assignments));
        assertThat(filtered.toString()).endsWith(" text: note LIKE '%late%'");
        // the same filter again changes nothing (no endless optimizer loop); one without atoms keeps the text predicate
        assertThat(metadata.applyFilter(TestingSession.UTC, filtered, lateConstraint)).isEmpty();
        Constraint notLateConstraint = new Constraint(TupleDomain.all(), notLate, assignments);
        LakepruneTableHandle alsoNegated = (LakepruneTableHandle) metadata.applyFilter(TestingSession.UTC, filtered, notLateConstraint).orElseThrow().getHandle();
        assertThat(alsoNegated.text()).isEqualTo(filtered.text());
        assertThat(metadata.applyFilter(TestingSession.UTC, alsoNegated, notLateConstraint)).isEmpty();

        // another atom is ANDed with the one the handle has, once
        Constraint cashConstraint = new Constraint(TupleDomain.all(), startsWithCash, assignments);
        LakepruneTableHandle both = (LakepruneTableHandle) metadata.applyFilter(TestingSession.UTC, filtered, cashConstraint).orElseThrow().getHandle();
        assertThat(both.text()).isEqualTo(TextFilter.and(filtered.text(), TextFilter.of(startsWithCash, assignments)));
        assertThat(both.text().orElseThrow().predicate().getAll().getPartsCount()).isEqualTo(2);
        assertThat(metadata.applyFilter(TestingSession.UTC, both, cashConstraint)).isEmpty();
        assertThat(metadata.applyFilter(TestingSession.UTC, both, lateConstraint)).isEmpty();

        // a domain alone still changes the handle, and keeps its text predicate
        TupleDomain<ColumnHandle> idIs7 = TupleDomain.withColumnDomains(Map.of(assignments.get("id"), Domain.singleValue(BIGINT, 7L)));
        LakepruneTableHandle withDomain = (LakepruneTableHandle) metadata.applyFilter(TestingSession.UTC, both, new Constraint(idIs7, Constant.TRUE, assignments)).orElseThrow().getHandle();
        assertThat(withDomain.text()).isEqualTo(both.text());

        // the prune request carries the handle's text predicate beside its TupleDomain
        assertThat(drain(new LakepruneSplitManager(client).splitSource(withDomain, DynamicFilter.EMPTY, System.nanoTime(), 64L << 20))).hasSize(2);
        PruneRequest request = pruneRequests.getLast();
        assertThat(request.getText()).isEqualTo(both.text().orElseThrow().predicate());
        assertThat(request.getText().getAll().getParts(0).getAtom().getColumn()).isEqualTo("note");
        assertThat(request.getText().getAll().getParts(0).getAtom().getLike().getPattern()).isEqualTo("%late%");
        assertThat(request.getText().getAll().getParts(1).getAtom().getStartsWith()).isEqualTo("cash");
        assertThat(request.getPredicate().getColumns(0).getColumn()).isEqualTo("id");
    }

    @Test
    void testMetadataTablesAreNotVersioned()
    {
        ConnectorTableVersion version = new ConnectorTableVersion(PointerType.TARGET_ID, VARCHAR, utf8Slice("20240101000000000"));
        assertThat(metadata().getTableHandle(null, new SchemaTableName("demo", "trips$files"), Optional.empty(), Optional.empty())).isNull();
        assertThatThrownBy(() -> metadata().getTableHandle(null, new SchemaTableName("demo", "trips$files"), Optional.empty(), Optional.of(version)))
                .isInstanceOf(TrinoException.class)
                .hasMessageContaining("latest snapshot");
    }

    @Test
    void testPageSourceRefusesASplitOutsideTheTableRoot()
    {
        LakepruneTableHandle handle = (LakepruneTableHandle) metadata().getTableHandle(null, new SchemaTableName("demo", "trips"), Optional.empty(), Optional.empty());
        // local files never reach the file system factory (object stores only)
        LakeprunePageSourceProvider provider = new LakeprunePageSourceProvider(new DataFiles(identity -> {
            throw new AssertionError("no file system for local files");
        }));
        for (String path : List.of("/wh/other/a.parquet", "/wh/trips-2/a.parquet", "/etc/passwd", "/wh/trips/../other/a.parquet", "file:///wh/other/a.parquet", "s3://wh/trips/a.parquet")) {
            LakepruneSplit split = new LakepruneSplit(path, 0, 10, 1, OptionalLong.empty(), List.of());
            // refused even when the dynamic filter would skip the split unread
            assertThatThrownBy(() -> provider.createPageSource(null, null, split, handle.withConstraint(TupleDomain.none()), List.of(), DynamicFilter.EMPTY))
                    .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(LakepruneErrorCode.LAKEPRUNE_INVALID_SPLIT.toErrorCode()))
                    .hasMessageContaining(path);
        }
        // a split under the root is served (here: skipped unread, as its predicate is none)
        LakepruneSplit inside = new LakepruneSplit("/wh/trips/city=sf/a.parquet", 0, 10, 1, OptionalLong.empty(), List.of());
        assertThat(provider.createPageSource(null, null, inside, handle.withConstraint(TupleDomain.none()), List.of(), DynamicFilter.EMPTY)).isInstanceOf(LakeprunePageSource.Empty.class);
    }

    @Test
    void testRelationColumnsForInformationSchema()
    {
        var relations = com.google.common.collect.ImmutableList.copyOf(metadata().streamRelationColumns(null, Optional.of("demo"), names -> names));
        assertThat(relations).hasSize(1);
        assertThat(relations.getFirst().name()).isEqualTo(new SchemaTableName("demo", "trips"));
        assertThat(relations.getFirst().tableColumns().orElseThrow()).extracting(io.trino.spi.connector.ColumnMetadata::getName).containsExactly("id", "fare", "ts", "note");
    }

    @Test
    void testStatistics()
    {
        LakepruneMetadata metadata = metadata();
        ConnectorTableHandle handle = metadata.getTableHandle(null, new SchemaTableName("demo", "trips"), Optional.empty(), Optional.empty());
        TableStatistics statistics = metadata.getTableStatistics(null, handle);
        Map<String, ColumnHandle> columns = metadata.getColumnHandles(null, handle);
        assertThat(statistics.getRowCount().getValue()).isEqualTo(200);
        var id = statistics.getColumnStatistics().get(columns.get("id"));
        assertThat(id.getNullsFraction().getValue()).isEqualTo(0.25);
        assertThat(id.getRange().orElseThrow().getMin()).isEqualTo(1);
        assertThat(id.getRange().orElseThrow().getMax()).isEqualTo(99);
        // timestamps with time zone: Trino's representation is epoch millis, outward from the micros
        var ts = statistics.getColumnStatistics().get(columns.get("ts")).getRange().orElseThrow();
        assertThat(ts.getMin()).isEqualTo(-2);
        assertThat(ts.getMax()).isEqualTo(1_709_164_800_124L);
    }

    @Test
    void testStatisticsOfASnapshotAreAskedForOnce()
    {
        // one LakepruneStatistics for the catalog; a metadata per transaction
        LakepruneStatistics statistics = new LakepruneStatistics(client);
        LakepruneMetadata first = new LakepruneMetadata(client, statistics);
        LakepruneTableHandle handle = trips(first);
        first.getTableStatistics(null, handle);
        LakepruneMetadata second = new LakepruneMetadata(client, statistics);
        TableStatistics again = second.getTableStatistics(null, trips(second));
        assertThat(again.getRowCount().getValue()).isEqualTo(200);
        assertThat(statisticsRequests).hasSize(1);
        // another predicate is another question
        LakepruneColumnHandle id = (LakepruneColumnHandle) first.getColumnHandles(null, handle).get("id");
        LakepruneTableHandle filtered = handle.withConstraint(TupleDomain.withColumnDomains(Map.of(id, Domain.singleValue(BIGINT, 7L))));
        first.getTableStatistics(null, filtered);
        first.getTableStatistics(null, filtered);
        assertThat(statisticsRequests).hasSize(2);
        assertThat(statisticsRequests.getLast().hasPredicate()).isTrue();
    }

    @Test
    void testSplitSourceWaitsForTheDynamicFilter()
            throws Exception
    {
        LakepruneMetadata metadata = metadata();
        LakepruneTableHandle handle = (LakepruneTableHandle) metadata.getTableHandle(null, new SchemaTableName("demo", "trips"), Optional.empty(), Optional.empty());
        LakepruneColumnHandle id = (LakepruneColumnHandle) metadata.getColumnHandles(null, handle).get("id");
        CompletableFuture<?> blocked = new CompletableFuture<>();
        TestingDynamicFilter dynamicFilter = new TestingDynamicFilter(blocked, Set.of(id));

        LakepruneSplitManager splitManager = new LakepruneSplitManager(client);
        ConnectorSplitSource source = splitManager.splitSource(handle, dynamicFilter, System.nanoTime() + SECONDS.toNanos(30), 0);
        CompletableFuture<ConnectorSplitSource.ConnectorSplitBatch> first = source.getNextBatch(10);
        assertThat(first).isNotDone();
        assertThat(pruneRequests).isEmpty();

        dynamicFilter.predicate = TupleDomain.withColumnDomains(Map.of(id, Domain.singleValue(BIGINT, 42L)));
        dynamicFilter.complete = true;
        blocked.complete(null);
        assertThat(first.get().getSplits()).isEmpty();
        ConnectorSplitSource.ConnectorSplitBatch batch = source.getNextBatch(1).get();
        assertThat(batch.getSplits()).hasSize(1);
        assertThat(batch.isNoMoreSplits()).isFalse();
        assertThat(drain(source)).hasSize(1);
        assertThat(pruneRequests.getLast().getPredicate().getColumns(0).getColumn()).isEqualTo("id");
        assertThat(pruneRequests.getLast().getPredicate().getColumns(0).getDomain().getValues().getDiscrete().getIntegers(0)).isEqualTo(42);
    }

    @Test
    void testSplitSourceStopsWaitingAtTheTimeout()
            throws Exception
    {
        LakepruneMetadata metadata = metadata();
        LakepruneTableHandle handle = (LakepruneTableHandle) metadata.getTableHandle(null, new SchemaTableName("demo", "trips"), Optional.empty(), Optional.empty());
        ColumnHandle id = metadata.getColumnHandles(null, handle).get("id");
        TestingDynamicFilter neverCompletes = new TestingDynamicFilter(new CompletableFuture<>(), Set.of(id));
        ConnectorSplitSource source = new LakepruneSplitManager(client).splitSource(handle, neverCompletes, System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(200), 0);
        long start = System.nanoTime();
        assertThat(source.getNextBatch(10).get(5, SECONDS).getSplits()).isEmpty();
        assertThat(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(150L, 3000L);
        assertThat(drain(source)).hasSize(2);
        assertThat(pruneRequests.getLast().hasPredicate()).isFalse();
    }

    @Test
    void testSplitsFlowAtOnceWhenTheDynamicFilterCoversNoPrunableColumn()
            throws Exception
    {
        LakepruneMetadata metadata = metadata();
        LakepruneTableHandle handle = (LakepruneTableHandle) metadata.getTableHandle(null, new SchemaTableName("demo", "trips"), Optional.empty(), Optional.empty());
        assertThat(handle.prunableColumns()).containsExactly("id");
        Map<String, ColumnHandle> columns = metadata.getColumnHandles(null, handle);
        // a join on fare and ts: the sidecar cannot prune by them, so nothing waits for the filter
        TestingDynamicFilter unprunable = new TestingDynamicFilter(new CompletableFuture<>(), Set.of(columns.get("fare"), columns.get("ts")));
        ConnectorSplitSource source = new LakepruneSplitManager(client).splitSource(handle, unprunable, System.nanoTime() + SECONDS.toNanos(30), 0);
        // the filter never completes: splits at all show that nothing waited for it (the wait is 30 s)
        assertThat(source.getNextBatch(10).get(5, SECONDS).getSplits()).isNotEmpty();
        assertThat(pruneRequests).hasSize(1);
        assertThat(pruneRequests.getLast().hasPredicate()).isFalse();

        // a table handle from a sidecar that declares nothing prunable (one before the field) waits for no filter either
        LakepruneTableHandle undeclared = new LakepruneTableHandle("demo", "trips", handle.snapshot(), handle.location(), Set.of(), handle.constraint(), handle.filter(), handle.text());
        TestingDynamicFilter onId = new TestingDynamicFilter(new CompletableFuture<>(), Set.of(columns.get("id")));
        assertThat(new LakepruneSplitManager(client).splitSource(undeclared, onId, System.nanoTime() + SECONDS.toNanos(30), 0).getNextBatch(10).get(5, SECONDS).getSplits()).isNotEmpty();
        assertThat(LakepruneSplitManager.prunesBy(handle, onId)).isTrue();
        assertThat(LakepruneSplitManager.prunesBy(handle, unprunable)).isFalse();
    }

    /** The splits a source still has, batch by batch: a batch holds what the sidecar sent so far. */
    private static List<ConnectorSplit> drain(ConnectorSplitSource source)
            throws Exception
    {
        List<ConnectorSplit> splits = new ArrayList<>();
        ConnectorSplitSource.ConnectorSplitBatch batch;
        do {
            batch = source.getNextBatch(10).get(5, SECONDS);
            splits.addAll(batch.getSplits());
        }
        while (!batch.isNoMoreSplits());
        assertThat(source.isFinished()).isTrue();
        return splits;
    }

    private static class TestingDynamicFilter
            implements DynamicFilter
    {
        private final CompletableFuture<?> blocked;
        private final Set<ColumnHandle> covered;
        volatile TupleDomain<ColumnHandle> predicate = TupleDomain.all();
        volatile boolean complete;

        TestingDynamicFilter(CompletableFuture<?> blocked, Set<ColumnHandle> covered)
        {
            this.blocked = blocked;
            this.covered = Set.copyOf(covered);
        }

        @Override
        public Set<ColumnHandle> getColumnsCovered()
        {
            return covered;
        }

        @Override
        public CompletableFuture<?> isBlocked()
        {
            return blocked;
        }

        @Override
        public boolean isComplete()
        {
            return complete;
        }

        @Override
        public boolean isAwaitable()
        {
            return !complete;
        }

        @Override
        public TupleDomain<ColumnHandle> getCurrentPredicate()
        {
            return predicate;
        }
    }
}
