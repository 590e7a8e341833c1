"""The properties file's numbers, read by the Java KCL 2.5.8 daemon's own configurator and
by ours.

Java (17 here) runs a small program, single-file source launch, on the KCL 2.5.8 jars: for
each value it builds the daemon's ``MultiLangDaemonConfiguration`` with
``KinesisClientLibConfigurator.getConfiguration`` (what ``MultiLangDaemon`` does with the
file) and prints the number it read. Where Java reads the number, ours reads the same
one; where Java reads 0 for a value that is not 0 (its BeanUtils converter's silent
default), ours refuses the value in one line naming the key.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kinesis_dstream.multilang.properties import PropertiesError, parse_properties

from ..support.java_kcl import kcl_jars

pytestmark = [
    pytest.mark.java,
    pytest.mark.skipif(shutil.which("java") is None, reason="needs java on PATH"),
]

KEYS = ("shutdownGraceMillis", "failoverTimeMillis", "maxRecords", "timeoutInSeconds")
VALUES = (
    "5000",
    "\u0665\u0660\u0660\u0660",  # Arabic-Indic 5000
    "\uff15",  # fullwidth 5
    "+5000",
    "-5",
    "9" * 400,
    "9223372036854775808",
    "1_000",
    "5e3",
    "0x10",
    "1.5",
)

READER = r"""
import java.util.*;
import software.amazon.kinesis.multilang.config.*;

public class ReadNumbers {
    public static void main(String[] args) throws Exception {
        for (int i = 0; i + 1 < args.length; i += 2) {
            Properties p = new Properties();
            p.setProperty("applicationName", "a");
            p.setProperty("streamName", "s");
            p.setProperty("executableName", "x");
            p.setProperty("AWSCredentialsProvider", "DefaultAWSCredentialsProviderChain");
            p.setProperty(args[i], args[i + 1]);
            MultiLangDaemonConfiguration c = new KinesisClientLibConfigurator().getConfiguration(p);
            String getter = "get" + Character.toUpperCase(args[i].charAt(0)) + args[i].substring(1);
            System.out.println("READ " + c.getClass().getMethod(getter).invoke(c));
        }
    }
}
"""


@pytest.fixture(scope="module")
def java_reads(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("numbers")
    (folder / "ReadNumbers.java").write_text(READER)
    pairs = [(key, value) for key in KEYS for value in VALUES]
    done = subprocess.run(
        [
            "java",
            "-cp",
            f"{kcl_jars()}/*",
            str(folder / "ReadNumbers.java"),
            *[part for pair in pairs for part in pair],
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    read = [line[5:] for line in done.stdout.splitlines() if line.startswith("READ ")]
    assert len(read) == len(pairs), done.stdout[-2000:]
    return {pair: int(value) for pair, value in zip(pairs, read)}


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("value", VALUES)
def test_a_number_reads_as_java_reads_it_or_is_refused_where_java_reads_zero(
    java_reads, key, value
):
    props = {"executableName": "x", "streamName": "s", "applicationName": "a", key: value}
    java = java_reads[(key, value)]
    if java == 0 and value.strip("0") != "":  # Java's converter failed, silently
        with pytest.raises(PropertiesError, match=f"^{key}="):
            parse_properties(props)
        return
    if java < 1:  # a value Java takes and this daemon refuses as out of the key's range
        with pytest.raises(PropertiesError, match=f"^{key}=.*expected an integer in"):
            parse_properties(props)
        return
    config = parse_properties(props)
    ours = {
        "shutdownGraceMillis": round(config.shutdown_grace_s * 1000),
        "failoverTimeMillis": round(config.failover_time_s * 1000),
        "maxRecords": config.max_records,
        "timeoutInSeconds": config.timeout_s,
    }[key]
    assert ours == java
