package io.lakeprune.trino;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.airlift.json.ObjectMapperProvider;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Constant;
import io.trino.spi.expression.FunctionName;
import io.trino.spi.expression.Variable;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.Type;
import lakeprune.v1.Predicate.LikePattern;
import lakeprune.v1.Predicate.OpaqueText;
import lakeprune.v1.Predicate.TextAtom;
import lakeprune.v1.Predicate.TextCase;
import lakeprune.v1.Predicate.TextPredicate;
import lakeprune.v1.Predicate.TextPredicates;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static io.airlift.slice.Slices.utf8Slice;
import static io.airlift.slice.Slices.wrappedBuffer;
import static io.trino.spi.expression.StandardFunctions.AND_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LESS_THAN_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LESS_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.LIKE_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.NOT_EQUAL_OPERATOR_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.NOT_FUNCTION_NAME;
import static io.trino.spi.expression.StandardFunctions.OR_FUNCTION_NAME;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.CharType.createCharType;
import static io.trino.spi.type.IntegerType.INTEGER;
import static io.trino.spi.type.VarbinaryType.VARBINARY;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static io.trino.spi.type.VarcharType.createVarcharType;
import static lakeprune.v1.Predicate.TextCase.TEXT_CASE_AS_IS;
import static lakeprune.v1.Predicate.TextCase.TEXT_CASE_LOWER;
import static lakeprune.v1.Predicate.TextCase.TEXT_CASE_UPPER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Translating Trino's filter expressions into the text predicate the sidecar's text indexes read. */
class TestTextFilter
{
    private static final LakepruneColumnHandle MSG = LakepruneColumnHandle.regular("msg", VARCHAR);
    private static final LakepruneColumnHandle CODE = LakepruneColumnHandle.regular("code", createCharType(4));
    private static final LakepruneColumnHandle ID = LakepruneColumnHandle.regular("id", BIGINT);
    private static final LakepruneColumnHandle LOWER_MSG = LakepruneColumnHandle.virtual("lower_msg", VARCHAR, "lower(msg)", Optional.of(MSG));
    // variable names differ from column names: atoms name the column
    private static final Map<String, ColumnHandle> ASSIGNMENTS = Map.of("msg_0", MSG, "code_1", CODE, "id_2", ID, "lower_msg_3", LOWER_MSG);
    private static final Variable MSG_VAR = new Variable("msg_0", VARCHAR);
    private static final TextPredicate OPAQUE = TextPredicate.newBuilder().setOpaque(OpaqueText.getDefaultInstance()).build();

    private static Optional<TextPredicate> translate(ConnectorExpression expression)
    {
        return TextFilter.of(expression, ASSIGNMENTS).map(TextFilter::predicate);
    }

    private static Constant text(String value)
    {
        return new Constant(utf8Slice(value), createVarcharType(Math.max(value.length(), 1)));
    }

    private static Call call(Type type, FunctionName function, ConnectorExpression... arguments)
    {
        return new Call(type, function, List.of(arguments));
    }

    private static Call call(Type type, String function, ConnectorExpression... arguments)
    {
        return call(type, new FunctionName(function), arguments);
    }

    private static Call like(ConnectorExpression subject, ConnectorExpression... pattern)
    {
        return new Call(BOOLEAN, LIKE_FUNCTION_NAME, Stream.concat(Stream.of(subject), Stream.of(pattern)).toList());
    }

    private static Call strpos(ConnectorExpression subject, String searched)
    {
        return call(BIGINT, "strpos", subject, text(searched));
    }

    private static TextPredicate atom(TextAtom.Builder atom)
    {
        return TextPredicate.newBuilder().setAtom(atom).build();
    }

    private static TextAtom.Builder on(String column, TextCase textCase, String source)
    {
        return TextAtom.newBuilder().setColumn(column).setCase(textCase).setSource(source);
    }

    private static TextPredicate all(TextPredicate... parts)
    {
        return TextPredicate.newBuilder().setAll(TextPredicates.newBuilder().addAllParts(List.of(parts))).build();
    }

