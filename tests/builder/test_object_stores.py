"""builder.object_stores: the AWS variables mapped onto S3A settings and the Python tasks'
environment of a live session, following the variables as they change; the jars' coordinates
match the Hadoop that pyspark ships; a session without S3A says so in one line before Spark reads
an S3 path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession

from builder.object_stores import (
    S3A_ARTIFACTS,
    S3A_FILE_SYSTEM,
    apply_object_store_settings,
    require_hadoop_file_system,
    s3a_settings,
)
from pruner.errors import SparkSetupError
from pruner.object_store import AWS_VARIABLES
from pruner.storage import GCS_EMULATOR_VARIABLE

ENVIRONMENT = {
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
    "AWS_REGION": "eu-west-3",
    "AWS_ACCESS_KEY_ID": "key-id",
    "AWS_SECRET_ACCESS_KEY": "secret",
}


def test_a_custom_endpoint_is_addressed_path_style_with_the_given_keys() -> None:
    assert s3a_settings(ENVIRONMENT) == {
        "fs.s3.impl": S3A_FILE_SYSTEM,
        "fs.s3a.endpoint": "http://127.0.0.1:9000",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.endpoint.region": "eu-west-3",
        "fs.s3a.access.key": "key-id",
        "fs.s3a.secret.key": "secret",
    }


def test_the_s3_specific_endpoint_and_the_default_region_are_honoured() -> None:
    settings = s3a_settings(
        {"AWS_ENDPOINT_URL_S3": "http://s3:1", "AWS_ENDPOINT_URL": "http://x:2", "AWS_DEFAULT_REGION": "r"}
    )
    assert settings["fs.s3a.endpoint"] == "http://s3:1" and settings["fs.s3a.endpoint.region"] == "r"


def test_a_session_token_selects_temporary_credentials_and_half_a_key_pair_none() -> None:
    with_token = s3a_settings({**ENVIRONMENT, "AWS_SESSION_TOKEN": "token"})
    assert with_token["fs.s3a.session.token"] == "token"
    assert with_token["fs.s3a.aws.credentials.provider"].endswith("TemporaryAWSCredentialsProvider")
    assert s3a_settings({"AWS_ACCESS_KEY_ID": "key-id"}) == {"fs.s3.impl": S3A_FILE_SYSTEM}


def test_a_live_session_follows_the_variables(spark: SparkSession) -> None:
    context = spark.sparkContext
    hadoop = context._jsc.hadoopConfiguration()
    try:
        apply_object_store_settings(spark, ENVIRONMENT)
        assert hadoop.get("fs.s3a.endpoint") == "http://127.0.0.1:9000"
        assert hadoop.get("fs.s3a.secret.key") == "secret"
        assert {name: context.environment.get(name) for name in ENVIRONMENT} == ENVIRONMENT
        apply_object_store_settings(spark, {"AWS_REGION": "us-east-2"})
        assert hadoop.get("fs.s3a.endpoint") is None and hadoop.get("fs.s3a.secret.key") is None
        assert hadoop.get("fs.s3a.endpoint.region") == "us-east-2"
        assert [name for name in AWS_VARIABLES if name in context.environment] == ["AWS_REGION"]
    finally:
        apply_object_store_settings(spark)


def test_the_session_has_the_jars_of_pysparks_hadoop(spark: SparkSession) -> None:
    jars = Path(pyspark.__file__).parent / "jars"
    (client,) = jars.glob("hadoop-client-api-*.jar")
    assert S3A_ARTIFACTS[0].artifact == "hadoop-aws"
    assert client.name == f"hadoop-client-api-{S3A_ARTIFACTS[0].version}.jar"
    classpath = spark.sparkContext.getConf().get("spark.driver.extraClassPath") or ""
    assert all(f"{a.artifact}-{a.version}.jar" in classpath for a in S3A_ARTIFACTS)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    assert jvm.java.lang.Class.forName(S3A_FILE_SYSTEM).getName() == S3A_FILE_SYSTEM


def test_a_session_with_s3a_may_read_s3_and_any_session_other_paths(spark: SparkSession) -> None:
    for uri in ("s3://lake/trips", "s3a://lake/trips", "/data/trips", "file:///data/trips"):
        require_hadoop_file_system(spark, uri)


def test_a_session_without_a_connector_refuses_a_gs_read_in_one_line(spark: SparkSession) -> None:
    """The test session has no Cloud Storage connector: Spark cannot read `gs://`, and says so in
    one line naming what to add (lakeprune's own jobs do not need it)."""
    with pytest.raises(SparkSetupError) as raised:
        require_hadoop_file_system(spark, "gs://lake/trips")
    assert str(raised.value).startswith(
        "this Spark session cannot read gs://lake/trips: no Hadoop file system for gs:// is on its "
        "class path; add Google's Cloud Storage connector (com.google.cloud.bigdataoss:gcs-connector"
    )
    assert "\n" not in str(raised.value)


def test_the_python_tasks_get_the_cloud_storage_emulator(spark: SparkSession) -> None:
    context = spark.sparkContext
    try:
        apply_object_store_settings(spark, {GCS_EMULATOR_VARIABLE: "http://127.0.0.1:4443"})
        assert context.environment.get(GCS_EMULATOR_VARIABLE) == "http://127.0.0.1:4443"
        apply_object_store_settings(spark, {})
        assert GCS_EMULATOR_VARIABLE not in context.environment
    finally:
        apply_object_store_settings(spark)


# A session without the S3A jars needs a JVM of its own (the test session's has them).
WITHOUT_S3A = """
import sys
from pyspark.sql import SparkSession
from builder.object_stores import require_hadoop_file_system
from pruner.errors import SparkSetupError
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
try:
    require_hadoop_file_system(spark, "/data/trips")
    require_hadoop_file_system(spark, sys.argv[1])
except SparkSetupError as exc:
    print(exc)
finally:
    spark.stop()
"""


@pytest.mark.spark
def test_a_session_without_s3a_refuses_an_s3_read_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_S3A, "s3://lake/trips"],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    assert done.stdout.strip() == (
        "this Spark session cannot read s3://lake/trips: Hadoop's S3A file system "
        f"({S3A_FILE_SYSTEM}) is not on its class path; give spark-submit --jars "
        '"$(lakeprune spark-job --jars)" (hadoop-aws and the AWS SDK bundle), or add them to the '
        "session's spark.jars"
    )
