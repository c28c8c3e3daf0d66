package io.lakeprune.trino;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TestFunctionIndexes
{
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
