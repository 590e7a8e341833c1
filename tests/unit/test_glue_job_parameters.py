"""Glue's special job parameters read from a job's arguments as Glue reads them, the
PYSPARK_SUBMIT_ARGS they become, and --additional-python-modules' entries (no Spark)."""

import shlex
import sys

import pytest

from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.job.parameters import (
    SPECIAL_PARAMETERS,
    Handling,
    glue_studio_module,
    parse_conf,
    parse_job_parameters,
)
from kinesis_dstream.glue.job.python_modules import ModuleRequest, check_modules, parse_requirement
from kinesis_dstream.glue.job.startup import applied_job_parameters, submit_args


def test_glue_s_parameters_are_read_among_the_script_s_own():
    params = parse_job_parameters(
        [
            "--JOB_NAME", "j",
            "--extra-py-files", "s3://b/lib.zip, s3://b/one.py",
            "--additional-python-modules", "pyarrow==14.0.1,requests>=2",
            "--python-modules-installer-option", "--upgrade",
            "--extra-files=s3://b/settings.json",
            "--extra-jars", "s3://b/a.jar",
            "--user-jars-first", "true",
            "--enable-spark-ui", "true",
            "--spark-event-logs-path", "s3://b/events/",
            "--my_arg", "x",
        ]
    )  # fmt: skip
    assert params.extra_py_files == ("s3://b/lib.zip", "s3://b/one.py")
    assert params.additional_python_modules == ("pyarrow==14.0.1", "requests>=2")
    assert params.installer_options == ("--upgrade",)  # a value that starts with --
    assert params.extra_files == ("s3://b/settings.json",)
    assert params.extra_jars == ("s3://b/a.jar",)
    assert params.user_jars_first and params.enable_spark_ui
    assert params.spark_event_logs_path == "s3://b/events/"
    assert params.no_effect == ()


def test_conf_takes_repeated_settings_and_glue_s_several_in_one_value():
    params = parse_job_parameters(
        [
            "--conf", "spark.sql.extensions=x.Ext --conf spark.sql.catalog.c=y.Cat",
            "--conf", "spark.sql.shuffle.partitions=3",
            "--conf", "spark.executor.extraJavaOptions=-Da=1 -Db=2",
        ]
    )  # fmt: skip
    assert params.conf == (
        ("spark.sql.extensions", "x.Ext"),
        ("spark.sql.catalog.c", "y.Cat"),
        ("spark.sql.shuffle.partitions", "3"),
        ("spark.executor.extraJavaOptions", "-Da=1 -Db=2"),
    )
    assert parse_conf("--conf a=1 --conf b==2") == [("a", "1"), ("b", "=2")]
    with pytest.raises(GlueError, match=r"--conf .spark.sql.shuffle.partitions.\.\.\. .*key=value"):
        parse_job_parameters(["--conf", "spark.sql.shuffle.partitions"])
    # a setting mistyped with a space instead of '=' is named by its key alone (review)
    with pytest.raises(GlueError) as refused:
        parse_conf("spark.hadoop.fs.s3a.secret.key s3cr3t")
    assert "spark.hadoop.fs.s3a.secret.key" in str(refused.value)
    assert "s3cr3t" not in str(refused.value)


def test_service_only_parameters_are_accepted_and_named_once_with_their_reason():
    params = parse_job_parameters(
        [
            "--enable-metrics",
            "--enable-metrics", "true",
            "--enable-continuous-cloudwatch-log", "true",
            "--datalake-formats", "iceberg",
            "--job-bookmark-option", "job-bookmark-enable",
            "--JOB_NAME", "j",
        ]
    )  # fmt: skip
    names = [name for name, _ in params.no_effect]
    assert names == [
        "--enable-metrics",
        "--enable-continuous-cloudwatch-log",
        "--datalake-formats",
        "--job-bookmark-option job-bookmark-enable",
    ]
    assert all(reason for _, reason in params.no_effect)
    assert "checkpointLocation" in dict(params.no_effect)[names[-1]]
    assert params.job_bookmark_option == "job-bookmark-enable"
    assert parse_job_parameters(["--job-bookmark-option", "job-bookmark-disable"]).no_effect == ()
    service = [n for n, p in SPECIAL_PARAMETERS.items() if p.handling is Handling.SERVICE_ONLY]
    assert {"enable-auto-scaling", "enable-job-insights", "enable-glue-datacatalog"} <= set(service)


def test_a_parameter_without_its_value_is_one_line():
    with pytest.raises(GlueError, match="--extra-py-files has no value"):
        parse_job_parameters(["--JOB_NAME", "j", "--extra-py-files"])
    assert parse_job_parameters(["--TempDir"]).no_effect == ()  # the script's to refuse


