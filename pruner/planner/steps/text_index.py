"""Step 8: text indexes (RFC-51, issue 37). The prune's text condition (`StepContext.text`: an AND / OR
tree of `TextMatch` leaves, and notes on the atoms it could not use) is evaluated file by file
against the ready text indexes: each leaf is answered by the indexes on its subject (`msg`,
`lower(msg)`...), each requiring the terms its tokenizer derives from the leaf's fragments and words
(`pruner.index.tokenizers`). The rows of the partitions in play are read once per index and every
file's filter is probed with all its terms at once; a leaf holds for a file unless an index on its
subject lacks one of its terms, and the tree combines the leaves (AND / OR). So a file is removed
only when, for every branch of an OR, some index proves a term of that branch absent. A leaf no
ready index answers, or that requires no term (fragments shorter than n, no whole word), holds; a
file without a row in an index, or with a malformed filter, holds every leaf for that index. The
notes say which leaves and fragments could not be looked up, how many terms were, and how many of
them every file probed may hold (stop-grams: they prune nothing). The deadline is checked between
slices of files."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, TypeGuard

import numpy as np
import numpy.typing as npt

from pruner.bounded import echo, shorten
from pruner.index import bloom
from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.index.kinds.text import subject_of, tokenizer_of
from pruner.index.tokenizers import Tokenizer, TokenizerName
from pruner.metadata.files_index import DataFile
from pruner.planner.steps.base import InPlay, Skipped, StepContext, StepOutcome, Verdict
from pruner.predicate.text import TEXT_TRUE, TextAll, TextAny, TextCondition, TextMatch, leaves

log = logging.getLogger(__name__)

# Files probed per slice between deadline checks.
FILES_PER_SLICE = 4096

FileKey = tuple[str, str]  # (partition path, file name)
BoolArray = npt.NDArray[np.bool_]


class TextIndex:
    name: ClassVar[str] = "text_index"
    index: ClassVar[str | None] = "text"

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
        definitions = [d for d in context.table.definitions if d.index_type == IndexType.TEXT]
        if not definitions:
            return Skipped("no text index")
        wanted = _distinct(leaves(context.text.condition))
        notes = list(context.text.notes)
        if not wanted:
            return Skipped("; ".join(notes) or "no text predicate")
        by_index = {d.name: "index is still building" for d in definitions if d.state != IndexState.READY}
        notes += [f"index {name} is still building" for name in by_index]
        ready = [d for d in definitions if d.state == IndexState.READY]
        subjects = {d.name: subject_of(d, context.schema) for d in ready}
        served = set(subjects.values())
        notes += [
            f"{_name(leaf)}: no ready text index on {leaf.subject.sql()}"
            for leaf in wanted
            if leaf.subject not in served
        ]
        probes: list[_IndexProbe] = []
        for definition in ready:
            mine = [leaf for leaf in wanted if leaf.subject == subjects[definition.name]]
            if mine:
                unused: list[str] = []
                probe = _lookup(context, definition, mine, in_play, unused)
                notes.extend(f"{definition.name}: {why}" for why in unused)
                if unused:
                    by_index[definition.name] = "; ".join(unused)
                if probe is not None:
                    probes.append(probe)
        if not probes:
            return Skipped(
                "; ".join(notes) or "no text predicate on a column with a ready text index", by_index
            )
        return Verdict(
            _Probing(context, context.text.condition, tuple(probes)), skipped=tuple(notes), by_index=by_index
        )


def _lookup(
    context: StepContext,
    definition: IndexDefinition,
    mine: list[TextMatch],
    in_play: InPlay,
    notes: list[str],
) -> _IndexProbe | None:
    """The terms each leaf of `mine` requires of the index of `definition`, and its filters of the
    partitions in play (None: no leaf requires a term of it). `notes` gets why parts of leaves
    require nothing of it."""
    tokenizer = tokenizer_of(definition)
    required: dict[TextMatch, bloom.U64Array] = {}
    parts_found: list[list[_Part]] = []
    for leaf in mine:
        parts = _parts(tokenizer, leaf)
        terms = _leaf_terms(parts)
        if terms.size:
            required[leaf] = terms
            parts_found.append(parts)
        notes.extend(_unused(tokenizer, leaf, parts, terms.size))
    if not required:
        return None
    terms = np.unique(np.concatenate(list(required.values())))
    rows = context.rows_for(definition, in_play)
    keys = zip(rows["partition"].to_pylist(), rows["file_name"].to_pylist(), strict=True)
    filters = dict(zip(keys, rows["filter"].to_pylist(), strict=True))
    columns = {leaf: np.searchsorted(terms, leaf_terms) for leaf, leaf_terms in required.items()}
    looked_up = f"{len(terms)} {tokenizer.describe()} of {shorten(', '.join(_looked_up(parts_found)))}"
    return _IndexProbe(definition.name, looked_up, terms, columns, filters, np.ones(len(terms), np.bool_))


@dataclass
class _IndexProbe:
    """One index's part of the step: the terms looked up (sorted), the columns of them each leaf
    requires, the filters read, and what the probes have seen (`in_every`: the terms every file
    probed so far may hold; `probed`: files probed)."""

    index: str
    looked_up: str
    terms: bloom.U64Array
    columns: dict[TextMatch, npt.NDArray[np.intp]]
    filters: dict[FileKey, bytes | None]
    in_every: BoolArray
    probed: int = 0

    def answers(
        self, files: list[DataFile], check_deadline: Callable[[], None]
    ) -> dict[TextMatch, BoolArray]:
        """For each leaf, whether each file of `files` may hold all its terms: a file without a
        usable filter in the index may."""
        held = np.ones((len(files), len(self.terms)), dtype=np.bool_)
        found = [self.filters.get((f.partition, f.file_name)) for f in files]
        usable = [(i, data) for i, data in enumerate(found) if _valid_filter(data)]
        valid = [i for i, _ in usable]
        for start in range(0, len(usable), FILES_PER_SLICE):
            if start:
                check_deadline()
            part = usable[start : start + FILES_PER_SLICE]
            held[[i for i, _ in part]] = bloom.might_contain_each([data for _, data in part], self.terms)
        if valid:
            self.in_every &= held[valid].all(axis=0)
            self.probed += len(valid)
        return {leaf: np.all(held[:, column], axis=1) for leaf, column in self.columns.items()}

    def note(self) -> str:
        stop = int(self.in_every.sum()) if self.probed else 0
        return f"{self.index}: {self.looked_up} looked up in {self.probed} files" + (
            f"; {stop} of them in every file (stop-grams)" if stop else ""
        )


@dataclass(frozen=True)
class _Probing:
    """The step's filter: each batch's files are probed in every index, and the condition
    evaluated per file over the leaves' answers (leaves no index answers hold)."""

    context: StepContext
    condition: TextCondition
    probes: tuple[_IndexProbe, ...]

    ruled_out: dict[str, int] = field(default_factory=dict)  # files each index ruled out first

    def keep(self, files: list[DataFile]) -> list[DataFile]:
        holds: dict[TextMatch, BoolArray] = {}
        kept = np.ones(len(files), dtype=np.bool_)
        for probe in self.probes:
            for leaf, answered in probe.answers(files, self.context.check_deadline).items():
                holds[leaf] = holds[leaf] & answered if leaf in holds else answered
            # Each index in turn: the files the condition fails for once its answers are in. Leaves
            # only lose files as answers come in, so the last evaluation is the verdict.
            now = _evaluate(self.condition, holds, len(files))
            self.ruled_out[probe.index] = self.ruled_out.get(probe.index, 0) + int((kept & ~now).sum())
            kept = now
        return [f for f, k in zip(files, kept, strict=True) if k]

    def unchecked(self) -> tuple[str, ...]:
        return ()

    def notes(self) -> tuple[str, ...]:
        return tuple(probe.note() for probe in self.probes)

    def removed(self) -> Mapping[str, int]:
        return self.ruled_out


