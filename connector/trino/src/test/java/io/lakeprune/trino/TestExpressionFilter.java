package io.lakeprune.trino;

import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Constant;
import io.trino.spi.expression.FunctionName;
import io.trino.spi.expression.Variable;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.Type;
import lakeprune.v1.PruningServiceOuterClass.Expression;
import lakeprune.v1.PruningServiceOuterClass.TypeKind;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.expression.StandardFunctions.AND_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.ARRAY_CONSTRUCTOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.CAST_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.IN_PREDICATE_FUNCTION_NAME;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.CharType.createCharType;
import static io.trino.spi.type.DateTimeEncoding.packDateTimeWithZone;
import static io.trino.spi.type.DoubleType.DOUBLE;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.TimeZoneKey.getTimeZoneKey;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MILLIS;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_PICOS;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static io.trino.spi.type.VarcharType.createVarcharType;
import static org.assertj.core.api.Assertions.assertThat;

class TestExpressionFilter
{
    private static final Map<String, ColumnHandle> ASSIGNMENTS = Map.of(
            "ts", LakepruneColumnHandle.regular("ts", TIMESTAMP_TZ_MICROS),
            "name_0", LakepruneColumnHandle.regular("name", VARCHAR),
            "hour_idx", LakepruneColumnHandle.virtual("hour_idx", BIGINT, "hour(ts)", Optional.empty()));
    private static final ConnectorExpression TS = new Variable("ts", TIMESTAMP_TZ_MICROS);
    private static final ConnectorExpression NAME = new Variable("name_0", VARCHAR);

    private static Call call(Type type, String function, ConnectorExpression... arguments)
    {
        return new Call(type, new FunctionName(function), List.of(arguments));
    }

    private static Call equal(ConnectorExpression left, ConnectorExpression right)
    {
        return new Call(BOOLEAN, EQUAL_OPERATOR_FUNCTION_NAME, List.of(left, right));
    }

    private static Constant text(String value)
    {
        return new Constant(utf8Slice(value), createVarcharType(Math.max(1, value.length())));
    }

    private static List<Expression> conjuncts(ConnectorExpression expression)
    {
        return ExpressionFilter.of(expression, ASSIGNMENTS, UTC_KEY).map(filter -> filter.filter().getConjunctsList()).orElse(List.of());
    }

    @Test
    void testTreesTravelAsTrinoWroteThem()
    {
        // the sidecar, not the connector, decides whether an index has hour(ts): the tree goes as it is
        List<Expression> sent = conjuncts(equal(call(BIGINT, "hour", TS), new Constant(12L, BIGINT)));
        assertThat(sent).hasSize(1);
        Expression comparison = sent.getFirst();
        assertThat(comparison.getCall().getFunction()).isEqualTo("$equal");
        assertThat(comparison.getType().getKind()).isEqualTo(TypeKind.TYPE_KIND_BOOLEAN);
        Expression hour = comparison.getCall().getArguments(0);
        assertThat(hour.getCall().getFunction()).isEqualTo("hour");
        assertThat(hour.getCall().getArguments(0).getColumn()).isEqualTo("ts");
        assertThat(hour.getCall().getArguments(0).getType().getKind()).isEqualTo(TypeKind.TYPE_KIND_TIMESTAMP);
        assertThat(comparison.getCall().getArguments(1).getConstant().getIntegerValue()).isEqualTo(12L);
    }

    @Test
    void testVariablesAreTheColumnsTheyAreAssigned()
    {
        // Trino's variable name_0 is the table's column name
        Expression sent = conjuncts(equal(call(BIGINT, "length", NAME), new Constant(3L, BIGINT))).getFirst();
        assertThat(sent.getCall().getArguments(0).getCall().getArguments(0).getColumn()).isEqualTo("name");
    }

    @Test
    void testInListsAreTypedByTheirElements()
    {
        ConnectorExpression in = new Call(BOOLEAN, IN_PREDICATE_FUNCTION_NAME, List.of(
                call(VARCHAR, "lower", NAME),
                new Call(new ArrayType(VARCHAR), ARRAY_CONSTRUCTOR_FUNCTION_NAME, List.of(text("a"), text("b")))));
        Expression list = conjuncts(in).getFirst().getCall().getArguments(1);
        assertThat(list.getType().getKind()).isEqualTo(TypeKind.TYPE_KIND_STRING);
        assertThat(list.getCall().getArgumentsCount()).isEqualTo(2);
    }

