"""Object storage in lakeprune's Spark jobs. Two readers touch a table on S3 there: Spark itself
(`spark.read.parquet` of a `write --input` on S3, `LakepruneTable.read()` of an S3 table), through
Hadoop's S3A file system, and the Python tasks that write data files and index logs, through
`pyarrow.fs` like the rest of lakeprune. Both take their settings from the AWS SDKs' standard
variables of the process that runs the job, as every other lakeprune component does:
`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (a custom endpoint, then addressed path-style),
`AWS_REGION` or `AWS_DEFAULT_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
`AWS_SESSION_TOKEN`. They are mapped onto `fs.s3a.*` keys of the session's Hadoop configuration
(which Spark ships to its executors with each job) and copied into the environment of the Python
tasks (`SparkContext.environment`, shipped with each task; with `STORAGE_EMULATOR_HOST`, which
sends `gs://` URIs to a Cloud Storage emulator) whenever a job starts
(`builder.session.job_session`): a job sees the variables as they are when it starts, on a
cluster as on `local[*]`. An `fs.s3a.*` key the user set in the Spark configuration
(`spark.hadoop.fs.s3a.*`) is left as the user set it.
`s3://` paths are served by S3A too (`fs.s3.impl`), as on EMR. The S3A jars (`hadoop-aws` of
Spark's Hadoop version and the AWS SDK bundle it was built with, ~690 MB) come from Maven Central
into the launcher's cache once and go on the classpath of embedded sessions; a session made
elsewhere (`spark-submit`, a notebook) brings its own S3A setup, and a Spark read of an S3 path in
a session without it stops with one line saying so (`require_hadoop_file_system`, which does the
same for other object stores' schemes) instead of Spark's stack trace.
Secrets never appear in logs: Spark's UI redacts `fs.s3a.*key*` settings, and the task environment
is not displayed."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from urllib.parse import urlparse

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from pruner.engines.cache import CacheLayout
from pruner.engines.errors import ArtifactFetchError
from pruner.engines.fetch import ensure_artifact
from pruner.engines.spec import MavenArtifact
from pruner.errors import SparkSetupError
from pruner.object_store import AWS_VARIABLES, s3_endpoint, s3_region
from pruner.storage import GCS_EMULATOR_VARIABLE

logger = logging.getLogger(__name__)

# hadoop-aws must match Spark's Hadoop (pyspark 4.3.0 ships hadoop-client 3.5.0); its POM names the
# AWS SDK v2 bundle and the analytics accelerator it was built with (hadoop-project 3.5.0).
S3A_ARTIFACTS = (
    MavenArtifact("org.apache.hadoop", "hadoop-aws", "3.5.0", "jar"),
    MavenArtifact("software.amazon.awssdk", "bundle", "2.35.4", "jar"),
    MavenArtifact("software.amazon.s3.analyticsaccelerator", "analyticsaccelerator-s3", "1.3.1", "jar"),
)
S3A_FILE_SYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
S3A_SCHEMES = frozenset({"s3", "s3a"})
# The variables the Python tasks get from the process that runs the job: the AWS SDKs' variables,
# and the Cloud Storage emulator's address (`gs://` URIs go there when it is set).
TASK_VARIABLES = (*AWS_VARIABLES, GCS_EMULATOR_VARIABLE)
# What to add for a scheme Spark has no file system for (`require_hadoop_file_system`).
_CONNECTORS = {
    "gs": "Google's Cloud Storage connector (com.google.cloud.bigdataoss:gcs-connector, hadoop3 shaded)",
    "abfs": "hadoop-azure of Spark's Hadoop version",
    "abfss": "hadoop-azure of Spark's Hadoop version",
}
_TEMPORARY_CREDENTIALS = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
# Every key `s3a_settings` may set: one the variables no longer call for is unset again.
_MAPPED_KEYS = (
    "fs.s3.impl",
    "fs.s3a.endpoint",
    "fs.s3a.path.style.access",
    "fs.s3a.endpoint.region",
    "fs.s3a.access.key",
    "fs.s3a.secret.key",
    "fs.s3a.session.token",
    "fs.s3a.aws.credentials.provider",
)


def s3a_classpath(layout: CacheLayout | None = None) -> str | None:
    """The S3A jars as a class path, downloaded into the cache first if missing; None (and a
    warning saying what is unavailable) when they cannot be fetched."""
    layout = layout or CacheLayout.default()
    try:
        return os.pathsep.join(str(ensure_artifact(layout, artifact)) for artifact in S3A_ARTIFACTS)
    except ArtifactFetchError as exc:
        logger.warning("Spark cannot read s3:// paths in this session: %s", exc)
        return None


def s3a_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The `fs.s3a.*` (and `fs.s3.impl`) settings the AWS variables in `environ` call for."""
    settings = {"fs.s3.impl": S3A_FILE_SYSTEM}
    endpoint = s3_endpoint(environ)
    if endpoint:
        settings["fs.s3a.endpoint"] = endpoint
        settings["fs.s3a.path.style.access"] = "true"
    region = s3_region(environ)
    if region:
        settings["fs.s3a.endpoint.region"] = region
    access_key, secret_key = environ.get("AWS_ACCESS_KEY_ID"), environ.get("AWS_SECRET_ACCESS_KEY")
    if access_key and secret_key:
        settings["fs.s3a.access.key"] = access_key
        settings["fs.s3a.secret.key"] = secret_key
        token = environ.get("AWS_SESSION_TOKEN")
        if token:
            settings["fs.s3a.session.token"] = token
            settings["fs.s3a.aws.credentials.provider"] = _TEMPORARY_CREDENTIALS
    return settings


