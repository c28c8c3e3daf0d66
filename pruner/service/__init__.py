"""The pruning sidecar: configuration, the catalog of warehouse tables, and the gRPC and Thrift
endpoints that `lakeprune serve` runs side by side over one catalog and one index cache."""