    @Test
    void testEachConjunctIsSentOrLeftOutOnItsOwn()
    {
        ConnectorExpression kept = equal(call(BIGINT, "hour", TS), new Constant(1L, BIGINT));
        ConnectorExpression hidden = equal(new Variable("hour_idx", BIGINT), new Constant(1L, BIGINT));
        ConnectorExpression unknown = equal(new Variable("other", BIGINT), new Constant(1L, BIGINT));
        ConnectorExpression charType = equal(call(createCharType(3), "f", NAME), new Constant(utf8Slice("abc"), createCharType(3)));
        ConnectorExpression picos = equal(call(TIMESTAMP_TZ_PICOS, "g", TS), new Constant(null, TIMESTAMP_TZ_PICOS));
        List<Expression> sent = conjuncts(new Call(BOOLEAN, AND_FUNCTION_NAME, List.of(kept, hidden, unknown, charType, picos)));
        assertThat(sent).hasSize(1);
        assertThat(sent.getFirst().getCall().getArguments(0).getCall().getFunction()).isEqualTo("hour");
        assertThat(conjuncts(Constant.TRUE)).isEmpty();
    }

    @Test
    void testFromUnixtimeGoesWithTheSessionZone()
    {
        // hour(from_unixtime(epoch)): Trino's from_unixtime takes a double and gives timestamp(3) in the session's zone
        ConnectorExpression seconds = new Call(DOUBLE, CAST_FUNCTION_NAME, List.of(new Variable("epoch", BIGINT)));
        ConnectorExpression instant = call(TIMESTAMP_TZ_MILLIS, "from_unixtime", seconds);
        Map<String, ColumnHandle> assignments = Map.of("epoch", LakepruneColumnHandle.regular("epoch", BIGINT), "ts", ASSIGNMENTS.get("ts"));
        ExpressionFilter filter = ExpressionFilter.of(equal(call(BIGINT, "hour", instant), new Constant(3L, BIGINT)), assignments, getTimeZoneKey("Europe/Paris")).orElseThrow();
        assertThat(filter.filter().getTimeZone()).isEqualTo("Europe/Paris");
        Expression sent = filter.filter().getConjuncts(0).getCall().getArguments(0).getCall().getArguments(0);
        assertThat(sent.getCall().getFunction()).isEqualTo("from_unixtime");
        assertThat(sent.getType().getKind()).isEqualTo(TypeKind.TYPE_KIND_TIMESTAMP);
        // a timestamp(3) constant is an exact instant
        long millis = 1_772_334_000_123L;
        ConnectorExpression atMillis = equal(instant, new Constant(packDateTimeWithZone(millis, UTC_KEY), TIMESTAMP_TZ_MILLIS));
        Expression constant = ExpressionFilter.of(atMillis, assignments, UTC_KEY).orElseThrow().filter().getConjuncts(0).getCall().getArguments(1);
        assertThat(constant.getConstant().getTimestampMicros()).isEqualTo(millis * 1000);
        // a cast of microseconds to milliseconds rounds (00:59:59.9996 is 01:00:00.000): not sent; a widening cast is
        ConnectorExpression narrowed = new Call(TIMESTAMP_TZ_MILLIS, CAST_FUNCTION_NAME, List.of(TS));
        assertThat(conjuncts(equal(call(BIGINT, "hour", narrowed), new Constant(1L, BIGINT)))).isEmpty();
        ConnectorExpression widened = new Call(TIMESTAMP_TZ_MICROS, CAST_FUNCTION_NAME, List.of(instant));
        assertThat(ExpressionFilter.of(equal(call(BIGINT, "hour", widened), new Constant(1L, BIGINT)), assignments, UTC_KEY)).isPresent();
    }

    @Test
    void testLowerGoesOnlyWithLiteralsItLowersAsTheIndexDoes()
    {
        // U+16EB2 is a capital letter newer than Java 25's Unicode 16: Trino's lower keeps it, the
        // index lowers it to U+16ECD, so a row Trino sees as 'x\uD81A\uDEB2' is another value in the index
        String newer = new String(Character.toChars(0x16EB2));
        assertThat(conjuncts(equal(call(VARCHAR, "lower", NAME), text("x" + newer)))).isEmpty();
        assertThat(conjuncts(equal(call(VARCHAR, "lower", NAME), text("straße ǆ σ")))).hasSize(1);
        assertThat(IndexFunctions.trinoLowerIsIndexLower(newer)).isFalse();
    }

    @Test
    void testAndKeepsEachConjunctOnceAndTravelsAsJson()
    {
        Optional<ExpressionFilter> first = ExpressionFilter.of(equal(call(BIGINT, "hour", TS), new Constant(1L, BIGINT)), ASSIGNMENTS, UTC_KEY);
        Optional<ExpressionFilter> second = ExpressionFilter.of(equal(call(BIGINT, "length", NAME), new Constant(2L, BIGINT)), ASSIGNMENTS, UTC_KEY);
        assertThat(ExpressionFilter.and(first, first)).isEqualTo(first);
        ExpressionFilter both = ExpressionFilter.and(first, second).orElseThrow();
        assertThat(both.filter().getConjunctsCount()).isEqualTo(2);
        assertThat(ExpressionFilter.and(Optional.of(both), first)).contains(both);
        assertThat(ExpressionFilter.fromJson(both.toJson())).isEqualTo(both);
        assertThat(both.toString()).isEqualTo("$equal(hour(ts), 1) AND $equal(length(name), 2)");
    }
}
