"""Stream ARNs, read by botocore's ARN parser for the source's streamARN and kcl's streamArn."""

import pytest

from kinesis_dstream.retrieval.streams import parse_stream_arn


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
        "arn:aws:kinesis:us-east-1:12345:stream/orders",
        "arn:aws:kinesis:us-east-1:123456789012:table/orders",
        "arn:aws:kinesis:us-east-1:123456789012:stream/",
        "arn:aws:kinesis:us-east-1:123456789012:stream/a/consumer/c:1",
    ],
)
def test_anything_else_is_not_a_stream_arn(arn):
    assert parse_stream_arn(arn) is None
