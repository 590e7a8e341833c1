"""A Glue job's arguments: the script's ``--NAME value`` pairs (getResolvedOptions), Glue's
special job parameters (``--conf``, ``--extra-py-files``...) and the runner's own flags,
as AWS's pages show them, mutated, and random tokens.

The rule (docs/reliability.md#options-positions-and-files): the resolved arguments, or
Glue's own errors (``GlueArgumentError``; ``RuntimeError`` for reserved names, as Glue
raises it) and the layer's GlueError naming the argument; never another exception.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.glue.errors import GlueArgumentError, GlueError
from kinesis_dstream.glue.job.arguments import getResolvedOptions
from kinesis_dstream.glue.job.parameters import parse_job_parameters
from kinesis_dstream.glue.job.runner import split_arguments

from .json_mutations import mutated_text

#: A job's arguments as AWS's pages show them.
DOCUMENTED = [
    ["--JOB_NAME", "kinesis-to-s3", "--TempDir", "s3://bucket/temp/"],
    ["--WINDOW_SIZE", "100 seconds", "--job-bookmark-option", "job-bookmark-disable"],
    ["--conf", "spark.sql.shuffle.partitions=4 --conf spark.executor.memory=2g"],
    ["--extra-py-files", "s3://bucket/lib.py,s3://bucket/b.zip", "--enable-metrics"],
    ["--additional-python-modules", "pyarrow==14.0.0,requests", "--enable-spark-ui", "true"],
    ["--continuation-option", "continuation-enabled", "--job-bookmark-from", "r1"],
    ["--encryption-type", "sse-s3", "--enable-glue-datacatalog"],
]
NAMES = ["JOB_NAME", "TempDir", "WINDOW_SIZE", "job-bookmark-option", "RedshiftTempDir", "x"]

tokens = st.one_of(
    st.sampled_from(["--", "-", "--=", "--conf", "--JOB_NAME", "-h", "--help", "@file", "="]),
    st.text(max_size=12),
)


@st.composite
def argvs(draw) -> list:
    """Documented arguments, some tokens mutated, some random tokens added."""
    argv = [
        token for part in draw(st.lists(st.sampled_from(DOCUMENTED), max_size=3)) for token in part
    ]
    for _ in range(draw(st.integers(0, 3))):
        if argv and draw(st.booleans()):
            at = draw(st.integers(0, len(argv) - 1))
            argv[at] = draw(mutated_text(argv[at], st.text(max_size=2)))
        else:
            argv.insert(draw(st.integers(0, len(argv))), draw(tokens))
    return argv


@given(argvs(), st.lists(st.sampled_from(NAMES), max_size=3, unique=True), st.booleans())
def test_get_resolved_options_resolves_or_raises_glues_errors(argv, names, abbreviations):
    try:
        resolved = getResolvedOptions(["job.py", *argv], names, allow_abbrev=abbreviations)
    except GlueArgumentError:
        return
    except RuntimeError as exc:  # Glue's own, word for word
        assert str(exc).startswith(("Using reserved arguments", "Missing option", "Invalid option"))
        return
    assert "job_bookmark_option" in resolved
    for name in names:
        assert name in resolved


@given(argvs())
def test_glues_job_parameters_are_read_or_one_error_naming_the_parameter(argv):
    try:
        parameters = parse_job_parameters(argv)
    except GlueError as exc:
        assert str(exc).startswith("glue run: ")
        assert "--" in str(exc)
        return
    assert all(isinstance(path, str) and path for path in parameters.extra_py_files)
    assert all(key for key, _ in parameters.conf)


@given(
    st.lists(st.sampled_from(["--local", "--install-modules", "--", "job.py"]) | tokens, max_size=6)
)
def test_the_runners_own_flags_split_or_are_one_error(rest):
    try:
        flags, script_args = split_arguments(rest)
    except GlueError as exc:
        assert str(exc).startswith("glue run: ")
        return
    assert len(flags) + len(script_args) <= len(rest)
