"""pruner.index.bloom, probing many filters at once: `might_contain_any` equals a loop over the
filters (also in bounded slices and hash chunks, and at the edges: missing filters, no hashes), and
`probe_any` under a probe budget only keeps more filters and counts those it kept unchecked."""

from __future__ import annotations

from unittest import mock

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.index import bloom
from pruner.index.bloom import (
    build,
    hash_python_values,
    might_contain,
    might_contain_any,
    might_contain_each,
    probe_any,
)
from pruner.types import ColumnType


def _random_filters(
    rng: np.random.Generator, count: int
) -> tuple[list[bytes | None], npt.NDArray[np.uint64]]:
    filters: list[bytes | None] = []
    inserted: list[npt.NDArray[np.uint64]] = []
    for _ in range(count):
        if rng.random() < 0.2:
            filters.append(None)
            continue
        hashes = rng.integers(0, 2**64, size=int(rng.integers(0, 300)), dtype=np.uint64)
        inserted.append(hashes)
        filters.append(build(hashes, int(32 * 2 ** rng.integers(0, 8))))
    pool = np.concatenate([*inserted, np.zeros(0, dtype=np.uint64)])
    return filters, pool


def _probes(rng: np.random.Generator, pool: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    fresh = rng.integers(0, 2**64, size=int(rng.integers(1, 6)), dtype=np.uint64)
    picked = rng.choice(pool, size=min(len(pool), int(rng.integers(0, 3)))) if len(pool) else fresh[:0]
    return np.concatenate([fresh, picked.astype(np.uint64)])


def _loop_reference(filters: list[bytes | None], hashes: npt.NDArray[np.uint64]) -> list[bool]:
    return [True if f is None else bool(might_contain(f, hashes).any()) for f in filters]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 16))
def test_might_contain_each_equals_a_loop_over_filters(seed: int, count: int) -> None:
    rng = np.random.default_rng(seed)
    filters, pool = _random_filters(rng, count)
    present = [f for f in filters if f is not None]
    probes = _probes(rng, pool)
    expected = [might_contain(f, probes).tolist() for f in present]
    assert might_contain_each(present, probes).tolist() == expected
    with mock.patch.object(bloom, "_GATHER_LIMIT", 8):  # one filter per slice
        assert might_contain_each(present, probes).tolist() == expected
    with mock.patch.object(bloom, "_JOIN_BYTES", 96):  # a few filters per slice, a large one alone
        assert might_contain_each(present, probes).tolist() == expected
    assert might_contain_each(present, probes[:0]).shape == (len(present), 0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 16))
def test_might_contain_any_equals_a_loop_over_filters(seed: int, count: int) -> None:
    rng = np.random.default_rng(seed)
    filters, pool = _random_filters(rng, count)
    probes = _probes(rng, pool)
    assert might_contain_any(filters, probes).tolist() == _loop_reference(filters, probes)


def test_might_contain_any_in_bounded_slices_and_chunks_of_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bloom, "_GATHER_LIMIT", 40)
    monkeypatch.setattr(bloom, "_HASH_CHUNK", 2)  # filters that answered drop out between chunks
    seen: set[bool] = set()
    for seed in range(20):
        rng = np.random.default_rng(seed)
        filters, pool = _random_filters(rng, 25)
        probes = _probes(rng, pool)
        answers = might_contain_any(filters, probes).tolist()
        assert answers == _loop_reference(filters, probes)
        seen.update(a for a, f in zip(answers, filters, strict=True) if f is not None)
    assert seen == {True, False}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 16), st.integers(0, 200))
def test_a_probe_budget_only_keeps_more_and_counts_what_it_kept_unchecked(
    seed: int, count: int, budget: int
) -> None:
    rng = np.random.default_rng(seed)
    filters, pool = _random_filters(rng, count)
    probes = _probes(rng, pool)
    exact = might_contain_any(filters, probes)
    assert probe_any(filters, probes, None)[0].tolist() == exact.tolist()
    with mock.patch.object(bloom, "_HASH_CHUNK", 2):
        answers, unchecked, spent = probe_any(filters, probes, budget)
    assert np.all(answers | ~exact)  # never drops a filter that might hold a value
    assert int(np.sum(answers & ~exact)) <= unchecked <= sum(f is not None for f in filters)
    assert spent <= budget  # the probes made, which a caller carries over to its next batch
    if budget >= len(probes) * count:
        assert answers.tolist() == exact.tolist() and unchecked == 0


def test_a_zero_budget_checks_nothing() -> None:
    hashes = hash_python_values(["a", "b"], ColumnType("string"))
    without = build(hash_python_values(["z"], ColumnType("string")), 1024)
    assert probe_any([without, None, without], hashes, 0)[0].tolist() == [True, True, True]
    assert probe_any([without, None, without], hashes, 0)[1] == 2
    assert probe_any([without], hashes, 2)[0].tolist() == [False]


def test_might_contain_any_edge_cases() -> None:
    hashes = hash_python_values(["a", "b"], ColumnType("string"))
    with_a = build(hashes[:1], 1024)
    without = build(hash_python_values(["z"], ColumnType("string")), 1024)
    assert might_contain_any([with_a, None, without], hashes).tolist() == [True, True, False]
    assert might_contain_any([with_a, None, without], np.zeros(0, dtype=np.uint64)).tolist() == [
        False,
        False,
        False,
    ]
    assert might_contain_any([None, None], hashes).tolist() == [True, True]
    assert might_contain_any([], hashes).tolist() == []
    assert might_contain_any([with_a], np.concatenate([hashes, hashes])).tolist() == [True]
