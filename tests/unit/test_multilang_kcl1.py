"""amazon-kclpy 1.x children: which protocol a child speaks, and KCL 1.x's messages.

The actions each kclpy decodes are its sdist's ``dispatch._serializers`` (1.4.4: KCL
1.7.5; 1.5.1: KCL 1.9.3; 3.2.0); the probe runs real interpreters on small
``amazon_kclpy`` packages written here (the interop tier runs it on the real sdists).
"""

from __future__ import annotations

import logging
import os
import stat
import sys
from pathlib import Path

import pytest

from kinesis_dstream.esn import ExtendedSequenceNumber
from kinesis_dstream.multilang.child_probe import choose_protocol_version, probe_child
from kinesis_dstream.multilang.properties import (
    MultiLangConfig,
    PropertiesError,
    parse_properties,
)
from kinesis_dstream.multilang.protocol_version import (
    ProtocolVersion,
    from_actions,
    from_kclpy_version,
    kcl1_config,
)

from . import test_multilang_protocol as scripted
from .test_multilang_protocol import (
    ScriptedChild,
    checkpoint,
    make,
    rec,
    status,
    table_checkpoint,
)

#: The scripted child's lease store and coordinator (the in-memory lease table).
store = scripted.store
coordinator = scripted.coordinator

KCLPY_1_4_4 = ["checkpoint", "initialize", "processRecords", "record", "shutdown"]
KCLPY_1_5_1 = [*KCLPY_1_4_4, "shutdownRequested"]
KCLPY_3_2_0 = [*KCLPY_1_5_1, "leaseLost", "shardEnded"]
V1 = ProtocolVersion.KCL_1X
V1_GRACEFUL = ProtocolVersion.KCL_1X_GRACEFUL
V2 = ProtocolVersion.KCL_2X


# -- which version --------------------------------------------------------------------------


def test_the_actions_a_childs_kclpy_decodes_give_its_version():
    assert from_actions(KCLPY_1_4_4) is V1
    assert from_actions(KCLPY_1_5_1) is V1_GRACEFUL
    assert from_actions(KCLPY_3_2_0) is V2


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.0.0", V1),
        ("1.4.4", V1),
        ("1.4.5", V1),
        ("1.5.0", V1_GRACEFUL),
        ("1.5.1", V1_GRACEFUL),
        ("2.0.0", V2),
        ("3.2.0", V2),
        ("unknown", None),
    ],
)
def test_a_kclpy_version_gives_its_protocol(version, expected):
    assert from_kclpy_version(version) is expected


def props(**extra) -> dict:
    return {"executableName": "app.py", "streamName": "s", "applicationName": "a", **extra}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("KCL_1X", V1), ("kcl_1x_graceful", V1_GRACEFUL), ("KCL_2X", V2), ("AUTO", None), ("", None)],
)
def test_multi_lang_protocol_declares_the_version(value, expected):
    assert parse_properties(props(multiLangProtocol=value)).multi_lang_protocol is expected


def test_an_unknown_multi_lang_protocol_is_refused_naming_the_values():
    with pytest.raises(PropertiesError, match=r"multiLangProtocol='KCL_1'.*AUTO, KCL_2X"):
        parse_properties(props(multiLangProtocol="KCL_1"))


def test_the_kclpy_1_4_4_sample_properties_are_read_unchanged():
    # samples/sample.properties of the amazon-kclpy 1.4.4 sdist: its keys and values.
    config = parse_properties(
        {
            "executableName": "sample_kclpy_app.py",
            "streamName": "words",
            "applicationName": "PythonKCLSample",
            "AWSCredentialsProvider": "DefaultAWSCredentialsProviderChain",
            "processingLanguage": "python/2.7",
            "initialPositionInStream": "TRIM_HORIZON",
        }
    )
    assert config.retrieval_mode == "FANOUT" and not config.retrieval_mode_declared
    kcl1 = kcl1_config(config, V1)
    assert (kcl1.region_name, kcl1.retrieval_mode) == ("us-east-1", "POLLING")


@pytest.mark.parametrize(
    "key",
    [
        "skipShardSyncAtStartupIfLeasesExist",
        "timestampAtInitialPositionInStream",
        "kinesisClientConfig",
        "dataFetchingStrategy",
        "leaseCleanupIntervalMillis",
        "maxActiveThreads",
        "http.proxyHost",
    ],
)
def test_kcl_1x_keys_are_accepted(key):
    parse_properties(props(**{key: "1"}))  # KCL 1.x's configurator knew them: not refused


