package io.lakeprune.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.plans.logical.Distinct;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.classic.Dataset$;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A MERGE's target narrowed to the rows whose record key the source holds, so that reading the
 * target prunes by the record index as a key lookup does, instead of reading every file. Only a
 * target row the merge condition matches to some source row can be updated or deleted, and only
 * the matched ones tell an insert apart: when the condition equates the target's (one-column)
 * record key with an expression over the source ({@code t.id = s.id}, perhaps among other
 * conjuncts) and no clause acts on target rows the source does not match ({@code WHEN NOT MATCHED
 * BY SOURCE}), the target rows outside the source's values of that expression take no part. Those
 * values are collected first (a Spark job over the source) and the target filtered by them
 * ({@code id IN (...)}), which Spark pushes to lakeprune's file index. The target is read whole
 * when the condition has no such equality, when the source's plan is not deterministic (it is read
 * twice: the keys must be the same both times), or when it holds more than {@value #MAX_KEYS}
 * distinct keys.
 */
final class MergeKeys {
    static final int MAX_KEYS = 100_000;

    private MergeKeys() {}

    /** {@code target} (the merge's relation), narrowed to the source's keys when that is safe. */
    static LogicalPlan narrowed(MergeIntoTable merge, LogicalPlan target, List<String> recordKey) {
        if (recordKey.size() != 1 || !CollectionConverters.asJava(merge.notMatchedBySourceActions()).isEmpty() || !deterministic(merge.sourceTable())) {
            return target;
        }
        Optional<Attribute> key = CollectionConverters.asJava(target.output()).stream()
                .filter(column -> column.name().equalsIgnoreCase(recordKey.get(0)))
                .findFirst();
        if (key.isEmpty()) {
            return target;
        }
        Optional<Expression> sourceSide = sourceSide(merge.mergeCondition(), key.get(), merge.sourceTable());
        if (sourceSide.isEmpty()) {
            return target;
        }
        Optional<List<Expression>> values = values(merge.sourceTable(), sourceSide.get());
        if (values.isEmpty()) {
            return target;
        }
        Expression narrowing = values.get().isEmpty()
                ? Literal.FalseLiteral()
                : new In(key.get(), LakepruneFileIndex.seq(values.get()));
        return new Filter(narrowing, target);
    }

    /** The expression over the source that a conjunct of {@code condition} equates the key with. */
    private static Optional<Expression> sourceSide(Expression condition, Attribute key, LogicalPlan source) {
        if (condition instanceof And and) {
            Optional<Expression> left = sourceSide(and.left(), key, source);
            return left.isPresent() ? left : sourceSide(and.right(), key, source);
        }
        if (condition instanceof EqualTo equal) {
            if (isKey(equal.left(), key) && overSource(equal.right(), source)) {
                return Optional.of(equal.right());
            }
            if (isKey(equal.right(), key) && overSource(equal.left(), source)) {
                return Optional.of(equal.left());
            }
        }
        return Optional.empty();
    }

    private static boolean isKey(Expression side, Attribute key) {
        return side instanceof AttributeReference column && column.exprId().equals(key.exprId());
    }

    private static boolean overSource(Expression side, LogicalPlan source) {
        return side.deterministic() && side.references().subsetOf(source.outputSet());
    }

    /** Whether every expression of {@code plan} is deterministic, so that it reads the same rows twice. */
    private static boolean deterministic(LogicalPlan plan) {
        for (Expression expression : CollectionConverters.asJava(plan.expressions())) {
            if (!expression.deterministic()) {
                return false;
            }
        }
        for (LogicalPlan child : CollectionConverters.asJava(plan.children())) {
            if (!deterministic(child)) {
                return false;
            }
        }
        return true;
    }

    /** The source's distinct non-NULL values of {@code expression}, as literals; empty when there are more than MAX_KEYS. */
    private static Optional<List<Expression>> values(LogicalPlan source, Expression expression) {
        Alias value = new Alias(expression, "_lp_key", NamedExpression$.MODULE$.newExprId(), LakepruneFileIndex.seq(List.of()), Option.empty(), LakepruneFileIndex.seq(List.of()));
        LogicalPlan keys = new Filter(new org.apache.spark.sql.catalyst.expressions.IsNotNull(value.toAttribute()),
                new Distinct(new Project(LakepruneFileIndex.seq(List.<NamedExpression>of(value)), source)));
        org.apache.spark.sql.classic.SparkSession session = (org.apache.spark.sql.classic.SparkSession) SparkSession.active();
        InternalRow[] rows = (InternalRow[]) Dataset$.MODULE$.ofRows(session, keys).limit(MAX_KEYS + 1)
                .queryExecution().executedPlan().executeCollect();
        if (rows.length > MAX_KEYS) {
            return Optional.empty();
        }
        List<Expression> literals = new ArrayList<>(rows.length);
        for (InternalRow row : rows) {
            literals.add(new Literal(row.get(0, expression.dataType()), expression.dataType()));
        }
        return Optional.of(literals);
    }
}