def test_glue_studio_transform_paths_are_told_from_other_s3_paths():
    bucket = "s3://aws-glue-studio-transforms-510798373988-prod-us-east-1"
    assert glue_studio_module(f"{bucket}/gs_common.py") == "gs_common"
    assert glue_studio_module(f"{bucket}/gs_null_rows.py") == "gs_null_rows"
    assert glue_studio_module("s3://aws-glue-studio-transforms-x-prod-us-east-1/gs_a.py") is None
    assert glue_studio_module("s3://my-bucket/gs_common.py") is None
    assert glue_studio_module(f"{bucket}/helpers.py") is None


def test_submit_args_merge_with_the_user_s_and_keep_pyspark_shell_last():
    args = submit_args(
        "--master local[*] --py-files /a.py --conf spark.x=1 pyspark-shell",
        {"--py-files": ["/job/b.zip"], "--files": ["/job/s.json"], "--jars": []},
        [("spark.sql.shuffle.partitions", "3"), ("spark.y", "a b")],
    )
    assert shlex.split(args) == [
        "--master", "local[*]",
        "--conf", "spark.x=1",
        "--py-files", "/a.py,/job/b.zip",
        "--files", "/job/s.json",
        "--conf", "spark.sql.shuffle.partitions=3",
        "--conf", "spark.y=a b",
        "pyspark-shell",
    ]  # fmt: skip
    assert submit_args(None, {}, [("k", "v")]) == "--conf k=v pyspark-shell"


def test_module_entries_as_glue_takes_them():
    assert parse_requirement("pyarrow==14.0.1") == ModuleRequest("pyarrow", "==14.0.1")
    assert parse_requirement(" requests>=2,<3 ") == ModuleRequest("requests", ">=2,<3")
    assert parse_requirement("moto[s3]") == ModuleRequest("moto", "", "[s3]")
    with pytest.raises(GlueError, match="'pyarrow 14': give name"):
        parse_requirement("pyarrow 14")


def test_missing_modules_are_named_with_the_pip_command_that_installs_them():
    assert check_modules([ModuleRequest("boto3", ">=1"), ModuleRequest("pytest")], []) == []
    with pytest.raises(GlueError) as failed:
        check_modules(
            [ModuleRequest("boto3", "==0.0.1"), ModuleRequest("no-such-module-kd", "==1.0")],
            ["--upgrade"],
        )
    message = str(failed.value)
    assert "\n" not in message
    assert "boto3==0.0.1 (" in message and "installed)" in message
    assert "no-such-module-kd==1.0 (not installed)" in message
    assert f"{sys.executable} -m pip install --upgrade boto3==0.0.1 no-such-module-kd==1.0" in (
        message
    )
    assert "--install-modules" in message


def test_jars_user_jars_first_and_a_local_event_log_reach_spark_submit(tmp_path):
    jar = tmp_path / "udfs.jar"
    jar.write_bytes(b"PK\x05\x06" + bytes(18))
    events = tmp_path / "events"
    env = {"PYSPARK_SUBMIT_ARGS": "--master local[2] pyspark-shell"}
    argv = ["--JOB_NAME", "j", "--extra-jars", str(jar), "--user-jars-first", "true"]
    argv += ["--enable-spark-ui", "true", "--spark-event-logs-path", str(events)]
    argv += ["--conf", "spark.eventLog.rolling.enabled=true"]
    with applied_job_parameters(argv, environ=env):
        assert shlex.split(env["PYSPARK_SUBMIT_ARGS"]) == [
            "--master", "local[2]",
            "--jars", str(jar),
            "--conf", "spark.driver.userClassPathFirst=true",
            "--conf", "spark.executor.userClassPathFirst=true",
            "--conf", "spark.eventLog.enabled=true",
            "--conf", f"spark.eventLog.dir={events}",
            "--conf", "spark.eventLog.rolling.enabled=true",
            "pyspark-shell",
        ]  # fmt: skip
    assert events.is_dir()  # Spark refuses an event log folder that does not exist


def test_extra_files_never_overwrite_a_different_file_in_the_working_directory(
    tmp_path, monkeypatch
):
    given = tmp_path / "given"
    given.mkdir()
    (given / "settings.json").write_text('{"word": "job"}')
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = ["--extra-files", str(given / "settings.json")]
    with applied_job_parameters(argv, environ={}):
        assert (work / "settings.json").read_text() == '{"word": "job"}'
    assert not (work / "settings.json").exists()  # the run's copy is removed
    (work / "settings.json").write_text('{"word": "mine"}')
    refused = "a different file of that name is in the working"
    with pytest.raises(GlueError, match=refused), applied_job_parameters(argv, environ={}):
        pass
    assert (work / "settings.json").read_text() == '{"word": "mine"}'


def test_the_pip_command_shown_hides_an_index_password():
    options = ["--extra-index-url", "https://me:s3cret@pypi.example.com/simple"]
    with pytest.raises(GlueError) as failed:
        check_modules([ModuleRequest("no-such-module-kd")], options)
    assert "s3cret" not in str(failed.value)
    assert "--extra-index-url https://***@pypi.example.com/simple" in str(failed.value)
