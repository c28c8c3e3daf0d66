package io.lakeprune.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.google.protobuf.InvalidProtocolBufferException;
import io.airlift.slice.Slice;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Constant;
import io.trino.spi.expression.Variable;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.TimeZoneKey;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import lakeprune.v1.Predicate;
import lakeprune.v1.PruningServiceOuterClass.ColumnType;
import lakeprune.v1.PruningServiceOuterClass.EngineFilter;
import lakeprune.v1.PruningServiceOuterClass.Expression;
import lakeprune.v1.PruningServiceOuterClass.ExpressionCall;
import lakeprune.v1.PruningServiceOuterClass.FilterEngine;
import lakeprune.v1.PruningServiceOuterClass.TypeKind;

import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.trino.spi.expression.StandardFunctions.ARRAY_CONSTRUCTOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.CAST_FUNCTION_NAME;
import static java.util.Objects.requireNonNull;

/**
 * The part of a scan's filter that is not a TupleDomain, as Trino's own expression trees
 * (pruning_service.proto EngineFilter): each conjunct of applyFilter's ConnectorExpression, its
 * calls by Trino's function names, its variables as the table's columns, its constants as values of
 * lakeprune's types. The sidecar reads what it knows to mean the same as lakeprune's functions and
 * matches it against the table's index expressions: this class does not know which functions an
 * index uses. A {@code timestamp(p) with time zone} of at most microseconds is lakeprune's timestamp
 * (an instant; {@code from_unixtime} gives {@code timestamp(3)}), and the session's time zone goes
 * along, as the zone of such a value that Trino makes from a number. A conjunct is left out when a
 * part has no lakeprune type (char, timestamp(9), arrays but an IN list's, ...), casts a timestamp
 * to fewer fractional digits (Trino rounds), reads a hidden column, calls a function of a catalog,
 * or compares {@code lower} of text
 * with a literal holding a letter this JVM lowers differently from the index
 * ({@link IndexFunctions#trinoLowerIsIndexLower}: the only place where Trino's result for some
 * inputs is known here to differ from the registry's).
 *
 * <p>In a table handle it travels to workers as JSON: the message's bytes in base64.
 */
public record ExpressionFilter(EngineFilter filter)
{
    private static final String LOWER = "lower";

    public ExpressionFilter
    {
        requireNonNull(filter, "filter is null");
    }

    /** The conjuncts of {@code expression} that can be sent, in a session at {@code zone}; empty when none can. */
    public static Optional<ExpressionFilter> of(ConnectorExpression expression, Map<String, ColumnHandle> assignments, TimeZoneKey zone)
    {
        EngineFilter.Builder filter = EngineFilter.newBuilder().setEngine(FilterEngine.FILTER_ENGINE_TRINO).setTimeZone(zone.getId());
        for (ConnectorExpression conjunct : FunctionIndexes.conjuncts(expression)) {
            // a constant or a lone boolean column says nothing the TupleDomain does not
            if (!(conjunct instanceof Call) || !lowerAgrees(conjunct)) {
                continue;
            }
            encode(conjunct, assignments).ifPresent(filter::addConjuncts);
        }
        return filter.getConjunctsCount() == 0 ? Optional.empty() : Optional.of(new ExpressionFilter(filter.build()));
    }

    /** The conjuncts of both (either may be absent), each once: ANDing a filter already included gives the same filter. */
    public static Optional<ExpressionFilter> and(Optional<ExpressionFilter> left, Optional<ExpressionFilter> right)
    {
        if (left.isEmpty() || right.isEmpty()) {
            return left.isEmpty() ? right : left;
        }
        Set<Expression> conjuncts = new LinkedHashSet<>(left.get().filter().getConjunctsList());
        conjuncts.addAll(right.get().filter().getConjunctsList());
        return Optional.of(new ExpressionFilter(left.get().filter().toBuilder().clearConjuncts().addAllConjuncts(conjuncts).build()));
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    public static ExpressionFilter fromJson(String base64)
    {
        try {
            return new ExpressionFilter(EngineFilter.parseFrom(Base64.getDecoder().decode(base64)));
        }
        catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a lakeprune engine filter: " + e.getMessage(), e);
        }
    }

    @JsonValue
    public String toJson()
    {
        return Base64.getEncoder().encodeToString(filter.toByteArray());
    }

