package io.lakeprune.trino;

import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Constant;
import io.trino.spi.expression.FunctionName;
import io.trino.spi.expression.Variable;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.Type;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.expression.StandardFunctions.AND_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LESS_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.NOT_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static io.trino.spi.type.VarcharType.createVarcharType;
import static org.assertj.core.api.Assertions.assertThat;

class TestFunctionIndexes
{
    private static final LakepruneColumnHandle TS = LakepruneColumnHandle.regular("ts", TIMESTAMP_TZ_MICROS);
    private static final LakepruneColumnHandle NAME = LakepruneColumnHandle.regular("name", VARCHAR);
    private static final LakepruneColumnHandle HOUR_IDX = virtual("hour_idx", BIGINT, "hour(ts)");
    private static final LakepruneColumnHandle DAY_IDX = virtual("day_idx", VARCHAR, "date_format(ts, '%Y-%m-%d')");
    private static final LakepruneColumnHandle LOWER_IDX = virtual("lower_idx", VARCHAR, "lower(name)");
    private static final LakepruneColumnHandle UPPER_IDX = virtual("upper_idx", VARCHAR, "upper(name)");
    private static final LakepruneColumnHandle PREFIX_IDX = virtual("prefix_idx", VARCHAR, "substring(name, 1, 3)");
    private static final List<LakepruneColumnHandle> VIRTUAL = List.of(HOUR_IDX, DAY_IDX, LOWER_IDX, UPPER_IDX, PREFIX_IDX);
    private static final Map<String, ColumnHandle> ASSIGNMENTS = Map.of("ts", TS, "name", NAME);

    private static LakepruneColumnHandle virtual(String name, Type type, String expression)
    {
        return LakepruneColumnHandle.virtual(name, type, expression, Optional.empty());
    }

    private static Call call(Type type, String function, ConnectorExpression... arguments)
    {
        return new Call(type, new FunctionName(function), List.of(arguments));
    }

    private static Call compare(FunctionName operator, ConnectorExpression left, ConnectorExpression right)
    {
        return new Call(BOOLEAN, operator, List.of(left, right));
    }

    private static TupleDomain<LakepruneColumnHandle> extract(ConnectorExpression expression)
    {
        return FunctionIndexes.extract(expression, ASSIGNMENTS, VIRTUAL);
    }

    @Test
    void testHourEquals()
    {
        ConnectorExpression expression = compare(EQUAL_OPERATOR_FUNCTION_NAME, call(BIGINT, "hour", new Variable("ts", TIMESTAMP_TZ_MICROS)), new Constant(12L, BIGINT));
        // NULL stays allowed: the index's hour() is NULL outside 0001..9999, where Trino's is not
        assertThat(extract(expression)).isEqualTo(TupleDomain.withColumnDomains(Map.of(
                HOUR_IDX, Domain.create(ValueSet.of(BIGINT, 12L), true))));
    }

    @Test
    void testFlippedRange()
    {
        // 10 < hour(ts) AND hour(ts) < 14
        ConnectorExpression hour = call(BIGINT, "hour", new Variable("ts", TIMESTAMP_TZ_MICROS));
        ConnectorExpression expression = new Call(BOOLEAN, AND_FUNCTION_NAME, List.of(
                compare(LESS_THAN_OPERATOR_FUNCTION_NAME, new Constant(10L, BIGINT), hour),
                compare(LESS_THAN_OPERATOR_FUNCTION_NAME, hour, new Constant(14L, BIGINT))));
        assertThat(extract(expression)).isEqualTo(TupleDomain.withColumnDomains(Map.of(
                HOUR_IDX, Domain.create(ValueSet.ofRanges(Range.range(BIGINT, 10L, false, 14L, false)), true))));
    }

    @Test
    void testDateFormatNeedsTheSamePattern()
    {
        ConnectorExpression same = compare(EQUAL_OPERATOR_FUNCTION_NAME,
                call(VARCHAR, "date_format", new Variable("ts", TIMESTAMP_TZ_MICROS), new Constant(utf8Slice("%Y-%m-%d"), createVarcharType(8))),
                new Constant(utf8Slice("2024-01-02"), createVarcharType(10)));
        assertThat(extract(same)).isEqualTo(TupleDomain.withColumnDomains(Map.of(DAY_IDX, Domain.create(ValueSet.of(VARCHAR, utf8Slice("2024-01-02")), true))));

        ConnectorExpression other = compare(EQUAL_OPERATOR_FUNCTION_NAME,
                call(VARCHAR, "date_format", new Variable("ts", TIMESTAMP_TZ_MICROS), new Constant(utf8Slice("%Y/%m/%d"), createVarcharType(8))),
                new Constant(utf8Slice("2024/01/02"), createVarcharType(10)));
        assertThat(extract(other)).isEqualTo(TupleDomain.all());
    }

