"""The Trino / Presto Thrift connector side of the pruning sidecar. `proto/trino/trino_thrift.thrift`
is the one IDL; `gen/` holds the Python code generated from it (by `scripts/generate.sh`, never
edited by hand) and `idl` is the only hand-written module that imports it. Around that: the type
mapping from lakeprune columns to the connector's SQL types (`connector_types`), the translation of
the engine's constraints into lakeprune `TupleDomain`s, widening where the mapping loses precision
(`domains`), the fast column-block encoder and the block decoder (`blocks`), and the TCP server that
speaks FRAMED and HEADER transports to both engines (`wire`), built from its connections
(`connections`), frames (`transports`), binary-protocol messages (`messages`), method table
(`methods`) and the step from a call to its answer (`dispatch`)."""
