"""What a DynamoDB read and a DynamoDB write share (glue/dynamodb_connection): one rule
for the throughput percent (what Glue takes is never refused), option names in any case,
the table's access (region, endpoint, role) and capacity."""

import logging

import pytest

from kinesis_dstream.glue.dynamodb_connection import (
    ON_DEMAND_UNITS,
    key_types,
    table_capacity,
    units_per_task,
)
from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.sinks.dynamodb_target import DynamoDBTarget
from kinesis_dstream.glue.sources.dynamodb_options import parse_dynamodb_options

READ = "dynamodb.throughput.read.percent"
WRITE = "dynamodb.throughput.write.percent"


def read(**options):
    return parse_dynamodb_options({"dynamodb.input.tableName": "t", **options}, "from_options")


def write(**options):
    return DynamoDBTarget.parse({"dynamodb.output.tableName": "t", **options})


@pytest.mark.parametrize("given", ["2", "2.0", "0.05", "0", "-1"])
def test_a_percent_outside_aws_s_range_is_used_and_named_on_a_read_as_on_a_write(caplog, given):
    """AWS documents 0.1 to 1.5; the connector Glue builds on takes any number."""
    with caplog.at_level(logging.WARNING):
        assert read(**{READ: given}).read_percent == float(given)
        assert write(**{WRITE: given}).percent == float(given)
    named = [m for m in caplog.messages if "AWS documents 0.1 to 1.5; used as given" in m]
    assert len(named) == 2 and READ in named[0] and WRITE in named[1]


def test_a_percent_that_is_not_a_number_is_one_line_on_both_sides():
    for parse, name in ((read, READ), (write, WRITE)):
        with pytest.raises(GlueError, match=rf"{name}='fast': give a number \(AWS documents"):
            parse(**{name: "fast"})


def test_each_task_s_share_is_glue_s_arithmetic_whatever_the_percent():
    """floor(capacity * percent) / tasks, at least 1: 0 or less is 1 unit a task."""
    assert units_per_task(100.0, 1.0, 4) == 25.0
    assert units_per_task(10.0, 0.5, 2) == 2.5
    assert units_per_task(10.0, 0.0, 2) == 1.0
    assert units_per_task(10.0, -3.0, 2) == 1.0
    assert units_per_task(10.0, float("nan"), 2) == 1.0
    assert units_per_task(10.0, float("inf"), 2) > 1e18  # Java's (long) of infinity


def test_option_names_are_matched_whatever_their_case_on_both_sides():
    source = parse_dynamodb_options(
        {
            "DynamoDB.Input.TableName": "people",
            "dynamodb.throughput.READ.percent": "1.0",
            "dynamodb.sts.rolearn": "arn:aws:iam::222222222222:role/r",
            "DYNAMODB.REGION": "eu-west-1",
        },
        "from_options",
    )
    sink = DynamoDBTarget.parse(
        {
            "dynamodb.output.tablename": "people",
            "dynamodb.throughput.write.PERCENT": "1.0",
            "dynamodb.output.numparalleltasks": "4",
            "dynamodb.sts.rolearn": "arn:aws:iam::222222222222:role/r",
            "DYNAMODB.REGION": "eu-west-1",
        }
    )
    for access in (source.access, sink.access):
        assert (access.table, access.region, access.role_arn) == (
            "people",
            "eu-west-1",
            "arn:aws:iam::222222222222:role/r",
        )
    assert source.read_percent == sink.percent == 1.0 and sink.parallel_tasks == 4


def test_region_endpoint_and_role_are_the_same_options_on_both_sides():
    common = {
        "dynamodb.region": "eu-west-1",
        "dynamodb.endpoint": "dynamodb.eu-west-1.amazonaws.com",
        "dynamodb.sts.roleArn": "arn:aws:iam::222222222222:role/r",
    }
    read_spec = read(**common).access.client_spec()
    write_spec = write(**common).access.client_spec()
    for spec in (read_spec, write_spec):
        assert (spec.region_name, spec.endpoint_url) == (
            "eu-west-1",
            "https://dynamodb.eu-west-1.amazonaws.com",  # the connector takes a host name
        )
    assert read_spec.credentials.role_session_name == "glue-dynamodb-read-sts-session"
    assert write_spec.credentials.role_session_name == "glue-dynamodb-write-sts-session"


def test_the_capacity_and_keys_as_describe_table_gives_them():
    on_demand = {"BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"}}
    assert table_capacity(on_demand, "Read") == table_capacity(on_demand, "Write")
    assert table_capacity(on_demand, "Write") == ON_DEMAND_UNITS == 40_000
    provisioned = {"ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 3}}
    assert (table_capacity(provisioned, "Read"), table_capacity(provisioned, "Write")) == (7, 3)
    described = {
        "AttributeDefinitions": [
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "pk", "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": "sk", "KeyType": "RANGE"},
            {"AttributeName": "pk", "KeyType": "HASH"},
        ],
    }
    assert list(key_types(described).items()) == [("pk", "S"), ("sk", "N")]  # partition first
