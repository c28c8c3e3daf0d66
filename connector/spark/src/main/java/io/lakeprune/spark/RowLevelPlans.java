package io.lakeprune.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.AssertTrue;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Assignment;
import org.apache.spark.sql.catalyst.plans.logical.DeleteAction;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.InsertAction;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.JoinHint;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeAction;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.UpdateAction;
import org.apache.spark.sql.types.DataTypes;
import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The rows a Spark SQL {@code DELETE FROM}, {@code UPDATE} or {@code MERGE INTO} of a lakeprune
 * table hands to lakeprune's write path, as logical plans over the statement's own resolved
 * target relation and source: what to delete (the target's rows the condition selects), what to
 * upsert (those rows with the assignments applied), and, for a merge, both at once, each row of
 * the table's columns flagged {@value #DELETE_COLUMN} when it is to be deleted. The first clause
 * of a merge whose condition holds decides a row, as in Spark's own MERGE; a row no clause takes is
 * left as it is. An assignment may not change a record key column: the row would be a new record
 * beside the old one, so the write fails at that row, naming the column.
 */
final class RowLevelPlans {
    /** The column of a merge's rows that says the row's key is to be deleted. */
    static final String DELETE_COLUMN = "_lp_delete";

    private RowLevelPlans() {}

    /** The table's target rows {@code condition} selects: their keys are deleted. */
    static LogicalPlan delete(LogicalPlan target, Expression condition) {
        return new Filter(condition, target);
    }

    /** The table's rows {@code condition} selects (every row without one) with the assignments applied. */
    static LogicalPlan update(LogicalPlan target, List<String> recordKey, List<Assignment> assignments, Option<Expression> condition) {
        Map<ExprId, Expression> assigned = assigned(assignments);
        List<NamedExpression> columns = new ArrayList<>();
        for (Attribute column : output(target)) {
            Expression value = assigned.get(column.exprId());
            columns.add(value == null ? column : alias(keepsKey(value, column, recordKey), column.name()));
        }
        LogicalPlan selected = condition.isDefined() ? new Filter(condition.get(), target) : target;
        return new Project(LakepruneFileIndex.seq(columns), selected);
    }

    /** The rows of a merge: the table's columns, in order, and {@value #DELETE_COLUMN}. */
    static LogicalPlan merge(MergeIntoTable merge, LogicalPlan target, List<String> recordKey) {
        if (merge.withSchemaEvolution()) {
            throw UserErrors.analysis("lakeprune: MERGE WITH SCHEMA EVOLUTION is not supported: "
                    + "a lakeprune table's columns are those it was created with");
        }
        List<MergeAction> matched = CollectionConverters.asJava(merge.matchedActions());
        List<MergeAction> notMatched = CollectionConverters.asJava(merge.notMatchedActions());
        List<MergeAction> notMatchedBySource = CollectionConverters.asJava(merge.notMatchedBySourceActions());
        Alias sourceMark = alias(Literal.TrueLiteral(), "_lp_from_source");
        Alias targetMark = alias(Literal.TrueLiteral(), "_lp_from_target");
        LogicalPlan source = withColumn(merge.sourceTable(), sourceMark);
        LogicalPlan marked = withColumn(target, targetMark);
        JoinType joinType;
        if (notMatchedBySource.isEmpty()) {
            joinType = notMatched.isEmpty() ? Inner$.MODULE$ : LeftOuter$.MODULE$;
        }
        else {
            joinType = notMatched.isEmpty() ? RightOuter$.MODULE$ : FullOuter$.MODULE$;
        }
        LogicalPlan joined = new Join(source, marked, joinType, Option.apply(merge.mergeCondition()), JoinHint.NONE());

        Expression fromSource = new IsNotNull(sourceMark.toAttribute());
        Expression fromTarget = new IsNotNull(targetMark.toAttribute());
        List<MergeAction> actions = new ArrayList<>();
        List<Tuple2<Expression, Expression>> chosen = new ArrayList<>();
        for (MergeAction action : matched) {
            chosen.add(new Tuple2<>(when(new And(fromSource, fromTarget), action), Literal.create(actions.size(), DataTypes.IntegerType)));
            actions.add(action);
        }
        for (MergeAction action : notMatched) {
            chosen.add(new Tuple2<>(when(new IsNull(targetMark.toAttribute()), action), Literal.create(actions.size(), DataTypes.IntegerType)));
            actions.add(action);
        }
        for (MergeAction action : notMatchedBySource) {
            chosen.add(new Tuple2<>(when(new IsNull(sourceMark.toAttribute()), action), Literal.create(actions.size(), DataTypes.IntegerType)));
            actions.add(action);
        }
        Alias clause = alias(new CaseWhen(LakepruneFileIndex.seq(chosen), Option.empty()), "_lp_clause");
        LogicalPlan decided = new Filter(new IsNotNull(clause.toAttribute()), withColumn(joined, clause));

        List<NamedExpression> columns = new ArrayList<>();
        for (Attribute column : output(target)) {
            List<Tuple2<Expression, Expression>> values = new ArrayList<>();
            for (int i = 0; i < actions.size(); i++) {
                values.add(new Tuple2<>(isClause(clause, i), value(actions.get(i), column, recordKey)));
            }
            columns.add(alias(new CaseWhen(LakepruneFileIndex.seq(values), Option.empty()), column.name()));
        }
        List<Tuple2<Expression, Expression>> deletes = new ArrayList<>();
        for (int i = 0; i < actions.size(); i++) {
            if (actions.get(i) instanceof DeleteAction) {
                deletes.add(new Tuple2<>(isClause(clause, i), Literal.TrueLiteral()));
            }
        }
        columns.add(alias(new CaseWhen(LakepruneFileIndex.seq(deletes), Option.apply(Literal.FalseLiteral())), DELETE_COLUMN));
        return new Project(LakepruneFileIndex.seq(columns), decided);
    }

    /** A column's value after a merge clause: assigned, kept (an update's or a delete's), or NULL (an insert's). */
    private static Expression value(MergeAction action, Attribute column, List<String> recordKey) {
        if (action instanceof UpdateAction update) {
            Expression value = assigned(CollectionConverters.asJava(update.assignments())).get(column.exprId());
            return value == null ? column : keepsKey(value, column, recordKey);
        }
        if (action instanceof InsertAction insert) {
            Expression value = assigned(CollectionConverters.asJava(insert.assignments())).get(column.exprId());
            return value == null ? Literal.create(null, column.dataType()) : value;
        }
        if (action instanceof DeleteAction) {
            return column;
        }
        throw UserErrors.analysis("lakeprune: MERGE clause " + action.sql() + " is not supported");
    }

    /** The assigned values by target column; a nested field's assignment is refused. */
    private static Map<ExprId, Expression> assigned(List<Assignment> assignments) {
        Map<ExprId, Expression> assigned = new HashMap<>();
        for (Assignment assignment : assignments) {
            if (!(assignment.key() instanceof AttributeReference key)) {
                throw UserErrors.analysis("lakeprune: an assignment to " + assignment.key().sql()
                        + " is not supported: assign whole columns");
            }
            assigned.put(key.exprId(), assignment.value());
        }
        return assigned;
    }

    /** {@code value}, failing the write at a row where it would change record key column {@code column}. */
    private static Expression keepsKey(Expression value, Attribute column, List<String> recordKey) {
        if (!recordKey.contains(column.name())) {
            return value;
        }
        Expression message = Literal.create(
                "lakeprune: an assignment cannot change record key column " + column.name() + ": delete the row and insert it",
                DataTypes.StringType);
        Expression check = new Cast(new AssertTrue(new EqualNullSafe(value, column), message), column.dataType(), Option.empty());
        return new Coalesce(LakepruneFileIndex.seq(List.of(check, value)));
    }

    private static Expression when(Expression side, MergeAction action) {
        return action.condition().isDefined() ? new And(side, action.condition().get()) : side;
    }

    private static Expression isClause(Alias clause, int index) {
        return new EqualTo(clause.toAttribute(), Literal.create(index, DataTypes.IntegerType));
    }

    private static LogicalPlan withColumn(LogicalPlan plan, Alias column) {
        List<NamedExpression> columns = new ArrayList<>(output(plan));
        columns.add(column);
        return new Project(LakepruneFileIndex.seq(columns), plan);
    }

    private static List<Attribute> output(LogicalPlan plan) {
        return CollectionConverters.asJava(plan.output());
    }

    private static Alias alias(Expression child, String name) {
        return new Alias(child, name, NamedExpression$.MODULE$.newExprId(), LakepruneFileIndex.seq(List.of()), Option.empty(), LakepruneFileIndex.seq(List.of()));
    }
}
