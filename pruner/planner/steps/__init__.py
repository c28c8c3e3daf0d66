"""The planner's steps, cheapest first (`STEPS`): partition values, partition stats, the record
index, secondary indexes, functional indexes, column stats, bloom filters, text indexes. Each is
one module with one object (`base.Step`); the planner is a loop over them."""

from __future__ import annotations

from pruner.planner.steps.base import Step
from pruner.planner.steps.bloom_filters import BloomFilters
from pruner.planner.steps.functional_index import FunctionalIndex
from pruner.planner.steps.partition_values import PartitionValues
from pruner.planner.steps.record_index import RecordIndex
from pruner.planner.steps.secondary_index import SecondaryIndex
from pruner.planner.steps.stats import ColumnStats, PartitionStats
from pruner.planner.steps.text_index import TextIndex

STEPS: tuple[Step, ...] = (
    PartitionValues(),
    PartitionStats(),
    RecordIndex(),
    SecondaryIndex(),
    FunctionalIndex(),
    ColumnStats(),
    BloomFilters(),
    TextIndex(),
)
