"""Writes the engine-parity table of docs/trino-presto.md ("Trino's functions in the sidecar") from
the cases the tests run (`tests/pruner/predicate/sql/engine_cases.py`): for each function, the
inputs that Trino's native catalog and Spark hand over which the sidecar reads, and those it leaves
out (keeping more files), as the tests of `pruner.predicate.sql.trino` and `.spark` check them.

    python scripts/engine_parity.py          # rewrite the table between its markers
    python scripts/engine_parity.py --check  # exit 1 if the docs' table is not what the cases say
                                             # (tests/test_generated_code.py runs this)"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.pruner.predicate.sql.engine_cases import FUNCTIONS, SPARK, TRINO  # noqa: E402

DOCS = REPO / "docs" / "trino-presto.md"
BEGIN = "<!-- engine-parity: written by scripts/engine_parity.py from the tests' cases -->"
END = "<!-- engine-parity: end -->"


def _cell(shapes: Sequence[str]) -> str:
    return "; ".join(shape.replace("|", "\\|") for shape in shapes) or "—"


def table() -> str:
    """The markdown table: a row per function, read / left out per engine."""
    lines = [
        "| function | Trino (native catalog): read | Trino: left out | Spark: read | Spark: left out |",
        "|---|---|---|---|---|",
    ]
    for function in FUNCTIONS:
        cells = [function]
        for cases in (TRINO, SPARK):
            mine = [case for case in cases if case.function == function]
            cells.append(_cell([case.shape for case in mine if case.read is not None]))
            cells.append(_cell([case.shape for case in mine if case.read is None]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rewritten(docs: str) -> str:
    """`docs` with the text between the markers replaced by the table."""
    start, end = docs.index(BEGIN) + len(BEGIN), docs.index(END)
    return docs[:start] + "\n" + table() + "\n" + docs[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the docs' table is stale")
    args = parser.parse_args()
    docs = DOCS.read_text(encoding="utf-8")
    fresh = rewritten(docs)
    if args.check:
        if fresh != docs:
            print(f"{DOCS.relative_to(REPO)}: the engine-parity table is stale: run `python {__file__}`")
            return 1
        return 0
    DOCS.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
