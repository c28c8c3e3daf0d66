package io.lakeprune.trino;

import io.airlift.slice.Slice;
import io.airlift.slice.SliceUtf8;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DoubleType.DOUBLE;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TypeUtils.readNativeValue;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The hidden columns' values against the answers of the Python registry itself:
 * index-function-cases.tsv (and the connector's index-lower.tsv) are written by
 * scripts/trino_function_cases.py from pruner.functions (tests/test_generated_code.py checks they are current).
 */
class TestIndexFunctions
{
    private static final LakepruneColumnHandle TS = LakepruneColumnHandle.regular("ts", TIMESTAMP_TZ_MICROS);
    private static final LakepruneColumnHandle NAME = LakepruneColumnHandle.regular("name", VARCHAR);

    private record Case(String function, String arguments, String source, String input, String result, String expected) {}

    // the source column of each source type
    private static final Map<String, LakepruneColumnHandle> SOURCES = Map.of(
            "timestamp", TS,
            "string", NAME,
            "bigint", LakepruneColumnHandle.regular("n", BIGINT),
            "double", LakepruneColumnHandle.regular("x", DOUBLE));
    private static final Map<String, Type> RESULTS = Map.of(
            "bigint", BIGINT, "string", VARCHAR, "date", DATE, "timestamp", TIMESTAMP_TZ_MICROS, "double", DOUBLE);

    private static List<String[]> lines()
            throws IOException
    {
        try (var stream = TestIndexFunctions.class.getResourceAsStream("index-function-cases.tsv");
                var reader = new BufferedReader(new InputStreamReader(stream, UTF_8))) {
            return reader.lines().map(line -> line.split("\t", -1)).collect(Collectors.toList());
        }
    }

    private static String call(Case c, String column)
    {
        if (c.arguments().isEmpty()) {
            return "%s(%s)".formatted(c.function(), column);
        }
        String arguments = Arrays.stream(c.arguments().split(","))
                .map(argument -> c.function().equals("date_format") ? "'" + argument + "'" : argument)
                .collect(Collectors.joining(", "));
        return "%s(%s, %s)".formatted(c.function(), column, arguments);
    }

    static LongTimestampWithTimeZone timestamp(long micros)
    {
        return LongTimestampWithTimeZone.fromEpochMillisAndFraction(Math.floorDiv(micros, 1000), Math.floorMod(micros, 1000) * 1_000_000, UTC_KEY);
    }

    /** A value of the cases file as Trino's native value of {@code type}; NULL is \\N. */
    private static Object value(String text, String type)
    {
        if (text.equals("\\N")) {
            return null;
        }
        return switch (type) {
            case "timestamp" -> timestamp(Long.parseLong(text));
            case "string" -> utf8Slice(text);
            case "bigint" -> Long.parseLong(text);
            // Python's repr: inf, -inf
            case "double" -> Double.parseDouble(text.replace("inf", "Infinity"));
            case "date" -> LocalDate.parse(text).toEpochDay();
            default -> throw new IllegalArgumentException(type);
        };
    }

    @Test
    void testValuesEqualThePythonRegistrys()
            throws IOException
    {
        Map<String, List<Case>> byCall = new HashMap<>();
        int count = 0;
        for (String[] line : lines()) {
            assertThat(line).hasSize(6);
            Case c = new Case(line[0], line[1], line[2], line[3], line[4], line[5]);
            byCall.computeIfAbsent(call(c, SOURCES.get(c.source()).name()), _ -> new ArrayList<>()).add(c);
            count++;
        }
        assertThat(count).isGreaterThan(2000);
        for (Map.Entry<String, List<Case>> entry : byCall.entrySet()) {
            String expression = entry.getKey();
            List<Case> cases = entry.getValue();
            Type resultType = RESULTS.get(cases.getFirst().result());
            LakepruneColumnHandle source = SOURCES.get(cases.getFirst().source());
            LakepruneColumnHandle hidden = LakepruneColumnHandle.virtual("idx", resultType, expression, Optional.of(source));
            IndexFunctions.Computation computation = IndexFunctions.computation(hidden);

            // one value at a time, and a block of them (with a NULL) as the page source does
            BlockBuilder builder = computation.sourceType().createBlockBuilder(null, cases.size() + 1);
            List<Object> expected = new ArrayList<>();
            for (Case c : cases) {
                Object input = value(c.input(), c.source());
                Object want = value(c.expected(), c.result());
                assertThat(computation.apply(input)).as("%s on %s", expression, c.input()).isEqualTo(want);
                io.trino.spi.type.TypeUtils.writeNativeValue(computation.sourceType(), builder, input);
                expected.add(want);
            }
            builder.appendNull();
            expected.add(null);
            Block result = computation.applyToBlock(builder.build());
            assertThat(result.getPositionCount()).isEqualTo(expected.size());
            for (int position = 0; position < expected.size(); position++) {
                Object actual = result.isNull(position) ? null : readNativeValue(resultType, result, position);
                assertThat(actual).as("%s, block position %s", expression, position).isEqualTo(expected.get(position));
            }
        }
        assertThat(byCall).containsKeys(
                "year(ts)", "month(ts)", "day(ts)", "hour(ts)", "date_format(ts, '%Y-%m-%d %H:%i:%s')", "to_date(ts)",
                "lower(name)", "length(name)", "substring(name, 2, 1)", "trim(name)",
                "from_unixtime(n)", "to_timestamp(n)", "timestamp_seconds(n)", "timestamp_millis(n)", "abs(n)", "abs(x)");
    }

    @Test
    void testIndexLowerOfEveryCodePoint()
    {
        // index-lower.tsv is the registry's lower of every code point that changes: where the JVM's
        // (Trino's) lower differs from it, only letters Trino leaves as they are differ
        List<String> differences = new ArrayList<>();
        for (int codePoint = 0; codePoint <= Character.MAX_CODE_POINT; codePoint++) {
            if (codePoint >= Character.MIN_SURROGATE && codePoint <= Character.MAX_SURROGATE) {
                continue;
            }
            Slice point = utf8Slice(new String(Character.toChars(codePoint)));
            Slice trino = SliceUtf8.toLowerCase(point);
            assertThat(trino.toStringUtf8()).isEqualTo(new String(Character.toChars(Character.toLowerCase(codePoint))));
            Slice index = IndexFunctions.indexLower(point);
            if (!index.equals(trino)) {
                assertThat(trino).as("U+%04X", codePoint).isEqualTo(point);
                assertThat(IndexFunctions.trinoLowerIsIndexLower(trino.toStringUtf8())).isFalse();
                differences.add("U+%04X".formatted(codePoint));
            }
        }
        // Java 25 has Unicode 16; the registry's utf8proc is newer
        assertThat(differences).hasSizeLessThan(100);
    }

    @Test
    void testSubstringCutsByCodePoints()
    {
        Slice text = utf8Slice("a😀B😀c");
        assertThat(IndexFunctions.substring(text, 2, 2)).isEqualTo(utf8Slice("😀B"));
        assertThat(IndexFunctions.substring(text, 5, 1)).isEqualTo(utf8Slice("c"));
        assertThat(IndexFunctions.substring(text, 6, 1)).isEqualTo(utf8Slice(""));
        assertThat(IndexFunctions.substring(text, 1, 0)).isEqualTo(utf8Slice(""));
        assertThat(IndexFunctions.substring(text, 1, Long.MAX_VALUE / 2)).isEqualTo(text);
    }

    @Test
    void testTemporalFieldsAreNullOutsideTheIndexRange()
    {
        IndexFunctions.Computation year = IndexFunctions.computation(LakepruneColumnHandle.virtual("y", BIGINT, "year(ts)", Optional.of(TS)));
        assertThat(year.apply(timestamp(IndexFunctions.MIN_MICROS))).isEqualTo(1L);
        assertThat(year.apply(timestamp(IndexFunctions.MIN_MICROS - 1))).isNull();
        assertThat(year.apply(timestamp(IndexFunctions.MAX_MICROS))).isEqualTo(9999L);
        assertThat(year.apply(timestamp(IndexFunctions.MAX_MICROS + 1))).isNull();
        assertThat(year.apply(null)).isNull();
    }

    @Test
    void testFunctionsTheConnectorCannotComputeAreRefusedByName()
    {
        assertRefused(LakepruneColumnHandle.virtual("upper_idx", VARCHAR, "upper(name)", Optional.of(NAME)), "upper");
        assertRefused(LakepruneColumnHandle.virtual("code", VARCHAR, "regexp_extract(name, '(a)', 1)", Optional.of(NAME)), "regexp_extract");
        // a registry function with a result type other than the registry's
        assertRefused(LakepruneColumnHandle.virtual("day_idx", BIGINT, "to_date(ts)", Optional.of(TS)), "to_date");
        assertRefused(LakepruneColumnHandle.virtual("fmt", VARCHAR, "date_format(ts, '%W')", Optional.of(TS)), "date_format");
        // the same function over a source type whose semantics were not established
        assertRefused(LakepruneColumnHandle.virtual("h", BIGINT, "hour(name)", Optional.of(NAME)), "hour");
        assertRefused(LakepruneColumnHandle.virtual("h", BIGINT, "hour(ts)", Optional.empty()), "hour");
    }

    private static void assertRefused(LakepruneColumnHandle column, String function)
    {
        assertThatThrownBy(() -> IndexFunctions.computation(column))
                .isInstanceOf(TrinoException.class)
                .hasMessageContaining("cannot compute " + function + " ")
                .hasMessageContaining(column.expression().orElseThrow())
                .hasMessageContaining("expression itself");
    }
}
