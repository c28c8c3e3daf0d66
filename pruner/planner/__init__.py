"""The pruning planner: from a snapshot and a TupleDomain to the splits that may hold matching
rows, with an explain record per step. Evaluation against statistics is in `stats_eval`; the steps
and their order in `planner`."""
