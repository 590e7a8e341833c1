"""getResolvedOptions as Glue resolves a job's arguments, and the runner's own
arguments and Spark environment (no Spark started)."""

import pytest

from kinesis_dstream.glue.errors import GlueArgumentError, GlueError
from kinesis_dstream.glue.job.arguments import getResolvedOptions
from kinesis_dstream.glue.job.runner import (
    master_configured,
    prepare_spark_environment,
    split_arguments,
)

SCRIPT = "job.py"


def test_each_name_is_a_required_argument_and_temp_dir_is_optional():
    args = getResolvedOptions(
        [SCRIPT, "--JOB_NAME", "j", "--TempDir", "/tmp/t", "--other", "x"], ["JOB_NAME", "TempDir"]
    )
    assert args["JOB_NAME"] == "j"
    assert args["TempDir"] == args["RedshiftTempDir"] == "/tmp/t"
    assert args["job_bookmark_option"] == "job-bookmark-disable"
    assert "other" not in args  # unknown arguments are ignored, as in Glue
    assert (
        getResolvedOptions([SCRIPT, "--JOB_NAME", "j"], ["JOB_NAME", "TempDir"])["TempDir"] is None
    )


def test_a_missing_argument_is_glue_s_argument_error_naming_it():
    with pytest.raises(GlueArgumentError, match="--WINDOW_SIZE"):
        getResolvedOptions([SCRIPT, "--JOB_NAME", "j"], ["JOB_NAME", "WINDOW_SIZE"])


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_a_help_flag_among_the_arguments_is_ignored_not_an_exit(flag):
    # Glue's parser printed a usage and raised SystemExit(0): a job that "succeeded"
    args = getResolvedOptions([SCRIPT, flag, "--JOB_NAME", "j"], ["JOB_NAME"])
    assert args["JOB_NAME"] == "j"


def test_abbreviations_are_refused_unless_allowed_as_in_glue_6():
    argv = [SCRIPT, "--JOB_NAME", "j", "--WINDOW", "5 seconds"]
    with pytest.raises(GlueArgumentError):
        getResolvedOptions(argv, ["JOB_NAME", "WINDOW_SIZE"])
    assert (
        getResolvedOptions(argv, ["JOB_NAME", "WINDOW_SIZE"], allow_abbrev=True)["WINDOW_SIZE"]
        == "5 seconds"
    )


def test_reserved_names_and_old_continuation_options():
    with pytest.raises(RuntimeError, match="reserved"):
        getResolvedOptions([SCRIPT], ["job-bookmark-option"])
    args = getResolvedOptions([SCRIPT, "--continuation-option", "continuation-enabled"], [])
    assert args["job_bookmark_option"] == "job-bookmark-enable"


def test_runner_flags_go_before_the_double_dash_and_the_job_s_after():
    assert split_arguments(["--local", "--", "--JOB_NAME", "j"]) == (
        ["--local"],
        ["--JOB_NAME", "j"],
    )
    assert split_arguments(["--JOB_NAME", "j"]) == ([], ["--JOB_NAME", "j"])
    with pytest.raises(GlueError, match="after '--'"):
        split_arguments(["--JOB_NAME", "j", "--", "x"])
    assert split_arguments(["--", "--local", "x"]) == ([], ["--local", "x"])  # the script's


def test_a_runner_flag_after_the_script_without_double_dash_is_refused_not_passed_on():
    """`glue run job.py --local --JOB_NAME j` handed --local to the script, which then ran
    against the AWS the environment names instead of a local one."""
    with pytest.raises(GlueError) as e:
        split_arguments(["--local", "--JOB_NAME", "j"])
    text = str(e.value)
    assert "\n" not in text and text.startswith("glue run: --local after the script with no '--'")
    assert "glue run job.py --local -- --JOB_NAME" in text


def test_a_configured_master_is_respected_and_local_star_is_the_default(tmp_path):
    env: dict = {}
    prepare_spark_environment(env)
    assert env["PYSPARK_SUBMIT_ARGS"] == "--master local[*] pyspark-shell"
    assert env["PYSPARK_PYTHON"]
    mine = {"PYSPARK_SUBMIT_ARGS": "--master spark://h:7077 pyspark-shell"}
    prepare_spark_environment(mine)
    assert mine["PYSPARK_SUBMIT_ARGS"] == "--master spark://h:7077 pyspark-shell"
    (tmp_path / "spark-defaults.conf").write_text("spark.master  yarn\n")
    assert master_configured({"SPARK_CONF_DIR": str(tmp_path)})
    assert master_configured({"MASTER": "yarn"})
    (tmp_path / "spark-defaults.conf").write_text("spark.executor.memory 2g\n")
    assert not master_configured({"SPARK_CONF_DIR": str(tmp_path)})
