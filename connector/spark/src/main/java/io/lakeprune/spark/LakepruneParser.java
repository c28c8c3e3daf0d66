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
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Cast$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression$;
import org.apache.spark.sql.catalyst.optimizer.ComputeCurrentTime$;
import org.apache.spark.sql.catalyst.optimizer.ReplaceExpressions$;
import org.apache.spark.sql.catalyst.parser.ParameterContext;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.parser.SqlStatementSplitResult;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.OneRowRelation;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.internal.SessionState;
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
     * {@code TIMESTAMP AS OF}'s point in time as an ISO 8601 instant in UTC: a constant ({@code
     * '2026-03-01 12:00:00'}, in the session's time zone as Spark reads it, or {@code TIMESTAMP
     * '...'}) or an expression without columns, as Spark's own time travel takes ({@code
     * current_timestamp() - INTERVAL 1 DAY}, {@code timestamp_seconds(1767225600)}): resolved by the
     * session's analyzer in a one-row query, the current time fixed and the expression replaced by
     * what evaluates it, as the optimizer does, then evaluated.
     * A column, a subquery or a non-deterministic call is refused.
     */
    private String pointInTime(Expression timestamp) {
        SessionState state = ((org.apache.spark.sql.classic.SparkSession) session).sessionState();
        Expression resolved = resolve(timestamp, state);
        Expression cast = Cast$.MODULE$.apply(resolved, DataTypes.TimestampType, Option.apply(state.conf().sessionLocalTimeZone()), Cast$.MODULE$.apply$default$4());
        if (!cast.resolved() || !resolved.foldable()) {
            throw UserErrors.analysis("lakeprune: TIMESTAMP AS OF " + timestamp.sql() + " is not a point in time");
        }
        Object micros = cast.eval(null);
        if (!(micros instanceof Long value)) {
            throw UserErrors.analysis("lakeprune: TIMESTAMP AS OF " + timestamp.sql() + " is not a point in time");
        }
        return Instant.EPOCH.plus(value, ChronoUnit.MICROS).toString();
    }

    /** {@code timestamp} resolved as {@code SELECT timestamp} would be, or a user error saying why it cannot be a time travel's. */
    private static Expression resolve(Expression timestamp, SessionState state) {
        Alias alias = new Alias(timestamp, "as_of", NamedExpression$.MODULE$.newExprId(), LakepruneFileIndex.seq(List.of()), Option.empty(), LakepruneFileIndex.seq(List.of()));
        LogicalPlan probe = new Project(LakepruneFileIndex.seq(List.<NamedExpression>of(alias)), new OneRowRelation());
        LogicalPlan analyzed;
        try {
            // as the optimizer would: the current time fixed, and `ts - INTERVAL ...` as what it evaluates
            analyzed = ReplaceExpressions$.MODULE$.apply(ComputeCurrentTime$.MODULE$.apply(state.analyzer().execute(probe)));
        }
        catch (RuntimeException e) {
            throw UserErrors.analysis("lakeprune: TIMESTAMP AS OF " + timestamp.sql() + ": " + e.getMessage());
        }
        if (!analyzed.resolved() || !(analyzed instanceof Project project) || !(CollectionConverters.asJava(project.projectList()).get(0) instanceof Alias resolved)) {
            throw UserErrors.analysis("lakeprune: TIMESTAMP AS OF takes a point in time without columns ('2026-03-01 12:00:00', "
                    + "TIMESTAMP '2026-03-01 12:00:00', current_timestamp() - INTERVAL 1 DAY), not " + timestamp.sql());
        }
        Expression expression = resolved.child();
        if (!expression.references().isEmpty() || SubqueryExpression$.MODULE$.hasSubquery(expression) || !expression.deterministic()) {
            throw UserErrors.analysis("lakeprune: TIMESTAMP AS OF takes a point in time without columns, subqueries or "
                    + "random values, not " + timestamp.sql());
        }
        return expression;
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
