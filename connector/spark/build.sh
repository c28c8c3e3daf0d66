#!/usr/bin/env bash
# Builds lakeprune's Spark data source, `spark.read.format("lakeprune")`:
#   target/lakeprune-spark.jar   the source's classes, its service registration, the lakeprune.v1
#                                message classes and the protobuf-java runtime they need (PySpark
#                                ships no unshaded protobuf-java)
#
# The JVM and Python halves exchange serialized lakeprune.v1 messages: the Java classes are
# generated from ../../proto (the wire's one source of truth) by protoc. The jar is compiled against
# the jars of the installed PySpark (the one `$PYTHON` imports; default the checkout's .venv) with
# the Eclipse compiler 3.44 (Java 17 class files), run on any Java 17+ runtime (`$JAVA_HOME/bin/java`,
# else `java` on the PATH: the runtime Spark itself needs). ecj, protoc and protobuf-java (the
# versions the Trino connector's build uses) are fetched once from Maven Central into
# ~/.cache/lakeprune/m2, the cache that build shares. Nothing is rebuilt while build.sh, src/, the
# protos and the PySpark version are unchanged (a stamp file).
set -euo pipefail
cd "$(dirname "$0")"

CACHE=${LAKEPRUNE_CACHE:-$HOME/.cache/lakeprune}
ECJ_VERSION=3.44.0
ECJ_JAR=$CACHE/m2/org/eclipse/jdt/ecj/$ECJ_VERSION/ecj-$ECJ_VERSION.jar
MAVEN_CENTRAL=${LAKEPRUNE_MAVEN_CENTRAL:-https://repo1.maven.org/maven2}
ECJ_URL=$MAVEN_CENTRAL/org/eclipse/jdt/ecj/$ECJ_VERSION/ecj-$ECJ_VERSION.jar
PROTOBUF_VERSION=3.25.8  # as connector/trino/pom.xml's dep.protobuf.version
PROTO_DIR=../../proto
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) PROTOC_CLASSIFIER=linux-x86_64 ;;
    Linux-aarch64|Linux-arm64) PROTOC_CLASSIFIER=linux-aarch_64 ;;
    Darwin-x86_64) PROTOC_CLASSIFIER=osx-x86_64 ;;
    Darwin-arm64) PROTOC_CLASSIFIER=osx-aarch_64 ;;
    *) echo "error: no protoc for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
PROTOC=$CACHE/m2/com/google/protobuf/protoc/$PROTOBUF_VERSION/protoc-$PROTOBUF_VERSION-$PROTOC_CLASSIFIER.exe
PROTOBUF_JAR=$CACHE/m2/com/google/protobuf/protobuf-java/$PROTOBUF_VERSION/protobuf-java-$PROTOBUF_VERSION.jar
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
    { find build.sh src "$PROTO_DIR" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; echo "pyspark $SPARK_VERSION"; } \
        | sha256sum | cut -d' ' -f1
}
STAMP=target/.build-stamp
HASH=$(inputs_hash)
if [[ -f $STAMP && $(cat "$STAMP") == "$HASH" && -f $JAR ]]; then
    echo "lakeprune-spark is up to date ($JAR)"
    exit 0
fi

# fetch URL FILE: a Maven Central artifact into the cache, once
fetch() {
    [[ -f $2 ]] && return 0
    echo "==> fetching $(basename "$2") into $CACHE/m2"
    mkdir -p "$(dirname "$2")"
    curl -fsSL -o "$2.part" "$1"
    mv "$2.part" "$2"
}
fetch "$ECJ_URL" "$ECJ_JAR"
fetch "$MAVEN_CENTRAL/com/google/protobuf/protoc/$PROTOBUF_VERSION/$(basename "$PROTOC")" "$PROTOC"
chmod +x "$PROTOC"
fetch "$MAVEN_CENTRAL/com/google/protobuf/protobuf-java/$PROTOBUF_VERSION/$(basename "$PROTOBUF_JAR")" "$PROTOBUF_JAR"

rm -rf target/classes target/generated "$JAR" "$STAMP"
mkdir -p target/classes target/generated
"$PROTOC" --proto_path="$PROTO_DIR" --java_out=target/generated $(cd "$PROTO_DIR" && find lakeprune -name '*.proto' | LC_ALL=C sort)
# ecj takes no wildcard class path entries: every jar by name
CLASSPATH=$( { find "$SPARK_JARS" -name '*.jar'; echo "$PROTOBUF_JAR"; } | LC_ALL=C sort | paste -sd: -)
echo "==> compiling connector/spark against PySpark $SPARK_VERSION"
"$JAVA" -jar "$ECJ_JAR" -17 -nowarn -encoding UTF-8 \
    -cp "$CLASSPATH" -d target/classes src/main/java target/generated
cp -r src/main/resources/. target/classes/
# the protobuf runtime, inside the jar: Spark's own class path has none
"$PYTHON" - "$PROTOBUF_JAR" target/classes <<'PY'
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as runtime:
    for name in runtime.namelist():
        if name.startswith("com/google/protobuf/") and not name.endswith("/"):
            runtime.extract(name, sys.argv[2])
PY
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
