"""How scripts/test.sh spreads the suite over two pytest-xdist workers (`-n 2 --dist loadgroup`). The tests
that start or share the end-to-end engines (Trino, Presto) and the Spark standalone cluster are one group,
`ENGINES`, run by one worker in collection order, so that each of those servers starts once in a run.
Every other test is grouped with its module (its module fixtures are made once), and those groups go to
whichever worker is free, the groups of Spark's and the slow tests first (they take minutes each; the many
short groups then even out the end): the engines' worker takes them once its group is done. Each worker
has one SparkSession (the engines' warehouses are written with Spark too), so the SparkSession's tests are
not held to one worker: held to one, they made it the long pole (2,793 s of tests against the other
worker's 2,214 s, which then idled). xdist's own `loadgroup` reads `xdist_group` markers through a node id
suffix that pytest 9 no longer lets it set, so the groups travel differently: the first worker writes each
collected test's group into a file the controller named (`pytest_configure_node`), and the controller's
scheduler (`GroupScheduling`, a module-scope scheduler whose scope is that group) reads it once every
worker has collected. A fixture's data that every worker reads and none changes is made once per
run (`made_once`) in the directory the workers share, under a file lock."""

from __future__ import annotations

import fcntl
import json
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from xdist.scheduler import LoadScopeScheduling

T = TypeVar("T")
ENGINES = "engines"
E2E = Path(__file__).with_name("e2e")
GROUPS_FILE = "lakeprune_xdist_groups"  # the key of the file's path in a worker's `workerinput`


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> T:
    """What `make(path)` returns, `path` being `<shared>/<name>`, a new directory that `make` fills:
    made in the first worker that asks; the others wait for it and get its result back (pickled
    beside the directory) and read what it made. `<shared>` is the run's temporary directory that
    both workers' own directories are in, or this process's own without xdist. A `make` that failed
    is tried again by the next worker that asks. For session data that every worker reads and none
    changes: one Spark build a run instead of one a worker."""
    own = tmp_path_factory.getbasetemp()
    shared = own.parent if os.environ.get("PYTEST_XDIST_WORKER") else own
    path, result = shared / name, shared / f"{name}.pickle"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released as the file closes
        if not result.exists():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            made = make(path)
            result.write_bytes(pickle.dumps(made))
            return made
    loaded: T = pickle.loads(result.read_bytes())
    return loaded


def group_of(item: pytest.Item) -> str:
    """`ENGINES` for a test of the end-to-end suites or of an engine or the Spark cluster (their
    markers, set from the fixtures they use, say so), else its module."""
    if item.path.is_relative_to(E2E) or any(item.get_closest_marker(m) for m in ("cluster", "engine")):
        return ENGINES
    return item.nodeid.partition("::")[0]


def is_long(item: pytest.Item) -> bool:
    """Whether `item` runs Spark jobs or is a larger run (its markers say so)."""
    return any(item.get_closest_marker(m) for m in ("spark", "slow"))


def write_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the first worker (every worker collects the same tests), the group of each test and the
    groups that hold a long test (`is_long`), into the file the controller reads."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or workerinput.get("workerid") != "gw0" or GROUPS_FILE not in workerinput:
        return
    groups = {item.nodeid: group_of(item) for item in items}
    long = sorted({group_of(item) for item in items if is_long(item)})
    Path(workerinput[GROUPS_FILE]).write_text(json.dumps({"groups": groups, "long": long}))


class GroupScheduling(LoadScopeScheduling):
    """xdist's module-scope scheduling, with each test's scope its group (`group_of`)."""

    def __init__(self, config: pytest.Config, log: object, groups_file: Path) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self.groups_file = groups_file
        self.groups: dict[str, str] | None = None
        self.long: set[str] = set()
        self.ordered = False

    def _assign_work_unit(self, node: Any) -> None:
        """The engines' group first (the long pole), then the groups of long tests, then the rest;
        within each, xdist's order (most tests first)."""
        if not self.ordered:
            rank = {scope: (scope != ENGINES, scope not in self.long) for scope in self.workqueue}
            for scope in sorted(self.workqueue, key=rank.__getitem__):  # a stable sort
                self.workqueue.move_to_end(scope)
            self.ordered = True
        super()._assign_work_unit(node)

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:  # called once collection is over on every worker
            written = json.loads(self.groups_file.read_text())
            self.groups, self.long = written["groups"], set(written["long"])
        return self.groups.get(nodeid, nodeid.partition("::")[0])
