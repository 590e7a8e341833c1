"""A Glue script read before it runs: which writes this layer does not provide are
refused at start (those the job reaches), which only named (under a condition Glue may
never meet), and which are fine (what is provided, reads, unknown values)."""

import ast
import re
import sys
import textwrap
from pathlib import Path

import pytest

from kinesis_dstream.glue.errors import NotProvidedError
from kinesis_dstream.glue.job.script_check import check_script, writes_not_provided

STUDIO = """
def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        node = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        {write}

glueContext.forEachBatch(frame=events, batch_function=processBatch, options=options)
"""


def found(source):
    return [
        (f.line, f.reached, str(f.error).split(" is not provided")[0])
        for f in writes_not_provided(ast.parse(textwrap.dedent(source)))
    ]


def studio(write):
    return found(STUDIO.format(write=write))


def test_a_write_the_batch_function_reaches_once_records_come_is_refused():
    assert studio(
        'glueContext.write_dynamic_frame.from_options(frame=node, connection_type="redshift",'
        ' connection_options={"dbtable": "t"})'
    ) == [(5, True, "write_dynamic_frame.from_options(connection_type='redshift')")]
    assert studio('glueContext.write_dynamic_frame_from_options(node, "kafka", {})') == [
        (5, True, "write_dynamic_frame_from_options(connection_type='kafka')")
    ]
    assert studio('glueContext.getSink("mysql").writeFrame(node)') == [
        (5, True, "getSink(connection_type='mysql')")
    ]
    assert studio('node.write("postgresql", {"dbtable": "t"})') == [
        (5, True, "write(connection_type='postgresql')")
    ]
    assert studio('glueContext.write_dynamic_frame.from_jdbc_conf(node, "conn", {})') == [
        (5, True, "from_jdbc_conf (a JDBC connection of the catalog)")
    ]
    assert studio(
        'glueContext.write_dynamic_frame.from_options(frame=node, connection_type="s3", '
        'connection_options={"path": "s3://b/"}, format="orc")'
    ) == [(5, True, "write_dynamic_frame to s3 in format 'orc'")]


def test_what_is_provided_reads_and_values_known_only_at_run_time_are_left_alone():
    for write in (
        'glueContext.write_dynamic_frame.from_options(frame=node, connection_type="dynamodb",'
        ' connection_options={"dynamodb.output.tableName": "t"})',
        'glueContext.write_dynamic_frame.from_options(node, "s3", {"path": p}, "glueparquet")',
        'glueContext.write_dynamic_frame.from_options(frame=node, connection_type="kinesis")',
        'glueContext.write_dynamic_frame.from_options(frame=node, connection_type=args["t"])',
        'glueContext.create_dynamic_frame.from_options(connection_type="dynamodb")',  # a read
        'open("out.txt").write("redshift")',  # not Glue's
        "sink.write(node)",
    ):
        assert studio(write) == [], write


def test_a_write_glue_may_never_reach_is_only_named():
    source = """
    TARGET = "redshift"

    def processBatch(data_frame, batchId):
        if args["target"] == "warehouse":
            glueContext.write_dynamic_frame.from_options(frame=f, connection_type=TARGET)
        try:
            glueContext.write_dynamic_frame.from_options(frame=f, connection_type="s3")
        except Exception:
            glueContext.write_dynamic_frame.from_options(frame=f, connection_type="kafka")

    def unused(f):
        glueContext.write_dynamic_frame.from_options(frame=f, connection_type="mysql")

    def main():
        glueContext.forEachBatch(frame=events, batch_function=processBatch, options=o)
        glueContext.write_dynamic_frame.from_options(frame=f, connection_type=TARGET)

    if __name__ == "__main__":
        main()
    """
    assert found(source) == [
        (6, False, "write_dynamic_frame.from_options(connection_type='redshift')"),
        (10, False, "write_dynamic_frame.from_options(connection_type='kafka')"),
        (13, False, "write_dynamic_frame.from_options(connection_type='mysql')"),
        # after forEachBatch, which returns only once the query stops: a Glue job
        # stopped from its console may never get there
        (17, False, "write_dynamic_frame.from_options(connection_type='redshift')"),
    ]


def test_the_refusal_is_one_line_naming_the_script_s_line(tmp_path, caplog):
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            STUDIO.format(
                write="glueContext.write_dynamic_frame.from_options(frame=node, "
                'connection_type="redshift")'
            )
        )
    )
    with pytest.raises(NotProvidedError) as refused:
        check_script(str(script))
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(
        "job.py line 5: write_dynamic_frame.from_options(connection_type='redshift') is not "
        "provided by kinesis_dstream's AWS Glue layer"
    )
    assert message.endswith("; refused before the job starts, so no record is read")
    script.write_text(
        'if args["to"] == "db":\n'
        '    glueContext.write_dynamic_frame.from_options(frame=f, connection_type="mysql")\n'
    )
    check_script(str(script))  # not refused: named
    assert any(m.startswith("job.py line 2: write_dynamic_frame") for m in caplog.messages)
    script.write_text("def broken(:\n")
    check_script(str(script))  # Python names the syntax error when the script runs


def test_a_write_before_forEachBatch_in_main_under_the_main_guard_is_refused():
    source = """
    def processBatch(data_frame, batchId):
        pass

    def main():
        glueContext.write_dynamic_frame.from_options(frame=f, connection_type="redshift")
        glueContext.forEachBatch(frame=events, batch_function=processBatch, options=o)

    if __name__ == "__main__":
        main()
    """
    assert found(source) == [
        (6, True, "write_dynamic_frame.from_options(connection_type='redshift')")
    ]


