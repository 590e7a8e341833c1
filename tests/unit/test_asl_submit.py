"""``kinesis-dstream submit``'s reading of its command line (as spark-submit reads its
own), its check for the JVM kinesis-asl, and the spark-submit command it builds."""

from __future__ import annotations

import os
import sys

import pytest

import kinesis_dstream
from kinesis_dstream.asl.standin import SHIM_DIR
from kinesis_dstream.asl.submit import (
    SubmitArguments,
    asl_jar_named,
    parse_submit_arguments,
    submit_command,
)
from kinesis_dstream.errors import StandInError

ASL_PACKAGE = "org.apache.spark:spark-streaming-kinesis-asl_2.12:3.3.0"


@pytest.fixture
def spark_home(tmp_path):
    """A Spark folder with a spark-submit, no conf, no kinesis-asl jar."""
    home = tmp_path / "spark"
    (home / "bin").mkdir(parents=True)
    (home / "jars").mkdir()
    (home / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    return home


def env_of(spark_home, **more):
    return {"SPARK_HOME": str(spark_home), "PATH": "/usr/bin", **more}


def test_options_before_the_script_are_spark_submit_s_and_everything_after_is_the_script_s():
    options = ["--master", "local[2]", "--conf", "spark.ui.enabled=false", "--verbose"]
    options += ["--py-files=deps.zip", "--driver-memory", "2g"]
    script_args = ["--master", "my-app", "--ignore-asl-jar", "--", ""]
    parsed = parse_submit_arguments([*options, "--ignore-asl-jar", "main.py", *script_args])
    assert parsed.options == tuple(options)
    assert parsed.script == "main.py"
    assert parsed.script_args == tuple(script_args)
    assert parsed.ignore_asl_jar and not parsed.debug and not parsed.help


def test_a_value_that_looks_like_a_script_stays_the_option_s():
    parsed = parse_submit_arguments(["--name", "job.py", "-c", "k=v", "--files", "a.py", "run.py"])
    assert parsed.script == "run.py"
    assert parsed.options == ("--name", "job.py", "-c", "k=v", "--files", "a.py")


@pytest.mark.parametrize(
    "argv, help_",
    [
        (["--help"], True),
        (["-h", "x.py"], True),
        (["x.py", "--help"], False),
        (["--version"], False),
    ],
)
def test_help_before_the_script_is_the_runner_s(argv, help_):
    assert parse_submit_arguments(argv).help is help_


@pytest.mark.parametrize(
    "argv, where",
    [
        (["--packages", ASL_PACKAGE], f"--packages {ASL_PACKAGE}"),
        # only the kinesis-asl entry is named, not the rest of the list
        ([f"--packages=other:x:1,{ASL_PACKAGE}"], f"--packages {ASL_PACKAGE}"),
        (["--jars", "/opt/spark-streaming-kinesis-asl-assembly_2.12-3.3.0.jar"], "--jars /opt/"),
        (["--driver-class-path", "/opt/spark-streaming-kinesis-asl.jar"], "--driver-class-path"),
        (["--conf", f"spark.jars.packages={ASL_PACKAGE}"], "--conf spark.jars.packages="),
        (["-c", "spark.jars=/x/Spark-Streaming-Kinesis-ASL.jar"], "-c spark.jars="),
    ],
)
def test_the_kinesis_asl_jar_named_on_the_command_line_is_found(spark_home, argv, where):
    found = asl_jar_named(parse_submit_arguments([*argv, "job.py"]), env_of(spark_home))
    assert found is not None and found.startswith(where)


def test_other_jars_and_settings_are_not_the_kinesis_asl(spark_home):
    argv = [
        "--packages",
        "org.apache.spark:spark-avro_2.13:4.0.0",
        "--conf",
        "spark.app.name=kinesis-asl",
    ]
    assert asl_jar_named(parse_submit_arguments([*argv, "job.py"]), env_of(spark_home)) is None
    # after the script it is the script's argument, not the job's jar
    after = parse_submit_arguments(["job.py", "--packages", ASL_PACKAGE])
    assert asl_jar_named(after, env_of(spark_home)) is None


def test_properties_files_and_spark_s_jars_folder_are_read_as_spark_submit_reads_them(
    spark_home, tmp_path
):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(
        f"spark.master local[2]\nspark.jars.packages {ASL_PACKAGE}\n"
    )
    env = env_of(spark_home, SPARK_CONF_DIR=str(conf))
    found = asl_jar_named(parse_submit_arguments(["job.py"]), env)
    assert found == f"spark.jars.packages in {conf / 'spark-defaults.conf'}={ASL_PACKAGE}"
    # --properties-file replaces spark-defaults.conf, unless --load-spark-defaults (Spark 4)
    own = tmp_path / "job.properties"
    own.write_text("spark.executor.memory=2g\n")
    replaced = parse_submit_arguments(["--properties-file", str(own), "job.py"])
    assert asl_jar_named(replaced, env) is None
    both = parse_submit_arguments(["--properties-file", str(own), "--load-spark-defaults", "j.py"])
    assert asl_jar_named(both, env) is not None
    own.write_text("spark.driver.extraClassPath=/opt/kinesis-asl.jar\n")
    assert (
        asl_jar_named(replaced, env) == f"spark.driver.extraClassPath in {own}=/opt/kinesis-asl.jar"
    )
    # a jar dropped into Spark's own jars/
    jar = spark_home / "jars" / "spark-streaming-kinesis-asl_2.12-3.3.0.jar"
    jar.write_bytes(b"")
    assert asl_jar_named(parse_submit_arguments(["j.py"]), env_of(spark_home)) == str(jar)


def test_a_jar_url_is_named_without_its_credentials_or_the_rest_of_the_value(spark_home):
    # repository URLs carry a user and password, presigned ones a token in their query:
    # the refusal and the first line (printed on every run with --ignore-asl-jar) name the
    # jar by host and file only
    jar = "https://deploy:S3cr3tT0ken@nexus.example.com/repo/spark-streaming-kinesis-asl_2.12-3.5.0.jar"
    signed = "https://b.s3.amazonaws.com/kinesis-asl.jar?X-Amz-Signature=abc123secret"
    for value in (f"/opt/other.jar,{jar}", signed):
        argv = ["--conf", f"spark.jars={value}", "--conf", "spark.hadoop.key=hush", "j.py"]
        with pytest.raises(StandInError) as e:
            submit_command(parse_submit_arguments(argv), env_of(spark_home))
        line, _, _ = submit_command(
            parse_submit_arguments(["--ignore-asl-jar", *argv]), env_of(spark_home)
        )
        for text in (str(e.value), line):
            assert "S3cr3tT0ken" not in text and "abc123secret" not in text
            assert "deploy" not in text and "hush" not in text and "/opt/other.jar" not in text
        host = "nexus.example.com" if value != signed else "b.s3.amazonaws.com"
        assert f"--conf spark.jars=https://{host}/.../" in str(e.value)


def test_the_jar_is_refused_in_one_line_unless_ignore_asl_jar(spark_home):
    argv = ["--packages", ASL_PACKAGE, "job.py", "a"]
    with pytest.raises(StandInError) as e:
        submit_command(parse_submit_arguments(argv), env_of(spark_home))
    text = str(e.value)
    assert "\n" not in text
    assert f"this job names the JVM kinesis-asl (--packages {ASL_PACKAGE})" in text
    assert "drop it to run on kinesis_dstream, or add --ignore-asl-jar" in text
    line, command, _ = submit_command(
        parse_submit_arguments(["--ignore-asl-jar", *argv]), env_of(spark_home)
    )
    assert command[1:] == [*argv]  # the jar stays, unused
    assert line.endswith(
        f"; --packages {ASL_PACKAGE} stays on the classpath, unused (--ignore-asl-jar)"
    )


def test_the_command_is_spark_submit_s_with_the_stand_in_first_on_pythonpath(spark_home):
    argv = ["--master", "local[2]", "--py-files", "deps.zip", "job.py", "app", "--x=1"]
    environ = env_of(spark_home, PYTHONPATH="/mine:/other")
    line, command, env = submit_command(parse_submit_arguments(argv), environ)
    assert command == [str(spark_home / "bin" / "spark-submit"), *argv]
    assert env["PYTHONPATH"] == os.pathsep.join([SHIM_DIR, "/mine", "/other"])
    assert env["PYSPARK_PYTHON"] == sys.executable
    assert environ["PYTHONPATH"] == "/mine:/other"  # the runner's own is left alone
    folder = os.path.dirname(kinesis_dstream.__file__)
    assert line == (
        f"kinesis-dstream submit: pyspark.streaming.kinesis is kinesis_dstream "
        f"{kinesis_dstream.__version__} ({folder}), not PySpark's (the JVM kinesis-asl); "
        f"spark-submit: {spark_home / 'bin' / 'spark-submit'}"
    )
    _, _, chosen = submit_command(
        parse_submit_arguments(argv), env_of(spark_home, PYSPARK_PYTHON="/opt/py")
    )
    assert chosen["PYSPARK_PYTHON"] == "/opt/py" and chosen["PYTHONPATH"] == SHIM_DIR


def test_only_options_go_to_spark_submit_as_they_are(spark_home):
    _, command, _ = submit_command(parse_submit_arguments(["--version"]), env_of(spark_home))
    assert command[1:] == ["--version"]
    assert parse_submit_arguments([]) == SubmitArguments()


def test_no_spark_submit_is_one_line_naming_where_it_looked(tmp_path):
    with pytest.raises(StandInError) as e:
        submit_command(parse_submit_arguments(["job.py"]), {"SPARK_HOME": str(tmp_path)})
    assert "\n" not in str(e.value)
    assert f"no spark-submit ({tmp_path / 'bin' / 'spark-submit'} is missing)" in str(e.value)
