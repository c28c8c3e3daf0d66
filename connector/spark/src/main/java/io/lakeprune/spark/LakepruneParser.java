package io.lakeprune.spark;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParameterContext;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.parser.SqlStatementSplitResult;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractPartialFunction;

/**
 * Spark's SQL parser, with {@code t VERSION AS OF 'instant'} of a lakeprune table in the session
 * catalog read as the table with the source's {@code snapshot} option: Spark refuses time travel
 * on a DataSource V1 table, and passes a table reference's options to the source. Every other
 * statement, and time travel on any other table, is Spark's own parse.
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
        return withSnapshots(delegate.parsePlan(sqlText));
    }

    @Override
    public LogicalPlan parsePlanWithParameters(String sqlText, ParameterContext parameters) throws ParseException {
        return withSnapshots(delegate.parsePlanWithParameters(sqlText, parameters));
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
                        && travel.timestamp().isEmpty()
                        && travel.version().isDefined()
                        && travel.relation() instanceof UnresolvedRelation relation
                        && isLakeprune(CollectionConverters.asJava(relation.multipartIdentifier()));
            }

            @Override
            public LogicalPlan apply(LogicalPlan node) {
                RelationTimeTravel travel = (RelationTimeTravel) node;
                UnresolvedRelation relation = (UnresolvedRelation) travel.relation();
                Map<String, String> options = new HashMap<>(relation.options().asCaseSensitiveMap());
                options.put("snapshot", travel.version().get());
                return new UnresolvedRelation(relation.multipartIdentifier(), new CaseInsensitiveStringMap(options), relation.isStreaming());
            }
        });
    }

    /** Whether {@code name} is a lakeprune table of the session catalog (not a temporary view). */
    private boolean isLakeprune(List<String> name) {
        if (name.isEmpty() || name.size() > 3) {
            return false;
        }
        SessionCatalog catalog = ((org.apache.spark.sql.classic.SparkSession) session).sessionState().catalog();
        int parts = name.size();
        String table = name.get(parts - 1);
        if (parts == 1 && catalog.getTempView(table).isDefined()) {
            return false;
        }
        if (parts == 3 && !name.get(0).equalsIgnoreCase("spark_catalog")) {
            return false;
        }
        TableIdentifier identifier = new TableIdentifier(table, parts >= 2 ? Option.apply(name.get(parts - 2)) : Option.empty());
        try {
            if (!catalog.tableExists(identifier)) {
                return false;
            }
            CatalogTable metadata = catalog.getTableMetadata(identifier);
            return metadata.provider().isDefined() && metadata.provider().get().equalsIgnoreCase("lakeprune");
        }
        catch (Exception e) {
            return false;  // not a table this parse can see: Spark's own analysis says what it is
        }
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
