#!/usr/bin/env bash
# The whole test suite: installs what is missing (scripts/bootstrap.sh), then lint, formatting,
# type checks, the import contracts (pyproject.toml [tool.importlinter]), the Trino connector build and unit
# tests (connector/trino/build.sh --test), the Spark source's jar (connector/spark/build.sh) and pytest (unit, property-based, Spark and CLI tests). Extra arguments go to pytest,
# e.g. `bash scripts/test.sh -m "not slow"`. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
VENV=${LAKEPRUNE_VENV:-.venv}
echo "==> ruff check";     "$VENV/bin/ruff" check .
echo "==> ruff format";    "$VENV/bin/ruff" format --check .
echo "==> mypy";           "$VENV/bin/mypy"
echo "==> import contracts"; "$VENV/bin/lint-imports" --no-cache
echo "==> trino connector"; bash connector/trino/build.sh --test
echo "==> spark source";   PYTHON="$(cd "$VENV" && pwd)/bin/python" bash connector/spark/build.sh
echo "==> pytest";         "$VENV/bin/pytest" -p no:cacheprovider -n 2 --dist loadgroup --durations=40 "$@"
