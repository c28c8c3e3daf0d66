from pruner.service.gen.lakeprune.v1 import predicate_pb2 as _predicate_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TypeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TYPE_KIND_UNSPECIFIED: _ClassVar[TypeKind]
    TYPE_KIND_BOOLEAN: _ClassVar[TypeKind]
    TYPE_KIND_TINYINT: _ClassVar[TypeKind]
    TYPE_KIND_SMALLINT: _ClassVar[TypeKind]
    TYPE_KIND_INT: _ClassVar[TypeKind]
    TYPE_KIND_BIGINT: _ClassVar[TypeKind]
    TYPE_KIND_FLOAT: _ClassVar[TypeKind]
    TYPE_KIND_DOUBLE: _ClassVar[TypeKind]
    TYPE_KIND_DECIMAL: _ClassVar[TypeKind]
    TYPE_KIND_STRING: _ClassVar[TypeKind]
    TYPE_KIND_BINARY: _ClassVar[TypeKind]
    TYPE_KIND_DATE: _ClassVar[TypeKind]
    TYPE_KIND_TIMESTAMP: _ClassVar[TypeKind]

class IndexType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INDEX_TYPE_UNSPECIFIED: _ClassVar[IndexType]
    INDEX_TYPE_FILES: _ClassVar[IndexType]
    INDEX_TYPE_RECORD_INDEX: _ClassVar[IndexType]
    INDEX_TYPE_COLUMN_STATS: _ClassVar[IndexType]
    INDEX_TYPE_PARTITION_STATS: _ClassVar[IndexType]
    INDEX_TYPE_BLOOM_FILTERS: _ClassVar[IndexType]
    INDEX_TYPE_SECONDARY_INDEX: _ClassVar[IndexType]
    INDEX_TYPE_FUNCTIONAL: _ClassVar[IndexType]
    INDEX_TYPE_TEXT: _ClassVar[IndexType]

class IndexState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INDEX_STATE_UNSPECIFIED: _ClassVar[IndexState]
    INDEX_STATE_BUILDING: _ClassVar[IndexState]
    INDEX_STATE_READY: _ClassVar[IndexState]

class FilterEngine(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FILTER_ENGINE_UNSPECIFIED: _ClassVar[FilterEngine]
    FILTER_ENGINE_TRINO: _ClassVar[FilterEngine]

class SqlDialect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SQL_DIALECT_UNSPECIFIED: _ClassVar[SqlDialect]
    SQL_DIALECT_SPARK: _ClassVar[SqlDialect]
TYPE_KIND_UNSPECIFIED: TypeKind
TYPE_KIND_BOOLEAN: TypeKind
TYPE_KIND_TINYINT: TypeKind
TYPE_KIND_SMALLINT: TypeKind
TYPE_KIND_INT: TypeKind
TYPE_KIND_BIGINT: TypeKind
TYPE_KIND_FLOAT: TypeKind
TYPE_KIND_DOUBLE: TypeKind
TYPE_KIND_DECIMAL: TypeKind
TYPE_KIND_STRING: TypeKind
TYPE_KIND_BINARY: TypeKind
TYPE_KIND_DATE: TypeKind
TYPE_KIND_TIMESTAMP: TypeKind
INDEX_TYPE_UNSPECIFIED: IndexType
INDEX_TYPE_FILES: IndexType
INDEX_TYPE_RECORD_INDEX: IndexType
INDEX_TYPE_COLUMN_STATS: IndexType
INDEX_TYPE_PARTITION_STATS: IndexType
INDEX_TYPE_BLOOM_FILTERS: IndexType
INDEX_TYPE_SECONDARY_INDEX: IndexType
INDEX_TYPE_FUNCTIONAL: IndexType
INDEX_TYPE_TEXT: IndexType
INDEX_STATE_UNSPECIFIED: IndexState
INDEX_STATE_BUILDING: IndexState
INDEX_STATE_READY: IndexState
FILTER_ENGINE_UNSPECIFIED: FilterEngine
FILTER_ENGINE_TRINO: FilterEngine
SQL_DIALECT_UNSPECIFIED: SqlDialect
SQL_DIALECT_SPARK: SqlDialect

class TableName(_message.Message):
    __slots__ = ("schema", "table")
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    schema: str
    table: str
    def __init__(self, schema: _Optional[str] = ..., table: _Optional[str] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ("schema",)
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    schema: str
    def __init__(self, schema: _Optional[str] = ...) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("schemas", "tables")
    SCHEMAS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    schemas: _containers.RepeatedScalarFieldContainer[str]
    tables: _containers.RepeatedCompositeFieldContainer[TableName]
    def __init__(self, schemas: _Optional[_Iterable[str]] = ..., tables: _Optional[_Iterable[_Union[TableName, _Mapping]]] = ...) -> None: ...

class GetTableRequest(_message.Message):
    __slots__ = ("table", "snapshot", "as_of_time")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    AS_OF_TIME_FIELD_NUMBER: _ClassVar[int]
    table: TableName
    snapshot: str
    as_of_time: str
    def __init__(self, table: _Optional[_Union[TableName, _Mapping]] = ..., snapshot: _Optional[str] = ..., as_of_time: _Optional[str] = ...) -> None: ...

class ColumnType(_message.Message):
    __slots__ = ("kind", "precision", "scale", "name")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    kind: TypeKind
    precision: int
    scale: int
    name: str
    def __init__(self, kind: _Optional[_Union[TypeKind, str]] = ..., precision: _Optional[int] = ..., scale: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("name", "type", "nullable")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: ColumnType
    nullable: bool
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[ColumnType, _Mapping]] = ..., nullable: _Optional[bool] = ...) -> None: ...

class IndexInfo(_message.Message):
    __slots__ = ("name", "type", "columns", "options", "state", "complete_up_to", "partition")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_UP_TO_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: IndexType
    columns: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    state: IndexState
    complete_up_to: str
    partition: str
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[IndexType, str]] = ..., columns: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ..., state: _Optional[_Union[IndexState, str]] = ..., complete_up_to: _Optional[str] = ..., partition: _Optional[str] = ...) -> None: ...

