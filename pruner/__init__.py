"""lakeprune query side: the table format readers, index partition storage and (in later issues)
the pruning planner and sidecar. Everything here depends on pyarrow only, never on Spark, so the
sidecar starts fast and the pure core can be tested without a JVM."""
