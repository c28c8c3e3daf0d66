"""The file `spark-submit` runs to put a lakeprune builder job on a Spark cluster: the `lakeprune`
command line (`write`, `sql`, `index build`, `compact`, `table create`, ...) with its arguments, in
the session spark-submit made (`builder.session.spark_session` uses it as it is). spark-submit
runs only `.py` files, so the `lakeprune` console script cannot be submitted itself;
`lakeprune spark-job` prints this file's path (and, with `--jars`, the S3A jars to ship with it).
Run as a script, Python puts this file's directory first on `sys.path`, where builder's own modules
(`api`, `session`, `lock`, ...) would shadow top-level packages of the same names: it is removed
before anything else is imported."""

from __future__ import annotations

import os
import sys


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    from pruner.cli.main import app

    app(prog_name="lakeprune")


if __name__ == "__main__":
    main()
