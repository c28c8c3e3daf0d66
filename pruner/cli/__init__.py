"""The `lakeprune` command line. Commands that need Spark import it lazily, so `table show`,
`table read`, `compact` and `clean` start in well under a second."""