    @Test
    void testStringFunctions()
    {
        ConnectorExpression lower = compare(EQUAL_OPERATOR_FUNCTION_NAME, call(VARCHAR, "lower", new Variable("name", VARCHAR)), new Constant(utf8Slice("x"), createVarcharType(1)));
        assertThat(extract(lower)).isEqualTo(TupleDomain.withColumnDomains(Map.of(LOWER_IDX, Domain.singleValue(VARCHAR, utf8Slice("x")))));

        ConnectorExpression prefix = compare(GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME,
                call(VARCHAR, "substring", new Variable("name", VARCHAR), new Constant(1L, BIGINT), new Constant(3L, BIGINT)),
                new Constant(utf8Slice("abc"), createVarcharType(3)));
        assertThat(extract(prefix)).isEqualTo(TupleDomain.withColumnDomains(Map.of(
                PREFIX_IDX, Domain.create(ValueSet.ofRanges(Range.greaterThanOrEqual(VARCHAR, utf8Slice("abc"))), false))));

        // other arguments: another index, not this one
        ConnectorExpression otherPrefix = compare(EQUAL_OPERATOR_FUNCTION_NAME,
                call(VARCHAR, "substring", new Variable("name", VARCHAR), new Constant(2L, BIGINT), new Constant(3L, BIGINT)),
                new Constant(utf8Slice("abc"), createVarcharType(3)));
        assertThat(extract(otherPrefix)).isEqualTo(TupleDomain.all());
    }

    @Test
    void testLowerIsTranslatedOnlyWhereTrinosLowerIsTheIndexs()
    {
        // U+16EB2 is a capital letter newer than Java 25's Unicode 16: Trino's lower keeps it, the
        // index lowers it to U+16ECD, so a row Trino sees as 'x\uD81A\uDEB2' is another value in the index
        String newer = new String(Character.toChars(0x16EB2));
        ConnectorExpression unsafe = compare(EQUAL_OPERATOR_FUNCTION_NAME, call(VARCHAR, "lower", new Variable("name", VARCHAR)), new Constant(utf8Slice("x" + newer), createVarcharType(3)));
        assertThat(extract(unsafe)).isEqualTo(TupleDomain.all());
        // a range could hold such rows whatever its bounds
        ConnectorExpression range = compare(GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME, call(VARCHAR, "lower", new Variable("name", VARCHAR)), new Constant(utf8Slice("x"), createVarcharType(1)));
        assertThat(extract(range)).isEqualTo(TupleDomain.all());
        assertThat(IndexFunctions.trinoLowerIsIndexLower("straße ǆ σ")).isTrue();
        assertThat(IndexFunctions.trinoLowerIsIndexLower(newer)).isFalse();
    }

    @Test
    void testUpperIsNotTranslated()
    {
        // Trino's upper('ß') is 'ß'; the index stores 'ẞ': translating would prune matching files
        ConnectorExpression upper = compare(EQUAL_OPERATOR_FUNCTION_NAME, call(VARCHAR, "upper", new Variable("name", VARCHAR)), new Constant(utf8Slice("X"), createVarcharType(1)));
        assertThat(extract(upper)).isEqualTo(TupleDomain.all());
    }

    @Test
    void testUntranslatableShapesAreLeftAlone()
    {
        ConnectorExpression notEqual = compare(NOT_EQUAL_OPERATOR_FUNCTION_NAME, call(BIGINT, "hour", new Variable("ts", TIMESTAMP_TZ_MICROS)), new Constant(12L, BIGINT));
        assertThat(extract(notEqual)).isEqualTo(TupleDomain.all());
        ConnectorExpression nullConstant = compare(EQUAL_OPERATOR_FUNCTION_NAME, call(BIGINT, "hour", new Variable("ts", TIMESTAMP_TZ_MICROS)), new Constant(null, BIGINT));
        assertThat(extract(nullConstant)).isEqualTo(TupleDomain.all());
        ConnectorExpression unknownColumn = compare(EQUAL_OPERATOR_FUNCTION_NAME, call(BIGINT, "hour", new Variable("other", TIMESTAMP_TZ_MICROS)), new Constant(12L, BIGINT));
        assertThat(extract(unknownColumn)).isEqualTo(TupleDomain.all());
        assertThat(extract(Constant.TRUE)).isEqualTo(TupleDomain.all());
    }

    @Test
    void testParse()
    {
        assertThat(FunctionIndexes.parse("hour(ts)")).contains(new FunctionIndexes.IndexedCall("hour", "ts", List.of()));
        assertThat(FunctionIndexes.parse("date_format(ts, '%Y-%m-%d')")).contains(new FunctionIndexes.IndexedCall("date_format", "ts", List.of("%Y-%m-%d")));
        assertThat(FunctionIndexes.parse("date_format(ts, 'it''s %Y, ok')")).contains(new FunctionIndexes.IndexedCall("date_format", "ts", List.of("it's %Y, ok")));
        assertThat(FunctionIndexes.parse("substring(name, 1, 3)")).contains(new FunctionIndexes.IndexedCall("substring", "name", List.of(1L, 3L)));
        assertThat(FunctionIndexes.parse("hour")).isEmpty();
        assertThat(FunctionIndexes.parse("f(x, 'open)")).isEmpty();
        // expression trees are not one call over a column: never read as the outer call over a column
        assertThat(FunctionIndexes.parse("lower(trim(s))")).isEmpty();
        assertThat(FunctionIndexes.parse("lower(substring(s, 1, 3))")).isEmpty();
        assertThat(FunctionIndexes.parse("from_unixtime(e / 1000)")).isEmpty();
        assertThat(FunctionIndexes.parse("date_trunc('hour', ts)")).isEmpty();
        assertThat(FunctionIndexes.parse("1 + (2 * n)")).isEmpty();
    }
}
