"""Errors of the local engine launcher. Each is a `LakepruneError`, so the CLI prints `error: ...`
and exits 2: a mistake in the request (unknown engine, bad address, busy port) or a missing
prerequisite (Maven, pip) in one line; an engine that did not come up in one line followed by the
tail of its log."""

from __future__ import annotations

from pruner.errors import LakepruneError


class EngineError(LakepruneError):
    """Base class of the launcher's errors."""


class UnknownEngineError(EngineError):
    """The engine name is not one of the pinned engines."""


class InvalidEngineConfigError(EngineError):
    """A sidecar address, catalog name, catalog property or port is invalid."""


class ArtifactFetchError(EngineError):
    """Maven is missing or could not download an artifact, or an archive could not be unpacked."""


class PluginNotFoundError(EngineError):
    """The native connector's plugin could not be found, built or installed."""


class JavaRuntimeError(EngineError):
    """The Java runtime could not be installed, or lacks a version or module the engine needs."""


class PortInUseError(EngineError):
    """The HTTP port the engine should listen on is taken by another process."""


class EngineAlreadyRunningError(EngineError):
    """An engine started by lakeprune already runs on that port."""


class EngineNotRunningError(EngineError):
    """No engine started by lakeprune runs on that port."""


class EngineStartError(EngineError):
    """The engine exited or did not answer queries in time; the message ends with its log tail."""


class StatementFailedError(EngineError):
    """A statement sent through the engine's HTTP client protocol failed; `error_name` is the
    engine's error name (`NO_NODES_AVAILABLE`, ...) when it sent one."""

    def __init__(self, message: str, error_name: str | None = None) -> None:
        super().__init__(message)
        self.error_name = error_name
