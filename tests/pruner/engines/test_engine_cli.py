"""`lakeprune trino|presto ...` without starting an engine: the catalog printout, status of nothing,
and one-line errors with exit code 2. (The commands are mounted on a bare app here, as
`register` mounts them on the real one.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pruner.cli import engine_cmds
from pruner.engines.cache import CACHE_ENV

runner = CliRunner()
app = typer.Typer()
engine_cmds.register(app)
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_catalog_prints_the_committed_file() -> None:
    for kind in ("trino", "presto"):
        result = runner.invoke(app, [kind, "catalog"])
        assert result.exit_code == 0, result.output
        assert (
            result.stdout
            == (REPO / "connector-config" / kind / "catalog" / "lakeprune.properties").read_text()
        )
    custom = runner.invoke(app, ["trino", "catalog", "--sidecar", "sidecar:7778"])
    assert "trino.thrift.client.addresses=sidecar:7778\n" in custom.stdout


def test_status_of_nothing_exits_3() -> None:
    result = runner.invoke(app, ["presto", "status"])
    assert result.exit_code == 3
    assert "Presto 0.287 on port 8081: not running" in result.stdout
    result = runner.invoke(app, ["trino", "status", "--port", "9999", "--json"])
    assert result.exit_code == 3
    assert json.loads(result.stdout)["running"] is False


def test_stop_of_nothing_is_fine() -> None:
    result = runner.invoke(app, ["trino", "stop"])
    assert result.exit_code == 0
    assert "Trino 368 is not running on port 8080" in result.stdout


def test_user_errors_exit_2_in_one_line(tmp_path: Path, empty_cache: Path) -> None:
    cases = [
        (["trino", "start", "--sidecar", "nonsense"], "error: sidecar address must be HOST:PORT"),
        (["presto", "start", "--port", "0", "--heap-mb", "10"], "error: heap must be at least 512 MB"),
        (
            ["trino", "start", "--port", "0", "--catalog-file", str(tmp_path / "missing.properties")],
            "error: --catalog-file",
        ),
    ]
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr
    assert not empty_cache.exists()