# The review's scripts (sc1..sc5): each runs on Glue when its job argument names S3, so
# each must start here, its Redshift write named in one warning line. TO_REDSHIFT(f) and
# TO_S3(f) stand for glueContext.write_dynamic_frame.from_options(frame=f, ...) calls.
WRITES = {
    "TO_REDSHIFT": 'connection_type="redshift", connection_options={}',
    "TO_S3": 'connection_type="s3", connection_options={"path": "s3://b/p"}, format="json"',
}
REVIEWED = {
    "helper_called_under_a_job_argument": (
        """
        import sys
        from awsglue.utils import getResolvedOptions
        args = getResolvedOptions(sys.argv, ["JOB_NAME", "target"])

        def to_redshift(frame):
            TO_REDSHIFT(frame)

        def process_batch(data_frame, batch_id):
            if args["target"] == "redshift":
                to_redshift(data_frame)
            else:
                TO_S3(data_frame)

        glueContext.forEachBatch(frame=df, batch_function=process_batch, options={})
        """,
        7,
    ),
    "a_job_argument_and_a_size_test": (
        """
        def process_batch(data_frame, batch_id):
            if args["target"] == "redshift" and data_frame.count() > 0:
                TO_REDSHIFT(data_frame)
        glueContext.forEachBatch(frame=df, batch_function=process_batch, options={})
        """,
        4,
    ),
    "a_loop_that_may_not_run": (
        """
        def process_batch(data_frame, batch_id):
            for sink in args["extra_sinks"].split(","):
                if sink:
                    pass
            targets = []
            for t in targets:
                TO_REDSHIFT(data_frame)
        glueContext.forEachBatch(frame=df, batch_function=process_batch, options={})
        """,
        8,
    ),
    "the_batch_function_chosen_by_a_job_argument": (
        """
        import sys
        from awsglue.utils import getResolvedOptions
        args = getResolvedOptions(sys.argv, ["JOB_NAME", "sink"])

        def to_redshift(data_frame, batch_id):
            TO_REDSHIFT(data_frame)

        def to_s3(data_frame, batch_id):
            TO_S3(data_frame)

        if args["sink"] == "redshift":
            glueContext.forEachBatch(frame=df, batch_function=to_redshift, options={})
        else:
            glueContext.forEachBatch(frame=df, batch_function=to_s3, options={})
        """,
        7,
    ),
    "a_match_case": (
        """
        def process_batch(data_frame, batch_id):
            match args["sink"]:
                case "redshift":
                    TO_REDSHIFT(data_frame)
                case _:
                    TO_S3(data_frame)
        glueContext.forEachBatch(frame=df, batch_function=process_batch, options={})
        """,
        5,
    ),
}


@pytest.mark.parametrize("shape", sorted(REVIEWED))
def test_a_script_that_runs_on_glue_starts_its_conditional_write_named(shape, tmp_path, caplog):
    source, line = REVIEWED[shape]
    if shape == "a_match_case" and sys.version_info < (3, 10):
        pytest.skip("match needs Python 3.10")
    script = tmp_path / "job.py"
    for name, arguments in WRITES.items():
        source = re.sub(
            name + r"\((\w+)\)",
            rf"glueContext.write_dynamic_frame.from_options(frame=\1, {arguments})",
            source,
        )
    script.write_text(textwrap.dedent(source))
    check_script(str(script))  # not refused
    warned = [m for m in caplog.messages if m.startswith("job.py line")]
    assert warned == [
        f"job.py line {line}: write_dynamic_frame.from_options(connection_type='redshift') "
        "is not provided by kinesis_dstream's AWS Glue layer, which runs Glue streaming "
        "scripts on any PySpark; this layer writes connection_type 'kinesis', 's3', "
        "'dynamodb' (what is provided: docs/glue.md); the job may never get there (a "
        "condition, a loop, a call by value), so it starts, and fails if it does"
    ]


ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(
    str(p.relative_to(ROOT))
    for folder in ("examples", "tests/support/scripts")
    for p in (ROOT / folder).glob("*.py")
)


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_example_and_test_script_passes_the_check(script):
    """Each writes only what is provided; the Redshift job, made to be refused, is."""
    findings = writes_not_provided(ast.parse((ROOT / script).read_text()))
    if script.endswith("glue_redshift_job.py"):
        assert [(f.line, f.reached) for f in findings] == [(38, True)]
        with pytest.raises(NotProvidedError):
            check_script(str(ROOT / script))
    else:
        assert findings == []
        check_script(str(ROOT / script))


def test_a_long_expression_python_runs_is_read_and_one_too_deep_is_only_named(tmp_path, caplog):
    """A 500-term concatenation (an SQL text, say) compiles and runs on Glue; reading it
    exceeded Python's recursion limit, and glue run ended in a RecursionError. A test
    nested deeper than the reading goes is named in a warning, never refused."""
    script = tmp_path / "job.py"
    long_text = " + ".join(['"a"'] * 500)
    script.write_text(f'text = {long_text}\nif args["to"] == "db":\n    {WRITE_MYSQL}\n')
    compile(script.read_text(), "job.py", "exec")  # Python runs it
    check_script(str(script))
    assert any(m.startswith("job.py line 3: write_dynamic_frame") for m in caplog.messages)
    caplog.clear()
    deep = "not " * 1500 + "data_frame.count()"  # deeper than this reading goes
    script.write_text(
        f"def b(data_frame, batch_id):\n    if {deep}:\n        pass\n"
        "glueContext.forEachBatch(frame=events, batch_function=b, options=o)\n"
    )
    check_script(str(script))
    assert caplog.messages == [
        "job.py is nested too deeply to read before it runs: its writes are not checked at start"
    ]


WRITE_MYSQL = 'glueContext.write_dynamic_frame.from_options(frame=f, connection_type="mysql")'
