package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import io.airlift.slice.Slice;
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
import io.trino.spi.type.VarcharType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import static io.trino.spi.expression.StandardFunctions.AND_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LESS_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LESS_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.NOT_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS;

/**
 * Turns comparisons of registry function calls in a filter expression ({@code hour(ts) = 12},
 * {@code date_format(ts, '%Y-%m-%d') = '2024-01-02'}, {@code lower(name) = 'x'},
 * {@code substring(name, 1, 3) = 'abc'}) into domains on the virtual column of the functional index
 * that indexes exactly that call. The expression itself stays with Trino (the sidecar prunes files,
 * not rows), so nothing is dropped; a call without a matching index is simply not translated.
 *
 * <p>Only functions whose Trino semantics equal the index's are translated: on a
 * {@code timestamp(6) with time zone} column, whose values this connector reads in UTC, Trino's
 * {@code year}, {@code month}, {@code day}, {@code hour} and {@code date_format} (over
 * {@code %Y %m %d %H %i %s %%}) are the UTC fields the index stores; {@code lower},
 * {@code substring} and {@code length} work on code points, as the index does ({@code lower} only
 * in equalities, see sameLower). {@code upper} is not
 * translated: Trino keeps 'ß' where the index stores 'ẞ'. {@code from_unixtime} and
 * {@code to_date} differ in type or zone from Trino's functions of the same name.
 */
