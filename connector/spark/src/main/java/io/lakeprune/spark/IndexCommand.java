package io.lakeprune.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.Command;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.execution.command.LeafRunnableCommand;
import org.apache.spark.sql.execution.command.RunnableCommand;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Enumeration;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * An index statement of Spark SQL on a lakeprune table ({@link IndexStatements}), run by the
 * planner's Python half on the table's location: SHOW INDEXES answers one row per index (the
 * columns of {@link #SHOW_COLUMNS}), the others one row, their message ({@code message}). A catalog
 * table's cached relation is refreshed after a statement that changed its indexes, so that its
 * next read prunes with them.
 */
public final class IndexCommand extends LogicalPlan implements LeafRunnableCommand {
    static final List<String> SHOW_COLUMNS = List.of("name", "type", "columns", "options", "state", "complete_up_to");
    static final List<String> MESSAGE_COLUMNS = List.of("message");

    private final String statement;
    private final String location;
    private final String catalogTable;
    private final boolean showsIndexes;
    private final List<String> columns;
    private final Seq<Attribute> output;
    private Seq<Enumeration.Value> nodePatterns;

    /**
     * {@code catalogTable}: the name of the catalog table the statement is on ("" for a table named by
     * its location). Public, and the plan's product elements in its order: Spark copies plans by
     * reflection.
     */
    public IndexCommand(String statement, String location, String catalogTable, boolean showsIndexes) {
        Command.$init$(this);
        RunnableCommand.$init$(this);
        this.statement = statement;
        this.location = location;
        this.catalogTable = catalogTable;
        this.showsIndexes = showsIndexes;
        this.columns = showsIndexes ? SHOW_COLUMNS : MESSAGE_COLUMNS;
        StructType schema = new StructType();
        for (String column : columns) {
            schema = schema.add(column, DataTypes.StringType, true);
        }
        List<Attribute> attributes = new ArrayList<>(CollectionConverters.asJava(DataTypeUtils.toAttributes(schema)));
        this.output = LakepruneFileIndex.seq(attributes);
    }

    @Override
    public Seq<Row> run(SparkSession session) {
        Object reply = Planners.get().index(location, statement, columns);
        if (reply instanceof String error) {
            throw UserErrors.analysis(error);
        }
        if (!(reply instanceof List<?> rows)) {
            throw new IllegalStateException("lakeprune: the planner returned nothing for an index statement (see the Python log)");
        }
        if (!showsIndexes && !catalogTable.isEmpty()) {
            session.catalog().refreshTable(catalogTable);
        }
        List<Row> result = new ArrayList<>();
        for (Object row : rows) {
            result.add(RowFactory.create(((List<?>) row).toArray()));
        }
        return LakepruneFileIndex.seq(result);
    }

    @Override
    public Seq<Attribute> output() {
        return output;
    }

    @Override
    public Seq<LogicalPlan> children() {
        return LakepruneFileIndex.seq(List.of());
    }

    @Override
    public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> children) {
        return this;
    }

    @Override
    public Seq<Enumeration.Value> nodePatterns() {
        return nodePatterns;
    }

    @Override
    public void org$apache$spark$sql$catalyst$plans$logical$Command$_setter_$nodePatterns_$eq(Seq<Enumeration.Value> patterns) {
        this.nodePatterns = patterns;
    }

    @Override
    public String simpleString(int maxFields) {
        return "LakepruneIndexCommand " + statement.strip();
    }

    @Override
    public int productArity() {
        return 4;
    }

    @Override
    public Object productElement(int n) {
        return switch (n) {
            case 0 -> statement;
            case 1 -> location;
            case 2 -> catalogTable;
            case 3 -> showsIndexes;
            default -> throw new IndexOutOfBoundsException(n);
        };
    }

    @Override
    public boolean canEqual(Object other) {
        return other instanceof IndexCommand;
    }
}
