#!/usr/bin/env bash
# Builds lakeprune's Spark data source, `spark.read.format("lakeprune")`:
#   target/lakeprune-spark.jar   the source's classes and its service registration
#
# The jar is compiled against the jars of the installed PySpark (the one `$PYTHON` imports; default
# the checkout's .venv) with the Eclipse compiler 3.44 (Java 17 class files), run on any Java 17+
# runtime (`$JAVA_HOME/bin/java`, else `java` on the PATH: the runtime Spark itself needs). ecj is
# fetched once from Maven Central into ~/.cache/lakeprune/m2 (the Trino connector's build uses the
# same cache). Nothing is rebuilt while build.sh, src/ and the PySpark version are unchanged (a
# stamp file).
set -euo pipefail
cd "$(dirname "$0")"

CACHE=${LAKEPRUNE_CACHE:-$HOME/.cache/lakeprune}
ECJ_VERSION=3.44.0
ECJ_JAR=$CACHE/m2/org/eclipse/jdt/ecj/$ECJ_VERSION/ecj-$ECJ_VERSION.jar
ECJ_URL=${LAKEPRUNE_MAVEN_CENTRAL:-https://repo1.maven.org/maven2}/org/eclipse/jdt/ecj/$ECJ_VERSION/ecj-$ECJ_VERSION.jar
JAR=target/lakeprune-spark.jar
if [[ -z ${PYTHON:-} ]]; then
    PYTHON=python3
    [[ -x ../../.venv/bin/python ]] && PYTHON=../../.venv/bin/python
fi
JAVA=java
[[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]] && JAVA=$JAVA_HOME/bin/java

SPARK_JARS=$("$PYTHON" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
SPARK_VERSION=$("$PYTHON" -c 'import pyspark; print(pyspark.__version__)')

inputs_hash() {
    { find build.sh src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; echo "pyspark $SPARK_VERSION"; } \
        | sha256sum | cut -d' ' -f1
}
STAMP=target/.build-stamp
HASH=$(inputs_hash)
if [[ -f $STAMP && $(cat "$STAMP") == "$HASH" && -f $JAR ]]; then
    echo "lakeprune-spark is up to date ($JAR)"
    exit 0
fi

if [[ ! -f $ECJ_JAR ]]; then
    echo "==> fetching ecj $ECJ_VERSION into $CACHE/m2"
    mkdir -p "$(dirname "$ECJ_JAR")"
    curl -fsSL -o "$ECJ_JAR.part" "$ECJ_URL"
    mv "$ECJ_JAR.part" "$ECJ_JAR"
fi

rm -rf target/classes "$JAR" "$STAMP"
mkdir -p target/classes
# ecj takes no wildcard class path entries: every jar by name
CLASSPATH=$(find "$SPARK_JARS" -name '*.jar' | LC_ALL=C sort | paste -sd: -)
echo "==> compiling connector/spark against PySpark $SPARK_VERSION"
"$JAVA" -jar "$ECJ_JAR" -17 -nowarn -encoding UTF-8 \
    -cp "$CLASSPATH" -d target/classes src/main/java
cp -r src/main/resources/. target/classes/
"$PYTHON" - "$JAR" target/classes <<'PY'
import sys
import zipfile
from pathlib import Path

jar, classes = Path(sys.argv[1]), Path(sys.argv[2])
with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as out:
    out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: lakeprune connector/spark/build.sh\n")
    for path in sorted(classes.rglob("*")):
        if path.is_file():
            out.write(path, path.relative_to(classes).as_posix())
PY
echo "$HASH" > "$STAMP"
echo "built $JAR"