def test_a_kcl_1x_file_means_what_it_meant_to_kcl_1x():
    base = MultiLangConfig(executable_name="a", stream_name="s", application_name="a")
    fanout = MultiLangConfig(
        executable_name="a", stream_name="s", application_name="a", retrieval_mode="FANOUT"
    )
    assert kcl1_config(fanout, V2) is fanout  # KCL 2.x's rules stay
    assert kcl1_config(fanout, V1_GRACEFUL).retrieval_mode == "POLLING"
    declared = MultiLangConfig(
        executable_name="a",
        stream_name="s",
        application_name="a",
        retrieval_mode="FANOUT",
        retrieval_mode_declared=True,
    )
    assert kcl1_config(declared, V1).retrieval_mode == "FANOUT"  # as the file says
    assert kcl1_config(base, V1).region_name == "us-east-1"
    endpoint = MultiLangConfig(
        executable_name="a",
        stream_name="s",
        application_name="a",
        kinesis_endpoint="https://kinesis.eu-west-1.amazonaws.com",
    )
    assert kcl1_config(endpoint, V1).region_name == "eu-west-1"
    given = MultiLangConfig(
        executable_name="a", stream_name="s", application_name="a", region_name="ap-south-1"
    )
    assert kcl1_config(given, V1).region_name == "ap-south-1"


# -- the probe, on real interpreters ----------------------------------------------------


def fake_kclpy(where: Path, actions, *, dispatch: bool = True) -> Path:
    package = where / "amazon_kclpy"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    if dispatch:
        (package / "dispatch.py").write_text(
            "_serializers = {" + ", ".join(f"{a!r}: None" for a in actions) + "}\n"
        )
    return where


def script(path: Path, first_line: str) -> Path:
    path.write_text(f"{first_line}\nprint('never run by the probe')\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_probe_asks_the_interpreter_of_the_command_with_the_scripts_directory(tmp_path):
    app = tmp_path / "app"
    fake_kclpy(app, KCLPY_1_4_4)  # vendored beside the script, as sys.path[0] finds it
    script(app / "processor.py", "")
    answer = probe_child(f"{sys.executable} -u {app / 'processor.py'}", dict(os.environ))
    assert answer.version is V1, answer.why
    assert "shutdown" in answer.why and str(app) in answer.why


def test_the_probe_follows_a_shebang_found_on_the_childs_path(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir / "python", f'#!/bin/sh\nexec {sys.executable} "$@"')
    script(bin_dir / "sample_app.py", "#!/usr/bin/env python")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(fake_kclpy(tmp_path / "lib", KCLPY_1_5_1)),
    }
    answer = probe_child("sample_app.py", env, cwd=str(tmp_path))
    assert answer.version is V1_GRACEFUL, answer.why


def test_a_kclpy_without_a_dispatch_table_is_1x(tmp_path):
    fake_kclpy(tmp_path, [], dispatch=False)
    script(tmp_path / "app.py", "")
    answer = probe_child(f"{sys.executable} app.py", dict(os.environ), cwd=str(tmp_path))
    assert answer.version is V1, answer.why


def test_no_answer_without_kclpy_or_a_python(tmp_path):
    script(tmp_path / "app.py", "")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    no_kclpy = probe_child(f"{sys.executable} -I app.py", env, cwd=str(tmp_path))
    assert no_kclpy.version is None and "no amazon_kclpy" in no_kclpy.why
    wrapper = script(tmp_path / "run.sh", "#!/bin/sh")
    assert probe_child(str(wrapper), env).version is None
    assert probe_child("no-such-command-here", env).version is None


def test_a_declared_version_wins_without_asking_the_child(caplog):
    config = parse_properties(props(executableName="no-such-child", multiLangProtocol="KCL_1X"))
    with caplog.at_level(logging.INFO, logger="kinesis_dstream.multilang"):
        assert choose_protocol_version(config, dict(os.environ)) is V1
    unknown = parse_properties(props(executableName="no-such-child"))
    with caplog.at_level(logging.INFO, logger="kinesis_dstream.multilang"):
        assert choose_protocol_version(unknown, dict(os.environ)) is V2
    assert "set multiLangProtocol = KCL_1X" in caplog.text


# -- KCL 1.x's messages against a scripted child ------------------------------------------


def shutdown(reason: str) -> tuple:
    return ("shutdown", reason)


class Kcl1Child(ScriptedChild):
    """A scripted child that also checks each ``shutdown``'s reason: a step's action may be
    ``("shutdown", reason)``."""

    def send(self, message: dict) -> None:
        step = self.steps[0][0] if self.steps else None
        if isinstance(step, tuple):
            assert (message["action"], message.get("reason")) == step, (message, step)
            self.steps[0] = (step[0], self.steps[0][1])
        super().send(message)


