package io.lakeprune.trino;

import com.google.common.collect.ImmutableList;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.FunctionName;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

import static io.trino.spi.expression.StandardFunctions.AND_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LESS_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LESS_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.NOT_EQUAL_OPERATOR_FUNCTION_NAME;

/**
 * Reading functional indexes' expressions and Trino's filters: {@link #parse} reads a one-call index
 * expression (GetTableResponse.virtual_columns[].expression) for the hidden columns the connector
 * computes (IndexFunctions); {@link #conjuncts} splits a filter at its ANDs and {@link #flip} swaps
 * a comparison's operands, for ExpressionFilter and TextFilter. Which index a filter can use is the
 * sidecar's to decide (ExpressionFilter sends Trino's trees as they are).
 */
public final class FunctionIndexes
{
    // how the sidecar renders a column or a function name in an index expression
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]*");

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