    private static TextPredicate any(TextPredicate... parts)
    {
        return TextPredicate.newBuilder().setAny(TextPredicates.newBuilder().addAllParts(List.of(parts))).build();
    }

    @Test
    void testLike()
    {
        assertThat(translate(like(MSG_VAR, text("%timeout%")))).contains(atom(on("msg", TEXT_CASE_AS_IS, "msg LIKE '%timeout%'")
                .setLike(LikePattern.newBuilder().setPattern("%timeout%"))));
        // the escape is sent only when given
        assertThat(translate(like(MSG_VAR, text("%timeout%"))).orElseThrow().getAtom().getLike().hasEscape()).isFalse();
    }

    @Test
    void testLikeWithEscape()
    {
        assertThat(translate(like(MSG_VAR, text("%100!%%"), text("!")))).contains(atom(on("msg", TEXT_CASE_AS_IS, "msg LIKE '%100!%%' ESCAPE '!'")
                .setLike(LikePattern.newBuilder().setPattern("%100!%%").setEscape("!"))));
        // quotes are doubled in the source, as in SQL
        assertThat(translate(like(MSG_VAR, text("%it's%"))).orElseThrow().getAtom().getSource()).isEqualTo("msg LIKE '%it''s%'");
    }

    @Test
    void testStrposComparedSoThatZeroFails()
    {
        TextPredicate greater = atom(on("msg", TEXT_CASE_AS_IS, "strpos(msg, 'timeout') > 0").setContains("timeout"));
        Call position = strpos(MSG_VAR, "timeout");
        assertThat(translate(call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, position, new Constant(0L, BIGINT)))).contains(greater);
        // flipped: 0 < strpos(...)
        assertThat(translate(call(BOOLEAN, LESS_THAN_OPERATOR_FUNCTION_NAME, new Constant(0L, BIGINT), position))).contains(greater);
        TextPredicate atLeastOne = atom(on("msg", TEXT_CASE_AS_IS, "strpos(msg, 'timeout') >= 1").setContains("timeout"));
        assertThat(translate(call(BOOLEAN, GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME, position, new Constant(1L, BIGINT)))).contains(atLeastOne);
        assertThat(translate(call(BOOLEAN, LESS_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME, new Constant(1L, INTEGER), position))).contains(atLeastOne);
        TextPredicate notZero = atom(on("msg", TEXT_CASE_AS_IS, "strpos(msg, 'timeout') <> 0").setContains("timeout"));
        assertThat(translate(call(BOOLEAN, NOT_EQUAL_OPERATOR_FUNCTION_NAME, position, new Constant(0L, BIGINT)))).contains(notZero);
        assertThat(translate(call(BOOLEAN, NOT_EQUAL_OPERATOR_FUNCTION_NAME, new Constant(0L, BIGINT), position))).contains(notZero);
        // a larger bound fails for 0 too
        assertThat(translate(call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, position, new Constant(3L, BIGINT))).orElseThrow().getAtom().getContains()).isEqualTo("timeout");

        // comparisons that 0 (not found) may pass, or that are no bound at all, are not atoms
        for (ConnectorExpression passesZero : List.of(
                call(BOOLEAN, GREATER_THAN_OR_EQUAL_OPERATOR_FUNCTION_NAME, position, new Constant(0L, BIGINT)),
                call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, position, new Constant(-1L, BIGINT)),
                call(BOOLEAN, EQUAL_OPERATOR_FUNCTION_NAME, position, new Constant(0L, BIGINT)),
                call(BOOLEAN, LESS_THAN_OPERATOR_FUNCTION_NAME, position, new Constant(5L, BIGINT)),
                call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, new Constant(0L, BIGINT), position),
                call(BOOLEAN, NOT_EQUAL_OPERATOR_FUNCTION_NAME, position, new Constant(1L, BIGINT)),
                call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, position, new Constant(null, BIGINT)),
                call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, position, new Variable("id_2", BIGINT)))) {
            assertThat(translate(passesZero)).as("%s", passesZero).isEmpty();
        }
    }

    @Test
    void testStartsWithAndRegexpLike()
    {
        assertThat(translate(call(BOOLEAN, "starts_with", MSG_VAR, text("ERROR")))).contains(atom(on("msg", TEXT_CASE_AS_IS, "starts_with(msg, 'ERROR')").setStartsWith("ERROR")));
        assertThat(translate(call(BOOLEAN, "regexp_like", MSG_VAR, text("time(out|d)")))).contains(atom(on("msg", TEXT_CASE_AS_IS, "regexp_like(msg, 'time(out|d)')").setRegex("time(out|d)")));
        // a function of a catalog's schema is not Trino's built-in one
        FunctionName qualified = new FunctionName(Optional.of(new io.trino.spi.connector.CatalogSchemaName("c", "s")), "starts_with");
        assertThat(translate(call(BOOLEAN, qualified, MSG_VAR, text("ERROR")))).isEmpty();
    }

    @Test
    void testLowerAndUpperSubjects()
    {
        Call lower = call(VARCHAR, "lower", MSG_VAR);
        Call upper = call(VARCHAR, "upper", MSG_VAR);
        assertThat(translate(like(lower, text("%timeout%")))).contains(atom(on("msg", TEXT_CASE_LOWER, "lower(msg) LIKE '%timeout%'")
                .setLike(LikePattern.newBuilder().setPattern("%timeout%"))));
        assertThat(translate(call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, strpos(upper, "TIMEOUT"), new Constant(0L, BIGINT))))
                .contains(atom(on("msg", TEXT_CASE_UPPER, "strpos(upper(msg), 'TIMEOUT') > 0").setContains("TIMEOUT")));
        assertThat(translate(call(BOOLEAN, "starts_with", upper, text("ERR")))).contains(atom(on("msg", TEXT_CASE_UPPER, "starts_with(upper(msg), 'ERR')").setStartsWith("ERR")));
        assertThat(translate(call(BOOLEAN, "regexp_like", lower, text("err")))).contains(atom(on("msg", TEXT_CASE_LOWER, "regexp_like(lower(msg), 'err')").setRegex("err")));
        // lower / upper of anything but a column, and other functions of a column, are no subject
        assertThat(translate(like(call(VARCHAR, "lower", upper), text("%x%")))).isEmpty();
        assertThat(translate(like(call(VARCHAR, "trim", MSG_VAR), text("%x%")))).isEmpty();
    }

    @Test
    void testCasedAtomsOnlyWhereTrinosCaseMappingIsTheIndexs()
    {
        // U+16EB2 is a capital letter newer than Java 25's Unicode 16: Trino's lower keeps it, the
        // index lowers it, so lower(msg) holding it in Trino is another text in the index
        String newer = new String(Character.toChars(0x16EB2));
        assertThat(translate(like(call(VARCHAR, "lower", MSG_VAR), text("%x" + newer + "%")))).isEmpty();
        assertThat(translate(like(MSG_VAR, text("%x" + newer + "%")))).isPresent();
        // lower with other non-ASCII letters agrees
        assertThat(translate(like(call(VARCHAR, "lower", MSG_VAR), text("%é%")))).isPresent();
        // there is no table of the index's upper: upper is sent with an ASCII literal only
        // (Trino's upper keeps 'ß', Arrow's makes it 'ẞ')
        assertThat(translate(like(call(VARCHAR, "upper", MSG_VAR), text("%STRAßE%")))).isEmpty();
        assertThat(translate(like(MSG_VAR, text("%straße%")))).isPresent();
        // why ASCII is safe: the only other letters Trino uppers into ASCII are 'ı' and 'ſ', which
        // Arrow's utf8_upper makes 'I' and 'S' too
        assertThat(IntStream.rangeClosed(0x80, Character.MAX_CODE_POINT).filter(codePoint -> Character.toUpperCase(codePoint) < 0x80).boxed().toList())
                .containsExactly(0x131, 0x17F);
        assertThat(translate(like(call(VARCHAR, "upper", MSG_VAR), text("%I%")))).isPresent();
    }

    @Test
    void testAndOrNesting()
    {
        // msg LIKE '%timeout%' AND (starts_with(msg, 'ERR') OR id = 7)
        ConnectorExpression expression = call(BOOLEAN, AND_FUNCTION_NAME,
                like(MSG_VAR, text("%timeout%")),
                call(BOOLEAN, OR_FUNCTION_NAME,
                        call(BOOLEAN, "starts_with", MSG_VAR, text("ERR")),
                        call(BOOLEAN, EQUAL_OPERATOR_FUNCTION_NAME, new Variable("id_2", BIGINT), new Constant(7L, BIGINT))));
        TextPredicate expected = all(
                atom(on("msg", TEXT_CASE_AS_IS, "msg LIKE '%timeout%'").setLike(LikePattern.newBuilder().setPattern("%timeout%"))),
                any(atom(on("msg", TEXT_CASE_AS_IS, "starts_with(msg, 'ERR')").setStartsWith("ERR")), OPAQUE));
        assertThat(translate(expression)).contains(expected);
        assertThat(new TextFilter(expected)).hasToString("msg LIKE '%timeout%' AND (starts_with(msg, 'ERR') OR <other>)");
    }

    @Test
    void testNotIsOpaque()
    {
        Call notLike = call(BOOLEAN, NOT_FUNCTION_NAME, like(MSG_VAR, text("%timeout%")));
        // no atom at all: no text predicate
        assertThat(translate(notLike)).isEmpty();
        assertThat(translate(call(BOOLEAN, AND_FUNCTION_NAME, notLike, call(BOOLEAN, "starts_with", MSG_VAR, text("ERR")))))
                .contains(all(OPAQUE, atom(on("msg", TEXT_CASE_AS_IS, "starts_with(msg, 'ERR')").setStartsWith("ERR"))));
        assertThat(translate(Constant.TRUE)).isEmpty();
    }

    @Test
    void testWhatIsNotAnAtomIsOpaque()
    {
        for (ConnectorExpression opaque : List.of(
                // not a constant
                like(MSG_VAR, MSG_VAR),
                call(BOOLEAN, "starts_with", MSG_VAR, call(VARCHAR, "lower", MSG_VAR)),
                like(MSG_VAR, text("%x%"), MSG_VAR),
                // NULL
                like(MSG_VAR, new Constant(null, VARCHAR)),
                like(MSG_VAR, text("%x%"), new Constant(null, createVarcharType(1))),
                call(BOOLEAN, "regexp_like", MSG_VAR, new Constant(null, VARCHAR)),
                call(BOOLEAN, GREATER_THAN_OPERATOR_FUNCTION_NAME, call(BIGINT, "strpos", MSG_VAR, new Constant(null, VARCHAR)), new Constant(0L, BIGINT)),
                // a char column, a varbinary constant
                like(new Variable("code_1", createCharType(4)), text("%x%")),
                call(BOOLEAN, "starts_with", MSG_VAR, new Constant(wrappedBuffer(new byte[] {1}), VARBINARY)),
                // a hidden column of a functional index, a variable of no column
                like(new Variable("lower_msg_3", VARCHAR), text("%x%")),
                like(new Variable("elsewhere", VARCHAR), text("%x%")),
                // other functions and arities
                call(BOOLEAN, "ends_with", MSG_VAR, text("x")),
                call(BOOLEAN, "starts_with", MSG_VAR, text("x"), text("y")),
                like(MSG_VAR))) {
            assertThat(translate(opaque)).as("%s", opaque).isEmpty();
            assertThat(translate(call(BOOLEAN, OR_FUNCTION_NAME, opaque, like(MSG_VAR, text("%y%")))).orElseThrow().getAny().getParts(0)).as("%s", opaque).isEqualTo(OPAQUE);
        }
    }

    @Test
    void testSourceIsBounded()
    {
        String pattern = "%" + "a".repeat(1_000) + "%";
        TextAtom atom = translate(like(MSG_VAR, text(pattern))).orElseThrow().getAtom();
        // the pattern itself is sent whole; only its rendering is cut
        assertThat(atom.getLike().getPattern()).isEqualTo(pattern);
        assertThat(atom.getSource()).hasSize(TextFilter.SHOWN_CHARS).startsWith("msg LIKE '%aaa").endsWith("…(1,013 chars)");
        // a surrogate pair is never cut in half
        String cut = TextFilter.shorten("x" + new String(Character.toChars(0x1F600)).repeat(150));
        assertThat(cut.codePoints().noneMatch(codePoint -> codePoint >= 0xD800 && codePoint <= 0xDFFF)).isTrue();
        assertThat(cut.length()).isLessThanOrEqualTo(TextFilter.SHOWN_CHARS);
    }

    @Test
    void testAndKeepsEachConjunctOnce()
    {
        TextFilter timeout = TextFilter.of(like(MSG_VAR, text("%timeout%")), ASSIGNMENTS).orElseThrow();
        TextFilter error = TextFilter.of(call(BOOLEAN, "starts_with", MSG_VAR, text("ERR")), ASSIGNMENTS).orElseThrow();
        assertThat(TextFilter.and(Optional.empty(), Optional.empty())).isEmpty();
        assertThat(TextFilter.and(Optional.of(timeout), Optional.empty())).contains(timeout);
        assertThat(TextFilter.and(Optional.empty(), Optional.of(timeout))).contains(timeout);
        assertThat(TextFilter.and(Optional.of(timeout), Optional.of(timeout))).contains(timeout);
        Optional<TextFilter> both = TextFilter.and(Optional.of(timeout), Optional.of(error));
        assertThat(both.orElseThrow().predicate()).isEqualTo(all(timeout.predicate(), error.predicate()));
        // ANDing a part again, or the whole again, changes nothing
        assertThat(TextFilter.and(both, Optional.of(error))).isEqualTo(both);
        assertThat(TextFilter.and(both, both)).isEqualTo(both);
    }

    @Test
    void testTableHandleJsonRoundTrip()
            throws Exception
    {
        ObjectMapper mapper = new ObjectMapperProvider().get();
        TextFilter text = TextFilter.of(call(BOOLEAN, OR_FUNCTION_NAME, like(MSG_VAR, text("%timeout%"), text("!")), call(BOOLEAN, NOT_FUNCTION_NAME, MSG_VAR)), ASSIGNMENTS).orElseThrow();
        LakepruneTableHandle handle = new LakepruneTableHandle("demo", "logs", Optional.of("20240101000000000"), "/wh/logs", Set.of("msg"), TupleDomain.all(), Optional.empty(), Optional.of(text));
        LakepruneTableHandle read = mapper.readValue(mapper.writeValueAsString(handle), LakepruneTableHandle.class);
        assertThat(read).isEqualTo(handle);
        assertThat(read.hashCode()).isEqualTo(handle.hashCode());
        assertThat(read.text().orElseThrow().predicate().getAny().getParts(0).getAtom().getLike().getEscape()).isEqualTo("!");
        LakepruneTableHandle none = handle.withText(Optional.empty());
        assertThat(mapper.readValue(mapper.writeValueAsString(none), LakepruneTableHandle.class)).isEqualTo(none);
        // EXPLAIN shows the text predicate with the table
        assertThat(handle).hasToString("demo.logs@20240101000000000 text: msg LIKE '%timeout%' ESCAPE '!' OR <other>");
        assertThat(none).hasToString("demo.logs@20240101000000000");
        assertThatThrownBy(() -> TextFilter.fromJson("AAAA")).isInstanceOf(IllegalArgumentException.class);
    }
}
