package io.lakeprune.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.google.protobuf.InvalidProtocolBufferException;
import io.airlift.slice.Slice;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Constant;
import io.trino.spi.expression.FunctionName;
import io.trino.spi.expression.Variable;
import io.trino.spi.type.BigintType;
import io.trino.spi.type.IntegerType;
import io.trino.spi.type.SmallintType;
import io.trino.spi.type.TinyintType;
import io.trino.spi.type.VarcharType;
import lakeprune.v1.Predicate.LikePattern;
import lakeprune.v1.Predicate.OpaqueText;
import lakeprune.v1.Predicate.TextAtom;
import lakeprune.v1.Predicate.TextCase;
import lakeprune.v1.Predicate.TextPredicate;
import lakeprune.v1.Predicate.TextPredicates;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.trino.spi.expression.StandardFunctions.AND_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LIKE_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.NOT_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.OR_FUNCTION_NAME;
import static java.util.Objects.requireNonNull;

/**
 * The text predicate (predicate.proto TextPredicate) a table handle carries to the sidecar's text
 * indexes, translated from Trino's filter expression: {@code $and} / {@code $or} become
 * {@code all} / {@code any}, and an atom over a {@code varchar} column of the table, or
 * {@code lower} / {@code upper} of one, is sent as Trino wrote it: {@code LIKE} with its optional
 * escape, {@code strpos(s, c)} compared so that 0 (not found) fails ({@code > 0}, {@code >= 1},
 * {@code <> 0}, or a larger bound; either way round) as {@code contains}, {@code starts_with} and
 * {@code regexp_like}. Everything else ({@code NOT}, a non-constant, NULL or non-varchar argument,
 * a hidden column, any other call) is {@code opaque}: what it requires, and what an AND or OR
 * of it requires, is the sidecar's to decide. A filter without any atom has no text predicate.
 *
 * <p>The one thing checked here is that an atom over {@code lower} / {@code upper} means what the
 * index's case forms mean: Trino cases text with the JVM's Unicode tables, the index with
 * Arrow's, and they disagree on a few newer letters. An atom over {@code lower} is sent only when
 * its literal holds none of the code points the two lowers disagree on (the index's table,
 * {@link IndexFunctions#trinoLowerIsIndexLower}); one over {@code upper} only with an ASCII
 * literal (there is no table of the index's upper). Otherwise it is opaque.
 *
 * <p>In a table handle it travels to workers as JSON: the message's bytes in base64.
 */
public record TextFilter(TextPredicate predicate)
{
    /** Characters at most of an atom's {@code source}, and of the filter's text in EXPLAIN. */
    static final int SHOWN_CHARS = 200;

    private static final TextPredicate OPAQUE = TextPredicate.newBuilder().setOpaque(OpaqueText.getDefaultInstance()).build();
    private static final FunctionName LOWER = new FunctionName("lower");
    private static final FunctionName UPPER = new FunctionName("upper");
    private static final FunctionName STRPOS = new FunctionName("strpos");
    private static final FunctionName STARTS_WITH = new FunctionName("starts_with");
    private static final FunctionName REGEXP_LIKE = new FunctionName("regexp_like");

    public TextFilter
    {
        requireNonNull(predicate, "predicate is null");
    }

    /** The text predicate of {@code expression}, whose variables {@code assignments} binds to columns; empty when it has no atom. */
    public static Optional<TextFilter> of(ConnectorExpression expression, Map<String, ColumnHandle> assignments)
    {
        TextPredicate predicate = translate(expression, assignments);
        return hasAtom(predicate) ? Optional.of(new TextFilter(predicate)) : Optional.empty();
    }

    /**
     * The AND of two text predicates (either may be absent): the conjuncts of both, each once, so
     * that ANDing a predicate already included gives the same filter.
     */
    public static Optional<TextFilter> and(Optional<TextFilter> left, Optional<TextFilter> right)
    {
        if (left.isEmpty() || right.isEmpty()) {
            return left.isEmpty() ? right : left;
        }
        Set<TextPredicate> parts = new LinkedHashSet<>(conjuncts(left.get().predicate()));
        parts.addAll(conjuncts(right.get().predicate()));
        if (parts.size() == 1) {
            return Optional.of(new TextFilter(parts.iterator().next()));
        }
        return Optional.of(new TextFilter(TextPredicate.newBuilder().setAll(TextPredicates.newBuilder().addAllParts(parts)).build()));
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    public static TextFilter fromJson(String base64)
    {
        try {
            return new TextFilter(TextPredicate.parseFrom(Base64.getDecoder().decode(base64)));
        }
        catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a lakeprune text predicate: " + e.getMessage(), e);
        }
    }

    @JsonValue
    public String toJson()
    {
        return Base64.getEncoder().encodeToString(predicate.toByteArray());
    }

    /** The predicate as its atoms' sources joined by AND / OR, an opaque part as {@code <other>}, at most SHOWN_CHARS characters. */
    @Override
    public String toString()
    {
        return shorten(render(predicate, true));
    }

