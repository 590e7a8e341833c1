"""createStream's positional layouts: PySpark 2.x-3.3's (a StorageLevel 8th) is told from
3.4+'s by the values' types and mapped, with one warning; keyword calls of either era are
left alone; what fits neither, or could be either, is refused in one line."""

from __future__ import annotations

import inspect
import logging
import threading

import pytest
from pyspark.storagelevel import StorageLevel

from kinesis_dstream.dstream import legacy_layout
from kinesis_dstream.dstream.api import KinesisUtils, MetricsLevel, utf8_decoder
from kinesis_dstream.dstream.legacy_layout import accepts_older_layout, map_older_layout

SSC = object()
HEAD = (SSC, "app", "stream", "https://kinesis.us-east-1.amazonaws.com", "us-east-1", 1, 2)
LEVEL = StorageLevel.MEMORY_AND_DISK_2
STS = ("arn:aws:iam::123456789012:role/r", "session", "external-id")


def as_bytes(data):
    return data


@pytest.fixture(autouse=True)
def fresh_warning(monkeypatch):
    """Each test starts as a new process: the older layout not yet warned about."""
    monkeypatch.setattr(legacy_layout, "_warned", threading.Event())


@pytest.mark.parametrize(
    "tail, expected",
    [
        ((LEVEL,), {"storageLevel": LEVEL}),
        (
            (LEVEL, "AKIA1", "secret"),
            {"storageLevel": LEVEL, "awsAccessKeyId": "AKIA1", "awsSecretKey": "secret"},
        ),
        (
            (LEVEL, None, None, as_bytes),
            {
                "storageLevel": LEVEL,
                "awsAccessKeyId": None,
                "awsSecretKey": None,
                "decoder": as_bytes,
            },
        ),
        (
            (LEVEL, "AKIA1", "secret", utf8_decoder, *STS),
            {
                "storageLevel": LEVEL,
                "awsAccessKeyId": "AKIA1",
                "awsSecretKey": "secret",
                "decoder": utf8_decoder,
                "stsAssumeRoleArn": STS[0],
                "stsSessionName": STS[1],
                "stsExternalId": STS[2],
            },
        ),
    ],
    ids=["storage-level", "keys", "decoder", "all-fourteen"],
)
def test_every_older_positional_shape_is_mapped_to_keywords(tail, expected, caplog):
    with caplog.at_level(logging.WARNING, logger=legacy_layout.__name__):
        args, kwargs = map_older_layout((*HEAD, *tail), {})
    assert args == HEAD and kwargs == expected
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert "PySpark 2.x-3.3's positional layout" in message and "SPARK-38881" in message


def test_older_positional_values_mix_with_keywords():
    args, kwargs = map_older_layout(
        (*HEAD, LEVEL, "AKIA1", "secret"),
        {
            "decoder": as_bytes,
            "stsAssumeRoleArn": STS[0],
            "stsSessionName": STS[1],
            "stsExternalId": STS[2],
            "metricsLevel": MetricsLevel.NONE,
        },
    )
    assert args == HEAD
    assert kwargs == {
        "storageLevel": LEVEL,
        "awsAccessKeyId": "AKIA1",
        "awsSecretKey": "secret",
        "decoder": as_bytes,
        "stsAssumeRoleArn": STS[0],
        "stsSessionName": STS[1],
        "stsExternalId": STS[2],
        "metricsLevel": MetricsLevel.NONE,
    }


@pytest.mark.parametrize(
    "args, kwargs",
    [
        (HEAD, {}),
        (HEAD, {"storageLevel": LEVEL}),  # the older era's keyword call
        (
            HEAD,
            {
                "storageLevel": LEVEL,
                "awsAccessKeyId": "AKIA1",
                "awsSecretKey": "s",
                "decoder": as_bytes,
            },
        ),
        ((*HEAD, MetricsLevel.SUMMARY), {}),
        ((*HEAD, MetricsLevel.NONE, LEVEL, "AKIA1", "secret", as_bytes, *STS), {}),
        ((*HEAD, MetricsLevel.NONE), {"storageLevel": LEVEL}),
    ],
    ids=["required-only", "older-keyword", "older-keywords", "metrics", "newer-all", "mixed"],
)
def test_keyword_calls_and_the_newer_layout_pass_unchanged(args, kwargs, caplog):
    with caplog.at_level(logging.WARNING, logger=legacy_layout.__name__):
        assert map_older_layout(args, dict(kwargs)) == (args, kwargs)
    assert caplog.records == []


