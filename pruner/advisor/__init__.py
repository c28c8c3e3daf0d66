"""The index advisor (issue 40): the sidecar's log of the prunes it planned (`workload`, their
predicates' shapes from `shapes`), what a sample of a table's files says about a column or an
expression (`evidence`), and the ranking of the indexes that would save the most (`advise`),
which `lakeprune advise` prints and applies."""
