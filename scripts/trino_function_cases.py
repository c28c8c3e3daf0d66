"""Writes what the Trino connector takes from the Python registry (`pruner.functions`) to compute
functional indexes' hidden columns exactly as the index does:

- `LOWER`: the registry's `lower` (Arrow's utf8proc tables) of every code point that is not its
  own lower, `hex<TAB>hex[ hex...]`, read by IndexFunctions: the JVM's Unicode tables are not
  utf8proc's (Java 25 has Unicode 16, and lowercases 48 newer letters differently).
- `CASES`: cases TestIndexFunctions checks the Java computation against, one a line,
  tab-separated: function, its literal arguments (comma-separated), the source type, the input (a
  timestamp as UTC microseconds, a string or a number), the result type, the registry's result (a
  timestamp as UTC microseconds, a date as YYYY-MM-DD); NULL is `\\N`.

    python scripts/trino_function_cases.py           # rewrite the checked-in files
    python scripts/trino_function_cases.py --out DIR # write under DIR instead (DIR/connector/...);
                                                     # tests/test_generated_code.py compares them"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pruner.functions.expression import Call, ColumnRef
from pruner.functions.registry import (
    BIGINT,
    MAX_MILLIS,
    MAX_SECONDS,
    MIN_MILLIS,
    MIN_SECONDS,
    REGISTRY,
    STRING,
    TS,
    Literal,
)
from pruner.numeric import MAX_MICROS, MIN_MICROS
from pruner.types import ColumnType, TypeKind

DOUBLE = ColumnType(TypeKind.DOUBLE)

REPO = Path(__file__).resolve().parents[1]
LOWER = Path("connector/trino/src/main/resources/io/lakeprune/trino/index-lower.tsv")
CASES = Path("connector/trino/src/test/resources/io/lakeprune/trino/index-function-cases.tsv")
NULL = "\\N"
PATTERNS = ["%Y-%m-%d", "%Y-%m-%d %H:%i:%s", "%H%%", "%Y", "x%dy%i", "%s.%m"]
STRINGS = ["", "abc", "ABC", "Straße", "ÀÉÎ", "İstanbul", "ẞ", "ΣΑΣ", "ǅ", "😀Ab", "a😀B😀c"]
STRINGS += ["\uff21\uff22\uff23", "X\U00016eb2y", "\ua7cb\ua7dcZ"]  # letters newer than Java 25's Unicode 16
STRINGS += ["  a b  ", " ", "\u00a0x\u00a0"]  # spaces (and others, which trim keeps)


def _micros() -> list[int]:
    rng = random.Random(15)
    day = 86_400_000_000
    edges = [0, -1, 1, 999_999, -1_000_000, -1_000_001, MIN_MICROS, MIN_MICROS - 1, MAX_MICROS]
    edges += [MAX_MICROS + 1, MIN_MICROS + day - 1, MAX_MICROS - day + 1, 1_709_164_800_000_000]
    return edges + [rng.randint(MIN_MICROS - day, MAX_MICROS + day) for _ in range(200)]


def _text(value: object) -> str:
    if value is None:
        return NULL
    text = str(value)
    assert "\t" not in text and "\n" not in text and text != NULL
    return text


def _cases() -> list[str]:
    """One line per (call, input): function, its literal arguments, the source type, the input,
    the result type, the registry's result."""
    lines: list[str] = []
    temporal: list[tuple[str, tuple[Literal, ...]]] = [(f, ()) for f in ("year", "month", "day", "hour")]
    temporal += [("date_format", (p,)) for p in PATTERNS] + [("to_date", ())]
    for name, args in temporal:
        function = Call(REGISTRY[name], ColumnRef("ts", TS), args)
        # the registry's input is an instant; outside 0001..9999 Python has none, Arrow has
        instants = pa.array(_micros(), pa.int64()).cast(pa.timestamp("us", tz="UTC"))
        values = function.arrow({"ts": instants})
        for micros, value in zip(_micros(), values.to_pylist(), strict=True):
            lines.append(_line(name, args, "timestamp", micros, function.type, value))
    strings: list[tuple[str, tuple[Literal, ...]]] = [("lower", ()), ("length", ()), ("trim", ())]
    strings += [("substring", a) for a in ((1, 3), (2, 0), (2, 1), (3, 100), (100, 1))]
    for name, args in strings:
        function = Call(REGISTRY[name], ColumnRef("s", STRING), args)
        for text in STRINGS:
            lines.append(_line(name, args, "string", text, function.type, function.value(s=text)))
    for name in ("from_unixtime", "to_timestamp", "timestamp_seconds", "timestamp_millis", "abs"):
        function = Call(REGISTRY[name], ColumnRef("n", BIGINT), ())
        for number in _integers():
            value = function.arrow({"n": pa.array([number], pa.int64())})
            raw = value.cast(pa.int64())[0].as_py() if function.type == TS else value[0].as_py()
            lines.append(_line(name, (), "bigint", number, function.type, raw))
    function = Call(REGISTRY["abs"], ColumnRef("x", DOUBLE), ())
    for double in [0.0, -0.0, -1.5, 2.25, -1e308, float("inf"), float("-inf"), 5e-324]:
        lines.append(_line("abs", (), "double", repr(double), function.type, repr(abs(double))))
    return lines


def _integers() -> list[int]:
    rng = random.Random(16)
    edges = [0, -1, 1, MIN_SECONDS, MIN_SECONDS - 1, MAX_SECONDS, MAX_SECONDS + 1, MIN_MILLIS, MAX_MILLIS]
    edges += [MIN_MILLIS - 1, MAX_MILLIS + 1, -(2**63), 2**63 - 1, 1_709_164_800, 1_709_164_800_123]
    return edges + [rng.randint(MIN_MILLIS * 2, MAX_MILLIS * 2) for _ in range(60)]


def _line(
    name: str, args: tuple[Literal, ...], source: str, value: object, result: ColumnType, out: object
) -> str:
    return "\t".join([name, ",".join(map(str, args)), source, _text(value), str(result), _text(out)])


def _lower() -> list[str]:
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    lowered = pc.utf8_lower(pa.array(points, pa.string())).to_pylist()
    return [
        f"{ord(point):x}\t" + " ".join(f"{ord(c):x}" for c in lower)
        for point, lower in zip(points, lowered, strict=True)
        if lower != point
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO)
    out: Path = parser.parse_args(argv).out
    for path, lines in ((LOWER, _lower()), (CASES, _cases())):
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
