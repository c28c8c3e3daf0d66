"""`tune_for_serving`: what a serving process does to its garbage collector once loaded."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pruner.serving.gc_tuning import OLDER_THRESHOLDS, YOUNG_THRESHOLD, tune_for_serving


@pytest.fixture
def restored_collector() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


@pytest.mark.usefixtures("restored_collector")
def test_serving_freezes_what_is_loaded_and_collects_young_objects_less_often() -> None:
    loaded = [[i] for i in range(1_000)]  # state loaded before serving
    tune_for_serving()
    assert gc.get_freeze_count() >= len(loaded)
    assert gc.get_threshold() == (YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