class GetTableResponse(_message.Message):
    __slots__ = ("table", "columns", "record_key", "partition_columns", "ordering_field", "indexes", "latest_snapshot", "virtual_columns", "snapshot", "location", "prunable_columns", "partition_columns_in_files")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    RECORD_KEY_FIELD_NUMBER: _ClassVar[int]
    PARTITION_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    ORDERING_FIELD_FIELD_NUMBER: _ClassVar[int]
    INDEXES_FIELD_NUMBER: _ClassVar[int]
    LATEST_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    VIRTUAL_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    PRUNABLE_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    PARTITION_COLUMNS_IN_FILES_FIELD_NUMBER: _ClassVar[int]
    table: TableName
    columns: _containers.RepeatedCompositeFieldContainer[Column]
    record_key: _containers.RepeatedScalarFieldContainer[str]
    partition_columns: _containers.RepeatedScalarFieldContainer[str]
    ordering_field: str
    indexes: _containers.RepeatedCompositeFieldContainer[IndexInfo]
    latest_snapshot: str
    virtual_columns: _containers.RepeatedCompositeFieldContainer[VirtualColumn]
    snapshot: str
    location: str
    prunable_columns: _containers.RepeatedScalarFieldContainer[str]
    partition_columns_in_files: bool
    def __init__(self, table: _Optional[_Union[TableName, _Mapping]] = ..., columns: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., record_key: _Optional[_Iterable[str]] = ..., partition_columns: _Optional[_Iterable[str]] = ..., ordering_field: _Optional[str] = ..., indexes: _Optional[_Iterable[_Union[IndexInfo, _Mapping]]] = ..., latest_snapshot: _Optional[str] = ..., virtual_columns: _Optional[_Iterable[_Union[VirtualColumn, _Mapping]]] = ..., snapshot: _Optional[str] = ..., location: _Optional[str] = ..., prunable_columns: _Optional[_Iterable[str]] = ..., partition_columns_in_files: _Optional[bool] = ...) -> None: ...

class VirtualColumn(_message.Message):
    __slots__ = ("name", "type", "expression", "source_column", "monotonic")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_COLUMN_FIELD_NUMBER: _ClassVar[int]
    MONOTONIC_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: ColumnType
    expression: str
    source_column: str
    monotonic: bool
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[ColumnType, _Mapping]] = ..., expression: _Optional[str] = ..., source_column: _Optional[str] = ..., monotonic: _Optional[bool] = ...) -> None: ...

