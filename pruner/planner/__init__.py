"""The pruning planner: from a table, a predicate and a snapshot to the splits that may hold
matching rows, with an explain record per step. `prune` (in `prune.py`) is the one entry point;
the steps are in `steps/`, the loop over them in `planner.py`, what a prune may spend (cost guard
thresholds, deadline) in `limits.py`, IN lists as Arrow key arrays in `keys.py`, evaluation against
statistics in `stats_eval.py`, the result types in `result.py`."""