def test_a_shard_end_is_shutdown_terminate_and_checkpoint_is_shard_end(coordinator, store):
    child = Kcl1Child(
        [
            ("processRecords", [status("processRecords")]),
            (shutdown("TERMINATE"), [checkpoint()]),  # kclpy 1.4's sample: checkpoint()
            ("checkpoint", [status("shutdown")]),
        ]
    )
    protocol = make(child, coordinator, version=V1)
    protocol.process_records([rec(10), rec(11)], 0)
    protocol.shard_ended()
    assert child.sent[-1] == {
        "action": "checkpoint",
        "sequenceNumber": None,
        "subSequenceNumber": None,
    }
    assert protocol.checkpointer.finished and table_checkpoint(store).is_shard_end


def test_a_lost_lease_is_shutdown_zombie_and_its_checkpoints_are_refused(coordinator, store):
    child = Kcl1Child(
        [
            ("processRecords", [checkpoint("10", 0)]),
            ("checkpoint", [status("processRecords")]),
            (shutdown("ZOMBIE"), [checkpoint()]),
            ("checkpoint", [status("shutdown")]),
        ]
    )
    protocol = make(child, coordinator, version=V1)
    protocol.process_records([rec(10), rec(11)], 0)
    protocol.lease_lost()
    answers = [m.get("error") for m in child.sent if m["action"] == "checkpoint"]
    assert answers == [None, "ShutdownException"]  # as KCL 1.x's lease coordinator answers
    assert table_checkpoint(store) == ExtendedSequenceNumber("10", 0)


def test_a_stop_sends_a_kclpy_1_4_child_only_shutdown_zombie(coordinator, store):
    child = Kcl1Child(
        [
            ("processRecords", [status("processRecords")]),
            (shutdown("ZOMBIE"), [status("shutdown")]),
        ]
    )
    protocol = make(child, coordinator, version=V1)
    protocol.process_records([rec(10)], 0)
    assert protocol.shutdown_requested() is False  # nothing sent: it knows no such message
    protocol.lease_lost()  # the stop's second step, as for every version
    assert [m["action"] for m in child.sent] == ["processRecords", "shutdown"]
    assert not child.steps


def test_a_stop_sends_a_kclpy_1_5_child_shutdown_requested_then_zombie(coordinator, store):
    child = Kcl1Child(
        [
            ("processRecords", [status("processRecords")]),
            ("shutdownRequested", [checkpoint()]),
            ("checkpoint", [status("shutdownRequested")]),
            (shutdown("ZOMBIE"), [status("shutdown")]),
        ]
    )
    protocol = make(child, coordinator, version=V1_GRACEFUL)
    protocol.process_records([rec(7), rec(8)], 0)
    assert protocol.shutdown_requested() is True
    protocol.lease_lost()
    assert table_checkpoint(store) == ExtendedSequenceNumber("8", 0)
    assert not child.steps


def test_kcl_2x_children_still_get_the_kcl_2x_messages(coordinator, store):
    child = ScriptedChild(
        [
            ("shutdownRequested", [status("shutdownRequested")]),
            ("leaseLost", [checkpoint()]),
            ("checkpoint", [status("leaseLost")]),
        ]
    )
    protocol = make(child, coordinator)  # the default
    assert protocol.shutdown_requested() is True
    protocol.lease_lost()
    assert child.sent[-1]["error"] == "InvalidStateException"  # leaseLost: no checkpointer


@pytest.mark.parametrize(("version", "end"), [(V1, shutdown("TERMINATE")), (V2, "shardEnded")])
def test_a_checkpoint_at_the_last_record_at_a_shards_end_is_shard_end(
    coordinator, store, version, end
):
    # As the KCL's checkpointer (1.x and 2.x alike: advancePosition): once the shard has
    # ended, checkpointing its last record checkpoints SHARD_END.
    child = Kcl1Child(
        [
            ("processRecords", [status("processRecords")]),
            (end, [checkpoint("11", 0)]),
            ("checkpoint", [status(end[0] if isinstance(end, tuple) else end)]),
        ]
    )
    protocol = make(child, coordinator, version=version)
    protocol.process_records([rec(10), rec(11)], 0)
    protocol.shard_ended()
    assert child.sent[-1].get("error") is None
    assert protocol.checkpointer.finished and table_checkpoint(store).is_shard_end


def test_the_last_record_checkpointed_before_the_end_is_not_shard_end(coordinator, store):
    # The KCL writes nothing for a checkpoint at the last value it wrote (the shard then
    # stays unfinished: "Application didn't checkpoint at end of shard"); checkpoint()
    # with no arguments is SHARD_END.
    child = Kcl1Child(
        [
            ("processRecords", [checkpoint("11", 0)]),
            ("checkpoint", [status("processRecords")]),
            (shutdown("TERMINATE"), [checkpoint("11", 0)]),
            ("checkpoint", [status("shutdown")]),
        ]
    )
    protocol = make(child, coordinator, version=V1)
    protocol.process_records([rec(10), rec(11)], 0)
    protocol.shard_ended()
    assert not protocol.checkpointer.finished
    assert table_checkpoint(store) == ExtendedSequenceNumber("11", 0)
