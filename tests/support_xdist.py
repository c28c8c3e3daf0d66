"""How scripts/test.sh spreads the suite over two pytest-xdist workers (`-n 2 --dist loadgroup`).
The tests that start or share the session's servers are in two groups, each run by one worker in
collection order, so that every server starts once in a run: `ENGINES` (the end-to-end suites' Trino
and Presto, the Spark standalone cluster) and `SPARK` (every other test of the SparkSession). Each
worker has at most one SparkSession (the engines' warehouses are written with Spark too). Every
other test is grouped with its module (its module fixtures are made once), and those groups go to
whichever worker is free. xdist's own `loadgroup` reads `xdist_group` markers through a node id
suffix that pytest 9 no longer lets it set, so the groups travel differently: the first worker
writes each collected test's group into a file the controller named (`pytest_configure_node`),
and the controller's scheduler (`GroupScheduling`, a module-scope scheduler whose scope is that
group) reads it once every worker has collected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

ENGINES = "engines"
SPARK = "spark-session"
E2E = Path(__file__).with_name("e2e")
GROUPS_FILE = "lakeprune_xdist_groups"  # the key of the file's path in a worker's `workerinput`


def group_of(item: pytest.Item) -> str:
    """`ENGINES` for a test of the end-to-end suites or of an engine or the Spark cluster, `SPARK`
    for another test of the SparkSession (their markers, set from the fixtures they use, say so),
    else its module."""
    if item.path.is_relative_to(E2E) or any(item.get_closest_marker(m) for m in ("cluster", "engine")):
        return ENGINES
    if item.get_closest_marker("spark"):
        return SPARK
    return item.nodeid.partition("::")[0]


def write_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the first worker (every worker collects the same tests), the group of each test, into the
    file the controller reads."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or workerinput.get("workerid") != "gw0" or GROUPS_FILE not in workerinput:
        return
    groups = {item.nodeid: group_of(item) for item in items}
    Path(workerinput[GROUPS_FILE]).write_text(json.dumps(groups))


class GroupScheduling(LoadScopeScheduling):
    """xdist's module-scope scheduling, with each test's scope its group (`group_of`)."""

    def __init__(self, config: pytest.Config, log: object, groups_file: Path) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self.groups_file = groups_file
        self.groups: dict[str, str] | None = None

    def _assign_work_unit(self, node: Any) -> None:
        """The server groups first, one to each worker as it asks (they are the long poles), then
        the other groups, most tests first."""
        for group in (SPARK, ENGINES):
            if group in self.workqueue:
                self.workqueue.move_to_end(group, last=False)
                break
        super()._assign_work_unit(node)

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:  # called once collection is over on every worker
            self.groups = json.loads(self.groups_file.read_text())
        return self.groups.get(nodeid, nodeid.partition("::")[0])
