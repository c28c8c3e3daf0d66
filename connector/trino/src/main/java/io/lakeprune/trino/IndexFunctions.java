package io.lakeprune.trino;

import io.airlift.slice.Slice;
import io.airlift.slice.SliceUtf8;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DoubleType.DOUBLE;
import static io.trino.spi.type.IntegerType.INTEGER;
import static io.trino.spi.type.SmallintType.SMALLINT;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.TinyintType.TINYINT;
import static io.trino.spi.type.TypeUtils.readNativeValue;
import static io.trino.spi.type.TypeUtils.writeNativeValue;
import static java.lang.Math.floorDiv;
import static java.nio.charset.StandardCharsets.UTF_8;
import static java.lang.Math.floorMod;
import static java.util.Objects.requireNonNull;

/**
 * The values of a functional index's hidden column, computed from its source column exactly as the
 * index computes them (pruner/functions/registry.py), so that a filter on the hidden column by
 * name both prunes (its domain goes to the sidecar) and is evaluated right on rows. One registry
 * call over one column is computed: {@code year}, {@code month}, {@code day}, {@code hour},
 * {@code to_date} and {@code date_format} (over {@code %Y %m %d %H %i %s %%}) of a
 * {@code timestamp(6) with time zone} column, in UTC and NULL outside 0001-01-01 .. 9999-12-31;
 * {@code from_unixtime} / {@code to_timestamp} / {@code timestamp_seconds} and
 * {@code timestamp_millis} of an integer column (NULL outside that range), {@code abs} of an
 * integer (NULL for -2^63) or double column; {@code lower} (per code point, by the registry's own
 * table, index-lower.tsv: the JVM's Unicode version is not Arrow's), {@code trim} (spaces only),
 * {@code substring(s, start >= 1, length >= 0)} (1-based, in code points) and {@code length}
 * (code points) of a {@code varchar} column. NULL in, NULL out. Any other hidden column (of
 * {@code upper}, {@code date_trunc}, {@code regexp_extract}, a tree) is refused with the way out:
 * filter by the expression itself, which the sidecar matches (ExpressionFilter).
 */
final class IndexFunctions
{
    // 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z (pruner.numeric.MIN_MICROS / MAX_MICROS)
    static final long MIN_MICROS = -62_135_596_800_000_000L;
    static final long MAX_MICROS = 253_402_300_799_999_999L;

    /** The registry's lower of each code point that is not its own lower (scripts/trino_function_cases.py). */
    private static final Map<Integer, String> INDEX_LOWER = loadLower();
    /**
     * What Trino's lower (Character.toLowerCase per code point) makes of the code points whose
     * lower Trino and the index disagree on: a string Trino lowered to a value without any of
     * these has the same lower in the index.
     */
    private static final Set<Integer> TRINO_LOWER_DISAGREES = trinoLowerDisagreements();

    private IndexFunctions() {}