def test_the_older_layout_is_warned_about_once_a_process(caplog):
    with caplog.at_level(logging.WARNING, logger=legacy_layout.__name__):
        for _ in range(3):
            map_older_layout((*HEAD, LEVEL), {})
    assert len(caplog.records) == 1


@pytest.mark.parametrize(
    "tail, kwargs, expected",
    [
        (
            (None,),
            {},
            "the 8th positional argument is None, which is storageLevel in PySpark "
            "2.x-3.3 and metricsLevel since 3.4 (SPARK-38881): pass it by keyword "
            "(storageLevel=None",
        ),
        ((None, "AKIA1", "secret"), {}, "pass it by keyword (storageLevel=None"),
        (
            (LEVEL, MetricsLevel.NONE),
            {},
            "but the 9th, awsAccessKeyId there, is a int: pass the "
            "arguments after checkpointInterval by keyword (awsAccessKeyId=..., storageLevel=...",
        ),
        (
            (LEVEL, "AKIA1", "secret", "not-a-decoder"),
            {},
            "the 11th, decoder there, is 'not-a-decoder'",
        ),
        ((LEVEL, None, None, as_bytes, 1, "s", "e"), {}, "the 12th, stsAssumeRoleArn there"),
        (
            (LEVEL, None, None, as_bytes, *STS, "extra"),
            {},
            "15 positional arguments with a "
            "StorageLevel 8th: PySpark 2.x-3.3's layout takes at most 14",
        ),
        (
            (LEVEL,),
            {"storageLevel": LEVEL},
            "storageLevel given positionally (PySpark 2.x-3.3's "
            "layout, a StorageLevel 8th) and by keyword",
        ),
        ((LEVEL, "AKIA1"), {"awsAccessKeyId": "AKIA2"}, "awsAccessKeyId given positionally"),
    ],
    ids=[
        "none",
        "none-keys",
        "int-key",
        "str-decoder",
        "int-role",
        "fifteen",
        "twice",
        "twice-key",
    ],
)
def test_what_neither_layout_takes_is_refused_in_one_line_naming_the_keyword(
    tail, kwargs, expected
):
    with pytest.raises(TypeError) as e:
        map_older_layout((*HEAD, *tail), kwargs)
    assert "\n" not in str(e.value)
    assert str(e.value).startswith("createStream: ")
    assert expected in str(e.value)


def test_a_misfit_key_or_secret_is_named_by_its_type_never_its_value():
    # the refusal reaches logs: a secret given where the older layout wants text is not
    # shown, only what kind of value it is
    secret = b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    with pytest.raises(TypeError) as e:
        map_older_layout((*HEAD, LEVEL, "AKIA1", secret), {})
    assert "the 10th, awsSecretKey there, is a bytes" in str(e.value)
    assert "wJalr" not in str(e.value) and "EXAMPLEKEY" not in repr(e.value)


def test_the_wrapper_keeps_the_signature_and_passes_the_mapped_call():
    seen = []

    @accepts_older_layout
    def create(*args, **kwargs):
        """Docs."""
        seen.append((args, kwargs))
        return "stream"

    assert create(*HEAD, LEVEL, None, None, as_bytes) == "stream"
    assert seen == [
        (
            HEAD,
            {
                "storageLevel": LEVEL,
                "awsAccessKeyId": None,
                "awsSecretKey": None,
                "decoder": as_bytes,
            },
        )
    ]
    assert create.__doc__ == "Docs."
    names = list(inspect.signature(KinesisUtils.createStream).parameters)
    assert names[7:15] == [
        "metricsLevel",
        "storageLevel",
        "awsAccessKeyId",
        "awsSecretKey",
        "decoder",
        "stsAssumeRoleArn",
        "stsSessionName",
        "stsExternalId",
    ]


def test_createstream_maps_the_older_layout_before_checking_its_arguments():
    # Bound in 3.4's layout, this call's decoder was the secret key ("awsAccessKeyId and
    # awsSecretKey go together") and a lone StorageLevel 8th the metrics level ("unknown
    # metricsLevel StorageLevel(True, True, False, False, 2)"); mapped first, the first
    # check that fails is the StreamingContext's.
    with pytest.raises(TypeError, match="ssc must be a StreamingContext"):
        KinesisUtils.createStream(None, *HEAD[1:], LEVEL, None, None, as_bytes)
    with pytest.raises(TypeError, match="the 8th positional argument is None"):
        KinesisUtils.createStream(None, *HEAD[1:], None)
