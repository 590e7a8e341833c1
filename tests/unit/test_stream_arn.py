"""Stream ARNs, read by botocore's ARN parser for the source's streamARN and kcl's streamArn."""

import logging

import pytest

from kinesis_dstream.arns import parse_stream_arn
from kinesis_dstream.aws import AWSCredentials
from kinesis_dstream.sql.config.options import SourceOptions


@pytest.mark.parametrize(
    "arn, parsed",
    [
        ("arn:aws:kinesis:us-east-1:123456789012:stream/orders", ("us-east-1", "orders")),
        ("arn:aws-cn:kinesis:cn-north-1:123456789012:stream/a.b_c-d", ("cn-north-1", "a.b_c-d")),
        (" arn:aws-us-gov:kinesis:us-gov-west-1:123456789012:stream/s ", ("us-gov-west-1", "s")),
    ],
)
def test_a_stream_arn_gives_its_region_and_stream(arn, parsed):
    assert parse_stream_arn(arn) == parsed


@pytest.mark.parametrize(
    "arn",
    [
        "orders",
        "arn:aws:sqs:us-east-1:123456789012:stream/orders",
        "arn:aws:kinesis:us-east-1:123456789012:table/orders",
        "arn:aws:kinesis:us-east-1:123456789012:stream/",
        "arn:aws:kinesis:us-east-1:123456789012:stream/a/consumer/c:1",
        "arn:aws:kinesis::123456789012:stream/orders",
        "arn:notaws:kinesis:us-east-1:123456789012:stream/orders",
    ],
)
def test_anything_else_is_not_a_stream_arn(arn):
    assert parse_stream_arn(arn) is None


@pytest.mark.parametrize("account", ["12345678910", "12345", "", "acct-1"])
def test_any_account_text_is_taken_as_aws_takes_it_and_warned_once(account, caplog):
    # A Glue Studio script carried an 11-digit account: AWS's ARN parsers do not check
    # the account's digits, and the stream's name and region are all a read needs.
    arn = f"arn:aws:kinesis:eu-west-1:{account}:stream/metric-stream"
    caplog.set_level(logging.WARNING, logger="kinesis_dstream.arns")
    assert parse_stream_arn(arn, "option 'streamARN'") == ("eu-west-1", "metric-stream")
    assert parse_stream_arn(arn, "option 'streamARN'") == ("eu-west-1", "metric-stream")
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"option 'streamARN' {arn}: its account {account!r} is not 12 digits")


def test_a_twelve_digit_account_is_not_warned(caplog):
    caplog.set_level(logging.WARNING, logger="kinesis_dstream.arns")
    assert parse_stream_arn("arn:aws:kinesis:eu-west-1:123456789012:stream/quiet") is not None
    assert caplog.records == []


def test_role_consumer_and_schema_arns_take_any_account_and_warn_once(caplog):
    caplog.set_level(logging.WARNING, logger="kinesis_dstream.arns")
    role = "arn:aws:iam::1234567890:role/reader"
    consumer = "arn:aws-cn:kinesis:cn-north-1:99:stream/s/consumer/c:1"
    schema = "arn:aws:glue:eu-west-1:42:schema/reg/sch"
    creds = AWSCredentials(role_arn=role, role_session_name="s")
    SourceOptions.parse({"streamName": "s", "region": "cn-north-1", "fanoutConsumerARN": consumer})
    payload = SourceOptions.parse(
        {"streamName": "s", "region": "eu-west-1", "classification": "avro", "schemaArn": schema}
    ).payload
    assert creds.role_arn == role and payload.registry.region("x") == "eu-west-1"
    lines = [r.getMessage() for r in caplog.records]
    assert [arn for arn in (role, consumer, schema) if any(arn in m for m in lines)] == [
        role,
        consumer,
        schema,
    ]
    assert len(lines) == 3 and all("is not 12 digits" in m for m in lines)