    /** The conjuncts as Trino's calls, at most TextFilter.SHOWN_CHARS characters (for EXPLAIN). */
    @Override
    public String toString()
    {
        String text = String.join(" AND ", filter.getConjunctsList().stream().map(ExpressionFilter::render).collect(toImmutableList()));
        return text.length() <= TextFilter.SHOWN_CHARS ? text : text.substring(0, TextFilter.SHOWN_CHARS - 3) + "...";
    }

    private static String render(Expression expression)
    {
        return switch (expression.getKindCase()) {
            case COLUMN -> expression.getColumn();
            case CONSTANT -> expression.getConstant().getKindCase() == Predicate.Value.KindCase.KIND_NOT_SET
                    ? "NULL"
                    : expression.getConstant().toString().strip().replaceFirst("^[a-z_]+: ", "");
            case CALL -> expression.getCall().getFunction() + "(" + String.join(", ", expression.getCall().getArgumentsList().stream().map(ExpressionFilter::render).collect(toImmutableList())) + ")";
            case KIND_NOT_SET -> "?";
        };
    }

    /** Trino's tree as an Expression; empty when a part of it has no lakeprune form. */
    static Optional<Expression> encode(ConnectorExpression expression, Map<String, ColumnHandle> assignments)
    {
        Type valueType = expression instanceof Call call && call.getFunctionName().equals(ARRAY_CONSTRUCTOR_FUNCTION_NAME) && expression.getType() instanceof ArrayType array
                ? array.getElementType()
                : expression.getType();
        Optional<ColumnType> type = valueType instanceof TimestampWithTimeZoneType zoned && zoned.getPrecision() <= 6
                ? Optional.of(ColumnType.newBuilder().setKind(TypeKind.TYPE_KIND_TIMESTAMP).setName(valueType.getDisplayName()).build())
                : LakepruneTypes.toColumnType(valueType);
        if (type.isEmpty()) {
            return Optional.empty();
        }
        Expression.Builder builder = Expression.newBuilder().setType(type.get());
        switch (expression) {
            case Variable variable -> {
                if (!(assignments.get(variable.getName()) instanceof LakepruneColumnHandle column) || column.isVirtual()) {
                    return Optional.empty();
                }
                return Optional.of(builder.setColumn(column.name()).build());
            }
            case Constant constant -> {
                if (constant.getValue() == null) {
                    return Optional.of(builder.setConstant(Predicate.Value.getDefaultInstance()).build());
                }
                return DomainEncoder.encodeValue(constant.getType(), constant.getValue()).map(value -> builder.setConstant(value).build());
            }
            case Call call -> {
                if (call.getFunctionName().getCatalogSchema().isPresent() || roundsTimestamp(call)) {
                    return Optional.empty();
                }
                ExpressionCall.Builder encoded = ExpressionCall.newBuilder().setFunction(call.getFunctionName().getName());
                for (ConnectorExpression argument : call.getArguments()) {
                    Optional<Expression> child = encode(argument, assignments);
                    if (child.isEmpty()) {
                        return Optional.empty();
                    }
                    encoded.addArguments(child.get());
                }
                return Optional.of(builder.setCall(encoded).build());
            }
            default -> {
                return Optional.empty();
            }
        }
    }

    /** Whether {@code call} casts a timestamp with time zone to fewer fractional digits, which Trino rounds. */
    private static boolean roundsTimestamp(Call call)
    {
        return call.getFunctionName().equals(CAST_FUNCTION_NAME)
                && call.getType() instanceof TimestampWithTimeZoneType target
                && call.getArguments().getFirst().getType() instanceof TimestampWithTimeZoneType source
                && target.getPrecision() < source.getPrecision();
    }

    /**
     * False when the conjunct calls {@code lower} and holds a text literal with a code point that
     * Trino's lower and the index's disagree on: a row Trino lowers to such a literal may have
     * another value in the index.
     */
    private static boolean lowerAgrees(ConnectorExpression conjunct)
    {
        return !calls(conjunct, LOWER) || textConstants(conjunct).stream().allMatch(IndexFunctions::trinoLowerIsIndexLower);
    }

    private static boolean calls(ConnectorExpression expression, String function)
    {
        return expression instanceof Call call
                && (call.getFunctionName().getName().equals(function) || call.getArguments().stream().anyMatch(argument -> calls(argument, function)));
    }

    private static List<String> textConstants(ConnectorExpression expression)
    {
        if (expression instanceof Constant constant && constant.getValue() instanceof Slice slice) {
            return List.of(slice.toStringUtf8());
        }
        return expression.getChildren().stream().flatMap(child -> textConstants(child).stream()).collect(toImmutableList());
    }
}
