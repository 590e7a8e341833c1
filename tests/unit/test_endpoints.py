"""Endpoints the AWS SDK's way: a given endpoint that is the region's public AWS endpoint
for the service means the default (the SDK's endpoint settings apply to it); any other URL
is used as given."""

import pytest

from kinesis_dstream.aws import sdk_endpoint


@pytest.mark.parametrize(
    "service, region, given",
    [
        ("kinesis", "us-east-1", "https://kinesis.us-east-1.amazonaws.com"),
        ("kinesis", "eu-west-1", "https://kinesis.eu-west-1.amazonaws.com/"),
        ("kinesis", "eu-west-1", "HTTPS://Kinesis.EU-West-1.amazonaws.com"),
        ("kinesis", "eu-west-1", "kinesis.eu-west-1.amazonaws.com"),
        ("kinesis", "cn-north-1", "https://kinesis.cn-north-1.amazonaws.com.cn"),
        ("dynamodb", "us-west-2", "https://dynamodb.us-west-2.amazonaws.com"),
        ("cloudwatch", "us-west-2", "https://monitoring.us-west-2.amazonaws.com"),
        ("sts", "us-west-2", "https://sts.us-west-2.amazonaws.com"),
        ("glue", "us-west-2", "https://glue.us-west-2.amazonaws.com"),
        ("s3", "us-east-1", "https://s3.amazonaws.com"),
        ("s3", "us-west-2", "https://s3.us-west-2.amazonaws.com"),
        ("kinesis", "us-east-1", None),
        ("kinesis", "us-east-1", ""),
    ],
)
def test_the_regions_public_endpoint_means_the_sdks_choice(service, region, given):
    assert sdk_endpoint(service, region, given) is None


@pytest.mark.parametrize(
    "service, region, given",
    [
        ("kinesis", "eu-west-1", "https://kinesis.us-east-1.amazonaws.com"),  # another region's
        ("kinesis", "us-east-1", "https://kinesis-fips.us-east-1.amazonaws.com"),  # FIPS, asked for
        ("kinesis", "us-east-1", "https://vpce-1a2b.kinesis.us-east-1.vpce.amazonaws.com"),
        ("kinesis", "us-east-1", "http://127.0.0.1:4567"),
        ("dynamodb", "us-east-1", "https://kinesis.us-east-1.amazonaws.com"),  # another service's
        ("s3", "eu-west-1", "https://s3.amazonaws.com"),
        ("kinesis", "us-east-1", "https://kinesis.us-east-1.amazonaws.com.evil.example"),
    ],
)
def test_any_other_endpoint_is_used_as_given(service, region, given):
    assert sdk_endpoint(service, region, given) == given
