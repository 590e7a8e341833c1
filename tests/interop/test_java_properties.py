"""Our .properties reader against java.util.Properties.load itself, on the same files.

Java (17 here) runs a small dumper, single-file source launch, that loads each file with
``Properties.load(InputStream)`` (as the Java MultiLangDaemon does) and prints every key
and value as hex code units: no escaping question between the two sides.
"""

import shutil
import subprocess

import pytest

from kinesis_dstream.multilang.java_properties import (
    PropertiesSyntaxError,
    read_properties_bytes,
)

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="needs java on PATH")

DUMPER = r"""
import java.io.*;
import java.util.*;

public class Dump {
    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c));
        return b.toString();
    }

    public static void main(String[] files) throws Exception {
        for (String file : files) {
            System.out.println("== " + file);
            Properties p = new Properties();
            try (InputStream in = new FileInputStream(file)) {
                p.load(in);
            } catch (IllegalArgumentException e) {
                System.out.println("error");
                continue;
            }
            List<String> keys = new ArrayList<>(p.stringPropertyNames());
            Collections.sort(keys);
            for (String k : keys) System.out.println(hex(k) + " " + hex(p.getProperty(k)));
        }
    }
}
"""

FILES = {
    "escapes": (
        b"key\\u0062 = a\\tb\n"
        b"tab\\tkey = x\n"
        b"back\\\\slash = c\\\\d\n"
        b"unicode = \\u00e9\\u4e2d\\u0041\n"
        b"newline = line1\\nline2\\rline3\\fend\n"
        b"other = \\q\\z\\=\\:\\#\\!\n"
        b"esc\\ aped\\:key\\=x = v\n"
    ),
    "continuations": (
        b"a = one \\\n    two \\\n\tthree\n"
        b"# a comment that ends in a backslash \\\n"
        b"next = 1\n"
        b"b = x\\\n  # not a comment here\n"
        b"even = x\\\\\n"
        b"odd = y\\\n z\n"
        b"c = d\\\n\n"
        b"e = f\\\n   \n"
        b"g = h\n"
        b"\\\n# after a lone backslash\n"
        b"crlf = 1\\\r\n  2\r\n"
        b"cr = 3\rlf = 4\n"
        b"last = end\\"
    ),
    "separators": (
        b"k1:v1\nk2 v2\nk3 = v3\nk4 : v4\nk5  =  = v5\nk6=\nk7\nk8 :v8\n"
        b"k9\t=\tv9\nk10\f:\fv10\nk11 = v11   \nk12=a=b:c\nk13 :: v\n  k14 = indented\n"
        b"k15 = a # not a comment\n"
    ),
    "comments": b"! bang\n# hash\n   ! indented bang\n\t# indented hash\nx = 1\n\n\n",
    "duplicates": b"dup = 1\ndup = 2\ndup:3\nother = a\nother\n",
    "latin1": b"caf\xc3\xa9 = \xe9t\xe9\n",  # UTF-8 bytes read as ISO 8859-1, as Java does
    "malformed": b"bad = \\u12g4\n",
    # A character past U+FFFF as Properties.store writes it: one UTF-16 surrogate pair.
    "surrogates": b"emoji = \\uD83D\\uDE00\nlone = a\\uD800b\n",
}


@pytest.fixture(scope="module")
def java_says(tmp_path_factory):
    folder = tmp_path_factory.mktemp("properties")
    (folder / "Dump.java").write_text(DUMPER)
    paths = []
    for name, data in FILES.items():
        path = folder / f"{name}.properties"
        path.write_bytes(data)
        paths.append(str(path))
    done = subprocess.run(
        ["java", str(folder / "Dump.java"), *paths],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    results: dict = {}
    for line in done.stdout.splitlines():
        if line.startswith("== "):
            current = results[line[3:].rsplit("/", 1)[-1].removesuffix(".properties")] = {}
        elif line == "error":
            current["error"] = True
        else:
            key, _, value = line.partition(" ")
            current[_text(key)] = _text(value)
    return results


def _text(hexed: str) -> str:
    """Java's UTF-16 code units as a str: a surrogate pair is one character."""
    return bytes.fromhex(hexed).decode("utf-16-be", "surrogatepass")


@pytest.mark.parametrize("name", [n for n in FILES if n != "malformed"])
def test_every_file_reads_as_java_reads_it(java_says, name):
    assert read_properties_bytes(FILES[name]) == java_says[name]
    assert java_says[name]  # the file was read, not skipped


def test_a_surrogate_pair_is_one_character_as_in_java(java_says):
    assert java_says["surrogates"] == {"emoji": "\U0001f600", "lone": "a\ud800b"}
    assert read_properties_bytes(FILES["surrogates"]) == java_says["surrogates"]


def test_the_issue_example_reads_as_java_reads_it(java_says):
    assert java_says["escapes"]["keyb"] == "a\tb"
    assert read_properties_bytes(b"key\\u0062 = a\\tb\n") == {"keyb": "a\tb"}


def test_a_malformed_unicode_escape_is_refused_as_java_refuses_it(java_says):
    assert java_says["malformed"] == {"error": True}
    with pytest.raises(PropertiesSyntaxError, match="u12g4"):
        read_properties_bytes(FILES["malformed"])