    private static String render(TextPredicate predicate, boolean outermost)
    {
        return switch (predicate.getKindCase()) {
            case ATOM -> predicate.getAtom().getSource().isEmpty() ? predicate.getAtom().getColumn() : predicate.getAtom().getSource();
            case ALL -> group(predicate.getAll(), " AND ", outermost);
            case ANY -> group(predicate.getAny(), " OR ", outermost);
            case OPAQUE, KIND_NOT_SET -> "<other>";
        };
    }

    private static String group(TextPredicates group, String operator, boolean outermost)
    {
        String joined = String.join(operator, group.getPartsList().stream().map(part -> render(part, false)).collect(toImmutableList()));
        return outermost ? joined : "(" + joined + ")";
    }

    private static List<TextPredicate> conjuncts(TextPredicate predicate)
    {
        if (!predicate.hasAll()) {
            return List.of(predicate);
        }
        List<TextPredicate> result = new ArrayList<>();
        predicate.getAll().getPartsList().forEach(part -> result.addAll(conjuncts(part)));
        return result;
    }

    private static boolean hasAtom(TextPredicate predicate)
    {
        return switch (predicate.getKindCase()) {
            case ATOM -> true;
            case ALL -> predicate.getAll().getPartsList().stream().anyMatch(TextFilter::hasAtom);
            case ANY -> predicate.getAny().getPartsList().stream().anyMatch(TextFilter::hasAtom);
            case OPAQUE, KIND_NOT_SET -> false;
        };
    }

    private static TextPredicate translate(ConnectorExpression expression, Map<String, ColumnHandle> assignments)
    {
        if (expression instanceof Call call && !call.getArguments().isEmpty()
                && (call.getFunctionName().equals(AND_FUNCTION_NAME) || call.getFunctionName().equals(OR_FUNCTION_NAME))) {
            TextPredicates.Builder parts = TextPredicates.newBuilder();
            call.getArguments().forEach(argument -> parts.addParts(translate(argument, assignments)));
            TextPredicate.Builder group = TextPredicate.newBuilder();
            return (call.getFunctionName().equals(AND_FUNCTION_NAME) ? group.setAll(parts) : group.setAny(parts)).build();
        }
        return atom(expression, assignments)
                .map(atom -> TextPredicate.newBuilder().setAtom(atom).build())
                .orElse(OPAQUE);
    }

    private static Optional<TextAtom> atom(ConnectorExpression expression, Map<String, ColumnHandle> assignments)
    {
        if (!(expression instanceof Call call) || call.getFunctionName().getCatalogSchema().isPresent()) {
            return Optional.empty();
        }
        FunctionName function = call.getFunctionName();
        List<ConnectorExpression> arguments = call.getArguments();
        if (function.equals(LIKE_FUNCTION_NAME) && (arguments.size() == 2 || arguments.size() == 3)) {
            return like(arguments, assignments);
        }
        if (arguments.size() != 2) {
            return Optional.empty();
        }
        if (function.equals(STARTS_WITH) || function.equals(REGEXP_LIKE)) {
            Optional<Subject> subject = subject(arguments.get(0), assignments);
            Optional<String> literal = subject.flatMap(found -> literal(arguments.get(1), found));
            if (literal.isEmpty()) {
                return Optional.empty();
            }
            String source = "%s(%s, %s)".formatted(function.getName(), subject.get().sql(), quoted(literal.get()));
            TextAtom.Builder atom = subject.get().atom(source);
            return Optional.of((function.equals(STARTS_WITH) ? atom.setStartsWith(literal.get()) : atom.setRegex(literal.get())).build());
        }
        return strposComparison(function, arguments.get(0), arguments.get(1), assignments)
                .or(() -> FunctionIndexes.flip(function).flatMap(flipped -> strposComparison(flipped, arguments.get(1), arguments.get(0), assignments)));
    }

    private static Optional<TextAtom> like(List<ConnectorExpression> arguments, Map<String, ColumnHandle> assignments)
    {
        Optional<Subject> subject = subject(arguments.get(0), assignments);
        Optional<String> pattern = subject.flatMap(found -> literal(arguments.get(1), found));
        Optional<String> escape = arguments.size() == 3 ? varchar(arguments.get(2)) : Optional.empty();
        if (pattern.isEmpty() || arguments.size() == 3 && escape.isEmpty()) {
            return Optional.empty();
        }
        LikePattern.Builder like = LikePattern.newBuilder().setPattern(pattern.get());
        escape.ifPresent(like::setEscape);
        String source = subject.get().sql() + " LIKE " + quoted(pattern.get()) + escape.map(character -> " ESCAPE " + quoted(character)).orElse("");
        return Optional.of(subject.get().atom(source).setLike(like).build());
    }

