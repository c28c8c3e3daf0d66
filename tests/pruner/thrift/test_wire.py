"""pruner.thrift.wire against real clients: the generated Thrift client over TFramedTransport from
several threads, a THeaderTransport client (Presto's default), pipelined requests on one raw
socket answered out of order by seqid, `presto` method names, unknown methods, every error
mapping, spliced `get_rows` pages, oversized frames and replies, and graceful stop. Every socket
has a timeout, so a bug cannot hang the suite."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TTransport
from thrift.transport.THeaderTransport import THeaderClientType, THeaderTransport
from thrift.transport.TTransport import TMemoryBuffer

from pruner.errors import InvalidInputError
from pruner.thrift import idl
from pruner.thrift.blocks import decode_values, encode_block, encode_page_result
from pruner.thrift.wire import ThriftServer
from pruner.types import ColumnType
from tests.pruner.thrift.support import args, framed, message, raw_socket, read_exactly, read_reply

pytestmark = pytest.mark.timeout(60)
TIMEOUT = 5.0
SLOW_SECONDS = 0.4
MAX_FRAME = 64 * 1024
CALL, REPLY, EXCEPTION = idl.TMessageType.CALL, idl.TMessageType.REPLY, idl.TMessageType.EXCEPTION


class FakeHandler:
    """Answers derived from the arguments; table names select the error cases."""

    def list_schema_names(self) -> list[str]:
        return ["default", "other"]

    def list_tables(self, schema_or_none: idl.NullableSchemaName) -> list[idl.SchemaTableName]:
        return [idl.SchemaTableName(schemaName=schema_or_none.schemaName or "all", tableName="t")]

    def get_table_metadata(self, name: idl.SchemaTableName) -> idl.NullableTableMetadata:
        errors: dict[str, Exception] = {
            "refused": InvalidInputError("no such thing"),
            "storage": OSError("disk on fire"),
            "boom": RuntimeError("kaboom\nsecond line"),
            "service": idl.ServiceException(message="custom", retryable=True),
        }
        if name.tableName in errors:
            raise errors[name.tableName]
        if name.tableName == "missing":
            return idl.NullableTableMetadata()
        column = idl.ColumnMetadata(name="id", type="bigint", hidden=False)
        return idl.NullableTableMetadata(
            tableMetadata=idl.TableMetadata(schemaTableName=name, columns=[column])
        )

    def get_splits(
        self,
        name: idl.SchemaTableName,
        desired_columns: idl.NullableColumnSet,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
    ) -> idl.SplitBatch:
        if name.tableName == "slow":
            time.sleep(SLOW_SECONDS)
        description = (
            f"{name.tableName}:{max_split_count}:{next_token.token is None}:{desired_columns.columns}"
        )
        split = idl.Split(splitId=idl.Id(id=description.encode()), hosts=[])
        return idl.SplitBatch(splits=[split])

    def get_index_splits(
        self,
        name: idl.SchemaTableName,
        index_column_names: list[str],
        output_column_names: list[str],
        keys: idl.PageResult,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
    ) -> idl.SplitBatch:
        values = decode_values(keys.columnBlocks[0], ColumnType("bigint"))
        split = idl.Split(splitId=idl.Id(id=repr(values).encode()), hosts=[idl.HostAddress(host="h", port=1)])
        return idl.SplitBatch(splits=[split])

    def get_rows(
        self, split_id: idl.Id, columns: list[str], max_bytes: int, next_token: idl.NullableToken
    ) -> Any:
        if split_id.id == b"struct":
            return idl.PageResult(columnBlocks=[], rowCount=7)
        if split_id.id == b"huge":
            return encode_page_result([encode_block(pa.array(["x" * MAX_FRAME]))], 1, None)
        if split_id.id == b"none":
            return None  # a handler bug
        block = encode_block(pa.array([1, None, 3], pa.int64()))
        return encode_page_result([block], 3, b"next" if next_token.token is None else None)


@pytest.fixture
def server() -> Iterator[ThriftServer]:
    server = ThriftServer(FakeHandler(), workers=8, max_frame_size=MAX_FRAME)
    server.start()
    yield server
    server.stop(grace_seconds=TIMEOUT)


def framed_client(port: int) -> tuple[Any, TTransport.TTransportBase]:
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(TIMEOUT * 1000)
    transport = TTransport.TFramedTransport(sock)
    transport.open()
    return idl.Service.Client(TBinaryProtocol(transport)), transport


def table(name: str) -> idl.SchemaTableName:
    return idl.SchemaTableName(schemaName="default", tableName=name)


def splits_args(name: str) -> Any:
    return args(
        "GetSplits",
        schemaTableName=table(name),
        outputConstraint=idl.TupleDomain(domains={}),
        maxSplitCount=5,
    )


# The generated client ---------------------------------------------------------------------------


def test_generated_client_from_parallel_threads(server: ThriftServer) -> None:
    results: dict[int, list[Any]] = {}
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            client, transport = framed_client(server.port)
            with_schema = idl.NullableSchemaName(schemaName=f"s{index}")
            results[index] = [
                client.trinoListSchemaNames(),
                client.trinoListTables(with_schema)[0].schemaName,
                client.trinoListTables(idl.NullableSchemaName())[0].schemaName,
                client.trinoGetTableMetadata(table(f"t{index}")).tableMetadata.schemaTableName.tableName,
                client.trinoGetSplits(table("slow"), None, idl.TupleDomain(domains={}), 3, None)
                .splits[0]
                .splitId.id,
            ]
            transport.close()
        except BaseException as exc:
            errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    elapsed = time.monotonic() - started
    assert not errors
    for index in range(6):
        assert results[index] == [["default", "other"], f"s{index}", "all", f"t{index}", b"slow:3:True:None"]
    assert elapsed < 6 * SLOW_SECONDS / 2, "connections were not served in parallel"


def test_absent_nullable_arguments_arrive_as_empty_wrappers(server: ThriftServer) -> None:
    client, transport = framed_client(server.port)
    batch = client.trinoGetSplits(
        table("t"), idl.NullableColumnSet(columns={"a"}), idl.TupleDomain(), 1, None
    )
    assert batch.splits[0].splitId.id == b"t:1:True:{'a'}"
    transport.close()


def test_index_splits_get_the_keys_page(server: ThriftServer) -> None:
    client, transport = framed_client(server.port)
    keys = idl.PageResult(columnBlocks=[idl.Block(bigintData=idl.Bigint(longs=[4, 2]))], rowCount=2)
    batch = client.trinoGetIndexSplits(
        table("t"), ["id"], ["id"], keys, idl.TupleDomain(domains={}), 10, None
    )
    assert batch.splits[0].splitId.id == b"[4, 2]"
    assert batch.splits[0].hosts == [idl.HostAddress(host="h", port=1)]
    transport.close()


def test_get_rows_bytes_are_spliced_and_structs_encoded(server: ThriftServer) -> None:
    client, transport = framed_client(server.port)
    page = client.trinoGetRows(idl.Id(id=b"split"), ["id"], 1 << 20, None)
    assert (page.rowCount, page.nextToken.id) == (3, b"next")
    assert decode_values(page.columnBlocks[0], ColumnType("bigint")) == [1, None, 3]
    last = client.trinoGetRows(
        idl.Id(id=b"split"), ["id"], 1 << 20, idl.NullableToken(token=idl.Id(id=b"next"))
    )
    assert last.nextToken is None
    assert client.trinoGetRows(idl.Id(id=b"struct"), [], 1, None).rowCount == 7
    transport.close()


# Errors -----------------------------------------------------------------------------------------


def test_error_mapping_and_the_connection_survives(server: ThriftServer) -> None:
    client, transport = framed_client(server.port)
    with pytest.raises(idl.ServiceException) as refused:
        client.trinoGetTableMetadata(table("refused"))
    assert (refused.value.message, refused.value.retryable) == ("no such thing", False)
    with pytest.raises(idl.ServiceException) as storage:
        client.trinoGetTableMetadata(table("storage"))
    assert storage.value.retryable is True and "disk on fire" in storage.value.message
    with pytest.raises(idl.ServiceException) as custom:
        client.trinoGetTableMetadata(table("service"))
    assert (custom.value.message, custom.value.retryable) == ("custom", True)
    with pytest.raises(TApplicationException) as internal:
        client.trinoGetTableMetadata(table("boom"))
    assert internal.value.type == TApplicationException.INTERNAL_ERROR
    # A bug: the engine learns that it happened and where to look, not the internals.
    assert "RuntimeError" in internal.value.message and "sidecar's log" in internal.value.message
    assert "kaboom" not in internal.value.message and "\n" not in internal.value.message
    with pytest.raises(TApplicationException) as bug:
        client.trinoGetRows(idl.Id(id=b"none"), [], 1, None)
    assert bug.value.type == TApplicationException.INTERNAL_ERROR
    assert client.trinoGetTableMetadata(table("missing")).tableMetadata is None
    assert client.trinoListSchemaNames() == ["default", "other"]
    transport.close()


def test_missing_required_argument_is_a_service_exception(server: ThriftServer) -> None:
    with raw_socket(server.port) as sock:
        sock.sendall(framed(message("trinoGetTableMetadata", 9, args("GetTableMetadata"))))
        _, message_type, seqid, result = read_reply(sock)
    assert (message_type, seqid) == (REPLY, 9)
    assert result.ex1.message == "missing argument schemaTableName" and result.ex1.retryable is False


def test_unknown_method_then_more_requests(server: ThriftServer) -> None:
    with raw_socket(server.port) as sock:
        sock.sendall(framed(message("prestoAddRows", 4, args("ListSchemaNames"))))
        name, message_type, seqid, error = read_reply(sock)
        assert (name, message_type, seqid, error.type) == (
            "prestoAddRows",
            EXCEPTION,
            4,
            TApplicationException.UNKNOWN_METHOD,
        )
        sock.sendall(framed(message("prestoListSchemaNames", 5, args("ListSchemaNames"))))
        name, message_type, seqid, result = read_reply(sock)
    assert (name, message_type, seqid, result.success) == (
        "prestoListSchemaNames",
        REPLY,
        5,
        ["default", "other"],
    )


def test_undecodable_arguments_are_a_protocol_error(server: ThriftServer) -> None:
    body = message("trinoGetTableMetadata", 3, args("GetTableMetadata", schemaTableName=table("t")))
    with raw_socket(server.port) as sock:
        sock.sendall(framed(body[:-6]))  # the struct ends mid-field
        _, message_type, seqid, error = read_reply(sock)
        assert (message_type, seqid, error.type) == (EXCEPTION, 3, TApplicationException.PROTOCOL_ERROR)
        sock.sendall(framed(message("trinoListSchemaNames", 4, args("ListSchemaNames"))))
        assert read_reply(sock)[3].success == ["default", "other"]


# Framing ----------------------------------------------------------------------------------------


def test_pipelined_requests_are_answered_by_seqid(server: ThriftServer) -> None:
    with raw_socket(server.port) as sock:
        sock.sendall(
            framed(message("trinoGetSplits", 1, splits_args("slow")))
            + framed(message("trinoListSchemaNames", 2, args("ListSchemaNames")))
            + framed(
                message("prestoGetTableMetadata", 3, args("GetTableMetadata", schemaTableName=table("t3")))
            )
        )
        replies = [read_reply(sock) for _ in range(3)]
    by_seqid = {seqid: (name, message_type, value) for name, message_type, seqid, value in replies}
    assert (
        by_seqid[1][0] == "trinoGetSplits"
        and by_seqid[1][2].success.splits[0].splitId.id == b"slow:5:True:None"
    )
    assert by_seqid[2][2].success == ["default", "other"]
    assert by_seqid[3][0] == "prestoGetTableMetadata"
    assert by_seqid[3][2].success.tableMetadata.schemaTableName.tableName == "t3"
    assert [seqid for _, _, seqid, _ in replies][-1] == 1, "the slow request held up the others"


def test_oversized_frame_closes_the_connection(
    server: ThriftServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="pruner.thrift.wire"), raw_socket(server.port) as sock:
        sock.sendall(struct.pack(">i", MAX_FRAME + 1) + b"\x00" * 16)
        assert sock.recv(1) == b""
    assert "exceeds the maximum frame size" in caplog.text
    client, transport = framed_client(server.port)  # the server still serves
    assert client.trinoListSchemaNames() == ["default", "other"]
    transport.close()


def test_unframed_and_non_strict_messages_close_the_connection(server: ThriftServer) -> None:
    with raw_socket(server.port) as sock:  # unframed strict binary: the length word is negative
        sock.sendall(message("trinoListSchemaNames", 1, args("ListSchemaNames")))
        assert sock.recv(1) == b""
    old_style = struct.pack(">i", 20) + b"trinoListSchemaNames" + b"\x01" + struct.pack(">i", 1) + b"\x00"
    with raw_socket(server.port) as sock:
        sock.sendall(framed(old_style))
        assert sock.recv(1) == b""


def test_oversized_reply_becomes_an_application_error(server: ThriftServer) -> None:
    client, transport = framed_client(server.port)
    with pytest.raises(TApplicationException) as error:
        client.trinoGetRows(idl.Id(id=b"huge"), ["x"], 1 << 20, None)
    assert error.value.type == TApplicationException.INTERNAL_ERROR
    assert "maximum frame size" in error.value.message
    transport.close()


# HEADER transport -------------------------------------------------------------------------------


def test_header_transport_client(server: ThriftServer) -> None:
    sock = TSocket.TSocket("127.0.0.1", server.port)
    sock.setTimeout(TIMEOUT * 1000)
    transport = THeaderTransport(sock, [THeaderClientType.HEADERS])
    sock.open()
    client = idl.Service.Client(TBinaryProtocol(transport))
    assert client.trinoListSchemaNames() == ["default", "other"]
    page = client.trinoGetRows(idl.Id(id=b"split"), ["id"], 1 << 20, None)
    assert decode_values(page.columnBlocks[0], ColumnType("bigint")) == [1, None, 3]
    with pytest.raises(idl.ServiceException):
        client.trinoGetTableMetadata(table("refused"))
    sock.close()


def test_header_replies_echo_sequence_id_and_flags(server: ThriftServer) -> None:
    buffer = TMemoryBuffer()
    request = THeaderTransport(buffer, [THeaderClientType.HEADERS])
    request.sequence_id, request.flags = 77, 1
    request.write(message("prestoListSchemaNames", 77, args("ListSchemaNames")))
    request.flush()
    with raw_socket(server.port) as sock:
        sock.sendall(buffer.getvalue())
        (size,) = struct.unpack(">i", read_exactly(sock, 4))
        frame = read_exactly(sock, size)
    magic, flags, sequence_id = struct.unpack(">HHi", frame[:8])
    assert (magic, flags, sequence_id) == (0x0FFF, 1, 77)
    reply = THeaderTransport(TMemoryBuffer(struct.pack(">i", size) + frame), [THeaderClientType.HEADERS])
    protocol = TBinaryProtocol(reply)
    assert protocol.readMessageBegin() == ("prestoListSchemaNames", REPLY, 77)


# Lifecycle --------------------------------------------------------------------------------------


def test_stop_finishes_requests_in_flight() -> None:
    server = ThriftServer(FakeHandler())
    port = server.start()
    assert port > 0
    with pytest.raises(RuntimeError):
        server.start()
    with raw_socket(port) as sock:
        sock.sendall(framed(message("trinoGetSplits", 1, splits_args("slow"))))
        time.sleep(SLOW_SECONDS / 4)  # the request is in flight
        stopper = threading.Thread(target=server.stop, args=(TIMEOUT,))
        stopper.start()
        _, message_type, seqid, result = read_reply(sock)
        assert (message_type, seqid) == (REPLY, 1) and result.success.splits
        assert sock.recv(1) == b""  # then the connection is closed
        stopper.join(TIMEOUT)
    assert not stopper.is_alive()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