class PruneRequest(_message.Message):
    __slots__ = ("table", "snapshot", "predicate", "explain", "max_split_bytes", "sql_predicate", "text", "text_notes", "filter", "unindexed_conditions")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    MAX_SPLIT_BYTES_FIELD_NUMBER: _ClassVar[int]
    SQL_PREDICATE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TEXT_NOTES_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    UNINDEXED_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    table: TableName
    snapshot: str
    predicate: _predicate_pb2.TupleDomain
    explain: bool
    max_split_bytes: int
    sql_predicate: SqlPredicate
    text: _predicate_pb2.TextPredicate
    text_notes: _containers.RepeatedScalarFieldContainer[str]
    filter: EngineFilter
    unindexed_conditions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, table: _Optional[_Union[TableName, _Mapping]] = ..., snapshot: _Optional[str] = ..., predicate: _Optional[_Union[_predicate_pb2.TupleDomain, _Mapping]] = ..., explain: _Optional[bool] = ..., max_split_bytes: _Optional[int] = ..., sql_predicate: _Optional[_Union[SqlPredicate, _Mapping]] = ..., text: _Optional[_Union[_predicate_pb2.TextPredicate, _Mapping]] = ..., text_notes: _Optional[_Iterable[str]] = ..., filter: _Optional[_Union[EngineFilter, _Mapping]] = ..., unindexed_conditions: _Optional[_Iterable[str]] = ...) -> None: ...

class EngineFilter(_message.Message):
    __slots__ = ("engine", "conjuncts", "time_zone")
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    CONJUNCTS_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    engine: FilterEngine
    conjuncts: _containers.RepeatedCompositeFieldContainer[Expression]
    time_zone: str
    def __init__(self, engine: _Optional[_Union[FilterEngine, str]] = ..., conjuncts: _Optional[_Iterable[_Union[Expression, _Mapping]]] = ..., time_zone: _Optional[str] = ...) -> None: ...

class Expression(_message.Message):
    __slots__ = ("type", "column", "constant", "call")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    CONSTANT_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    type: ColumnType
    column: str
    constant: _predicate_pb2.Value
    call: ExpressionCall
    def __init__(self, type: _Optional[_Union[ColumnType, _Mapping]] = ..., column: _Optional[str] = ..., constant: _Optional[_Union[_predicate_pb2.Value, _Mapping]] = ..., call: _Optional[_Union[ExpressionCall, _Mapping]] = ...) -> None: ...

class ExpressionCall(_message.Message):
    __slots__ = ("function", "arguments")
    FUNCTION_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    function: str
    arguments: _containers.RepeatedCompositeFieldContainer[Expression]
    def __init__(self, function: _Optional[str] = ..., arguments: _Optional[_Iterable[_Union[Expression, _Mapping]]] = ...) -> None: ...

class SqlPredicate(_message.Message):
    __slots__ = ("dialect", "filters", "time_zone", "ansi")
    DIALECT_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    ANSI_FIELD_NUMBER: _ClassVar[int]
    dialect: SqlDialect
    filters: _containers.RepeatedScalarFieldContainer[str]
    time_zone: str
    ansi: bool
    def __init__(self, dialect: _Optional[_Union[SqlDialect, str]] = ..., filters: _Optional[_Iterable[str]] = ..., time_zone: _Optional[str] = ..., ansi: _Optional[bool] = ...) -> None: ...

class PartitionValue(_message.Message):
    __slots__ = ("column", "typed_value")
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    TYPED_VALUE_FIELD_NUMBER: _ClassVar[int]
    column: str
    typed_value: _predicate_pb2.Value
    def __init__(self, column: _Optional[str] = ..., typed_value: _Optional[_Union[_predicate_pb2.Value, _Mapping]] = ...) -> None: ...

class Split(_message.Message):
    __slots__ = ("path", "partition", "partition_values", "file_group", "start", "length", "row_count", "file_size")
    PATH_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    PARTITION_VALUES_FIELD_NUMBER: _ClassVar[int]
    FILE_GROUP_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    ROW_COUNT_FIELD_NUMBER: _ClassVar[int]
    FILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    path: str
    partition: str
    partition_values: _containers.RepeatedCompositeFieldContainer[PartitionValue]
    file_group: str
    start: int
    length: int
    row_count: int
    file_size: int
    def __init__(self, path: _Optional[str] = ..., partition: _Optional[str] = ..., partition_values: _Optional[_Iterable[_Union[PartitionValue, _Mapping]]] = ..., file_group: _Optional[str] = ..., start: _Optional[int] = ..., length: _Optional[int] = ..., row_count: _Optional[int] = ..., file_size: _Optional[int] = ...) -> None: ...

