"""Glue's classification grok (sql/parsing/grok.py): compiling, matching, types, columns,
and the parser's corrupt-record rule. Pure: no server, no Spark session."""

from __future__ import annotations

import datetime as dt
import gzip
import math
import pickle
from dataclasses import replace

import pytest

from kinesis_dstream.sql.parsing.grok import GrokError, compile_grok, parse_definitions
from kinesis_dstream.sql.parsing.grok_patterns import BUILTIN_PATTERNS
from kinesis_dstream.sql.parsing.payload import PayloadFormat, PayloadParser, output_schema

from ..support.weblog import COLUMNS, CUSTOM_PATTERNS, PATTERN, weblog
from .test_payload import records

APACHE = (
    '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 '
    '"http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"'
)


@pytest.mark.parametrize("name", sorted(parse_definitions(BUILTIN_PATTERNS, "built-in")))
def test_every_built_in_pattern_compiles_alone(name):
    compile_grok("%{" + name + "}")


def test_combined_apache_log_gives_glues_named_fields_in_pattern_order():
    grok = compile_grok("%{COMBINEDAPACHELOG}")
    assert [f.name for f in grok.struct.fields] == [
        "clientip", "ident", "auth", "timestamp", "verb", "request", "httpversion",
        "rawrequest", "response", "bytes", "referrer", "agent",
    ]  # fmt: skip
    assert grok.match(APACHE) == [
        "127.0.0.1", "-", "frank", "10/Oct/2000:13:55:36 -0700", "GET", "/apache_pb.gif",
        "1.0", None, "200", "2326", '"http://www.example.com/start.html"',
        '"Mozilla/4.08 [en] (Win98; I ;Nav)"',
    ]  # fmt: skip


def test_glues_documented_example_with_a_custom_pattern_named_in_lower_case():
    # The seed page: "%{USERNAME:username} %{DIGIT:digit:int}" with "digit \d".
    grok = compile_grok("%{USERNAME:username} %{DIGIT:digit:int}", "digit \\d")
    assert grok.struct.simpleString() == "struct<username:string,digit:int>"
    assert grok.match("alice 7") == ["alice", "7"]
    assert grok.match("alice 77") is None  # the whole line must match


def test_custom_patterns_refer_to_each_other_and_override_built_ins():
    custom = "\n".join(["INNER [a-z]+", "OUTER <%{INNER:word}>", "INT x+", "", "# a comment"])
    grok = compile_grok("%{OUTER:all} %{INT:xs}", custom)
    assert grok.match("<abc> xxx") == ["<abc>", "abc", "xxx"]


def test_nested_captures_and_unwanted_ones():
    grok = compile_grok("%{SYSLOGBASE} %{GREEDYDATA:message}")
    assert [f.name for f in grok.struct.fields] == [
        "timestamp", "facility", "priority", "logsource", "program", "pid", "message",
    ]  # fmt: skip
    line = "Feb  1 06:25:43 web-1 sshd[4242]: Accepted publickey\n"  # line break dropped
    assert grok.match(line) == [
        "Feb  1 06:25:43", None, None, "web-1", "sshd", "4242", "Accepted publickey",
    ]  # fmt: skip


def test_types_and_an_inline_definition_and_javas_date_format():
    grok = compile_grok(
        "%{INT:b:byte} %{INT:s;short} %{INT:i:int} %{INT:l:long} %{NUMBER:f:float} "
        "%{NUMBER:d:double} %{BOOLEAN:ok:boolean} %{HTTPDATE:at;date;dd/MMM/yyyy:HH:mm:ss Z} "
        "%{Size:size=%{INT}|-}"
    )
    assert grok.struct.simpleString() == (
        "struct<b:tinyint,s:smallint,i:int,l:bigint,f:float,d:double,ok:boolean,"
        "at:timestamp,size:string>"
    )
    values = grok.match("1 2 3 4 5.5 6.25 TRUE 10/Oct/2000:13:55:36 -0700 -")
    assert values == [
        "1", "2", "3", "4", "5.5", "6.25", "TRUE", "10/Oct/2000:13:55:36 -0700", "-",
    ]  # fmt: skip
    converted = [
        grok.column_converter(i, f.dataType)(value)
        for i, (f, value) in enumerate(zip(grok.struct.fields, values))
    ]
    assert converted == [
        1, 2, 3, 4, 5.5, 6.25, True,
        dt.datetime(2000, 10, 10, 13, 55, 36, tzinfo=dt.timezone(dt.timedelta(hours=-7))), "-",
    ]  # fmt: skip


