"""Split ids and paging tokens round-trip, and any change to one is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.thrift.tokens import TokenError, TokenSealer

KEY = b"k" * 32


def test_round_trip() -> None:
    sealer = TokenSealer(KEY)
    payload = {"schema": "s", "table": "t", "file": "a/b.parquet", "keys": [1, "x", None]}
    assert sealer.open("split", sealer.seal("split", payload)) == payload


@given(st.integers(min_value=0), st.integers(min_value=0, max_value=255))
def test_any_flipped_byte_is_refused(position: int, xor: int) -> None:
    sealer = TokenSealer(KEY)
    token = bytearray(sealer.seal("split", {"file": "x.parquet"}))
    token[position % len(token)] ^= xor or 1
    with pytest.raises(TokenError, match=r"rejected|version"):
        sealer.open("split", bytes(token))


def test_other_key_kind_or_garbage_is_refused() -> None:
    token = TokenSealer(KEY).seal("split", {"file": "x"})
    with pytest.raises(TokenError, match="not issued"):
        TokenSealer(b"o" * 32).open("split", token)
    with pytest.raises(TokenError, match="not a page token"):
        TokenSealer(KEY).open("page", token)
    for garbage in (b"", b"\x01", b"../../etc/passwd"):
        with pytest.raises(TokenError):
            TokenSealer(KEY).open("split", garbage)


def test_short_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        TokenSealer(b"short")
