"""`lakeprune serve --workers N`: a supervisor process that runs N planning processes (workers,
each a `pruner.sidecar.Sidecar` in a fresh interpreter) behind the same gRPC and Thrift ports, keeps
them running, aggregates their metrics on one port, and stops them with itself."""
