"""A Glue script read before it runs: which writes this layer does not provide are
refused at start (those the job reaches), which only named (under a condition Glue may
never meet), and which are fine (what is provided, reads, unknown values)."""

import ast
import textwrap

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
        (17, True, "write_dynamic_frame.from_options(connection_type='redshift')"),
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
