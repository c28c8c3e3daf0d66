package io.lakeprune.spark;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.expressions.Cast$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParameterContext;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.parser.SqlStatementSplitResult;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractPartialFunction;

/**
 * Spark's SQL parser, with {@code t VERSION AS OF 'instant'} and {@code t TIMESTAMP AS OF '...'} of
 * a lakeprune table in the session catalog read as the table with the source's {@code snapshot} /
 * {@code asOfTime} option: Spark refuses time travel on a DataSource V1 table, and passes a
 * table reference's options to the source; and with
 * lakeprune's index statements ({@link IndexStatements}). Every other statement, and time travel
 * on any other table, is Spark's own parse.
 */
public final class LakepruneParser implements ParserInterface {
    private final SparkSession session;
    private final ParserInterface delegate;

    public LakepruneParser(SparkSession session, ParserInterface delegate) {
        this.session = session;
        this.delegate = delegate;
    }

    @Override
    public LogicalPlan parsePlan(String sqlText) throws ParseException {
        Optional<LogicalPlan> index = IndexStatements.plan(sqlText, this::catalog, delegate);
        return index.isPresent() ? index.get() : withSnapshots(delegate.parsePlan(sqlText));
    }

    @Override
    public LogicalPlan parsePlanWithParameters(String sqlText, ParameterContext parameters) throws ParseException {
        Optional<LogicalPlan> index = IndexStatements.plan(sqlText, this::catalog, delegate);
        return index.isPresent() ? index.get() : withSnapshots(delegate.parsePlanWithParameters(sqlText, parameters));
    }

    @Override
    public LogicalPlan parseQuery(String sqlText) throws ParseException {
        return withSnapshots(delegate.parseQuery(sqlText));
    }

    private LogicalPlan withSnapshots(LogicalPlan plan) {
        return plan.transformUp(new AbstractPartialFunction<>() {
            @Override
            public boolean isDefinedAt(LogicalPlan node) {
                return node instanceof RelationTimeTravel travel
                        && travel.relation() instanceof UnresolvedRelation relation
                        && isLakeprune(CollectionConverters.asJava(relation.multipartIdentifier()));
            }

            @Override
            public LogicalPlan apply(LogicalPlan node) {
                RelationTimeTravel travel = (RelationTimeTravel) node;
                UnresolvedRelation relation = (UnresolvedRelation) travel.relation();
                Map<String, String> options = new HashMap<>(relation.options().asCaseSensitiveMap());
                if (travel.version().isDefined()) {
                    options.put(LakepruneSource.SNAPSHOT_OPTION, travel.version().get());
                }
                else {
                    options.put(LakepruneSource.AS_OF_TIME_OPTION, pointInTime(travel.timestamp().get()));
                }
                return new UnresolvedRelation(relation.multipartIdentifier(), new CaseInsensitiveStringMap(options), relation.isStreaming());
            }
        });
    }

    /**
     * {@code TIMESTAMP AS OF}'s constant ({@code '2026-03-01 12:00:00'}, in the session's time zone as
     * Spark reads it, or {@code TIMESTAMP '...'}) as an ISO 8601 instant in UTC. An expression Spark
     * would first have to analyze ({@code current_timestamp() - INTERVAL 1 DAY}) is refused: the
     * parse has no analyzer.
     */
    private String pointInTime(Expression timestamp) {
        String zone = ((org.apache.spark.sql.classic.SparkSession) session).sessionState().conf().sessionLocalTimeZone();
        Expression cast = Cast$.MODULE$.apply(timestamp, DataTypes.TimestampType, Option.apply(zone), Cast$.MODULE$.apply$default$4());
        if (!timestamp.foldable() || !cast.resolved()) {
            throw UserErrors.analysis("lakeprune: TIMESTAMP AS OF takes a constant point in time ('2026-03-01 12:00:00' or "
                    + "TIMESTAMP '2026-03-01 12:00:00'), not " + timestamp.sql());
        }
        Object micros = cast.eval(null);
        if (!(micros instanceof Long value)) {
            throw UserErrors.analysis("lakeprune: TIMESTAMP AS OF " + timestamp.sql() + " is not a point in time");
        }
        return Instant.EPOCH.plus(value, ChronoUnit.MICROS).toString();
    }

    /** Whether {@code name} is a lakeprune table of the session catalog (not a temporary view). */
    private boolean isLakeprune(List<String> name) {
        return IndexStatements.lakepruneTable(name, catalog()).isPresent();
    }

    private SessionCatalog catalog() {
        return ((org.apache.spark.sql.classic.SparkSession) session).sessionState().catalog();
    }

    @Override
    public Expression parseExpression(String sqlText) throws ParseException {
        return delegate.parseExpression(sqlText);
    }

    @Override
    public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
        return delegate.parseTableIdentifier(sqlText);
    }

    @Override
    public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
        return delegate.parseFunctionIdentifier(sqlText);
    }

    @Override
    public Seq<String> parseMultipartIdentifier(String sqlText) throws ParseException {
        return delegate.parseMultipartIdentifier(sqlText);
    }

    @Override
    public StructType parseRoutineParam(String sqlText) throws ParseException {
        return delegate.parseRoutineParam(sqlText);
    }

    @Override
    public SqlStatementSplitResult splitStatements(String sqlText) {
        return delegate.splitStatements(sqlText);
    }

    @Override
    public StructType parseTableSchema(String sqlText) throws ParseException {
        return delegate.parseTableSchema(sqlText);
    }

    @Override
    public DataType parseDataType(String sqlText) throws ParseException {
        return delegate.parseDataType(sqlText);
    }
}