def test_a_date_that_does_not_fit_its_format_is_a_misfit_the_other_columns_kept():
    fmt = PayloadFormat.parse("grok", grok_pattern="%{NOTSPACE:at;date;dd/MMM/yyyy} %{INT:n:int}")
    lines = [b"29/Feb/2020 5", b"31/Feb/2020 6", b"1/Mar/2020 99999999999"]
    parsed, reasons = PayloadParser(fmt, output_schema(fmt.grok.struct)).parse_counted(
        records(lines)
    )
    rows = parsed.to_pylist()
    assert [(r["at"] and r["at"].day, r["n"]) for r in rows] == [(29, 5), (None, 6), (1, None)]
    assert [r["_corrupt_record"] for r in rows] == [None, lines[1], lines[2]]
    assert reasons == {"a value does not fit its column's type": 2}


def test_glues_datatyped_apache_pattern_compiles_with_its_semicolon_types():
    grok = compile_grok("%{COMMONAPACHELOG_DATATYPED}")
    assert grok.struct.simpleString().startswith(
        "struct<clientip:string,ident:boolean,auth:string,timestamp:timestamp,verb:string"
    )


def test_a_field_named_twice_is_one_column_taking_the_capture_that_matched():
    grok = compile_grok("(?:%{INT:n:int}|%{WORD:w} %{INT:n:int})")
    assert grok.struct.simpleString() == "struct<n:int,w:string>"
    assert grok.match("12") == ["12", None]
    assert grok.match("ab 34") == ["34", "ab"]
    with pytest.raises(GrokError, match="'n' is captured as int and as long"):
        compile_grok("%{INT:n:int} %{INT:n:long}")


@pytest.mark.parametrize(
    "pattern, custom, says",
    [
        ("%{NOPE:x}", None, r"grok pattern %\{NOPE\} is not defined"),
        ("%{A}", "A <%{B}>\nB %{C}", r"%\{C\} \(inside %\{B\}\) is not defined"),
        ("%{A}", "A %{B}\nB x%{A}", "loop: A -> B -> A"),
        ("%{A:x}", "A (unclosed", "grok pattern A \\(grokCustomPatterns\\) does not compile"),
        ("%{A:x}", "A <%{B}>\nB (unclosed", "grok pattern B \\(grokCustomPatterns\\) does not"),
        ("%{A:x}", "A <%{B}>\nB [z-a]", "grok pattern B \\(grokCustomPatterns\\) does not"),
        ("(%{INT:x}", None, "option grokPattern '\\(%\\{INT:x\\}' does not compile"),
        ("%{INT:x:integer}", None, "type 'integer'; Glue's types: byte, boolean"),
        ("%{HTTPDATE:t:date:yyyy-QQ}", None, "date format 'yyyy-QQ' uses 'QQ'"),
        # strptime takes each field once: refused here, not on every line (issue 52)
        (
            "%{DATA:ts:date:yyyy yyyy}",
            None,
            r"field 'ts' in %\{DATA:ts:date:yyyy yyyy\}: .* gives one field twice",
        ),
        ("%{DATA:ts;date;d dd}", None, r"field 'ts' in .*'d dd' gives one field twice"),
        ("%{A}", "A %{DATA:z:date:HH Z X}", r"field 'z' in %\{DATA:z:date:HH Z X\}.* \('Z' and"),
        ("x %{INT", None, "never closed"),
        ("  ", None, "needs option grokPattern"),
        ("%{INT:x}", "A x\nbad-name y", "grokCustomPatterns line 2 .bad-name y. is not"),
    ],
)
def test_a_bad_pattern_is_one_line_naming_it(pattern, custom, says):
    with pytest.raises(GrokError, match=says) as caught:
        compile_grok(pattern, custom)
    assert "\n" not in str(caught.value)