def apply_object_store_settings(spark: SparkSession, environ: Mapping[str, str] | None = None) -> None:
    """Bring the session's Hadoop configuration and its Python tasks' environment in line with the
    AWS variables (and `STORAGE_EMULATOR_HOST`) of `environ` (default: this process's environment)."""
    environ = os.environ if environ is None else environ
    context = spark.sparkContext
    user_set = {key.removeprefix("spark.hadoop.") for key, _ in context.getConf().getAll()}
    hadoop = context._jsc.hadoopConfiguration()
    wanted = s3a_settings(environ)
    for key in _MAPPED_KEYS:
        if key in user_set:
            continue
        if key in wanted:
            hadoop.set(key, wanted[key])
        else:
            hadoop.unset(key)
    for name in TASK_VARIABLES:
        value = environ.get(name)
        if value:
            context.environment[name] = value
        else:
            context.environment.pop(name, None)


def require_hadoop_file_system(spark: SparkSession, uri: str) -> None:
    """Stop with a `SparkSetupError` when Spark is to read `uri` and the session's JVM has no Hadoop
    file system for its scheme: S3A for `s3://` (a `spark-submit` without the jars, a notebook's own
    session), or none at all for another object store (`gs://` without Google's connector, say)."""
    scheme = urlparse(uri).scheme
    if scheme in ("", "file"):
        return
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a classic (not Spark Connect) session
    if scheme in S3A_SCHEMES:
        if jvm.org.apache.spark.util.Utils.classIsLoadable(S3A_FILE_SYSTEM):
            return
        raise SparkSetupError(
            f"this Spark session cannot read {uri}: Hadoop's S3A file system ({S3A_FILE_SYSTEM}) is "
            'not on its class path; give spark-submit --jars "$(lakeprune spark-job --jars)" (hadoop-aws '
            "and the AWS SDK bundle), or add them to the session's spark.jars"
        )
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, hadoop)
    except Py4JJavaError:
        connector = _CONNECTORS.get(scheme, "the Hadoop file system for it")
        raise SparkSetupError(
            f"this Spark session cannot read {uri}: no Hadoop file system for {scheme}:// is on its "
            f"class path; add {connector} to the session's spark.jars (lakeprune's own jobs read and "
            f"write {scheme}:// tables without it, through pyarrow)"
        ) from None
