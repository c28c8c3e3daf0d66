#!/usr/bin/env bash
# Creates .venv and installs lakeprune with its pinned dependencies. Idempotent: re-runs only when
# pyproject.toml changed. Downloads are cached by pip outside the repository (~/.cache/pip).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LAKEPRUNE_VENV:-.venv}
stamp="$VENV/.lakeprune-installed"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
command -v python3.11 >/dev/null 2>&1 && PY=python3.11 || PY=python3
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "lakeprune needs Python 3.11, found %s" % sys.version.split()[0]'
command -v java >/dev/null 2>&1 || { echo "lakeprune needs a Java 17 runtime on PATH for Spark (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
echo "==> creating $VENV and installing lakeprune (first run downloads ~500 MB; cached afterwards)"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet -e '.[dev]'
echo "$want" > "$stamp"