def test_every_date_format_compile_grok_takes_reads_a_line_without_an_error_of_strptime():
    """What compiles is read: each format either parses its line or says it does not fit
    (ValueError, a misfit), never strptime's own ``re.error`` on every line."""
    letters = ["yyyy", "yy", "MMM", "MM", "dd", "d", "HH", "hh", "mm", "ss", "SSS", "Z", "a"]
    for first in letters:
        for second in letters:
            pattern = f"%{{DATA:ts:date:{first} {second}}}"
            try:
                grok = compile_grok(pattern)
            except GrokError as exc:
                assert "gives one field twice" in str(exc)
                continue
            convert = grok.column_converter(0, grok.struct.fields[0].dataType)
            with pytest.raises(ValueError):
                convert("not a date")


def test_ascii_classes_as_in_java_and_a_scoped_case_flag():
    grok = compile_grok("%{WORD:w} %{BOOLEAN:b:boolean} x")
    assert grok.match("abc true x") == ["abc", "true"]
    assert grok.match("äbc true x") is None  # \w is ASCII, as in Java
    assert grok.match("abc FALSE x") == ["abc", "FALSE"]
    assert grok.match("abc true X") is None  # (?i) ends with BOOLEAN's group


def test_the_compiled_pattern_pickles():
    grok = compile_grok(PATTERN, CUSTOM_PATTERNS)
    again = pickle.loads(pickle.dumps(grok))
    assert again == grok
    line = weblog(1)[0][0]
    assert again.match(line) == grok.match(line)


def _parser(**options):
    fmt = PayloadFormat.parse("grok", **options)
    payload = fmt.grok.struct if options.get("schema_text") is None else None
    return fmt, payload


def test_a_weblog_of_1200_lines_every_field_right_bad_lines_corrupt_and_counted():
    lines, expected = weblog(1_200)
    fmt = PayloadFormat.parse("grok", grok_pattern=PATTERN, grok_custom_patterns=CUSTOM_PATTERNS)
    assert [f.name for f in fmt.grok.struct.fields] == list(COLUMNS)
    payloads = [
        gzip.compress(line.encode()) if i % 10 == 3 else line.encode()
        for i, line in enumerate(lines)
    ]
    parser = PayloadParser(fmt, output_schema(fmt.grok.struct), ())
    parsed, reasons = parser.parse_counted(records(payloads))
    rows = parsed.to_pylist()
    assert len(rows) == 1_200
    bad = [i for i, e in enumerate(expected) if e is None]
    assert len(bad) == 22 and sum(reasons.values()) == 22
    assert reasons == {
        "the line does not match the grok pattern": 15,
        "a value does not fit its column's type": 7,
    }
    for i, (row, want) in enumerate(zip(rows, expected)):
        if want is None:
            assert row["_corrupt_record"] == payloads[i]
            continue
        assert row["_corrupt_record"] is None, (i, lines[i])
        for column in COLUMNS:
            if column == "httpversion":  # a float column: float32
                assert math.isclose(row[column], want[column], rel_tol=1e-6), (i, column)
            else:
                assert row[column] == want[column], (i, column, lines[i])


def test_schema_ddl_picks_and_types_the_columns_by_name():
    fmt = PayloadFormat.parse(
        "grok",
        schema_text="`response` BIGINT, `CLIENTIP` STRING",
        grok_pattern=PATTERN,
        grok_custom_patterns=CUSTOM_PATTERNS,
    )
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    payload = StructType(
        [StructField("response", LongType(), True), StructField("CLIENTIP", StringType(), True)]
    )
    line = weblog(1)[0][0]
    parsed, bad = PayloadParser(fmt, output_schema(payload)).parse(records([line.encode()]))
    assert bad == 0
    [row] = parsed.to_pylist()
    assert row["response"] == 200 and row["CLIENTIP"] == line.split(" ")[0]
    other = StructType([StructField("nope", StringType(), True)])
    with pytest.raises(ValueError, match="column 'nope' of option schema is not a field"):
        PayloadParser(fmt, output_schema(other)).check()


def test_grok_options_belong_to_classification_grok():
    with pytest.raises(ValueError, match="grokPattern is for classification grok, not 'json'"):
        PayloadFormat.parse("json", "`a` INT", grok_pattern="%{INT:a}")
    with pytest.raises(ValueError, match="needs option grokPattern"):
        PayloadFormat.parse("grok")


