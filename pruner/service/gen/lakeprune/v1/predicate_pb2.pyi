from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TextCase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TEXT_CASE_AS_IS: _ClassVar[TextCase]
    TEXT_CASE_LOWER: _ClassVar[TextCase]
    TEXT_CASE_UPPER: _ClassVar[TextCase]
TEXT_CASE_AS_IS: TextCase
TEXT_CASE_LOWER: TextCase
TEXT_CASE_UPPER: TextCase

class Value(_message.Message):
    __slots__ = ("boolean_value", "integer_value", "float_value", "double_value", "decimal_value", "string_value", "binary_value", "date_days", "timestamp_micros")
    BOOLEAN_VALUE_FIELD_NUMBER: _ClassVar[int]
    INTEGER_VALUE_FIELD_NUMBER: _ClassVar[int]
    FLOAT_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    DECIMAL_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    BINARY_VALUE_FIELD_NUMBER: _ClassVar[int]
    DATE_DAYS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_MICROS_FIELD_NUMBER: _ClassVar[int]
    boolean_value: bool
    integer_value: int
    float_value: float
    double_value: float
    decimal_value: DecimalValue
    string_value: str
    binary_value: bytes
    date_days: int
    timestamp_micros: int
    def __init__(self, boolean_value: _Optional[bool] = ..., integer_value: _Optional[int] = ..., float_value: _Optional[float] = ..., double_value: _Optional[float] = ..., decimal_value: _Optional[_Union[DecimalValue, _Mapping]] = ..., string_value: _Optional[str] = ..., binary_value: _Optional[bytes] = ..., date_days: _Optional[int] = ..., timestamp_micros: _Optional[int] = ...) -> None: ...

class DecimalValue(_message.Message):
    __slots__ = ("unscaled", "scale")
    UNSCALED_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    unscaled: str
    scale: int
    def __init__(self, unscaled: _Optional[str] = ..., scale: _Optional[int] = ...) -> None: ...

class Range(_message.Message):
    __slots__ = ("low", "low_inclusive", "high", "high_inclusive")
    LOW_FIELD_NUMBER: _ClassVar[int]
    LOW_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    HIGH_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    low: Value
    low_inclusive: bool
    high: Value
    high_inclusive: bool
    def __init__(self, low: _Optional[_Union[Value, _Mapping]] = ..., low_inclusive: _Optional[bool] = ..., high: _Optional[_Union[Value, _Mapping]] = ..., high_inclusive: _Optional[bool] = ...) -> None: ...

class RangeSet(_message.Message):
    __slots__ = ("ranges",)
    RANGES_FIELD_NUMBER: _ClassVar[int]
    ranges: _containers.RepeatedCompositeFieldContainer[Range]
    def __init__(self, ranges: _Optional[_Iterable[_Union[Range, _Mapping]]] = ...) -> None: ...

class DiscreteValues(_message.Message):
    __slots__ = ("values", "integers", "strings")
    VALUES_FIELD_NUMBER: _ClassVar[int]
    INTEGERS_FIELD_NUMBER: _ClassVar[int]
    STRINGS_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[Value]
    integers: _containers.RepeatedScalarFieldContainer[int]
    strings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., integers: _Optional[_Iterable[int]] = ..., strings: _Optional[_Iterable[str]] = ...) -> None: ...

class AllOrNone(_message.Message):
    __slots__ = ("all",)
    ALL_FIELD_NUMBER: _ClassVar[int]
    all: bool
    def __init__(self, all: _Optional[bool] = ...) -> None: ...

class ValueSet(_message.Message):
    __slots__ = ("all_or_none", "ranges", "discrete")
    ALL_OR_NONE_FIELD_NUMBER: _ClassVar[int]
    RANGES_FIELD_NUMBER: _ClassVar[int]
    DISCRETE_FIELD_NUMBER: _ClassVar[int]
    all_or_none: AllOrNone
    ranges: RangeSet
    discrete: DiscreteValues
    def __init__(self, all_or_none: _Optional[_Union[AllOrNone, _Mapping]] = ..., ranges: _Optional[_Union[RangeSet, _Mapping]] = ..., discrete: _Optional[_Union[DiscreteValues, _Mapping]] = ...) -> None: ...

class Domain(_message.Message):
    __slots__ = ("values", "null_allowed", "nan_allowed")
    VALUES_FIELD_NUMBER: _ClassVar[int]
    NULL_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    NAN_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    values: ValueSet
    null_allowed: bool
    nan_allowed: bool
    def __init__(self, values: _Optional[_Union[ValueSet, _Mapping]] = ..., null_allowed: _Optional[bool] = ..., nan_allowed: _Optional[bool] = ...) -> None: ...

class ColumnDomain(_message.Message):
    __slots__ = ("column", "domain")
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    column: str
    domain: Domain
    def __init__(self, column: _Optional[str] = ..., domain: _Optional[_Union[Domain, _Mapping]] = ...) -> None: ...

class TupleDomain(_message.Message):
    __slots__ = ("none", "columns")
    NONE_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    none: bool
    columns: _containers.RepeatedCompositeFieldContainer[ColumnDomain]
    def __init__(self, none: _Optional[bool] = ..., columns: _Optional[_Iterable[_Union[ColumnDomain, _Mapping]]] = ...) -> None: ...

class TextPredicate(_message.Message):
    __slots__ = ("atom", "all", "any", "opaque")
    ATOM_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    ANY_FIELD_NUMBER: _ClassVar[int]
    OPAQUE_FIELD_NUMBER: _ClassVar[int]
    atom: TextAtom
    all: TextPredicates
    any: TextPredicates
    opaque: OpaqueText
    def __init__(self, atom: _Optional[_Union[TextAtom, _Mapping]] = ..., all: _Optional[_Union[TextPredicates, _Mapping]] = ..., any: _Optional[_Union[TextPredicates, _Mapping]] = ..., opaque: _Optional[_Union[OpaqueText, _Mapping]] = ...) -> None: ...

class TextPredicates(_message.Message):
    __slots__ = ("parts",)
    PARTS_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[TextPredicate]
    def __init__(self, parts: _Optional[_Iterable[_Union[TextPredicate, _Mapping]]] = ...) -> None: ...

class OpaqueText(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TextAtom(_message.Message):
    __slots__ = ("column", "case", "expression", "like", "contains", "starts_with", "ends_with", "regex", "words", "source")
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    CASE_FIELD_NUMBER: _ClassVar[int]
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    LIKE_FIELD_NUMBER: _ClassVar[int]
    CONTAINS_FIELD_NUMBER: _ClassVar[int]
    STARTS_WITH_FIELD_NUMBER: _ClassVar[int]
    ENDS_WITH_FIELD_NUMBER: _ClassVar[int]
    REGEX_FIELD_NUMBER: _ClassVar[int]
    WORDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    column: str
    case: TextCase
    expression: str
    like: LikePattern
    contains: str
    starts_with: str
    ends_with: str
    regex: str
    words: str
    source: str
    def __init__(self, column: _Optional[str] = ..., case: _Optional[_Union[TextCase, str]] = ..., expression: _Optional[str] = ..., like: _Optional[_Union[LikePattern, _Mapping]] = ..., contains: _Optional[str] = ..., starts_with: _Optional[str] = ..., ends_with: _Optional[str] = ..., regex: _Optional[str] = ..., words: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class LikePattern(_message.Message):
    __slots__ = ("pattern", "escape")
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    ESCAPE_FIELD_NUMBER: _ClassVar[int]
    pattern: str
    escape: str
    def __init__(self, pattern: _Optional[str] = ..., escape: _Optional[str] = ...) -> None: ...
