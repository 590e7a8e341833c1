"""Which writes of a Glue script the job is sure to reach (refused at start) and which it
may never reach (named in a warning): each script below writes to Redshift once, and
runs on Glue when that write is never reached, so only a sure one may be refused."""

import ast
import sys
import textwrap

import pytest

from kinesis_dstream.glue.job.script_check import writes_not_provided

WRITE = 'glueContext.write_dynamic_frame.from_options(frame=f, connection_type="redshift")'

# The batch function Glue Studio writes, with {body} in its place.
BATCH = """
def process_batch(data_frame, batch_id):
{body}

glueContext.forEachBatch(frame=events, batch_function=process_batch, options=o)
"""


def reached(source):
    """Whether the script's one Redshift write is sure to be reached."""
    source = textwrap.dedent(source).replace("WRITE", WRITE)
    findings = writes_not_provided(ast.parse(source))
    assert len(findings) == 1, findings
    return findings[0].reached


def batch(body):
    return BATCH.format(body=textwrap.indent(textwrap.dedent(body), "    "))


SURE = {
    "straight_line": WRITE,
    "the_batch_function": batch("WRITE"),
    "glue_studio_s_guard": batch("if data_frame.count() > 0:\n    WRITE"),
    "the_guard_turned_round": batch("if 0 < data_frame.count():\n    WRITE"),
    "every_and_operand_a_size_test": batch(
        "if data_frame.count() > 0 and not data_frame.rdd.isEmpty():\n    WRITE"
    ),
    "a_size_test_or_anything": batch("if len(data_frame.take(1)) > 0 or args['x']:\n    WRITE"),
    "an_early_return_on_an_empty_batch": batch("if data_frame.count() == 0:\n    return\nWRITE"),
    "an_early_return_on_is_empty": batch("if data_frame.rdd.isEmpty():\n    return\nWRITE"),
    "the_else_of_an_empty_test": batch("if not data_frame.head(1):\n    pass\nelse:\n    WRITE"),
    "a_helper_the_batch_function_calls": """
        def to_redshift(frame):
            WRITE

        def process_batch(data_frame, batch_id):
            if data_frame.count() > 0:
                to_redshift(data_frame)

        glueContext.forEachBatch(frame=events, batch_function=process_batch, options=o)
        """,
    "with_try_else_and_finally_bodies": batch(
        "with lock:\n    try:\n        pass\n    except Exception:\n        log()\n"
        "    else:\n        WRITE"
    ),
    "a_nested_batch_function_in_main": """
        def main():
            def process_batch(data_frame, batch_id):
                WRITE
            glueContext.forEachBatch(frame=events, batch_function=process_batch, options=o)

        if __name__ == "__main__":
            main()
        """,
    "spark_s_foreachBatch": """
        def process_batch(data_frame, batch_id):
            WRITE

        events.writeStream.foreachBatch(process_batch).start().awaitTermination()
        """,
}

