package io.lakeprune.spark;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.plans.logical.Distinct;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.classic.Dataset$;
import org.apache.spark.sql.types.DataType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A MERGE's target narrowed to the rows whose record key the source holds, so that reading the
 * target prunes by the record index as a key lookup does, instead of reading every file. Only a
 * target row the merge condition matches to some source row can be updated or deleted, and only
 * the matched ones tell an insert apart: when the condition equates each of the target's record
 * key columns with an expression over the source ({@code t.id = s.id}, or {@code t.region =
 * s.region AND t.id = s.id} for a composite key, perhaps among other conjuncts) and no clause acts
 * on target rows the source does not match ({@code WHEN NOT MATCHED BY SOURCE}), the target rows
 * outside the source's values of those expressions take no part. Those values are collected first
 * (one Spark job over the source: its distinct key tuples) and the target filtered by them, a key
 * column at a time ({@code id IN (...)}; for a composite key {@code region IN (...) AND id IN
 * (...)}, which keeps every row of a source tuple and perhaps some other combinations: the record
 * index looks their combinations up, up to its lookup limit), which Spark pushes to lakeprune's
 * file index. The target is read whole when the condition does not equate every key column, when
 * the source's plan is not deterministic (it is read twice: the keys must be the same both times),
 * or when it holds more than {@value #MAX_KEYS} distinct key tuples.
 */
final class MergeKeys {
    static final int MAX_KEYS = 100_000;

    private MergeKeys() {}

    /** {@code target} (the merge's relation), narrowed to the source's keys when that is safe. */
    static LogicalPlan narrowed(MergeIntoTable merge, LogicalPlan target, List<String> recordKey) {
        if (recordKey.isEmpty() || !CollectionConverters.asJava(merge.notMatchedBySourceActions()).isEmpty() || !deterministic(merge.sourceTable())) {
            return target;
        }
        List<Attribute> keys = new ArrayList<>();
        List<Expression> sourceSides = new ArrayList<>();
        for (String column : recordKey) {
            Optional<Attribute> key = CollectionConverters.asJava(target.output()).stream()
                    .filter(attribute -> attribute.name().equalsIgnoreCase(column))
                    .findFirst();
            Optional<Expression> sourceSide = key.flatMap(found -> sourceSide(merge.mergeCondition(), found, merge.sourceTable()));
            if (sourceSide.isEmpty()) {
                return target;
            }
            keys.add(key.get());
            sourceSides.add(sourceSide.get());
        }
        Optional<List<Set<Literal>>> values = values(merge.sourceTable(), sourceSides);
        if (values.isEmpty()) {
            return target;
        }
        Expression narrowing = null;
        for (int i = 0; i < keys.size(); i++) {
            Set<Literal> column = values.get().get(i);
            Expression in = column.isEmpty()
                    ? Literal.FalseLiteral()
                    : new In(keys.get(i), LakepruneFileIndex.seq(List.<Expression>copyOf(column)));
            narrowing = narrowing == null ? in : new And(narrowing, in);
        }
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

    /**
     * The source's distinct values of {@code expressions} (a key tuple), as literals per expression
     * (each in first-seen order); tuples with a NULL are left out (they match no key). Empty when
     * there are more than MAX_KEYS distinct tuples.
     */
    private static Optional<List<Set<Literal>>> values(LogicalPlan source, List<Expression> expressions) {
        List<NamedExpression> aliases = new ArrayList<>();
        Expression notNull = null;
        for (int i = 0; i < expressions.size(); i++) {
            Alias value = new Alias(expressions.get(i), "_lp_key" + i, NamedExpression$.MODULE$.newExprId(), LakepruneFileIndex.seq(List.of()), Option.empty(), LakepruneFileIndex.seq(List.of()));
            aliases.add(value);
            Expression present = new IsNotNull(value.toAttribute());
            notNull = notNull == null ? present : new And(notNull, present);
        }
        LogicalPlan keys = new Filter(notNull, new Distinct(new Project(LakepruneFileIndex.seq(aliases), source)));
        org.apache.spark.sql.classic.SparkSession session = (org.apache.spark.sql.classic.SparkSession) SparkSession.active();
        InternalRow[] rows = (InternalRow[]) Dataset$.MODULE$.ofRows(session, keys).limit(MAX_KEYS + 1)
                .queryExecution().executedPlan().executeCollect();
        if (rows.length > MAX_KEYS) {
            return Optional.empty();
        }
        List<Set<Literal>> literals = new ArrayList<>();
        for (int i = 0; i < expressions.size(); i++) {
            DataType type = expressions.get(i).dataType();
            Set<Literal> column = new LinkedHashSet<>();
            for (InternalRow row : rows) {
                column.add(new Literal(row.get(i, type), type));
            }
            literals.add(column);
        }
        return Optional.of(literals);
    }
}