    /** {@code strpos(subject, literal) <operator> number}, when that is false for 0 (not found) only. */
    private static Optional<TextAtom> strposComparison(FunctionName operator, ConnectorExpression left, ConnectorExpression right, Map<String, ColumnHandle> assignments)
    {
        if (!(left instanceof Call strpos) || !strpos.getFunctionName().equals(STRPOS) || strpos.getArguments().size() != 2) {
            return Optional.empty();
        }
        OptionalLong number = integer(right);
        if (number.isEmpty() || !zeroFails(operator, number.getAsLong())) {
            return Optional.empty();
        }
        Optional<Subject> subject = subject(strpos.getArguments().get(0), assignments);
        Optional<String> literal = subject.flatMap(found -> literal(strpos.getArguments().get(1), found));
        if (literal.isEmpty()) {
            return Optional.empty();
        }
        String source = "strpos(%s, %s) %s %d".formatted(subject.get().sql(), quoted(literal.get()), symbol(operator), number.getAsLong());
        return Optional.of(subject.get().atom(source).setContains(literal.get()).build());
    }

    /** Whether {@code position <operator> number} holds for some position >= 1 and never for 0. */
    private static boolean zeroFails(FunctionName operator, long number)
    {
        return operator.equals(GREATER_THAN_OPERATOR_FUNCTION_NAME) && number >= 0
                || operator.equals(GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME) && number >= 1
                || operator.equals(NOT_EQUAL_OPERATOR_FUNCTION_NAME) && number == 0;
    }

    private static String symbol(FunctionName operator)
    {
        if (operator.equals(GREATER_THAN_OPERATOR_FUNCTION_NAME)) {
            return ">";
        }
        return operator.equals(GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME) ? ">=" : "<>";
    }

    /** Which text an atom tests: a varchar column of the table as stored, or lower / upper of it. */
    private record Subject(String column, TextCase textCase)
    {
        static Optional<Subject> of(ConnectorExpression expression, Map<String, ColumnHandle> assignments, TextCase textCase)
        {
            if (expression instanceof Variable variable
                    && assignments.get(variable.getName()) instanceof LakepruneColumnHandle column
                    && !column.isVirtual()
                    && column.type() instanceof VarcharType) {
                return Optional.of(new Subject(column.name(), textCase));
            }
            return Optional.empty();
        }

        String sql()
        {
            return switch (textCase) {
                case TEXT_CASE_LOWER -> "lower(" + column + ")";
                case TEXT_CASE_UPPER -> "upper(" + column + ")";
                default -> column;
            };
        }

        TextAtom.Builder atom(String source)
        {
            return TextAtom.newBuilder().setColumn(column).setCase(textCase).setSource(shorten(source));
        }

        /**
         * Whether every value whose Trino casing contains {@code literal} holds it in the index's
         * casing too (class comment).
         */
        boolean casedAlike(String literal)
        {
            return switch (textCase) {
                case TEXT_CASE_LOWER -> IndexFunctions.trinoLowerIsIndexLower(literal);
                case TEXT_CASE_UPPER -> literal.chars().allMatch(character -> character < 0x80);
                default -> true;
            };
        }
    }

    private static Optional<Subject> subject(ConnectorExpression expression, Map<String, ColumnHandle> assignments)
    {
        if (expression instanceof Call call && call.getArguments().size() == 1
                && (call.getFunctionName().equals(LOWER) || call.getFunctionName().equals(UPPER))) {
            TextCase textCase = call.getFunctionName().equals(LOWER) ? TextCase.TEXT_CASE_LOWER : TextCase.TEXT_CASE_UPPER;
            return Subject.of(call.getArguments().getFirst(), assignments, textCase);
        }
        return Subject.of(expression, assignments, TextCase.TEXT_CASE_AS_IS);
    }

    /** A non-null varchar constant tested against {@code subject}'s text, when cased as the index cases it. */
    private static Optional<String> literal(ConnectorExpression expression, Subject subject)
    {
        return varchar(expression).filter(subject::casedAlike);
    }

    private static Optional<String> varchar(ConnectorExpression expression)
    {
        if (expression instanceof Constant constant && constant.getType() instanceof VarcharType && constant.getValue() instanceof Slice value) {
            return Optional.of(value.toStringUtf8());
        }
        return Optional.empty();
    }

    private static OptionalLong integer(ConnectorExpression expression)
    {
        if (expression instanceof Constant constant
                && (constant.getType() instanceof BigintType || constant.getType() instanceof IntegerType
                        || constant.getType() instanceof SmallintType || constant.getType() instanceof TinyintType)
                && constant.getValue() instanceof Long value) {
            return OptionalLong.of(value);
        }
        return OptionalLong.empty();
    }

    /** {@code text} as an SQL string literal. */
    private static String quoted(String text)
    {
        return "'" + text.replace("'", "''") + "'";
    }

    /** {@code text} when it has at most SHOWN_CHARS characters, else its start and {@code …(N chars)} within that bound. */
    static String shorten(String text)
    {
        if (text.length() <= SHOWN_CHARS) {
            return text;
        }
        String marker = String.format(Locale.ROOT, "…(%,d chars)", text.length());
        int end = SHOWN_CHARS - marker.length();
        // never half of a surrogate pair
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + marker;
    }
}