    private static Map<Integer, String> loadLower()
    {
        Map<Integer, String> lower = new HashMap<>();
        try (InputStream stream = IndexFunctions.class.getResourceAsStream("index-lower.tsv")) {
            String text = new String(requireNonNull(stream, "index-lower.tsv is missing").readAllBytes(), UTF_8);
            for (String line : text.split("\n")) {
                if (line.isEmpty()) {
                    continue;
                }
                String[] fields = line.split("\t");
                StringBuilder lowered = new StringBuilder();
                for (String hex : fields[1].split(" ")) {
                    lowered.appendCodePoint(Integer.parseInt(hex, 16));
                }
                lower.put(Integer.parseInt(fields[0], 16), lowered.toString());
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.copyOf(lower);
    }

    private static Set<Integer> trinoLowerDisagreements()
    {
        Set<Integer> disagree = new HashSet<>();
        for (int codePoint = 0; codePoint <= Character.MAX_CODE_POINT; codePoint++) {
            int trino = Character.toLowerCase(codePoint);
            String index = INDEX_LOWER.get(codePoint);
            boolean same = index == null ? trino == codePoint : index.length() == Character.charCount(trino) && index.codePointAt(0) == trino;
            if (!same) {
                disagree.add(trino);
            }
        }
        return Set.copyOf(disagree);
    }

    /** The registry's lower: its table per code point. */
    static Slice indexLower(Slice value)
    {
        String text = value.toStringUtf8();
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(codePoint -> {
            String lowered = INDEX_LOWER.get(codePoint);
            if (lowered == null) {
                out.appendCodePoint(codePoint);
            }
            else {
                out.append(lowered);
            }
        });
        return utf8Slice(out.toString());
    }

    /**
     * Whether every string whose Trino lower is {@code lowered} has that same lower in the index
     * (true unless {@code lowered} holds a code point the two lowers disagree on).
     */
    static boolean trinoLowerIsIndexLower(String lowered)
    {
        return lowered.codePoints().noneMatch(TRINO_LOWER_DISAGREES::contains);
    }

    /** A hidden column's function over its source column's values (Trino native values). */
    record Computation(String expression, Type sourceType, Type resultType, Function<Object, Object> function)
    {
        Computation
        {
            requireNonNull(expression, "expression is null");
            requireNonNull(sourceType, "sourceType is null");
            requireNonNull(resultType, "resultType is null");
            requireNonNull(function, "function is null");
        }

        /** f(value); NULL in, NULL out. */
        Object apply(Object value)
        {
            return value == null ? null : function.apply(value);
        }

        Block applyToBlock(Block source)
        {
            int positions = source.getPositionCount();
            BlockBuilder builder = resultType.createBlockBuilder(null, positions);
            for (int position = 0; position < positions; position++) {
                if (source.isNull(position)) {
                    builder.appendNull();
                }
                else {
                    writeNativeValue(resultType, builder, function.apply(readNativeValue(sourceType, source, position)));
                }
            }
            return builder.build();
        }
    }

    /**
     * How to compute a hidden column from its source column; NOT_SUPPORTED, naming the function,
     * when the connector cannot compute it as the index does.
     */
    static Computation computation(LakepruneColumnHandle column)
    {
        String expression = column.expression().orElse("?");
        Optional<FunctionIndexes.IndexedCall> call = column.expression().flatMap(FunctionIndexes::parse);
        Optional<LakepruneColumnHandle> source = column.source();
        Optional<Function<Object, Object>> function = Optional.empty();
        if (call.isPresent() && source.isPresent()) {
            function = function(call.get(), source.get().type(), column.type());
        }
        if (function.isEmpty()) {
            throw new TrinoException(NOT_SUPPORTED, ("Column %s is the hidden column of a functional index on %s, and the lakeprune connector cannot compute %s in Trino "
                    + "as the index does; select and filter with the expression itself instead (e.g. WHERE %s = ...)")
                    .formatted(column.name(), expression, call.map(FunctionIndexes.IndexedCall::function).orElse(expression), expression));
        }
        return new Computation(expression, source.get().type(), column.type(), function.get());
    }

    static Optional<Function<Object, Object>> function(FunctionIndexes.IndexedCall call, Type sourceType, Type resultType)
    {
        List<Object> arguments = call.arguments();
        if (sourceType.equals(TIMESTAMP_TZ_MICROS)) {
            if (resultType.equals(BIGINT) && arguments.isEmpty()) {
                return switch (call.function()) {
                    case "year" -> Optional.of(field(time -> (long) time.getYear()));
                    case "month" -> Optional.of(field(time -> (long) time.getMonthValue()));
                    case "day" -> Optional.of(field(time -> (long) time.getDayOfMonth()));
                    case "hour" -> Optional.of(field(time -> (long) time.getHour()));
                    default -> Optional.empty();
                };
            }
            if (call.function().equals("date_format") && resultType instanceof VarcharType && arguments.size() == 1 && arguments.getFirst() instanceof String pattern) {
                return dateFormat(pattern).map(format -> field(time -> utf8Slice(format.apply(time))));
            }
            if (call.function().equals("to_date") && resultType.equals(DATE) && arguments.isEmpty()) {
                return Optional.of(field(time -> time.toLocalDate().toEpochDay()));
            }
            return Optional.empty();
        }
        if (isInteger(sourceType) && arguments.isEmpty()) {
            return switch (call.function()) {
                case "from_unixtime", "to_timestamp", "timestamp_seconds" -> resultType.equals(TIMESTAMP_TZ_MICROS)
                        ? Optional.of(epoch(floorDiv(MIN_MICROS, 1_000_000), floorDiv(MAX_MICROS, 1_000_000), 1))
                        : Optional.empty();
                case "timestamp_millis" -> resultType.equals(TIMESTAMP_TZ_MICROS)
                        ? Optional.of(epoch(floorDiv(MIN_MICROS, 1000), floorDiv(MAX_MICROS, 1000), 1000))
                        : Optional.empty();
                // the registry's abs of an integer is a bigint, NULL for -2^63 (where SQL fails)
                case "abs" -> resultType.equals(BIGINT)
                        ? Optional.of(value -> (long) value == Long.MIN_VALUE ? null : Math.abs((long) value))
                        : Optional.empty();
                default -> Optional.empty();
            };
        }
        if (sourceType.equals(DOUBLE) && resultType.equals(DOUBLE) && call.function().equals("abs") && arguments.isEmpty()) {
            return Optional.of(value -> Math.abs((double) value));
        }
        if (!(sourceType instanceof VarcharType)) {
            return Optional.empty();
        }
        return switch (call.function()) {
            case "trim" -> arguments.isEmpty() && resultType instanceof VarcharType
                    ? Optional.of(value -> trimSpaces((Slice) value))
                    : Optional.empty();
            case "lower" -> arguments.isEmpty() && resultType instanceof VarcharType
                    ? Optional.of(value -> indexLower((Slice) value))
                    : Optional.empty();
            case "length" -> arguments.isEmpty() && resultType.equals(BIGINT)
                    ? Optional.of(value -> (long) SliceUtf8.countCodePoints((Slice) value))
                    : Optional.empty();
            case "substring" -> arguments.size() == 2 && arguments.get(0) instanceof Long start && arguments.get(1) instanceof Long length
                    && start >= 1 && length >= 0 && resultType instanceof VarcharType
                    ? Optional.of(value -> substring((Slice) value, start, length))
                    : Optional.empty();
            default -> Optional.empty();
        };
    }

    private static boolean isInteger(Type type)
    {
        return type.equals(BIGINT) || type.equals(INTEGER) || type.equals(SMALLINT) || type.equals(TINYINT);
    }

    /** Epoch counts of 1 / {@code perSecond} seconds as UTC instants, NULL outside {@code [low, high]} (0001..9999). */
    private static Function<Object, Object> epoch(long low, long high, long perSecond)
    {
        return value -> {
            long count = (long) value;
            if (count < low || count > high) {
                return null;
            }
            long micros = Math.multiplyExact(count, 1_000_000 / perSecond);
            return LongTimestampWithTimeZone.fromEpochMillisAndFraction(floorDiv(micros, 1000), (int) floorMod(micros, 1000) * 1_000_000, UTC_KEY);
        };
    }

    /** The registry's trim: leading and trailing spaces (U+0020) only, as SQL's TRIM(BOTH ' ' FROM s). */
    static Slice trimSpaces(Slice value)
    {
        int begin = 0;
        int end = value.length();
        while (begin < end && value.getByte(begin) == ' ') {
            begin++;
        }
        while (end > begin && value.getByte(end - 1) == ' ') {
            end--;
        }
        return value.slice(begin, end - begin);
    }

    /** A field of the UTC instant, NULL outside 0001..9999 (as the index's temporal functions). */
    private static Function<Object, Object> field(Function<LocalDateTime, Object> field)
    {
        return value -> {
            LongTimestampWithTimeZone timestamp = (LongTimestampWithTimeZone) value;
            long micros = Math.addExact(Math.multiplyExact(timestamp.getEpochMillis(), 1000L), timestamp.getPicosOfMilli() / 1_000_000);
            if (micros < MIN_MICROS || micros > MAX_MICROS) {
                return null;
            }
            long seconds = floorDiv(micros, 1_000_000L);
            return field.apply(LocalDateTime.ofEpochSecond(seconds, (int) floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC));
        };
    }

    /** The registry's date_format: %Y (4 digits), %m %d %H %i %s (2 digits), %%; other characters literal. */
    static Optional<Function<LocalDateTime, String>> dateFormat(String pattern)
    {
        if (pattern.isEmpty() || pattern.indexOf('\'') >= 0) {
            return Optional.empty();
        }
        for (int i = 0; i < pattern.length(); i++) {
            if (pattern.charAt(i) == '%') {
                if (i + 1 >= pattern.length() || "YmdHis%".indexOf(pattern.charAt(i + 1)) < 0) {
                    return Optional.empty();
                }
                i++;
            }
        }
        return Optional.of(time -> {
            StringBuilder out = new StringBuilder(pattern.length() + 8);
            for (int i = 0; i < pattern.length(); i++) {
                char c = pattern.charAt(i);
                if (c != '%') {
                    out.append(c);
                    continue;
                }
                i++;
                switch (pattern.charAt(i)) {
                    case 'Y' -> pad(out, time.getYear(), 4);
                    case 'm' -> pad(out, time.getMonthValue(), 2);
                    case 'd' -> pad(out, time.getDayOfMonth(), 2);
                    case 'H' -> pad(out, time.getHour(), 2);
                    case 'i' -> pad(out, time.getMinute(), 2);
                    case 's' -> pad(out, time.getSecond(), 2);
                    default -> out.append('%');
                }
            }
            return out.toString();
        });
    }

    private static void pad(StringBuilder out, int value, int width)
    {
        String digits = Integer.toString(value);
        out.repeat('0', Math.max(0, width - digits.length())).append(digits);
    }

    /** Code points [start - 1, start - 1 + length), cut at the end of the string. */
    static Slice substring(Slice value, long start, long length)
    {
        int codePoints = SliceUtf8.countCodePoints(value);
        long from = Math.min(start - 1, codePoints);
        long to = Math.min(from + length, codePoints);
        if (from >= to) {
            return utf8Slice("");
        }
        int begin = SliceUtf8.offsetOfCodePoint(value, (int) from);
        int end = to == codePoints ? value.length() : SliceUtf8.offsetOfCodePoint(value, (int) to);
        return value.slice(begin, end - begin);
    }
}
