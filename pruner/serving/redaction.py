"""Keeping the server's paths out of what callers see. Requests name schemas and tables, never paths,
but the core library's messages name files ("no completed instant ... in table /srv/lake/events",
"cannot read index file s3://bucket/lake/...", "<path>/index_defs.json is corrupt"). A `Redactor`
knows every warehouse root in each form a message may spell it — as configured, as the storage URI,
as the filesystem path pyarrow uses, and (for local roots) resolved through symlinks — and replaces
it with the schema name, so `/srv/lake/events/x` reads `lake/events/x`. Both endpoints apply it at
their boundary: to every error message (through `errors.classify`), to the `skipped` / `fallback`
text of explain records and to the `why_not` text of the report per index. Split paths are not
redacted: engines read those files."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping

from pruner.planner.result import PruneResult

# A root's spelling counts only where it is a whole path: not preceded or followed by a character
# that would make it part of a longer name (`/srv/lake` must not match inside `/srv/lake2`).
_NAME_CHAR = r"[\w.\-]"
# Shorter spellings would match too much (a root of `/` is every absolute path).
_MIN_FORM_CHARS = 2


class Redactor:
    def __init__(self, warehouses: Mapping[str, str]) -> None:
        forms: dict[str, str] = {}
        for schema, root in warehouses.items():
            for form in _spellings(root):
                forms.setdefault(form, schema)
        self._schema_of = forms
        # Longest first, so that a root inside another root's path is not matched first.
        alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
        self._pattern = (
            re.compile(f"(?<!{_NAME_CHAR})(?:{alternatives})(?!{_NAME_CHAR})") if alternatives else None
        )

    def __call__(self, text: str) -> str:
        """`text` with every warehouse root replaced by its schema name."""
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: self._schema_of[m.group(0)], text)

    def prune_result(self, result: PruneResult) -> PruneResult:
        """`result` with its explain records' `skipped` and `fallback` text, and its index report's
        `why_not` text, redacted."""
        explain = [
            dataclasses.replace(
                step,
                skipped=None if step.skipped is None else self(step.skipped),
                fallback=None if step.fallback is None else self(step.fallback),
            )
            for step in result.explain
        ]
        report = tuple(
            entry if entry.why_not is None else dataclasses.replace(entry, why_not=self(entry.why_not))
            for entry in result.index_report
        )
        return dataclasses.replace(result, explain=explain, index_report=report)


def _spellings(root: str) -> set[str]:
    """The ways messages spell a warehouse root: as configured; for a local root its absolute and
    its resolved path, bare or as `file://` URIs; for another URI also the path pyarrow's
    filesystem uses, which is `bucket/key` on object stores, `/path` on HDFS and `container/path`
    on Azure. Worked out from the text alone, so that building a `Redactor` never touches storage."""
    text = root.rstrip("/")
    forms = {text}
    scheme, sep, rest = text.partition("://")
    if not sep or scheme == "file":
        local = os.path.abspath(os.path.expanduser(rest if sep else text))
        paths = {local, os.path.realpath(local)}
        forms |= paths | {f"file://{path}" for path in paths}
    else:
        authority, _, path = rest.partition("/")
        forms.add(rest)
        if path:
            forms.add(f"/{path}")
        container, at, _ = authority.partition("@")
        if at:
            forms.add(f"{container}/{path}".rstrip("/"))
    return {f for f in forms if len(f) >= _MIN_FORM_CHARS}