class ExplainStep(_message.Message):
    __slots__ = ("step", "index", "columns", "files_in", "files_out", "millis", "skipped", "fallback")
    STEP_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    FILES_IN_FIELD_NUMBER: _ClassVar[int]
    FILES_OUT_FIELD_NUMBER: _ClassVar[int]
    MILLIS_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    step: str
    index: str
    columns: _containers.RepeatedScalarFieldContainer[str]
    files_in: int
    files_out: int
    millis: float
    skipped: str
    fallback: str
    def __init__(self, step: _Optional[str] = ..., index: _Optional[str] = ..., columns: _Optional[_Iterable[str]] = ..., files_in: _Optional[int] = ..., files_out: _Optional[int] = ..., millis: _Optional[float] = ..., skipped: _Optional[str] = ..., fallback: _Optional[str] = ...) -> None: ...

class PruneResponse(_message.Message):
    __slots__ = ("snapshot", "predicate", "files_total", "files_selected", "fallbacks", "splits", "explain", "storage", "widened", "index_report")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    FILES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FILES_SELECTED_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_FIELD_NUMBER: _ClassVar[int]
    SPLITS_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    STORAGE_FIELD_NUMBER: _ClassVar[int]
    WIDENED_FIELD_NUMBER: _ClassVar[int]
    INDEX_REPORT_FIELD_NUMBER: _ClassVar[int]
    snapshot: str
    predicate: str
    files_total: int
    files_selected: int
    fallbacks: int
    splits: _containers.RepeatedCompositeFieldContainer[Split]
    explain: _containers.RepeatedCompositeFieldContainer[ExplainStep]
    storage: StorageRequests
    widened: _containers.RepeatedScalarFieldContainer[str]
    index_report: _containers.RepeatedCompositeFieldContainer[IndexReport]
    def __init__(self, snapshot: _Optional[str] = ..., predicate: _Optional[str] = ..., files_total: _Optional[int] = ..., files_selected: _Optional[int] = ..., fallbacks: _Optional[int] = ..., splits: _Optional[_Iterable[_Union[Split, _Mapping]]] = ..., explain: _Optional[_Iterable[_Union[ExplainStep, _Mapping]]] = ..., storage: _Optional[_Union[StorageRequests, _Mapping]] = ..., widened: _Optional[_Iterable[str]] = ..., index_report: _Optional[_Iterable[_Union[IndexReport, _Mapping]]] = ...) -> None: ...

class IndexReport(_message.Message):
    __slots__ = ("index", "kind", "files_pruned", "why_not")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    FILES_PRUNED_FIELD_NUMBER: _ClassVar[int]
    WHY_NOT_FIELD_NUMBER: _ClassVar[int]
    index: str
    kind: str
    files_pruned: int
    why_not: str
    def __init__(self, index: _Optional[str] = ..., kind: _Optional[str] = ..., files_pruned: _Optional[int] = ..., why_not: _Optional[str] = ...) -> None: ...

class StorageRequests(_message.Message):
    __slots__ = ("lists", "heads", "gets", "bytes_read")
    LISTS_FIELD_NUMBER: _ClassVar[int]
    HEADS_FIELD_NUMBER: _ClassVar[int]
    GETS_FIELD_NUMBER: _ClassVar[int]
    BYTES_READ_FIELD_NUMBER: _ClassVar[int]
    lists: int
    heads: int
    gets: int
    bytes_read: int
    def __init__(self, lists: _Optional[int] = ..., heads: _Optional[int] = ..., gets: _Optional[int] = ..., bytes_read: _Optional[int] = ...) -> None: ...

class GetTableStatisticsRequest(_message.Message):
    __slots__ = ("table", "snapshot", "predicate")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    table: TableName
    snapshot: str
    predicate: _predicate_pb2.TupleDomain
    def __init__(self, table: _Optional[_Union[TableName, _Mapping]] = ..., snapshot: _Optional[str] = ..., predicate: _Optional[_Union[_predicate_pb2.TupleDomain, _Mapping]] = ...) -> None: ...

