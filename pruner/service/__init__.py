"""The sidecar's gRPC server: the `lakeprune.v1.PruningService` servicer, the protobuf codec (the
only module besides the Python client that reads generated messages), the bearer-token check and
request decoding, and the mapping of the shared request statuses to gRPC codes. Generated code is in
`gen/`; what both servers share is in `pruner.serving`, the process that runs them in
`pruner.sidecar`."""