def _evaluate(condition: TextCondition, holds: dict[TextMatch, BoolArray], count: int) -> BoolArray:
    """For each file, whether `condition` may hold (leaves without answers hold)."""
    if isinstance(condition, TextMatch):
        return holds.get(condition, np.ones(count, dtype=np.bool_))
    if isinstance(condition, TextAll):
        result = np.ones(count, dtype=np.bool_)
        for part in condition.parts:
            result &= _evaluate(part, holds, count)
        return result
    if isinstance(condition, TextAny):
        result = np.zeros(count, dtype=np.bool_)
        for part in condition.parts:
            result |= _evaluate(part, holds, count)
        return result
    assert condition is TEXT_TRUE
    return np.ones(count, dtype=np.bool_)


@dataclass(frozen=True)
class _Part:
    """A fragment or word of a leaf, with its terms in one index: tokenised once per index."""

    text: str
    is_fragment: bool
    terms: bloom.U64Array


def _parts(tokenizer: Tokenizer, leaf: TextMatch) -> list[_Part]:
    return [_Part(f.text, True, tokenizer.fragment_terms(f)) for f in leaf.fragments] + [
        _Part(w, False, tokenizer.word_terms(w)) for w in leaf.words
    ]


def _leaf_terms(parts: list[_Part]) -> bloom.U64Array:
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    return np.unique(np.concatenate([p.terms for p in parts]))


def _unused(tokenizer: Tokenizer, leaf: TextMatch, parts: list[_Part], terms: int) -> list[str]:
    """Why parts of `leaf` require nothing of the index (for the notes)."""
    notes = []
    if tokenizer.name is TokenizerName.NGRAM:
        short = [f.text for f in leaf.fragments if len(f.text) < tokenizer.n]
        if short:
            listed = ", ".join(echo(text, 40) for text in short)
            notes.append(f"{_name(leaf)}: fragments shorter than {tokenizer.n} require nothing: {listed}")
        if leaf.words:
            notes.append(f"{_name(leaf)}: words are answered by a words index, not {tokenizer.describe()}")
    else:
        wordless = [p.text for p in parts if p.is_fragment and not p.terms.size]
        if wordless:
            listed = ", ".join(echo(text, 40) for text in wordless)
            notes.append(f"{_name(leaf)}: fragments holding no whole word require nothing: {listed}")
    if not terms:
        notes.append(f"{_name(leaf)}: no term to look up in this index")
    return notes


def _looked_up(parts_found: list[list[_Part]]) -> list[str]:
    """The fragments, then the words, whose terms were looked up, quoted."""
    found = [p.text for parts in parts_found for p in parts if p.is_fragment and p.terms.size]
    found += [p.text for parts in parts_found for p in parts if not p.is_fragment and p.terms.size]
    return [echo(text, 40) for text in dict.fromkeys(found)]


def _name(leaf: TextMatch) -> str:
    return shorten(leaf.source or f"text of {leaf.subject.sql()}", 80)


def _distinct(found: Iterable[TextMatch]) -> list[TextMatch]:
    return list(dict.fromkeys(found))


def _valid_filter(data: bytes | None) -> TypeGuard[bytes]:
    """A filter with a malformed size is unusable: its file holds every term (kept)."""
    if data is None:
        return False
    if len(data) < bloom.BLOCK_BYTES or len(data) % bloom.BLOCK_BYTES or len(data) > bloom.MAX_BYTES:
        log.warning("ignoring a malformed text index filter of %d bytes", len(data))
        return False
    return True
