"""What both of the sidecar's servers (gRPC in `pruner.service`, Thrift in `pruner.thrift`) share:
the configuration, the catalog of schemas and tables, the one error map, request metrics and logs,
deadlines, and the bounding and redaction of what callers are told. No wire library is imported
here."""
