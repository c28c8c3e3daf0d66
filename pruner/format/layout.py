"""Where things live inside a table directory, and how data and index file names are formed and
parsed. Every name carries the instant that wrote it, which is what lets readers ignore files of
incomplete instants and lets rollback find them.

```
<base>/<partition path>/<file_group>_<write_token>_<instant>.parquet
<base>/.lakeprune/table.json | lock.json | lock_takeovers/<digest> | timeline/<instant>.<action>.<state>
<base>/.lakeprune/metadata/<index partition>/b<bucket>.<base|log>.<instant>.parquet
```"""

from __future__ import annotations

import re
from dataclasses import dataclass

META_DIR = ".lakeprune"
TABLE_JSON = f"{META_DIR}/table.json"
LOCK_FILE = f"{META_DIR}/lock.json"
LOCK_TAKEOVER_DIR = f"{META_DIR}/lock_takeovers"  # one marker per dead lock taken over (builder.lock)
TIMELINE_DIR = f"{META_DIR}/timeline"
METADATA_DIR = f"{META_DIR}/metadata"
# Where Spark's own Parquet writer puts a table's first insert (`builder.write.bulk`) before its
# files are moved to their partitions under lakeprune's names: one directory per instant.
STAGING_DIR = f"{META_DIR}/staging"

# ASCII digits only (`\d` also matches other scripts' digits); matched whole (`fullmatch`).
_DATA_FILE_RE = re.compile(r"([0-9a-f]{32})_([0-9a-z-]+)_([0-9]{17})\.parquet")
_INDEX_FILE_RE = re.compile(r"b([0-9]{5})\.(base|log)\.([0-9]{17})\.parquet")


@dataclass(frozen=True)
class DataFileName:
    file_group: str
    write_token: str
    instant: str

    def __str__(self) -> str:
        return f"{self.file_group}_{self.write_token}_{self.instant}.parquet"

    @classmethod
    def parse(cls, name: str) -> DataFileName | None:
        match = _DATA_FILE_RE.fullmatch(name)
        return cls(*match.groups()) if match else None


def data_file_path(partition: str, name: DataFileName) -> str:
    """Relative path of a data file; the unpartitioned table keeps files at the top level."""
    return f"{partition}/{name}" if partition else str(name)


def staging_dir(instant: str) -> str:
    return f"{STAGING_DIR}/{instant}"


def metadata_partition_dir(partition_name: str) -> str:
    return f"{METADATA_DIR}/{partition_name}"


@dataclass(frozen=True, order=True)
class IndexFileName:
    bucket: int
    kind: str  # "base" or "log"
    instant: str

    def __str__(self) -> str:
        return f"b{self.bucket:05d}.{self.kind}.{self.instant}.parquet"

    @classmethod
    def parse(cls, name: str) -> IndexFileName | None:
        match = _INDEX_FILE_RE.fullmatch(name)
        return cls(int(match.group(1)), match.group(2), match.group(3)) if match else None


def written_by(name: str) -> str | None:
    """The instant that wrote a data or index file, from its name (None: not a lakeprune file)."""
    data = DataFileName.parse(name)
    if data is not None:
        return data.instant
    index = IndexFileName.parse(name)
    return index.instant if index is not None else None
