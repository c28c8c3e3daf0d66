"""pruner.functions.regex_subset: the patterns `regexp_extract` indexes accept are those on which
the engines' regex libraries agree; here Python's `re` (the registry's) is checked against RE2
(DuckDB's `regexp_extract`) on generated strings, group by group."""

from __future__ import annotations

import re

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.errors import InvalidInputError
from pruner.functions.regex_subset import check_pattern

ACCEPTED = [
    ("^org([0-9]+)", 1),
    ("^https?://([^/:]+)", 1),
    ("(a|ab)(c|bcd)(d*)", 3),
    ("x(?:ab)+?y", 0),
    ("[a-c\\-]{2,3}(b)?", 1),
    ("id=([0-9]{1,4})&", 1),
    ("(é|ß)+", 1),
    ("a\\.b\\\\", 0),
]


@pytest.mark.parametrize(("pattern", "groups"), ACCEPTED)
def test_the_subset_is_accepted_with_its_groups(pattern: str, groups: int) -> None:
    assert check_pattern(pattern) == groups


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a.b", "'.'"),
        ("ab$", "'$'"),
        ("\\d+", "backslash"),
        ("\\bword", "backslash"),
        ("(?i)abc", "flags"),
        ("(?<name>a)", "flags, lookaround, named"),
        ("a(?=b)", "lookaround"),
        ("a++", "possessive"),
        ("[[a]]", "nested class"),
        ("[a&&b]", "intersection"),
        ("[]a]", "']' first"),
        ("a{2", "'{'"),
        ("(ab", "unclosed '('"),
        ("ab)", "unopened"),
        ("*a", "nothing to repeat"),
        ("a|^b", "'^'"),
    ],
)
def test_what_the_engines_read_differently_is_refused(pattern: str, reason: str) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(reason)):
        check_pattern(pattern)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcdxy-=&.:/019éß\n", max_size=12), min_size=1, max_size=20))
def test_python_and_re2_agree_on_the_subset(values: list[str]) -> None:
    connection = duckdb.connect()
    for pattern, groups in ACCEPTED:
        compiled = re.compile(pattern)
        for group in range(groups + 1):
            rows = connection.execute(
                "SELECT regexp_matches(v, ?), regexp_extract(v, ?, ?) FROM unnest(?) t(v)",
                [pattern, pattern, group, values],
            ).fetchall()
            for value, (matched, extracted) in zip(values, rows, strict=True):
                found = compiled.search(value)
                assert (found is not None) == matched, (pattern, value)
                if found is not None:
                    # RE2 gives '' for a group that took no part, Python None: the registry's NULL
                    assert (found.group(group) or "") == extracted, (pattern, group, value)