public final class FunctionIndexes
{
    private static final Set<String> TEMPORAL_FIELDS = Set.of("year", "month", "day", "hour");
    // how the sidecar renders a column or a function name in an index expression
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]*");
    private static final Set<String> STRING_FUNCTIONS = Set.of("lower", "substring", "length");

    private FunctionIndexes() {}

    /** A functional index's call, parsed from GetTableResponse.virtual_columns[].expression. */
    public record IndexedCall(String function, String column, List<Object> arguments)
    {
        public IndexedCall
        {
            function = function.toLowerCase(Locale.ROOT);
            arguments = List.copyOf(arguments);
        }
    }

    /** The domains on virtual columns that the expression's conjuncts imply; all when none does. */
    public static TupleDomain<LakepruneColumnHandle> extract(
            ConnectorExpression expression,
            Map<String, ColumnHandle> assignments,
            List<LakepruneColumnHandle> virtualColumns)
    {
        TupleDomain<LakepruneColumnHandle> result = TupleDomain.all();
        for (ConnectorExpression conjunct : conjuncts(expression)) {
            Optional<Comparison> comparison = comparison(conjunct);
            if (comparison.isEmpty()) {
                continue;
            }
            for (LakepruneColumnHandle virtual : virtualColumns) {
                Optional<IndexedCall> indexed = virtual.expression().flatMap(FunctionIndexes::parse);
                if (indexed.isPresent() && matches(comparison.get().call(), indexed.get(), assignments) && sameLower(indexed.get(), comparison.get())) {
                    Optional<Domain> domain = comparison.get().domain(virtual.type(), nullMayMatch(indexed.get()));
                    if (domain.isPresent()) {
                        result = result.intersect(TupleDomain.withColumnDomains(Map.of(virtual, domain.get())));
                    }
                }
            }
        }
        return result;
    }

    private record Comparison(Call call, FunctionName operator, Constant value)
    {
        Optional<Domain> domain(Type type, boolean nullAllowed)
        {
            if (value.getValue() == null || !value.getType().equals(type) && !(type instanceof VarcharType && value.getType() instanceof VarcharType)) {
                return Optional.empty();
            }
            Object literal = value.getValue();
            Range range;
            if (operator.equals(EQUAL_OPERATOR_FUNCTION_NAME)) {
                range = Range.equal(type, literal);
            }
            else if (operator.equals(LESS_THAN_OPERATOR_FUNCTION_NAME)) {
                range = Range.lessThan(type, literal);
            }
            else if (operator.equals(LESS_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME)) {
                range = Range.lessThanOrEqual(type, literal);
            }
            else if (operator.equals(GREATER_THAN_OPERATOR_FUNCTION_NAME)) {
                range = Range.greaterThan(type, literal);
            }
            else if (operator.equals(GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME)) {
                range = Range.greaterThanOrEqual(type, literal);
            }
            else {
                return Optional.empty();
            }
            return Optional.of(Domain.create(ValueSet.ofRanges(range), nullAllowed));
        }
    }

    /**
     * Trino's lower and the index's agree on every code point but a few (letters newer than the
     * JVM's Unicode tables, which Trino leaves as they are and the index lowers): a row Trino
     * lowers to a literal without any of those has the same value in the index, so an equality
     * is translated; a range is not (such a row could fall inside Trino's range and outside the
     * index's).
     */
    private static boolean sameLower(IndexedCall indexed, Comparison comparison)
    {
        if (!indexed.function().equals("lower")) {
            return true;
        }
        return comparison.operator().equals(EQUAL_OPERATOR_FUNCTION_NAME)
                && comparison.value().getValue() instanceof Slice literal
                && IndexFunctions.trinoLowerIsIndexLower(literal.toStringUtf8());
    }

    /**
     * Whether files whose indexed value is NULL must be kept. A comparison is false on NULL, but the
     * index's temporal functions are NULL for instants outside 0001..9999, where Trino's functions
     * still have a value: for those, NULL must stay possible, or such rows could be pruned.
     */
    private static boolean nullMayMatch(IndexedCall indexed)
    {
        return TEMPORAL_FIELDS.contains(indexed.function()) || indexed.function().equals("date_format");
    }

    private static Optional<Comparison> comparison(ConnectorExpression expression)
    {
        if (!(expression instanceof Call call) || call.getArguments().size() != 2) {
            return Optional.empty();
        }
        FunctionName operator = call.getFunctionName();
        ConnectorExpression left = call.getArguments().get(0);
        ConnectorExpression right = call.getArguments().get(1);
        if (left instanceof Call function && right instanceof Constant constant) {
            return Optional.of(new Comparison(function, operator, constant));
        }
        if (right instanceof Call function && left instanceof Constant constant) {
            return flip(operator).map(flipped -> new Comparison(function, flipped, constant));
        }
        return Optional.empty();
    }

    /** The comparison with its operands swapped ({@code 0 < x} is {@code x > 0}). */
    static Optional<FunctionName> flip(FunctionName operator)
    {
        if (operator.equals(EQUAL_OPERATOR_FUNCTION_NAME) || operator.equals(NOT_EQUAL_OPERATOR_FUNCTION_NAME)) {
            return Optional.of(operator);
        }
        if (operator.equals(LESS_THAN_OPERATOR_FUNCTION_NAME)) {
            return Optional.of(GREATER_THAN_OPERATOR_FUNCTION_NAME);
        }
        if (operator.equals(LESS_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME)) {
            return Optional.of(GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME);
        }
        if (operator.equals(GREATER_THAN_OPERATOR_FUNCTION_NAME)) {
            return Optional.of(LESS_THAN_OPERATOR_FUNCTION_NAME);
        }
        if (operator.equals(GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME)) {
            return Optional.of(LESS_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME);
        }
        return Optional.empty();
    }

    static boolean matches(Call call, IndexedCall indexed, Map<String, ColumnHandle> assignments)
    {
        if (call.getFunctionName().getCatalogSchema().isPresent()) {
            return false;
        }
        String name = call.getFunctionName().getName().toLowerCase(Locale.ROOT);
        if (!name.equals(indexed.function()) || call.getArguments().isEmpty()) {
            return false;
        }
        if (!(call.getArguments().getFirst() instanceof Variable variable)
                || !(assignments.get(variable.getName()) instanceof LakepruneColumnHandle column)
                || column.isVirtual()
                || !column.name().equals(indexed.column())) {
            return false;
        }
        boolean sameSemantics = switch (name) {
            case "date_format" -> column.type().equals(TIMESTAMP_TZ_MICROS) && datePatternSupported(indexed);
            case String field when TEMPORAL_FIELDS.contains(field) -> column.type().equals(TIMESTAMP_TZ_MICROS);
            case String function when STRING_FUNCTIONS.contains(function) -> column.type() instanceof VarcharType;
            default -> false;
        };
        if (!sameSemantics) {
            return false;
        }
        List<ConnectorExpression> literals = call.getArguments().subList(1, call.getArguments().size());
        if (literals.size() != indexed.arguments().size()) {
            return false;
        }
        for (int i = 0; i < literals.size(); i++) {
            if (!(literals.get(i) instanceof Constant constant) || !literalEquals(constant, indexed.arguments().get(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean datePatternSupported(IndexedCall indexed)
    {
        if (indexed.arguments().size() != 1 || !(indexed.arguments().getFirst() instanceof String pattern)) {
            return false;
        }
        for (int i = 0; i < pattern.length(); i++) {
            if (pattern.charAt(i) == '%') {
                if (i + 1 >= pattern.length() || "YmdHis%".indexOf(pattern.charAt(i + 1)) < 0) {
                    return false;
                }
                i++;
            }
        }
        return true;
    }

    private static boolean literalEquals(Constant constant, Object expected)
    {
        Object value = constant.getValue();
        if (expected instanceof String text) {
            return value instanceof Slice slice && slice.toStringUtf8().equals(text);
        }
        if (expected instanceof Long number) {
            return value instanceof Long actual && actual.equals(number) && constant.getType().equals(BIGINT);
        }
        return false;
    }

    static List<ConnectorExpression> conjuncts(ConnectorExpression expression)
    {
        if (expression instanceof Call call && call.getFunctionName().equals(AND_FUNCTION_NAME)) {
            ImmutableList.Builder<ConnectorExpression> result = ImmutableList.builder();
            call.getArguments().forEach(argument -> result.addAll(conjuncts(argument)));
            return result.build();
        }
        return ImmutableList.of(expression);
    }

    /**
     * Parses the sidecar's rendering of an indexed call: {@code name(column[, literal...])} with
     * literals in SQL spelling ('text' with '' for a quote, or an integer); empty for any other
     * index expression (nested calls, arithmetic, casts).
     */
    public static Optional<IndexedCall> parse(String expression)
    {
        String text = expression.strip();
        int open = text.indexOf('(');
        if (open <= 0 || !text.endsWith(")")) {
            return Optional.empty();
        }
        String function = text.substring(0, open).strip();
        List<String> parts = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean quoted = false;
        String body = text.substring(open + 1, text.length() - 1);
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c == '\'') {
                if (quoted && i + 1 < body.length() && body.charAt(i + 1) == '\'') {
                    current.append("''");
                    i++;
                    continue;
                }
                quoted = !quoted;
                current.append(c);
            }
            else if (c == ',' && !quoted) {
                parts.add(current.toString().strip());
                current.setLength(0);
            }
            else {
                current.append(c);
            }
        }
        if (quoted) {
            return Optional.empty();
        }
        parts.add(current.toString().strip());
        // one registry call over a column: a nested or computed argument (an expression tree,
        // `lower(trim(s))`, `from_unixtime(e / 1000)`) is not a call this connector reads
        if (!NAME.matcher(parts.getFirst()).matches() || !NAME.matcher(function).matches()) {
            return Optional.empty();
        }
        List<Object> arguments = new ArrayList<>();
        for (String part : parts.subList(1, parts.size())) {
            if (part.length() >= 2 && part.startsWith("'") && part.endsWith("'")) {
                arguments.add(part.substring(1, part.length() - 1).replace("''", "'"));
            }
            else {
                try {
                    arguments.add(Long.parseLong(part));
                }
                catch (NumberFormatException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.of(new IndexedCall(function, parts.getFirst(), arguments));
    }
}