def test_glues_missing_dash_is_null_in_a_typed_column_and_kept_in_a_string_one():
    # Glue's grokLog: MISSING defaults to '-', StrictMode to false.
    fmt = PayloadFormat.parse("grok", grok_pattern="%{COMMONAPACHELOG_DATATYPED}")
    lines = [
        b'127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326',
        b'127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 304 -',
    ]
    parsed, bad = PayloadParser(fmt, output_schema(fmt.grok.struct)).parse(records(lines))
    assert bad == 0
    rows = parsed.to_pylist()
    assert [(r["ident"], r["auth"], r["response"], r["bytes"]) for r in rows] == [
        (None, "frank", 200, 2326),  # ident: boolean
        (None, "-", 304, None),  # auth: string, kept as captured
    ]


def test_an_equals_sign_in_a_date_format_is_not_an_inline_definition():
    grok = compile_grok("%{NOTSPACE:at;date;yyyy=MM} %{Size:size:long=%{INT}|-}")
    assert [(f.name, f.type_name, f.date_format) for f in grok.fields] == [
        ("at", "date", "yyyy=MM"), ("size", "long", None),
    ]  # fmt: skip
    values = grok.match("2020=03 12")
    assert grok.column_converter(0, grok.struct.fields[0].dataType)(values[0]) == dt.datetime(
        2020, 3, 1, tzinfo=dt.timezone.utc
    )
    assert values[1] == "12"


@pytest.mark.parametrize("classification", ["grok", "csv"])
def test_a_schema_column_text_cannot_fill_names_the_option_and_the_classification(
    classification,
):
    from pyspark.sql.types import ArrayType, StringType, StructField, StructType

    options = {"grok_pattern": "%{WORD:tags}"} if classification == "grok" else {}
    fmt = PayloadFormat.parse(classification, schema_text="`tags` ARRAY<STRING>", **options)
    payload = StructType([StructField("tags", ArrayType(StringType(), True), True)])
    with pytest.raises(
        ValueError,
        match=f"option schema: column 'tags' of classification {classification}: text cannot "
        "be read into type array<string>",
    ):
        PayloadParser(fmt, output_schema(payload)).check()


def test_an_expansion_that_multiplies_is_refused_naming_the_pattern(monkeypatch):
    from kinesis_dstream.sql.parsing import grok_expansion

    # 22 levels, each using the next twice: 37 MB and minutes to build without a cap
    # (1 MB; a smaller one here keeps the test short, the rule is the same).
    monkeypatch.setattr(grok_expansion, "MAX_EXPANDED_CHARS", 20_000)
    custom = "\n".join(f"P{i} %{{P{i + 1}}}%{{P{i + 1}}}" for i in range(22)) + "\nP22 a"
    with pytest.raises(GrokError, match=r"grok pattern %\{P\d+\} expands to more than 20,000 "):
        compile_grok("%{P0:x}", custom)
    with pytest.raises(GrokError, match="option grokPattern expands to more than 20,000"):
        compile_grok("%{P12:x} " * 4, custom)
    assert compile_grok("%{P12:x}", custom).match("a" * 1024) == ["a" * 1024]


def test_a_match_that_backtracks_past_its_bound_is_corrupt_with_the_reason_never_dropped():
    # Exponential backtracking on a line of commas: 100 of them took 1.1 s, 400 minutes.
    pattern = "%{DATA:a},%{DATA:b},%{DATA:c},%{DATA:d},%{DATA:e};"
    fmt = PayloadFormat.parse("grok", grok_pattern=pattern)
    fmt = replace(fmt, grok=compile_grok(pattern, match_timeout_s=0.05))
    lines = [b"1,2,3,4,5;", b"," * 400, b"6,7,8,9,10;"]
    parsed, reasons = PayloadParser(fmt, output_schema(fmt.grok.struct)).parse_counted(
        records(lines)
    )
    rows = parsed.to_pylist()
    assert [r["a"] for r in rows] == ["1", None, "6"]
    assert [r["_corrupt_record"] for r in rows] == [None, lines[1], None]
    assert reasons == {"grok match timed out after 0.05 s": 1}
    assert compile_grok(pattern).match_timeout_s == 1.0  # the bound of every match