MAYBE = {
    "an_if_branch": "if args['to'] == 'db':\n    WRITE",
    "an_else_branch": "if args['to'] == 's3':\n    pass\nelse:\n    WRITE",
    "a_conditional_expression": "WRITE if args['to'] == 'db' else None",
    "an_or_operand": "args['dry_run'] or WRITE",
    "a_while_body": "while pending():\n    WRITE",
    "a_for_body": "for sink in []:\n    WRITE",
    "an_except_handler": "try:\n    pass\nexcept Exception:\n    WRITE",
    "a_comprehension_s_element": "[WRITE for sink in sinks]",
    "a_comprehension_s_condition": "[s for s in sinks if WRITE]",
    "a_lambda_body": "to_db = lambda f: WRITE",
    "an_assert_s_message": "assert ready, WRITE",
    "after_an_assert": batch("assert data_frame.columns\nWRITE"),
    "a_class_body": "class Sink:\n    WRITE",
    "a_function_never_called": "def unused():\n    WRITE",
    "a_function_only_referred_to": "def to_db():\n    WRITE\n\nsinks = [to_db]",
    "a_size_test_and_a_job_argument": batch(
        "if data_frame.count() > 0 and args['to'] == 'db':\n    WRITE"
    ),
    "a_len_that_is_no_size_test": "if len(sys.argv) > 1:\n    WRITE",
    "a_size_test_of_another_frame": batch("if lookup.count() > 0:\n    WRITE"),
    "a_size_test_of_a_rebound_frame": batch(
        "data_frame = data_frame.filter('bad')\nif data_frame.count() > 0:\n    WRITE"
    ),
    "a_size_test_in_a_helper": """
        def write_errors(errors):
            if errors.count() > 0:
                WRITE

        def process_batch(data_frame, batch_id):
            write_errors(data_frame.filter("bad"))

        glueContext.forEachBatch(frame=events, batch_function=process_batch, options=o)
        """,
    "after_a_conditional_return": batch("if args['dry_run']:\n    return\nWRITE"),
    "after_a_conditional_exit": "if args['dry_run']:\n    sys.exit(0)\nWRITE",
    "after_a_helper_that_may_exit": """
        def stop_if_dry_run():
            if args['dry_run']:
                sys.exit(0)

        stop_if_dry_run()
        WRITE
        """,
    "after_a_conditional_raise": batch("if bad(data_frame):\n    raise SkipBatch()\nWRITE"),
    "after_forEachBatch": batch("pass") + "\nWRITE\n",
    "a_batch_function_chosen_from_a_dict": """
        def to_db(data_frame, batch_id):
            WRITE

        SINKS = {"db": to_db, "s3": to_s3}
        glueContext.forEachBatch(frame=events, batch_function=SINKS[args["sink"]], options=o)
        """,
    "a_helper_called_by_getattr": """
        def to_db(frame):
            WRITE

        getattr(sys.modules[__name__], "to_" + args["sink"])(events)
        """,
    "a_function_defined_twice": """
        if args["sink"] == "db":
            def sink(frame):
                WRITE
        else:
            def sink(frame):
                pass

        sink(events)
        """,
    "a_function_rebound": """
        def sink(frame):
            WRITE

        sink = sinks.get(args["sink"], sink)
        sink(events)
        """,
    "a_decorated_function": """
        def sink(frame):
            WRITE

        @only_when_enabled
        def process_batch(data_frame, batch_id):
            sink(data_frame)

        glueContext.forEachBatch(frame=events, batch_function=process_batch, options=o)
        """,
    "a_generator": "def sink(frame):\n    yield 1\n    WRITE\n\nsink(events)",
    "a_script_that_uses_exec": "exec(args['setup'])\nWRITE",
    "a_script_that_rebinds_through_globals": """
        def sink(frame):
            WRITE

        globals()["sink"] = print
        sink(events)
        """,
    "a_method": """
        class Job:
            def process_batch(self, data_frame, batch_id):
                WRITE

        glueContext.forEachBatch(frame=events, batch_function=Job().process_batch, options=o)
        """,
}


@pytest.mark.parametrize("shape", sorted(SURE))
def test_a_write_the_job_is_sure_to_reach_is_refused(shape):
    assert reached(SURE[shape])


@pytest.mark.parametrize("shape", sorted(MAYBE))
def test_a_write_the_job_may_never_reach_is_only_named(shape):
    assert not reached(MAYBE[shape])


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match needs Python 3.10")
def test_a_match_case_is_a_condition():
    assert not reached(batch("match args['to']:\n    case _:\n        WRITE"))
    assert reached(batch("match args['to']:\n    case _:\n        pass\nWRITE"))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* needs Python 3.11")
def test_an_except_star_handler_is_a_condition():
    assert not reached("try:\n    pass\nexcept* ValueError:\n    WRITE")
    assert reached("try:\n    WRITE\nexcept* ValueError:\n    pass")