class ColumnStatistics(_message.Message):
    __slots__ = ("column", "null_count", "min", "max", "distinct_values_count", "data_size", "min_decimal", "max_decimal")
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    NULL_COUNT_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    DISTINCT_VALUES_COUNT_FIELD_NUMBER: _ClassVar[int]
    DATA_SIZE_FIELD_NUMBER: _ClassVar[int]
    MIN_DECIMAL_FIELD_NUMBER: _ClassVar[int]
    MAX_DECIMAL_FIELD_NUMBER: _ClassVar[int]
    column: str
    null_count: int
    min: float
    max: float
    distinct_values_count: float
    data_size: float
    min_decimal: _predicate_pb2.DecimalValue
    max_decimal: _predicate_pb2.DecimalValue
    def __init__(self, column: _Optional[str] = ..., null_count: _Optional[int] = ..., min: _Optional[float] = ..., max: _Optional[float] = ..., distinct_values_count: _Optional[float] = ..., data_size: _Optional[float] = ..., min_decimal: _Optional[_Union[_predicate_pb2.DecimalValue, _Mapping]] = ..., max_decimal: _Optional[_Union[_predicate_pb2.DecimalValue, _Mapping]] = ...) -> None: ...

class GetTableStatisticsResponse(_message.Message):
    __slots__ = ("snapshot", "row_count", "file_count", "total_bytes", "columns")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    ROW_COUNT_FIELD_NUMBER: _ClassVar[int]
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    snapshot: str
    row_count: int
    file_count: int
    total_bytes: int
    columns: _containers.RepeatedCompositeFieldContainer[ColumnStatistics]
    def __init__(self, snapshot: _Optional[str] = ..., row_count: _Optional[int] = ..., file_count: _Optional[int] = ..., total_bytes: _Optional[int] = ..., columns: _Optional[_Iterable[_Union[ColumnStatistics, _Mapping]]] = ...) -> None: ...

class GetHistoryRequest(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: TableName
    def __init__(self, table: _Optional[_Union[TableName, _Mapping]] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ("instant", "action", "operation", "counts", "earliest_retained")
    class CountsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    INSTANT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    EARLIEST_RETAINED_FIELD_NUMBER: _ClassVar[int]
    instant: str
    action: str
    operation: str
    counts: _containers.ScalarMap[str, int]
    earliest_retained: str
    def __init__(self, instant: _Optional[str] = ..., action: _Optional[str] = ..., operation: _Optional[str] = ..., counts: _Optional[_Mapping[str, int]] = ..., earliest_retained: _Optional[str] = ...) -> None: ...

class GetHistoryResponse(_message.Message):
    __slots__ = ("entries", "earliest_retained")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    EARLIEST_RETAINED_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    earliest_retained: str
    def __init__(self, entries: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ..., earliest_retained: _Optional[str] = ...) -> None: ...

class ListFilesRequest(_message.Message):
    __slots__ = ("table", "snapshot")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    table: TableName
    snapshot: str
    def __init__(self, table: _Optional[_Union[TableName, _Mapping]] = ..., snapshot: _Optional[str] = ...) -> None: ...

class DataFile(_message.Message):
    __slots__ = ("path", "partition", "partition_values", "file_group", "instant", "size", "row_count")
    PATH_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    PARTITION_VALUES_FIELD_NUMBER: _ClassVar[int]
    FILE_GROUP_FIELD_NUMBER: _ClassVar[int]
    INSTANT_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    ROW_COUNT_FIELD_NUMBER: _ClassVar[int]
    path: str
    partition: str
    partition_values: _containers.RepeatedCompositeFieldContainer[PartitionValue]
    file_group: str
    instant: str
    size: int
    row_count: int
    def __init__(self, path: _Optional[str] = ..., partition: _Optional[str] = ..., partition_values: _Optional[_Iterable[_Union[PartitionValue, _Mapping]]] = ..., file_group: _Optional[str] = ..., instant: _Optional[str] = ..., size: _Optional[int] = ..., row_count: _Optional[int] = ...) -> None: ...

class ListFilesResponse(_message.Message):
    __slots__ = ("snapshot", "files")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    snapshot: str
    files: _containers.RepeatedCompositeFieldContainer[DataFile]
    def __init__(self, snapshot: _Optional[str] = ..., files: _Optional[_Iterable[_Union[DataFile, _Mapping]]] = ...) -> None: ...
