"""User-facing error types. A `LakepruneError` carries a one-line message that the CLI prints
without a traceback; anything else escaping to the CLI is a bug. Subclasses name the category so
that callers (and later the gRPC / Thrift layers) can map them to status codes in one place."""

from __future__ import annotations


class LakepruneError(Exception):
    """An error caused by input or table state, explained in one line."""

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled as its class, `args` and attributes, and rebuilt without calling `__init__`, so
        that a subclass whose `__init__` takes other arguments than its message pickles too (a
        process pool sends a worker's exception to its parent so)."""
        return _rebuild, (type(self), self.args), self.__dict__


def _rebuild(cls: type[LakepruneError], args: tuple[object, ...]) -> LakepruneError:
    error = cls.__new__(cls)
    error.args = args
    return error


class TableNotFoundError(LakepruneError):
    """No lakeprune table at the given location."""


class TableExistsError(LakepruneError):
    """A table already exists where one was to be created."""


class TableCorruptError(LakepruneError):
    """Table metadata exists but cannot be read or fails validation."""


class TableDamagedError(TableCorruptError):
    """The table's timeline contradicts its files (a completion marker deleted, the timeline gone
    while data remains, an instant the `files` index names missing): no command reads it or
    deletes anything of it until it is repaired (`lakeprune table check`). Not transient, unlike
    other corruption, so callers are not told to retry."""


class IndexFileMissingError(TableCorruptError):
    """An index file that a completed instant wrote is not in storage any more."""


class InvalidSchemaError(LakepruneError):
    """A schema definition or a table definition is invalid."""


class InvalidNameError(InvalidSchemaError):
    """A table, column or index name breaks the naming rule (`pruner.identifiers`)."""


class SchemaMismatchError(LakepruneError):
    """Input data does not match the table's schema."""


class InvalidInputError(LakepruneError):
    """Input data violates a rule of the operation (null key, duplicate insert, ...)."""


class IndexUnusableError(InvalidInputError):
    """An index's definition cannot be used (e.g. stored under a name the naming rule refuses):
    readers fall back as for missing index data; writers stop and say how to fix it."""


class SnapshotNotFoundError(LakepruneError):
    """The requested snapshot is not a completed instant, or has been cleaned."""


class ConflictError(LakepruneError):
    """Another writer won a race this one lost: for the table's lock, or for an instant on its
    timeline. The loser has written nothing that readers see."""


class TableLockedError(ConflictError):
    """Another writer holds the table's lock."""


class PutIfAbsentUnsupportedError(LakepruneError):
    """The storage backend offers lakeprune no way to create a file only if it is absent, so the
    writer lock and commits cannot be made safe there."""


class InvalidLocationError(InvalidInputError):
    """A path or URI no file system serves (an unknown scheme, a malformed URI), or a location
    that refused a change (no directory can be made there, no permission, no room)."""


class StorageUnreachableError(LakepruneError, OSError):
    """A storage endpoint did not answer within lakeprune's bounded wait; the message names it.
    Also an `OSError`, so that readers treat it as any other failed storage request."""


class SparkSetupError(LakepruneError):
    """The Spark session a job runs in lacks something the job needs (say, Hadoop's S3A file
    system for `s3://` paths); the message names what to add."""
